/* score_data — readers for scoring/frameworks/ *.json, scoring/ops.json and scoring/snapshot.json
 * (jv: positioned errors), the snapshot writer (jansson, deterministic, atomic), and score_build: the
 * formulas that make raw criterion values from qualitative inputs and measured snapshot values. */
#include "score/score_data.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/jv.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* ---- dates ------------------------------------------------------------------------------------ */

int score_date_parse(const char *s, int end_of_day, int64_t *out) {
    int y, mo, d, h = 0, mi = 0, se = 0, n = 0;
    size_t len = strlen(s);
    struct tm tm = {0};
    if (len == 10 && sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) == 3 && n == 10) {
        h = mi = se = 0;
    } else if (len == 20 && sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &y, &mo, &d, &h, &mi, &se, &n) == 6 && n == 20) {
        end_of_day = 0;
    } else {
        return sd_err(SD_EINPUT, "bad date '%s' (expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ)", s);
    }
    if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
        return sd_err(SD_EINPUT, "bad date '%s' (field out of range)", s);
    tm.tm_year = y - 1900; tm.tm_mon = mo - 1; tm.tm_mday = d;
    tm.tm_hour = h; tm.tm_min = mi; tm.tm_sec = se;
    int64_t t = (int64_t)timegm(&tm);
    struct tm back;
    time_t tt = (time_t)t;
    gmtime_r(&tt, &back);
    if (back.tm_mday != d) return sd_err(SD_EINPUT, "bad date '%s' (no such day)", s);
    *out = end_of_day ? t + 86400 : t;
    return 0;
}

void score_date_iso(int64_t t, char *buf, size_t len) {
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void score_date_day(int64_t t, char *buf, size_t len) {
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(buf, len, "%Y-%m-%d", &tm);
}

int score_mirror_fetched(const char *mirror, char *buf, size_t len) {
    /* a fetch rewrites FETCH_HEAD; a clone that was never fetched again has its refs from the clone */
    static const char *const marks[] = {"FETCH_HEAD", "packed-refs", "HEAD"};
    char p[4096];
    struct stat st;
    for (size_t i = 0; i < sizeof marks / sizeof *marks; i++) {
        snprintf(p, sizeof p, "%s/%s", mirror, marks[i]);
        if (stat(p, &st) == 0) {
            score_date_iso((int64_t)st.st_mtime, buf, len);
            return 0;
        }
    }
    buf[0] = 0;
    return sd_err(SD_EIO, "%s: no FETCH_HEAD, packed-refs or HEAD: not a git mirror", mirror);
}

int score_repo_key(const char *url, char *key, size_t klen, char *owner, size_t olen, char *name, size_t nlen) {
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    const char *s1 = strchr(p, '/');
    const char *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
    if (!s1 || !s2 || s2 == s1 + 1 || !s2[1] || strchr(s2 + 1, '/'))
        return sd_err(SD_EINPUT, "repository URL '%s' is not https://HOST/OWNER/NAME", url);
    size_t nl = strlen(s2 + 1);
    if (nl > 4 && strcmp(s2 + 1 + nl - 4, ".git") == 0) nl -= 4;
    if ((size_t)(s2 - s1 - 1) >= olen || nl >= nlen || (size_t)(s2 - p + 1 + nl) >= klen)
        return sd_err(SD_ELIMIT, "repository URL '%.80s' is too long", url);
    snprintf(key, klen, "%.*s", (int)(s2 - p + 1 + nl), p);
    snprintf(owner, olen, "%.*s", (int)(s2 - s1 - 1), s1 + 1);
    snprintf(name, nlen, "%.*s", (int)nl, s2 + 1);
    /* owner and name become a mirror directory name (OWNER+NAME.git): no "..", no '/' */
    SD_TRY(sd_safe_name(owner, "repository owner"));
    SD_TRY(sd_safe_name(name, "repository name"));
    return 0;
}

/* ---- framework files -------------------------------------------------------------------------- */

static int check_dated(const jv_doc *d, const jv *v, const char *what) {
    const char *checked = NULL, *source = NULL;
    SD_TRY(jv_get_str(d, v, "source", what, 1, &source));
    SD_TRY(jv_get_str(d, v, "checked", what, 1, &checked));
    int64_t t;
    if (score_date_parse(checked, 0, &t) < 0)
        return jv_err(d, jv_get(v, "checked"), "bad date '%s' for 'checked' in %s (expected YYYY-MM-DD)", checked, what);
    return 0;
}

static score_qual *add_qual(score_framework *f, const char *key) {
    if (f->nqual >= SCORE_MAX_QUAL) return NULL;
    score_qual *q = &f->qual[f->nqual++];
    snprintf(q->key, sizeof q->key, "%s", key);
    return q;
}

/* {value, source, checked, note?, missing?}; value null needs 'missing'. kind: 0 number, 1 languages
 * (array of {name, maturity}: sum), 2 list of strings (count). */
static int read_qual(const jv_doc *d, const jv *v, const char *key, int kind, score_framework *f) {
    static const char *const keys[] = {"value", "source", "checked", "note", "missing", NULL};
    SD_TRY(jv_expect(d, v, JV_OBJECT, key));
    SD_TRY(jv_check_keys(d, v, key, keys));
    SD_TRY(check_dated(d, v, key));
    score_qual *q = add_qual(f, key);
    if (!q) return jv_err(d, v, "too many inputs");
    snprintf(q->v.date, sizeof q->v.date, "%s", jv_get(v, "checked")->string);
    const jv *val = jv_get(v, "value");
    if (!val) return jv_err(d, v, "missing key 'value' in %s", key);
    if (val->type == JV_NULL) {
        const char *why = NULL;
        SD_TRY(jv_get_str(d, v, "missing", key, 1, &why));
        snprintf(q->v.why, sizeof q->v.why, "%s", why);
        return 0;
    }
    if (kind == 0) {
        SD_TRY(jv_get_num(d, v, "value", key, 1, 0, 1e9, &q->v.value));
    } else if (kind == 1) {
        SD_TRY(jv_expect(d, val, JV_ARRAY, key));
        for (size_t i = 0; i < val->count; i++) {
            static const char *const lkeys[] = {"name", "maturity", NULL};
            double mat = 0;
            const char *name = NULL;
            SD_TRY(jv_expect(d, val->items[i], JV_OBJECT, "language"));
            SD_TRY(jv_check_keys(d, val->items[i], "language", lkeys));
            SD_TRY(jv_get_str(d, val->items[i], "name", "language", 1, &name));
            SD_TRY(jv_get_num(d, val->items[i], "maturity", "language", 1, 0, 1, &mat));
            q->v.value += mat;
        }
    } else {
        SD_TRY(jv_expect(d, val, JV_ARRAY, key));
        for (size_t i = 0; i < val->count; i++) SD_TRY(jv_expect(d, val->items[i], JV_STRING, key));
        q->v.value = (double)val->count;
    }
    q->v.present = 1;
    return 0;
}

static int read_names(const jv_doc *d, const jv *root, const char *key, char out[][64], int *n) {
    const jv *a = jv_get(root, key);
    if (!a) return jv_err(d, root, "missing key '%s' in framework", key);
    SD_TRY(jv_expect(d, a, JV_ARRAY, key));
    if (a->count > SCORE_MAX_NAMES) return jv_err(d, a, "at most %d entries in %s", SCORE_MAX_NAMES, key);
    for (size_t i = 0; i < a->count; i++) {
        SD_TRY(jv_expect(d, a->items[i], JV_STRING, key));
        if (a->items[i]->string_len >= 64) return jv_err(d, a->items[i], "name too long in %s", key);
        snprintf(out[i], 64, "%s", a->items[i]->string);
    }
    *n = (int)a->count;
    return 0;
}

static int read_framework(const jv_doc *d, void *out) {
    score_framework *f = out;
    static const char *const keys[] = {"schema", "id", "name", "in_2018", "status", "repositories",
                                       "stackoverflow_tags", "github_search_terms", "check_method", "inputs", NULL};
    static const char *const ikeys[] = {"sponsor", "documentation", "graph_building", "numerics", "languages",
                                        "scalability", "os", "cloud", "onnx", NULL};
    static const char *const schemas[] = {"showdown-framework/1", NULL};
    SD_TRY(jv_root_schema(d, "framework", keys, schemas));
    const jv *root = jv_root(d);
    SD_TRY(jv_get_str_copy(d, root, "id", "framework", 1, f->id, sizeof f->id));
    SD_TRY(jv_get_str_copy(d, root, "name", "framework", 1, f->name, sizeof f->name));
    SD_TRY(jv_get_bool(d, root, "in_2018", "framework", 1, &f->in_2018));
    const jv *st = jv_get(root, "status");
    static const char *const skeys[] = {"value", "source", "checked", "note", NULL};
    if (!st) return jv_err(d, root, "missing key 'status' in framework");
    SD_TRY(jv_expect(d, st, JV_OBJECT, "status"));
    SD_TRY(jv_check_keys(d, st, "status", skeys));
    SD_TRY(check_dated(d, st, "status"));
    SD_TRY(jv_get_str_copy(d, st, "value", "status", 1, f->status, sizeof f->status));
    static const char *const statuses[] = {"active", "maintenance", "inactive", "archived", "retired", NULL};
    int ok = 0;
    for (int i = 0; statuses[i]; i++) ok |= strcmp(f->status, statuses[i]) == 0;
    if (!ok) return jv_err(d, jv_get(st, "value"), "unknown status '%s' (expected active, maintenance, inactive, "
                           "archived or retired)", f->status);
    const jv *repos = jv_get(root, "repositories");
    if (!repos) return jv_err(d, root, "missing key 'repositories' in framework");
    SD_TRY(jv_expect(d, repos, JV_ARRAY, "repositories"));
    for (size_t i = 0; i < repos->count; i++) {
        static const char *const rkeys[] = {"url", "role", NULL};
        const char *url = NULL, *role = NULL;
        SD_TRY(jv_expect(d, repos->items[i], JV_OBJECT, "repository"));
        SD_TRY(jv_check_keys(d, repos->items[i], "repository", rkeys));
        SD_TRY(jv_get_str(d, repos->items[i], "url", "repository", 1, &url));
        SD_TRY(jv_get_str(d, repos->items[i], "role", "repository", 1, &role));
        char owner[64], name[96];
        if (score_repo_key(url, f->repo, sizeof f->repo, owner, sizeof owner, name, sizeof name) < 0)
            return jv_err(d, jv_get(repos->items[i], "url"), "%s", sd_errmsg());
        if (strcmp(role, "main") == 0) break;
        f->repo[0] = 0;
    }
    if (!f->repo[0]) return jv_err(d, repos, "no repository with role 'main'");
    SD_TRY(read_names(d, root, "stackoverflow_tags", f->tags, &f->ntags));
    SD_TRY(read_names(d, root, "github_search_terms", f->terms, &f->nterms));
    const jv *in = jv_get(root, "inputs");
    if (!in) return jv_err(d, root, "missing key 'inputs' in framework");
    SD_TRY(jv_expect(d, in, JV_OBJECT, "inputs"));
    SD_TRY(jv_check_keys(d, in, "inputs", ikeys));
    for (int i = 0; ikeys[i]; i++) {
        const jv *v = jv_get(in, ikeys[i]);
        if (!v) return jv_err(d, in, "missing key '%s' in inputs", ikeys[i]);
        if (strcmp(ikeys[i], "numerics") == 0) {
            static const char *const nkeys[] = {"library", "repository", "repository_missing", "shared", "maturity",
                                                "ease", "source", "checked", "note", NULL};
            SD_TRY(jv_expect(d, v, JV_OBJECT, "numerics"));
            SD_TRY(jv_check_keys(d, v, "numerics", nkeys));
            SD_TRY(check_dated(d, v, "numerics"));
            const char *lib = NULL, *url = NULL;
            SD_TRY(jv_get_str(d, v, "library", "numerics", 1, &lib));
            SD_TRY(jv_get_str_copy(d, v, "library", "numerics", 1, f->numerics_lib, sizeof f->numerics_lib));
            if (jv_get(v, "shared")) SD_TRY(jv_get_bool(d, v, "shared", "numerics", 1, &f->numerics_shared));
            SD_TRY(jv_get_str(d, v, "repository", "numerics", 0, &url));
            if (url) {
                char owner[64], name[96];
                if (score_repo_key(url, f->numerics_repo, sizeof f->numerics_repo, owner, sizeof owner, name,
                                   sizeof name) < 0)
                    return jv_err(d, jv_get(v, "repository"), "%s", sd_errmsg());
            } else {
                SD_TRY(jv_get_str_copy(d, v, "repository_missing", "numerics (no 'repository')", 1, f->numerics_repo_why,
                                sizeof f->numerics_repo_why));
            }
            score_qual *qm = add_qual(f, "numerics.maturity"), *qe = add_qual(f, "numerics.ease");
            if (!qm || !qe) return jv_err(d, v, "too many inputs");
            SD_TRY(jv_get_num(d, v, "maturity", "numerics", 1, 0, 5, &qm->v.value));
            SD_TRY(jv_get_num(d, v, "ease", "numerics", 1, 0, 5, &qe->v.value));
            qm->v.present = qe->v.present = 1;
            snprintf(qm->v.date, sizeof qm->v.date, "%s", jv_get(v, "checked")->string);
            snprintf(qe->v.date, sizeof qe->v.date, "%s", jv_get(v, "checked")->string);
            continue;
        }
        int kind = strcmp(ikeys[i], "languages") == 0 ? 1 : strcmp(ikeys[i], "os") == 0 ? 2 : 0;
        SD_TRY(read_qual(d, v, ikeys[i], kind, f));
    }
    return 0;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int read_ops(const char *path, score_inputs *in) {
    jv_doc *d = NULL;
    SD_TRY(jv_load(&d, path));
    int rc = 0;
    const jv *root = jv_root(d);
    static const char *const keys[] = {"schema", "about", "ops", "presence", NULL};
    SD_TRY_GOTO(rc, jv_expect(d, root, JV_OBJECT, "ops file"), done);
    SD_TRY_GOTO(rc, jv_check_keys(d, root, "ops file", keys), done);
    const jv *ops = jv_get(root, "ops"), *pres = jv_get(root, "presence");
    if (!ops || !pres) { rc = jv_err(d, root, "ops file needs 'ops' and 'presence'"); goto done; }
    SD_TRY_GOTO(rc, jv_expect(d, ops, JV_ARRAY, "ops"), done);
    SD_TRY_GOTO(rc, jv_expect(d, pres, JV_OBJECT, "presence"), done);
    for (size_t i = 0; i < ops->count; i++) {
        static const char *const okeys[] = {"id", "name", "kind", NULL};
        const char *id = NULL;
        SD_TRY_GOTO(rc, jv_expect(d, ops->items[i], JV_OBJECT, "op"), done);
        SD_TRY_GOTO(rc, jv_check_keys(d, ops->items[i], "op", okeys), done);
        SD_TRY_GOTO(rc, jv_get_str(d, ops->items[i], "id", "op", 1, &id), done);
    }
    for (size_t k = 0; k < pres->count; k++) {
        const jv *p = pres->items[k];
        score_framework *f = NULL;
        for (int i = 0; i < in->nfw; i++)
            if (strcmp(in->fw[i].id, p->key) == 0) f = &in->fw[i];
        if (!f) { rc = jv_err_key(d, p, "presence for unknown framework '%s'", p->key); goto done; }
        static const char *const pkeys[] = {"source", "checked", "note", "ops", NULL};
        SD_TRY_GOTO(rc, jv_expect(d, p, JV_OBJECT, "presence"), done);
        SD_TRY_GOTO(rc, jv_check_keys(d, p, "presence", pkeys), done);
        SD_TRY_GOTO(rc, check_dated(d, p, "presence"), done);
        const jv *o = jv_get(p, "ops");
        if (!o) { rc = jv_err(d, p, "missing key 'ops' in presence of '%s'", f->id); goto done; }
        SD_TRY_GOTO(rc, jv_expect(d, o, JV_OBJECT, "ops"), done);
        double sum = 0;
        for (size_t i = 0; i < ops->count; i++) {
            const char *id = jv_get(ops->items[i], "id")->string;
            const jv *v = jv_get(o, id);
            if (!v) { rc = jv_err(d, o, "framework '%s': no presence for op '%s'", f->id, id); goto done; }
            if (v->type != JV_NUMBER || (v->number != 0 && v->number != 0.5 && v->number != 1)) {
                rc = jv_err(d, v, "presence of '%s' for '%s' must be 0, 0.5 or 1", id, f->id);
                goto done;
            }
            sum += v->number;
        }
        if (o->count != ops->count) {
            for (size_t i = 0; i < o->count; i++) {
                int known = 0;
                for (size_t j = 0; j < ops->count; j++) known |= strcmp(o->items[i]->key, jv_get(ops->items[j], "id")->string) == 0;
                if (!known) { rc = jv_err_key(d, o->items[i], "unknown op '%s'", o->items[i]->key); goto done; }
            }
        }
        score_qual *q = add_qual(f, "ops");
        if (!q) { rc = jv_err(d, p, "too many inputs"); goto done; }
        q->v.present = 1;
        q->v.value = sum;
        snprintf(q->v.date, sizeof q->v.date, "%s", jv_get(p, "checked")->string);
    }
    for (int i = 0; i < in->nfw; i++) {
        int has = 0;
        for (int k = 0; k < in->fw[i].nqual; k++) has |= strcmp(in->fw[i].qual[k].key, "ops") == 0;
        if (!has) {
            score_qual *q = add_qual(&in->fw[i], "ops");
            if (q) snprintf(q->v.why, sizeof q->v.why, "no presence entry in %s", path);
        }
    }
done:
    jv_doc_free(d);
    return rc;
}

int score_inputs_load(score_inputs *in, const char *dir, const char *ops_path) {
    memset(in, 0, sizeof *in);
    DIR *dp = opendir(dir);
    if (!dp) return sd_err(SD_EIO, "cannot open framework directory %s", dir);
    char *names[SCORE_MAX_FW + 1];
    int n = 0, rc = 0;
    struct dirent *e;
    while ((e = readdir(dp)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0 || e->d_name[0] == '.') continue;
        if (n >= SCORE_MAX_FW) { rc = sd_err(SD_ELIMIT, "more than %d framework files in %s", SCORE_MAX_FW, dir); break; }
        names[n] = strdup(e->d_name);
        if (!names[n]) { rc = sd_err(SD_ENOMEM, "out of memory"); break; }
        n++;
    }
    closedir(dp);
    if (rc == 0 && n == 0) rc = sd_err(SD_EINPUT, "no framework files (*.json) in %s", dir);
    if (rc == 0) qsort(names, (size_t)n, sizeof *names, cmp_name);
    for (int i = 0; i < n && rc == 0; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        jv_doc *d = NULL;
        rc = jv_load(&d, path);
        if (rc == 0) rc = read_framework(d, &in->fw[in->nfw]);
        if (rc == 0) {
            for (int k = 0; k < in->nfw; k++)
                if (strcmp(in->fw[k].id, in->fw[in->nfw].id) == 0)
                    rc = jv_err(d, jv_get(jv_root(d), "id"), "duplicate framework id '%s'", in->fw[k].id);
            in->nfw++;
        }
        jv_doc_free(d);
    }
    for (int i = 0; i < n; i++) free(names[i]);
    if (rc == 0) rc = read_ops(ops_path, in);
    return rc;
}

/* ---- snapshot --------------------------------------------------------------------------------- */

score_git *score_snapshot_git(score_snapshot *s, const char *repo, int create) {
    for (int i = 0; i < s->ngit; i++)
        if (strcmp(s->git[i].repo, repo) == 0) return &s->git[i];
    if (!create || s->ngit >= SCORE_MAX_REPOS) return NULL;
    score_git *g = &s->git[s->ngit++];
    memset(g, 0, sizeof *g);
    snprintf(g->repo, sizeof g->repo, "%s", repo);
    return g;
}

score_named *score_snapshot_named(score_named *arr, int *n, const char *name, int create) {
    for (int i = 0; i < *n; i++)
        if (strcmp(arr[i].name, name) == 0) return &arr[i];
    if (!create || *n >= SCORE_MAX_COUNTS) return NULL;
    score_named *e = &arr[(*n)++];
    memset(e, 0, sizeof *e);
    snprintf(e->name, sizeof e->name, "%s", name);
    return e;
}

static int read_date_member(const jv_doc *d, const jv *obj, const char *key, const char *what, int req, int eod,
                            int64_t *out) {
    const char *s = NULL;
    SD_TRY(jv_get_str(d, obj, key, what, req, &s));
    if (!s) return 0;
    if (score_date_parse(s, eod, out) < 0) return jv_err(d, jv_get(obj, key), "%s", sd_errmsg());
    return 0;
}

static int read_count(const jv_doc *d, const jv *v, score_named *e) {
    static const char *const keys[] = {"value", "fetched", "stale", "why", "missing", NULL};
    SD_TRY(jv_expect(d, v, JV_OBJECT, "count"));
    SD_TRY(jv_check_keys(d, v, "count", keys));
    if (jv_get(v, "missing")) {
        SD_TRY(jv_get_str_copy(d, v, "missing", "count", 1, e->v.why, sizeof e->v.why));
        return 0;
    }
    SD_TRY(jv_get_num(d, v, "value", "count", 1, 0, 1e15, &e->v.value));
    SD_TRY(jv_get_str_copy(d, v, "fetched", "count", 1, e->v.date, sizeof e->v.date));
    SD_TRY(jv_get_bool(d, v, "stale", "count", 0, &e->v.stale));
    SD_TRY(jv_get_str_copy(d, v, "why", "count", 0, e->v.why, sizeof e->v.why));
    e->v.present = 1;
    return 0;
}

static int read_git(const jv_doc *d, const jv *v, int64_t as_of, score_git *g) {
    static const char *const keys[] = {"missing", "as_of", "has_commits", "last_commit", "newest_commit", "commits_total",
                                       "commits_30", "commits_90", "prs_merged_30", "authors_90", "head", "mirror",
                                       "weeks_active_13", "commits_365", "bus_factor_365", "releases_365",
                                       "last_release", "source", "fetched", NULL};
    SD_TRY(jv_expect(d, v, JV_OBJECT, "git entry"));
    SD_TRY(jv_check_keys(d, v, "git entry", keys));
    if (jv_get(v, "missing")) return jv_get_str_copy(d, v, "missing", "git entry", 1, g->why, sizeof g->why);
    SD_TRY(jv_get_str_copy(d, v, "source", "git entry", 0, g->source, sizeof g->source));
    if (g->source[0]) {   /* GitHub statistics: only what those endpoints give */
        if (strcmp(g->source, "github-stats") != 0)
            return jv_err(d, jv_get(v, "source"), "unknown source '%s' (expected github-stats)", g->source);
        static const char *const st[] = {"weeks_active_13", "commits_365", "authors_90", "bus_factor_365"};
        long *sdst[] = {&g->a.weeks_active_13, &g->a.commits_365, &g->a.authors_90, &g->a.bus_factor_365};
        long long x;
        for (int i = 0; i < 4; i++) {
            SD_TRY(jv_get_int(d, v, st[i], "git entry", 1, 0, 1000000000LL, &x));
            *sdst[i] = (long)x;
        }
        if (g->a.weeks_active_13 > 13) return jv_err(d, jv_get(v, "weeks_active_13"), "weeks_active_13 above 13");
        int64_t t;
        SD_TRY(read_date_member(d, v, "fetched", "git entry", 1, 0, &t));
        SD_TRY(jv_get_str_copy(d, v, "fetched", "git entry", 1, g->fetched, sizeof g->fetched));
        g->a.as_of = as_of;
        SD_TRY(read_date_member(d, v, "as_of", "git entry", 0, 0, &g->a.as_of));
        g->present = g->has_maint = 1;
        return 0;
    }
    git_activity *a = &g->a;
    a->as_of = as_of;
    SD_TRY(read_date_member(d, v, "as_of", "git entry", 0, 0, &a->as_of));
    SD_TRY(jv_get_bool(d, v, "has_commits", "git entry", 1, &a->has_commits));
    SD_TRY(read_date_member(d, v, "last_commit", "git entry", a->has_commits, 0, &a->last_commit));
    SD_TRY(read_date_member(d, v, "newest_commit", "git entry", 0, 0, &a->newest_commit));
    long long x;
    static const char *const counts[] = {"commits_total", "commits_30", "commits_90", "prs_merged_30", "authors_90"};
    long *dst[] = {&a->commits_total, &a->commits_30, &a->commits_90, &a->prs_merged_30, &a->authors_90};
    for (int i = 0; i < 5; i++) {
        SD_TRY(jv_get_int(d, v, counts[i], "git entry", 1, 0, 1000000000LL, &x));
        *dst[i] = (long)x;
    }
    /* Maintenance metrics: absent from snapshots made before method v2 (then v2's activity is missing). */
    static const char *const maint[] = {"weeks_active_13", "commits_365", "bus_factor_365", "releases_365"};
    long *mdst[] = {&a->weeks_active_13, &a->commits_365, &a->bus_factor_365, &a->releases_365};
    g->has_maint = jv_get(v, "weeks_active_13") != NULL;
    for (int i = 0; i < 4; i++) {
        SD_TRY(jv_get_int(d, v, maint[i], "git entry", g->has_maint, 0, 1000000000LL, &x));
        if (g->has_maint) *mdst[i] = (long)x;
    }
    if (g->has_maint) SD_TRY(read_date_member(d, v, "last_release", "git entry", 0, 0, &a->last_release));
    if (a->weeks_active_13 > 13) return jv_err(d, jv_get(v, "weeks_active_13"), "weeks_active_13 above 13");
    SD_TRY(jv_get_str_copy(d, v, "head", "git entry", 0, a->head, sizeof a->head));
    SD_TRY(jv_get_str_copy(d, v, "mirror", "git entry", 0, g->mirror, sizeof g->mirror));
    if (jv_get(v, "fetched")) {   /* when the mirror was fetched (snapshots before it: unknown) */
        int64_t t;
        SD_TRY(read_date_member(d, v, "fetched", "git entry", 1, 0, &t));
        SD_TRY(jv_get_str_copy(d, v, "fetched", "git entry", 1, g->fetched, sizeof g->fetched));
    }
    g->present = 1;
    return 0;
}

static int read_snapshot(const jv_doc *d, void *out) {
    score_snapshot *s = out;
    static const char *const keys[] = {"schema", "date", "as_of", "note", "made_by", "git", "github_repo_counts",
                                       "stackoverflow_questions", NULL};
    static const char *const schemas[] = {"showdown-snapshot/1", NULL};
    SD_TRY(jv_root_schema(d, "snapshot", keys, schemas));
    const jv *root = jv_root(d);
    int64_t t;
    SD_TRY(read_date_member(d, root, "date", "snapshot", 1, 0, &t));
    SD_TRY(jv_get_str_copy(d, root, "date", "snapshot", 1, s->date, sizeof s->date));
    SD_TRY(read_date_member(d, root, "as_of", "snapshot", 1, 0, &s->as_of));
    SD_TRY(jv_get_str_copy(d, root, "note", "snapshot", 0, s->note, sizeof s->note));
    const jv *git = jv_get(root, "git");
    if (git) {
        SD_TRY(jv_expect(d, git, JV_OBJECT, "git"));
        for (size_t i = 0; i < git->count; i++) {
            score_git *g = score_snapshot_git(s, git->items[i]->key, 1);
            if (!g) return jv_err_key(d, git->items[i], "more than %d repositories", SCORE_MAX_REPOS);
            SD_TRY(read_git(d, git->items[i], s->as_of, g));
        }
    }
    const char *ck[2] = {"github_repo_counts", "stackoverflow_questions"};
    for (int k = 0; k < 2; k++) {
        const jv *o = jv_get(root, ck[k]);
        if (!o) continue;
        SD_TRY(jv_expect(d, o, JV_OBJECT, ck[k]));
        for (size_t i = 0; i < o->count; i++) {
            score_named *e = k == 0 ? score_snapshot_named(s->repo_counts, &s->nrepo_counts, o->items[i]->key, 1)
                                    : score_snapshot_named(s->so, &s->nso, o->items[i]->key, 1);
            if (!e) return jv_err_key(d, o->items[i], "more than %d entries", SCORE_MAX_COUNTS);
            SD_TRY(read_count(d, o->items[i], e));
        }
    }
    return 0;
}

int score_snapshot_parse(score_snapshot *s, const char *name, const char *text, size_t len) {
    memset(s, 0, sizeof *s);
    return jv_read(name, text, len, read_snapshot, s);
}

int score_framework_parse(score_framework *f, const char *name, const char *text, size_t len) {
    memset(f, 0, sizeof *f);
    return jv_read(name, text, len, read_framework, f);
}

int score_snapshot_load(score_snapshot *s, const char *path) {
    memset(s, 0, sizeof *s);
    return jv_read(path, NULL, 0, read_snapshot, s);
}

static json_t *count_json(const score_num *v) {
    if (!v->present) return json_pack("{s:s}", "missing", v->why);
    json_t *o = json_pack("{s:f, s:s}", "value", v->value, "fetched", v->date);
    if (o && v->stale) {
        json_object_set_new(o, "stale", json_true());
        json_object_set_new(o, "why", json_string(v->why));
    }
    return o;
}

int score_snapshot_write(const score_snapshot *s, const char *path) {
    char buf[32];
    json_t *root = json_object(), *git = json_object(), *rc_ = json_object(), *so = json_object();
    if (!root || !git || !rc_ || !so) goto oom;
    json_object_set_new(root, "schema", json_string("showdown-snapshot/1"));
    json_object_set_new(root, "date", json_string(s->date));
    score_date_iso(s->as_of, buf, sizeof buf);
    json_object_set_new(root, "as_of", json_string(buf));
    json_object_set_new(root, "note", json_string(s->note));
    json_object_set_new(root, "made_by", json_string("showdown " SD_VERSION " score --update-snapshot"));
    for (int i = 0; i < s->ngit; i++) {
        const score_git *g = &s->git[i];
        json_t *e;
        if (!g->present) {
            e = json_pack("{s:s}", "missing", g->why);
        } else if (g->source[0]) {
            char as_of[32];
            score_date_iso(g->a.as_of, as_of, sizeof as_of);
            e = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I}", "source", g->source, "fetched", g->fetched, "as_of", as_of,
                          "weeks_active_13", (json_int_t)g->a.weeks_active_13, "commits_365", (json_int_t)g->a.commits_365,
                          "authors_90", (json_int_t)g->a.authors_90, "bus_factor_365", (json_int_t)g->a.bus_factor_365);
        } else {
            const git_activity *a = &g->a;
            char as_of[32], last[32], newest[32];
            score_date_iso(a->as_of, as_of, sizeof as_of);
            score_date_iso(a->last_commit, last, sizeof last);
            score_date_iso(a->newest_commit, newest, sizeof newest);
            e = json_pack("{s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:s, s:s, s:s}", "as_of", as_of, "has_commits",
                          a->has_commits, "commits_total", (json_int_t)a->commits_total, "commits_30",
                          (json_int_t)a->commits_30, "commits_90", (json_int_t)a->commits_90, "prs_merged_30",
                          (json_int_t)a->prs_merged_30, "authors_90", (json_int_t)a->authors_90, "head", a->head,
                          "mirror", g->mirror, "newest_commit", newest);
            if (e && a->has_commits) json_object_set_new(e, "last_commit", json_string(last));
            if (e && g->fetched[0]) json_object_set_new(e, "fetched", json_string(g->fetched));
            if (e && g->has_maint) {
                json_object_set_new(e, "weeks_active_13", json_integer(a->weeks_active_13));
                json_object_set_new(e, "commits_365", json_integer(a->commits_365));
                json_object_set_new(e, "bus_factor_365", json_integer(a->bus_factor_365));
                json_object_set_new(e, "releases_365", json_integer(a->releases_365));
                if (a->last_release) {
                    char rel[32];
                    score_date_iso(a->last_release, rel, sizeof rel);
                    json_object_set_new(e, "last_release", json_string(rel));
                }
            }
        }
        if (!e || json_object_set_new(git, g->repo, e) < 0) goto oom;
    }
    for (int i = 0; i < s->nrepo_counts; i++)
        if (json_object_set_new(rc_, s->repo_counts[i].name, count_json(&s->repo_counts[i].v)) < 0) goto oom;
    for (int i = 0; i < s->nso; i++)
        if (json_object_set_new(so, s->so[i].name, count_json(&s->so[i].v)) < 0) goto oom;
    json_object_set_new(root, "git", git);
    json_object_set_new(root, "github_repo_counts", rc_);
    json_object_set_new(root, "stackoverflow_questions", so);
    char *text = json_dumps(root, JSON_SORT_KEYS | JSON_INDENT(2) | JSON_REAL_PRECISION(12));
    json_decref(root);
    if (!text) return sd_err(SD_ENOMEM, "out of memory");
    size_t len = strlen(text);
    char *t2 = realloc(text, len + 2);
    if (!t2) { free(text); return sd_err(SD_ENOMEM, "out of memory"); }
    t2[len] = '\n';
    t2[len + 1] = 0;
    int rc = sd_write_file_atomic(path, t2, len + 1);
    free(t2);
    return rc;
oom:
    json_decref(root); json_decref(git); json_decref(rc_); json_decref(so);
    return sd_err(SD_ENOMEM, "out of memory");
}

/* ---- raw values ------------------------------------------------------------------------------- */

static const score_num *qual(const score_framework *f, const char *key) {
    for (int i = 0; i < f->nqual; i++)
        if (strcmp(f->qual[i].key, key) == 0) return &f->qual[i].v;
    return NULL;
}

static void set_missing(score_value *v, const char *fmt, const char *a, const char *b) {
    v->present = 0;
    snprintf(v->why, sizeof v->why, fmt, a, b);
}

static void from_num(score_value *v, const score_num *n, const char *key) {
    if (!n) { set_missing(v, "no input '%s' in the framework data%s", key, ""); return; }
    if (!n->present) { set_missing(v, "%s%s", n->why, ""); return; }
    v->present = 1;
    v->raw = n->value;
}

static void activity(score_value *v, const score_snapshot *s, const char *repo, const char *no_repo_why,
                     double weeks_min) {
    if (!repo[0]) { set_missing(v, "%s%s", no_repo_why[0] ? no_repo_why : "no repository", ""); return; }
    const score_git *g = score_snapshot_git((score_snapshot *)s, repo, 0);
    if (!g) { set_missing(v, "%s: not in the snapshot%s", repo, ""); return; }
    if (!g->present) { set_missing(v, "%s: %s", repo, g->why); return; }
    if (g->source[0]) { set_missing(v, "%s: GitHub statistics give no last-commit date or pull requests%s", repo, ""); return; }
    if (!g->a.has_commits) { set_missing(v, "%s: no commit before the as-of date%s", repo, ""); return; }
    v->present = 1;
    v->raw = score_activity(g->a.as_of, g->a.last_commit, g->a.prs_merged_30, weeks_min);
}

/* Sum of named counts; missing (with the first reason) if any is. */
static int sum_named(const score_named *arr, int n, const char (*names)[64], int k, const char *what, double *sum,
                     char *why, size_t wlen) {
    *sum = 0;
    if (k == 0) { snprintf(why, wlen, "no %s listed in the framework data", what); return 0; }
    for (int i = 0; i < k; i++) {
        const score_named *e = NULL;
        for (int j = 0; j < n; j++)
            if (strcmp(arr[j].name, names[i]) == 0) e = &arr[j];
        if (!e) { snprintf(why, wlen, "%s '%s': not in the snapshot", what, names[i]); return 0; }
        if (!e->v.present) { snprintf(why, wlen, "%s '%s': %s", what, names[i], e->v.why); return 0; }
        *sum += e->v.value;
    }
    return 1;
}

/* Method v2: the repository a git part reads. The numerics part reads the numerics library's repository
 * only when that library is the framework's own and separate; a shared library (NumPy, Eigen, XLA...)
 * would measure other projects, so the framework's own repository is read instead, and the value says so. */
static const char *git_repo_for(const score_framework *f, const char *which, char *src, size_t slen) {
    src[0] = 0;
    if (strcmp(which, "main") == 0) return f->repo;
    if (f->numerics_repo[0] && !f->numerics_shared && strcmp(f->numerics_repo, f->repo) != 0) {
        snprintf(src, slen, "%s (the numerics library '%s')", f->numerics_repo, f->numerics_lib);
        return f->numerics_repo;
    }
    if (f->numerics_repo[0] && strcmp(f->numerics_repo, f->repo) == 0)
        snprintf(src, slen, "%s, the framework's own repository ('%s' is part of it)", f->repo, f->numerics_lib);
    else if (f->numerics_shared)
        snprintf(src, slen, "%s, the framework's own repository ('%s' is shared with other projects)", f->repo,
                 f->numerics_lib);
    else
        snprintf(src, slen, "%s, the framework's own repository ('%s' has no repository of its own)", f->repo,
                 f->numerics_lib);
    return f->repo;
}

/* Age of a mirror. Its history is complete up to its fetch: a mirror fetched within stale_days of as_of whose
 * newest commit is old is a measured inactive project, and is scored so. Only a mirror fetched long before as_of
 * (or, with no fetch time recorded, whose newest commit is that old: a dead project and an out-of-date mirror
 * then look alike) is stale: shown, not scored. A repository typed archived (read-only, with a source) cannot
 * have newer commits: its values stand. */
static int git_stale(const score_method *m, const score_framework *f, const score_git *g, char *why, size_t wlen) {
    if (m->stale_days <= 0 || strcmp(f->status, "archived") == 0) return 0;
    int64_t limit = g->a.as_of - (int64_t)(m->stale_days * 86400.0), t = 0;
    if (g->source[0]) {   /* statistics are current when fetched: stale when fetched before as_of minus the limit */
        if (score_date_parse(g->fetched, 0, &t) < 0 || t >= limit) return 0;
        snprintf(why, wlen, "%s: GitHub statistics fetched %s, over %.0f days before as_of: shown, not scored", g->repo,
                 g->fetched, m->stale_days);
        return 1;
    }
    char day[16], as_of[16];
    score_date_day(g->a.as_of - 1, as_of, sizeof as_of);
    if (g->fetched[0] && score_date_parse(g->fetched, 0, &t) == 0) {
        if (t >= limit) return 0;
        score_date_day(t, day, sizeof day);
        snprintf(why, wlen, "%s: stale mirror (fetched %s, %.0f days before as_of %s; limit %.0f days): shown, not "
                 "scored", g->repo, day, (double)(g->a.as_of - t) / 86400.0, as_of, m->stale_days);
        return 1;
    }
    if (g->a.newest_commit >= limit) return 0;
    score_date_day(g->a.newest_commit, day, sizeof day);
    snprintf(why, wlen, "%s: stale mirror (newest commit %s, %.0f days before as_of %s; limit %.0f days; its fetch "
             "time is not recorded): shown, not scored", g->repo, day,
             (double)(g->a.as_of - g->a.newest_commit) / 86400.0, as_of, m->stale_days);
    return 1;
}

static void git_metric(score_value *v, const score_method *m, const score_snapshot *s, const score_framework *f,
                       const char *input, const score_scale *sc) {
    const char *rest = input + 4;                       /* after "git:" */
    const char *metric = strchr(rest, ':') + 1;         /* validated by the method reader */
    char which[16], src[SCORE_WHY_LEN];
    snprintf(which, sizeof which, "%.*s", (int)(metric - 1 - rest), rest);
    const char *repo = git_repo_for(f, which, src, sizeof src);
    v->measured = 1;
    const score_git *g = score_snapshot_git((score_snapshot *)s, repo, 0);
    if (!g) { set_missing(v, "%s: not in the snapshot%s", repo, ""); return; }
    if (!g->present) { set_missing(v, "%s: %s", repo, g->why); return; }
    if (!g->has_maint) {
        set_missing(v, "%s: the snapshot has no maintenance metrics (made before method v2)%s", repo, "");
        return;
    }
    const git_activity *a = &g->a;
    double raw;
    if (g->source[0] && (strcmp(metric, "releases_365") == 0 || strcmp(metric, "days_since_release") == 0)) {
        set_missing(v, "%s: GitHub statistics have no release tags%s", repo, "");
        return;
    }
    if (g->source[0]) {
        char base[SCORE_WHY_LEN];
        snprintf(base, sizeof base, "%s", src[0] ? src : repo);
        snprintf(src, sizeof src, "%s: GitHub statistics fetched %s", base, g->fetched);
    }
    if (strcmp(metric, "weeks_active_13") == 0) raw = (double)a->weeks_active_13;
    else if (strcmp(metric, "authors_90") == 0) raw = (double)a->authors_90;
    else if (strcmp(metric, "bus_factor_365") == 0) raw = (double)a->bus_factor_365;
    else if (strcmp(metric, "releases_365") == 0) raw = (double)a->releases_365;
    else if (a->last_release) raw = (double)(a->as_of - a->last_release) / 86400.0;   /* days_since_release */
    else {
        raw = sc->max;                                   /* never released by tag: the scale's worst */
        snprintf(src, sizeof src, "%s: no release tag before as_of", repo);
    }
    char why[SCORE_WHY_LEN];
    if (git_stale(m, f, g, why, sizeof why)) {
        v->stale = 1;
        v->stale_raw = raw;
        set_missing(v, "%s%s", why, "");
        return;
    }
    v->present = 1;
    v->raw = raw;
    snprintf(v->src, sizeof v->src, "%s", src);
}

/* Method v2 status: archived is typed (git cannot see it); otherwise derived from the main repository's
 * maintenance metrics, or unknown when they are missing or stale. */
static void derive_status(const score_method *m, const score_framework *f, const score_snapshot *s, score_fw *o) {
    if (m->version < 2) { snprintf(o->status, sizeof o->status, "%s", f->status); return; }
    if (strcmp(f->status, "archived") == 0) {
        snprintf(o->status, sizeof o->status, "archived");
        snprintf(o->status_why, sizeof o->status_why, "typed in the framework file (read-only repository)");
        return;
    }
    snprintf(o->status, sizeof o->status, "unknown");
    const score_git *g = score_snapshot_git((score_snapshot *)s, f->repo, 0);
    if (!g || !g->present) { snprintf(o->status_why, sizeof o->status_why, "%s: no git data", f->repo); return; }
    if (!g->has_maint) { snprintf(o->status_why, sizeof o->status_why, "%s: no maintenance metrics", f->repo); return; }
    if (git_stale(m, f, g, o->status_why, sizeof o->status_why)) return;
    const char *st = score_status_from(&m->status, g->a.weeks_active_13, g->a.authors_90, g->a.releases_365);
    if (g->source[0] && strcmp(st, "inactive") == 0) {   /* without tags a release may have been missed */
        snprintf(o->status_why, sizeof o->status_why, "%s: no commit in 13 weeks per GitHub statistics, which have no "
                 "release tags", f->repo);
        return;
    }
    snprintf(o->status, sizeof o->status, "%s", st);
    snprintf(o->status_why, sizeof o->status_why, "%ld of 13 weeks with a commit, %ld authors in 90 days, %ld releases "
             "in 365 days", g->a.weeks_active_13, g->a.authors_90, g->a.releases_365);
}

static void coverage(const score_method *m, score_fw *o) {
    for (int c = 0; c < m->ncrit; c++) {
        const score_criterion *cr = &m->crit[c];
        int nleaf = cr->formula == SCORE_F_PARTS_MEAN ? cr->nparts : 1;
        for (int p = 0; p < nleaf; p++) {
            const score_value *v = cr->formula == SCORE_F_PARTS_MEAN ? &o->part[c][p] : &o->crit[c];
            if (!v->present) o->cover_missing++;
            else if (v->measured) o->cover_measured++;
            else o->cover_hand++;
        }
    }
}

int score_build(const score_method *m, const score_inputs *in, const score_snapshot *s, score_fw *fw) {
    for (int i = 0; i < in->nfw; i++) {
        const score_framework *f = &in->fw[i];
        score_fw *o = &fw[i];
        memset(o, 0, sizeof *o);
        snprintf(o->id, sizeof o->id, "%s", f->id);
        snprintf(o->name, sizeof o->name, "%s", f->name);
        for (int c = 0; c < m->ncrit; c++) {
            const score_criterion *cr = &m->crit[c];
            score_value *v = &o->crit[c];
            switch (cr->formula) {
            case SCORE_F_VALUE: case SCORE_F_WEIGHTED_SUM: case SCORE_F_COUNT:
                from_num(v, qual(f, cr->input), cr->input);
                break;
            case SCORE_F_OPS_SUM:
                from_num(v, qual(f, "ops"), "ops");
                break;
            case SCORE_F_ACTIVITY:
                activity(v, s, f->repo, "", m->weeks_min);
                v->measured = 1;
                break;
            case SCORE_F_LOG_SUM: {
                double gh, so;
                v->measured = 1;
                char why[SCORE_WHY_LEN];
                if (!sum_named(s->repo_counts, s->nrepo_counts, (const char (*)[64])f->terms, f->nterms,
                               "GitHub search term", &gh, why, sizeof why) ||
                    !sum_named(s->so, s->nso, (const char (*)[64])f->tags, f->ntags, "StackOverflow tag", &so, why,
                               sizeof why)) {
                    set_missing(v, "%s%s", why, "");
                    break;
                }
                v->present = 1;
                v->raw = log10(1 + gh) + log10(1 + so);
                v->measured = 1;
                break;
            }
            case SCORE_F_PARTS_MEAN:
                for (int p = 0; p < cr->nparts; p++) {
                    score_value *pv = &o->part[c][p];
                    if (cr->part_input[p][0]) {
                        git_metric(pv, m, s, f, cr->part_input[p], &cr->part_scale[p]);
                    } else if (strcmp(cr->part_id[p], "activity") == 0) {
                        activity(pv, s, f->numerics_repo, f->numerics_repo_why, m->weeks_min);
                        pv->measured = 1;
                    } else {
                        char key[2 * SCORE_ID_LEN + 2];
                        snprintf(key, sizeof key, "%s.%s", cr->input, cr->part_id[p]);
                        from_num(pv, qual(f, key), key);
                    }
                }
                break;
            }
        }
        derive_status(m, f, s, o);
        coverage(m, o);
    }
    return 0;
}
