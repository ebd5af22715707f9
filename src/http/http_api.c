/* http_api — the three questions showdown asks the network: GitHub repository metadata, GitHub search
 * total_count, StackOverflow question count per tag. Each answer keeps its date and stale flag. */
#include "http/http.h"
#include "core/err.h"

#include <jansson.h>
#include <stdio.h>
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

int http_github_repo(http_client *c, const char *api, const char *owner, const char *name, http_repo_meta *m) {
    memset(m, 0, sizeof *m);
    char o[256], n[256], url[1024];
    SD_TRY(http_escape(owner, o, sizeof o));
    SD_TRY(http_escape(name, n, sizeof n));
    snprintf(url, sizeof url, "%s/repos/%s/%s", api, o, n);
    http_response r;
    int rc = http_get(c, url, &r);
    if (rc < 0) { snprintf(m->why, sizeof m->why, "%s", r.why); http_response_free(&r); return rc; }
    rc = http_repo_meta_from(&r, url, m);
    http_response_free(&r);
    return rc;
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

static int count_at(http_client *c, const char *url, http_value *v, int se) {
    http_response r;
    http_get(c, url, &r);
    int rc = http_count_from(&r, se, v);
    http_response_free(&r);
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

int http_github_search_count(http_client *c, const char *api, const char *kind, const char *q, http_value *v) {
    char url[2048];
    SD_TRY(http_github_search_url(api, kind, q, url, sizeof url));
    return count_at(c, url, v, 0);
}

int http_se_tag_count(http_client *c, const char *se, const char *tag, http_value *v) {
    char url[1024];
    SD_TRY(http_se_tag_url(se, tag, url, sizeof url));
    return count_at(c, url, v, 1);
}
