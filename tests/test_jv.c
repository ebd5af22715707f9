/* test_jv — the positioned JSON reader: values and their positions, every error class with its exact
 * one-line message, the bounds, UTF-8 and surrogates, number edge cases, jv_load and the schema helpers. */
#include "core/err.h"
#include "core/jv.h"
#include "testutil.h"

#include <limits.h>
#include <math.h>

static jv_doc *parse_ok(const char *text) {
    jv_doc *d = NULL;
    int rc = jv_parse(&d, "t.json", text, strlen(text));
    cr_assert_eq(rc, 0, "parse of %s failed: %s", text, sd_errmsg());
    cr_assert_not_null(d);
    cr_assert_not_null(jv_root(d));
    return d;
}

/* Parse len bytes expecting failure with status code and exactly message msg. */
static void parse_fail_n(const char *text, size_t len, int code, const char *msg) {
    jv_doc *d = (jv_doc *)1;
    sd_err_clear();
    int rc = jv_parse(&d, "t.json", text, len);
    cr_assert_eq(rc, code, "input %.60s: rc %d (%s), expected %d", text, rc, sd_errmsg(), code);
    cr_assert_null(d, "failed parse must leave *out NULL");
    cr_assert_str_eq(sd_errmsg(), msg, "input %.60s", text);
    cr_assert_null(strchr(sd_errmsg(), '\n'), "message must be one line");
}

static void parse_fail(const char *text, const char *msg) { parse_fail_n(text, strlen(text), SD_EINPUT, msg); }

/* ---- valid documents and positions -------------------------------------------------------------- */

Test(jv, scalars) {
    jv_doc *d = parse_ok("  true ");
    cr_assert_eq(jv_root(d)->type, JV_BOOL);
    cr_assert_eq(jv_root(d)->boolean, 1);
    cr_assert_eq(jv_root(d)->line, 1);
    cr_assert_eq(jv_root(d)->col, 3);
    cr_assert_null(jv_root(d)->key);
    jv_doc_free(d);

    d = parse_ok("false");
    cr_assert_eq(jv_root(d)->type, JV_BOOL);
    cr_assert_eq(jv_root(d)->boolean, 0);
    jv_doc_free(d);

    d = parse_ok("\n\r\n\tnull");
    cr_assert_eq(jv_root(d)->type, JV_NULL);
    cr_assert_eq(jv_root(d)->line, 3);
    cr_assert_eq(jv_root(d)->col, 2);
    jv_doc_free(d);

    d = parse_ok("\"h\\u00e9llo\"");
    cr_assert_eq(jv_root(d)->type, JV_STRING);
    cr_assert_str_eq(jv_root(d)->string, "h\xc3\xa9llo");
    cr_assert_eq(jv_root(d)->string_len, 6);
    jv_doc_free(d);

    d = parse_ok("\"\"");
    cr_assert_eq(jv_root(d)->type, JV_STRING);
    cr_assert_str_eq(jv_root(d)->string, "");
    cr_assert_eq(jv_root(d)->string_len, 0);
    jv_doc_free(d);

    d = parse_ok("{\"\": \"\"}");
    cr_assert_str_eq(jv_root(d)->items[0]->key, "");
    cr_assert_eq(jv_get(jv_root(d), ""), jv_root(d)->items[0]);
    jv_doc_free(d);

    d = parse_ok("-12.5e1");
    cr_assert_eq(jv_root(d)->type, JV_NUMBER);
    cr_assert_float_eq(jv_root(d)->number, -125.0, 1e-12);
    cr_assert_eq(jv_root(d)->is_integer, 0);
    jv_doc_free(d);

    d = parse_ok("[]");
    cr_assert_eq(jv_root(d)->type, JV_ARRAY);
    cr_assert_eq(jv_root(d)->count, 0);
    jv_doc_free(d);

    d = parse_ok("{}");
    cr_assert_eq(jv_root(d)->type, JV_OBJECT);
    cr_assert_eq(jv_root(d)->count, 0);
    cr_assert_str_eq(jv_name(d), "t.json");
    jv_doc_free(d);
}

Test(jv, nested_positions) {
    const char *text =
        "{\n"
        "  \"name\": \"sgd\",\n"
        "  \"opt\": {\"lr\": 0.1, \"m\": [1, [true, null], {\"x\": -3}]},\n"
        "\t\"s\" :\"\xc3\xa9\"\n"
        "}\n";
    jv_doc *d = parse_ok(text);
    const jv *r = jv_root(d);
    cr_assert_eq(r->type, JV_OBJECT);
    cr_assert_eq(r->count, 3);
    cr_assert_eq(r->line, 1);
    cr_assert_eq(r->col, 1);

    const jv *name = r->items[0];
    cr_assert_str_eq(name->key, "name");
    cr_assert_eq(name->key_line, 2);
    cr_assert_eq(name->key_col, 3);
    cr_assert_eq(name->line, 2);
    cr_assert_eq(name->col, 11);
    cr_assert_str_eq(name->string, "sgd");

    const jv *opt = jv_get(r, "opt");
    cr_assert_eq(opt, r->items[1]);
    cr_assert_eq(opt->type, JV_OBJECT);
    cr_assert_eq(opt->key_line, 3);
    cr_assert_eq(opt->key_col, 3);
    cr_assert_eq(opt->line, 3);
    cr_assert_eq(opt->col, 10);

    const jv *lr = jv_get(opt, "lr");
    cr_assert_not_null(lr);
    cr_assert_eq(lr->key_col, 11);
    cr_assert_eq(lr->col, 17);
    cr_assert_float_eq(lr->number, 0.1, 1e-15);

    const jv *m = jv_get(opt, "m");
    cr_assert_eq(m->type, JV_ARRAY);
    cr_assert_eq(m->count, 3);
    cr_assert_eq(m->col, 27);
    cr_assert_null(m->items[0]->key);
    cr_assert_eq(m->items[0]->is_integer, 1);
    cr_assert_eq(m->items[0]->integer, 1);
    cr_assert_eq(m->items[0]->col, 28);
    const jv *inner = m->items[1];
    cr_assert_eq(inner->type, JV_ARRAY);
    cr_assert_eq(inner->col, 31);
    cr_assert_eq(inner->count, 2);
    cr_assert_eq(inner->items[0]->col, 32);
    cr_assert_eq(inner->items[1]->type, JV_NULL);
    cr_assert_eq(inner->items[1]->col, 38);
    const jv *x = jv_get(m->items[2], "x");
    cr_assert_not_null(x);
    cr_assert_eq(x->line, 3);
    cr_assert_eq(x->key_col, 46);
    cr_assert_eq(x->col, 51);
    cr_assert_eq(x->integer, -3);

    const jv *s = jv_get(r, "s");
    cr_assert_eq(s->key_line, 4);
    cr_assert_eq(s->key_col, 2);
    cr_assert_eq(s->col, 7);
    cr_assert_str_eq(s->string, "\xc3\xa9");

    cr_assert_null(jv_get(r, "missing"));
    cr_assert_null(jv_get(m, "x"), "jv_get on an array is NULL");
    cr_assert_null(jv_get(NULL, "x"));
    jv_doc_free(d);
}

Test(jv, columns_are_bytes) {
    /* "é" is two bytes: the value after it starts at byte column 10. */
    jv_doc *d = parse_ok("[\"\xc3\xa9\xc3\xa9\", 7]");
    cr_assert_eq(jv_root(d)->items[1]->col, 10);
    jv_doc_free(d);
}

Test(jv, escapes) {
    jv_doc *d = parse_ok("\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u0041 \\u20AC \\ud83d\\ude00\"");
    const char *want = "\" \\ / \b \f \n \r \t A \xe2\x82\xac \xf0\x9f\x98\x80";
    cr_assert_str_eq(jv_root(d)->string, want);
    cr_assert_eq(jv_root(d)->string_len, strlen(want));
    jv_doc_free(d);

    d = parse_ok("\"a\\u0000b\"");
    cr_assert_eq(jv_root(d)->string_len, 3);
    cr_assert_eq(memcmp(jv_root(d)->string, "a\0b", 4), 0);
    jv_doc_free(d);
}

Test(jv, not_nul_terminated) {
    const char text[] = { '[', '1', ',', '2', ']', '9', '9' };
    jv_doc *d = NULL;
    cr_assert_eq(jv_parse(&d, "t.json", text, 5), 0, "%s", sd_errmsg());
    cr_assert_eq(jv_root(d)->count, 2);
    jv_doc_free(d);
    /* A number running to the end of the buffer. */
    cr_assert_eq(jv_parse(&d, "t.json", text + 1, 1), 0, "%s", sd_errmsg());
    cr_assert_eq(jv_root(d)->integer, 1);
    jv_doc_free(d);
}

Test(jv, big_document) {
    /* Many keys in one object and many elements: exercises the arena and the key set growth. */
    size_t n = 20000, cap = n * 24 + 16, o = 0;
    char *t = malloc(cap);
    t[o++] = '{';
    for (size_t i = 0; i < n; i++) o += (size_t)snprintf(t + o, cap - o, "%s\"k%zu\": [%zu]", i ? "," : "", i, i);
    t[o++] = '}';
    jv_doc *d = NULL;
    cr_assert_eq(jv_parse(&d, "big", t, o), 0, "%s", sd_errmsg());
    cr_assert_eq(jv_root(d)->count, n);
    const jv *v = jv_get(jv_root(d), "k12345");
    cr_assert_not_null(v);
    cr_assert_eq(v->items[0]->integer, 12345);
    jv_doc_free(d);
    /* The same with one duplicate at the end. */
    o--;
    o += (size_t)snprintf(t + o, cap - o, ",\"k7\": 1}");
    cr_assert_eq(jv_parse(&d, "big", t, o), SD_EINPUT);
    cr_assert_not_null(strstr(sd_errmsg(), "duplicate key 'k7' (first at 1:"), "%s", sd_errmsg());
    free(t);
}

/* ---- syntax errors ---------------------------------------------------------------------------- */

Test(jv, syntax_errors) {
    parse_fail("", "t.json:1:1: expected a value (got end of file)");
    parse_fail("   \n  ", "t.json:2:3: expected a value (got end of file)");
    parse_fail("{\"a\": 1,}", "t.json:1:9: expected a string key (got '}')");
    parse_fail("[1, 2,]", "t.json:1:7: expected a value (got ']')");
    parse_fail("[1 2]", "t.json:1:4: expected ',' or ']' (got '2')");
    parse_fail("{\"a\" 1}", "t.json:1:6: expected ':' after key 'a' (got '1')");
    parse_fail("{\"a\": 1 \"b\": 2}", "t.json:1:9: expected ',' or '}' (got '\"')");
    parse_fail("{a: 1}", "t.json:1:2: expected a string key or '}' (got 'a')");
    parse_fail("{\n  \"a\": [1,\n", "t.json:3:1: expected a value (got end of file)");
    parse_fail("[", "t.json:1:2: expected a value or ']' (got end of file)");
    parse_fail("{\"a\": 1", "t.json:1:8: expected ',' or '}' (got end of file)");
    parse_fail("{\"a\":}", "t.json:1:6: expected a value (got '}')");
    parse_fail("tru", "t.json:1:1: expected a value (got 'tru')");
    parse_fail("[True]", "t.json:1:2: expected a value or ']' (got 'True')");
    parse_fail("nulls", "t.json:1:1: expected a value (got 'nulls')");
    parse_fail("{} {}", "t.json:1:4: expected end of file (got '{')");
    parse_fail("1 2", "t.json:1:3: expected end of file (got '2')");
    parse_fail("[1]\n]", "t.json:2:1: expected end of file (got ']')");
    parse_fail("'a'", "t.json:1:1: expected a value (got ''')");
    parse_fail("[1,\x01]", "t.json:1:4: expected a value (got byte 0x01)");
    parse_fail("\xef\xbb\xbf{}", "t.json:1:1: expected a value (got byte order mark U+FEFF)");
    parse_fail("[\xc2\xa0" "1]", "t.json:1:2: expected a value or ']' (got U+00A0 '\xc2\xa0')");
    parse_fail("[\xff]", "t.json:1:2: expected a value or ']' (got invalid UTF-8 byte 0xff)");
}

Test(jv, comments_rejected) {
    parse_fail("// c\n{}", "t.json:1:1: expected a value (got '/')");
    parse_fail("{\"a\": 1 /* c */}", "t.json:1:9: expected ',' or '}' (got '/')");
    parse_fail("[1] # c", "t.json:1:5: expected end of file (got '#')");
}

Test(jv, string_errors) {
    parse_fail("\"abc", "t.json:1:5: expected '\"' to end the string (got end of file)");
    parse_fail("[\"ab\ncd\"]", "t.json:1:5: expected '\"' to end the string (got newline)");
    parse_fail("\"a\tb\"", "t.json:1:3: expected a control character to be escaped in a string (got tab)");
    parse_fail("\"a\\x\"", "t.json:1:4: expected an escape character (one of \" \\ / b f n r t u) (got 'x')");
    parse_fail("\"a\\", "t.json:1:4: expected an escape character (one of \" \\ / b f n r t u) (got end of file)");
    parse_fail("\"\\u12g4\"", "t.json:1:6: expected 4 hex digits after '\\u' (got 'g')");
    parse_fail("\"\\u12\"", "t.json:1:6: expected 4 hex digits after '\\u' (got '\"')");
    parse_fail("{\"a\\u0000b\": 1}",
               "t.json:1:4: expected a key without NUL characters (got '\\u0000')");
}

Test(jv, surrogates) {
    parse_fail("\"\\ud83d\"",
               "t.json:1:8: expected a low surrogate escape '\\uDC00'-'\\uDFFF' after '\\uD83D' (got '\"')");
    parse_fail("\"\\ud83dx\"",
               "t.json:1:8: expected a low surrogate escape '\\uDC00'-'\\uDFFF' after '\\uD83D' (got 'x')");
    parse_fail("\"\\ud83d\\u0041\"",
               "t.json:1:8: expected a low surrogate escape '\\uDC00'-'\\uDFFF' after '\\uD83D' (got '\\u0041')");
    parse_fail("\"\\ud83d\\ud83d\"",
               "t.json:1:8: expected a low surrogate escape '\\uDC00'-'\\uDFFF' after '\\uD83D' (got '\\uD83D')");
    parse_fail("[\"ok\", \"\\uDE00\"]",
               "t.json:1:9: expected a high surrogate before low surrogate '\\uDE00' (got lone low surrogate)");
    /* Largest pair: U+10FFFF. */
    jv_doc *d = parse_ok("\"\\uDBFF\\uDFFF\"");
    cr_assert_str_eq(jv_root(d)->string, "\xf4\x8f\xbf\xbf");
    jv_doc_free(d);
}

Test(jv, invalid_utf8) {
    parse_fail("\"a\xff\"", "t.json:1:3: expected valid UTF-8 (got byte 0xff)");
    parse_fail("\"\xc3(\"", "t.json:1:2: expected valid UTF-8 (got byte 0xc3 0x28)");
    parse_fail("\"\xc0\xaf\"", "t.json:1:2: expected valid UTF-8 (got byte 0xc0)");                 /* overlong */
    parse_fail("\"\xe0\x80\xaf\"", "t.json:1:2: expected valid UTF-8 (got byte 0xe0 0x80)");        /* overlong */
    parse_fail("\"\xed\xa0\x80\"", "t.json:1:2: expected valid UTF-8 (got byte 0xed 0xa0)");        /* surrogate */
    parse_fail("\"\xf4\x90\x80\x80\"", "t.json:1:2: expected valid UTF-8 (got byte 0xf4 0x90)");    /* > U+10FFFF */
    parse_fail("\"\xe2\x82", "t.json:1:2: expected valid UTF-8 (got byte 0xe2 0x82 then end of file)");
    parse_fail("{\"k\xe9y\": 1}", "t.json:1:4: expected valid UTF-8 (got byte 0xe9 0x79)");        /* Latin-1 */
    /* Valid 2-, 3- and 4-byte sequences pass through. */
    jv_doc *d = parse_ok("\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
    cr_assert_eq(jv_root(d)->string_len, 9);
    jv_doc_free(d);
}

Test(jv, duplicate_keys) {
    parse_fail("{\n  \"name\": \"x\",\n  \"lr\": 1,\n  \"lr\": 2\n}",
               "t.json:4:3: duplicate key 'lr' (first at 3:3)");
    /* The same key in different objects is fine; escapes are compared decoded. */
    jv_doc *d = parse_ok("{\"a\": {\"a\": 1}, \"b\": {\"a\": 2}}");
    jv_doc_free(d);
    parse_fail("{\"a\": 1, \"\\u0061\": 2}", "t.json:1:10: duplicate key 'a' (first at 1:2)");
    /* Reported as soon as the second key is read, before later syntax errors. */
    parse_fail("{\"x\": 1, \"x\": ]", "t.json:1:10: duplicate key 'x' (first at 1:2)");
    /* Nested: the inner object closes and reopens with the same serial never colliding. */
    parse_fail("[{\"a\":1},{\"a\":1,\"b\":{\"a\":1},\"a\":2}]", "t.json:1:29: duplicate key 'a' (first at 1:11)");
}

/* ---- numbers ---------------------------------------------------------------------------------- */

Test(jv, numbers_valid) {
    jv_doc *d = parse_ok("[0, -0, 1e308, -1.5E-3, 9223372036854775807, -9223372036854775808, "
                         "9223372036854775808, 123456789012345678901234567890, 1e-400, 0.0, 2E+2]");
    const jv *const *it = (const jv *const *)jv_root(d)->items;
    cr_assert_eq(jv_root(d)->count, 11);
    cr_assert(it[0]->is_integer && it[0]->integer == 0 && it[0]->number == 0.0);
    cr_assert(it[1]->is_integer && it[1]->integer == 0);
    cr_assert(signbit(it[1]->number), "-0 keeps its sign as a double");
    cr_assert_eq(it[2]->is_integer, 0);
    cr_assert_eq(it[2]->number, 1e308);
    cr_assert_eq(it[3]->number, -1.5e-3);
    cr_assert(it[4]->is_integer && it[4]->integer == LLONG_MAX);
    cr_assert(it[5]->is_integer && it[5]->integer == LLONG_MIN);
    cr_assert_eq(it[6]->is_integer, 0, "beyond long long: not an integer");
    cr_assert_eq(it[6]->number, 9223372036854775808.0);
    cr_assert_eq(it[7]->is_integer, 0);
    cr_assert_float_eq(it[7]->number, 1.2345678901234568e29, 1e14);
    cr_assert_eq(it[8]->number, 0.0, "underflow rounds to zero");
    cr_assert_eq(it[9]->is_integer, 0, "a fraction makes it a non-integer literal");
    cr_assert_eq(it[10]->number, 200.0);
    cr_assert_eq(it[10]->is_integer, 0);
    jv_doc_free(d);
}

Test(jv, numbers_invalid) {
    parse_fail("01", "t.json:1:1: expected a number without leading zeros (got '01')");
    parse_fail("[-007]", "t.json:1:2: expected a number without leading zeros (got '-007')");
    parse_fail("+1", "t.json:1:1: expected a value (got '+')");
    parse_fail(".5", "t.json:1:1: expected a value (got '.')");
    parse_fail("[1.]", "t.json:1:4: expected a digit after '.' (got ']')");
    parse_fail("1.e5", "t.json:1:3: expected a digit after '.' (got 'e')");
    parse_fail("-", "t.json:1:2: expected a digit after '-' (got end of file)");
    parse_fail("1e", "t.json:1:3: expected a digit in the exponent (got end of file)");
    parse_fail("1e+", "t.json:1:4: expected a digit in the exponent (got end of file)");
    parse_fail("NaN", "t.json:1:1: expected a value (got 'NaN')");
    parse_fail("[Infinity]", "t.json:1:2: expected a value or ']' (got 'Infinity')");
    parse_fail("-Infinity", "t.json:1:2: expected a digit after '-' (got 'Infinity')");
    parse_fail("0x10", "t.json:1:2: expected end of file (got 'x10')");
    parse_fail("{\"x\": 1e309}",
               "t.json:1:7: expected a number within double range (got 1e309: number out of range)");
    parse_fail("-1e400", "t.json:1:1: expected a number within double range (got -1e400: number out of range)");
}

/* ---- bounds ----------------------------------------------------------------------------------- */

Test(jv, depth_bound) {
    char t[2 * JV_MAX_DEPTH + 8];
    size_t n = 0;
    for (int i = 0; i < JV_MAX_DEPTH; i++) t[n++] = '[';
    for (int i = 0; i < JV_MAX_DEPTH; i++) t[n++] = ']';
    jv_doc *d = NULL;
    cr_assert_eq(jv_parse(&d, "t.json", t, n), 0, "depth %d is allowed: %s", JV_MAX_DEPTH, sd_errmsg());
    jv_doc_free(d);

    n = 0;
    for (int i = 0; i < JV_MAX_DEPTH; i++) t[n++] = '[';
    t[n++] = '{';
    char msg[128];
    snprintf(msg, sizeof msg, "t.json:1:%d: expected nesting depth at most %d (got %d)",
             JV_MAX_DEPTH + 1, JV_MAX_DEPTH, JV_MAX_DEPTH + 1);
    parse_fail_n(t, n, SD_ELIMIT, msg);
}

Test(jv, deep_nesting_far_past_bound) {
    size_t n = 100000;
    char *t = malloc(n);
    memset(t, '[', n);
    parse_fail_n(t, n, SD_ELIMIT, "t.json:1:129: expected nesting depth at most 128 (got 129)");
    free(t);
}

Test(jv, string_bound) {
    size_t n = JV_MAX_STRING;
    char *t = malloc(n + 16);
    t[0] = '[';
    t[1] = '"';
    memset(t + 2, 'a', n);
    t[n + 2] = '"';
    t[n + 3] = ']';
    jv_doc *d = NULL;
    cr_assert_eq(jv_parse(&d, "t.json", t, n + 4), 0, "exactly JV_MAX_STRING bytes is allowed: %s", sd_errmsg());
    cr_assert_eq(jv_root(d)->items[0]->string_len, n);
    jv_doc_free(d);

    t[n + 2] = 'a';
    t[n + 3] = '"';
    t[n + 4] = ']';
    parse_fail_n(t, n + 5, SD_ELIMIT, "t.json:1:2: expected a string of at most 1048576 bytes (got a longer one)");
    /* Escapes count decoded bytes: 2^20 - 1 'a' plus one 3-byte escape is over. */
    memcpy(t + n + 1, "\\u20AC\"]", 8);
    parse_fail_n(t, n + 9, SD_ELIMIT, "t.json:1:2: expected a string of at most 1048576 bytes (got a longer one)");
    free(t);
}

Test(jv, document_bound) {
    /* The size check happens before reading the text, so a short buffer stands in for a huge one. */
    char msg[160];
    snprintf(msg, sizeof msg, "t.json:1:1: expected a document of at most %u bytes (got %zu bytes)",
             JV_MAX_DOC, (size_t)JV_MAX_DOC + 1);
    parse_fail_n("{}", (size_t)JV_MAX_DOC + 1, SD_ELIMIT, msg);
}

/* ---- jv_load ---------------------------------------------------------------------------------- */

Test(jv, load_file) {
    char dir[256], path[300];
    tu_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/spec.json", dir);
    tu_write_str(path, "{\n  \"lr\": 0.5,\n  \"lr\": 1\n}\n");
    jv_doc *d = NULL;
    cr_assert_eq(jv_load(&d, path), SD_EINPUT);
    cr_assert_null(d);
    char want[400];
    snprintf(want, sizeof want, "%s:3:3: duplicate key 'lr' (first at 2:3)", path);
    cr_assert_str_eq(sd_errmsg(), want);

    tu_write_str(path, "{\"a\": [1, 2]}");
    cr_assert_eq(jv_load(&d, path), 0, "%s", sd_errmsg());
    cr_assert_str_eq(jv_name(d), path);
    cr_assert_eq(jv_get(jv_root(d), "a")->count, 2);
    jv_doc_free(d);

    tu_write_str(path, "");
    cr_assert_eq(jv_load(&d, path), SD_EINPUT);
    snprintf(want, sizeof want, "%s:1:1: expected a value (got end of file)", path);
    cr_assert_str_eq(sd_errmsg(), want);

    snprintf(path, sizeof path, "%s/missing.json", dir);
    cr_assert_eq(jv_load(&d, path), SD_EIO);
    cr_assert_null(d);
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", path);
    cr_assert_str_eq(sd_errmsg(), want);

    cr_assert_eq(jv_load(&d, dir), SD_EIO);
    snprintf(want, sizeof want, "%s: cannot read: Is a directory", dir);
    cr_assert_str_eq(sd_errmsg(), want);

    snprintf(path, sizeof path, "%s/spec.json", dir);
    unlink(path);
    rmdir(dir);
}

Test(jv, load_file_too_big) {
    char dir[256], path[300];
    tu_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/big.json", dir);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    /* A sparse file one byte over the bound: rejected from its size, without reading it. */
    cr_assert_eq(fseek(f, (long)JV_MAX_DOC, SEEK_SET), 0);
    cr_assert_eq(fputc(' ', f), ' ');
    fclose(f);
    jv_doc *d = NULL;
    cr_assert_eq(jv_load(&d, path), SD_ELIMIT);
    char want[400];
    snprintf(want, sizeof want, "%s:1:1: over 64 MiB: expected a document of at most %u bytes (got %u bytes)",
             path, JV_MAX_DOC, JV_MAX_DOC + 1);
    cr_assert_str_eq(sd_errmsg(), want);
    unlink(path);
    rmdir(dir);
}

/* ---- schema helpers --------------------------------------------------------------------------- */

static const char *spec =
    "{\n"
    "  \"training\": {\"batch\": 64.5, \"epochs\": 3, \"big\": 100000000000000000000, \"whole\": 64.0},\n"
    "  \"optimizer\": {\"name\": \"sgd\", \"lr\": \"0.1\", \"lr8\": 1, \"momentum\": 0.9, \"nes\": true},\n"
    "  \"list\": [1]\n"
    "}\n";

Test(jv, check_keys) {
    jv_doc *d = parse_ok(spec);
    const jv *opt = jv_get(jv_root(d), "optimizer");
    static const char *const allowed[] = { "name", "lr", "momentum", "nes", NULL };
    cr_assert_eq(jv_check_keys(d, opt, "optimizer", allowed), SD_EINPUT);
    cr_assert_str_eq(sd_errmsg(),
                     "t.json:3:45: unknown key 'lr8' in optimizer (expected one of: name, lr, momentum, nes)");
    static const char *const allowed2[] = { "name", "lr", "lr8", "momentum", "nes", NULL };
    cr_assert_eq(jv_check_keys(d, opt, "optimizer", allowed2), 0);
    cr_assert_eq(jv_check_keys(d, jv_get(jv_root(d), "list"), "list", allowed), SD_EINPUT);
    cr_assert_str_eq(sd_errmsg(), "t.json:4:11: expected an object for list (got array)");
    jv_doc_free(d);
}

Test(jv, expect) {
    jv_doc *d = parse_ok(spec);
    cr_assert_eq(jv_expect(d, jv_root(d), JV_OBJECT, "the spec"), 0);
    cr_assert_eq(jv_expect(d, jv_get(jv_root(d), "list"), JV_STRING, "list"), SD_EINPUT);
    cr_assert_str_eq(sd_errmsg(), "t.json:4:11: expected a string for list (got array)");
    jv_doc_free(d);
}

Test(jv, get_int) {
    jv_doc *d = parse_ok(spec);
    const jv *tr = jv_get(jv_root(d), "training");
    long long v = -1;
    cr_assert_eq(jv_get_int(d, tr, "batch", "training", 1, 1, 4096, &v), SD_EINPUT);
    cr_assert_str_eq(sd_errmsg(), "t.json:2:25: expected an integer for 'batch' in training (got 64.5)");
    cr_assert_eq(v, -1, "unchanged on failure");

    cr_assert_eq(jv_get_int(d, tr, "epochs", "training", 1, 1, 100, &v), 0, "%s", sd_errmsg());
    cr_assert_eq(v, 3);
    cr_assert_eq(jv_get_int(d, tr, "epochs", "training", 1, 5, 100, &v), SD_EINPUT);
    cr_assert_str_eq(sd_errmsg(), "t.json:2:41: value 3 of 'epochs' in training out of range [5, 100]");
    cr_assert_eq(jv_get_int(d, tr, "epochs", "training", 1, 1, 0, &v), 0, "min > max: unbounded");

    cr_assert_eq(jv_get_int(d, tr, "big", "training", 1, 1, 0, &v), SD_EINPUT);
    cr_assert_str_eq(sd_errmsg(),
                     "t.json:2:51: value 1e+20 of 'big' in training out of range "
                     "[-9223372036854775808, 9223372036854775807]");
    v = 0;
    cr_assert_eq(jv_get_int(d, tr, "whole", "training", 1, 1, 100, &v), 0, "64.0 is an integer value");
    cr_assert_eq(v, 64);

    v = 7;
    cr_assert_eq(jv_get_int(d, tr, "absent", "training", 0, 1, 100, &v), 0);
    cr_assert_eq(v, 7, "absent and optional: unchanged");
    cr_assert_eq(jv_get_int(d, tr, "absent", "training", 1, 1, 100, &v), SD_EINPUT);
    cr_assert_str_eq(sd_errmsg(), "t.json:2:15: missing key 'absent' in training");

    const jv *opt = jv_get(jv_root(d), "optimizer");
    cr_assert_eq(jv_get_int(d, opt, "name", "optimizer", 1, 1, 0, &v), SD_EINPUT);
    cr_assert_str_eq(sd_errmsg(), "t.json:3:25: expected an integer for 'name' in optimizer (got string)");
    cr_assert_eq(jv_get_int(d, jv_get(jv_root(d), "list"), "x", "list", 1, 1, 0, &v), SD_EINPUT);
    cr_assert_str_eq(sd_errmsg(), "t.json:4:11: expected an object for list (got array)");
    jv_doc_free(d);
}

Test(jv, get_num_str_bool) {
    jv_doc *d = parse_ok(spec);
    const jv *opt = jv_get(jv_root(d), "optimizer");
    double x = -1;
    cr_assert_eq(jv_get_num(d, opt, "lr", "optimizer", 1, 0, 1, &x), SD_EINPUT);
    cr_assert_str_eq(sd_errmsg(), "t.json:3:38: expected a number for 'lr' in optimizer (got string)");
    cr_assert_eq(jv_get_num(d, opt, "momentum", "optimizer", 1, 0, 1, &x), 0, "%s", sd_errmsg());
    cr_assert_eq(x, 0.9);
    cr_assert_eq(jv_get_num(d, opt, "momentum", "optimizer", 1, 0, 0.5, &x), SD_EINPUT);
    cr_assert_str_eq(sd_errmsg(), "t.json:3:67: value 0.9 of 'momentum' in optimizer out of range [0, 0.5]");
    cr_assert_eq(jv_get_num(d, opt, "momentum", "optimizer", 1, 1, 0, &x), 0, "min > max: unbounded");
    x = 2.5;
    cr_assert_eq(jv_get_num(d, opt, "nope", "optimizer", 0, 0, 1, &x), 0);
    cr_assert_eq(x, 2.5);
    cr_assert_eq(jv_get_num(d, opt, "nope", "optimizer", 1, 0, 1, &x), SD_EINPUT);
    cr_assert_str_eq(sd_errmsg(), "t.json:3:16: missing key 'nope' in optimizer");

    const char *s = NULL;
    cr_assert_eq(jv_get_str(d, opt, "name", "optimizer", 1, &s), 0);
    cr_assert_str_eq(s, "sgd");
    cr_assert_eq(jv_get_str(d, opt, "momentum", "optimizer", 1, &s), SD_EINPUT);
    cr_assert_str_eq(sd_errmsg(), "t.json:3:67: expected a string for 'momentum' in optimizer (got number)");

    int b = 0;
    cr_assert_eq(jv_get_bool(d, opt, "nes", "optimizer", 1, &b), 0);
    cr_assert_eq(b, 1);
    cr_assert_eq(jv_get_bool(d, opt, "name", "optimizer", 1, &b), SD_EINPUT);
    cr_assert_str_eq(sd_errmsg(), "t.json:3:25: expected a boolean for 'name' in optimizer (got string)");
    jv_doc_free(d);

    d = parse_ok("{\"n\": \"a\\u0000b\"}");
    cr_assert_eq(jv_get_str(d, jv_root(d), "n", "x", 1, &s), SD_EINPUT);
    cr_assert_str_eq(sd_errmsg(), "t.json:1:7: expected a string without NUL characters for 'n' in x (got '\\u0000')");
    jv_doc_free(d);
}

Test(jv, err_helpers) {
    jv_doc *d = parse_ok("{\n  \"rate\": 1.5\n}");
    const jv *r = jv_get(jv_root(d), "rate");
    cr_assert_eq(jv_err(d, r, "value %g too big", r->number), SD_EINPUT);
    cr_assert_str_eq(sd_errmsg(), "t.json:2:11: value 1.5 too big");
    cr_assert_eq(jv_err_key(d, r, "key %s is odd", r->key), SD_EINPUT);
    cr_assert_str_eq(sd_errmsg(), "t.json:2:3: key rate is odd");
    cr_assert_eq(jv_err_key(d, jv_root(d), "root"), SD_EINPUT);
    cr_assert_str_eq(sd_errmsg(), "t.json:1:1: root", "no key: the value's position");
    cr_assert_str_eq(jv_type_name(JV_OBJECT), "object");
    cr_assert_str_eq(jv_type_name(JV_NULL), "null");
    jv_doc_free(d);
    jv_doc_free(NULL);
}

Test(jv, long_key_clipped_in_message) {
    /* A duplicate 300-byte key with a control character: the message stays one bounded line. */
    char t[800];
    char key[301];
    memset(key, 'k', 300);
    key[300] = 0;
    snprintf(t, sizeof t, "{\"\\n%s\": 1, \"\\n%s\": 2}", key, key);
    jv_doc *d = NULL;
    cr_assert_eq(jv_parse(&d, "t.json", t, strlen(t)), SD_EINPUT);
    const char *m = sd_errmsg();
    cr_assert_null(strchr(m, '\n'));
    cr_assert(strlen(m) < 200, "%s", m);
    cr_assert_not_null(strstr(m, "duplicate key '\\nkkk"), "%s", m);
    cr_assert_not_null(strstr(m, "...' (first at 1:2)"), "%s", m);
}
