/* http_api — the answers showdown reads from the network: GitHub repository metadata, GitHub search
 * total_count, StackOverflow question count per tag (their URLs and parsers, for http_get_many), and GitHub's
 * commit and contributor statistics.
 * Each answer keeps its date and stale flag. */
#include "http/http.h"
#include "core/err.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parse r's body; on a JSON/shape problem set why and return NULL (body was valid JSON already). */
static json_t *body_json(const http_response *r, char *why, size_t len) {
    json_error_t e;
    json_t *j = json_loadb(r->body, r->len, 0, &e);
    if (!j) snprintf(why, len, "malformed JSON: %s", e.text);
    return j;
}

static void provenance(const http_response *r, int *stale, char *fetched, size_t flen, char *why, size_t wlen) {
    *stale = r->stale;
    snprintf(fetched, flen, "%s", r->fetched);
    snprintf(why, wlen, "%s", r->stale ? r->why : "");
}

int http_repo_meta_from(const http_response *r, const char *url, http_repo_meta *m) {
    memset(m, 0, sizeof *m);
    int rc = 0;
    json_t *j = body_json(r, m->why, sizeof m->why);
    json_t *stars = json_object_get(j, "stargazers_count"), *arch = json_object_get(j, "archived");
    const char *pushed = json_string_value(json_object_get(j, "pushed_at"));
    if (!json_is_integer(stars) || !json_is_boolean(arch)) {
        rc = sd_err(SD_EINPUT, "GET %s: answer lacks stargazers_count/archived", url);
        snprintf(m->why, sizeof m->why, "%s", sd_errmsg());
    } else {
        m->present = 1;
        m->stars = (long)json_integer_value(stars);
        m->archived = json_is_true(arch);
        snprintf(m->pushed_at, sizeof m->pushed_at, "%s", pushed ? pushed : "");
        provenance(r, &m->stale, m->fetched, sizeof m->fetched, m->why, sizeof m->why);
    }
    json_decref(j);
    return rc;
}

int http_count_from(const http_response *r, int se, http_value *v) {
    memset(v, 0, sizeof *v);
    if (r->rc < 0 || !r->body) {
        snprintf(v->why, sizeof v->why, "%s", r->why);
        return r->rc < 0 ? r->rc : sd_err(SD_ENET, "no answer");
    }
    int rc = 0;
    json_t *j = body_json(r, v->why, sizeof v->why);
    json_t *count = se ? json_object_get(json_array_get(json_object_get(j, "items"), 0), "count")
                       : json_object_get(j, "total_count");
    if (!json_is_integer(count)) {
        rc = sd_err(SD_EINPUT, "answer lacks %s", se ? "items[0].count" : "total_count");
        snprintf(v->why, sizeof v->why, "%s", sd_errmsg());
    } else {
        v->present = 1;
        v->value = (double)json_integer_value(count);
        provenance(r, &v->stale, v->fetched, sizeof v->fetched, v->why, sizeof v->why);
    }
    json_decref(j);
    return rc;
}

int http_github_search_url(const char *api, const char *kind, const char *q, char *url, size_t len) {
    char eq[1024];
    SD_TRY(http_escape(q, eq, sizeof eq));
    snprintf(url, len, "%s/search/%s?q=%s", api, kind, eq);
    return 0;
}

int http_se_tag_url(const char *se, const char *tag, char *url, size_t len) {
    char et[256];
    SD_TRY(http_escape(tag, et, sizeof et));
    snprintf(url, len, "%s/2.3/tags/%s/info?site=stackoverflow", se, et);
    return 0;
}

#define DAY 86400

int http_github_stats_url(const char *api, const char *owner, const char *name, const char *which, char *url,
                          size_t len) {
    char o[256], n[256];
    SD_TRY(http_escape(owner, o, sizeof o));
    SD_TRY(http_escape(name, n, sizeof n));
    snprintf(url, len, "%s/repos/%s/%s/stats/%s", api, o, n, which);
    return 0;
}

static int stats_body(const http_response *r, http_stats *s, json_t **out) {
    *out = NULL;
    if (r->rc < 0 || !r->body) {
        snprintf(s->why, sizeof s->why, "%s", r->why);
        return r->rc < 0 ? r->rc : sd_err(SD_ENET, "no answer");
    }
    json_t *j = body_json(r, s->why, sizeof s->why);
    if (!json_is_array(j)) {
        json_decref(j);
        int rc = sd_err(SD_EINPUT, "statistics answer is not an array (HTTP %ld)", r->status);
        snprintf(s->why, sizeof s->why, "%s", sd_errmsg());
        return rc;
    }
    *out = j;
    return 0;
}

static int bad_shape(http_stats *s, json_t *j, const char *what) {
    json_decref(j);
    int rc = sd_err(SD_EINPUT, "statistics answer: %s", what);
    snprintf(s->why, sizeof s->why, "%s", sd_errmsg());
    s->present = 0;
    return rc;
}

int http_commit_activity_from(const http_response *r, int64_t as_of, http_stats *s) {
    json_t *j;
    SD_TRY(stats_body(r, s, &j));
    long weeks = 0, commits = 0;
    size_t i;
    json_t *w;
    json_array_foreach(j, i, w) {
        json_t *t = json_object_get(w, "total"), *ws = json_object_get(w, "week");
        if (!json_is_integer(t) || !json_is_integer(ws) || json_integer_value(t) < 0)
            return bad_shape(s, j, "a week without integer 'week' and 'total' >= 0");
        int64_t start = (int64_t)json_integer_value(ws);
        long total = (long)json_integer_value(t);
        if (start >= as_of) continue;
        if (start >= as_of - 91 * (int64_t)DAY && total > 0) weeks++;
        if (start >= as_of - 365 * (int64_t)DAY) commits += total;
    }
    json_decref(j);
    s->weeks_active_13 = weeks;
    s->commits_365 = commits;
    return 0;
}

static int cmp_desc(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x < y) - (x > y);
}

int http_contributors_from(const http_response *r, int64_t as_of, http_stats *s) {
    json_t *j;
    SD_TRY(stats_body(r, s, &j));
    size_t n = json_array_size(j), i, k;
    long *per = calloc(n ? n : 1, sizeof *per), total = 0, recent = 0;
    if (!per) { json_decref(j); return sd_err(SD_ENOMEM, "out of memory"); }
    json_t *a, *w;
    json_array_foreach(j, i, a) {
        json_t *weeks = json_object_get(a, "weeks");
        if (!json_is_array(weeks)) { free(per); return bad_shape(s, j, "a contributor without 'weeks'"); }
        int active = 0;
        json_array_foreach(weeks, k, w) {
            json_t *ws = json_object_get(w, "w"), *c = json_object_get(w, "c");
            if (!json_is_integer(ws) || !json_is_integer(c) || json_integer_value(c) < 0) {
                free(per);
                return bad_shape(s, j, "a week without integer 'w' and 'c' >= 0");
            }
            int64_t start = (int64_t)json_integer_value(ws);
            long cc = (long)json_integer_value(c);
            if (start >= as_of || cc == 0) continue;
            if (start >= as_of - 365 * (int64_t)DAY) { per[i] += cc; total += cc; }
            if (start >= as_of - 90 * (int64_t)DAY) active = 1;
        }
        recent += active;
    }
    json_decref(j);
    qsort(per, n, sizeof *per, cmp_desc);
    long covered = 0, bus = 0;
    for (i = 0; i < n && 2 * covered < total; i++) { covered += per[i]; bus++; }
    free(per);
    s->authors_90 = recent;
    s->bus_factor_365 = bus;
    return 0;
}

/* One endpoint, asked again while GitHub answers 202 (computing). */
static int stats_get(http_client *c, const char *url, int tries, double wait_s, http_response *r, http_stats *s) {
    for (int t = 0; t < (tries > 0 ? tries : 1); t++) {
        if (t > 0) http_client_wait(c, wait_s);
        http_get(c, url, r);
        if (r->rc < 0 || r->status != 202) return 0;
        http_response_free(r);
    }
    s->computing = 1;
    snprintf(s->why, sizeof s->why, "GET %s: GitHub is still computing the statistics (202 after %d tries); ask again "
             "later", url, tries > 0 ? tries : 1);
    return sd_err(SD_ENET, "%s", s->why);
}

int http_github_stats(http_client *c, const char *api, const char *owner, const char *name, int64_t as_of, int tries,
                      double wait_s, http_stats *s) {
    memset(s, 0, sizeof *s);
    char url[1024];
    http_response r;
    int stale = 0;
    SD_TRY(http_github_stats_url(api, owner, name, "commit_activity", url, sizeof url));
    SD_TRY(stats_get(c, url, tries, wait_s, &r, s));
    int rc = http_commit_activity_from(&r, as_of, s);
    stale |= r.stale;
    snprintf(s->fetched, sizeof s->fetched, "%s", r.fetched);
    if (r.stale) snprintf(s->why, sizeof s->why, "%s", r.why);
    http_response_free(&r);
    if (rc < 0) return rc;
    SD_TRY(http_github_stats_url(api, owner, name, "contributors", url, sizeof url));
    SD_TRY(stats_get(c, url, tries, wait_s, &r, s));
    rc = http_contributors_from(&r, as_of, s);
    if (r.stale && !stale) snprintf(s->why, sizeof s->why, "%s", r.why);
    stale |= r.stale;
    if (strcmp(r.fetched, s->fetched) < 0) snprintf(s->fetched, sizeof s->fetched, "%s", r.fetched);
    http_response_free(&r);
    if (rc < 0) return rc;
    s->present = 1;
    s->stale = stale;
    return 0;
}
