/* published — reads a results file someone else published (the input of `showdown verify`): checked with
 * positions (file:line:column) by jv, then loaded with jansson. Names that a rerun passes on to bench
 * (workload, implementation, backend) must be safe names, so a stranger's file cannot point outside. */
#include "bench/results.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/jv.h"

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
    return 0;
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
