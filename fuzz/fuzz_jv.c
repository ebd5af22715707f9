/* fuzz_jv — the positioned JSON reader (src/core/jv.c) on raw bytes: every input file with positions
 * goes through it. Walks the tree it returns and the schema helpers on the root. */
#include "fuzz.h"
#include "core/jv.h"

static void walk(const jv_doc *d, const jv *v, int depth) {
    if (depth > JV_MAX_DEPTH + 1) abort();   /* the reader bounds depth */
    const char *s;
    long long i;
    double x;
    int b;
    if (v->type == JV_OBJECT) {
        for (size_t k = 0; k < v->count; k++) {
            if (jv_get(v, v->items[k]->key) == NULL) abort();
            fuzz_check_err(jv_get_str(d, v, v->items[k]->key, "fuzz", 0, &s));
            fuzz_check_err(jv_get_int(d, v, v->items[k]->key, "fuzz", 0, -5, 5, &i));
            fuzz_check_err(jv_get_num(d, v, v->items[k]->key, "fuzz", 0, 0, 1, &x));
            fuzz_check_err(jv_get_bool(d, v, v->items[k]->key, "fuzz", 0, &b));
        }
    }
    for (size_t k = 0; k < v->count; k++) walk(d, v->items[k], depth + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    jv_doc *d = NULL;
    int rc = jv_parse(&d, "fuzz.json", (const char *)data, size);
    if (rc == 0) {
        static const char *const keys[] = {"schema", "name", NULL};
        walk(d, jv_root(d), 0);
        fuzz_check_err(jv_check_keys(d, jv_root(d), "root", keys));
    }
    fuzz_check_err(rc);
    jv_doc_free(d);
    return 0;
}
