/* cmd_bench — `showdown bench`: the command line of a benchmark run. Parses the options into sd_bench_opts and
 * hands the matrix to the bench layer (bench/bench.h: run here) or to the Slurm executor (cmd/bench_slurm.c), then
 * prints the summary and writes the results. A failed run is recorded and the others go on; the exit code says
 * whether all succeeded (an unavailable framework is not a failure). */
#include "bench/bench.h"
#include "bench/results.h"
#include "cmd/cli.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/sig.h"
#include "db/db.h"
#include "slurm/slurm.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What only the command line has, beside the executor (sd_bench_exec: also where the results go, for a local run
 * too): the modes that run nothing. */
typedef struct bench_args {
    const char *export_dir;
    const char *best_settings;
    int describe;
} bench_args;

/* After --describe, --json's FILE may be left out (stdout, as `--json -`): the option table has no optional
 * values, so a bare --json is given its "-" here. */
static void describe_json_default(int argc, char **argv) {
    static char dash[] = "--json=-";
    int describe = 0;
    for (int i = 1; i < argc; i++) describe |= strcmp(argv[i], "--describe") == 0;
    for (int i = 1; describe && i < argc; i++)
        if (strcmp(argv[i], "--json") == 0 && (i + 1 == argc || strncmp(argv[i + 1], "--", 2) == 0)) argv[i] = dash;
}

/* --describe: each workload's layer plan, as tables or (--json) "showdown-plan/1" lines, to stdout or FILE. */
static int describe(const sd_bench_opts *o, const sd_bench_matrix *m, const char *json) {
    int to_file = json && strcmp(json, "-") != 0, rc = 0;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = to_file ? open_memstream(&buf, &len) : stdout;
    if (!f) return sd_err(SD_ENOMEM, "out of memory");
    for (int i = 0; i < m->nworkloads && rc == 0; i++) {
        if (i && !json) fprintf(f, "\n");
        rc = sd_bench_describe(f, o, m->workloads[i], json != NULL);
    }
    if (to_file) {
        fclose(f);
        if (rc == 0) rc = sd_write_file_atomic(json, buf, len);
        free(buf);
    }
    return rc;
}

/* The results are written as a temp file beside the target, then renamed: create one there now, exclusively, so
 * that a directory this user cannot write is said before the measuring, not after it. A FIFO or device target
 * is written through and checked when it is opened. */
static int probe_out_dir(const char *path, const char *what) {
    char real[PATH_MAX], dir[PATH_MAX], probe[PATH_MAX + 48];
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) return 0;
    const char *target = realpath(path, real) ? real : path;   /* a symlink: its file's directory */
    snprintf(dir, sizeof dir, "%s", target);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) slash[1] = 0;
    else *slash = 0;
    snprintf(probe, sizeof probe, "%s/.showdown-probe.%ld", dir, (long)getpid());
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return sd_err(SD_EUSAGE, "%s: cannot write %s (in %s: %s)", what, path, dir, strerror(errno));
    close(fd);
    unlink(probe);
    return 0;
}

/* An output that cannot be written is said before the measuring, not after (a plan on stdout is none). */
static int check_outputs(const bench_args *a, const sd_bench_exec *x) {
    int plan_stdout = a->describe && x->json && strcmp(x->json, "-") == 0;
    if (x->json && !plan_stdout) {
        SD_TRY(sd_out_file_check(x->json, "--json"));
        SD_TRY(probe_out_dir(x->json, "--json"));
    }
    if (!x->no_db && x->db) SD_TRY(sd_out_path_ok(x->db, "--db"));
    return 0;
}

/* --best-settings FILE: its best-setting runs measured in processes of their own, in rounds, written back (or to
 * --json). */
static int best_settings(const sd_bench_opts *o, const bench_args *a, const sd_bench_exec *x) {
    const char *to = x->json ? x->json : a->best_settings;
    json_t *doc = NULL;
    int rc = sd_out_file_check(to, "--json");
    if (rc == 0) rc = probe_out_dir(to, "--json");
    if (rc == 0) rc = sd_results_load_file(a->best_settings, &doc);
    if (rc) return sd_cli_fail("bench", rc);
    sd_sig_install();
    int kept = 0;
    long repeat = o->repeat < 3 ? 3 : o->repeat;
    rc = sd_bench_settings_publish(doc, repeat, o->host_wait_s, o->quiet, a->best_settings, &kept);
    if (rc == SD_EINTR) {
        json_decref(doc);
        fprintf(stderr, "\nshowdown bench: interrupted; %s left as it was, the processes that ended kept in "
                        "%s.journal: the same command goes on from them\n", a->best_settings, a->best_settings);
        return sd_sig_exit_code();
    }
    rc = sd_json_write_atomic(doc, to);
    json_decref(doc);
    if (rc) return sd_cli_fail("bench", rc);
    char journal[PATH_MAX];   /* its processes are in the file now */
    if (snprintf(journal, sizeof journal, "%s.journal", a->best_settings) < (int)sizeof journal) unlink(journal);
    if (!o->quiet) fprintf(stderr, "best settings measured in %ld processes each, written to %s\n", repeat, to);
    return kept ? sd_exit_code(SD_ERROR) : SD_EXIT_OK;
}

/* The matrix as the cells of one Slurm job array; the exit code. */
static int run_slurm(sd_bench_exec *x, const sd_opt *opts, int argc, char **argv, const sd_bench_matrix *m) {
    sd_slurm_cell *cells = calloc((size_t)m->ncells + 1, sizeof *cells);
    if (!cells) return sd_cli_fail("bench", sd_err(SD_ENOMEM, "out of memory"));
    for (int i = 0; i < m->ncells; i++)
        cells[i] = (sd_slurm_cell){.workload = m->cells[i].workload, .implementation = m->cells[i].implementation,
                                   .backend = m->cells[i].backend};
    int code = sd_bench_slurm(x, opts, argc, argv, cells, m->ncells);
    free(cells);
    return code;
}

/* The matrix here, cell after cell: the summary table, the database run and --json; the exit code. */
static int run_local(const sd_bench_opts *o, const sd_bench_matrix *m, const sd_bench_exec *x) {
    sd_sig_install();
    const char *dbp = x->no_db ? NULL : x->db ? x->db : DB_DEFAULT_PATH;
    json_t *doc = NULL;
    sd_bench_outcome out;
    int rc = sd_bench_matrix_run(o, m->cells, m->ncells, dbp, &doc, &out);
    if (rc == SD_EINTR) {
        fprintf(stderr, "\nshowdown bench: interrupted; no results written (the database run stays incomplete)\n");
        return sd_sig_exit_code();
    }
    if (rc == 0) {
        printf("\n");
        sd_results_print_table(stdout, doc);
        sd_results_print_overhead(stdout, doc);
        if (dbp && !out.db_status && !o->quiet) fprintf(stderr, "run %lld stored in %s\n", (long long)out.run_id, dbp);
        if (x->json && (rc = sd_json_write_atomic(doc, x->json)) == 0 && !o->quiet)
            fprintf(stderr, "results written to %s\n", x->json);
        json_decref(doc);
    }
    if (rc == 0 && out.db_status)
        rc = sd_err(out.db_status, "the run was measured but not stored in the database %s: %s", dbp, out.db_error);
    if (rc == 0 && out.failed) return sd_exit_code(out.failed);
    return rc ? sd_cli_fail("bench", rc) : SD_EXIT_OK;
}

int cmd_bench(int argc, char **argv) {
    sd_bench_opts o;
    sd_bench_opts_default(&o);
    bench_args a = {0};
    sd_bench_exec x = {.executor = "local", .poll = 5};
    const sd_opt opts[] = {
        {"workload", SD_OPT_STR, &o.workload, "NAME[,NAME]", "workload(s) from workloads/ (or paths to .json specs)", 0, 0},
        {"describe", SD_OPT_FLAG, &a.describe, NULL, "print the layer table (shapes, parameters, FLOPs) and exit; with --json [FILE], "
                                                         "the plan as showdown-plan/1 JSON (stdout without FILE)", 0, 0},
        {"backend", SD_OPT_STR, &o.backend, "B[,B]", "auto (default), ref, dnnl, cudnn, or all (every back-end built)", 0, 0},
        {"epochs", SD_OPT_INT, &o.epochs, "N", "epochs (default: the workload's)", 1, SD_BENCH_MAX_EPOCHS},
        {"batches", SD_OPT_INT, &o.batches, "N", "cap on training (and validation) batches per epoch, or on the batches of an inference pass, for quick runs", 1, SD_BENCH_MAX_BATCHES},
        {"batch", SD_OPT_INT, &o.batch, "N", "batch size (default: the workload's); per replica with --gpus", 1, SD_BENCH_MAX_BATCH},
        {"gpus", SD_OPT_INT, &o.gpus, "N", "data parallel over N replicas: GPUs 0..N-1 with NCCL (cudnn), in-process on CPU back-ends", 1, 64},
        {"repeat", SD_OPT_INT, &o.repeat, "R", "repeat the run R times; report median and min-max (default 1)", 1, SD_BENCH_MAX_REPEAT},
        {"spread", SD_OPT_FLAG, &o.spread, NULL, "a cell's --repeat repetitions (a framework's processes) in rounds "
                                                  "over the whole run, one a round, instead of one after another: their "
                                                  "spread is this host's over the run (make report's)", 0, 0},
        {"threads", SD_OPT_INT, &o.threads, "N", "CPU threads (default: all cores)", 1, 4096},
        {"seed", SD_OPT_INT, &o.seed, "S", "seed for initialisation, shuffling, dropout, synthetic data (default 42)", 0, 2147483647},
        {"data", SD_OPT_CHOICE, &o.data, "auto|real|synthetic", "real data if present, else synthetic (default auto)", 0, 0},
        {"data-dir", SD_OPT_STR, &o.data_dir, "DIR", "data set directory (MNIST idx files, CIFAR-10 binary batches, IMDB train.tok/test.tok or aclImdb)", 0, 0},
        {"workloads", SD_OPT_STR, &o.workloads_dir, "DIR", "directory of workload specs (default: ./workloads)", 0, 0},
        {"precision", SD_OPT_CHOICE, &o.precision, "fp32|tf32|bf16|fp16", "fp32 (default), tf32 (cuDNN back-end), bf16 (dnnl on a CPU "
                                                                              "with AVX512_BF16 or AMX, cuDNN on compute capability 8.0+; frameworks in their own mixed "
                                                                              "precision) or fp16 (cuDNN, with dynamic loss scaling)", 0, 0},
        {"autotune", SD_OPT_CHOICE, &o.autotune, "on|off", "algorithm choice: cuDNN search, dnnl Winograd (default on)", 0, 0},
        {"impl", SD_OPT_STR, &o.impl, "I[,I]", "native (default), pytorch, tensorflow, keras-tensorflow, keras-jax, keras-torch, jax, "
                                               "paddle, mindspore, tinygrad, chainer, or all: framework runners on the same data", 0, 0},
        {"venvs", SD_OPT_STR, &o.venvs, "DIR", "virtual environments of the framework runners (default .venv-frameworks)", 0, 0},
        {"export-weights", SD_OPT_STR, &a.export_dir, "DIR", "write the initial weights, an input batch and the native logits "
                                                              "(showdown-weights/1) to DIR and exit", 0, 0},
        {"best-settings", SD_OPT_STR, &a.best_settings, "FILE", "measure the best-setting runs of FILE (make report's, from "
                                                                 "bench-cpu) again in --repeat processes each (at least 3), one of "
                                                                 "each a round, as verify --rerun does, and write their median, min and max into FILE (or --json); "
                                                                 "each process is kept in FILE.journal as it ends, so that the same "
                                                                 "command run again after an interruption goes on from them", 0, 0},
        {"runner", SD_OPT_STR, &o.runner, "IMPL=PROG", "run IMPL's runner as PROG (default: python workloads/runners/IMPL_runner.py)", 0, 0},
        {"runner-timeout", SD_OPT_INT, &o.runner_timeout, "S", "kill a runner silent for S seconds (default 300)", 1, 1000000},
        {"runner-limit", SD_OPT_INT, &o.runner_limit, "S", "kill a runner still running after S seconds in all, progress "
                                                          "lines or not (default 86400)", 1, 100000000},
        {"host-wait", SD_OPT_DOUBLE, &o.host_wait_s, "S", "before each cell, wait up to S seconds for this host to run at "
                                                          "its speed (a short native canary; default 0: start at once); the cells a spell still "
                                                          "slowed, or took past a runner's time bound, are measured "
                                                          "once more after the others", 0, 3600},
        {"host-wait-total", SD_OPT_DOUBLE, &o.host_wait_total_s, "S", "with --host-wait, the most all cells wait, and "
                                                                      "are measured again after a slow spell, in all (default 600)", 0, 86400},
        {"device", SD_OPT_CHOICE, &o.device, "auto|cpu|cuda", "framework runners' device (default auto)", 0, 0},
        {"python", SD_OPT_STR, &o.python, "PATH",
         "interpreter for the pytorch runner (default: the newest torch, --venvs/torch or /usr/bin/python3's)", 0, 0},
        {"json", SD_OPT_STR, &x.json, "FILE", "write the results (showdown-results/1) to FILE, atomically", 0, 0},
        {"db", SD_OPT_STR, &x.db, "FILE", "store the run in this results database (default " DB_DEFAULT_PATH ")", 0, 0},
        {"no-db", SD_OPT_FLAG, &x.no_db, NULL, "do not store the run in a database", 0, 0},
        {"quiet", SD_OPT_FLAG, &o.quiet, NULL, "no progress or notes on stderr", 0, 0},
        {"executor", SD_OPT_CHOICE, &x.executor, "local|slurm", "local (default): run here; slurm: one job array, a task per cell", 0, 0},
        {"partition", SD_OPT_STR, &x.partition, "P", "slurm: partition (sbatch --partition)", 0, 0},
        {"gres", SD_OPT_STR, &x.gres, "G", "slurm: generic resources per task, e.g. gpu:4 (default gpu:N with --gpus N)", 0, 0},
        {"constraint", SD_OPT_STR, &x.constraint, "C", "slurm: node features, e.g. v100 (sbatch --constraint)", 0, 0},
        {"time", SD_OPT_STR, &x.time, "T", "slurm: time limit per task (sbatch --time, e.g. 0:30:00)", 0, 0},
        {"results-dir", SD_OPT_STR, &x.results_dir, "DIR", "slurm: shared results directory (default out/slurm/run-TIME)", 0, 0},
        {"wait", SD_OPT_FLAG, &x.wait, NULL, "slurm: poll until the array has ended, then collect", 0, 0},
        {"poll", SD_OPT_DOUBLE, &x.poll, "S", "slurm: seconds between polls with --wait (default 5)", 0.1, 3600},
        {"resubmit", SD_OPT_STR, &x.resubmit, "DIR", "slurm: submit again the failed cells of DIR (or --cells)", 0, 0},
        {"cells", SD_OPT_STR, &x.cells, "LIST", "slurm: with --resubmit, the cells to submit again, e.g. 2,3", 0, 0},
        {0},
    };
    describe_json_default(argc, argv);
    int code = sd_cli_parse("bench", "--workload NAME[,NAME] [options]",
                      "Train and validate workloads on the native engine; print a summary table and write results.\n"
                      "Times: first epoch apart from the steady state (fastest later epoch); validation and an\n"
                      "inference pass over the test set timed apart. Inference workloads (resnet50_features): untimed\n"
                      "pass(es), then a timed pass; seconds per 1,000 images, outputs copied to the host included.",
                      opts, argc, argv);
    if (code >= 0) return code;
    x.quiet = o.quiet;
    if (x.resubmit) return sd_bench_slurm(&x, opts, argc, argv, NULL, 0);
    if (a.best_settings) return best_settings(&o, &a, &x);
    if (!o.workload) {
        sd_err(SD_EUSAGE, "--workload is required (e.g. --workload mnist_mlp; see --help)");
        return sd_cli_fail("bench", SD_EUSAGE);
    }
    int rc = check_outputs(&a, &x);
    if (rc) return sd_cli_fail("bench", rc);
    sd_bench_matrix m;
    if ((rc = sd_bench_matrix_new(&m, &o)) != 0) goto done;
    if (a.export_dir) {
        if (m.nworkloads != 1) rc = sd_err(SD_EUSAGE, "--export-weights takes one workload");
        else rc = sd_bench_export(&o, m.workloads[0], a.export_dir);
        goto done;
    }
    if (a.describe) {
        rc = describe(&o, &m, x.json);
        goto done;
    }
    if (strcmp(x.executor, "slurm") == 0) {   /* the matrix as cells of one job array */
        code = run_slurm(&x, opts, argc, argv, &m);
        sd_bench_matrix_free(&m);
        return code;
    }
    code = run_local(&o, &m, &x);
    sd_bench_matrix_free(&m);
    return code;
done:
    sd_bench_matrix_free(&m);
    return rc ? sd_cli_fail("bench", rc) : SD_EXIT_OK;
}
