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

int sd_cli_common_args(const sd_opt *opts, int argc, char **argv, const char *const *drop, char ***out,
                       int *n) {
    *n = 0;
    *out = calloc((size_t)argc + 1, sizeof(char *));
    SD_ALLOC_CHECK(*out);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0) { (*out)[(*n)++] = argv[i]; continue; }
        const char *name = a + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const sd_opt *o = NULL;
        for (const sd_opt *q = opts; q->name; q++)
            if (strlen(q->name) == len && strncmp(q->name, name, len) == 0) o = q;
        int takes = o && o->type != SD_OPT_FLAG && !eq;
        int dropped = 0;
        for (int d = 0; drop[d]; d++)
            if (strlen(drop[d]) == len && strncmp(drop[d], name, len) == 0) dropped = 1;
        if (!dropped) {
            (*out)[(*n)++] = argv[i];
            if (takes && i + 1 < argc) (*out)[(*n)++] = argv[i + 1];
        }
        if (takes) i++;
    }
    return 0;
}

static int wait_and_collect(const sd_bench_exec *x, const char *dir) {
    sd_slurm_collect_opts co = {.db = x->db, .no_db = x->no_db, .json = x->json, .quiet = x->quiet};
    return sd_cli_collect("bench", dir, 1, x->poll, &co);
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
    int rc = sd_cli_common_args(opts, argc, argv, not_common, &common, &ncommon);
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
