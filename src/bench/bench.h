/* bench — what a benchmark run is: a cell (one workload on the native engine over one back-end, or through one
 * framework runner, on the same data) and the matrix of cells run in order into one results document, stored as it
 * is measured. `showdown bench` parses options into sd_bench_opts and calls this; verify reruns a cell through it. */
#ifndef SD_BENCH_H
#define SD_BENCH_H

#include <jansson.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

/* Bounds of a run's settings (the command line's and a published file's alike). */
#define SD_BENCH_MAX_EPOCHS  100000
#define SD_BENCH_MAX_BATCH   65536
#define SD_BENCH_MAX_BATCHES 100000000
#define SD_BENCH_MAX_REPEAT  1000

typedef struct sd_bench_opts {
    const char *workload;      /* "W[,W]": names in workloads_dir, or paths to specs */
    const char *impl;          /* "native", frameworks (bench/frameworks.h), or "all", comma-separated */
    const char *backend;       /* "auto", "ref", "dnnl", "cudnn", comma-separated, or "all" (every one built) */
    const char *data;          /* auto, real, synthetic */
    const char *data_dir, *workloads_dir;   /* NULL: the defaults (data/data.h, ./workloads) */
    const char *precision;     /* fp32, tf32, bf16 */
    const char *autotune;      /* on, off */
    const char *runner;        /* "IMPL=PROGRAM" in place of IMPL's runner script, or NULL */
    const char *device;        /* framework runners' device: auto, cpu, cuda */
    const char *python, *venvs;   /* framework interpreters (NULL: found as bench/frameworks.h says) */
    long epochs, batch, batches;  /* 0: the workload's epochs and batch; no cap on batches */
    long repeat, threads, seed, gpus, runner_timeout;
    long runner_limit;         /* seconds a runner may run in all, progress or not (0: no bound) */
    double host_wait_s;        /* > 0: before each cell, wait up to this long for the host to run at its speed
                                * (bench/host.c); 0: start at once */
    double host_wait_total_s;  /* the most all cells of a run wait in all */
    int again;                 /* with host_wait_s: the cells still slowed by a spell are measured once more after
                                * the others and the faster host's measurement kept (1 by default; verify has
                                * its own second pass) */
    int quiet;                 /* no progress or notes on stderr (failures are still said) */
    int spread;                /* a cell's repeats one a round (a framework's: one process), the rounds one after
                                * another over all the cells: its spread is the host's over the run, not a minute's */
    long fixed_batches;        /* a framework cell's length as an earlier process of it trained under the time cap
                                * (SHOWDOWN_CELL_SECONDS), run without the cap: > 0 batches an epoch, -1 as asked;
                                * 0: the cap applies */
} sd_bench_opts;

/* The host's speed over a run (bench/host.c): a canary (a short native training step) before and after each cell,
 * judged against the machine's usual speed: the upper quartile of this process's and its recent runs' canaries. */
typedef struct sd_host {
    int canaries, waits, slow; /* canaries run; cells that waited; cells that started in a slow spell all the same */
    int retries;               /* cells measured again: a spell began while they ran */
    double waited_s, retried_s;
} sd_host;
/* Wait, at most o->host_wait_s (and what is left of o->host_wait_total_s for this process), until the canary
 * runs within 90% of the reference, or *stop. Returns the last canary over the reference (NAN: no canary ran). */
double sd_host_settle(const sd_bench_opts *o, volatile sig_atomic_t *stop);
/* The host's speed over a cell that started at speed `before` (sd_host_settle's): the lower of it and a canary
 * now, which says whether a spell began while the cell ran (NAN: no canary ran either time). */
double sd_host_after(const sd_bench_opts *o, double before);
/* Whether a cell measured at this host speed (its canaries' lower) is measured again: the speed was slow and the
 * run's wait budget (o->host_wait_total_s, retries' cell_s counted in it) allows it. Counts the retry. */
int sd_host_retry(const sd_bench_opts *o, double speed, double cell_s);
/* A new wait budget: the waits and retries so far no longer count against o->host_wait_total_s (a second pass
 * over the cells a spell slowed waits for its own). */
void sd_host_budget_renew(void);
/* A run whose host_speed is below this ran in a slow spell (the canary's fraction of the reference). */
#define SD_HOST_SLOW 0.90
/* Whether a second measurement of a cell whose processes disagreed replaces the first: its processes agree better
 * (spread_now < spread, %) and it did not run slower than the first in a slow spell (now, was: host speeds). */
int sd_host_steadier(double spread_now, double spread, double now, double was);
/* A native cell is measured again after the others below this host speed, not only below SD_HOST_SLOW: the
 * canary is a native step, and native mnist_mlp published at 91% of the host's speed ran 13-17% faster when re-run,
 * beyond the 10% a reader's verify allows. Its cells take seconds. The frameworks' stay at SD_HOST_SLOW: half a
 * report's cells read 90-95%, and a report that measured each of those again took half as long again. */
#define SD_HOST_QUIET 0.95
/* A second pass after a slow spell waits this many times as long for a quiet host: the spells last minutes. */
#define SD_HOST_AGAIN_WAIT 6
/* The reference, images/s (0: no canary yet). */
double sd_host_reference(void);
/* The host's state over this process's cells so far. */
const sd_host *sd_host_state(void);
/* The machine's recent canaries (bench/host.c alone reads and writes their file: $SHOWDOWN_HOST_REF, empty for
 * none, else ~/.cache/showdown/host-canary), per key (the CPU, threads, canary and build): the last
 * SD_HOST_REF_KEEP of the last three days, a few hours of bench's canaries. */
#define SD_HOST_REF_KEEP 500
typedef struct sd_canary { double t, v; } sd_canary;   /* when (unix time) and images/s */
/* key's canaries, the last SD_HOST_REF_KEEP at most, oldest first, into out; their count. */
int sd_host_ref_load(const char *key, sd_canary *out);
/* key's canaries become the last SD_HOST_REF_KEEP of c[0..n); the other keys' recent ones are kept. */
void sd_host_ref_save(const char *key, const sd_canary *c, int n);
/* The usual speed of the last SD_HOST_REF_KEEP of c[0..n) (any order): their upper quartile, the third fastest
 * at least (the slowest of fewer); 0 for none. A reference a few lucky canaries and a spell of minutes leave alone. */
double sd_host_ref_usual(const sd_canary *c, int n);

/* The defaults of `showdown bench` (backend auto, fp32, repeat 1, seed 42, native, ...). */
void sd_bench_opts_default(sd_bench_opts *o);

/* One cell of the matrix. For a framework, backend is the runner's device (opts.device). */
typedef struct sd_bench_cell {
    const char *workload, *implementation, *backend;
} sd_bench_cell;

/* The cells of o's workload × impl × backend lists in run order: per workload, native on each back-end, then each
 * framework. workloads lists each workload once (--describe and --export-weights take them). */
typedef struct sd_bench_matrix {
    sd_bench_cell *cells;
    int ncells;
    const char **workloads;
    int nworkloads;
    char *names;               /* the copies of the lists the cells point into */
} sd_bench_matrix;

/* SD_EUSAGE for an unknown implementation or an empty list. Free with sd_bench_matrix_free (also after an error). */
int sd_bench_matrix_new(sd_bench_matrix *m, const sd_bench_opts *o);
void sd_bench_matrix_free(sd_bench_matrix *m);

/* How a matrix run went beyond its results. */
typedef struct sd_bench_outcome {
    int failed;                /* a cell failed: its status (bench exits sd_exit_code(failed)); 0: none did */
    int64_t run_id;            /* the database run, 0 without a database */
    int db_status;             /* the database failed during the run: dropped, measuring went on; 0: stored */
    char db_error[1024];       /* its message */
} sd_bench_outcome;

/* Run cells in order, their names checked first (sd_bench_cells_check: nothing is measured when one is wrong).
 * *doc_out: the results document (every cell's run, or its failure), caller decrefs; NULL after an error. A failed
 * cell is recorded and the others go on, whatever its status; only SD_EINTR (a signal, sd_sig_flag) stops the run
 * and is returned. db_path non-NULL: the run goes into that database as it is measured (sd_results_store, each
 * cell's runs in their own transactions), marked complete after the last cell; a database that fails midway is
 * dropped with a message (out->db_status). Prints only to stderr. */
int sd_bench_matrix_run(const sd_bench_opts *o, const sd_bench_cell *cells, int ncells, const char *db_path,
                        json_t **doc_out, sd_bench_outcome *out);

/* Every name of the cells before the first is measured: each workload loads (its spec a regular file), each
 * back-end and implementation is known. SD_EUSAGE / SD_EINPUT naming the first that is not. */
int sd_bench_cells_check(const sd_bench_opts *o, const sd_bench_cell *cells, int ncells);

/* One cell into doc, o->repeat times (bench/cell.c). A failure is recorded in doc, said on stderr and put in *failed;
 * only SD_EINTR and SD_EUSAGE are returned. */
int sd_bench_cell_run(const sd_bench_opts *o, const sd_bench_cell *c, json_t *doc, int *failed);

/* Remove the runner input files the framework cells keep for the next cell of the same workload (bench/cell.c);
 * a run calls it when its last cell is done. */
void sd_bench_inputs_drop(void);

/* A best-setting run of make bench-cpu measured again (bench/setting.c): the command the run recorded (p->rerun_*),
 * under its interpreter, in repeat processes of their own (those sd_bench_settings_rounds ran, or run now one after
 * another; a process a spell slowed runs once more, said on stderr unless quiet). 0 with *doc holding one run (its figures: each
 * process's fastest window; each process starts once the host runs at its speed, sd_host_settle, and the run's
 * host_speed is the median of the processes', each the lower of its canaries before and after); SD_ENODEV when
 * the interpreter or the script is not here; other negatives when it failed. The reason is in sd_errmsg(). */
struct sd_run_view;
int sd_bench_setting_rerun(const struct sd_run_view *p, long repeat, double host_wait_s, int quiet, json_t **doc);
/* The processes of the best runs' commands (runs: n views of best-setting runs) run in rounds: round r runs one
 * process of each command that has fewer than r, so that a figure's `repeat` processes span the whole pass and a
 * drift of the host over tens of minutes shows in every figure's spread alike, not in one figure's median.
 * sd_bench_setting_rerun then takes its figure from them. Progress on stderr as "WHO: round r of R ..." unless
 * quiet. A command that cannot run or fails is said by sd_bench_setting_rerun. 0, SD_EINTR or SD_ENOMEM. */
int sd_bench_settings_rounds(const struct sd_run_view *runs, size_t n, long repeat, double host_wait_s, int quiet,
                             const char *who);
/* How many processes the rounds of these runs will run: each command once, however many runs share it, less the
 * processes it has; (size_t)-1 when out of memory. */
size_t sd_bench_settings_todo(const struct sd_run_view *runs, size_t n, long repeat);
/* How many processes of p's command have run so far (0: none; -1: one failed, or it cannot run here): what an
 * interrupted pass judges p from (sd_bench_setting_rerun with that repeat runs nothing). */
long sd_bench_setting_have(const struct sd_run_view *p);
/* p's command run until it has upto processes: a round of sd_bench_settings_rounds, for a caller that interleaves
 * other measurements in its rounds (verify --rerun). 0, or why not (sd_bench_setting_rerun says it again). */
int sd_bench_setting_grow(const struct sd_run_view *p, long upto, double host_wait_s, int quiet);
/* Forget the processes run so far: the next call of a command measures it anew. */
void sd_bench_setting_forget(void);
/* `bench --best-settings`: every best-setting run of doc (source "bench-cpu", with its command) measured as
 * `verify --rerun` measures it again: its command's processes in rounds over all the runs (sd_bench_settings_rounds),
 * its phases taking the median, min and max over the repeat processes. Runs measured while the host ran below 90%
 * of its speed are measured once more after the others (six times the wait, a fresh wait budget) and published from
 * the faster host. A run that cannot be measured keeps its figure and is counted in *kept. journal_of (NULL: none):
 * the results file doc was read from; each process is kept in journal_of.journal as it ends, and a pass run again on
 * the same results and repeat takes those processes up and runs only the rest (the caller removes the journal once
 * it has written the results). 0, or SD_EINTR. */
int sd_bench_settings_publish(json_t *doc, long repeat, double host_wait_s, int quiet, const char *journal_of,
                              int *kept);

/* `bench --describe`: the layer plan of workload at o's batch, printed to f as a table, or with json as one
 * "showdown-plan/1" line (nn_model_plan_json). */
int sd_bench_describe(FILE *f, const sd_bench_opts *o, const char *workload, int json);

/* `bench --export-weights DIR`: the equivalence files of workload (nn/export.h), no training. */
int sd_bench_export(const sd_bench_opts *o, const char *workload, const char *dir);

#endif
