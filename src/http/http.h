/* http — the libcurl client for the GitHub and StackExchange JSON APIs: bounded concurrent requests
 * (curl multi), ETag / If-None-Match cache kept in a JSON file, Retry-After, X-RateLimit-Remaining/
 * Reset and StackExchange `backoff` honoured with a bounded wait, 5xx and timeouts retried with
 * backoff, gzip, Link pagination. When a request still fails, the last good answer from the cache is
 * returned marked stale with its date. The token is sent only to token_base and never logged. */
#ifndef SD_HTTP_H
#define SD_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HTTP_MAX_BODY (64u << 20)

typedef struct http_opts {
    const char *cache_path;   /* JSON cache file (ETag, body, date per URL); NULL: no cache */
    const char *token;        /* sent as "Authorization: Bearer ..." to URLs starting with token_base */
    const char *token_base;   /* e.g. "https://api.github.com"; NULL: token never sent */
    const char *user_agent;   /* NULL: "showdown" */
    long timeout_ms;          /* whole transfer; 0: 30000 */
    int max_retries;          /* retries after the first attempt for 5xx / timeouts / resets; <0: 0 */
    double backoff_s;         /* first retry delay, doubled per retry; 0: 1 */
    double max_wait_s;        /* bound on any single wait (Retry-After, rate-limit reset, backoff); 0: 60 */
    int max_parallel;         /* concurrent transfers; 0: 4 */
    size_t max_body;          /* bytes of one answer kept (decoded); past it the request fails with SD_ELIMIT
                                 "answer larger than N bytes"; 0: HTTP_MAX_BODY */
    FILE *log;                /* one line per request (method, URL, status, cache use); NULL: silent */
    /* Wait hook (tests record waits instead of sleeping); NULL: nanosleep. */
    void (*sleep_fn)(void *ctx, double seconds);
    void *sleep_ctx;
} http_opts;

typedef struct http_response {
    int rc;                   /* 0 ok (possibly stale), negative SD_E* when no answer at all */
    long status;              /* last HTTP status seen (0: none); 200 for a 304 served from cache */
    char *body;               /* NUL-terminated JSON text (owned), NULL on failure */
    size_t len;
    int from_cache;           /* answered 304: body is the cached one */
    int stale;                /* the request failed; body is the last good cached answer */
    char fetched[32];         /* UTC date-time the body was fetched from the server */
    char why[512];            /* failure reason (also set when stale) */
    char next[2048];          /* Link rel="next" URL, "" if none */
    int attempts;
} http_response;

typedef struct http_client http_client;

int http_client_new(http_client **out, const http_opts *o);
/* The default cache directory: $XDG_CACHE_HOME/showdown, else $HOME/.cache/showdown; SD_EUSAGE when neither is
 * set (absolute). The cache file is written 0600 in a directory made 0700. */
int http_default_cache_dir(char *buf, size_t n);
/* Saves the cache (if any) and frees. NULL-safe. */
void http_client_free(http_client *c);
int http_cache_save(http_client *c);

/* GET each of n URLs (at most max_parallel at once); results in rs[i]. Returns 0 when every response
 * has a body (fresh or stale), else the first failing rs[i].rc (its message in sd_errmsg()). */
int http_get_many(http_client *c, const char *const *urls, size_t n, http_response *rs);
int http_get(http_client *c, const char *url, http_response *r);
void http_response_free(http_response *r);

/* Follow Link rel="next" from url, calling page() for each response (at most max_pages). */
int http_get_paged(http_client *c, const char *url, int max_pages,
                   int (*page)(void *ctx, const http_response *r), void *ctx);

/* Parsers of what a server sends, exposed for the fuzzers: the URL of rel="next" in a Link header ("" if
 * none or longer than len - 1); a numeric header value (Retry-After, X-RateLimit-*): 0 and *out, or -1. */
void http_link_next(const char *link, char *out, size_t len);
int http_header_num(const char *s, double *out);

/* Percent-encode s (RFC 3986 unreserved kept) into out. */
int http_escape(const char *s, char *out, size_t len);

/* API helpers over http_get. Each fills a value and its provenance (fetched date, stale flag, why). */
typedef struct http_value {
    int present;              /* 0: no answer and nothing cached */
    double value;
    int stale;
    char fetched[32];
    char why[512];
} http_value;

/* GET {api}/repos/{owner}/{name}: stars, archived, pushed_at. */
typedef struct http_repo_meta {
    int present, stale;
    long stars;
    int archived;
    char pushed_at[32];
    char fetched[32];
    char why[512];
} http_repo_meta;
/* The metadata in an answer r to url (the fuzzers' entry point); SD_EINPUT when it lacks the fields. */
int http_repo_meta_from(const http_response *r, const char *url, http_repo_meta *m);

/* Building blocks for concurrent use with http_get_many: the URLs, and the count in an answer
 * (se: items[0].count, else total_count). */
int http_github_search_url(const char *api, const char *kind, const char *q, char *url, size_t len);
int http_se_tag_url(const char *se, const char *tag, char *url, size_t len);
int http_count_from(const http_response *r, int se, http_value *v);

/* Wait through the client's sleep hook, bounded by max_wait_s. */
void http_client_wait(http_client *c, double seconds);

/* GitHub REST statistics: the maintenance figures of git_activity for a repository too large to mirror.
 * commit_activity gives 52 weeks starting Sundays 00:00 UTC: weeks_active_13 counts the weeks whose start
 * lies in [as_of - 91 d, as_of) with a commit, commits_365 the commits of weeks starting in
 * [as_of - 365 d, as_of). contributors (GitHub lists the top 100 authors only) gives authors_90 = authors
 * with a commit in a week starting in [as_of - 90 d, as_of) and bus_factor_365 over [as_of - 365 d, as_of).
 * GitHub answers 202 with an empty body while it computes: asked again up to tries times, wait_s apart,
 * then missing ("computing"). Release tags are not in these endpoints. */
typedef struct http_stats {
    int present, stale, computing;
    long weeks_active_13, commits_365, authors_90, bus_factor_365;
    char fetched[32];
    char why[512];
} http_stats;
int http_github_stats_url(const char *api, const char *owner, const char *name, const char *which, char *url,
                          size_t len);
/* The figures in an answer (the fuzzers' entry points); SD_EINPUT when the body has another shape. */
int http_commit_activity_from(const http_response *r, int64_t as_of, http_stats *s);
int http_contributors_from(const http_response *r, int64_t as_of, http_stats *s);
int http_github_stats(http_client *c, const char *api, const char *owner, const char *name, int64_t as_of, int tries,
                      double wait_s, http_stats *s);

#endif
