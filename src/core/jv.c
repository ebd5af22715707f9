/* jv — strict RFC 8259 JSON reader that records the line and byte column of every value and key.
 * Promises: one arena per document (jv_doc_free releases everything), bounded depth/size/string length,
 * and exactly one positioned one-line message "NAME:LINE:COL: expected X (got Y)" per failure. */
#include "core/jv.h"
#include "core/jv_text.h"

#include "core/err.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- arena ----------------------------------------------------------------------------------- */

typedef struct jv_chunk jv_chunk;
struct jv_chunk {
    jv_chunk *next;
    size_t cap, used;         /* bytes of data[] */
    max_align_t data[];
};

struct jv_doc {
    jv_chunk *chunks;         /* head is the chunk being filled */
    size_t next_cap;
    const jv *root;
    const char *name;
};

#define JV_ALIGN      (sizeof(max_align_t))
#define JV_CHUNK_MIN  ((size_t)4096)
#define JV_CHUNK_MAX  ((size_t)1 << 20)

static void *arena_alloc(jv_doc *d, size_t n) {
    if (n == 0) n = 1;
    if (n > SIZE_MAX - JV_ALIGN) return NULL;
    n = (n + JV_ALIGN - 1) / JV_ALIGN * JV_ALIGN;
    jv_chunk *c = d->chunks;
    if (c && c->cap - c->used >= n) {
        void *p = (char *)c->data + c->used;
        c->used += n;
        return p;
    }
    if (n > d->next_cap / 4) {
        /* A big block gets its own chunk, linked behind the current one so that stays usable. */
        jv_chunk *b = malloc(sizeof *b + n);
        if (!b) return NULL;
        b->cap = b->used = n;
        if (c) { b->next = c->next; c->next = b; }
        else { b->next = NULL; d->chunks = b; }
        return b->data;
    }
    jv_chunk *nc = malloc(sizeof *nc + d->next_cap);
    if (!nc) return NULL;
    nc->cap = d->next_cap;
    nc->used = n;
    nc->next = c;
    d->chunks = nc;
    if (d->next_cap < JV_CHUNK_MAX) d->next_cap *= 2;
    return nc->data;
}

void jv_doc_free(jv_doc *d) {
    if (!d) return;
    jv_chunk *c = d->chunks;
    while (c) { jv_chunk *n = c->next; free(c); c = n; }
    free(d);
}

const jv *jv_root(const jv_doc *d) { return d ? d->root : NULL; }
const char *jv_name(const jv_doc *d) { return d ? d->name : NULL; }

/* ---- message helpers --------------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if the bytes there are not valid UTF-8
 * (overlong forms, surrogates and code points above U+10FFFF are invalid). *bad gets the index of
 * the first offending byte. */
static size_t utf8_len(const unsigned char *s, size_t avail, size_t *bad) {
    unsigned c = s[0];
    size_t n;
    unsigned lo = 0x80, hi = 0xBF;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else { *bad = 0; return 0; }
    for (size_t i = 1; i < n; i++) {
        if (i >= avail) { *bad = i; return 0; }
        unsigned b = s[i];
        unsigned l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xBF;
        if (b < l || b > h) { *bad = i; return 0; }
    }
    return n;
}

static unsigned utf8_decode(const unsigned char *s, size_t n) {
    if (n == 1) return s[0];
    unsigned cp = s[0] & (0x7F >> n);
    for (size_t i = 1; i < n; i++) cp = (cp << 6) | (s[i] & 0x3F);
    return cp;
}

static const char *ctrl_name(unsigned c) {
    switch (c) {
    case '\n': return "newline";
    case '\r': return "carriage return";
    case '\t': return "tab";
    default: return NULL;
    }
}

/* Describe what is at s[pos] for "(got ...)". In word mode a run of letters/digits is shown whole
 * ("'NaN'", "'tru'"), which names the offending token rather than its first letter. */
static void describe(const unsigned char *s, size_t len, size_t pos, int word, char *out, size_t n) {
    if (pos >= len) { snprintf(out, n, "end of file"); return; }
    unsigned c = s[pos];
    if (c < 0x20 || c == 0x7F) {
        const char *nm = ctrl_name(c);
        if (nm) snprintf(out, n, "%s", nm);
        else snprintf(out, n, "byte 0x%02x", c);
        return;
    }
    if (c < 0x80) {
        int isword = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        if (word && isword) {
            size_t e = pos;
            while (e < len && e - pos < 24 &&
                   ((s[e] >= 'a' && s[e] <= 'z') || (s[e] >= 'A' && s[e] <= 'Z') ||
                    (s[e] >= '0' && s[e] <= '9') || s[e] == '_'))
                e++;
            int more = e < len && e - pos == 24;
            snprintf(out, n, "'%.*s%s'", (int)(e - pos), (const char *)s + pos, more ? "..." : "");
        } else {
            snprintf(out, n, "'%c'", (char)c);
        }
        return;
    }
    size_t bad;
    size_t k = utf8_len(s + pos, len - pos, &bad);
    if (k == 0) { snprintf(out, n, "invalid UTF-8 byte 0x%02x", c); return; }
    unsigned cp = utf8_decode(s + pos, k);
    if (cp == 0xFEFF) snprintf(out, n, "byte order mark U+FEFF");
    else snprintf(out, n, "U+%04X '%.*s'", cp, (int)k, (const char *)s + pos);
}

/* Copy text (valid UTF-8, from the document) into out for quoting in a one-line message: control
 * characters are escaped, and long text is cut at a character boundary with "...". */
void jv_clip_text(const char *text, size_t len, char *out, size_t n) {
    const unsigned char *s = (const unsigned char *)text;
    size_t o = 0, limit = 64;
    if (n == 0) return;
    for (size_t i = 0; i < len;) {
        if (i >= limit) { if (o + 4 < n) { memcpy(out + o, "...", 3); o += 3; } break; }
        unsigned c = s[i];
        char esc[8];
        size_t k = 1;
        const char *piece = (const char *)s + i;
        size_t plen = 1;
        if (c < 0x20 || c == 0x7F) {
            snprintf(esc, sizeof esc, c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : "\\u%04x", c);
            piece = esc;
            plen = strlen(esc);
        } else if (c >= 0x80) {
            size_t bad;
            k = utf8_len(s + i, len - i, &bad);
            if (k == 0) { k = 1; snprintf(esc, sizeof esc, "\\x%02x", c); piece = esc; plen = 4; }
            else plen = k;
        }
        if (o + plen + 1 > n) break;
        memcpy(out + o, piece, plen);
        o += plen;
        i += k;
    }
    out[o] = 0;
}

static int jv_verr_at(const jv_doc *d, int line, int col, int code, const char *fmt, va_list ap) {
    char msg[1536];
    vsnprintf(msg, sizeof msg, fmt, ap);
    const char *name = d && d->name ? d->name : "<json>";
    if (line > 0) return sd_err(code, "%s:%d:%d: %s", name, line, col, msg);
    return sd_err(code, "%s: %s", name, msg);
}

int jv_err(const jv_doc *d, const jv *v, const char *fmt, ...) {
    va_list ap; va_start(ap, fmt);
    int rc = jv_verr_at(d, v ? v->line : 0, v ? v->col : 0, SD_EINPUT, fmt, ap);
    va_end(ap);
    return rc;
}

int jv_err_key(const jv_doc *d, const jv *v, const char *fmt, ...) {
    va_list ap; va_start(ap, fmt);
    int line = 0, col = 0;
    if (v) {
        line = v->key ? v->key_line : v->line;
        col = v->key ? v->key_col : v->col;
    }
    int rc = jv_verr_at(d, line, col, SD_EINPUT, fmt, ap);
    va_end(ap);
    return rc;
}

/* ---- parser ------------------------------------------------------------------------------------ */

typedef struct {
    unsigned serial, hash;    /* object serial number; hash of (serial, key) */
    const char *key;
    int line, col;
} key_slot;

typedef struct {
    jv_doc *d;
    const unsigned char *s;
    size_t len, pos;
    int line;
    size_t line_start;        /* offset of the first byte of the current line */
    jv **stk;                 /* members of the open containers */
    size_t nstk, capstk;
    char *buf;                /* scratch for decoded strings and number literals */
    size_t nbuf, capbuf;
    key_slot *keys;           /* open-addressing set of (object, key) seen so far */
    size_t nkeys, capkeys;
    unsigned serial;
} parser;

static int col_of(const parser *p, size_t pos) { return (int)(pos - p->line_start + 1); }

__attribute__((format(printf, 4, 5)))
static int perr(const parser *p, size_t pos, int code, const char *fmt, ...) {
    va_list ap; va_start(ap, fmt);
    int rc = jv_verr_at(p->d, p->line, col_of(p, pos), code, fmt, ap);
    va_end(ap);
    return rc;
}

/* "expected WHAT (got <thing at pos>)" */
static int perr_got(const parser *p, size_t pos, int word, const char *what) {
    char got[96];
    describe(p->s, p->len, pos, word, got, sizeof got);
    return perr(p, pos, SD_EINPUT, "expected %s (got %s)", what, got);
}

static int oom(void) { return sd_err(SD_ENOMEM, "out of memory while parsing JSON"); }

static void skip_ws(parser *p) {
    while (p->pos < p->len) {
        unsigned char c = p->s[p->pos];
        if (c == '\n') { p->pos++; p->line++; p->line_start = p->pos; }
        else if (c == ' ' || c == '\t' || c == '\r') p->pos++;
        else break;
    }
}

static int buf_put(parser *p, const void *src, size_t n) {
    if (p->capbuf - p->nbuf < n) {
        size_t cap = p->capbuf ? p->capbuf : 256;
        while (cap - p->nbuf < n) cap *= 2;
        char *b = realloc(p->buf, cap);
        if (!b) return oom();
        p->buf = b;
        p->capbuf = cap;
    }
    memcpy(p->buf + p->nbuf, src, n);
    p->nbuf += n;
    return 0;
}

static int stk_push(parser *p, jv *v) {
    if (p->nstk == p->capstk) {
        size_t cap = p->capstk ? p->capstk * 2 : 64;
        jv **s = realloc(p->stk, cap * sizeof *s);
        if (!s) return oom();
        p->stk = s;
        p->capstk = cap;
    }
    p->stk[p->nstk++] = v;
    return 0;
}

static jv *new_node(parser *p, jv_type t, size_t pos) {
    jv *v = arena_alloc(p->d, sizeof *v);
    if (!v) return NULL;
    memset(v, 0, sizeof *v);
    v->type = t;
    v->line = p->line;
    v->col = col_of(p, pos);
    return v;
}

static unsigned key_hash(unsigned serial, const char *k) {
    uint32_t h = 2166136261u ^ serial;
    h *= 16777619u;
    for (; *k; k++) { h ^= (unsigned char)*k; h *= 16777619u; }
    return h;
}

/* Record key k of object `serial`; a duplicate is an error naming both positions. */
static int key_add(parser *p, unsigned serial, const char *k, int line, int col, size_t pos) {
    if (2 * (p->nkeys + 1) > p->capkeys) {
        size_t cap = p->capkeys ? p->capkeys * 2 : 64;
        key_slot *t = calloc(cap, sizeof *t);
        if (!t) return oom();
        for (size_t i = 0; i < p->capkeys; i++) {
            if (!p->keys[i].key) continue;
            size_t j = p->keys[i].hash & (cap - 1);
            while (t[j].key) j = (j + 1) & (cap - 1);
            t[j] = p->keys[i];
        }
        free(p->keys);
        p->keys = t;
        p->capkeys = cap;
    }
    unsigned h = key_hash(serial, k);
    size_t j = h & (p->capkeys - 1);
    for (; p->keys[j].key; j = (j + 1) & (p->capkeys - 1)) {
        key_slot *e = &p->keys[j];
        if (e->hash == h && e->serial == serial && strcmp(e->key, k) == 0) {
            char shown[256];
            jv_clip_text(k, strlen(k), shown, sizeof shown);
            return perr(p, pos, SD_EINPUT, "duplicate key '%s' (first at %d:%d)", shown, e->line, e->col);
        }
    }
    p->keys[j] = (key_slot){ .serial = serial, .hash = h, .key = k, .line = line, .col = col };
    p->nkeys++;
    return 0;
}

static int hexval(unsigned c) {
    if (c >= '0' && c <= '9') return (int)(c - '0');
    if (c >= 'a' && c <= 'f') return (int)(c - 'a' + 10);
    if (c >= 'A' && c <= 'F') return (int)(c - 'A' + 10);
    return -1;
}

/* Four hex digits at p->pos (just after "\u"). */
static int read_hex4(parser *p, unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = p->pos < p->len ? hexval(p->s[p->pos]) : -1;
        if (h < 0) return perr_got(p, p->pos, 0, "4 hex digits after '\\u'");
        v = v * 16 + (unsigned)h;
        p->pos++;
    }
    *out = v;
    return 0;
}

static int put_utf8(parser *p, unsigned cp) {
    unsigned char b[4];
    size_t n;
    if (cp < 0x80) { b[0] = (unsigned char)cp; n = 1; }
    else if (cp < 0x800) { b[0] = (unsigned char)(0xC0 | cp >> 6); b[1] = (unsigned char)(0x80 | (cp & 0x3F)); n = 2; }
    else if (cp < 0x10000) {
        b[0] = (unsigned char)(0xE0 | cp >> 12); b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (unsigned char)(0x80 | (cp & 0x3F)); n = 3;
    } else {
        b[0] = (unsigned char)(0xF0 | cp >> 18); b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F)); b[3] = (unsigned char)(0x80 | (cp & 0x3F)); n = 4;
    }
    return buf_put(p, b, n);
}

/* Escape sequence at p->pos (the backslash). */
static int parse_escape(parser *p, int is_key) {
    size_t esc = p->pos;
    p->pos++;
    if (p->pos >= p->len) return perr_got(p, p->pos, 0, "an escape character (one of \" \\ / b f n r t u)");
    unsigned c = p->s[p->pos];
    char ch;
    switch (c) {
    case '"': ch = '"'; break;
    case '\\': ch = '\\'; break;
    case '/': ch = '/'; break;
    case 'b': ch = '\b'; break;
    case 'f': ch = '\f'; break;
    case 'n': ch = '\n'; break;
    case 'r': ch = '\r'; break;
    case 't': ch = '\t'; break;
    case 'u': {
        p->pos++;
        unsigned cp = 0;
        SD_TRY(read_hex4(p, &cp));
        if (cp >= 0xDC00 && cp <= 0xDFFF)
            return perr(p, esc, SD_EINPUT, "expected a high surrogate before low surrogate '\\u%04X' "
                        "(got lone low surrogate)", cp);
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            char what[96];
            snprintf(what, sizeof what, "a low surrogate escape '\\uDC00'-'\\uDFFF' after '\\u%04X'", cp);
            size_t lo_at = p->pos;
            if (lo_at + 1 >= p->len || p->s[lo_at] != '\\' || p->s[lo_at + 1] != 'u')
                return perr_got(p, lo_at, 0, what);
            p->pos += 2;
            unsigned lo = 0;
            SD_TRY(read_hex4(p, &lo));
            if (lo < 0xDC00 || lo > 0xDFFF)
                return perr(p, lo_at, SD_EINPUT, "expected %s (got '\\u%04X')", what, lo);
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        if (cp == 0 && is_key)
            return perr(p, esc, SD_EINPUT, "expected a key without NUL characters (got '\\u0000')");
        return put_utf8(p, cp);
    }
    default:
        return perr_got(p, p->pos, 0, "an escape character (one of \" \\ / b f n r t u)");
    }
    p->pos++;
    return buf_put(p, &ch, 1);
}

/* String at p->pos (the opening quote) into the arena. */
static int parse_string(parser *p, const char **out, size_t *out_len, int is_key) {
    size_t start = p->pos;
    p->pos++;
    p->nbuf = 0;
    for (;;) {
        if (p->nbuf > JV_MAX_STRING)
            return perr(p, start, SD_ELIMIT, "expected a string of at most %u bytes (got a longer one)",
                        JV_MAX_STRING);
        if (p->pos >= p->len) return perr_got(p, p->pos, 0, "'\"' to end the string");
        unsigned c = p->s[p->pos];
        if (c == '"') { p->pos++; break; }
        if (c == '\\') { SD_TRY(parse_escape(p, is_key)); continue; }
        if (c == '\n' || c == '\r') return perr_got(p, p->pos, 0, "'\"' to end the string");
        if (c < 0x20) return perr_got(p, p->pos, 0, "a control character to be escaped in a string");
        if (c < 0x80) {
            /* a run of plain ASCII */
            size_t e = p->pos + 1;
            while (e < p->len && e - p->pos < 4096 && p->s[e] >= 0x20 && p->s[e] < 0x80 &&
                   p->s[e] != '"' && p->s[e] != '\\')
                e++;
            SD_TRY(buf_put(p, p->s + p->pos, e - p->pos));
            p->pos = e;
            continue;
        }
        size_t bad = 0;
        size_t k = utf8_len(p->s + p->pos, p->len - p->pos, &bad);
        if (k == 0) {
            char got[64];
            size_t o = 0;
            for (size_t i = 0; i <= bad && p->pos + i < p->len; i++)
                o += (size_t)snprintf(got + o, sizeof got - o, "%s0x%02x", i ? " " : "byte ", p->s[p->pos + i]);
            if (p->pos + bad >= p->len) snprintf(got + o, sizeof got - o, " then end of file");
            return perr(p, p->pos, SD_EINPUT, "expected valid UTF-8 (got %s)", got);
        }
        SD_TRY(buf_put(p, p->s + p->pos, k));
        p->pos += k;
    }
    if (p->nbuf > JV_MAX_STRING)
        return perr(p, start, SD_ELIMIT, "expected a string of at most %u bytes (got a longer one)",
                    JV_MAX_STRING);
    char *s = arena_alloc(p->d, p->nbuf + 1);
    if (!s) return oom();
    if (p->nbuf) memcpy(s, p->buf, p->nbuf);
    s[p->nbuf] = 0;
    *out = s;
    *out_len = p->nbuf;
    return 0;
}

static int is_digit(const parser *p, size_t pos) { return pos < p->len && p->s[pos] >= '0' && p->s[pos] <= '9'; }

static int parse_number(parser *p, jv *v) {
    size_t start = p->pos, pos = p->pos;
    int integral = 1;
    if (p->s[pos] == '-') {
        pos++;
        if (!is_digit(p, pos)) return perr_got(p, pos, 1, "a digit after '-'");
    }
    if (p->s[pos] == '0') {
        pos++;
        if (is_digit(p, pos)) {
            size_t e = pos;
            while (is_digit(p, e) && e - start < 24) e++;
            return perr(p, start, SD_EINPUT, "expected a number without leading zeros (got '%.*s%s')",
                        (int)(e - start), (const char *)p->s + start, is_digit(p, e) ? "..." : "");
        }
    } else {
        while (is_digit(p, pos)) pos++;
    }
    if (pos < p->len && p->s[pos] == '.') {
        integral = 0;
        pos++;
        if (!is_digit(p, pos)) return perr_got(p, pos, 0, "a digit after '.'");
        while (is_digit(p, pos)) pos++;
    }
    if (pos < p->len && (p->s[pos] == 'e' || p->s[pos] == 'E')) {
        integral = 0;
        pos++;
        if (pos < p->len && (p->s[pos] == '+' || p->s[pos] == '-')) pos++;
        if (!is_digit(p, pos)) return perr_got(p, pos, 0, "a digit in the exponent");
        while (is_digit(p, pos)) pos++;
    }
    p->pos = pos;

    /* strtod follows the C locale's decimal point: substitute it for '.' in a NUL-terminated copy. */
    const char *dp = localeconv()->decimal_point;
    if (!dp || !*dp) dp = ".";
    p->nbuf = 0;
    for (size_t i = start; i < pos; i++) {
        if (p->s[i] == '.') SD_TRY(buf_put(p, dp, strlen(dp)));
        else SD_TRY(buf_put(p, p->s + i, 1));
    }
    SD_TRY(buf_put(p, "", 1));
    errno = 0;
    double x = strtod(p->buf, NULL);
    if (errno == ERANGE && fabs(x) > 1.0) {
        size_t n = pos - start;
        return perr(p, start, SD_EINPUT, "expected a number within double range (got %.*s%s: number out of range)",
                    (int)(n > 32 ? 32 : n), (const char *)p->s + start, n > 32 ? "..." : "");
    }
    v->number = x;
    if (integral) {
        errno = 0;
        long long ll = strtoll(p->buf, NULL, 10);
        if (errno == 0) { v->is_integer = 1; v->integer = ll; }
    }
    return 0;
}

static int is_word_char(unsigned c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static int parse_value(parser *p, int depth, const char *expect, jv **out);

static int depth_check(parser *p, int depth) {
    if (depth > JV_MAX_DEPTH)
        return perr(p, p->pos, SD_ELIMIT, "expected nesting depth at most %d (got %d)", JV_MAX_DEPTH, depth);
    return 0;
}

/* Move the members pushed since base into v->items (arena). */
static int close_container(parser *p, jv *v, size_t base) {
    v->count = p->nstk - base;
    if (v->count) {
        v->items = arena_alloc(p->d, v->count * sizeof *v->items);
        if (!v->items) return oom();
        memcpy(v->items, p->stk + base, v->count * sizeof *v->items);
    }
    p->nstk = base;
    return 0;
}

/* After a container member: ',' means another member follows (1), CLOSE ends the container (0). */
static int after_member(parser *p, char close) {
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == ',') { p->pos++; return 1; }
    if (p->pos < p->len && p->s[p->pos] == (unsigned char)close) { p->pos++; return 0; }
    return perr_got(p, p->pos, 1, close == ']' ? "',' or ']'" : "',' or '}'");
}

static int parse_array(parser *p, int depth, jv *v) {
    size_t base = p->nstk;
    p->pos++;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == ']') { p->pos++; return close_container(p, v, base); }
    const char *expect = "a value or ']'";
    for (;;) {
        jv *item;
        SD_TRY(parse_value(p, depth + 1, expect, &item));
        SD_TRY(stk_push(p, item));
        int more = after_member(p, ']');
        if (more <= 0) return more < 0 ? more : close_container(p, v, base);
        expect = "a value";
    }
}

static int parse_object(parser *p, int depth, jv *v) {
    size_t base = p->nstk;
    unsigned serial = ++p->serial;
    p->pos++;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == '}') { p->pos++; return close_container(p, v, base); }
    const char *expect = "a string key or '}'";
    for (;;) {
        skip_ws(p);
        if (p->pos >= p->len || p->s[p->pos] != '"') return perr_got(p, p->pos, 1, expect);
        size_t kpos = p->pos;
        int kline = p->line, kcol = col_of(p, kpos);
        const char *key;
        size_t klen;
        SD_TRY(parse_string(p, &key, &klen, 1));
        SD_TRY(key_add(p, serial, key, kline, kcol, kpos));
        skip_ws(p);
        if (p->pos >= p->len || p->s[p->pos] != ':') {
            char what[160], shown[128];
            jv_clip_text(key, klen, shown, sizeof shown);
            snprintf(what, sizeof what, "':' after key '%s'", shown);
            return perr_got(p, p->pos, 1, what);
        }
        p->pos++;
        jv *item;
        SD_TRY(parse_value(p, depth + 1, "a value", &item));
        item->key = key;
        item->key_line = kline;
        item->key_col = kcol;
        SD_TRY(stk_push(p, item));
        int more = after_member(p, '}');
        if (more <= 0) return more < 0 ? more : close_container(p, v, base);
        expect = "a string key";
    }
}

static int parse_value(parser *p, int depth, const char *expect, jv **out) {
    skip_ws(p);
    if (p->pos >= p->len) return perr_got(p, p->pos, 1, expect);
    unsigned c = p->s[p->pos];
    jv *v;
    if (c == '{' || c == '[') {
        SD_TRY(depth_check(p, depth));
        if (!(v = new_node(p, c == '{' ? JV_OBJECT : JV_ARRAY, p->pos))) return oom();
        SD_TRY(c == '{' ? parse_object(p, depth, v) : parse_array(p, depth, v));
    } else if (c == '"') {
        if (!(v = new_node(p, JV_STRING, p->pos))) return oom();
        SD_TRY(parse_string(p, &v->string, &v->string_len, 0));
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        if (!(v = new_node(p, JV_NUMBER, p->pos))) return oom();
        SD_TRY(parse_number(p, v));
    } else if (is_word_char(c)) {
        size_t e = p->pos;
        while (e < p->len && is_word_char(p->s[e])) e++;
        size_t n = e - p->pos;
        const char *w = (const char *)p->s + p->pos;
        jv_type t;
        int b = 0;
        if (n == 4 && memcmp(w, "true", 4) == 0) { t = JV_BOOL; b = 1; }
        else if (n == 5 && memcmp(w, "false", 5) == 0) t = JV_BOOL;
        else if (n == 4 && memcmp(w, "null", 4) == 0) t = JV_NULL;
        else return perr_got(p, p->pos, 1, expect);
        if (!(v = new_node(p, t, p->pos))) return oom();
        v->boolean = b;
        p->pos = e;
    } else {
        return perr_got(p, p->pos, 1, expect);
    }
    *out = v;
    return 0;
}

static int doc_new(jv_doc **out, const char *name) {
    jv_doc *d = calloc(1, sizeof *d);
    if (!d) return oom();
    d->next_cap = JV_CHUNK_MIN;
    if (!name) name = "<json>";
    size_t n = strlen(name);
    char *nm = arena_alloc(d, n + 1);
    if (!nm) { jv_doc_free(d); return oom(); }
    memcpy(nm, name, n + 1);
    d->name = nm;
    *out = d;
    return 0;
}

int jv_parse(jv_doc **out, const char *name, const char *text, size_t len) {
    *out = NULL;
    jv_doc *d = NULL;
    SD_TRY(doc_new(&d, name));
    if (len > JV_MAX_DOC) {
        int rc = sd_err(SD_ELIMIT, "%s:1:1: expected a document of at most %u bytes (got %zu bytes)",
                        d->name, JV_MAX_DOC, len);
        jv_doc_free(d);
        return rc;
    }
    parser p = { .d = d, .s = (const unsigned char *)(text ? text : ""), .len = text ? len : 0,
                 .line = 1 };
    jv *root = NULL;
    int rc = parse_value(&p, 1, "a value", &root);
    if (rc == 0) {
        skip_ws(&p);
        if (p.pos < p.len) rc = perr_got(&p, p.pos, 1, "end of file");
    }
    free(p.stk);
    free(p.buf);
    free(p.keys);
    if (rc == SD_ENOMEM) sd_err_prefix(rc, "%s", d->name);   /* which file could not be held */
    if (rc < 0) { jv_doc_free(d); return rc; }
    d->root = root;
    *out = d;
    return 0;
}

int jv_read(const char *name, const char *text, size_t len, int (*read)(const jv_doc *d, void *out), void *out) {
    jv_doc *d = NULL;
    SD_TRY(text ? jv_parse(&d, name, text, len) : jv_load(&d, name));
    int rc = read(d, out);
    jv_doc_free(d);
    return rc;
}

/* JV_MAX_DOC in words, for messages */
#define JV_MAX_DOC_WORDS "64 MiB"

int jv_read_bounded(const char *path, char **text, size_t *len) {
    *text = NULL;
    *len = 0;
    if (!path) return sd_err(SD_EIO, "jv_load: no path given");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return sd_err(SD_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return sd_err(SD_EIO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (S_ISDIR(st.st_mode)) { close(fd); return sd_err(SD_EIO, "%s: cannot read: %s", path, strerror(EISDIR)); }
    if (S_ISREG(st.st_mode) && (uintmax_t)st.st_size > JV_MAX_DOC) {
        close(fd);
        return sd_err(SD_ELIMIT, "%s:1:1: over " JV_MAX_DOC_WORDS ": expected a document of at most %u bytes (got %jd bytes)",
                      path, JV_MAX_DOC, (intmax_t)st.st_size);
    }
    /* a regular file is read in one allocation of its size; a pipe grows to the bound and no further */
    size_t cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 65536, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        return sd_err(SD_ENOMEM, "%s: out of memory reading %zu bytes", path, cap);
    }
    for (;;) {
        if (n == cap) {
            if (cap > JV_MAX_DOC) break;
            size_t nc = cap * 2 > (size_t)JV_MAX_DOC + 1 ? (size_t)JV_MAX_DOC + 1 : cap * 2;
            char *b = realloc(buf, nc);
            if (!b) {
                free(buf);
                close(fd);
                return sd_err(SD_ENOMEM, "%s: out of memory reading %zu bytes", path, nc);
            }
            buf = b;
            cap = nc;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            free(buf);
            close(fd);
            return sd_err(SD_EIO, "%s: cannot read: %s", path, strerror(e));
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    if (n > JV_MAX_DOC) {
        free(buf);
        return sd_err(SD_ELIMIT, "%s:1:1: over " JV_MAX_DOC_WORDS ": expected a document of at most %u bytes (got more)",
                      path, JV_MAX_DOC);
    }
    *text = buf;
    *len = n;
    return 0;
}

int jv_load(jv_doc **out, const char *path) {
    *out = NULL;
    char *buf = NULL;
    size_t n = 0;
    SD_TRY(jv_read_bounded(path, &buf, &n));
    int rc = jv_parse(out, path, buf, n);
    free(buf);
    return rc;
}
