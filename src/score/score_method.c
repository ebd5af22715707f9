/* score_method — reads scoring/method.json into score_method, checking every key, scale and reference
 * (unknown keys, unknown categories or formulas, bad scales and unordered tier cuts are positioned
 * errors "method.json:LINE:COL: ..."). */
#include "score/score.h"
#include "core/err.h"
#include "core/jv.h"

#include <stdio.h>
#include <string.h>

static int read_scale(const jv_doc *d, const jv *v, const char *what, int version, score_scale *s) {
    static const char *const keys[] = {"kind", "min", "max", "levels", NULL};
    SD_TRY(jv_expect(d, v, JV_OBJECT, what));
    SD_TRY(jv_check_keys(d, v, what, keys));
    const char *kind = NULL;
    SD_TRY(jv_get_str(d, v, "kind", what, 1, &kind));
    if (strcmp(kind, "fixed") == 0) {
        s->kind = SCORE_SCALE_FIXED;
        SD_TRY(jv_get_num(d, v, "min", what, 1, 1, 0, &s->min));
        SD_TRY(jv_get_num(d, v, "max", what, 1, 1, 0, &s->max));
        if (!(s->max > 0) || s->min > s->max)
            return jv_err(d, jv_get(v, "max"), "%s: need 0 < max and min <= max (got min %g, max %g)", what, s->min, s->max);
    } else if (strcmp(kind, "best") == 0 && version < 2) {
        s->kind = SCORE_SCALE_BEST;
        s->min = s->max = 0;
    } else if ((strcmp(kind, "capped") == 0 || strcmp(kind, "decay") == 0) && version >= 2) {
        /* v2 has no 'best': a value scaled by the others' would rise when another framework's input goes missing */
        s->kind = kind[0] == 'c' ? SCORE_SCALE_CAPPED : SCORE_SCALE_DECAY;
        s->min = 0;
        SD_TRY(jv_get_num(d, v, "min", what, 0, 0, 1e12, &s->min));
        SD_TRY(jv_get_num(d, v, "max", what, 1, 1e-9, 1e12, &s->max));
        if (s->min > s->max) return jv_err(d, jv_get(v, "min"), "%s: min %g above max %g", what, s->min, s->max);
    } else {
        return jv_err(d, jv_get(v, "kind"), "unknown scale kind '%s' in %s (expected %s)", kind, what,
                      version < 2 ? "fixed or best" : "fixed, capped or decay");
    }
    return 0;
}

static int read_formula(const jv_doc *d, const jv *v, score_formula *f) {
    static const struct { const char *name; score_formula f; } tab[] = {
        {"value", SCORE_F_VALUE}, {"activity", SCORE_F_ACTIVITY}, {"log_sum", SCORE_F_LOG_SUM},
        {"parts_mean", SCORE_F_PARTS_MEAN}, {"ops_sum", SCORE_F_OPS_SUM}, {"weighted_sum", SCORE_F_WEIGHTED_SUM},
        {"count", SCORE_F_COUNT},
    };
    const jv *fv = jv_get(v, "formula");
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (strcmp(fv->string, tab[i].name) == 0) { *f = tab[i].f; return 0; }
    return jv_err(d, fv, "unknown formula '%s' (expected value, activity, log_sum, parts_mean, ops_sum, "
                  "weighted_sum or count)", fv->string);
}

static int read_criterion(const jv_doc *d, const jv *v, score_method *m, score_criterion *c) {
    static const char *const keys[] = {"id", "category", "name", "weight", "formula", "input", "inputs", "about",
                                       "scale", "parts", "note", NULL};
    SD_TRY(jv_expect(d, v, JV_OBJECT, "criterion"));
    SD_TRY(jv_check_keys(d, v, "criterion", keys));
    SD_TRY(jv_get_str_copy(d, v, "id", "criterion", 1, c->id, sizeof c->id));
    SD_TRY(jv_get_str_copy(d, v, "name", "criterion", 1, c->name, sizeof c->name));
    SD_TRY(jv_get_str_copy(d, v, "about", "criterion", 0, c->about, sizeof c->about));
    const char *cat = NULL, *formula = NULL;
    SD_TRY(jv_get_str(d, v, "category", "criterion", 1, &cat));
    c->category = -1;
    for (int k = 0; k < m->ncat; k++)
        if (strcmp(m->cat[k].id, cat) == 0) c->category = k;
    if (c->category < 0) return jv_err(d, jv_get(v, "category"), "criterion '%s': unknown category '%s'", c->id, cat);
    c->weight = 1;
    SD_TRY(jv_get_num(d, v, "weight", "criterion", 0, 0, 1e6, &c->weight));
    SD_TRY(jv_get_str(d, v, "formula", "criterion", 1, &formula));
    SD_TRY(read_formula(d, v, &c->formula));
    SD_TRY(jv_get_str_copy(d, v, "input", "criterion", 0, c->input, sizeof c->input));
    int needs_input = c->formula == SCORE_F_VALUE || c->formula == SCORE_F_WEIGHTED_SUM || c->formula == SCORE_F_COUNT;
    if (needs_input && !c->input[0]) return jv_err(d, v, "criterion '%s': formula needs 'input' (the input key)", c->id);
    if (c->formula == SCORE_F_PARTS_MEAN) {
        const jv *parts = jv_get(v, "parts");
        if (!parts) return jv_err(d, v, "criterion '%s': parts_mean needs 'parts'", c->id);
        SD_TRY(jv_expect(d, parts, JV_ARRAY, "parts"));
        if (parts->count < 1 || parts->count > SCORE_MAX_PARTS)
            return jv_err(d, parts, "criterion '%s': 1 to %d parts (got %zu)", c->id, SCORE_MAX_PARTS, parts->count);
        c->nparts = (int)parts->count;
        for (size_t p = 0; p < parts->count; p++) {
            static const char *const pkeys[] = {"id", "scale", "input", "about", NULL};
            const jv *pv = parts->items[p];
            SD_TRY(jv_expect(d, pv, JV_OBJECT, "part"));
            SD_TRY(jv_check_keys(d, pv, "part", pkeys));
            SD_TRY(jv_get_str_copy(d, pv, "id", "part", 1, c->part_id[p], sizeof c->part_id[p]));
            SD_TRY(jv_get_str_copy(d, pv, "input", "part", 0, c->part_input[p], sizeof c->part_input[p]));
            if (c->part_input[p][0] && (m->version < 2 || !score_git_input_valid(c->part_input[p])))
                return jv_err(d, jv_get(pv, "input"), "part '%s': input '%s' (expected, in method v2, git:main:METRIC "
                              "or git:numerics:METRIC with METRIC one of %s)", c->part_id[p], c->part_input[p],
                              SCORE_GIT_METRICS);
            const jv *sc = jv_get(pv, "scale");
            if (!sc) return jv_err(d, pv, "missing key 'scale' in part");
            SD_TRY(read_scale(d, sc, "scale", m->version, &c->part_scale[p]));
        }
    } else {
        const jv *sc = jv_get(v, "scale");
        if (!sc) return jv_err(d, v, "missing key 'scale' in criterion '%s'", c->id);
        SD_TRY(read_scale(d, sc, "scale", m->version, &c->scale));
    }
    return 0;
}

/* The v2 sections: ranges (the insufficient-data fraction), freshness (stale mirrors), status thresholds.
 * Required in v2, refused in v1 (v1 results must stay what they were). */
static int read_v2(const jv_doc *d, const jv *root, score_method *m) {
    static const char *const names[] = {"ranges", "freshness", "status"};
    for (int i = 0; i < 3; i++) {
        const jv *v = jv_get(root, names[i]);
        if (m->version < 2 && v) return jv_err_key(d, v, "'%s' is a method v2 key (schema is showdown-method/1)", names[i]);
        if (m->version >= 2 && !v) return jv_err(d, root, "missing key '%s' in method v2", names[i]);
    }
    if (m->version < 2) return 0;
    const jv *r = jv_get(root, "ranges"), *f = jv_get(root, "freshness"), *st = jv_get(root, "status");
    static const char *const rkeys[] = {"about", "point", "rank", "min_measured_fraction", NULL};
    static const char *const fkeys[] = {"about", "stale_days", NULL};
    static const char *const skeys[] = {"about", "active_weeks_13", "active_authors_90", "maintenance_weeks_13",
                                        "maintenance_releases_365", NULL};
    SD_TRY(jv_expect(d, r, JV_OBJECT, "ranges"));
    SD_TRY(jv_check_keys(d, r, "ranges", rkeys));
    SD_TRY(jv_get_num(d, r, "min_measured_fraction", "ranges", 1, 0, 1, &m->min_measured));
    SD_TRY(jv_expect(d, f, JV_OBJECT, "freshness"));
    SD_TRY(jv_check_keys(d, f, "freshness", fkeys));
    SD_TRY(jv_get_num(d, f, "stale_days", "freshness", 1, 0, 3650, &m->stale_days));
    SD_TRY(jv_expect(d, st, JV_OBJECT, "status"));
    SD_TRY(jv_check_keys(d, st, "status", skeys));
    long long x[4];
    for (int i = 0; i < 4; i++) SD_TRY(jv_get_int(d, st, skeys[i + 1], "status", 1, 0, 1000000, &x[i]));
    m->status = (score_status_rule){(long)x[0], (long)x[1], (long)x[2], (long)x[3]};
    return 0;
}

/* The method's required array KEY ("categories", "criteria"), of 1 to max entries. */
static int method_list(const jv_doc *d, const jv *root, const char *key, int max, const jv **out) {
    const jv *a = jv_get(root, key);
    if (!a) return jv_err(d, root, "missing key '%s' in method", key);
    SD_TRY(jv_expect(d, a, JV_ARRAY, key));
    if (a->count < 1 || a->count > (size_t)max) return jv_err(d, a, "1 to %d %s (got %zu)", max, key, a->count);
    *out = a;
    return 0;
}

static int read_method(const jv_doc *d, void *out) {
    score_method *m = out;
    static const char *const keys[] = {"schema", "about", "reference", "normalisation", "activity", "categories",
                                       "criteria", "tiers", "ranges", "freshness", "status", NULL};
    static const char *const schemas[] = {"showdown-method/1", "showdown-method/2", NULL};
    int v = jv_root_schema(d, "method", keys, schemas);
    if (v < 0) return v;
    m->version = v + 1;
    const jv *root = jv_root(d);
    SD_TRY(read_v2(d, root, m));
    const jv *act = jv_get(root, "activity");
    m->weeks_min = 1;
    m->window_days = 30;
    if (act) {
        static const char *const akeys[] = {"about", "weeks_min", "window_days", NULL};
        SD_TRY(jv_expect(d, act, JV_OBJECT, "activity"));
        SD_TRY(jv_check_keys(d, act, "activity", akeys));
        SD_TRY(jv_get_num(d, act, "weeks_min", "activity", 0, 1e-3, 1e6, &m->weeks_min));
        long long wd = 30;
        SD_TRY(jv_get_int(d, act, "window_days", "activity", 0, 30, 30, &wd));   /* git analysis counts 30 days */
        m->window_days = (int)wd;
    }
    const jv *cats = NULL;
    SD_TRY(method_list(d, root, "categories", SCORE_MAX_CAT, &cats));
    for (size_t i = 0; i < cats->count; i++) {
        static const char *const ckeys[] = {"id", "name", "weight", NULL};
        const jv *cv = cats->items[i];
        score_category *c = &m->cat[m->ncat];
        SD_TRY(jv_expect(d, cv, JV_OBJECT, "category"));
        SD_TRY(jv_check_keys(d, cv, "category", ckeys));
        SD_TRY(jv_get_str_copy(d, cv, "id", "category", 1, c->id, sizeof c->id));
        SD_TRY(jv_get_str_copy(d, cv, "name", "category", 1, c->name, sizeof c->name));
        c->weight = 1;
        SD_TRY(jv_get_num(d, cv, "weight", "category", 0, 0, 1e6, &c->weight));
        for (int k = 0; k < m->ncat; k++)
            if (strcmp(m->cat[k].id, c->id) == 0) return jv_err(d, cv, "duplicate category '%s'", c->id);
        m->ncat++;
    }
    /* all weights 0 would leave every score null and the ranking alphabetical: say so, not a table of zeros */
    double wsum = 0;
    for (int k = 0; k < m->ncat; k++) wsum += m->cat[k].weight;
    if (!(wsum > 0)) return jv_err(d, cats, "every category has weight 0: nothing would be scored");
    const jv *crits = NULL;
    SD_TRY(method_list(d, root, "criteria", SCORE_MAX_CRIT, &crits));
    for (size_t i = 0; i < crits->count; i++) {
        score_criterion *c = &m->crit[m->ncrit];
        SD_TRY(read_criterion(d, crits->items[i], m, c));
        if (score_criterion_index(m, c->id) >= 0) return jv_err(d, crits->items[i], "duplicate criterion '%s'", c->id);
        m->ncrit++;
    }
    double cw = 0;
    for (int k = 0; k < m->ncrit; k++) cw += m->cat[m->crit[k].category].weight > 0 ? m->crit[k].weight : 0;
    if (!(cw > 0)) return jv_err(d, crits, "every criterion of a weighted category has weight 0: nothing would be scored");
    const jv *tiers = jv_get(root, "tiers");
    if (!tiers) return jv_err(d, root, "missing key 'tiers' in method");
    static const char *const tkeys[] = {"about", "cuts", "last", NULL};
    SD_TRY(jv_expect(d, tiers, JV_OBJECT, "tiers"));
    SD_TRY(jv_check_keys(d, tiers, "tiers", tkeys));
    long long last = 0;
    SD_TRY(jv_get_int(d, tiers, "last", "tiers", 1, 1, 99, &last));
    m->tier_last = (int)last;
    const jv *cuts = jv_get(tiers, "cuts");
    if (!cuts) return jv_err(d, tiers, "missing key 'cuts' in tiers");
    SD_TRY(jv_expect(d, cuts, JV_ARRAY, "cuts"));
    if (cuts->count > SCORE_MAX_TIERS) return jv_err(d, cuts, "at most %d tier cuts", SCORE_MAX_TIERS);
    for (size_t i = 0; i < cuts->count; i++) {
        static const char *const ckeys[] = {"tier", "min", NULL};
        const jv *cv = cuts->items[i];
        long long t = 0;
        SD_TRY(jv_expect(d, cv, JV_OBJECT, "cut"));
        SD_TRY(jv_check_keys(d, cv, "cut", ckeys));
        SD_TRY(jv_get_int(d, cv, "tier", "cut", 1, 1, 99, &t));
        SD_TRY(jv_get_num(d, cv, "min", "cut", 1, 0, 100, &m->tier_min[i]));
        m->tier_id[i] = (int)t;
        if (i > 0 && !(m->tier_min[i] < m->tier_min[i - 1]))
            return jv_err(d, jv_get(cv, "min"), "tier cuts must decrease (%g after %g)", m->tier_min[i], m->tier_min[i - 1]);
        m->ntiers++;
    }
    return 0;
}

int score_method_load(score_method *m, const char *path) {
    memset(m, 0, sizeof *m);
    return jv_read(path, NULL, 0, read_method, m);
}

int score_method_parse(score_method *m, const char *name, const char *text, size_t len) {
    memset(m, 0, sizeof *m);
    return jv_read(name, text, len, read_method, m);
}
