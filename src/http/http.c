/* http — request engine: a queue of requests driven by one curl multi handle, each request a small
 * state machine (start, wait, retry, done). Waits are bounded by max_wait_s; a final failure falls
 * back to the cached body marked stale. Nothing here prints headers, so the token cannot leak. */
#include "http/http.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/fsutil.h"

#include <curl/curl.h>
#include <jansson.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define MAX_GATES 8

typedef struct gate { char host[256]; double until; char why[128]; } gate;

struct http_client {
    http_opts o;
    CURLM *multi;
    json_t *cache;            /* {url: {etag, body, fetched}} */
    int dirty;
    gate gates[MAX_GATES];    /* per host: no request before `until` (rate limit, SE backoff) */
};

typedef struct membuf { char *p; size_t n, cap, max; int too_big; } membuf;

#define MAX_REDIRECTS 5

typedef struct req {
    const char *url;          /* as asked: the cache key */
    char cur[2048];           /* where it is fetched from now: url, or where a redirect led */
    int redirects;
    http_response *r;
    CURL *h;
    struct curl_slist *hdrs;
    membuf body;
    double not_before;        /* wall clock */
    int state;                /* 0 pending, 1 in flight, 2 done */
    int retries;
} req;

static void iso_now(char *buf, size_t len) {
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void default_sleep(void *ctx, double s) {
    (void)ctx;
    if (s <= 0) return;
    struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

static void logf_(http_client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(http_client *c, const char *fmt, ...) {
    if (!c->o.log) return;
    va_list ap; va_start(ap, fmt);
    vfprintf(c->o.log, fmt, ap);
    va_end(ap);
    fputc('\n', c->o.log);
    fflush(c->o.log);
}

static void host_of(const char *url, char *out, size_t len) {
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    size_t n = strcspn(p, "/?#");
    if (n >= len) n = len - 1;
    memcpy(out, p, n);
    out[n] = 0;
}

static gate *gate_for(http_client *c, const char *url, int create) {
    char host[256];
    host_of(url, host, sizeof host);
    gate *free_slot = NULL;
    for (int i = 0; i < MAX_GATES; i++) {
        if (strcmp(c->gates[i].host, host) == 0) return &c->gates[i];
        if (!c->gates[i].host[0] && !free_slot) free_slot = &c->gates[i];
    }
    if (!create) return NULL;
    if (!free_slot) free_slot = &c->gates[0];
    memset(free_slot, 0, sizeof *free_slot);
    snprintf(free_slot->host, sizeof free_slot->host, "%s", host);
    return free_slot;
}

static int cache_load(http_client *c) {
    c->cache = NULL;
    if (c->o.cache_path) {
        FILE *f = fopen(c->o.cache_path, "rb");
        if (f) {
            json_error_t e;
            c->cache = json_loadf(f, JSON_REJECT_DUPLICATES, &e);
            fclose(f);
            if (!c->cache || !json_is_object(json_object_get(c->cache, "entries"))) {
                json_decref(c->cache);
                return sd_err(SD_EINPUT, "%s:%d:%d: bad HTTP cache file: %s", c->o.cache_path, e.line, e.column,
                              c->cache ? "no 'entries' object" : e.text);
            }
        }
    }
    if (!c->cache) {
        c->cache = json_pack("{s:s, s:{}}", "schema", "showdown-http-cache/1", "entries");
        SD_ALLOC_CHECK(c->cache);
    }
    return 0;
}

int http_cache_save(http_client *c) {
    if (!c || !c->o.cache_path || !c->dirty) return 0;
    char *text = json_dumps(c->cache, JSON_SORT_KEYS | JSON_INDENT(1));
    SD_ALLOC_CHECK(text);
    /* answers fetched with the token are this user's alone: the directory 0700 and the file 0600, every time */
    mode_t old = umask(077);
    int rc = sd_mkdir_p(c->o.cache_path, 1);   /* the cache directory (--cache-dir) */
    if (rc == 0) rc = sd_write_file_atomic(c->o.cache_path, text, strlen(text));
    umask(old);
    free(text);
    if (rc == 0) c->dirty = 0;
    return rc;
}

int http_default_cache_dir(char *buf, size_t n) {
    const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    if (x && x[0] == '/') snprintf(buf, n, "%s/showdown", x);
    else if (h && h[0] == '/') snprintf(buf, n, "%s/.cache/showdown", h);
    else   /* never a directory shared with other users, such as /tmp/.cache */
        return sd_err(SD_EUSAGE, "no directory for the HTTP cache: HOME and XDG_CACHE_HOME are unset or not absolute "
                      "(give --cache-dir DIR)");
    return 0;
}

int http_client_new(http_client **out, const http_opts *o) {
    *out = NULL;
    static int curl_ready;
    if (!curl_ready) {
        CURLcode cc = curl_global_init(CURL_GLOBAL_DEFAULT);
        if (cc != CURLE_OK) return sd_err(SD_EBACKEND, "curl_global_init: %s", curl_easy_strerror(cc));
        curl_ready = 1;
    }
    http_client *c = calloc(1, sizeof *c);
    SD_ALLOC_CHECK(c);
    c->o = *o;
    if (!c->o.user_agent) c->o.user_agent = "showdown";
    if (c->o.timeout_ms <= 0) c->o.timeout_ms = 30000;
    if (c->o.max_retries < 0) c->o.max_retries = 0;
    if (c->o.backoff_s <= 0) c->o.backoff_s = 1;
    if (c->o.max_wait_s <= 0) c->o.max_wait_s = 60;
    if (c->o.max_parallel <= 0) c->o.max_parallel = 4;
    if (c->o.max_body == 0) c->o.max_body = HTTP_MAX_BODY;
    if (!c->o.sleep_fn) c->o.sleep_fn = default_sleep;
    int rc = cache_load(c);
    if (rc < 0) { free(c); return rc; }
    c->multi = curl_multi_init();
    if (!c->multi) { json_decref(c->cache); free(c); return sd_err(SD_EBACKEND, "curl_multi_init failed"); }
    *out = c;
    return 0;
}

void http_client_free(http_client *c) {
    if (!c) return;
    if (http_cache_save(c) < 0) logf_(c, "http: cannot save cache: %s", sd_errmsg());
    curl_multi_cleanup(c->multi);
    json_decref(c->cache);
    free(c);
}

void http_response_free(http_response *r) {
    if (!r) return;
    free(r->body);
    r->body = NULL;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud) {
    membuf *b = ud;
    size_t n = size * nmemb;
    if (n > b->max || b->n > b->max - n) { b->too_big = 1; return 0; }   /* abort: answer too large */
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) return 0;
        b->p = p; b->cap = cap;
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
    b->p[b->n] = 0;
    return n;
}

static json_t *cache_entry(http_client *c, const char *url) {
    return json_object_get(json_object_get(c->cache, "entries"), url);
}

static int has_ctl(const char *s) {
    for (; *s; s++) if ((unsigned char)*s < 0x20 || *s == 0x7f) return 1;
    return 0;
}

/* The token goes to token_base and below only: "https://api.github.com" must not match
 * "https://api.github.com.example.net/..." (a Link header or a redirect chosen by a server). */
static int token_applies(const char *base, const char *url) {
    if (!base || !base[0]) return 0;
    size_t n = strlen(base);
    while (n > 0 && base[n - 1] == '/') n--;
    return strncmp(url, base, n) == 0 && (url[n] == 0 || url[n] == '/' || url[n] == '?' || url[n] == '#');
}

static int start(http_client *c, req *q) {
    q->body.n = 0;
    q->body.max = c->o.max_body;
    q->body.too_big = 0;
    if (q->body.p) q->body.p[0] = 0;
    if (!q->h) {
        q->h = curl_easy_init();
        if (!q->h) return sd_err(SD_EBACKEND, "curl_easy_init failed");
    } else {
        curl_easy_reset(q->h);
    }
    curl_slist_free_all(q->hdrs);
    q->hdrs = NULL;
    char line[1024];
    q->hdrs = curl_slist_append(q->hdrs, "Accept: application/json");
    /* decided per hop: a redirect (same host or not) outside token_base is fetched without it */
    if (c->o.token && c->o.token[0] && token_applies(c->o.token_base, q->cur)) {
        snprintf(line, sizeof line, "Authorization: Bearer %s", c->o.token);
        q->hdrs = curl_slist_append(q->hdrs, line);
    }
    json_t *e = cache_entry(c, q->url);
    const char *etag = json_string_value(json_object_get(e, "etag"));
    if (etag && etag[0] && strlen(etag) < 256 && !has_ctl(etag)) {   /* a cache file cannot inject header lines */
        snprintf(line, sizeof line, "If-None-Match: %s", etag);
        q->hdrs = curl_slist_append(q->hdrs, line);
    }
    curl_easy_setopt(q->h, CURLOPT_URL, q->cur);
    curl_easy_setopt(q->h, CURLOPT_HTTPHEADER, q->hdrs);
    curl_easy_setopt(q->h, CURLOPT_USERAGENT, c->o.user_agent);
    curl_easy_setopt(q->h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(q->h, CURLOPT_TIMEOUT_MS, c->o.timeout_ms);
    curl_easy_setopt(q->h, CURLOPT_CONNECTTIMEOUT_MS, c->o.timeout_ms);
    curl_easy_setopt(q->h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(q->h, CURLOPT_FOLLOWLOCATION, 0L);   /* followed in finish(), the token decided again */
    curl_easy_setopt(q->h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(q->h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(q->h, CURLOPT_WRITEDATA, &q->body);
    curl_easy_setopt(q->h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)c->o.max_body);   /* a Content-Length past it */
    curl_easy_setopt(q->h, CURLOPT_PRIVATE, q);
    q->r->attempts++;
    CURLMcode mc = curl_multi_add_handle(c->multi, q->h);
    if (mc != CURLM_OK) return sd_err(SD_EBACKEND, "curl_multi_add_handle: %s", curl_multi_strerror(mc));
    q->state = 1;
    return 0;
}

/* A response header, copied (curl reuses its storage on the next call); NULL if absent. */
static const char *header(CURL *h, const char *name, char *buf, size_t len) {
    struct curl_header *hd = NULL;
    if (curl_easy_header(h, name, 0, CURLH_HEADER, -1, &hd) != CURLHE_OK || !hd) return NULL;
    snprintf(buf, len, "%s", hd->value);
    return buf;
}

int http_header_num(const char *s, double *out) {
    if (!s) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s) return -1;
    while (*end == ' ') end++;
    if (*end) return -1;
    *out = v;
    return 0;
}

/* The URL of rel="next" in a Link header. */
void http_link_next(const char *link, char *out, size_t len) {
    out[0] = 0;
    if (!link) return;
    const char *p = link;
    while ((p = strchr(p, '<')) != NULL) {
        const char *end = strchr(p, '>');
        if (!end) return;
        const char *sep = strchr(end, ',');
        const char *rel = strstr(end, "rel=\"next\"");
        if (rel && (!sep || rel < sep)) {
            size_t n = (size_t)(end - p - 1);
            if (n >= len) return;
            memcpy(out, p + 1, n);
            out[n] = 0;
            return;
        }
        p = end;
    }
}

/* Final failure: stale cached body if any. */
static void fail(http_client *c, req *q, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void fail(http_client *c, req *q, int code, const char *fmt, ...) {
    http_response *r = q->r;
    va_list ap; va_start(ap, fmt);
    vsnprintf(r->why, sizeof r->why, fmt, ap);
    va_end(ap);
    q->state = 2;
    json_t *e = cache_entry(c, q->url);
    const char *body = json_string_value(json_object_get(e, "body"));
    if (body) {
        r->body = strdup(body);
        if (!r->body) { r->rc = sd_err(SD_ENOMEM, "out of memory"); return; }
        r->len = strlen(body);
        r->stale = 1;
        r->rc = 0;
        snprintf(r->fetched, sizeof r->fetched, "%s", json_string_value(json_object_get(e, "fetched")) ?
                 json_string_value(json_object_get(e, "fetched")) : "");
        logf_(c, "http: GET %s failed (%s); using the cached answer of %s, marked stale", q->url, r->why, r->fetched);
        return;
    }
    r->rc = code;
    logf_(c, "http: GET %s failed (%s); nothing cached", q->url, r->why);
}

/* Retry after `wait` seconds if the bound and the retry budget allow, else fail. */
static void retry_or_fail(http_client *c, req *q, double wait, const char *why) {
    if (wait > c->o.max_wait_s) {
        fail(c, q, SD_ENET, "%s; the wait of %.0f s exceeds the bound of %.0f s", why, wait, c->o.max_wait_s);
        return;
    }
    if (q->retries >= c->o.max_retries) {
        fail(c, q, SD_ENET, "%s; gave up after %d attempts", why, q->r->attempts);
        return;
    }
    q->retries++;
    q->not_before = sd_wall_now() + wait;
    q->state = 0;
    logf_(c, "http: GET %s: %s; retry %d in %.1f s", q->url, why, q->retries, wait);
}

static void finish(http_client *c, req *q, CURLcode cc) {
    http_response *r = q->r;
    long status = 0;
    curl_easy_getinfo(q->h, CURLINFO_RESPONSE_CODE, &status);
    r->status = status;
    double backoff = c->o.backoff_s * pow(2.0, q->retries);
    if (cc != CURLE_OK && (q->body.too_big || cc == CURLE_FILESIZE_EXCEEDED)) {
        fail(c, q, SD_ELIMIT, "answer larger than %zu bytes (the bound on one HTTP answer)", c->o.max_body);
        return;
    }
    if (cc != CURLE_OK) {
        char why[256];
        snprintf(why, sizeof why, "curl error %d: %s", (int)cc, curl_easy_strerror(cc));
        int transient = cc == CURLE_OPERATION_TIMEDOUT || cc == CURLE_COULDNT_CONNECT || cc == CURLE_RECV_ERROR ||
                        cc == CURLE_SEND_ERROR || cc == CURLE_GOT_NOTHING || cc == CURLE_PARTIAL_FILE;
        if (transient) retry_or_fail(c, q, backoff, why);
        else fail(c, q, SD_ENET, "%s", why);
        return;
    }
    /* Rate-limit bookkeeping for the host, from any answer. */
    double remaining, reset;
    char hb1[64], hb2[64], linkb[2048], etagb[256], rab[64];
    if (http_header_num(header(q->h, "X-RateLimit-Remaining", hb1, sizeof hb1), &remaining) == 0 && remaining <= 0 &&
        http_header_num(header(q->h, "X-RateLimit-Reset", hb2, sizeof hb2), &reset) == 0) {
        if (reset > 1e11) reset /= 1000.0;   /* milliseconds (seen in recorded fixtures) */
        gate *g = gate_for(c, q->url, 1);
        g->until = reset;
        snprintf(g->why, sizeof g->why, "rate limit exhausted until reset");
    }
    if (status == 301 || status == 302 || status == 303 || status == 307 || status == 308) {
        char *to = NULL;
        curl_easy_getinfo(q->h, CURLINFO_REDIRECT_URL, &to);
        if (!to || (strncmp(to, "http://", 7) != 0 && strncmp(to, "https://", 8) != 0) || strlen(to) >= sizeof q->cur)
            fail(c, q, SD_ENET, "HTTP %ld redirect without a usable http(s) Location", status);
        else if (q->redirects >= MAX_REDIRECTS)
            fail(c, q, SD_ENET, "more than %d redirects", MAX_REDIRECTS);
        else {
            logf_(c, "http: GET %s -> %ld, to %s", q->cur, status, to);
            snprintf(q->cur, sizeof q->cur, "%s", to);
            q->redirects++;
            q->not_before = 0;
            q->state = 0;
        }
        return;
    }
    if (status == 304) {
        json_t *e = cache_entry(c, q->url);
        const char *body = json_string_value(json_object_get(e, "body"));
        if (body) {
            r->body = strdup(body);
            if (!r->body) { r->rc = sd_err(SD_ENOMEM, "out of memory"); q->state = 2; return; }
            r->len = strlen(body);
            r->from_cache = 1;
            r->status = 200;
            snprintf(r->fetched, sizeof r->fetched, "%s", json_string_value(json_object_get(e, "fetched")));
            http_link_next(json_string_value(json_object_get(e, "link")), r->next, sizeof r->next);
            q->state = 2;
            logf_(c, "http: GET %s -> 304, cached answer of %s", q->url, r->fetched);
            return;
        }
        fail(c, q, SD_ENET, "304 Not Modified without a cached answer");
        return;
    }
    if (status >= 200 && status < 300) {
        json_error_t je;
        json_t *doc = json_loadb(q->body.p ? q->body.p : "", q->body.n, 0, &je);
        if (!doc) {
            fail(c, q, SD_EINPUT, "malformed JSON from the server at line %d column %d: %s", je.line, je.column, je.text);
            return;
        }
        json_t *bo = json_object_get(doc, "backoff");
        if (json_is_integer(bo) && json_integer_value(bo) > 0) {
            gate *g = gate_for(c, q->url, 1);
            double until = sd_wall_now() + (double)json_integer_value(bo);
            if (until > g->until) g->until = until;
            snprintf(g->why, sizeof g->why, "server asked for a backoff of %lld s", (long long)json_integer_value(bo));
        }
        json_decref(doc);
        r->body = q->body.p ? q->body.p : strdup("");
        q->body.p = NULL; q->body.n = q->body.cap = 0;
        if (!r->body) { r->rc = sd_err(SD_ENOMEM, "out of memory"); q->state = 2; return; }
        r->len = strlen(r->body);
        iso_now(r->fetched, sizeof r->fetched);
        const char *link = header(q->h, "Link", linkb, sizeof linkb);
        http_link_next(link, r->next, sizeof r->next);
        const char *etag = header(q->h, "ETag", etagb, sizeof etagb);
        json_t *e = json_pack("{s:s, s:s, s:s, s:s}", "etag", etag ? etag : "", "body", r->body, "fetched", r->fetched,
                              "link", link ? link : "");
        /* 202 Accepted is GitHub's "statistics being computed" placeholder: never the last good answer. */
        if (status == 202) json_decref(e);
        else if (e && json_object_set_new(json_object_get(c->cache, "entries"), q->url, e) == 0) c->dirty = 1;
        q->state = 2;
        r->rc = 0;
        logf_(c, "http: GET %s -> %ld%s", q->url, status, etag ? " (ETag stored)" : "");
        return;
    }
    char why[128];
    snprintf(why, sizeof why, "HTTP %ld", status);
    if (status == 403 || status == 429) {
        double ra;
        if (http_header_num(header(q->h, "Retry-After", rab, sizeof rab), &ra) == 0) { retry_or_fail(c, q, ra, why); return; }
        gate *g = gate_for(c, q->url, 0);
        if (g && g->until > sd_wall_now()) { retry_or_fail(c, q, g->until - sd_wall_now(), why); return; }
        fail(c, q, SD_ENET, "%s (forbidden, no Retry-After or rate-limit reset given)", why);
        return;
    }
    if (status >= 500) { retry_or_fail(c, q, backoff, why); return; }
    fail(c, q, SD_ENET, "%s", why);
}

void http_client_wait(http_client *c, double seconds) {
    if (seconds > c->o.max_wait_s) seconds = c->o.max_wait_s;
    if (seconds > 0) c->o.sleep_fn(c->o.sleep_ctx, seconds);
}

int http_get_many(http_client *c, const char *const *urls, size_t n, http_response *rs) {
    req *qs = calloc(n ? n : 1, sizeof *qs);
    SD_ALLOC_CHECK(qs);
    for (size_t i = 0; i < n; i++) {
        memset(&rs[i], 0, sizeof rs[i]);
        qs[i].url = urls[i];
        snprintf(qs[i].cur, sizeof qs[i].cur, "%s", urls[i]);
        qs[i].r = &rs[i];
    }
    int rc = 0;
    size_t done = 0;
    while (done < n) {
        int inflight = 0;
        for (size_t i = 0; i < n; i++) inflight += qs[i].state == 1;
        double now = sd_wall_now(), next_ready = INFINITY;
        for (size_t i = 0; i < n && inflight < c->o.max_parallel; i++) {
            req *q = &qs[i];
            if (q->state != 0) continue;
            gate *g = gate_for(c, q->url, 0);
            double nb = q->not_before;
            if (g && g->until > nb) {
                if (g->until - now > c->o.max_wait_s) {
                    fail(c, q, SD_ENET, "%s: %s, %.0f s away (more than the bound of %.0f s)", g->host, g->why,
                         g->until - now, c->o.max_wait_s);
                    done++;
                    continue;
                }
                nb = g->until;
            }
            if (nb > now) { if (nb < next_ready) next_ready = nb; continue; }
            if ((rc = start(c, q)) < 0) goto out;
            inflight++;
        }
        if (inflight == 0) {
            if (next_ready == INFINITY) continue;   /* everything left was failed above */
            double wait = next_ready - now;
            c->o.sleep_fn(c->o.sleep_ctx, wait);
            /* The hook may not really sleep (tests): count the wait as served. */
            for (size_t i = 0; i < n; i++) if (qs[i].state == 0 && qs[i].not_before <= next_ready) qs[i].not_before = 0;
            for (int k = 0; k < MAX_GATES; k++) if (c->gates[k].until <= next_ready) c->gates[k].until = 0;
            continue;
        }
        int running = 0;
        CURLMcode mc = curl_multi_perform(c->multi, &running);
        if (mc == CURLM_OK) mc = curl_multi_poll(c->multi, NULL, 0, 100, NULL);
        if (mc != CURLM_OK) { rc = sd_err(SD_EBACKEND, "curl multi: %s", curl_multi_strerror(mc)); goto out; }
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(c->multi, &left)) != NULL) {
            if (msg->msg != CURLMSG_DONE) continue;
            req *q = NULL;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&q);
            CURLcode cc = msg->data.result;
            curl_multi_remove_handle(c->multi, msg->easy_handle);
            finish(c, q, cc);
            if (q->state == 2) done++;
        }
    }
out:
    for (size_t i = 0; i < n; i++) {
        if (qs[i].h) { curl_multi_remove_handle(c->multi, qs[i].h); curl_easy_cleanup(qs[i].h); }
        curl_slist_free_all(qs[i].hdrs);
        free(qs[i].body.p);
    }
    free(qs);
    if (rc < 0) return rc;
    for (size_t i = 0; i < n; i++)
        if (rs[i].rc < 0) return sd_err(rs[i].rc, "GET %s: %s", urls[i], rs[i].why);
    return 0;
}

int http_get(http_client *c, const char *url, http_response *r) {
    return http_get_many(c, &url, 1, r);
}

int http_get_paged(http_client *c, const char *url, int max_pages,
                   int (*page)(void *ctx, const http_response *r), void *ctx) {
    char cur[2048];
    snprintf(cur, sizeof cur, "%s", url);
    for (int i = 0; i < max_pages && cur[0]; i++) {
        http_response r;
        int rc = http_get(c, cur, &r);
        if (rc == 0) rc = page(ctx, &r);
        snprintf(cur, sizeof cur, "%s", r.next);
        http_response_free(&r);
        if (rc < 0) return rc;
    }
    return 0;
}

int http_escape(const char *s, char *out, size_t len) {
    static const char hex[] = "0123456789ABCDEF";
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        int keep = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
                   *p == '-' || *p == '.' || *p == '_' || *p == '~';
        if (k + (keep ? 1 : 3) >= len) return sd_err(SD_ELIMIT, "URL component too long: %.60s...", s);
        if (keep) out[k++] = (char)*p;
        else { out[k++] = '%'; out[k++] = hex[*p >> 4]; out[k++] = hex[*p & 15]; }
    }
    out[k] = 0;
    return 0;
}
