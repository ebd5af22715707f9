/* bench_slurm — the Slurm executor of `showdown bench`: the matrix as one job array (slurm/slurm.h),
 * resubmission of chosen cells, and --wait (poll until the array ends, then collect). */
#include "cmd/cli.h"
#include "core/err.h"
#include "slurm/slurm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Options that are the matrix or the executor's own, not repeated in every cell's command line. */
static const char *const not_common[] = {"workload", "backend", "impl", "json", "db", "no-db", "executor",
                                         "partition", "gres", "constraint", "time", "results-dir", "wait", "poll",
                                         "resubmit", "cells", "device", NULL};

static int wait_and_collect(const sd_bench_exec *x, const char *dir) {
    int rc = sd_slurm_wait(dir, x->poll, x->quiet);
    if (rc) return sd_cli_fail("bench", rc);
    sd_slurm_collect_opts co = {.db = x->db, .no_db = x->no_db, .json = x->json, .quiet = x->quiet};
    int nbad = 0;
    rc = sd_slurm_collect(dir, &co, stdout, &nbad);
    if (rc) return sd_cli_fail("bench", rc);
    return nbad ? SD_EXIT_FAIL : SD_EXIT_OK;
}

int sd_bench_slurm(const sd_bench_exec *x, const sd_opt *opts, int argc, char **argv, const sd_slurm_cell *cells,
                   int ncells) {
    char gres[64];
    sd_slurm_opts so = {.partition = x->partition, .gres = x->gres, .constraint = x->constraint, .time = x->time,
                        .dir = x->results_dir, .quiet = x->quiet};
    if (!so.gres && x->gpus > 0) {
        snprintf(gres, sizeof gres, "gpu:%ld", x->gpus);
        so.gres = gres;
    }
    if (x->resubmit) {
        int n = 0, rc = sd_slurm_resubmit(&so, x->resubmit, x->cells, &n);
        if (rc) return sd_cli_fail("bench", rc);
        return x->wait && n > 0 ? wait_and_collect(x, x->resubmit) : SD_EXIT_OK;
    }
    char **common = NULL;
    int ncommon = 0;
    int rc = sd_slurm_common_args(opts, argc, argv, not_common, &common, &ncommon);
    char dir[4096];
    if (rc == 0) rc = sd_slurm_submit(&so, cells, ncells, common, ncommon, dir, sizeof dir);
    free(common);
    if (rc) return sd_cli_fail("bench", rc);
    if (!x->wait) {
        if (!x->quiet) fprintf(stderr, "collect the results when the array has ended: showdown collect %s\n", dir);
        return SD_EXIT_OK;
    }
    return wait_and_collect(x, dir);
}
