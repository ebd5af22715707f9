/* showdown — reproducible, verifiable deep-learning framework showdown reports.
 * main: the command table and dispatch; each command lives in src/cmd/cmd_<name>.c. */
#include "cmd/cli.h"
#include "core/err.h"
#include "core/omp_policy.h"
#include "core/sig.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

const sd_cmd sd_commands[] = {
    {"bench", cmd_bench, "run workloads on the native engine (and framework runners); write results"},
    {"perf", cmd_perf, "engine throughput and per-layer GFLOP/s against the measured sgemm ceiling"},
    {"score", cmd_score, "score frameworks (support & community, API & internals, platform)"},
    {"report", cmd_report, "render the report (PDF, SVG figures, Markdown) from results and scores"},
    {"verify", cmd_verify, "re-check a published results file cell by cell"},
    {"collect", cmd_collect, "merge the cells of a Slurm job array (bench --executor slurm) into one run"},
    {"env", cmd_env, "what this machine and build can run: fingerprint, back-ends, framework runners, data"},
    {"nightly", cmd_nightly, "run bench + score + report, keep history, flag regressions"},
    {NULL, NULL, NULL},
};

static void usage(FILE *f) {
    fprintf(f, "usage: showdown <command> [options]\n       showdown <command> --help\n\ncommands:\n");
    for (const sd_cmd *c = sd_commands; c->name; c++) fprintf(f, "  %-9s %s\n", c->name, c->summary);
    fprintf(f, "\nshowdown %s (%s%s)\n", SD_VERSION, SD_GIT_COMMIT, SD_GIT_DIRTY ? ", dirty" : "");
}

/* The address space a command needs to start at all, base plus per online CPU (a thread stack each): below it,
 * libraries fail in ways that say nothing (GLib aborts creating report's threads; oneDNN's JIT segfaults in
 * bench). Measured floors with margin: docs/performance.md. */
static const struct { const char *cmd; long base_mib, per_cpu_mib; } AS_NEED[] = {
    {"bench", 160, 16}, {"perf", 160, 16}, {"nightly", 160, 16}, {"report", 320, 0}, {NULL, 0, 0},
};

static int check_address_space(const char *cmd) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 0;
    for (int i = 0; AS_NEED[i].cmd; i++) {
        if (strcmp(AS_NEED[i].cmd, cmd) != 0) continue;
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        long mib = AS_NEED[i].base_mib + AS_NEED[i].per_cpu_mib * (cpus > 0 ? cpus : 1);
        if ((unsigned long long)rl.rlim_cur >= (unsigned long long)mib << 20) return 0;
        fprintf(stderr, "showdown %s: the address-space limit (ulimit -v) is %llu MiB; %s needs at least %ld MiB "
                "here (raise it: ulimit -v %ld)\n", cmd, (unsigned long long)rl.rlim_cur >> 20, cmd, mib, mib * 1024);
        return SD_EXIT_FAIL;
    }
    return 0;
}

/* A command that failed while a SIGINT/SIGTERM was being handled failed because of it (a read blocked on a FIFO
 * returns EINTR): its exit code is the signal's, 128 + signal, as for an interruption seen at a check. */
static int run_command(const sd_cmd *c, int argc, char **argv) {
    int code = check_address_space(c->name);
    if (code) return code;
    code = c->run(argc, argv);
    int sig = sd_sig_pending();
    if (sig && code != SD_EXIT_OK && code != 128 + sig) {
        fprintf(stderr, "showdown %s: interrupted by signal %d\n", c->name, sig);
        return 128 + sig;
    }
    return code;
}

int main(int argc, char **argv) {
    /* past ulimit -f a write fails with EFBIG and is reported (results kept where they can be), not a silent kill */
    signal(SIGXFSZ, SIG_IGN);
    sd_omp_policy_init(argv);   /* before any OpenMP region: it may re-execute */
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
        if (strcmp(argv[1], c->name) == 0) return run_command(c, argc - 1, argv + 1);
    fprintf(stderr, "showdown: unknown command '%s' (see showdown --help)\n", argv[1]);
    return SD_EXIT_USAGE;
}
