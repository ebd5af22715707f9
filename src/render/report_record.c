/* report_record — a report from its inputs, recorded and rendered again. A record holds copies only: the files
 * given, and the database runs read, as results documents; inputs.json names each by a path relative to the
 * record's folder with its git blob hash, and a re-render refuses a path that leaves the folder, anything but
 * a regular file, or a copy whose hash changed. */
#include "render/report_record.h"
#include "render/template.h"
#include "bench/results.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/sig.h"
#include "db/db.h"

#include <git2.h>
#include <jansson.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RECORD_SCHEMA "showdown-report-inputs/2"
#define MAX_DB_RUNS 60
#define MAX_INPUT_BYTES ((size_t)256 << 20)
#define HASH_HEX 41

/* One database run the report read: taken as the results (latest) or as history. */
typedef struct db_doc {
    json_t *doc;
    char *name;   /* how the report names it, kept so that a re-render names it the same */
    char kind[8];
    long long id;
    int latest;
} db_doc;

typedef struct inputs {
    const char *results[REPORT_MAX_INPUTS], *verify[REPORT_MAX_INPUTS];
    int nres, nver;
    const char *scores, *regressions, *formats;
    char tpath[4096];
    db_doc db[MAX_DB_RUNS];
    int ndb;
    json_t *own;   /* owns the strings of a record read back */
} inputs;

static void inputs_free(inputs *in) {
    for (int i = 0; i < in->ndb; i++) { json_decref(in->db[i].doc); free(in->db[i].name); }
    json_decref(in->own);
}

static int hash_of(const void *data, size_t len, char out[HASH_HEX]) {
    git_oid oid;
    if (git_odb_hash(&oid, data, len, GIT_OBJECT_BLOB) != 0) return sd_err(SD_ERROR, "cannot hash a recorded input");
    git_oid_tostr(out, HASH_HEX, &oid);
    return 0;
}

/* ---- the database runs ------------------------------------------------------------------------------------- */
static int keep_db_doc(inputs *in, json_t *doc, const char *path, const char *kind, long long id, int latest) {
    if (in->ndb >= MAX_DB_RUNS) { json_decref(doc); return 0; }
    db_doc *x = &in->db[in->ndb];
    char name[4200] = "";
    if (latest) snprintf(name, sizeof name, "%s (%s run %lld)", path, kind, id);
    x->name = strdup(name);
    if (!x->name) { json_decref(doc); return sd_err(SD_ENOMEM, "out of memory"); }
    x->doc = doc;
    x->id = id;
    x->latest = latest;
    snprintf(x->kind, sizeof x->kind, "%s", kind);
    in->ndb++;
    return 0;
}

/* The latest complete bench (else nightly) run as results when latest is set, and up to 30 complete runs of
 * each kind as history. */
static int read_db(inputs *in, const char *path, int latest) {
    db *d = NULL;
    SD_TRY(db_open(&d, path));
    int rc = 0;
    static const char *const kinds[] = {"bench", "nightly"};
    for (int k = 0; k < 2 && rc == 0; k++) {
        int64_t ids[30];
        int n = 0;
        SD_TRY_GOTO(rc, db_runs_complete(d, kinds[k], 0, ids, 30, &n), done);
        for (int i = 0; i < n && rc == 0; i++) {
            json_t *doc = NULL;
            SD_TRY_GOTO(rc, sd_results_load(d, ids[i], &doc), done);
            rc = keep_db_doc(in, doc, path, kinds[k], (long long)ids[i], i == 0 && latest);
            if (i == 0) latest = 0;
        }
    }
done:
    db_close(d);
    return rc;
}

/* ---- writing a record -------------------------------------------------------------------------------------- */
/* OUT/report-runs/N/ made by mkdir, which fails when another report took N: never two reports in one folder. */
static int make_record_dir(const char *root, char *dir, size_t n, int *run) {
    SD_TRY(sd_mkdir_p(root, 0));
    for (int k = 1; k < 100000; k++) {
        snprintf(dir, n, "%s/%d", root, k);
        if (mkdir(dir, 0777) == 0) { *run = k; return 0; }
        if (errno != EEXIST) return sd_err(SD_EIO, "cannot create %s: %s", dir, strerror(errno));
    }
    return sd_err(SD_ELIMIT, "%s: every record number up to 99999 is taken", root);
}

/* Write data as DIR/REL and return {"path": REL, "hash": ...}. */
static int put(const char *dir, const char *rel, const char *data, size_t len, json_t **entry) {
    char path[8400], h[HASH_HEX];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    SD_TRY(hash_of(data, len, h));
    SD_TRY(sd_mkdir_under(dir, path, 1));
    SD_TRY(sd_write_file_atomic(path, data, len));
    *entry = json_pack("{s:s,s:s}", "path", rel, "hash", h);
    return *entry ? 0 : sd_err(SD_ENOMEM, "out of memory");
}

/* A copy of the input file src, kept under its own name (the report prints it) in SUB/ or SUB/IDX/. */
static int put_copy(const char *dir, const char *sub, int idx, const char *src, json_t **entry) {
    char *data = NULL, rel[1200];
    size_t len = 0;
    SD_TRY(sd_read_file(src, MAX_INPUT_BYTES, &data, &len));
    const char *b = strrchr(src, '/');
    b = b ? b + 1 : src;
    if (idx >= 0) snprintf(rel, sizeof rel, "%s/%d/%s", sub, idx, b);
    else snprintf(rel, sizeof rel, "%s/%s", sub, b);
    int rc = put(dir, rel, data, len, entry);
    free(data);
    return rc;
}

static int put_list(const char *dir, const char *sub, const char *const *files, int n, json_t *doc) {
    json_t *list = json_array();
    json_object_set_new(doc, sub, list);
    for (int i = 0; i < n; i++) {
        json_t *e = NULL;
        SD_TRY(put_copy(dir, sub, i, files[i], &e));
        json_array_append_new(list, e);
    }
    return 0;
}

static int put_db_runs(const char *dir, const inputs *in, json_t *doc) {
    json_t *list = json_array();
    json_object_set_new(doc, "db_runs", list);
    for (int i = 0; i < in->ndb; i++) {
        const db_doc *x = &in->db[i];
        char rel[64], *text = json_dumps(x->doc, JSON_COMPACT | JSON_REAL_PRECISION(17));
        if (!text) return sd_err(SD_ENOMEM, "out of memory");
        snprintf(rel, sizeof rel, "db/%s-run-%lld.json", x->kind, x->id);
        json_t *e = NULL;
        int rc = put(dir, rel, text, strlen(text), &e);
        free(text);
        if (rc) return rc;
        json_object_set_new(e, "kind", json_string(x->kind));
        json_object_set_new(e, "id", json_integer(x->id));
        json_object_set_new(e, "latest", json_boolean(x->latest));
        json_object_set_new(e, "name", json_string(x->name));
        json_array_append_new(list, e);
    }
    return 0;
}

static int record(const char *out, const inputs *in, int *run) {
    char root[4200], dir[4300], path[4400];
    snprintf(root, sizeof root, "%s/" REPORT_RECORD_DIR, out);
    snprintf(path, sizeof path, "%s/latest", root);
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return sd_err(SD_EIO, "%s: not a regular file; not writing through it", path);
    SD_TRY(make_record_dir(root, dir, sizeof dir, run));
    json_t *doc = json_pack("{s:s,s:i,s:s}", "schema", RECORD_SCHEMA, "run", *run, "formats", in->formats);
    json_t *e = NULL;
    int rc = put_list(dir, "results", in->results, in->nres, doc);
    if (rc == 0) rc = put_list(dir, "verify", in->verify, in->nver, doc);
    if (rc == 0 && in->scores && (rc = put_copy(dir, "scores", -1, in->scores, &e)) == 0) json_object_set_new(doc, "scores", e);
    if (rc == 0 && in->regressions && (rc = put_copy(dir, "regressions", -1, in->regressions, &e)) == 0)
        json_object_set_new(doc, "regressions", e);
    if (rc == 0 && (rc = put_copy(dir, "template", -1, in->tpath, &e)) == 0) json_object_set_new(doc, "template", e);
    if (rc == 0) rc = put_db_runs(dir, in, doc);
    if (rc == 0) {
        char *text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
        snprintf(path, sizeof path, "%s/inputs.json", dir);
        rc = text ? sd_write_file_atomic(path, text, strlen(text)) : sd_err(SD_ENOMEM, "out of memory");
        free(text);
    }
    if (rc == 0) {   /* the last recorded report is what `showdown report` with no arguments renders again */
        char num[32];
        int l = snprintf(num, sizeof num, "%d\n", *run);
        snprintf(path, sizeof path, "%s/latest", root);
        rc = sd_write_file_atomic(path, num, (size_t)l);
    }
    json_decref(doc);
    return rc;
}

/* ---- reading a record back --------------------------------------------------------------------------------- */
/* The regular file REL inside dir, its content as recorded: the absolute path (owned by in->own) and, when data
 * is given, the content. */
static int checked(const char *dir, const char *ipath, const json_t *entry, const char *what, inputs *in,
                   const char **abs, char **data) {
    const char *rel = json_string_value(json_object_get(entry, "path"));
    const char *want = json_string_value(json_object_get(entry, "hash"));
    if (!rel || !want) return sd_err(SD_EINPUT, "%s: %s needs \"path\" and \"hash\"", ipath, what);
    int bad = !rel[0] || rel[0] == '/';
    for (const char *p = rel; !bad && *p; p = strchr(p, '/') ? strchr(p, '/') + 1 : p + strlen(p)) {
        size_t n = strcspn(p, "/");
        bad = n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.');
    }
    if (bad) return sd_err(SD_EINPUT, "%s: %s path \"%.80s\" is not a path inside the record", ipath, what, rel);
    json_t *s = json_sprintf("%s/%s", dir, rel);
    json_array_append_new(in->own, s);
    *abs = json_string_value(s);
    SD_TRY(sd_path_within(dir, *abs));
    struct stat st;
    if (lstat(*abs, &st) != 0) return sd_err(SD_EINPUT, "%s: recorded %s %s: %s", ipath, what, *abs, strerror(errno));
    if (!S_ISREG(st.st_mode)) return sd_err(SD_EINPUT, "%s: recorded %s %s is not a regular file", ipath, what, *abs);
    char *text = NULL, h[HASH_HEX];
    size_t len = 0;
    SD_TRY(sd_read_file(*abs, MAX_INPUT_BYTES, &text, &len));
    int rc = hash_of(text, len, h);
    if (rc == 0 && strcmp(h, want) != 0)
        rc = sd_err(SD_EINPUT, "%s: recorded %s %s changed since it was recorded (hash %s, recorded %.40s)", ipath,
                    what, *abs, h, want);
    if (rc == 0 && data) *data = text;
    else free(text);
    return rc;
}

static int replay_db_runs(const char *dir, const char *ipath, const json_t *list, inputs *in) {
    size_t i;
    const json_t *v;
    json_array_foreach(list, i, v) {
        const char *abs, *kind = json_string_value(json_object_get(v, "kind"));
        const char *name = json_string_value(json_object_get(v, "name"));
        const json_t *id = json_object_get(v, "id");
        if (!kind || !name || !json_is_integer(id) || in->ndb >= MAX_DB_RUNS)
            return sd_err(SD_EINPUT, "%s: db_runs[%zu] needs \"kind\", \"name\" and \"id\" (at most %d runs)", ipath, i,
                          MAX_DB_RUNS);
        char *text = NULL;
        SD_TRY(checked(dir, ipath, v, "database run", in, &abs, &text));
        json_error_t e;
        json_t *doc = json_loads(text, JSON_REJECT_DUPLICATES, &e);
        free(text);
        if (!doc) return sd_err(SD_EINPUT, "%s:%d:%d: %s", abs, e.line, e.column, e.text);
        int latest = json_is_true(json_object_get(v, "latest"));
        SD_TRY(keep_db_doc(in, doc, "", kind, (long long)json_integer_value(id), latest));
        char *nm = strdup(name);
        if (!nm) return sd_err(SD_ENOMEM, "out of memory");
        free(in->db[in->ndb - 1].name);
        in->db[in->ndb - 1].name = nm;
    }
    return 0;
}

static int replay(const char *out, int run, inputs *in) {
    char dir[4300], ipath[4400];
    snprintf(dir, sizeof dir, "%s/" REPORT_RECORD_DIR "/%d", out, run);
    snprintf(ipath, sizeof ipath, "%s/inputs.json", dir);
    struct stat st;
    if (lstat(ipath, &st) != 0) return sd_err(SD_EUSAGE, "--run %d: no recorded report (%s: %s)", run, ipath, strerror(errno));
    if (!S_ISREG(st.st_mode)) return sd_err(SD_EINPUT, "%s: not a regular file", ipath);
    char *text = NULL;
    size_t len = 0;
    SD_TRY(sd_read_file(ipath, (size_t)64 << 20, &text, &len));
    json_error_t e;
    json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
    free(text);
    if (!doc) return sd_err(SD_EINPUT, "%s:%d:%d: %s", ipath, e.line, e.column, e.text);
    json_array_append_new(in->own, doc);
    const char *schema = json_string_value(json_object_get(doc, "schema"));
    if (!schema || strcmp(schema, RECORD_SCHEMA) != 0)
        return sd_err(SD_EINPUT, "%s: expected schema \"" RECORD_SCHEMA "\" (a record of an earlier showdown read the "
                      "database at render time; render its inputs again with --record)", ipath);
    static const char *const lists[] = {"results", "verify"};
    for (int l = 0; l < 2; l++) {
        const json_t *list = json_object_get(doc, lists[l]), *v;
        size_t i;
        if (json_array_size(list) > REPORT_MAX_INPUTS) return sd_err(SD_ELIMIT, "%s: more than %d %s files", ipath, REPORT_MAX_INPUTS, lists[l]);
        json_array_foreach(list, i, v) {
            const char **slot = l == 0 ? &in->results[in->nres++] : &in->verify[in->nver++];
            SD_TRY(checked(dir, ipath, v, lists[l], in, slot, NULL));
        }
    }
    const json_t *v;
    if ((v = json_object_get(doc, "scores"))) SD_TRY(checked(dir, ipath, v, "scores", in, &in->scores, NULL));
    if ((v = json_object_get(doc, "regressions"))) SD_TRY(checked(dir, ipath, v, "regressions", in, &in->regressions, NULL));
    const char *tp = NULL;
    if (!(v = json_object_get(doc, "template"))) return sd_err(SD_EINPUT, "%s: no \"template\"", ipath);
    SD_TRY(checked(dir, ipath, v, "template", in, &tp, NULL));
    snprintf(in->tpath, sizeof in->tpath, "%s", tp);
    in->formats = json_string_value(json_object_get(doc, "formats"));
    if (!in->formats) return sd_err(SD_EINPUT, "%s: no \"formats\"", ipath);
    return replay_db_runs(dir, ipath, json_object_get(doc, "db_runs"), in);
}

int report_latest_run(const char *out, int *run) {
    char path[4200];
    snprintf(path, sizeof path, "%s/" REPORT_RECORD_DIR "/latest", out);
    *run = 0;
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : sd_err(SD_EIO, "cannot read %s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode)) return sd_err(SD_EINPUT, "%s: not a regular file", path);
    char *text = NULL;
    size_t len = 0;
    SD_TRY(sd_read_file(path, 64, &text, &len));
    /* exactly a run number: anything else says the file is not what report wrote, and is not guessed at */
    size_t digits = strspn(text, "0123456789");
    int ok = digits >= 1 && digits <= 5 && text[0] != '0' && (len == digits || (len == digits + 1 && text[digits] == '\n'));
    if (ok) *run = (int)strtol(text, NULL, 10);
    free(text);
    return ok ? 0 : sd_err(SD_EINPUT, "%s:1: expected a recorded run number (1 to 99999) and nothing else", path);
}

/* ---- the report ------------------------------------------------------------------------------------------------ */
static int build_model(render_model *m, const inputs *in) {
    for (int i = 0; i < in->nres; i++) SD_TRY(render_model_add_results(m, in->results[i]));
    for (int i = 0; i < in->ndb; i++) {
        if (in->db[i].latest) SD_TRY(render_model_add_results_doc(m, in->db[i].doc, in->db[i].name));
        SD_TRY(render_model_add_history(m, in->db[i].doc));
    }
    if (in->scores) SD_TRY(render_model_set_scores(m, in->scores));
    for (int i = 0; i < in->nver; i++) SD_TRY(render_model_add_verify(m, in->verify[i]));
    if (in->regressions) SD_TRY(render_model_set_regressions(m, in->regressions));
    return 0;
}

static int gather(const report_req *rq, inputs *in) {
    if (rq->run) return replay(rq->out, rq->run, in);
    if (rq->nres > REPORT_MAX_INPUTS || rq->nver > REPORT_MAX_INPUTS)
        return sd_err(SD_ELIMIT, "at most %d results and %d verify files", REPORT_MAX_INPUTS, REPORT_MAX_INPUTS);
    for (int i = 0; i < rq->nres; i++) in->results[i] = rq->results[i];
    for (int i = 0; i < rq->nver; i++) in->verify[i] = rq->verify[i];
    in->nres = rq->nres;
    in->nver = rq->nver;
    in->scores = rq->scores;
    in->regressions = rq->regressions;
    in->formats = rq->formats;
    SD_TRY(render_template_find(rq->tmpl, in->tpath, sizeof in->tpath));
    return rq->db ? read_db(in, rq->db, rq->nres == 0) : 0;
}

int report_make(const report_req *rq, report_result *res) {
    memset(res, 0, sizeof *res);
    inputs in = {0};
    in.own = json_array();
    render_model *m = NULL;
    render_arena *a = NULL;
    render_template *t = NULL;
    git_libgit2_init();
    int rc = gather(rq, &in);
    if (rc == 0) rc = render_parse_formats(in.formats, &res->formats);
    if (rc == 0 && render_arena_new(&a) < 0) rc = sd_err(SD_ENOMEM, "out of memory");
    if (rc == 0) rc = render_template_load(a, in.tpath, &t);
    if (rc == 0) rc = render_model_new(&m);
    if (rc == 0) rc = build_model(m, &in);
    if (rc == 0) rc = render_report(m, t, rq->out, res->formats, &res->st);
    if (rc == 0) snprintf(res->tmpl, sizeof res->tmpl, "%s", t->name);
    if (rc == 0 && rq->record && !rq->run) rc = record(rq->out, &in, &res->recorded);
    inputs_free(&in);
    render_model_free(m);
    render_arena_free(a);
    render_shutdown_after(rc == 0 && !sd_sig_pending());
    git_libgit2_shutdown();
    return rc;
}
