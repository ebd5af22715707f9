/* showdown — reproducible, verifiable deep-learning framework showdown reports.
 * main: the command table and dispatch; each command lives in src/cmd/cmd_<name>.c. */
#include "cmd/cli.h"
#include "core/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const sd_cmd sd_commands[] = {
    {"bench", cmd_bench, "run workloads on the native engine (and framework runners); write results"},
    {"perf", cmd_perf, "engine throughput and per-layer GFLOP/s against the measured sgemm ceiling"},
    {"score", cmd_score, "score frameworks (support & community, API & internals, platform)"},
    {"report", cmd_report, "render the report (PDF, SVG figures, Markdown) from results and scores"},
    {"verify", cmd_verify, "re-check a published results file cell by cell"},
    {"collect", cmd_collect, "merge the cells of a Slurm job array (bench --executor slurm) into one run"},
    {"nightly", cmd_nightly, "run bench + score + report, keep history, flag regressions"},
    {NULL, NULL, NULL},
};

static void usage(FILE *f) {
    fprintf(f, "usage: showdown <command> [options]\n       showdown <command> --help\n\ncommands:\n");
    for (const sd_cmd *c = sd_commands; c->name; c++) fprintf(f, "  %-9s %s\n", c->name, c->summary);
    fprintf(f, "\nshowdown %s (%s%s)\n", SD_VERSION, SD_GIT_COMMIT, SD_GIT_DIRTY ? ", dirty" : "");
}

/* OpenMP threads that spin while waiting (libgomp's default) lose ~10x against any other busy process on
 * a 2-core machine (measured: mnist_mlp on dnnl 2.6k vs 25k img/s). libgomp reads OMP_WAIT_POLICY only
 * when it loads, so set it and re-execute once; an explicit OMP_WAIT_POLICY from the user is kept. */
static void omp_passive(char **argv) {
    if (getenv("OMP_WAIT_POLICY")) return;
    if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
    execv("/proc/self/exe", argv);   /* returns only on failure: run on as we are */
}

int main(int argc, char **argv) {
    omp_passive(argv);
    if (argc < 2) { usage(stderr); return SD_EXIT_USAGE; }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return SD_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("showdown %s (%s%s)\n", SD_VERSION, SD_GIT_COMMIT, SD_GIT_DIRTY ? ", dirty" : "");
        return SD_EXIT_OK;
    }
    for (const sd_cmd *c = sd_commands; c->name; c++)
        if (strcmp(argv[1], c->name) == 0) return c->run(argc - 1, argv + 1);
    fprintf(stderr, "showdown: unknown command '%s' (see showdown --help)\n", argv[1]);
    return SD_EXIT_USAGE;
}
