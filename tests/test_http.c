/* test_http — the libcurl client against tests/replay_server.py on 127.0.0.1 (started here): recorded
 * GitHub exchanges from shared/fixtures/github (metadata, search total_count, Link pagination, 304 on a
 * repeat) and crafted ones (Retry-After, rate-limit reset, 500 then 200, malformed JSON, gzip with
 * backoff, a hang past the timeout). Failures must leave the last good value, marked stale. */
#include "testutil.h"
#include "http/http.h"
#include "core/err.h"

#include <jansson.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

typedef struct server { pid_t pid; int port; char base[64]; char dir[256]; } server;

static const char *fixtures_dir(void) {
    static char buf[1024];
    const char *s = getenv("SHARED");
    struct stat st;
    snprintf(buf, sizeof buf, "%s/fixtures/github", s && *s ? s : "../shared");
    return stat(buf, &st) == 0 ? buf : NULL;
}

static void server_start(server *sv, int need_fixtures) {
    const char *fx = fixtures_dir();
    if (need_fixtures && !fx) TU_SKIP("no shared/fixtures/github (set SHARED=path/to/shared)");
    tu_tmpdir(sv->dir, sizeof sv->dir);
    char portfile[512];
    snprintf(portfile, sizeof portfile, "%s/port", sv->dir);
    const char *py = getenv("PYTHON");
    if (!py || !*py) py = "python3";
    sv->pid = fork();
    cr_assert(sv->pid >= 0);
    if (sv->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);   /* the server dies with the test, even on a failed assert */
        if (fx) execlp(py, py, "tests/replay_server.py", "--port-file", portfile, "--fixtures", fx, (char *)NULL);
        else execlp(py, py, "tests/replay_server.py", "--port-file", portfile, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 1000; i++) {   /* up to ~20 s for the interpreter to start */
        FILE *f = fopen(portfile, "r");
        if (f) {
            int ok = fscanf(f, "%d", &sv->port) == 1;
            fclose(f);
            if (ok) break;
        }
        int st;
        cr_assert_eq(waitpid(sv->pid, &st, WNOHANG), 0, "replay server exited early");
        usleep(20000);
    }
    cr_assert(sv->port > 0, "replay server did not start");
    snprintf(sv->base, sizeof sv->base, "http://127.0.0.1:%d", sv->port);
}

static void server_stop(server *sv) {
    if (sv->pid > 0) { kill(sv->pid, SIGTERM); waitpid(sv->pid, NULL, 0); }
}

typedef struct waits { int n; double s[16]; } waits;
static void record_wait(void *ctx, double s) {
    waits *w = ctx;
    if (w->n < 16) w->s[w->n++] = s;
}

static http_opts opts(waits *w, const char *cache) {
    http_opts o = {0};
    o.cache_path = cache;
    o.timeout_ms = 5000;
    o.max_retries = 2;
    o.backoff_s = 0.01;
    o.max_wait_s = 30;
    o.sleep_fn = record_wait;
    o.sleep_ctx = w;
    return o;
}

/* Hits and 304 counts for a path, from /_stats. */
static void stats(const server *sv, const char *path, long *hits, long *notmod, char *auth, size_t alen) {
    http_client *c;
    http_opts o = {0};
    cr_assert_eq(http_client_new(&c, &o), 0);
    char url[256];
    snprintf(url, sizeof url, "%s/_stats", sv->base);
    http_response r;
    cr_assert_eq(http_get(c, url, &r), 0, "%s", sd_errmsg());
    json_t *j = json_loads(r.body, 0, NULL);
    *hits = (long)json_integer_value(json_object_get(json_object_get(j, "hits"), path));
    *notmod = (long)json_integer_value(json_object_get(json_object_get(j, "not_modified"), path));
    if (auth) {
        const char *a = json_string_value(json_object_get(json_object_get(j, "auth"), path));
        snprintf(auth, alen, "%s", a ? a : "");
    }
    json_decref(j);
    http_response_free(&r);
    http_client_free(c);
}

/* The GitHub and StackExchange questions as score asks them, from the client's public building blocks. */
static int repo_meta(http_client *c, const char *api, const char *owner, const char *name, http_repo_meta *m) {
    char url[1024];
    snprintf(url, sizeof url, "%s/repos/%s/%s", api, owner, name);
    http_response r;
    int rc = http_get(c, url, &r);
    if (rc < 0) { memset(m, 0, sizeof *m); http_response_free(&r); return rc; }
    rc = http_repo_meta_from(&r, url, m);
    http_response_free(&r);
    return rc;
}

static int count_at(http_client *c, const char *url, int se, http_value *v) {
    http_response r;
    http_get(c, url, &r);   /* a failure is in r, read by http_count_from */
    int rc = http_count_from(&r, se, v);
    http_response_free(&r);
    return rc;
}

static int se_tag_count(http_client *c, const char *se, const char *tag, http_value *v) {
    char url[1024];
    SD_TRY(http_se_tag_url(se, tag, url, sizeof url));
    return count_at(c, url, 1, v);
}

static int search_count(http_client *c, const char *api, const char *kind, const char *q, http_value *v) {
    char url[2048];
    SD_TRY(http_github_search_url(api, kind, q, url, sizeof url));
    return count_at(c, url, 0, v);
}

Test(http, github_repo_etag_304_token_not_logged) {
    server sv = {0};
    server_start(&sv, 1);
    waits w = {0};
    char cache[512], *logbuf = NULL;
    size_t loglen = 0;
    snprintf(cache, sizeof cache, "%s/cache/http.json", sv.dir);
    FILE *log = open_memstream(&logbuf, &loglen);
    http_opts o = opts(&w, cache);
    o.token = "s3cr3t-token-value";
    o.token_base = sv.base;
    o.log = log;
    http_client *c;
    cr_assert_eq(http_client_new(&c, &o), 0, "%s", sd_errmsg());
    http_repo_meta m;
    cr_assert_eq(repo_meta(c, sv.base, "octokit-fixture-org", "hello-world", &m), 0, "%s", sd_errmsg());
    cr_assert(m.present && !m.stale);
    cr_assert_eq(m.stars, 42);
    cr_assert_eq(m.archived, 0);
    cr_assert_str_eq(m.pushed_at, "2017-10-10T16:00:00Z");
    /* Same request again: If-None-Match -> 304, answered from the cache. */
    http_response r;
    char url[256];
    snprintf(url, sizeof url, "%s/repos/octokit-fixture-org/hello-world", sv.base);
    cr_assert_eq(http_get(c, url, &r), 0, "%s", sd_errmsg());
    cr_assert(r.from_cache && !r.stale);
    cr_assert(strstr(r.body, "\"stargazers_count\": 42") || strstr(r.body, "\"stargazers_count\":42"));
    http_response_free(&r);
    http_client_free(c);   /* saves the cache */
    /* A new client with the saved cache also gets a 304. */
    cr_assert_eq(http_client_new(&c, &o), 0, "%s", sd_errmsg());
    cr_assert_eq(repo_meta(c, sv.base, "octokit-fixture-org", "hello-world", &m), 0, "%s", sd_errmsg());
    cr_assert_eq(m.stars, 42);
    http_client_free(c);
    long hits, notmod;
    char auth[128];
    stats(&sv, "/repos/octokit-fixture-org/hello-world", &hits, &notmod, auth, sizeof auth);
    cr_assert_eq(hits, 3);
    cr_assert_eq(notmod, 2);
    cr_assert_str_eq(auth, "Bearer s3cr3t-token-value");   /* sent to the API ... */
    fclose(log);
    cr_assert(loglen > 0 && strstr(logbuf, "304"), "log: %s", logbuf);
    cr_assert_null(strstr(logbuf, "s3cr3t"), "token in log: %s", logbuf);   /* ... never logged */
    free(logbuf);
    server_stop(&sv);
}

Test(http, token_only_sent_to_token_base) {
    server sv = {0};
    server_start(&sv, 0);
    waits w = {0};
    http_opts o = opts(&w, NULL);
    char tb[128];
    snprintf(tb, sizeof tb, "%s/repos/", sv.base);
    o.token = "abc";
    o.token_base = tb;
    http_client *c;
    cr_assert_eq(http_client_new(&c, &o), 0);
    http_value v;
    cr_assert_eq(se_tag_count(c, sv.base, "jax", &v), 0, "%s", sd_errmsg());
    http_client_free(c);
    long hits, notmod;
    char auth[64];
    stats(&sv, "/2.3/tags/jax/info?site=stackoverflow", &hits, &notmod, auth, sizeof auth);
    cr_assert_eq(hits, 1);
    cr_assert_str_eq(auth, "");
    server_stop(&sv);
}

static int npages, nitems;
static int on_page(void *ctx, const http_response *r) {
    (void)ctx;
    json_t *j = json_loads(r->body, 0, NULL);
    cr_assert(json_is_array(j));
    npages++;
    nitems += (int)json_array_size(j);
    json_decref(j);
    return 0;
}

Test(http, link_pagination) {
    server sv = {0};
    server_start(&sv, 1);
    waits w = {0};
    http_opts o = opts(&w, NULL);
    http_client *c;
    cr_assert_eq(http_client_new(&c, &o), 0);
    char url[256];
    snprintf(url, sizeof url, "%s/repos/octokit-fixture-org/paginate-issues/issues?per_page=3", sv.base);
    npages = nitems = 0;
    cr_assert_eq(http_get_paged(c, url, 10, on_page, NULL), 0, "%s", sd_errmsg());
    cr_assert_eq(npages, 5);
    cr_assert_eq(nitems, 13);
    npages = nitems = 0;
    cr_assert_eq(http_get_paged(c, url, 2, on_page, NULL), 0);   /* bounded */
    cr_assert_eq(npages, 2);
    http_client_free(c);
    server_stop(&sv);
}

Test(http, search_total_count_fixture) {
    server sv = {0};
    server_start(&sv, 1);
    waits w = {0};
    http_opts o = opts(&w, NULL);
    http_client *c;
    cr_assert_eq(http_client_new(&c, &o), 0);
    http_value v;
    cr_assert_eq(search_count(c, sv.base, "issues", "sesame repo:octokit-fixture-org/search-issues", &v), 0,
                 "%s", sd_errmsg());
    cr_assert(v.present && !v.stale);
    cr_assert_eq(v.value, 2);
    http_client_free(c);
    server_stop(&sv);
}

static http_client *client_for(waits *w, const char *cache, long timeout_ms, int retries) {
    http_opts o = opts(w, cache);
    if (timeout_ms) o.timeout_ms = timeout_ms;
    o.max_retries = retries;
    http_client *c;
    cr_assert_eq(http_client_new(&c, &o), 0, "%s", sd_errmsg());
    return c;
}

Test(http, retry_after_honoured) {
    server sv = {0};
    server_start(&sv, 0);
    waits w = {0};
    http_client *c = client_for(&w, NULL, 0, 2);
    http_response r;
    char url[256];
    snprintf(url, sizeof url, "%s/crafted/retry-after", sv.base);
    w.n = 0;
    cr_assert_eq(http_get(c, url, &r), 0, "%s", sd_errmsg());
    cr_assert_eq(r.attempts, 2);
    cr_assert_eq(w.n, 1);
    cr_assert(w.s[0] > 1.5 && w.s[0] <= 2.0, "waited %g s", w.s[0]);
    cr_assert(strstr(r.body, "\"total_count\": 7"));
    http_response_free(&r);
    /* Retry-After beyond the bound: no wait, no answer, says why. */
    snprintf(url, sizeof url, "%s/crafted/retry-after-long", sv.base);
    w.n = 0;
    cr_assert_eq(http_get(c, url, &r), SD_ENET);
    cr_assert_eq(w.n, 0);
    cr_assert(strstr(r.why, "exceeds the bound"), "%s", r.why);
    cr_assert_null(r.body);
    http_client_free(c);
    server_stop(&sv);
}

Test(http, rate_limit_reset_waits_for_next_request) {
    server sv = {0};
    server_start(&sv, 0);
    waits w = {0};
    http_client *c = client_for(&w, NULL, 0, 2);
    char url[256];
    snprintf(url, sizeof url, "%s/crafted/ratelimit", sv.base);
    http_response r;
    cr_assert_eq(http_get(c, url, &r), 0, "%s", sd_errmsg());   /* answered, but remaining = 0 */
    http_response_free(&r);
    cr_assert_eq(w.n, 0);
    cr_assert_eq(http_get(c, url, &r), 0, "%s", sd_errmsg());   /* must wait for the reset first */
    http_response_free(&r);
    cr_assert_eq(w.n, 1);
    cr_assert(w.s[0] > 0.5 && w.s[0] <= 3.01, "waited %g s", w.s[0]);
    http_client_free(c);
    server_stop(&sv);
}

Test(http, server_error_then_ok_retries) {
    server sv = {0};
    server_start(&sv, 0);
    waits w = {0};
    http_client *c = client_for(&w, NULL, 0, 2);
    char url[256];
    snprintf(url, sizeof url, "%s/crafted/500-then-200", sv.base);
    http_response r;
    cr_assert_eq(http_get(c, url, &r), 0, "%s", sd_errmsg());
    cr_assert_eq(r.attempts, 2);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.body, "42"));
    cr_assert_eq(w.n, 1);
    cr_assert(w.s[0] > 0 && w.s[0] <= 0.011, "backoff %g", w.s[0]);   /* backoff_s = 0.01 */
    http_response_free(&r);
    http_client_free(c);
    server_stop(&sv);
}

/* First answer good (cached), then the failure `kind`: the client returns the good value, stale. */
static void stale_case(const char *kind, long timeout_ms, double good, const char *why_has) {
    server sv = {0};
    server_start(&sv, 0);
    waits w = {0};
    char cache[512], url[256];
    snprintf(cache, sizeof cache, "%s/http.json", sv.dir);
    snprintf(url, sizeof url, "%s/crafted/%s", sv.base, kind);
    http_client *c = client_for(&w, cache, timeout_ms, 1);
    http_response r;
    cr_assert_eq(http_get(c, url, &r), 0, "%s", sd_errmsg());
    cr_assert(!r.stale);
    http_response_free(&r);
    cr_assert_eq(http_get(c, url, &r), 0, "%s", sd_errmsg());
    cr_assert(r.stale, "%s: not marked stale", kind);
    cr_assert(r.fetched[0], "stale value has no date");
    cr_assert(strstr(r.why, why_has), "%s: why = %s", kind, r.why);
    json_t *j = json_loads(r.body, 0, NULL);
    cr_assert_eq(json_integer_value(json_object_get(j, "total_count")), (json_int_t)good);
    json_decref(j);
    http_response_free(&r);
    http_client_free(c);
    /* The cache still holds the good value (the failure did not overwrite it). */
    json_t *cj = json_load_file(cache, 0, NULL);
    const char *body = json_string_value(json_object_get(json_object_get(json_object_get(cj, "entries"), url), "body"));
    cr_assert(body && strstr(body, "total_count"));
    json_t *b = json_loads(body, 0, NULL);
    cr_assert_eq(json_integer_value(json_object_get(b, "total_count")), (json_int_t)good);
    json_decref(b);
    json_decref(cj);
    server_stop(&sv);
}

Test(http, stale_after_500s) { stale_case("good-then-500", 0, 11, "HTTP 500"); }
Test(http, stale_after_malformed_json) { stale_case("good-then-malformed", 0, 12, "malformed JSON"); }
Test(http, stale_after_timeout) { stale_case("good-then-hang", 300, 14, "curl error 28"); }

Test(http, malformed_without_cache_is_input_error) {
    server sv = {0};
    server_start(&sv, 0);
    waits w = {0};
    http_client *c = client_for(&w, NULL, 0, 1);
    http_response r;
    char url[256];
    snprintf(url, sizeof url, "%s/crafted/malformed", sv.base);
    cr_assert_eq(http_get(c, url, &r), SD_EINPUT);
    cr_assert_null(r.body);
    cr_assert(strstr(sd_errmsg(), "malformed JSON"), "%s", sd_errmsg());
    http_client_free(c);
    server_stop(&sv);
}

Test(http, stackexchange_gzip_and_backoff) {
    server sv = {0};
    server_start(&sv, 0);
    waits w = {0};
    http_client *c = client_for(&w, NULL, 0, 1);
    http_value v;
    cr_assert_eq(se_tag_count(c, sv.base, "pytorch", &v), 0, "%s", sd_errmsg());
    cr_assert_eq(v.value, 1007);   /* server: 1000 + strlen(tag) */
    cr_assert_eq(w.n, 0);
    cr_assert_eq(se_tag_count(c, sv.base, "tensorflow", &v), 0, "%s", sd_errmsg());
    cr_assert_eq(v.value, 1010);
    cr_assert_eq(w.n, 1, "backoff not honoured");
    cr_assert(w.s[0] > 1.0 && w.s[0] <= 2.0, "waited %g s", w.s[0]);
    http_client_free(c);
    server_stop(&sv);
}

Test(http, concurrent_many) {
    server sv = {0};
    server_start(&sv, 0);
    waits w = {0};
    http_client *c = client_for(&w, NULL, 0, 2);
    char u[4][256];
    snprintf(u[0], 256, "%s/crafted/etag", sv.base);
    snprintf(u[1], 256, "%s/crafted/500-then-200", sv.base);
    snprintf(u[2], 256, "%s/crafted/etag?x=2", sv.base);
    snprintf(u[3], 256, "%s/crafted/nothing-here", sv.base);
    const char *urls[4] = {u[0], u[1], u[2], u[3]};
    http_response rs[4];
    int rc = http_get_many(c, urls, 4, rs);
    cr_assert_eq(rc, SD_ENET);                  /* the 404 */
    cr_assert(strstr(sd_errmsg(), "nothing-here") && strstr(sd_errmsg(), "404"), "%s", sd_errmsg());
    cr_assert_eq(rs[0].rc, 0); cr_assert(strstr(rs[0].body, "5"));
    cr_assert_eq(rs[1].rc, 0); cr_assert(strstr(rs[1].body, "42"));
    cr_assert_eq(rs[2].rc, 0);
    cr_assert_eq(rs[3].rc, SD_ENET);
    for (int i = 0; i < 4; i++) http_response_free(&rs[i]);
    /* Repeat the ETag one: 304. */
    http_response r;
    cr_assert_eq(http_get(c, u[0], &r), 0);
    cr_assert(r.from_cache);
    http_response_free(&r);
    http_client_free(c);
    server_stop(&sv);
}

/* A body past max_body fails with a one-line SD_ELIMIT naming the bound, whether the server
 * announces its length (refused before the body) or streams it chunked (cut at the bound). */
static void big_case(const char *kind) {
    server sv = {0};
    server_start(&sv, 0);
    waits w = {0};
    http_opts o = opts(&w, NULL);
    o.max_retries = 0;
    o.max_body = 1u << 20;
    http_client *c;
    cr_assert_eq(http_client_new(&c, &o), 0, "%s", sd_errmsg());
    http_response r;
    char url[256];
    snprintf(url, sizeof url, "%s/crafted/%s", sv.base, kind);
    cr_assert_eq(http_get(c, url, &r), SD_ELIMIT, "%s: %s", kind, sd_errmsg());
    cr_assert_null(r.body);
    cr_assert(strstr(sd_errmsg(), "answer larger than 1048576 bytes"), "%s", sd_errmsg());
    cr_assert_null(strchr(sd_errmsg(), '\n'), "one line: %s", sd_errmsg());
    http_client_free(c);
    server_stop(&sv);
}

Test(http, body_bound_with_length) { big_case("big"); }
Test(http, body_bound_chunked) { big_case("big-chunked"); }

/* Token_base "http://127.0.0.1:1234" is not a prefix match for "http://127.0.0.1:12345/..." (nor
 * "https://api.github.com" for "https://api.github.com.example.net/...", as a hostile Link could say). */
Test(http, token_base_is_not_a_string_prefix) {
    server sv = {0};
    server_start(&sv, 0);
    waits w = {0};
    http_opts o = opts(&w, NULL);
    char tb[128];
    snprintf(tb, sizeof tb, "%s", sv.base);
    tb[strlen(tb) - 1] = 0;          /* the same host and port minus its last digit */
    o.token = "abc";
    o.token_base = tb;
    http_client *c;
    cr_assert_eq(http_client_new(&c, &o), 0);
    http_value v;
    cr_assert_eq(se_tag_count(c, sv.base, "jax", &v), 0, "%s", sd_errmsg());
    http_client_free(c);
    long hits, notmod;
    char auth[64];
    stats(&sv, "/2.3/tags/jax/info?site=stackoverflow", &hits, &notmod, auth, sizeof auth);
    cr_assert_eq(hits, 1);
    cr_assert_str_eq(auth, "", "token sent to %s with token_base %s", sv.base, tb);
    server_stop(&sv);
}

/* GitHub statistics (tests/fixtures/github-stats, GitHub's answer format), as of 2025-01-05T00:00Z (a Sunday).
 * commit_activity: 52 weeks from 2024-01-07; weeks starting in [2024-10-06, 2025-01-05) with commits:
 * 10-06 (3), 11-10 (7), 12-01 (1), 12-15 (2), 12-29 (4) -> 5 of 13; 09-29 (5) is outside; commits of weeks
 * from 2024-01-06 on: 10 + 5 + 3 + 7 + 1 + 2 + 4 = 32. contributors: alice 06-02 (3) and 12-29 (5), bob
 * 2023-12-31 (50, before the 365 days) and 11-03 (6), carol 03-03 (4): authors with a week from 10-07 on:
 * alice, bob = 2; 365 days: 8 + 6 + 4 = 18, half 9, alice 8 + bob 6 -> bus factor 2. */
static int64_t stats_as_of(void) { return 1736035200; }   /* 2025-01-05T00:00:00Z */

static char *read_all(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

static void check_stats_figures(const http_stats *s) {
    cr_assert(s->present, "%s", s->why);
    cr_assert_eq(s->weeks_active_13, 5);
    cr_assert_eq(s->commits_365, 32);
    cr_assert_eq(s->authors_90, 2);
    cr_assert_eq(s->bus_factor_365, 2);
}

/* The statistics tests' server (no fixtures), wait log, cache file in the server's directory and crafted
 * statistics API base. */
typedef struct stats_env { server sv; waits w; char cache[512], api[128]; } stats_env;

static void stats_start(stats_env *e) {
    memset(e, 0, sizeof *e);
    server_start(&e->sv, 0);
    snprintf(e->cache, sizeof e->cache, "%s/cache.json", e->sv.dir);
    snprintf(e->api, sizeof e->api, "%s/crafted/stats", e->sv.base);
}

/* The statistics of OWNER/proj as of stats_as_of(). */
static int get_stats(http_client *c, const stats_env *e, const char *owner, int tries, double wait, http_stats *s) {
    return http_github_stats(c, e->api, owner, "proj", stats_as_of(), tries, wait, s);
}

Test(http, stats_hand_computed_then_304) {
    stats_env e;
    stats_start(&e);
    http_client *c = client_for(&e.w, e.cache, 0, 0);
    http_stats s;
    cr_assert_eq(get_stats(c, &e, "ok", 3, 1, &s), 0, "%s", sd_errmsg());
    check_stats_figures(&s);
    cr_assert(!s.stale);
    http_client_free(c);
    c = client_for(&e.w, e.cache, 0, 0);   /* a new run: the cache's ETags make both answers 304 */
    cr_assert_eq(get_stats(c, &e, "ok", 3, 1, &s), 0, "%s", sd_errmsg());
    check_stats_figures(&s);
    http_client_free(c);
    long hits, notmod;
    stats(&e.sv, "/crafted/stats/repos/ok/proj/stats/commit_activity", &hits, &notmod, NULL, 0);
    cr_assert_eq(hits, 2);
    cr_assert_eq(notmod, 1);
    stats(&e.sv, "/crafted/stats/repos/ok/proj/stats/contributors", &hits, &notmod, NULL, 0);
    cr_assert_eq(notmod, 1);
    server_stop(&e.sv);
}

/* 202 twice, then the answer: two waits per endpoint. Always 202: missing, "computing", and the empty
 * placeholder is never cached (a later failure cannot serve it as the last good answer). */
Test(http, stats_202_computing) {
    stats_env e;
    stats_start(&e);
    http_client *c = client_for(&e.w, e.cache, 0, 0);
    http_stats s;
    cr_assert_eq(get_stats(c, &e, "computing", 3, 0.5, &s), 0, "%s", sd_errmsg());
    check_stats_figures(&s);
    cr_assert_eq(e.w.n, 4);
    for (int i = 0; i < e.w.n; i++) cr_assert_eq(e.w.s[i], 0.5);
    e.w.n = 0;
    cr_assert_eq(get_stats(c, &e, "busy", 3, 0.5, &s), SD_ENET);
    cr_assert(!s.present && s.computing);
    cr_assert(strstr(s.why, "still computing the statistics (202 after 3 tries)"), "%s", s.why);
    cr_assert_eq(e.w.n, 2);
    http_client_free(c);   /* saves the cache */
    const char *text = read_all(e.cache);
    cr_assert(text && !strstr(text, "/busy/"), "a 202 placeholder was cached");
    cr_assert(strstr(text, "/computing/"), "the real answer after the 202s should be cached");
    server_stop(&e.sv);
}

/* 403 with X-RateLimit-Remaining 0 and a reset an hour away (over the 30 s bound): with a cached answer the
 * figures are served stale with the reason; without one they are missing with it. */
Test(http, stats_403_rate_limit) {
    stats_env e;
    stats_start(&e);
    http_client *c = client_for(&e.w, e.cache, 0, 1);
    http_stats s;
    cr_assert_eq(get_stats(c, &e, "limited", 1, 0, &s), 0, "%s", sd_errmsg());
    check_stats_figures(&s);
    cr_assert(!s.stale);
    cr_assert_eq(get_stats(c, &e, "limited", 1, 0, &s), 0, "%s", sd_errmsg());
    check_stats_figures(&s);
    cr_assert(s.stale);
    cr_assert(strstr(s.why, "HTTP 403") && strstr(s.why, "exceeds the bound"), "%s", s.why);
    cr_assert_eq(e.w.n, 0);   /* an hour is past the bound: no wait */
    http_client_free(c);
    c = client_for(&e.w, NULL, 0, 1);
    cr_assert_lt(get_stats(c, &e, "limited", 1, 0, &s), 0);
    cr_assert(!s.present);
    cr_assert(strstr(s.why, "HTTP 403"), "%s", s.why);
    http_client_free(c);
    server_stop(&e.sv);
}
