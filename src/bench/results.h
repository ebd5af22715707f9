/* results — the "showdown-results/1" file: tool version, environment fingerprint, and for each
 * workload × implementation × back-end the settings, every sample and the summary statistics
 * (median and min–max over repeats). Written atomically. Documented in workloads/README.md. */
#ifndef SD_BENCH_RESULTS_H
#define SD_BENCH_RESULTS_H

#include <jansson.h>
#include <stdint.h>

#include "nn/train.h"

/* Bounds of what a results file may say: times, rates and counts are >= 0 and at most 1e12 (a 309-digit
 * number is no measurement), accuracies are fractions. The runner boundary holds a runner's values to them too. */
#define SD_RESULTS_MAX_VALUE 1e12

#define SD_RESULTS_SCHEMA "showdown-results/1"

typedef struct sd_stat { double median, min, max; int n; } sd_stat;

/* Median (mean of the middle two for even n), min, max of v[0..n). n == 0 gives n = 0. */
sd_stat sd_stat_of(const double *v, int n);

/* A new results document with tool and environment filled in. */
json_t *sd_results_new(void);
/* The environment fingerprint of this machine and build (CPU, cores, memory, OS, kernel, compiler,
 * library versions). */
json_t *sd_env_fingerprint(void);

/* Everything one workload × implementation × back-end run produced. */
typedef struct sd_run_info {
    const sd_workload *w;
    const char *implementation;     /* "native", or a framework ("pytorch") */
    nn_backend *be;                 /* for name, device and the back-end's env; NULL for a framework run */
    const char *backend_name, *device, *precision;   /* used when be is NULL */
    const json_t *backend_env;      /* merged into backend_env (may be NULL) */
    const char *backend_note;       /* why auto fell back, or NULL */
    const sd_dataset *train, *test;
    const nn_train_opts *opts;
    int threads;
    const nn_train_result *samples; /* one per repeat */
    int nsamples;
    int gpus;                       /* native: replicas (settings.gpus, .global_batch); 0: not recorded */
    const char *reduction;          /* data parallel: how gradients were reduced, or NULL */
    const json_t *equivalence;      /* framework runs: the same-model check (copied), or NULL */
    double time_cap_s;              /* framework runs: the cell's time cap (settings.time_cap_s), 0: none */
    int asked_batches;              /* the cap cut the epochs: batches asked (-1: all), opts->max_batches those
                                     * trained; 0: not cut */
} sd_run_info;

/* ---- the document's runs, for writers and readers alike: the key names live in results.c only ---- */
/* The runs of a results document, in order: how many, and the i-th (borrowed; NULL past the end). */
size_t sd_results_count(const json_t *doc);
json_t *sd_results_run(const json_t *doc, size_t i);
#define sd_results_foreach(doc, i, run) \
    for ((i) = 0; (i) < sd_results_count(doc) && ((run) = sd_results_run((doc), (i))) != NULL; (i)++)
/* Append run (the reference is taken) to doc's runs. */
int sd_results_append(json_t *doc, json_t *run);
/* Drop the runs from the n-th on (a cell measured again). */
void sd_results_truncate(json_t *doc, size_t n);
/* Give doc an empty runs list: a document of another kind that lists runs the same way (perf's). */
int sd_results_init_runs(json_t *doc);
/* Does doc hold a runs list (an object with an array of runs)? What collect asks of a cell's file. */
int sd_results_has_runs(const json_t *doc);
/* The shape the report relies on: doc's runs, when present, an array of objects; SD_EINPUT "NAME: ..." else. */
int sd_results_check_shape(const json_t *doc, const char *name);

/* The head of a document: when and by which build it was made, and where (borrowed from the document;
 * NULL when absent or not a string). */
typedef struct sd_results_head {
    const char *created, *version, *commit;
    int dirty;
    json_t *environment;
    const json_t *tool;           /* the whole "tool" object, for what else it says (NULL when absent) */
    /* a publication's: "published" is true or an object (with a title, source and date) */
    int published;
    const char *pub_title, *pub_source, *pub_date;
} sd_results_head;
void sd_results_head_of(const json_t *doc, sd_results_head *h);
/* A document with that head (environment: the reference is taken; h->environment is not read) and no runs;
 * NULL when a string is not UTF-8. sd_results_new is this with the running build and the clock. */
json_t *sd_results_new_with(const sd_results_head *h, json_t *environment);

/* One run read back, from any writer (this build, an older one, a Slurm cell, a publication), tolerantly:
 * what is absent reads as NULL, NAN or 0. Members the report shows as text are the run's values as they are
 * (any JSON type); a statistic is {median, min, max, n} or a bare number (n = 0), NAN when absent. */
typedef struct sd_run_view {
    const json_t *workload, *implementation, *backend, *device, *status, *error;
    const json_t *data, *data_kind, *data_source;
    const json_t *settings;                       /* the settings object, for listing */
    const json_t *summary, *samples;              /* as stored (the database keeps them apart) */
    const char *equivalence_status;               /* framework runs: "passed", "failed", "not checked"; or NULL */
    double equivalence_max_rel_diff;              /* NAN when absent */
    const char *framework_name;                   /* published runs: "Caffe2" for "caffe2" */
    long long epoch_examples;     /* one full epoch of the data set (older results: a real set's size); 0: unknown */
    int gpus;                     /* data-parallel devices (settings.gpus, or a published run's gpus); 0: not recorded */
    int max_batches, batch;       /* settings; 0 when absent */
    int batches_asked;            /* a time cap cut the epochs to max_batches: the batches asked (-1: all); 0: not cut */
    double time_cap_s;            /* a framework cell's time cap, s (its first process's length); 0: none */
    long long parameters;         /* summary.parameters or model.parameters; 0 when absent */
    sd_stat first_epoch_s, steady_epoch_s, val_s, accuracy, train_images_per_s, train_gflops;
    sd_stat total_s, train_total_s, train_s, infer_s_per_1000;   /* published figures */
    double gflops;                /* published: a bare number; NAN when absent */
    sd_stat inference_s_per_1000; /* measured: seconds per 1,000 images of a timed inference pass */
    sd_stat inference_gflops;     /* measured: the inference pass's GFLOP/s */
    long long peak_bytes;         /* the largest back-end (device allocator) peak over the samples; 0: none */
    long long peak_rss_bytes;     /* the largest process peak resident memory over the samples; 0: none */
    double host_speed;            /* the host's speed it was measured at (bench/host.c); NAN when not recorded */
    int timed_out;                /* a failed run killed past its time bound (sd_results_add_timeout) */
    const char *setting;          /* settings.setting: a framework's candidate ("compile", "jit"); NULL: as shipped */
    const char *spec;             /* model.spec: the workload file the run was built from; NULL when absent */
    /* what a rerun needs to measure the same way: settings (0 / NULL when absent; autotune -1) and, for a
     * framework runner, the interpreter it ran under */
    int epochs, threads, autotune;
    long long seed;
    const char *precision, *interpreter;
    const char *note;             /* a publication's note on the cell, or NULL */
    /* a best-setting run of make bench-cpu's cell scripts ("source": "bench-cpu"): the command that measures it
     * again (run.rerun: the interpreter, the script under the source tree, its arguments and environment) */
    const char *source, *rerun_python, *rerun_script;
    const json_t *rerun_args, *rerun_env;   /* arrays of strings, or NULL */
    const json_t *published_check;   /* a publication's checks against its own evidence: an array of text, or NULL */
} sd_run_view;
void sd_run_view_of(const json_t *run, sd_run_view *v);
/* The statistic summary[key] of a run (sd_stat_read: NAN when absent or null). */
sd_stat sd_run_stat(const sd_run_view *v, const char *key);
/* The statistic a publication of summary[key] stands for, as verify judges it: the steady epoch of fewer than 3
 * repeats takes in the min and max of the run's own steady epochs (one repeat has no spread over repeats, its
 * epochs do); from 3 repeats on, the repeats' spread is the figure's. */
sd_stat sd_run_published_stat(const sd_run_view *v, const char *key);
/* Its spread, (max - min) / median in %: 0 when it has none, NAN when the run has no such figure. A figure whose
 * spread is wider than verify's tolerance cannot be re-checked to within it (the report marks it). */
double sd_run_spread_pct(const sd_run_view *v, const char *key);
double sd_stat_spread_pct(sd_stat s);   /* the same of a statistic already read */
/* 1 if the run measured nothing (a status other than "ok": unavailable, failed, unsupported); a run without a status
 * (a published table's, an older document's) counts as measured. */
int sd_run_unmeasured(const sd_run_view *v);
/* 1 if the run's status is "ok" (it measured) */
int sd_results_run_ok(const json_t *run);
int sd_status_unmeasured(const char *status);   /* the same rule on the status string (NULL: none) */
/* The time figure verify judges a run's cell by: the first of sd_published_time_keys the run publishes, or NULL. */
const char *sd_run_time_key(const sd_run_view *v);
/* The wider spread of the two figures of a run verify judges (sd_run_time_key's and its inference): 0 when neither
 * has one. */
double sd_run_judged_spread_pct(const sd_run_view *v);

/* What a run's figures depend on besides the hardware, as (what, value) text pairs in a fixed order: the
 * framework and its version (a publication's framework.name/.version or a runner's hello), then every scalar the
 * back-end or runner recorded about itself (interpreter, python, numpy, onednn_version, backend_impl, ...; not
 * paths or counts), then the settings (setting = 1): precision, threads, autotune, batch, max_batches, epochs and
 * a best-setting candidate. JSON null reads "null"; members the run lacks are left out. Returns the count. */
typedef struct sd_ident { char what[48]; char value[200]; int setting; } sd_ident;
#define SD_IDENT_MAX 48
int sd_run_identity(const json_t *run, sd_ident *out, int max);

/* A machine's environment read back (NULL / 0 when not recorded). */
typedef struct sd_env_view {
    const char *cpu_model, *gpu_name, *gpu_note, *hostname;
    const char *omp_wait_policy;  /* the OpenMP wait policy and why (core/omp_policy.h), or NULL */
    long long cores, gpu_count;
    const json_t *libraries;      /* name -> version */
} sd_env_view;
void sd_env_view_of(const json_t *env, sd_env_view *v);
/* The environment run was measured in: doc's, overridden member by member by the run's own (a publication
 * gives each cell's hardware). A new reference; caller decrefs. */
json_t *sd_results_run_env(const json_t *doc, const json_t *run);
/* Set doc's environment (the reference is taken): results, perf and env documents open with one. */
int sd_results_set_env(json_t *doc, json_t *env);
/* Give run its own environment (a copy of env): a Slurm cell measured on another node. */
int sd_results_run_set_env(json_t *run, const json_t *env);
/* One statistic read back the same way (also verify's measured figures). */
sd_stat sd_stat_read(const json_t *stat);

/* The samples (repeats) of a run, the epochs of sample s, and epoch e of sample s: its figures (NAN when absent)
 * and its number (e + 1 when it has none). */
typedef struct sd_epoch_view { long long epoch; double train_s, val_s, loss, accuracy, images_per_s; } sd_epoch_view;
size_t sd_run_nsamples(const sd_run_view *v);
size_t sd_run_nepochs(const sd_run_view *v, size_t s);
void sd_epoch_view_of(const sd_run_view *v, size_t s, size_t e, sd_epoch_view *out);

/* The epoch time runs are compared by across nights: the summary's steady-state statistic when it has one
 * (an object), else the first epoch's; *metric names it ("steady_epoch_s", "first_epoch_s"). Members absent
 * from the statistic read as 0. Returns 0 when the run has neither. */
int sd_run_epoch_time(const json_t *run, sd_stat *s, const char **metric);

/* The one way a run reaches the database (bench, nightly and collect): the runs of doc from index `from` on,
 * each in its own transaction; finish = 1 marks the database run complete with the last of them (or on its
 * own when there are none). bench stores each cell's runs as they come, then finishes with from = count. */
struct db;
int sd_results_store(struct db *d, int64_t run_id, const json_t *doc, size_t from, int finish);
/* The runs [from, to) of doc, stored before at the same indexes, replaced in the database run: a cell measured
 * again. */
int sd_results_store_again(struct db *d, int64_t run_id, const json_t *doc, size_t from, size_t to);
/* Start a database run with doc's head (tool, environment); kind and dir as db_run_begin. */
int sd_results_db_begin(struct db *d, const json_t *doc, const char *kind, const char *dir, int64_t *run_id);
/* Rebuild the results document of a database run (its head, then its runs), with the database's run_kind,
 * run_id and complete. Caller decrefs. */
int sd_results_load(struct db *d, int64_t run_id, json_t **doc);

/* Append a run (samples + summary) to doc["runs"]. */
int sd_results_add_run(json_t *doc, const sd_run_info *ri);
/* Another process of the same cell, measured with the same settings (run `from`), joins run `into`: its samples
 * appended and numbered on, each sample's host_speed kept and the run's the median of them, settings.repeat the
 * samples' count, the summary computed again over all of them, and the same-model check failed when from's did.
 * A cell's processes spread over a bench run (bench --spread) become one run so. */
int sd_results_merge_run(json_t *into, const json_t *from);
/* A best-setting figure measured again (bench/setting.c): images/s statistics over processes of its own. */
typedef struct sd_setting_run {
    const char *workload, *implementation, *python, *version;
    const sd_run_view *published;   /* its settings and source are the measurement's */
    sd_stat train, infer;           /* images/s (n = 0: the phase was not measured) */
    const long long *peak_rss_bytes;   /* nrepeats: each process's peak resident memory */
    int nrepeats;
} sd_setting_run;
/* Append such a run: images/s, and as times seconds per 1,000 images (train_s_per_1000_images,
 * inference_s_per_1000_images), which verify compares. */
int sd_results_add_setting_run(json_t *doc, const sd_setting_run *s);
/* A run without figures (the last appended) under another precision than fp32 says which (settings.precision):
 * a framework without bf16 is n/a in bf16, not in fp32. */
void sd_results_note_precision(json_t *doc, const char *precision);
/* The runs from index from on started with the host at speed times its reference speed (bench/host.c): "host_speed",
 * under 0.8 when a slow spell did not end in the time a cell may wait. */
void sd_results_note_host(json_t *doc, size_t from, double speed);
/* Append a failed run with its error. */
int sd_results_add_failure(json_t *doc, const char *workload, const char *implementation,
                           const char *backend, const char *error);
/* A failed run that was killed past its time bound: "timed_out" true, so that a cell a slow spell ran past its
 * bound is measured again (bench/matrix.c). */
int sd_results_add_timeout(json_t *doc, const char *workload, const char *implementation, const char *backend,
                           const char *error);
/* Same with another status ("unavailable": a framework that is not installed; not a failure). */
int sd_results_add_status(json_t *doc, const char *workload, const char *implementation, const char *backend,
                          const char *status, const char *error);
/* environment.libraries[name] = version (framework versions of runner runs). */
void sd_results_set_library(json_t *doc, const char *name, const char *version);

/* Write doc to path with sd_write_file_atomic (a regular file replaced atomically; the directory must exist). */
int sd_json_write_atomic(const json_t *doc, const char *path);

/* Print the summary table of every run in doc. */
void sd_results_print_table(FILE *f, const json_t *doc);
/* Per workload and back-end: native and framework epoch times side by side and the framework overhead
 * ratio (framework time / native time; steady epochs when there are several, else the first), whether the
 * parameter counts are equal and the run's equivalence check (passed/failed with the max relative difference
 * of the forward pass). Prints nothing when doc holds no successful framework run. */
void sd_results_print_overhead(FILE *f, const json_t *doc);

/* A published results file (the input of verify), checked with positions: schema, runs (at most
 * SD_PUBLISHED_MAX_RUNS) each with safe-name workload, implementation and backend (sd_safe_name) and a
 * summary with a time metric (sd_published_time_keys, in order of preference). *out: the jansson
 * document, caller decrefs. _parse is the from-memory entry point (the fuzzers'); name is used in messages. */
#define SD_PUBLISHED_MAX_RUNS 10000
/* The numbers of a results document, checked with positions, the same for verify and report: every
 * statistic of a summary and every epoch value a number in [0, 1e12], accuracies in [0, 1]. */
typedef struct jv_doc jv_doc;
int sd_results_check(const jv_doc *d);
/* A results file read once (bounded by JV_MAX_DOC; a pipe works), checked as sd_results_check, loaded. */
int sd_results_load_file(const char *path, json_t **out);
extern const char *const sd_published_time_keys[];
/* The shape of a published file (schema, a non-empty list of runs, names, a time metric per summary), then
 * sd_results_check. A run of bench's that has a status other than "ok" (unavailable, failed, unsupported) needs no
 * summary, and a statistic that is null is absent: verify reads every results file bench writes. */
int sd_published_check(const jv_doc *d);
int sd_published_parse(json_t **out, const char *name, const char *text, size_t len);
int sd_published_load(json_t **out, const char *path);

#endif
