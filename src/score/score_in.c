/* score_in — the scores file read back (score_in.h): the one place besides score_out.c that spells its keys. */
#include "score/score_in.h"
#include "core/err.h"
#include "core/jsonfile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double num(const json_t *v) { return json_is_number(v) ? json_number_value(v) : NAN; }

/* Member id of an object-or-array container: objects are keyed by id, arrays hold {"id": ...}. */
typedef struct iter { const json_t *c; size_t i; void *it; } iter;
static int iter_next(iter *t, const char **id, const json_t **v) {
    if (json_is_object(t->c)) {
        t->it = t->it ? json_object_iter_next((json_t *)t->c, t->it) : json_object_iter((json_t *)t->c);
        if (!t->it) return 0;
        *id = json_object_iter_key(t->it);
        *v = json_object_iter_value(t->it);
        return 1;
    }
    if (json_is_array(t->c) && t->i < json_array_size(t->c)) {
        *v = json_array_get(t->c, t->i++);
        *id = json_string_value(json_object_get(*v, "id"));
        if (!*id) *id = json_string_value(json_object_get(*v, "name"));
        if (!*id) *id = "?";
        return 1;
    }
    return 0;
}

static int find(const char *const *ids, int n, const char *id) {
    for (int i = 0; i < n; i++)
        if (strcmp(ids[i], id) == 0) return i;
    return -1;
}

/* The index of id, added (named name, else by its id) when new; -1 past the bound. */
static int add_id(const char **ids, const char **names, int *n, const char *id, const char *name) {
    int k = find(ids, *n, id);
    if (k >= 0) return k;
    if (*n >= SCORE_IN_MAX_IDS) return -1;
    ids[*n] = id;
    names[*n] = name ? name : id;
    return (*n)++;
}

static const char *name_of(const json_t *v) { return json_string_value(json_object_get(v, "name")); }

/* The index of category / criterion id in *c / *k, added when new (named name, else by its id); SD_ELIMIT past the
 * bound. */
static int add_cat(score_in *s, const char *path, const char *id, const char *name, int *c) {
    *c = add_id(s->cat_id, s->cat_name, &s->ncat, id, name);
    return *c < 0 ? sd_err(SD_ELIMIT, "%s: more than %d categories", path, SCORE_IN_MAX_IDS) : 0;
}
static int add_crit(score_in *s, const char *path, const char *id, const char *name, int *k) {
    *k = add_id(s->crit_id, s->crit_name, &s->ncrit, id, name);
    return *k < 0 ? sd_err(SD_ELIMIT, "%s: more than %d criteria", path, SCORE_IN_MAX_IDS) : 0;
}

/* The category a criterion names ("category"), added by its id when new; -1 when it names none (or past the bound). */
static int crit_category(score_in *s, const json_t *v) {
    const char *cat = json_string_value(json_object_get(v, "category"));
    return cat ? add_id(s->cat_id, s->cat_name, &s->ncat, cat, NULL) : -1;
}

/* A criterion's value: "missing" (true, or the reason) reads NAN; a bare number is a normalised value. */
static double crit_value(const json_t *v, const char *key) {
    if (json_is_number(v)) return strcmp(key, "normalised") == 0 ? num(v) : NAN;
    const json_t *miss = json_object_get(v, "missing");
    if (json_is_true(miss) || json_is_string(miss)) return NAN;
    return num(json_object_get(v, key));
}

/* Text of a scalar tier: strings as they are, numbers and booleans printed (as the report prints any value). */
static const char *tier_text(score_in_fw *w, const json_t *v) {
    if (json_is_string(v)) return json_string_value(v);
    if (json_is_integer(v)) snprintf(w->tier_buf, sizeof w->tier_buf, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v)) snprintf(w->tier_buf, sizeof w->tier_buf, "%g", json_real_value(v));
    else if (json_is_boolean(v)) return json_is_true(v) ? "yes" : "no";
    else return NULL;
    return w->tier_buf;
}

/* The method's categories and criteria: top-level, or under "method" with its criteria listed apart. */
static int read_method(score_in *s, const char *path) {
    const json_t *method = json_object_get(s->doc, "method");
    const json_t *cats = json_object_get(s->doc, "categories");
    if (!cats && json_is_object(method)) cats = json_object_get(method, "categories");
    iter ci = {cats, 0, NULL};
    const char *id;
    const json_t *v;
    int c, k;
    while (iter_next(&ci, &id, &v)) {
        SD_TRY(add_cat(s, path, id, name_of(v), &c));
        iter ki = {json_object_get(v, "criteria"), 0, NULL};
        const char *kid;
        const json_t *kv;
        while (iter_next(&ki, &kid, &kv)) {
            SD_TRY(add_crit(s, path, kid, name_of(kv), &k));
            s->crit_cat[k] = c;
        }
    }
    iter mi = {json_is_object(method) ? json_object_get(method, "criteria") : NULL, 0, NULL};
    while (iter_next(&mi, &id, &v)) {
        c = crit_category(s, v);
        SD_TRY(add_crit(s, path, id, name_of(v), &k));
        s->crit_cat[k] = c;
        s->crit_about[k] = json_string_value(json_object_get(v, "about"));
    }
    return 0;
}

/* One framework; categories or criteria not declared by the method are added as met. */
static int read_fw(score_in *s, const char *path, const json_t *fws, const char *id, const json_t *v, score_in_fw *w) {
    const char *nm = name_of(v);
    w->name = json_is_array(fws) ? (nm ? nm : id) : id;
    const json_t *o = json_object_get(v, "overall");
    w->overall = json_is_object(o) ? num(json_object_get(o, "score")) : num(o);
    w->tier = tier_text(w, json_object_get(v, "tier"));
    w->archived = json_is_true(json_object_get(v, "archived"));
    w->status = json_string_value(json_object_get(v, "status"));
    w->status_typed = json_string_value(json_object_get(v, "status_typed"));
    for (int i = 0; i < SCORE_IN_MAX_IDS; i++) {
        w->cat[i] = w->crit[i] = w->crit_raw[i] = NAN;
        w->cat_lo[i] = w->cat_hi[i] = w->crit_lo[i] = w->crit_hi[i] = NAN;
    }
    const json_t *orng = json_object_get(v, "overall_range"), *cov = json_object_get(v, "coverage");
    w->overall_lo = num(json_object_get(orng, "lower"));
    w->overall_hi = num(json_object_get(orng, "upper"));
    const json_t *cm = json_object_get(cov, "measured"), *ch = json_object_get(cov, "hand_entered"),
                 *cx = json_object_get(cov, "missing");
    w->cov_measured = json_is_integer(cm) ? (int)json_integer_value(cm) : -1;
    w->cov_hand = json_is_integer(ch) ? (int)json_integer_value(ch) : -1;
    w->cov_missing = json_is_integer(cx) ? (int)json_integer_value(cx) : -1;
    iter c2 = {json_object_get(v, "categories"), 0, NULL};
    const char *cid;
    const json_t *cv;
    while (iter_next(&c2, &cid, &cv)) {
        int c;
        SD_TRY(add_cat(s, path, cid, name_of(cv), &c));
        w->cat[c] = json_is_object(cv) ? num(json_object_get(cv, "score")) : num(cv);
    }
    iter c3 = {json_object_get(v, "category_ranges"), 0, NULL};
    while (iter_next(&c3, &cid, &cv)) {
        int c = find(s->cat_id, s->ncat, cid);
        if (c < 0) continue;
        w->cat_lo[c] = num(json_object_get(cv, "lower"));
        w->cat_hi[c] = num(json_object_get(cv, "upper"));
        w->cat_insufficient[c] = json_is_true(json_object_get(cv, "insufficient"));
    }
    iter k2 = {json_object_get(v, "criteria"), 0, NULL};
    while (iter_next(&k2, &cid, &cv)) {
        int k = find(s->crit_id, s->ncrit, cid);
        if (k < 0) {
            SD_TRY(add_crit(s, path, cid, name_of(cv), &k));
            s->crit_cat[k] = crit_category(s, cv);
        }
        w->crit[k] = crit_value(cv, "normalised");
        w->crit_raw[k] = crit_value(cv, "raw");
        w->crit_lo[k] = num(json_object_get(cv, "lower"));
        w->crit_hi[k] = num(json_object_get(cv, "upper"));
        w->crit_why[k] = json_string_value(json_object_get(cv, "missing"));
    }
    return 0;
}

static int check_schema(const char *path, const json_t *root) {
    static const char want[] = "showdown-scores/";
    const char *s = json_string_value(json_object_get(root, "schema"));
    size_t n = strlen(want);
    if (!s) return sd_err(SD_EINPUT, "%s: no \"schema\" (expected \"%s1\")", path, want);
    if (strncmp(s, want, n) != 0) return sd_err(SD_EINPUT, "%s: schema \"%s\" is not %s*", path, s, want);
    if (strcmp(s + n, "1") != 0)
        return sd_err(SD_EINPUT, "%s: schema version \"%s\" not supported (this build reads %s1)", path, s, want);
    return 0;
}

int score_in_load(score_in *s, const char *path) {
    memset(s, 0, sizeof *s);
    for (int i = 0; i < SCORE_IN_MAX_IDS; i++) s->crit_cat[i] = -1;
    SD_TRY(sd_json_load(path, NULL, &s->doc));
    SD_TRY(check_schema(path, s->doc));
    const json_t *fws = json_object_get(s->doc, "frameworks");
    if (!json_is_array(fws) && !json_is_object(fws)) return sd_err(SD_EINPUT, "%s: no \"frameworks\" list", path);
    SD_TRY(read_method(s, path));
    s->mode = json_string_value(json_object_get(s->doc, "mode"));
    s->snapshot_date = json_string_value(json_object_get(json_object_get(s->doc, "snapshot"), "date"));
    size_t nfw = json_is_array(fws) ? json_array_size(fws) : json_object_size(fws);
    s->fw = calloc(nfw + 1, sizeof *s->fw);
    if (!s->fw) return sd_err(SD_ENOMEM, "%s: out of memory for %zu frameworks", path, nfw);
    iter fi = {fws, 0, NULL};
    const char *id;
    const json_t *v;
    while (iter_next(&fi, &id, &v)) SD_TRY(read_fw(s, path, fws, id, v, &s->fw[s->nfw++]));
    return 0;
}

void score_in_free(score_in *s) {
    if (!s) return;
    free(s->fw);
    json_decref(s->doc);
    memset(s, 0, sizeof *s);
}
