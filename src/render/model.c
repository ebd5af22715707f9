/* model — readers of the machine-made inputs of the report (results through the results module's view of a
 * run, scores via jansson), tolerant of absent sections: absence becomes NAN / NULL and is shown as missing,
 * never as zero. */
#include "render/model.h"
#include "bench/results.h"
#include "core/err.h"
#include "core/jsonfile.h"
#include "core/util.h"
#include "score/score_in.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_RUNS 4096
#define MAX_FILES 256

int render_model_new(render_model **out) {
    render_model *m = calloc(1, sizeof *m);
    if (!m || render_arena_new(&m->arena) < 0) { free(m); return sd_err(SD_ENOMEM, "out of memory"); }
    m->files = render_alloc(m->arena, MAX_FILES * sizeof *m->files);
    m->runs = render_alloc(m->arena, MAX_RUNS * sizeof *m->runs);
    if (!m->files || !m->runs) { render_model_free(m); return sd_err(SD_ENOMEM, "out of memory"); }
    *out = m;
    return 0;
}

void render_model_free(render_model *m) {
    if (!m) return;
    render_arena_free(m->arena);
    free(m);
}

/* ---- small jansson helpers ------------------------------------------------------------------------ */
static double num(const json_t *v) { return json_is_number(v) ? json_number_value(v) : NAN; }

/* Text of a scalar (strings as they are, numbers and booleans printed), else NULL. */
static const char *text(render_arena *a, const json_t *v) {
    if (json_is_string(v)) return render_strdup(a, json_string_value(v));
    if (json_is_integer(v)) return render_printf(a, "%lld", (long long)json_integer_value(v));
    if (json_is_real(v)) return render_printf(a, "%g", json_real_value(v));
    if (json_is_boolean(v)) return json_is_true(v) ? "yes" : "no";
    return NULL;
}

static rm_stat rm_stat_of(sd_stat s) { return (rm_stat){s.median, s.min, s.max}; }
static rm_stat stat_of(const json_t *v) { return rm_stat_of(sd_stat_read(v)); }

/* Read once and bounded (a pipe works; a huge file is refused from its size). */
static int load(const char *path, json_t **root) { return sd_json_load(path, NULL, root); }

static int check_schema(const char *path, json_t *root, const char *want) {
    const char *s = json_string_value(json_object_get(root, "schema"));
    size_t n = strlen(want);
    if (!s) return sd_err(SD_EINPUT, "%s: no \"schema\" (expected \"%s1\")", path, want);
    if (strncmp(s, want, n) != 0) return sd_err(SD_EINPUT, "%s: schema \"%s\" is not %s*", path, s, want);
    if (strcmp(s + n, "1") != 0) return sd_err(SD_EINPUT, "%s: schema version \"%s\" not supported (this build reads %s1)", path, s, want);
    return 0;
}

static const char *first_str(render_arena *a, const json_t *o, const char *const *keys) {
    for (; *keys; keys++) {
        const char *t = text(a, json_object_get(o, *keys));
        if (t) return t;
    }
    return NULL;
}

/* Append the scalar members of obj as key/value pairs; nested objects one level down as "parent.key"
 * ("gpu.count"); with parent_prefix = 0 the members of "libraries" keep their own key ("cairo"). */
static void add_kv(render_arena *a, const json_t *obj, rm_kv *out, int *n, int max, int parent_prefix) {
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        if (*n >= max) return;
        if (json_is_object(v)) {
            const char *k2;
            json_t *v2;
            json_object_foreach(v, k2, v2) {
                const char *t = text(a, v2);
                if (!t || *n >= max) continue;
                int bare = !parent_prefix && strcmp(k, "libraries") == 0;   /* "cairo", not "libraries.cairo" */
                out[(*n)++] = (rm_kv){bare ? render_strdup(a, k2) : render_printf(a, "%s.%s", k, k2), t};
            }
            continue;
        }
        const char *t = text(a, v);
        size_t kl = strlen(k);
        if (json_is_integer(v) && kl > 6 && strcmp(k + kl - 6, "_bytes") == 0)   /* memory_bytes -> memory, GiB */
            out[(*n)++] = (rm_kv){render_printf(a, "%.*s", (int)(kl - 6), k),
                                  render_printf(a, "%.1f GiB", (double)json_integer_value(v) / (1024.0 * 1024 * 1024))};
        else if (t)
            out[(*n)++] = (rm_kv){render_strdup(a, k), t};
    }
}

static size_t kv_room(const json_t *obj) {
    size_t n = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) n += json_is_object(v) ? json_object_size(v) : 1;
    return n;
}

static int read_file_info(render_model *m, const char *path, json_t *root, const char *kind, rm_file **out) {
    if (m->nfiles >= MAX_FILES) return sd_err(SD_ELIMIT, "more than %d input files", MAX_FILES);
    rm_file *f = &m->files[m->nfiles++];
    render_arena *a = m->arena;
    static const char *const date_keys[] = {"as_of", "date", "created", "timestamp", "generated", NULL};
    f->path = render_strdup(a, path);
    f->kind = kind;
    f->schema = text(a, json_object_get(root, "schema"));
    f->as_of = first_str(a, root, date_keys);
    sd_results_head h;   /* every showdown document opens the same way: the tool that made it, the machine */
    sd_results_head_of(root, &h);
    if (json_is_object(h.tool)) {
        f->version = h.version ? render_strdup(a, h.version) : NULL;
        f->commit = h.commit ? render_strdup(a, h.commit) : NULL;
        f->dirty = h.dirty;
        if (!f->as_of) f->as_of = first_str(a, h.tool, date_keys);
    }
    const json_t *env = h.environment;
    if (json_is_object(env)) {
        size_t room = kv_room(env) + 1;
        f->env = render_alloc(a, room * sizeof *f->env);
        if (!f->env) return sd_err(SD_ENOMEM, "out of memory");
        add_kv(a, env, f->env, &f->nenv, (int)room, 0);
        if (!f->as_of) f->as_of = first_str(a, env, date_keys);
    }
    *out = f;
    return 0;
}

/* ---- results ------------------------------------------------------------------------------------------ */
/* samples x epochs read per run (each a median over samples): a results file cannot make this quadratic. */
#define MAX_EPOCH_CELLS 1000000

static int read_epochs(render_arena *a, rm_run *r, const sd_run_view *v, const char *path) {
    size_t nsz = sd_run_nsamples(v), maxz = 0;
    for (size_t s = 0; s < nsz; s++)
        if (sd_run_nepochs(v, s) > maxz) maxz = sd_run_nepochs(v, s);
    if (maxz == 0 || nsz == 0) { r->nrepeats = (int)(nsz < 1000000 ? nsz : 1000000); return 0; }
    if (nsz > MAX_EPOCH_CELLS / maxz)
        return sd_err(SD_ELIMIT, "%s: a run with %zu samples of up to %zu epochs is past the bound of %d values",
                      path, nsz, maxz, MAX_EPOCH_CELLS);
    int ns = (int)nsz, maxe = (int)maxz;
    r->nrepeats = ns;
    r->epochs = render_alloc(a, (size_t)maxe * sizeof *r->epochs);
    double *tmp = render_alloc(a, 5 * (size_t)ns * sizeof *tmp);
    if (!r->epochs || !tmp) return sd_err(SD_ENOMEM, "out of memory");
    r->nepochs = maxe;
    for (int e = 0; e < maxe; e++) {
        rm_epoch *o = &r->epochs[e];
        double *col[] = {tmp, tmp + ns, tmp + 2 * ns, tmp + 3 * ns, tmp + 4 * ns};
        for (int s = 0; s < ns; s++) {
            sd_epoch_view ev;
            sd_epoch_view_of(v, (size_t)s, (size_t)e, &ev);
            if (s == 0) o->epoch = (int)ev.epoch;
            col[0][s] = ev.train_s; col[1][s] = ev.val_s; col[2][s] = ev.loss;
            col[3][s] = ev.accuracy; col[4][s] = ev.images_per_s;
        }
        o->train_s = sd_median_inplace(col[0], ns);
        o->val_s = sd_median_inplace(col[1], ns);
        o->loss = sd_median_inplace(col[2], ns);
        o->accuracy = sd_median_inplace(col[3], ns);
        o->images_per_s = sd_median_inplace(col[4], ns);
    }
    return 0;
}

static int add_results(render_model *m, const char *path, json_t *root);

int render_model_add_results(render_model *m, const char *path) {
    json_t *root;
    SD_TRY(sd_results_load_file(path, &root));   /* what verify rejects, report rejects too */
    int rc = add_results(m, path, root);
    json_decref(root);
    return rc;
}

int render_model_add_results_doc(render_model *m, const void *doc, const char *name) {
    if (!json_is_object((const json_t *)doc)) return sd_err(SD_EINPUT, "%s: not a results document", name);
    return add_results(m, name, (json_t *)doc);
}

static int add_results(render_model *m, const char *path, json_t *root) {
    int rc = check_schema(path, root, "showdown-results/");
    rm_file *f = NULL;
    sd_results_head h;
    sd_results_head_of(root, &h);
    int published = h.published;
    if (rc == 0) rc = read_file_info(m, path, root, published ? "published" : "results", &f);
    if (rc == 0 && published) {
        f->source = h.pub_source ? render_strdup(m->arena, h.pub_source) : NULL;
        if (!f->as_of && h.pub_date) f->as_of = render_strdup(m->arena, h.pub_date);
    }
    if (rc == 0) rc = sd_results_check_shape(root, path);
    render_arena *a = m->arena;
    for (size_t i = 0; rc == 0 && i < sd_results_count(root); i++) {
        if (m->nruns >= MAX_RUNS) { rc = sd_err(SD_ELIMIT, "%s: more than %d runs in all", path, MAX_RUNS); break; }
        sd_run_view v;
        sd_run_view_of(sd_results_run(root, i), &v);
        rm_run *r = &m->runs[m->nruns];
        memset(r, 0, sizeof *r);
        r->file = f;
        r->published = published;
        r->workload = text(a, v.workload);
        r->implementation = text(a, v.implementation);
        r->backend = text(a, v.backend);
        r->device = text(a, v.device);
        r->data = text(a, v.data);
        r->data_kind = text(a, v.data_kind);
        r->data_source = text(a, v.data_source);
        r->epoch_examples = v.epoch_examples;
        if (!r->workload) { rc = sd_err(SD_EINPUT, "%s: runs[%zu] has no \"workload\"", path, i); break; }
        if (!r->implementation) r->implementation = "native";
        r->status = text(a, v.status);
        const char *eqs = v.equivalence_status;
        if (eqs && !isnan(v.equivalence_max_rel_diff))
            r->equivalence = render_printf(a, "%s (%.1e)", eqs, v.equivalence_max_rel_diff);
        else if (eqs)
            r->equivalence = render_strdup(a, eqs);
        if (sd_run_unmeasured(&v)) {
            r->failed = 1;
            r->error = text(a, v.error);
        }
        r->gpus = v.gpus;
        r->max_batches = v.max_batches;
        r->batch = v.batch;
        r->precision = v.precision ? render_strdup(a, v.precision) : NULL;
        if (v.settings) {
            size_t room = kv_room(v.settings) + 1;
            r->settings = render_alloc(a, room * sizeof *r->settings);
            if (!r->settings) { rc = sd_err(SD_ENOMEM, "out of memory"); break; }
            add_kv(a, v.settings, r->settings, &r->nsettings, (int)room, 1);
        }
        r->first_epoch_s = rm_stat_of(v.first_epoch_s);
        r->steady_epoch_s = rm_stat_of(v.steady_epoch_s);
        r->val_s = rm_stat_of(v.val_s);
        r->accuracy = rm_stat_of(v.accuracy);
        r->images_per_s = rm_stat_of(v.train_images_per_s);
        r->total_s = rm_stat_of(v.total_s);
        if (isnan(r->total_s.median)) r->total_s = rm_stat_of(v.train_total_s);
        if (isnan(r->total_s.median)) r->total_s = rm_stat_of(v.train_s);
        r->total_unit = "s";
        if (published && isnan(r->total_s.median)) {   /* a publication may give only one of these */
            r->total_s = rm_stat_of(v.infer_s_per_1000);
            r->total_unit = "s/1,000 images";
            if (isnan(r->total_s.median)) { r->total_s = r->steady_epoch_s; r->total_unit = "s/epoch"; }
        }
        const char *fwname = v.framework_name;
        if (fwname) {   /* "Caffe2" rather than "caffe2"; "Keras (CNTK)" for keras-cntk */
            const char *dash = strchr(r->implementation, '-');
            size_t fl = strlen(fwname);
            if (dash && (size_t)(dash - r->implementation) == fl && strncasecmp(r->implementation, fwname, fl) == 0) {
                static const char *const nice[][2] = {{"tensorflow", "TensorFlow"}, {"cntk", "CNTK"}, {"theano", "Theano"},
                                                      {"mxnet", "MXNet"}, {"jax", "JAX"}, {"torch", "PyTorch"}};
                const char *be = dash + 1;
                for (size_t k = 0; k < sizeof nice / sizeof *nice; k++)
                    if (strcmp(be, nice[k][0]) == 0) be = nice[k][1];
                r->implementation = render_printf(a, "%s (%s)", fwname, be);
            } else {
                r->implementation = render_strdup(a, fwname);
            }
        }
        r->gflops = v.gflops;
        if (isnan(r->gflops)) r->gflops = v.train_gflops.median;
        r->parameters = v.parameters;
        sd_stat inf = v.inference_s_per_1000;   /* seconds per 1,000 images -> images per second */
        r->infer_images_per_s = (rm_stat){inf.median > 0 ? 1000 / inf.median : NAN, inf.max > 0 ? 1000 / inf.max : NAN,
                                          inf.min > 0 ? 1000 / inf.min : NAN};
        r->infer_gflops = v.inference_gflops.median;
        r->peak_bytes = v.peak_bytes;
        r->peak_rss_bytes = v.peak_rss_bytes;
        const char *tkey = sd_run_time_key(&v);   /* verify's training cell */
        r->train_spread_pct = tkey ? sd_run_spread_pct(&v, tkey) : NAN;
        r->infer_spread_pct = sd_run_spread_pct(&v, "inference_s_per_1000_images");
        r->host_speed = v.host_speed;
        r->setting = render_strdup(a, v.setting);
        r->spec = render_strdup(a, v.spec);
        rc = read_epochs(a, r, &v, path);
        /* derive what the summary left out from the epochs */
        if (rc == 0 && r->nepochs > 0) {
            if (isnan(r->first_epoch_s.median)) r->first_epoch_s = (rm_stat){r->epochs[0].train_s, NAN, NAN};
            if (isnan(r->accuracy.median)) r->accuracy = (rm_stat){r->epochs[r->nepochs - 1].accuracy, NAN, NAN};
            if (isnan(r->total_s.median)) {
                double t = 0;
                for (int e = 0; e < r->nepochs; e++) t += r->epochs[e].train_s;
                r->total_s = (rm_stat){t, NAN, NAN};   /* NAN if any epoch lacks a time */
            }
        }
        if (rc == 0) m->nruns++;
    }
    return rc;
}

/* ---- history ---------------------------------------------------------------------------------------------- */
#define MAX_HIST 8192

/* Days since 1970-01-01 of "YYYY-MM-DD[THH:MM[:SS]]" (proleptic Gregorian), NAN if unreadable. */
static double day_of(const char *s) {
    int y, mo, d, h = 0, mi = 0, se = 0;
    if (!s || sscanf(s, "%4d-%2d-%2d", &y, &mo, &d) != 3 || mo < 1 || mo > 12 || d < 1 || d > 31) return NAN;
    if (strlen(s) >= 16 && (s[10] == 'T' || s[10] == ' ')) sscanf(s + 11, "%2d:%2d:%2d", &h, &mi, &se);
    y -= mo <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400, doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return (double)(era * 146097 + doe - 719468) + (h * 3600 + mi * 60 + se) / 86400.0;
}

int render_model_add_history(render_model *m, const void *doc) {
    const json_t *root = doc;
    render_arena *a = m->arena;
    if (!m->hist && !(m->hist = render_alloc(a, MAX_HIST * sizeof *m->hist))) return sd_err(SD_ENOMEM, "out of memory");
    sd_results_head head;
    sd_results_head_of(root, &head);
    const char *date = head.created ? render_strdup(a, head.created) : NULL;
    for (size_t i = 0; i < sd_results_count(root) && m->nhist < MAX_HIST; i++) {
        sd_run_view v;
        sd_run_view_of(sd_results_run(root, i), &v);
        if (sd_run_unmeasured(&v)) continue;
        rm_hist *h = &m->hist[m->nhist++];
        h->date = date;
        h->day = day_of(date);
        h->workload = text(a, v.workload);
        h->implementation = text(a, v.implementation);
        h->backend = text(a, v.backend);
        h->steady_epoch_s = v.steady_epoch_s.median;
        h->accuracy = v.accuracy.median;
        if (!h->workload) m->nhist--;
        else if (!h->implementation) h->implementation = "native";
    }
    m->nhist_runs++;
    return 0;
}

/* ---- scores (read by score/score_in.c, beside its writer) ----------------------------------------------- */
/* Ranked as the scorer ranks: on the lower bound when there are ranges (missing data never lifts a
 * framework), else on the overall score. */
static double rank_key(const rm_framework *x) { return isnan(x->overall_lo) ? x->overall : x->overall_lo; }

static int cmp_fw(const void *a, const void *b) {
    const rm_framework *x = a, *y = b;
    double kx = rank_key(x), ky = rank_key(y);
    if (isnan(kx) != isnan(ky)) return isnan(kx) ? 1 : -1;
    if (!isnan(kx) && kx != ky) return kx > ky ? -1 : 1;
    if (!isnan(x->overall_hi) && !isnan(y->overall_hi) && x->overall_hi != y->overall_hi)
        return x->overall_hi > y->overall_hi ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Copy n values (NAN-filled past what the file gives) into the arena. */
static double *copy_d(render_arena *a, const double *v, int n) {
    double *d = render_alloc(a, SCORE_IN_MAX_IDS * sizeof *d);
    if (d) memcpy(d, v, (size_t)n * sizeof *d);
    for (int i = n; d && i < SCORE_IN_MAX_IDS; i++) d[i] = NAN;
    return d;
}

static const char *dup_or_null(render_arena *a, const char *s) { return s ? render_strdup(a, s) : NULL; }

/* One framework of the scores file in the report's terms. */
static int copy_fw(render_arena *a, const score_in *si, const score_in_fw *x, rm_framework *w) {
    int nc = si->ncat, nk = si->ncrit;
    w->name = render_strdup(a, x->name);
    w->overall = x->overall;
    w->tier = dup_or_null(a, x->tier);
    w->archived = x->archived;
    if (x->status && strcmp(x->status, "unknown") == 0) w->status = "activity not measured";
    else if (x->status && strcmp(x->status, "active") != 0) w->status = render_strdup(a, x->status);
    if (w->archived && !w->status) w->status = "archived";
    w->cat = copy_d(a, x->cat, nc);
    w->cat_lo = copy_d(a, x->cat_lo, nc);
    w->cat_hi = copy_d(a, x->cat_hi, nc);
    w->crit = copy_d(a, x->crit, nk);
    w->crit_raw = copy_d(a, x->crit_raw, nk);
    w->crit_lo = copy_d(a, x->crit_lo, nk);
    w->crit_hi = copy_d(a, x->crit_hi, nk);
    w->cat_insufficient = render_alloc(a, SCORE_IN_MAX_IDS * sizeof *w->cat_insufficient);
    w->crit_why = render_alloc(a, SCORE_IN_MAX_IDS * sizeof *w->crit_why);
    if (!w->cat || !w->cat_lo || !w->cat_hi || !w->crit || !w->crit_raw || !w->crit_lo || !w->crit_hi ||
        !w->cat_insufficient || !w->crit_why)
        return sd_err(SD_ENOMEM, "out of memory");
    for (int i = 0; i < SCORE_IN_MAX_IDS; i++) {
        w->cat_insufficient[i] = i < nc ? x->cat_insufficient[i] : 0;
        w->crit_why[i] = i < nk ? dup_or_null(a, x->crit_why[i]) : NULL;
    }
    w->overall_lo = x->overall_lo;
    w->overall_hi = x->overall_hi;
    w->cov_measured = x->cov_measured;
    w->cov_hand = x->cov_hand;
    w->cov_missing = x->cov_missing;
    if (x->status_typed && x->status && strcmp(x->status_typed, x->status) != 0)
        w->status_typed = render_strdup(a, x->status_typed);
    return 0;
}

int render_model_set_scores(render_model *m, const char *path) {
    if (m->scores) return sd_err(SD_EUSAGE, "only one scores file (got a second: %s)", path);
    score_in si;
    int rc = score_in_load(&si, path);
    render_arena *a = m->arena;
    rm_file *f = NULL;
    if (rc == 0) rc = read_file_info(m, path, si.doc, "scores", &f);
    rm_scores *s = rc ? NULL : render_alloc(a, sizeof *s);
    const char **ids[5] = {NULL};
    for (int k = 0; s && k < 5; k++) ids[k] = render_alloc(a, SCORE_IN_MAX_IDS * sizeof *ids[k]);
    int *crit_cat = s ? render_alloc(a, SCORE_IN_MAX_IDS * sizeof *crit_cat) : NULL;
    if (rc == 0 && (!s || !ids[0] || !ids[1] || !ids[2] || !ids[3] || !ids[4] || !crit_cat))
        rc = sd_err(SD_ENOMEM, "out of memory");
    if (rc) { score_in_free(&si); return rc; }
    memset(s, 0, sizeof *s);
    s->file = f;
    s->cat_id = ids[0]; s->cat_name = ids[1]; s->crit_id = ids[2]; s->crit_name = ids[3]; s->crit_about = ids[4];
    s->crit_cat = crit_cat;
    s->ncat = si.ncat;
    s->ncrit = si.ncrit;
    for (int i = 0; i < SCORE_IN_MAX_IDS; i++) {
        s->cat_id[i] = i < si.ncat ? render_strdup(a, si.cat_id[i]) : NULL;
        s->cat_name[i] = i < si.ncat ? render_strdup(a, si.cat_name[i]) : NULL;
        s->crit_id[i] = i < si.ncrit ? render_strdup(a, si.crit_id[i]) : NULL;
        s->crit_name[i] = i < si.ncrit ? render_strdup(a, si.crit_name[i]) : NULL;
        s->crit_about[i] = i < si.ncrit ? dup_or_null(a, si.crit_about[i]) : NULL;
        s->crit_cat[i] = si.crit_cat[i];
    }
    if (si.mode || si.snapshot_date)
        f->detail = render_printf(a, "%s%s%s", si.mode ? si.mode : "",
                                  si.mode && si.snapshot_date ? ", snapshot of " : si.snapshot_date ? "snapshot of " : "",
                                  si.snapshot_date ? si.snapshot_date : "");
    s->fw = render_alloc(a, ((size_t)si.nfw + 1) * sizeof *s->fw);
    if (!s->fw) rc = sd_err(SD_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < si.nfw; i++) {
        rm_framework *w = &s->fw[s->nfw++];
        memset(w, 0, sizeof *w);
        rc = copy_fw(a, &si, &si.fw[i], w);
        if (!isnan(w->overall_lo)) s->has_ranges = 1;
    }
    if (rc == 0) {
        qsort(s->fw, (size_t)s->nfw, sizeof *s->fw, cmp_fw);
        m->scores = s;
    }
    score_in_free(&si);
    return rc;
}

/* ---- regressions (nightly) ------------------------------------------------------------------------------ */
#define MAX_REGRESSIONS 4096

int render_model_set_regressions(render_model *m, const char *path) {
    if (m->have_regressions) return sd_err(SD_EUSAGE, "%s: only one regressions file", path);
    json_t *root;
    SD_TRY(load(path, &root));
    int rc = check_schema(path, root, "showdown-regressions/");
    json_t *regs = json_object_get(root, "regressions");
    if (rc == 0 && !json_is_array(regs)) rc = sd_err(SD_EINPUT, "%s: no \"regressions\" list", path);
    if (rc == 0 && json_array_size(regs) > MAX_REGRESSIONS)
        rc = sd_err(SD_ELIMIT, "%s: more than %d regressions", path, MAX_REGRESSIONS);
    if (rc == 0) {
        size_t n = json_array_size(regs);
        m->regressions = render_alloc(m->arena, (n + 1) * sizeof *m->regressions);
        if (!m->regressions) rc = sd_err(SD_ENOMEM, "out of memory");
        for (size_t i = 0; rc == 0 && i < n; i++) {
            const json_t *g = json_array_get(regs, i);
            rm_regression *r = &m->regressions[m->nregressions];
            r->workload = text(m->arena, json_object_get(g, "workload"));
            r->implementation = text(m->arena, json_object_get(g, "implementation"));
            r->backend = text(m->arena, json_object_get(g, "backend"));
            r->metric = text(m->arena, json_object_get(g, "metric"));
            r->median = num(json_object_get(g, "median"));
            r->previous_median = num(json_object_get(g, "previous_median"));
            r->previous_max = num(json_object_get(g, "previous_max"));
            r->slower_pct = num(json_object_get(g, "slower_pct"));
            r->threshold_pct = num(json_object_get(g, "threshold_pct"));
            if (!r->workload || isnan(r->median) || isnan(r->previous_median))
                rc = sd_err(SD_EINPUT, "%s: regressions[%zu] needs workload, median and previous_median", path, i);
            else m->nregressions++;
        }
        m->regression_run = (long long)json_integer_value(json_object_get(root, "run"));
        m->regression_previous_run = (long long)json_integer_value(json_object_get(root, "previous_run"));
        m->have_regressions = rc == 0;
    }
    json_decref(root);
    return rc;
}

/* ---- verification ----------------------------------------------------------------------------------------- */
#define MAX_VERIFY 32

int render_model_add_verify(render_model *m, const char *path) {
    json_t *root;
    SD_TRY(load(path, &root));
    render_arena *a = m->arena;
    rm_file *f = NULL;
    int rc = check_schema(path, root, "showdown-verify/");
    if (rc == 0 && !m->verify) {
        m->verify = render_alloc(a, MAX_VERIFY * sizeof *m->verify);
        if (!m->verify) rc = sd_err(SD_ENOMEM, "out of memory");
    }
    if (rc == 0 && m->nverify >= MAX_VERIFY) rc = sd_err(SD_ELIMIT, "more than %d verification files", MAX_VERIFY);
    if (rc == 0) rc = read_file_info(m, path, root, "verification", &f);
    json_t *cells = json_object_get(root, "cells");
    if (rc == 0 && !json_is_array(cells)) rc = sd_err(SD_EINPUT, "%s: no \"cells\" list", path);
    if (rc == 0) {
        rm_verify *v = &m->verify[m->nverify];
        v->file = f;
        v->title = text(a, json_object_get(root, "title"));
        v->source = text(a, json_object_get(root, "source"));
        v->measured_from = text(a, json_object_get(root, "measured_from"));
        v->tolerance_pct = num(json_object_get(root, "tolerance_pct"));
        if (!f->as_of) f->as_of = text(a, json_object_get(root, "created"));
        v->cells = render_alloc(a, (json_array_size(cells) + 1) * sizeof *v->cells);
        if (!v->cells) rc = sd_err(SD_ENOMEM, "out of memory");
        for (size_t i = 0; rc == 0 && i < json_array_size(cells); i++) {
            json_t *c = json_array_get(cells, i);
            rm_verdict *d = &v->cells[v->ncells++];
            d->workload = text(a, json_object_get(c, "workload"));
            d->implementation = text(a, json_object_get(c, "implementation"));
            d->backend = text(a, json_object_get(c, "backend"));
            d->device = text(a, json_object_get(c, "device_published"));
            d->metric = text(a, json_object_get(c, "metric"));
            d->verdict = text(a, json_object_get(c, "verdict"));
            d->why = text(a, json_object_get(c, "why"));
            d->published = num(json_object_get(c, "published"));
            const json_t *pc = json_object_get(c, "published_check");
            if (json_array_size(pc)) d->published_check = text(a, json_array_get(pc, 0));
            rm_stat ms = stat_of(json_object_get(c, "measured"));
            d->measured = ms.median;
            d->measured_min = ms.min;
            d->measured_max = ms.max;
            if (!d->workload || !d->verdict) rc = sd_err(SD_EINPUT, "%s: cells[%zu] has no workload or verdict", path, i);
        }
        if (rc == 0) m->nverify++;
    }
    json_decref(root);
    return rc;
}

const char *render_model_date(const render_model *m) {
    const char *best = NULL;
    for (int i = 0; i < m->nfiles; i++)
        if (m->files[i].as_of && (!best || strcmp(m->files[i].as_of, best) > 0)) best = m->files[i].as_of;
    return best;
}

const char *render_model_env(const render_model *m, const char *key) {
    for (int i = 0; i < m->nfiles; i++) {
        if (strcmp(m->files[i].kind, "results") != 0) continue;
        for (int k = 0; k < m->files[i].nenv; k++)
            if (strcmp(m->files[i].env[k].key, key) == 0) return m->files[i].env[k].value;
    }
    return NULL;
}
