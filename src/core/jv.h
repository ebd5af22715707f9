/* jv — a small JSON reader that keeps the line and column of every value, for input files whose
 * errors must name file:line:column (workload specs, published results, scoring data, templates).
 * jansson stays the writer (and reader of machine-made files); jansson cannot say where a value was.
 * Strict RFC 8259: duplicate keys, invalid UTF-8, bad escapes, trailing commas and garbage after the
 * value are errors; depth, string length and document size are bounded. Errors are one line:
 * "FILE:LINE:COL: expected ... (got ...)" with status SD_EINPUT (SD_ELIMIT past a bound, SD_EIO for I/O). */
#ifndef SD_JV_H
#define SD_JV_H

#include <stddef.h>

#define JV_MAX_DEPTH   128
#define JV_MAX_DOC     (64u << 20)   /* bytes */
#define JV_MAX_STRING  (1u << 20)    /* bytes in one decoded string */

typedef enum jv_type { JV_NULL, JV_BOOL, JV_NUMBER, JV_STRING, JV_ARRAY, JV_OBJECT } jv_type;

typedef struct jv jv;
struct jv {
    jv_type type;
    int line, col;          /* 1-based position of the value's first character (col counts bytes) */
    const char *key;        /* for members of an object: the key, else NULL */
    int key_line, key_col;  /* position of the key's opening quote */
    int boolean;            /* JV_BOOL */
    double number;          /* JV_NUMBER */
    int is_integer;         /* JV_NUMBER written without fraction/exponent and fits in long long */
    long long integer;      /* valid when is_integer */
    const char *string;     /* JV_STRING, NUL-terminated UTF-8 (may contain \u0000 as embedded NUL) */
    size_t string_len;
    jv **items;             /* JV_ARRAY elements / JV_OBJECT members in document order */
    size_t count;
};

typedef struct jv_doc jv_doc;   /* owns every node and string (one arena) */

/* Parse text (len bytes, need not be NUL-terminated); name is used in messages (a path). */
int jv_parse(jv_doc **out, const char *name, const char *text, size_t len);
/* Read and parse a file (bounded by JV_MAX_DOC). */
int jv_load(jv_doc **out, const char *path);
/* Read a file once (a pipe works), bounded by JV_MAX_DOC: SD_ELIMIT "PATH:1:1: over 64 MiB: ..." past it, from its
 * size alone for a regular file; SD_ENOMEM with the path and size. *text (not NUL-terminated), caller frees. */
int jv_read_bounded(const char *path, char **text, size_t *len);
void jv_doc_free(jv_doc *d);
/* Parse text (len bytes; or, when text is NULL, load the file name), call read(d, out) on the document
 * and free it: the parse's or read's status. The one way the readers of our JSON files begin and end. */
int jv_read(const char *name, const char *text, size_t len, int (*read)(const jv_doc *d, void *out), void *out);
const jv *jv_root(const jv_doc *d);
const char *jv_name(const jv_doc *d);

/* Member of an object by key, or NULL (also NULL if obj is not an object). */
const jv *jv_get(const jv *obj, const char *key);
const char *jv_type_name(jv_type t);   /* "null", "boolean", "number", "string", "array", "object" */

/* Set an error "NAME:LINE:COL: message" at v (or at v's key when at_key) and return SD_EINPUT. */
int jv_err(const jv_doc *d, const jv *v, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int jv_err_key(const jv_doc *d, const jv *v, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Schema helpers: each checks, and on failure sets a positioned message and returns SD_EINPUT.
 * allowed is a NULL-terminated list; an unknown key gives
 *   "spec.json:3:5: unknown key 'lr8' in optimizer (expected one of: name, lr, momentum)". */
int jv_check_keys(const jv_doc *d, const jv *obj, const char *what, const char *const *allowed);
int jv_expect(const jv_doc *d, const jv *v, jv_type t, const char *what);
/* Member accessors: required=1 makes a missing key an error ("missing key 'x' in what", positioned at
 * the object); when absent and not required, *out is left unchanged and 0 returned. Range errors say
 * "value 1.5 of 'rate' out of range [0, 1)"-style text; min > max means unbounded.
 * jv_get_int also accepts an integral value written with a fraction or exponent (64.0, 1e3) up to 2^53;
 * jv_get_str rejects a string with an embedded NUL (\u0000), which a C string would silently cut.
 * Object keys never contain NUL (a "\u0000" in a key is a parse error), so keys compare as C strings. */
int jv_get_str(const jv_doc *d, const jv *obj, const char *key, const char *what, int required,
               const char **out);
int jv_get_int(const jv_doc *d, const jv *obj, const char *key, const char *what, int required,
               long long min, long long max, long long *out);
int jv_get_num(const jv_doc *d, const jv *obj, const char *key, const char *what, int required,
               double min, double max, double *out);
int jv_get_bool(const jv_doc *d, const jv *obj, const char *key, const char *what, int required, int *out);
/* The root of one of our files: an object with only the allowed keys and a "schema" among schemas
 * (NULL-terminated). Returns the index of its schema, or SD_EINPUT "unsupported schema 'x' (expected a or b)". */
int jv_root_schema(const jv_doc *d, const char *what, const char *const *allowed, const char *const *schemas);
/* jv_get_str copied into dst (cap bytes); a longer string is an error "'key' is too long (at most N bytes)". */
int jv_get_str_copy(const jv_doc *d, const jv *obj, const char *key, const char *what, int required, char *dst,
                    size_t cap);

#endif
