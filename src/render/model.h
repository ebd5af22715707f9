/* model — what the report is drawn from: benchmark runs (showdown-results/1), framework scores
 * (showdown-scores/1), and the provenance of every input file. Readers are tolerant: a section, a
 * summary statistic or an epoch list that is absent stays absent (NAN / 0 / NULL) and the report says
 * so; only malformed JSON or a wrong schema is an error. Everything lives in the model's arena. */
#ifndef SD_RENDER_MODEL_H
#define SD_RENDER_MODEL_H

#include "render/render.h"

typedef struct rm_stat { double median, min, max; } rm_stat;   /* NAN when absent */

typedef struct rm_epoch { int epoch; double train_s, val_s, loss, accuracy, images_per_s; } rm_epoch;

typedef struct rm_kv { const char *key, *value; } rm_kv;

typedef struct rm_file {
    const char *path, *kind;          /* kind: "results", "published", "scores" */
    const char *schema, *as_of;       /* as_of: the file's date (data, not the clock), or NULL */
    const char *version, *commit;     /* the tool that wrote it */
    int dirty;
    const char *source;               /* published: where the figures come from */
    const char *detail;               /* scores: "offline (snapshot only), snapshot of 2026-11-21" */
    int nenv;
    rm_kv *env;
} rm_file;

typedef struct rm_run {
    const rm_file *file;
    int published;                    /* figures from a publication, not measured here */
    int failed;                       /* "status" other than "ok"; error says why */
    const char *error;
    const char *status;               /* "ok", "failed", "unavailable", "unsupported"; NULL when absent */
    const char *equivalence;          /* framework runs: "passed (3.1e-06)", "failed (...)"; NULL when absent */
    const char *workload, *implementation, *backend, *device, *data;
    int gpus;                         /* data-parallel devices (settings.gpus, or a published run's "gpus"); 0: not recorded */
    const char *data_kind;            /* data.kind ("real", "synthetic") when data is an object */
    const char *data_source;          /* data.source: the files read, or "synthetic (seed 42)" */
    long long epoch_examples;         /* examples in one full epoch of the data set; 0 when not recorded */
    int max_batches;                  /* settings.max_batches: epochs cut to this many batches; 0: full epochs */
    int batch;                        /* settings.batch; 0 when absent */
    int nsettings;
    rm_kv *settings;
    int nrepeats;
    rm_stat first_epoch_s, steady_epoch_s, val_s, accuracy, images_per_s, total_s;
    const char *total_unit;           /* what total_s holds: "s" (the run), "s/epoch" or "s/1,000 images" (published) */
    double gflops;                    /* NAN when absent */
    long long parameters;             /* 0 when absent */
    rm_stat infer_images_per_s;       /* a timed inference pass (measured runs); NAN when absent */
    double infer_gflops;              /* its GFLOP/s median; NAN when absent */
    long long peak_bytes;             /* the largest back-end (device allocator) peak of its samples; 0: none */
    long long peak_rss_bytes;         /* the largest process peak resident memory of its samples; 0: none */
    double train_spread_pct;          /* its time figure's spread as verify judges it (sd_run_spread_pct); NAN: none */
    double infer_spread_pct;          /* the inference figure's */
    double host_speed;                /* the host's speed it was measured at (its canary, bench/host.c); NAN: none */
    const char *setting;              /* a framework's candidate setting ("compile", "jit"); NULL: as shipped */
    const char *precision;            /* settings.precision ("fp32", "bf16" ...); NULL when not recorded (fp32) */
    const char *spec;                 /* the workload file the run was built from, or NULL */
    int nepochs;
    rm_epoch *epochs;                 /* median over repeats, per epoch */
} rm_run;

typedef struct rm_framework {
    const char *name, *tier;          /* tier as text ("1", "Tier 1"); NULL when absent */
    const char *status;               /* "archived", "retired", "maintenance"...; NULL when active */
    int archived;
    double overall;                   /* NAN when absent */
    double *cat;                      /* ncat, NAN when absent */
    double *crit, *crit_raw;          /* ncrit normalised 0-100 / raw, NAN when missing */
    const char **crit_why;            /* ncrit: why a value is missing, or NULL */
    /* Ranges (method v2): NAN when the scores file has none. overall is then the midpoint. */
    double overall_lo, overall_hi;
    double *cat_lo, *cat_hi, *crit_lo, *crit_hi;   /* ncat / ncrit */
    int *cat_insufficient;            /* ncat */
    int cov_measured, cov_hand, cov_missing;       /* -1 when absent */
    const char *status_typed;         /* the framework file's status when the scorer derived another */
} rm_framework;

typedef struct rm_scores {
    const rm_file *file;
    int ncat, ncrit, nfw;
    const char **cat_id, **cat_name;
    const char **crit_id, **crit_name;
    int *crit_cat;                    /* category index of each criterion */
    rm_framework *fw;                 /* sorted by the lower bound when ranges exist, else overall; best first */
    const char **crit_about;          /* ncrit: what the criterion measures (method), or NULL */
    int has_ranges;                   /* method v2: ranges, coverage, derived status */
} rm_scores;

typedef struct rm_verdict {
    const char *workload, *implementation, *backend, *device, *metric, *verdict, *why;
    const char *published_check;      /* where the publication disagrees with its own evidence; NULL if nowhere */
    double published, measured, measured_min, measured_max;   /* NAN when absent */
} rm_verdict;

typedef struct rm_verify {
    const rm_file *file;
    const char *title, *source, *measured_from;
    double tolerance_pct;
    int ncells;
    rm_verdict *cells;
} rm_verify;

/* One run's figure in the history of the database (one point of a trend line). */
typedef struct rm_hist {
    const char *date;                 /* the run's "created" */
    double day;                       /* days since 1970-01-01 (fractional), NAN if the date is unreadable */
    const char *workload, *implementation, *backend;
    double steady_epoch_s, accuracy;  /* medians; NAN when absent */
} rm_hist;

/* One regression flagged by `showdown nightly` (showdown-regressions/1). */
typedef struct rm_regression {
    const char *workload, *implementation, *backend, *metric;
    double median, previous_median, previous_max, slower_pct, threshold_pct;
} rm_regression;

typedef struct render_model {
    render_arena *arena;
    int nfiles, nruns;
    rm_file *files;
    rm_run *runs;
    rm_scores *scores;                /* NULL without a scores file */
    int nverify;
    rm_verify *verify;                /* verdicts of `showdown verify --json` (showdown-verify/1) */
    int nhist, nhist_runs;
    rm_hist *hist;                    /* points of earlier runs from the database */
    int have_regressions, nregressions;   /* have_regressions: a regressions file was given (even empty) */
    rm_regression *regressions;
    long long regression_run, regression_previous_run;
} render_model;

int render_model_new(render_model **out);
void render_model_free(render_model *m);
/* Add a results file ("showdown-results/1"); a file with "published" set holds published figures. */
int render_model_add_results(render_model *m, const char *path);
/* Set the scores file ("showdown-scores/1"); a second call is an error. */
int render_model_set_scores(render_model *m, const char *path);
/* The same from a document already in memory (a run loaded from the database); name is its origin. */
int render_model_add_results_doc(render_model *m, const void *json_doc, const char *name);
/* Add one earlier run (a results document) as history points. */
int render_model_add_history(render_model *m, const void *json_doc);
/* Add verification verdicts ("showdown-verify/1"). */
int render_model_add_verify(render_model *m, const char *path);
/* Set the nightly comparison ("showdown-regressions/1"): the report says which medians regressed. */
int render_model_set_regressions(render_model *m, const char *path);
/* The latest as-of date over every input, or NULL. */
const char *render_model_date(const render_model *m);
/* Environment value of the first results file that has key, or NULL. */
const char *render_model_env(const render_model *m, const char *key);

#endif
