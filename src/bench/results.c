/* results — builds, prints and atomically writes "showdown-results/1" documents, and reads them back for
 * everyone else (report, nightly, collect, the database, verify's published files): the one place that
 * spells the document's keys. */
#include "bench/results.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/jsonfile.h"
#include "core/jv.h"
#include "core/util.h"
#include "db/db.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

sd_stat sd_stat_of(const double *v, int n) {
    sd_stat s = {0, 0, 0, n};
    if (n <= 0) return s;
    double *t = malloc(sizeof(double) * (size_t)n);
    if (!t) { s.n = 0; return s; }
    memcpy(t, v, sizeof(double) * (size_t)n);
    qsort(t, (size_t)n, sizeof(double), sd_cmp_double);
    s.min = t[0];
    s.max = t[n - 1];
    s.median = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    free(t);
    return s;
}

static json_t *stat_json(sd_stat s) {
    if (s.n == 0) return json_null();
    return json_pack("{s:f,s:f,s:f,s:i}", "median", s.median, "min", s.min, "max", s.max, "n", s.n);
}

json_t *sd_results_new_with(const sd_results_head *h, json_t *environment) {
    return json_pack("{s:s,s:s?,s:{s:s,s:s?,s:s?,s:b},s:o,s:[]}", "schema", SD_RESULTS_SCHEMA, "created", h->created,
                     "tool", "name", "showdown", "version", h->version, "commit", h->commit, "dirty", h->dirty,
                     "environment", environment, "runs");
}

json_t *sd_results_new(void) {
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    sd_results_head h = {.created = when, .version = SD_VERSION, .commit = SD_GIT_COMMIT, .dirty = SD_GIT_DIRTY};
    return sd_results_new_with(&h, sd_env_fingerprint());
}

void sd_results_head_of(const json_t *doc, sd_results_head *h) {
    const json_t *tool = json_object_get(doc, "tool");
    h->created = json_string_value(json_object_get(doc, "created"));
    h->version = json_string_value(json_object_get(tool, "version"));
    h->commit = json_string_value(json_object_get(tool, "commit"));
    h->dirty = json_is_true(json_object_get(tool, "dirty"));
    h->tool = tool;
    h->environment = json_object_get(doc, "environment");
    const json_t *pub = json_object_get(doc, "published");
    h->published = json_is_true(pub) || json_is_object(pub);
    h->pub_title = json_string_value(json_object_get(pub, "title"));
    h->pub_source = json_string_value(json_object_get(pub, "source"));
    h->pub_date = json_string_value(json_object_get(pub, "date"));
}

static void env_add(void *user, const char *k, const char *v) { json_object_set_new(user, k, json_string(v)); }

static const char *optim_name(nn_optim_kind k) {
    static const char *const n[] = {"sgd", "rmsprop", "adadelta", "adam"};
    return k < NN_OPTIM_COUNT ? n[k] : "?";
}

size_t sd_results_count(const json_t *doc) { return json_array_size(json_object_get(doc, "runs")); }
json_t *sd_results_run(const json_t *doc, size_t i) { return json_array_get(json_object_get(doc, "runs"), i); }
int sd_results_append(json_t *doc, json_t *run) {
    return json_array_append_new(json_object_get(doc, "runs"), run) == 0 ? 0 : sd_err(SD_ENOMEM, "out of memory");
}
void sd_results_truncate(json_t *doc, size_t n) {
    json_t *runs = json_object_get(doc, "runs");
    while (json_array_size(runs) > n) json_array_remove(runs, json_array_size(runs) - 1);
}
int sd_results_init_runs(json_t *doc) {
    return json_object_set_new(doc, "runs", json_array()) == 0 ? 0 : sd_err(SD_ENOMEM, "out of memory");
}
int sd_results_has_runs(const json_t *doc) { return json_is_array(json_object_get(doc, "runs")); }

int sd_results_check_shape(const json_t *doc, const char *name) {
    const json_t *runs = json_object_get(doc, "runs");
    if (runs && !json_is_array(runs)) return sd_err(SD_EINPUT, "%s: \"runs\" is not an array", name);
    for (size_t i = 0; i < json_array_size(runs); i++)
        if (!json_is_object(json_array_get(runs, i))) return sd_err(SD_EINPUT, "%s: runs[%zu] is not an object", name, i);
    return 0;
}

static int is_one_of(const char *key, const char *const *keys);

/* ---- a run read back ---------------------------------------------------------------------------------- */
static double num(const json_t *v) { return json_is_number(v) ? json_number_value(v) : NAN; }

sd_stat sd_stat_read(const json_t *v) {
    sd_stat s = {NAN, NAN, NAN, 0};
    if (json_is_number(v)) { s.median = s.min = s.max = num(v); return s; }
    if (!json_is_object(v)) return s;
    s.median = num(json_object_get(v, "median"));
    s.min = num(json_object_get(v, "min"));
    s.max = num(json_object_get(v, "max"));
    const json_t *n = json_object_get(v, "n");
    if (json_is_integer(n) && json_integer_value(n) >= 0 && json_integer_value(n) <= 1000000) s.n = (int)json_integer_value(n);
    return s;
}

/* An integer member in (0, max), else 0. */
static long long count_of(const json_t *v, long long max) {
    return json_is_integer(v) && json_integer_value(v) > 0 && json_integer_value(v) < max ? (long long)json_integer_value(v) : 0;
}

/* The summary's statistics a run view holds: a key each. */
static const struct { const char *key; size_t offset; } view_stats[] = {
    {"first_epoch_s", offsetof(sd_run_view, first_epoch_s)},
    {"steady_epoch_s", offsetof(sd_run_view, steady_epoch_s)},
    {"val_s", offsetof(sd_run_view, val_s)},
    {"accuracy", offsetof(sd_run_view, accuracy)},
    {"train_images_per_s", offsetof(sd_run_view, train_images_per_s)},
    {"train_gflops", offsetof(sd_run_view, train_gflops)},
    {"total_s", offsetof(sd_run_view, total_s)},
    {"train_total_s", offsetof(sd_run_view, train_total_s)},
    {"train_s", offsetof(sd_run_view, train_s)},
    {"infer_s_per_1000", offsetof(sd_run_view, infer_s_per_1000)},
    {"inference_s_per_1000_images", offsetof(sd_run_view, inference_s_per_1000)},
    {"inference_gflops", offsetof(sd_run_view, inference_gflops)},
};

void sd_run_view_of(const json_t *run, sd_run_view *v) {
    memset(v, 0, sizeof *v);
    v->workload = json_object_get(run, "workload");
    v->implementation = json_object_get(run, "implementation");
    v->backend = json_object_get(run, "backend");
    v->device = json_object_get(run, "device");
    v->status = json_object_get(run, "status");
    v->error = json_object_get(run, "error");
    v->data = json_object_get(run, "data");
    v->data_kind = json_object_get(v->data, "kind");
    v->data_source = json_object_get(v->data, "source");
    /* results before full_epoch_examples: a real set's train_examples (never cut); a synthetic one was cut with
     * the epochs, so its full size is unknown there */
    const json_t *fe = json_object_get(v->data, "full_epoch_examples");
    const char *kind = json_string_value(v->data_kind);
    if (!json_is_integer(fe) && kind && strcmp(kind, "real") == 0) fe = json_object_get(v->data, "train_examples");
    if (json_is_integer(fe) && json_integer_value(fe) > 0) v->epoch_examples = (long long)json_integer_value(fe);
    const json_t *eq = json_object_get(run, "equivalence");
    v->equivalence_status = json_string_value(json_object_get(eq, "status"));
    v->equivalence_max_rel_diff = num(json_object_get(eq, "max_rel_diff"));
    v->framework_name = json_string_value(json_object_get(json_object_get(run, "framework"), "name"));
    v->host_speed = num(json_object_get(run, "host_speed"));
    v->timed_out = json_is_true(json_object_get(run, "timed_out"));
    const json_t *set = json_object_get(run, "settings");
    v->settings = json_is_object(set) ? set : NULL;
    const json_t *g = json_object_get(v->settings && json_object_get(set, "gpus") ? set : run, "gpus");
    if (json_is_integer(g) && json_integer_value(g) > 0 && json_integer_value(g) <= 4096) v->gpus = (int)json_integer_value(g);
    v->max_batches = (int)count_of(json_object_get(set, "max_batches"), 1000000000);
    v->batch = (int)count_of(json_object_get(set, "batch"), 1000000000);
    const json_t *ba = json_object_get(set, "batches_asked");
    v->batches_asked = json_is_null(ba) ? -1 : (int)count_of(ba, 1000000000);
    const double cap = num(json_object_get(set, "time_cap_s"));
    v->time_cap_s = cap > 0 ? cap : 0;
    const json_t *sum = json_object_get(run, "summary");
    v->summary = sum;
    v->samples = json_object_get(run, "samples");
    const json_t *p = json_object_get(sum, "parameters");
    if (!p) p = json_object_get(json_object_get(run, "model"), "parameters");
    v->parameters = json_is_integer(p) ? (long long)json_integer_value(p) : 0;
    for (size_t i = 0; i < sizeof view_stats / sizeof view_stats[0]; i++)
        *(sd_stat *)((char *)v + view_stats[i].offset) = sd_stat_read(json_object_get(sum, view_stats[i].key));
    v->setting = json_string_value(json_object_get(set, "setting"));
    v->spec = json_string_value(json_object_get(json_object_get(run, "model"), "spec"));
    for (size_t s = 0; s < json_array_size(v->samples); s++) {
        const json_t *sample = json_array_get(v->samples, s);
        long long pb = count_of(json_object_get(sample, "peak_bytes"), 1LL << 60);
        long long rss = count_of(json_object_get(sample, "peak_rss_bytes"), 1LL << 60);
        if (pb > v->peak_bytes) v->peak_bytes = pb;
        if (rss > v->peak_rss_bytes) v->peak_rss_bytes = rss;
    }
    const char *src = json_string_value(json_object_get(run, "source"));
    if (v->peak_rss_bytes == 0 && src && strcmp(src, "bench-cpu") == 0) {
        v->peak_rss_bytes = v->peak_bytes;   /* results older than peak_rss_bytes: a best setting's peak RSS */
        v->peak_bytes = 0;
    }
    v->gflops = num(json_object_get(sum, "gflops"));
    v->epochs = (int)count_of(json_object_get(set, "epochs"), 1000000000);
    v->threads = (int)count_of(json_object_get(set, "threads"), 1000000);
    v->seed = count_of(json_object_get(set, "seed"), (long long)1 << 62);
    const json_t *at = json_object_get(set, "autotune");
    v->autotune = json_is_boolean(at) ? json_is_true(at) : -1;
    v->precision = json_string_value(json_object_get(set, "precision"));
    v->interpreter = json_string_value(json_object_get(json_object_get(run, "backend_env"), "interpreter"));
    v->note = json_string_value(json_object_get(run, "note"));
    v->source = json_string_value(json_object_get(run, "source"));
    const json_t *re = json_object_get(run, "rerun");
    if (json_is_object(re)) {
        v->rerun_python = json_string_value(json_object_get(re, "python"));
        v->rerun_script = json_string_value(json_object_get(re, "script"));
        v->rerun_args = json_object_get(re, "args");
        v->rerun_env = json_object_get(re, "env");
        if (!json_is_array(v->rerun_args)) v->rerun_args = NULL;
        if (!json_is_array(v->rerun_env)) v->rerun_env = NULL;
    }
    v->published_check = json_object_get(run, "published_check");
}

sd_stat sd_run_stat(const sd_run_view *v, const char *key) { return sd_stat_read(json_object_get(v->summary, key)); }

/* A steady figure of one or two repeats has too few for a spread of its own: its steady epochs' (2..N) stands in.
 * From three repeats on, the figure is their median and its spread theirs; one slow epoch within a repeat moves
 * neither (each repeat's steady epoch is its fastest). */
sd_stat sd_run_published_stat(const sd_run_view *v, const char *key) {
    sd_stat s = sd_run_stat(v, key);
    if (isnan(s.median) || strcmp(key, "steady_epoch_s") != 0 || s.n >= 3) return s;
    sd_stat eps = sd_run_stat(v, "steady_epochs_s");
    if (!isnan(eps.median)) {
        s.min = fmin(s.min, eps.min);
        s.max = fmax(s.max, eps.max);
    }
    return s;
}

double sd_stat_spread_pct(sd_stat s) {
    if (isnan(s.median)) return NAN;
    return s.max > s.min && s.median > 0 ? (s.max - s.min) / s.median * 100 : 0;
}

double sd_run_spread_pct(const sd_run_view *v, const char *key) {
    return sd_stat_spread_pct(sd_run_published_stat(v, key));
}

int sd_status_unmeasured(const char *status) { return status && strcmp(status, "ok") != 0; }
int sd_run_unmeasured(const sd_run_view *v) { return sd_status_unmeasured(json_string_value(v->status)); }

const char *sd_run_time_key(const sd_run_view *v) {
    for (int t = 0; sd_published_time_keys[t]; t++)
        if (!isnan(sd_run_published_stat(v, sd_published_time_keys[t]).median)) return sd_published_time_keys[t];
    return NULL;
}

double sd_run_judged_spread_pct(const sd_run_view *v) {
    const char *key = sd_run_time_key(v);
    const double w = key ? sd_run_spread_pct(v, key) : 0, inf = sd_run_spread_pct(v, "inference_s_per_1000_images");
    return inf > w ? inf : w;
}

/* Text of a scalar for an identity: strings as they are, numbers as written, null as "null"; 0 for others. */
static int scalar_text(const json_t *v, char *buf, size_t n) {
    if (json_is_string(v)) snprintf(buf, n, "%s", json_string_value(v));
    else if (json_is_integer(v)) snprintf(buf, n, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v)) snprintf(buf, n, "%.10g", json_real_value(v));
    else if (json_is_boolean(v)) snprintf(buf, n, "%s", json_is_true(v) ? "true" : "false");
    else if (json_is_null(v)) snprintf(buf, n, "null");
    else return 0;
    return 1;
}

static void ident_add(sd_ident *out, int *n, int max, const char *what, const json_t *v, int setting) {
    if (!v || *n >= max) return;
    for (int i = 0; i < *n; i++)
        if (strcmp(out[i].what, what) == 0) return;   /* the first place that records it wins */
    sd_ident *d = &out[*n];
    if (!scalar_text(v, d->value, sizeof d->value)) return;
    snprintf(d->what, sizeof d->what, "%s", what);
    d->setting = setting;
    (*n)++;
}

int sd_run_identity(const json_t *run, sd_ident *out, int max) {
    /* where the runner or back-end ran from, and counts checked elsewhere, are not what was measured */
    static const char *const not_identity[] = {"runner", "torch_dir", "torch_path", "executable", "parameters",
                                               "protocol", "device", "device_kind", "event", "framework", "version", NULL};
    static const char *const settings[] = {"precision", "threads", "autotune", "batch", "max_batches", "epochs",
                                           "setting", "candidate", NULL};
    int n = 0;
    const json_t *fw = json_object_get(run, "framework"), *benv = json_object_get(run, "backend_env");
    ident_add(out, &n, max, "framework", json_is_object(fw) ? json_object_get(fw, "name") : json_object_get(benv, "framework"), 0);
    ident_add(out, &n, max, "framework version",
              json_is_object(fw) ? json_object_get(fw, "version") : json_object_get(benv, "version"), 0);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)benv, k, v)
        if (!is_one_of(k, not_identity)) ident_add(out, &n, max, k, v, 0);
    const json_t *set = json_object_get(run, "settings");
    for (int i = 0; settings[i]; i++) ident_add(out, &n, max, settings[i], json_object_get(set, settings[i]), 1);
    return n;
}

void sd_env_view_of(const json_t *env, sd_env_view *v) {
    const json_t *g = json_object_get(env, "gpu");
    v->cpu_model = json_string_value(json_object_get(env, "cpu_model"));
    v->gpu_name = json_string_value(json_object_get(g, "name"));
    v->gpu_note = json_string_value(json_object_get(g, "note"));
    v->hostname = json_string_value(json_object_get(env, "hostname"));
    v->omp_wait_policy = json_string_value(json_object_get(env, "omp_wait_policy"));
    v->libraries = json_object_get(env, "libraries");
    v->cores = count_of(json_object_get(env, "cores"), 1LL << 40);
    v->gpu_count = count_of(json_object_get(g, "count"), 1LL << 40);
}

int sd_results_set_env(json_t *doc, json_t *env) {
    return env && json_object_set_new(doc, "environment", env) == 0 ? 0 : sd_err(SD_ENOMEM, "out of memory");
}

int sd_results_run_set_env(json_t *run, const json_t *env) {
    json_t *c = json_deep_copy(env);
    return c && json_object_set_new(run, "environment", c) == 0 ? 0 : sd_err(SD_ENOMEM, "out of memory");
}

json_t *sd_results_run_env(const json_t *doc, const json_t *run) {
    json_t *e = json_deep_copy(json_object_get(doc, "environment"));
    if (!e) e = json_object();
    const json_t *r = json_object_get(run, "environment");
    if (e && json_is_object(r)) json_object_update_recursive(e, (json_t *)r);
    return e;
}

size_t sd_run_nsamples(const sd_run_view *v) { return json_array_size(v->samples); }

static const json_t *epochs_of(const sd_run_view *v, size_t s) {
    return json_object_get(json_array_get(v->samples, s), "epochs");
}
size_t sd_run_nepochs(const sd_run_view *v, size_t s) { return json_array_size(epochs_of(v, s)); }

void sd_epoch_view_of(const sd_run_view *v, size_t s, size_t e, sd_epoch_view *out) {
    const json_t *ep = json_array_get(epochs_of(v, s), e), *n = json_object_get(ep, "epoch");
    out->epoch = json_is_integer(n) ? (long long)json_integer_value(n) : (long long)e + 1;
    out->train_s = num(json_object_get(ep, "train_s"));
    out->val_s = num(json_object_get(ep, "val_s"));
    out->loss = num(json_object_get(ep, "loss"));
    out->accuracy = num(json_object_get(ep, "accuracy"));
    out->images_per_s = num(json_object_get(ep, "images_per_s"));
}

int sd_run_epoch_time(const json_t *run, sd_stat *s, const char **metric) {
    const json_t *sum = json_object_get(run, "summary");
    *metric = "steady_epoch_s";
    const json_t *v = json_object_get(sum, *metric);
    if (!json_is_object(v)) { *metric = "first_epoch_s"; v = json_object_get(sum, *metric); }
    if (!json_is_object(v)) return 0;
    s->median = json_number_value(json_object_get(v, "median"));
    s->min = json_number_value(json_object_get(v, "min"));
    s->max = json_number_value(json_object_get(v, "max"));
    s->n = (int)json_integer_value(json_object_get(v, "n"));
    return 1;
}

static const char *str_or(const json_t *v, const char *absent) { return json_is_string(v) ? json_string_value(v) : absent; }

/* The database's columns of a run (they point into it). */
static db_result_cols cols_of(const json_t *run) {
    sd_run_view v;
    sd_run_view_of(run, &v);
    return (db_result_cols){str_or(v.workload, NULL), str_or(v.implementation, NULL), str_or(v.backend, NULL),
                            str_or(v.device, NULL), str_or(v.status, NULL), v.summary, v.samples};
}

int sd_results_store(db *d, int64_t run_id, const json_t *doc, size_t from, int finish) {
    size_t n = sd_results_count(doc);
    for (size_t k = from; k < n; k++) {
        const json_t *run = sd_results_run(doc, k);
        const db_result_cols c = cols_of(run);
        SD_TRY(db_run_add_result(d, run_id, &c, run, finish && k + 1 == n));
    }
    if (finish && from >= n) SD_TRY(db_run_finish(d, run_id));
    return 0;
}

int sd_results_store_again(db *d, int64_t run_id, const json_t *doc, size_t from, size_t to) {
    for (size_t k = from; k < to; k++) {
        const json_t *run = sd_results_run(doc, k);
        const db_result_cols c = cols_of(run);
        SD_TRY(db_run_replace_result(d, run_id, (int64_t)k, &c, run));
    }
    return 0;
}

int sd_results_db_begin(db *d, const json_t *doc, const char *kind, const char *dir, int64_t *run_id) {
    sd_results_head h;
    sd_results_head_of(doc, &h);
    db_run_head row = {h.created, h.version, h.commit, h.dirty, h.environment};
    return db_run_begin(d, &row, kind, dir, run_id);
}

typedef struct load_ctx { db *d; int64_t run_id; json_t *doc; } load_ctx;

static int load_head(void *user, const db_run_head *row, const char *kind, int complete) {
    load_ctx *c = user;
    sd_results_head h = {.created = row->created, .version = row->version, .commit = row->commit, .dirty = row->dirty};
    json_t *env = row->environment ? json_incref((json_t *)row->environment) : json_object();
    c->doc = sd_results_new_with(&h, env);
    /* where the document came from: this database's run */
    if (c->doc && (json_object_set_new(c->doc, "run_kind", kind ? json_string(kind) : json_null()) ||
                   json_object_set_new(c->doc, "run_id", json_integer(c->run_id)) ||
                   json_object_set_new(c->doc, "complete", json_boolean(complete)))) {
        json_decref(c->doc);
        c->doc = NULL;
    }
    /* json_pack refuses text that is not UTF-8: a damaged row, not a lack of memory */
    if (!c->doc) return sd_err(SD_EINPUT, "%s: run %lld: unreadable row (a text column is not UTF-8)", db_path(c->d),
                               (long long)c->run_id);
    return 0;
}

static int load_result(void *user, json_t *run) { return sd_results_append(((load_ctx *)user)->doc, run); }

int sd_results_load(db *d, int64_t run_id, json_t **doc) {
    load_ctx c = {d, run_id, NULL};
    db_run_reader r = {load_head, load_result, &c};
    int rc = db_run_read(d, run_id, &r);
    if (rc) { json_decref(c.doc); return rc; }
    *doc = c.doc;
    return 0;
}

/* A run's settings: what it was asked to do (batch, epochs, threads, seed, precision, the optimizer ...). */
static json_t *settings_of(const sd_run_info *ri, const char *precision) {
    const sd_workload *w = ri->w;
    const nn_train_opts *o = ri->opts;
    json_t *optim = json_pack("{s:s,s:f}", "name", optim_name(w->optim.kind), "lr", (double)w->optim.lr);
    switch (w->optim.kind) {
    case NN_OPTIM_SGD: json_object_set_new(optim, "momentum", json_real(w->optim.momentum)); break;
    case NN_OPTIM_RMSPROP: case NN_OPTIM_ADADELTA:
        json_object_set_new(optim, "rho", json_real(w->optim.rho));
        json_object_set_new(optim, "eps", json_real(w->optim.eps));
        break;
    case NN_OPTIM_ADAM:
        json_object_set_new(optim, "beta1", json_real(w->optim.beta1));
        json_object_set_new(optim, "beta2", json_real(w->optim.beta2));
        json_object_set_new(optim, "eps", json_real(w->optim.eps));
        break;
    default: break;
    }
    json_t *settings = json_pack("{s:i,s:i,s:i,s:I,s:i,s:b,s:s,s:o}", "batch", o->batch, "epochs", o->epochs,
                                 "threads", ri->threads, "seed", (json_int_t)o->seed, "repeat", ri->nsamples,
                                 "shuffle", o->shuffle, "precision", precision, "optimizer", optim);
    if (ri->be) json_object_set_new(settings, "autotune", json_boolean(nn_backend_options(ri->be)->autotune));
    json_object_set_new(settings, "max_batches", o->max_batches > 0 ? json_integer(o->max_batches) : json_null());
    if (ri->time_cap_s > 0) {   /* max_batches is what the cap let the first repeat train: what a rerun runs */
        json_object_set_new(settings, "time_cap_s", json_real(ri->time_cap_s));
        if (ri->asked_batches)
            json_object_set_new(settings, "batches_asked",
                                ri->asked_batches > 0 ? json_integer(ri->asked_batches) : json_null());
    }
    if (ri->gpus > 0) {   /* data parallel: the replica count, the global batch and how gradients were reduced */
        json_object_set_new(settings, "gpus", json_integer(ri->gpus));
        json_object_set_new(settings, "global_batch", json_integer((json_int_t)o->batch * ri->gpus));
        if (ri->reduction && ri->reduction[0]) json_object_set_new(settings, "reduction", json_string(ri->reduction));
    }
    return settings;
}

static double jnum(const json_t *o, const char *key) { return num(json_object_get(o, key)); }

/* A run's summary from its samples (each repeat's epochs, inference pass and cold pass): what add_run writes and
 * what a merge of two runs of one cell writes again. E: the epochs asked; flops_*: an example's. NULL: no memory. */
static json_t *summary_of(const json_t *samples, long E, int inference_only, double flops_fwd, double flops_train) {
    const int R = (int)json_array_size(samples);
    int nall = 0, maxe = 1;   /* every epoch after the first over all repeats; the most epochs of one */
    for (int s = 0; s < R; s++) {
        const int ne = (int)json_array_size(json_object_get(json_array_get(samples, (size_t)s), "epochs"));
        nall += ne > 1 ? ne - 1 : 0;
        if (ne > maxe) maxe = ne;
    }
    const size_t r = R > 0 ? (size_t)R : 1;
    double *first = calloc(r, sizeof(double)), *steady = calloc(r, sizeof(double));
    double *val = calloc(r, sizeof(double)), *acc = calloc(r, sizeof(double));
    double *ips = calloc(r, sizeof(double)), *gfl = calloc(r, sizeof(double));
    double *tmp = calloc((size_t)maxe, sizeof(double)), *all = calloc((size_t)nall + 1, sizeof(double));
    double *inf = calloc(r, sizeof(double)), *inf1k = calloc(r, sizeof(double));
    double *cold = calloc(r, sizeof(double)), *infgf = calloc(r, sizeof(double));
    json_t *sum = NULL;
    int ninf = 0, ncold = 0, nsteady = 0;
    if (!first || !steady || !val || !acc || !ips || !gfl || !tmp || !all || !inf || !inf1k || !cold || !infgf)
        goto done;
    for (int s = 0; s < R; s++) {
        const json_t *sample = json_array_get(samples, (size_t)s), *eps = json_object_get(sample, "epochs");
        const double infer_s = jnum(sample, "inference_s"), infer_images = jnum(sample, "inference_images");
        if (infer_images > 0) {   /* inference timed apart */
            infgf[ninf] = flops_fwd * infer_images / infer_s / 1e9;
            inf[ninf] = infer_s;
            inf1k[ninf++] = 1000.0 * infer_s / infer_images;
        }
        if (jnum(sample, "cold_pass_s") > 0) cold[ncold++] = jnum(sample, "cold_pass_s");
        const int nepochs = (int)json_array_size(eps);
        if (nepochs == 0) continue;   /* inference-only run */
        const json_t *e0 = json_array_get(eps, 0);
        first[s] = jnum(e0, "train_s");
        /* steady state: the fastest epoch after the first. The hosts of these machines slow both cores by up to
         * 40% in spells of seconds (docs/benchmarking.md): the fastest epoch is the machine's own speed, and the
         * figure a rerun finds again; a median of a few epochs is whatever share of them a spell covered */
        for (int e = 1; e < nepochs; e++) tmp[e - 1] = all[nsteady++] = jnum(json_array_get(eps, (size_t)e), "train_s");
        steady[s] = nepochs > 1 ? sd_stat_of(tmp, nepochs - 1).min : NAN;
        for (int e = 0; e < nepochs; e++) tmp[e] = jnum(json_array_get(eps, (size_t)e), "val_s");
        val[s] = sd_stat_of(tmp, nepochs).median;
        acc[s] = jnum(json_array_get(eps, (size_t)nepochs - 1), "accuracy");
        double t = nepochs > 1 ? steady[s] : first[s];
        ips[s] = jnum(e0, "train_images") / t;
        gfl[s] = ips[s] * flops_train / 1e9;
    }
    sum = json_object();
    int RT = inference_only ? 0 : R;   /* training statistics: none for an inference-only run */
    json_object_set_new(sum, "first_epoch_s", stat_json(sd_stat_of(first, RT)));
    json_object_set_new(sum, "steady_epoch_s", E > 1 && RT ? stat_json(sd_stat_of(steady, RT)) : json_null());
    /* every epoch after the first, over all repeats: the spread a single-repeat figure has within its own run (a
     * re-check cannot be held closer than that) */
    sd_stat se = E > 1 && RT && nsteady > 1 ? sd_stat_of(all, nsteady) : sd_stat_of(NULL, 0);
    if (se.n > 1) json_object_set_new(sum, "steady_epochs_s", stat_json(se));
    json_object_set_new(sum, "val_s", stat_json(sd_stat_of(val, RT)));
    json_object_set_new(sum, "accuracy", stat_json(sd_stat_of(acc, RT)));
    json_object_set_new(sum, "train_images_per_s", stat_json(sd_stat_of(ips, RT)));
    json_object_set_new(sum, "train_gflops", stat_json(sd_stat_of(gfl, RT)));
    if (!inference_only)
        json_object_set_new(sum, "steady_from", json_string(E > 1 ? "epochs 2..N (fastest)" : "epoch 1 (only one epoch)"));
    /* inference timed apart: seconds for the pass and per 1,000 images (the published ResNet-50 figure) */
    json_object_set_new(sum, "inference_s", stat_json(sd_stat_of(inf, ninf)));
    json_object_set_new(sum, "inference_s_per_1000_images", stat_json(sd_stat_of(inf1k, ninf)));
    json_object_set_new(sum, "inference_gflops", stat_json(sd_stat_of(infgf, ninf)));
    if (ncold) json_object_set_new(sum, "cold_pass_s", stat_json(sd_stat_of(cold, ncold)));
    const json_t *metric = json_object_get(json_array_get(samples, 0), "metric");
    if (json_is_string(metric)) json_object_set_new(sum, "metric", json_string(json_string_value(metric)));
done:
    free(first); free(steady); free(val); free(acc); free(ips); free(gfl); free(tmp); free(all);
    free(inf); free(inf1k); free(cold); free(infgf);
    return sum;
}

int sd_results_add_run(json_t *doc, const sd_run_info *ri) {
    const sd_workload *w = ri->w;
    const nn_train_opts *o = ri->opts;
    json_t *run = json_object();
    json_object_set_new(run, "workload", json_string(w->name));
    json_object_set_new(run, "implementation", json_string(ri->implementation));
    const char *precision = ri->be ? (nn_backend_options(ri->be)->precision ? nn_backend_options(ri->be)->precision : "fp32")
                                   : (ri->precision ? ri->precision : "fp32");
    json_object_set_new(run, "backend", json_string(ri->be ? nn_backend_name(ri->be) : ri->backend_name));
    json_object_set_new(run, "device", json_string(ri->be ? nn_backend_device(ri->be) : ri->device));
    json_object_set_new(run, "status", json_string("ok"));
    if (ri->backend_note && ri->backend_note[0]) json_object_set_new(run, "backend_note", json_string(ri->backend_note));
    json_t *benv = json_object();
    if (ri->be) nn_backend_env(ri->be, env_add, benv);
    if (ri->backend_env) json_object_update(benv, (json_t *)ri->backend_env);
    json_object_set_new(run, "backend_env", benv);
    /* a full epoch's size, for times per full epoch when --batches cut the epochs (synthetic sets are cut too) */
    long full = ri->train->synthetic && w->train_n > ri->train->n ? w->train_n : ri->train->n;
    json_object_set_new(run, "data", json_pack("{s:s,s:s,s:I,s:I,s:I}", "kind", ri->train->synthetic ? "synthetic" : "real",
                                               "source", ri->train->source, "train_examples", (json_int_t)ri->train->n,
                                               "test_examples", (json_int_t)ri->test->n, "full_epoch_examples",
                                               (json_int_t)full));
    json_object_set_new(run, "settings", settings_of(ri, precision));
    const nn_train_result *r0 = &ri->samples[0];
    json_object_set_new(run, "model", json_pack("{s:I,s:f,s:f,s:s}", "parameters", (json_int_t)r0->nparams,
                                                "forward_flops_per_example", r0->flops_fwd,
                                                "train_flops_per_example", r0->flops_train, "spec", w->path));
    if (w->expected_params)
        json_object_set_new(json_object_get(run, "model"), "expected_parameters", json_integer(w->expected_params));

    int R = ri->nsamples, inference_only = w->mode == SD_MODE_INFERENCE;
    json_t *samples = json_array();
    for (int s = 0; s < R; s++) {
        const nn_train_result *r = &ri->samples[s];
        json_t *eps = json_array();
        for (int e = 0; e < r->nepochs; e++) {
            const nn_epoch_stats *st = &r->epochs[e];
            json_array_append_new(eps, json_pack("{s:i,s:f,s:f,s:f,s:f,s:f,s:I,s:I,s:f}", "epoch", st->epoch,
                                                 "train_s", st->train_s, "val_s", st->val_s, "loss", st->loss,
                                                 "val_loss", st->val_loss, "accuracy", st->accuracy,
                                                 "train_images", (json_int_t)st->train_images, "test_images",
                                                 (json_int_t)st->test_images, "images_per_s",
                                                 st->train_images / st->train_s));
        }
        json_t *conf = json_array();
        for (int i = 0; i < r->classes; i++) {
            json_t *row = json_array();
            for (int j = 0; j < r->classes; j++) json_array_append_new(row, json_integer(r->confusion[i * r->classes + j]));
            json_array_append_new(conf, row);
        }
        json_t *sample = json_pack("{s:i,s:I,s:o,s:o}", "repeat", s + 1, "peak_bytes", (json_int_t)r->peak_bytes,
                                   "epochs", eps, "confusion", conf);
        if (r->peak_rss_bytes > 0) json_object_set_new(sample, "peak_rss_bytes", json_integer((json_int_t)r->peak_rss_bytes));
        if (r->metric) json_object_set_new(sample, "metric", json_string(r->metric));
        if (r->infer_images > 0) {   /* inference timed apart */
            json_object_set_new(sample, "inference_s", json_real(r->infer_s));
            json_object_set_new(sample, "inference_images", json_integer(r->infer_images));
            if (r->infer_passes > 0) json_object_set_new(sample, "inference_passes", json_integer(r->infer_passes));
        }
        if (r->cold_s > 0) json_object_set_new(sample, "cold_pass_s", json_real(r->cold_s));
        json_array_append_new(samples, sample);
    }
    json_object_set_new(run, "samples", samples);
    json_t *sum = summary_of(samples, o->epochs, inference_only, r0->flops_fwd, r0->flops_train);
    if (!sum) {
        json_decref(run);
        return sd_err(SD_ENOMEM, "out of memory");
    }
    json_object_set_new(run, "summary", sum);
    if (inference_only)
        json_object_set_new(run, "mode", json_string("inference"));
    if (ri->equivalence) json_object_set_new(run, "equivalence", json_deep_copy(ri->equivalence));
    json_array_append_new(json_object_get(doc, "runs"), run);
    return 0;
}

int sd_results_merge_run(json_t *into, const json_t *from) {
    json_t *samples = json_object_get(into, "samples"), *more = json_object_get(from, "samples");
    if (!json_is_array(samples) || !json_is_array(more))
        return sd_err(SD_EINPUT, "merge: a run without samples");
    const json_t *speed0 = json_object_get(into, "host_speed"), *speed1 = json_object_get(from, "host_speed");
    size_t k;
    json_t *s;
    json_array_foreach(samples, k, s)
        if (json_is_number(speed0) && !json_object_get(s, "host_speed"))
            json_object_set_new(s, "host_speed", json_real(json_number_value(speed0)));
    json_array_foreach(more, k, s) {
        json_t *c = json_deep_copy(s);
        if (!c) return sd_err(SD_ENOMEM, "out of memory");
        json_object_set_new(c, "repeat", json_integer((json_int_t)json_array_size(samples) + 1));
        if (json_is_number(speed1)) json_object_set_new(c, "host_speed", json_real(json_number_value(speed1)));
        json_array_append_new(samples, c);
    }
    /* the run's host speed: the median of its processes' */
    double *v = malloc(json_array_size(samples) * sizeof *v);
    int n = 0;
    if (!v) return sd_err(SD_ENOMEM, "out of memory");
    json_array_foreach(samples, k, s)
        if (json_is_number(json_object_get(s, "host_speed"))) v[n++] = jnum(s, "host_speed");
    if (n) json_object_set_new(into, "host_speed", json_real(sd_stat_of(v, n).median));
    free(v);
    json_t *settings = json_object_get(into, "settings"), *model = json_object_get(into, "model");
    if (json_is_object(settings))
        json_object_set_new(settings, "repeat", json_integer((json_int_t)json_array_size(samples)));
    const json_t *mode = json_object_get(into, "mode");
    const int inference_only = json_is_string(mode) && strcmp(json_string_value(mode), "inference") == 0;
    json_t *sum = summary_of(samples, (long)jnum(settings, "epochs"), inference_only,
                             jnum(model, "forward_flops_per_example"), jnum(model, "train_flops_per_example"));
    if (!sum) return sd_err(SD_ENOMEM, "out of memory");
    json_object_set_new(into, "summary", sum);
    /* the same-model check holds for the run when it held for every process */
    const json_t *eq = json_object_get(from, "equivalence");
    const char *st = json_string_value(json_object_get(eq, "status"));
    if (st && strcmp(st, "passed") != 0) json_object_set_new(into, "equivalence", json_deep_copy(eq));
    return 0;
}

int sd_results_add_status(json_t *doc, const char *workload, const char *implementation, const char *backend,
                          const char *status, const char *error) {
    json_array_append_new(json_object_get(doc, "runs"),
                          json_pack("{s:s,s:s,s:s,s:s,s:s}", "workload", workload, "implementation", implementation,
                                    "backend", backend, "status", status, "error", error));
    return 0;
}

int sd_results_add_failure(json_t *doc, const char *workload, const char *implementation, const char *backend,
                           const char *error) {
    return sd_results_add_status(doc, workload, implementation, backend, "failed", error);
}

int sd_results_add_timeout(json_t *doc, const char *workload, const char *implementation, const char *backend,
                           const char *error) {
    SD_TRY(sd_results_add_failure(doc, workload, implementation, backend, error));
    json_t *run = sd_results_run(doc, sd_results_count(doc) - 1);
    return json_object_set_new(run, "timed_out", json_true()) ? sd_err(SD_ENOMEM, "cannot record a timeout") : 0;
}

/* A statistic of rates (images/s) as seconds per 1,000 images: the fastest rate is the shortest time. */
static json_t *per_1000_json(sd_stat r) {
    sd_stat t = {1000.0 / r.median, 1000.0 / r.max, 1000.0 / r.min, r.n};
    return stat_json(t);
}

int sd_results_add_setting_run(json_t *doc, const sd_setting_run *s) {
    const sd_run_view *p = s->published;
    json_t *run = json_object(), *sum = json_object(), *samples = json_array();
    json_object_set_new(run, "workload", json_string(s->workload));
    json_object_set_new(run, "implementation", json_string(s->implementation));
    json_object_set_new(run, "backend", json_string("cpu"));
    json_object_set_new(run, "device", json_string("cpu"));
    json_object_set_new(run, "status", json_string("ok"));
    json_object_set_new(run, "source", json_string(p->source ? p->source : "bench-cpu"));
    json_object_set_new(run, "settings", p->settings ? json_deep_copy(p->settings) : json_object());
    json_object_set_new(run, "backend_env", json_pack("{s:s,s:s}", "interpreter", s->python, "version", s->version));
    if (s->train.n) {
        json_object_set_new(sum, "train_images_per_s", stat_json(s->train));
        json_object_set_new(sum, "train_s_per_1000_images", per_1000_json(s->train));
    }
    if (s->infer.n) json_object_set_new(sum, "inference_s_per_1000_images", per_1000_json(s->infer));
    json_object_set_new(run, "summary", sum);
    for (int i = 0; i < s->nrepeats; i++)
        json_array_append_new(samples, json_pack("{s:i,s:I,s:I}", "repeat", i + 1, "peak_bytes", (json_int_t)0,
                                                 "peak_rss_bytes", (json_int_t)s->peak_rss_bytes[i]));
    json_object_set_new(run, "samples", samples);
    return sd_results_append(doc, run);
}

void sd_results_note_host(json_t *doc, size_t from, double speed) {
    for (size_t i = from; i < sd_results_count(doc); i++)
        json_object_set_new(sd_results_run(doc, i), "host_speed", json_real(speed));
}

void sd_results_note_precision(json_t *doc, const char *precision) {
    size_t n = sd_results_count(doc);
    json_t *run = n ? sd_results_run(doc, n - 1) : NULL;
    if (!run || !precision || strcmp(precision, "fp32") == 0 || json_object_get(run, "settings")) return;
    json_object_set_new(run, "settings", json_pack("{s:s}", "precision", precision));
}

void sd_results_set_library(json_t *doc, const char *name, const char *version) {
    json_t *libs = json_object_get(json_object_get(doc, "environment"), "libraries");
    if (libs) json_object_set_new(libs, name, json_string(version));
}

int sd_json_write_atomic(const json_t *doc, const char *path) {
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(10));
    if (!text) return sd_err(SD_ENOMEM, "cannot serialise JSON for %s", path);
    size_t n = strlen(text);
    char *t2 = realloc(text, n + 2);
    if (!t2) { free(text); return sd_err(SD_ENOMEM, "cannot serialise JSON for %s", path); }
    text = t2;
    text[n] = '\n'; text[n + 1] = 0;
    int rc = sd_write_file_atomic(path, text, n + 1);
    free(text);
    return rc;
}

static double stat_median(const json_t *sum, const char *key) {
    const json_t *s = json_object_get(sum, key);
    return s && json_is_object(s) ? json_number_value(json_object_get(s, "median")) : NAN;
}

static void fmt_stat(char *buf, size_t n, const json_t *sum, const char *key, const char *fmt) {
    const json_t *s = json_object_get(sum, key);
    if (!s || !json_is_object(s)) { snprintf(buf, n, "n/a"); return; }
    double md = json_number_value(json_object_get(s, "median"));
    double lo = json_number_value(json_object_get(s, "min")), hi = json_number_value(json_object_get(s, "max"));
    char a[32], b[32], c[32];
    snprintf(a, sizeof a, fmt, md);
    if (json_integer_value(json_object_get(s, "n")) > 1) {
        snprintf(b, sizeof b, fmt, lo);
        snprintf(c, sizeof c, fmt, hi);
        snprintf(buf, n, "%s [%s-%s]", a, b, c);
    } else {
        snprintf(buf, n, "%s", a);
    }
}

void sd_results_print_table(FILE *f, const json_t *doc) {
    fprintf(f, "%-14s %-16s %-9s %-22s %-22s %-18s %-20s %-10s %-16s %s\n", "workload", "impl", "backend",
            "first epoch s", "steady epoch s", "val s", "train img/s", "GFLOP/s", "accuracy", "infer s/1000 img");
    size_t i;
    json_t *run;
    json_array_foreach(json_object_get(doc, "runs"), i, run) {
        const char *st = json_string_value(json_object_get(run, "status"));
        if (!st || strcmp(st, "ok") != 0) {
            char up[16] = "FAILED";   /* or the Slurm cell's state: TIMEOUT, CANCELLED, MISSING, UNAVAILABLE */
            for (size_t k = 0; st && strcmp(st, "failed") && st[k] && k + 1 < sizeof up; k++)
                up[k] = (char)(st[k] >= 'a' && st[k] <= 'z' ? st[k] - 32 : st[k]), up[k + 1] = 0;
            fprintf(f, "%-14s %-16s %-9s %s: %s\n", json_string_value(json_object_get(run, "workload")),
                    json_string_value(json_object_get(run, "implementation")),
                    json_string_value(json_object_get(run, "backend")), up,
                    json_string_value(json_object_get(run, "error")));
            continue;
        }
        const json_t *sum = json_object_get(run, "summary");
        char a[48], b[48], c[48], d[48], e[48], g[48];
        fmt_stat(g, sizeof g, sum, "inference_s_per_1000_images", "%.3f");
        fmt_stat(a, sizeof a, sum, "first_epoch_s", "%.2f");
        fmt_stat(b, sizeof b, sum, "steady_epoch_s", "%.2f");
        fmt_stat(c, sizeof c, sum, "val_s", "%.2f");
        fmt_stat(d, sizeof d, sum, "train_images_per_s", "%.0f");
        fmt_stat(e, sizeof e, sum, "accuracy", "%.4f");
        const char *metric = json_string_value(json_object_get(sum, "metric"));
        if (metric && strcmp(metric, "mean_roc_auc") == 0) { size_t l = strlen(e); snprintf(e + l, sizeof e - l, " AUC"); }
        fprintf(f, "%-14s %-16s %-9s %-22s %-22s %-18s %-20s %-10.1f %-16s %s\n",
                json_string_value(json_object_get(run, "workload")),
                json_string_value(json_object_get(run, "implementation")),
                json_string_value(json_object_get(run, "backend")), a, b, c, d,
                json_object_get(run, "mode") ? stat_median(sum, "inference_gflops") : stat_median(sum, "train_gflops"), e, g);
    }
}

/* The epoch time a comparison uses: steady median when there are several epochs, else the first. */
static double cmp_time(const json_t *run, const char **which) {
    const json_t *sum = json_object_get(run, "summary");
    if (json_object_get(run, "mode")) {   /* inference workload: seconds per 1,000 images */
        *which = "inference";
        return stat_median(sum, "inference_s_per_1000_images");
    }
    double t = stat_median(sum, "steady_epoch_s");
    *which = "steady";
    if (!(t > 0)) { t = stat_median(sum, "first_epoch_s"); *which = "first"; }
    return t;
}

int sd_results_run_ok(const json_t *run) {
    const char *st = json_string_value(json_object_get(run, "status"));
    return st && strcmp(st, "ok") == 0;
}

void sd_results_print_overhead(FILE *f, const json_t *doc) {
    const json_t *runs = json_object_get(doc, "runs");
    size_t i, j;
    json_t *fw, *nat;
    int header = 0;
    json_array_foreach(runs, i, fw) {
        const char *impl = json_string_value(json_object_get(fw, "implementation"));
        if (!impl || strcmp(impl, "native") == 0 || !sd_results_run_ok(fw)) continue;
        const char *wl = json_string_value(json_object_get(fw, "workload"));
        if (!wl) continue;   /* a run without a workload has no native run to stand beside */
        const char *fwhich, *nwhich;
        double tf = cmp_time(fw, &fwhich), tfv = stat_median(json_object_get(fw, "summary"), "val_s");
        double af = stat_median(json_object_get(fw, "summary"), "accuracy");
        json_array_foreach(runs, j, nat) {
            const char *ni = json_string_value(json_object_get(nat, "implementation"));
            const char *nw = json_string_value(json_object_get(nat, "workload"));
            if (!ni || strcmp(ni, "native") || !nw || strcmp(nw, wl) || !sd_results_run_ok(nat)) continue;
            double tn = cmp_time(nat, &nwhich), tnv = stat_median(json_object_get(nat, "summary"), "val_s");
            double an = stat_median(json_object_get(nat, "summary"), "accuracy");
            if (!header) {
                fprintf(f, "\n%-14s %-22s %-12s %-12s %-10s %-10s %-10s %-9s %-9s %-6s %-9s %s\n", "workload", "native vs",
                        "native s", "framework s", "overhead", "val nat s", "val fw s", "acc nat", "acc fw", "epoch",
                        "params", "equivalence (max rel. diff)");
                header = 1;
            }
            char vs[64], ratio[32];
            snprintf(vs, sizeof vs, "%s/%s", json_string_value(json_object_get(nat, "backend")), impl);
            snprintf(ratio, sizeof ratio, "%.2fx", tf / tn);
            const json_t *eq = json_object_get(fw, "equivalence");
            const char *eqs = json_string_value(json_object_get(eq, "status"));
            char eqbuf[64];
            if (json_object_get(eq, "max_rel_diff"))
                snprintf(eqbuf, sizeof eqbuf, "%s (%.1e)", eqs, json_number_value(json_object_get(eq, "max_rel_diff")));
            else
                snprintf(eqbuf, sizeof eqbuf, "%s", eqs ? eqs : "not checked");
            json_int_t pf = json_integer_value(json_object_get(json_object_get(fw, "model"), "parameters"));
            json_int_t pn = json_integer_value(json_object_get(json_object_get(nat, "model"), "parameters"));
            fprintf(f, "%-14s %-22s %-12.3f %-12.3f %-10s %-10.3f %-10.3f %-9.4f %-9.4f %-6s %-9s %s\n", wl, vs, tn, tf, ratio,
                    tnv, tfv, an, af, strcmp(fwhich, nwhich) ? "mixed" : fwhich, pf == pn ? "equal" : "DIFFER", eqbuf);
        }
    }
}

/* ---- read with positions (jv): the files of others, checked before jansson reads them ---------------------- */
const char *const sd_published_time_keys[] = {"steady_epoch_s", "first_epoch_s", "train_total_s", "val_s",
                                              "train_s_per_1000_images", "infer_s_per_1000",
                                              "inference_s_per_1000_images", NULL};

static int safe_member(const jv_doc *d, const jv *r, const char *key) {
    const char *s = NULL;
    SD_TRY(jv_get_str(d, r, key, "run", 1, &s));
    if (sd_safe_name(s, key) < 0) return jv_err(d, jv_get(r, key), "%s", sd_errmsg());
    return 0;
}

/* v is the value of field (its bound) shown as label in the message. */
static int check_value(const jv_doc *d, const jv *v, const char *field, const char *label) {
    double hi = strcmp(field, "accuracy") == 0 ? 1 : SD_RESULTS_MAX_VALUE;
    if (v->type == JV_NULL) return 0;
    if (v->type != JV_NUMBER) return jv_err(d, v, "%s: expected a number, got %s", label, jv_type_name(v->type));
    if (!(v->number >= 0 && v->number <= hi))
        return jv_err(d, v, "%s: value %g out of range [0, %g]", label, v->number, hi);
    return 0;
}

static int is_one_of(const char *key, const char *const *keys) {
    for (; *keys; keys++)
        if (strcmp(key, *keys) == 0) return 1;
    return 0;
}

/* Every statistic of a run's summary ({median, min, max, mean, n} or a bare number) and every measured
 * value of its epochs within its bounds (other members, such as a "what" note, are text). */
static int check_numbers(const jv_doc *d, const jv *r) {
    static const char *const stat_keys[] = {"median", "min", "max", "mean", "n", NULL};
    static const char *const epoch_keys[] = {"train_s", "val_s", "loss", "val_loss", "accuracy", "images_per_s",
                                             "train_images", "test_images", NULL};
    const jv *sum = jv_get(r, "summary");
    if (sum && sum->type == JV_OBJECT)
        for (size_t i = 0; i < sum->count; i++) {
            const jv *s = sum->items[i];
            char label[160];
            snprintf(label, sizeof label, "summary.%.60s", s->key);
            if (s->type == JV_NUMBER) SD_TRY(check_value(d, s, s->key, label));
            if (s->type != JV_OBJECT) continue;
            for (size_t k = 0; k < s->count; k++) {
                if (!is_one_of(s->items[k]->key, stat_keys)) continue;
                snprintf(label, sizeof label, "summary.%.60s.%.60s", s->key, s->items[k]->key);
                /* n counts the repeats: bounded as a count, not as the statistic */
                SD_TRY(check_value(d, s->items[k], strcmp(s->items[k]->key, "n") ? s->key : "n", label));
            }
        }
    const jv *samples = jv_get(r, "samples");
    for (size_t i = 0; samples && samples->type == JV_ARRAY && i < samples->count; i++) {
        const jv *ep = jv_get(samples->items[i], "epochs");
        for (size_t e = 0; ep && ep->type == JV_ARRAY && e < ep->count; e++) {
            const jv *o = ep->items[e];
            for (size_t k = 0; o->type == JV_OBJECT && k < o->count; k++)
                if (is_one_of(o->items[k]->key, epoch_keys)) {
                    char label[96];
                    snprintf(label, sizeof label, "epoch %.60s", o->items[k]->key);
                    SD_TRY(check_value(d, o->items[k], o->items[k]->key, label));
                }
        }
    }
    return 0;
}

int sd_results_check(const jv_doc *d) {
    const jv *root = jv_root(d);
    SD_TRY(jv_expect(d, root, JV_OBJECT, "results"));
    const jv *runs = jv_get(root, "runs");
    if (!runs) return 0;
    SD_TRY(jv_expect(d, runs, JV_ARRAY, "runs"));
    for (size_t i = 0; i < runs->count; i++) {
        const jv *r = runs->items[i];
        SD_TRY(jv_expect(d, r, JV_OBJECT, "a run"));
        const jv *sum = jv_get(r, "summary");
        if (sum && sum->type != JV_NULL) SD_TRY(jv_expect(d, sum, JV_OBJECT, "summary"));
        SD_TRY(check_numbers(d, r));
    }
    return 0;
}

int sd_results_load_file(const char *path, json_t **out) { return sd_json_load(path, sd_results_check, out); }

/* The document's shape: schema, runs with names and a summary holding at least one time metric. */
int sd_published_check(const jv_doc *d) {
    const jv *root = jv_root(d);
    SD_TRY(jv_expect(d, root, JV_OBJECT, "published results"));
    const char *schema = NULL;
    SD_TRY(jv_get_str(d, root, "schema", "published results", 1, &schema));
    if (strcmp(schema, SD_RESULTS_SCHEMA) != 0)
        return jv_err(d, jv_get(root, "schema"), "expected schema \"%s\" (got \"%s\")", SD_RESULTS_SCHEMA, schema);
    const jv *runs = jv_get(root, "runs");
    if (!runs) return jv_err(d, root, "missing key 'runs' in published results");
    SD_TRY(jv_expect(d, runs, JV_ARRAY, "runs"));
    if (runs->count == 0) return jv_err(d, runs, "no runs: a published file with nothing to verify");
    if (runs->count > SD_PUBLISHED_MAX_RUNS)
        return jv_err(d, runs, "too many runs (%zu; at most %d)", runs->count, SD_PUBLISHED_MAX_RUNS);
    for (size_t i = 0; i < runs->count; i++) {
        const jv *r = runs->items[i];
        SD_TRY(jv_expect(d, r, JV_OBJECT, "a run"));
        SD_TRY(safe_member(d, r, "workload"));
        SD_TRY(safe_member(d, r, "implementation"));
        SD_TRY(safe_member(d, r, "backend"));
        const char *status = NULL;
        SD_TRY(jv_get_str(d, r, "status", "run", 0, &status));
        const jv *sum = jv_get(r, "summary");
        if (sd_status_unmeasured(status)) continue;   /* reported as such, nothing to check */
        if (!sum) return jv_err(d, r, "missing key 'summary' in run");
        SD_TRY(jv_expect(d, sum, JV_OBJECT, "summary"));
        int has = 0;
        for (int k = 0; sd_published_time_keys[k]; k++) {
            const jv *m = jv_get(sum, sd_published_time_keys[k]);
            if (!m || m->type == JV_NULL) continue;
            double v;
            SD_TRY(jv_expect(d, m, JV_OBJECT, sd_published_time_keys[k]));
            SD_TRY(jv_get_num(d, m, "median", sd_published_time_keys[k], 1, 0, 1e12, &v));
            has = 1;
        }
        /* bench's own run without a time figure is shown n/a; a publication's cell must have one */
        if (!has && !status)
            return jv_err(d, sum, "summary has no time metric (expected one of: steady_epoch_s, first_epoch_s, "
                          "train_total_s, val_s, train_s_per_1000_images, infer_s_per_1000, "
                          "inference_s_per_1000_images)");
    }
    return sd_results_check(d);
}
