/* published — reads a results file someone else published (the input of `showdown verify`): checked with
 * positions (file:line:column) by jv, then loaded with jansson. Names that a rerun passes on to bench
 * (workload, implementation, backend) must be safe names, so a stranger's file cannot point outside. */
#include "bench/results.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/jv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const sd_published_time_keys[] = {"steady_epoch_s", "first_epoch_s", "train_total_s", "val_s",
                                              "infer_s_per_1000", NULL};

static int safe_member(const jv_doc *d, const jv *r, const char *key) {
    const char *s = NULL;
    SD_TRY(jv_get_str(d, r, key, "run", 1, &s));
    if (sd_safe_name(s, key) < 0) return jv_err(d, jv_get(r, key), "%s", sd_errmsg());
    return 0;
}

/* Bounds of what a results file may say: times, rates and counts are >= 0 and at most 1e12 (a 309-digit
 * number is no measurement), accuracies are fractions. */
#define SD_RESULTS_MAX_VALUE 1e12

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

int sd_results_check_file(const char *path) {
    jv_doc *d = NULL;
    SD_TRY(jv_load(&d, path));
    int rc = sd_results_check(d);
    jv_doc_free(d);
    return rc;
}

/* The document's shape: schema, runs with names and a summary holding at least one time metric. */
static int check(const jv_doc *d) {
    const jv *root = jv_root(d);
    SD_TRY(jv_expect(d, root, JV_OBJECT, "published results"));
    const char *schema = NULL;
    SD_TRY(jv_get_str(d, root, "schema", "published results", 1, &schema));
    if (strcmp(schema, SD_RESULTS_SCHEMA) != 0)
        return jv_err(d, jv_get(root, "schema"), "expected schema \"%s\" (got \"%s\")", SD_RESULTS_SCHEMA, schema);
    const jv *runs = jv_get(root, "runs");
    if (!runs) return jv_err(d, root, "missing key 'runs' in published results");
    SD_TRY(jv_expect(d, runs, JV_ARRAY, "runs"));
    if (runs->count > SD_PUBLISHED_MAX_RUNS)
        return jv_err(d, runs, "too many runs (%zu; at most %d)", runs->count, SD_PUBLISHED_MAX_RUNS);
    for (size_t i = 0; i < runs->count; i++) {
        const jv *r = runs->items[i];
        SD_TRY(jv_expect(d, r, JV_OBJECT, "a run"));
        SD_TRY(safe_member(d, r, "workload"));
        SD_TRY(safe_member(d, r, "implementation"));
        SD_TRY(safe_member(d, r, "backend"));
        const jv *sum = jv_get(r, "summary");
        if (!sum) return jv_err(d, r, "missing key 'summary' in run");
        SD_TRY(jv_expect(d, sum, JV_OBJECT, "summary"));
        int has = 0;
        for (int k = 0; sd_published_time_keys[k]; k++) {
            const jv *m = jv_get(sum, sd_published_time_keys[k]);
            if (!m) continue;
            double v;
            SD_TRY(jv_expect(d, m, JV_OBJECT, sd_published_time_keys[k]));
            SD_TRY(jv_get_num(d, m, "median", sd_published_time_keys[k], 1, 0, 1e12, &v));
            has = 1;
        }
        if (!has)
            return jv_err(d, sum, "summary has no time metric (expected one of: steady_epoch_s, first_epoch_s, "
                          "train_total_s, val_s, infer_s_per_1000)");
    }
    return sd_results_check(d);
}

int sd_published_parse(json_t **out, const char *name, const char *text, size_t len) {
    *out = NULL;
    jv_doc *d = NULL;
    SD_TRY(jv_parse(&d, name, text, len));
    int rc = check(d);
    jv_doc_free(d);
    if (rc < 0) return rc;
    json_error_t je;
    *out = json_loadb(text, len, 0, &je);
    if (!*out) return sd_err(SD_EINPUT, "%s:%d:%d: %s", name, je.line, je.column, je.text);
    return 0;
}

int sd_published_load(json_t **out, const char *path) {
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    SD_TRY(sd_read_file(path, JV_MAX_DOC, &text, &len));
    int rc = sd_published_parse(out, path, text, len);
    free(text);
    return rc;
}
