/* jv_get — lookups and schema checks over a parsed jv document: each failure is one positioned message
 * naming the key, the expected type or range, and what the document holds. */
#include "core/jv.h"
#include "core/jv_text.h"

#include "core/err.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Shortest %g form that reads back as x. */
static void fmt_num(double x, char *out, size_t n) {
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, n, "%.*g", prec, x);
        if (strtod(out, NULL) == x) return;
    }
}

const jv *jv_get(const jv *obj, const char *key) {
    if (!obj || obj->type != JV_OBJECT || !key) return NULL;
    for (size_t i = 0; i < obj->count; i++)
        if (strcmp(obj->items[i]->key, key) == 0) return obj->items[i];
    return NULL;
}

const char *jv_type_name(jv_type t) {
    switch (t) {
    case JV_NULL: return "null";
    case JV_BOOL: return "boolean";
    case JV_NUMBER: return "number";
    case JV_STRING: return "string";
    case JV_ARRAY: return "array";
    case JV_OBJECT: return "object";
    }
    return "unknown";
}

static const char *type_phrase(jv_type t) {
    switch (t) {
    case JV_NULL: return "null";
    case JV_BOOL: return "a boolean";
    case JV_NUMBER: return "a number";
    case JV_STRING: return "a string";
    case JV_ARRAY: return "an array";
    case JV_OBJECT: return "an object";
    }
    return "a value";
}

int jv_expect(const jv_doc *d, const jv *v, jv_type t, const char *what) {
    if (!v) return sd_err(SD_ERROR, "jv_expect: no value for %s", what);
    if (v->type != t) return jv_err(d, v, "expected %s for %s (got %s)", type_phrase(t), what, jv_type_name(v->type));
    return 0;
}

int jv_check_keys(const jv_doc *d, const jv *obj, const char *what, const char *const *allowed) {
    SD_TRY(jv_expect(d, obj, JV_OBJECT, what));
    for (size_t i = 0; i < obj->count; i++) {
        const jv *m = obj->items[i];
        int ok = 0;
        for (const char *const *a = allowed; a && *a; a++)
            if (strcmp(*a, m->key) == 0) { ok = 1; break; }
        if (ok) continue;
        char list[1024], shown[256];
        size_t o = 0;
        list[0] = 0;
        for (const char *const *a = allowed; a && *a && o < sizeof list; a++) {
            int w = snprintf(list + o, sizeof list - o, "%s%s", a == allowed ? "" : ", ", *a);
            if (w < 0) break;
            o += (size_t)w;
        }
        jv_clip_text(m->key, strlen(m->key), shown, sizeof shown);
        if (!allowed || !*allowed) return jv_err_key(d, m, "unknown key '%s' in %s (expected no keys)", shown, what);
        return jv_err_key(d, m, "unknown key '%s' in %s (expected one of: %s)", shown, what, list);
    }
    return 0;
}

/* Find key in obj: 1 found (*m set), 0 absent and optional, <0 error. */
static int member(const jv_doc *d, const jv *obj, const char *key, const char *what, int required, const jv **m) {
    SD_TRY(jv_expect(d, obj, JV_OBJECT, what));
    *m = jv_get(obj, key);
    if (*m) return 1;
    if (required) return jv_err(d, obj, "missing key '%s' in %s", key, what);
    return 0;
}

static int type_err(const jv_doc *d, const jv *m, const char *want, const char *key, const char *what) {
    return jv_err(d, m, "expected %s for '%s' in %s (got %s)", want, key, what, jv_type_name(m->type));
}

int jv_get_str(const jv_doc *d, const jv *obj, const char *key, const char *what, int required,
               const char **out) {
    const jv *m;
    int rc = member(d, obj, key, what, required, &m);
    if (rc <= 0) return rc;
    if (m->type != JV_STRING) return type_err(d, m, "a string", key, what);
    if (strlen(m->string) != m->string_len)
        return jv_err(d, m, "expected a string without NUL characters for '%s' in %s (got '\\u0000')", key, what);
    *out = m->string;
    return 0;
}

int jv_root_schema(const jv_doc *d, const char *what, const char *const *allowed, const char *const *schemas) {
    const jv *root = jv_root(d);
    SD_TRY(jv_check_keys(d, root, what, allowed));
    const char *schema = NULL;
    SD_TRY(jv_get_str(d, root, "schema", what, 1, &schema));
    char expected[256] = "";
    size_t len = 0;
    for (int i = 0; schemas[i]; i++) {
        if (strcmp(schema, schemas[i]) == 0) return i;
        if (len < sizeof expected)
            len += (size_t)snprintf(expected + len, sizeof expected - len, "%s%s", i ? " or " : "", schemas[i]);
    }
    return jv_err(d, jv_get(root, "schema"), "unsupported schema '%s' (expected %s)", schema, expected);
}

int jv_get_str_copy(const jv_doc *d, const jv *obj, const char *key, const char *what, int required, char *dst,
                    size_t cap) {
    const char *s = NULL;
    SD_TRY(jv_get_str(d, obj, key, what, required, &s));
    if (!s) return 0;
    size_t n = strlen(s);
    if (n >= cap) return jv_err(d, jv_get(obj, key), "'%s' is too long (at most %zu bytes)", key, cap - 1);
    memcpy(dst, s, n + 1);
    return 0;
}

int jv_get_bool(const jv_doc *d, const jv *obj, const char *key, const char *what, int required, int *out) {
    const jv *m;
    int rc = member(d, obj, key, what, required, &m);
    if (rc <= 0) return rc;
    if (m->type != JV_BOOL) return type_err(d, m, "a boolean", key, what);
    *out = m->boolean;
    return 0;
}

int jv_get_num(const jv_doc *d, const jv *obj, const char *key, const char *what, int required,
               double min, double max, double *out) {
    const jv *m;
    int rc = member(d, obj, key, what, required, &m);
    if (rc <= 0) return rc;
    if (m->type != JV_NUMBER) return type_err(d, m, "a number", key, what);
    if (min <= max && (m->number < min || m->number > max)) {
        char v[32], lo[32], hi[32];
        fmt_num(m->number, v, sizeof v);
        fmt_num(min, lo, sizeof lo);
        fmt_num(max, hi, sizeof hi);
        return jv_err(d, m, "value %s of '%s' in %s out of range [%s, %s]", v, key, what, lo, hi);
    }
    *out = m->number;
    return 0;
}

int jv_get_int(const jv_doc *d, const jv *obj, const char *key, const char *what, int required,
               long long min, long long max, long long *out) {
    const jv *m;
    int rc = member(d, obj, key, what, required, &m);
    if (rc <= 0) return rc;
    if (m->type != JV_NUMBER) return type_err(d, m, "an integer", key, what);
    char v[32];
    long long x;
    if (m->is_integer) {
        x = m->integer;
        snprintf(v, sizeof v, "%lld", x);
    } else {
        fmt_num(m->number, v, sizeof v);
        if (m->number != floor(m->number))
            return jv_err(d, m, "expected an integer for '%s' in %s (got %s)", key, what, v);
        /* Integral but written with a fraction or exponent (64.0, 1e3): accepted while exact;
         * beyond 2^53 it cannot be an exact long long here. */
        if (fabs(m->number) > 9007199254740992.0) {
            if (min > max) { min = LLONG_MIN; max = LLONG_MAX; }
            return jv_err(d, m, "value %s of '%s' in %s out of range [%lld, %lld]", v, key, what, min, max);
        }
        x = (long long)m->number;
    }
    if (min <= max && (x < min || x > max))
        return jv_err(d, m, "value %s of '%s' in %s out of range [%lld, %lld]", v, key, what, min, max);
    *out = x;
    return 0;
}
