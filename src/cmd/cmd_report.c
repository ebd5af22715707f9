/* cmd_report — `showdown report`: reads benchmark results and framework scores, renders the template
 * into out/showdown.pdf, out/figures/ID.svg, out/showdown.md and out/tables/ID.csv, and says where they are
 * and which sections had no data. */
#include "cmd/cli.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/sig.h"
#include "bench/results.h"
#include "db/db.h"
#include "render/report.h"
#include "render/template.h"

#include <jansson.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_RESULTS SD_LIST_MAX
#define MAX_DB_RUNS 60
#define RECORD_DIR "report-runs"
#define RECORD_SCHEMA "showdown-report-inputs/1"

static const char synopsis[] =
    "[--results FILE...] [--scores FILE] [--verify FILE...] [--regressions FILE] [--db FILE|--no-db] [--template NAME|FILE] [--out DIR]\n"
    "       [--format pdf,svg,md,csv] [--record] [--run N]";

/* The database runs a report read: the one taken as results (latest), the rest as history; kept with a
 * recorded report so a re-render reads exactly these. */
typedef struct db_used {
    int n;
    int64_t id[MAX_DB_RUNS];
    int latest[MAX_DB_RUNS];
    char kind[MAX_DB_RUNS][8];
} db_used;

static int add_db_doc(render_model *m, const char *path, const char *kind, int64_t id, json_t *doc, int latest) {
    int rc = 0;
    if (latest) {
        char name[512];
        snprintf(name, sizeof name, "%s (%s run %lld)", path, kind, (long long)id);
        rc = render_model_add_results_doc(m, doc, name);
    }
    return rc == 0 ? render_model_add_history(m, doc) : rc;
}

/* From the database: the latest complete bench (else nightly) run as results when none were given, and up
 * to 30 complete runs of each kind as history; with replay, exactly the runs a recorded report read. */
static int read_db(render_model *m, const char *path, int latest, db_used *used, const db_used *replay) {
    db *d = NULL;
    SD_TRY(db_open(&d, path));
    int rc = 0;
    if (replay) {
        for (int i = 0; i < replay->n && rc == 0; i++) {
            json_t *doc = NULL;
            SD_TRY_GOTO(rc, sd_results_load(d, replay->id[i], &doc), done);
            rc = add_db_doc(m, path, replay->kind[i], replay->id[i], doc, replay->latest[i]);
            json_decref(doc);
        }
        goto done;
    }
    static const char *const kinds[] = {"bench", "nightly"};
    for (int k = 0; k < 2 && rc == 0; k++) {
        int64_t ids[30];
        int n = 0;
        SD_TRY_GOTO(rc, db_runs_complete(d, kinds[k], 0, ids, 30, &n), done);
        for (int i = 0; i < n && rc == 0; i++) {
            json_t *doc = NULL;
            SD_TRY_GOTO(rc, sd_results_load(d, ids[i], &doc), done);
            rc = add_db_doc(m, path, kinds[k], ids[i], doc, i == 0 && latest);
            if (used && used->n < MAX_DB_RUNS) {
                used->id[used->n] = ids[i];
                used->latest[used->n] = i == 0 && latest;
                snprintf(used->kind[used->n++], sizeof used->kind[0], "%s", kinds[k]);
            }
            if (i == 0) latest = 0;
            json_decref(doc);
        }
    }
done:
    db_close(d);
    return rc;
}

/* ---- recorded reports: OUT/report-runs/N/ holds a copy of every input and inputs.json naming them ------------- */
typedef struct rec_inputs {
    const char *results[MAX_RESULTS], *verify[MAX_RESULTS], *scores, *regressions, *tmpl, *formats, *db;
    int nres, nver;
    db_used used;
    int have_used;
    json_t *doc;   /* owns the strings when read back */
} rec_inputs;

static int copy_into(const char *dir, const char *sub, int idx, const char *src, json_t *list) {
    char *data = NULL, path[4096], rel[1024];
    size_t len = 0;
    SD_TRY(sd_read_file(src, (size_t)256 << 20, &data, &len));
    const char *b = strrchr(src, '/');
    b = b ? b + 1 : src;
    /* one directory per input keeps every file's own name, which the report prints */
    if (idx >= 0) snprintf(rel, sizeof rel, "%s/%d/%s", sub, idx, b);
    else snprintf(rel, sizeof rel, "%s/%s", sub, b);
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    int rc = sd_mkdir_p(path, 1);
    if (rc == 0) rc = sd_write_file_atomic(path, data, len);
    free(data);
    if (rc == 0) json_array_append_new(list, json_string(rel));
    return rc;
}

static int next_run(const char *root) {
    int best = 0;
    for (int n = 1; n < 100000; n++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%d", root, n);
        if (access(p, F_OK) != 0) break;
        best = n;
    }
    return best + 1;
}

static int record(const char *out, const rec_inputs *in, const char *tpath, int *run) {
    char root[4096], dir[4096], path[4096];
    snprintf(root, sizeof root, "%s/" RECORD_DIR, out);
    *run = next_run(root);
    snprintf(dir, sizeof dir, "%s/%d", root, *run);
    json_t *doc = json_pack("{s:s,s:i,s:s}", "schema", RECORD_SCHEMA, "run", *run, "formats", in->formats);
    json_t *res = json_array(), *ver = json_array(), *one = json_array(), *dbr = json_array();
    int rc = 0;
    for (int i = 0; i < in->nres && rc == 0; i++) rc = copy_into(dir, "results", i, in->results[i], res);
    for (int i = 0; i < in->nver && rc == 0; i++) rc = copy_into(dir, "verify", i, in->verify[i], ver);
    if (rc == 0 && in->scores) rc = copy_into(dir, "scores", -1, in->scores, one);
    if (rc == 0 && in->regressions) rc = copy_into(dir, "regressions", -1, in->regressions, one);
    if (rc == 0) rc = copy_into(dir, "template", -1, tpath, one);
    json_object_set_new(doc, "results", res);
    json_object_set_new(doc, "verify", ver);
    size_t k = 0;
    if (in->scores) json_object_set(doc, "scores", json_array_get(one, k++));
    if (in->regressions) json_object_set(doc, "regressions", json_array_get(one, k++));
    json_object_set(doc, "template", json_array_get(one, k));
    json_decref(one);
    if (in->db) {   /* the database itself is not copied: its complete runs do not change */
        json_object_set_new(doc, "db", json_string(in->db));
        for (int i = 0; i < in->used.n; i++)
            json_array_append_new(dbr, json_pack("{s:I,s:s,s:b}", "id", (json_int_t)in->used.id[i], "kind", in->used.kind[i],
                                                 "latest", in->used.latest[i]));
    }
    json_object_set_new(doc, "db_runs", dbr);
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

/* Read OUT/report-runs/N/inputs.json back into in (paths made absolute to the record's directory). */
static int replay(const char *root, int run, rec_inputs *in) {
    char dir[4096], path[4096];
    snprintf(dir, sizeof dir, "%s/%d", root, run);
    snprintf(path, sizeof path, "%s/inputs.json", dir);
    if (access(path, R_OK) != 0) return sd_err(SD_EUSAGE, "--run %d: no recorded report (%s: %s)", run, path, strerror(errno));
    json_error_t e;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
    if (!doc) return sd_err(SD_EINPUT, "%s:%d:%d: %s", path, e.line, e.column, e.text);
    in->doc = doc;
    if (strcmp(json_string_value(json_object_get(doc, "schema")) ? json_string_value(json_object_get(doc, "schema")) : "",
               RECORD_SCHEMA) != 0)
        return sd_err(SD_EINPUT, "%s: expected schema \"" RECORD_SCHEMA "\"", path);
    json_t *paths = json_array();
    json_object_set_new(doc, "_abs", paths);
#define ABS(rel) (json_array_append_new(paths, json_sprintf("%s/%s", dir, (rel))), \
                  json_string_value(json_array_get(paths, json_array_size(paths) - 1)))
    json_t *v;
    size_t i;
    json_array_foreach(json_object_get(doc, "results"), i, v) {
        if (!json_is_string(v) || in->nres >= MAX_RESULTS) return sd_err(SD_EINPUT, "%s: \"results\" must list file names", path);
        in->results[in->nres++] = ABS(json_string_value(v));
    }
    json_array_foreach(json_object_get(doc, "verify"), i, v) {
        if (!json_is_string(v) || in->nver >= MAX_RESULTS) return sd_err(SD_EINPUT, "%s: \"verify\" must list file names", path);
        in->verify[in->nver++] = ABS(json_string_value(v));
    }
    const char *s = json_string_value(json_object_get(doc, "scores"));
    if (s) in->scores = ABS(s);
    s = json_string_value(json_object_get(doc, "regressions"));
    if (s) in->regressions = ABS(s);
    s = json_string_value(json_object_get(doc, "template"));
    if (!s) return sd_err(SD_EINPUT, "%s: no \"template\"", path);
    in->tmpl = ABS(s);
#undef ABS
    in->formats = json_string_value(json_object_get(doc, "formats"));
    in->db = json_string_value(json_object_get(doc, "db"));
    json_array_foreach(json_object_get(doc, "db_runs"), i, v) {
        if (in->used.n >= MAX_DB_RUNS) break;
        json_t *id = json_object_get(v, "id");
        const char *kind = json_string_value(json_object_get(v, "kind"));
        if (!json_is_integer(id) || !kind) return sd_err(SD_EINPUT, "%s: db_runs[%zu] needs \"id\" and \"kind\"", path, i);
        in->used.id[in->used.n] = json_integer_value(id);
        in->used.latest[in->used.n] = json_is_true(json_object_get(v, "latest"));
        snprintf(in->used.kind[in->used.n++], sizeof in->used.kind[0], "%s", kind);
    }
    in->have_used = 1;
    return 0;
}

int cmd_report(int argc, char **argv) {
    sd_list results = {0}, verify = {0}, fmts = {0};
    const char *scores = NULL, *tmpl = "showdown", *out = "out", *formats;
    const char *dbpath = NULL, *regressions = NULL;
    char fmtbuf[sizeof fmts.buf];   /* the joined list is never longer than its items with their NULs */
    int no_db = 0, rec = 0;
    long run_n = 0;
    int help = 0;
    rec_inputs in = {0};
    const sd_opt opts[] = {
        {"results", SD_OPT_LIST, &results, "FILE...", "benchmark results (showdown-results/1); several files may follow", 0, 0},
        {"scores", SD_OPT_STR, &scores, "FILE", "framework scores (showdown-scores/1)", 0, 0},
        {"verify", SD_OPT_LIST, &verify, "FILE...", "verification verdicts (showdown-verify/1, from verify --json)", 0, 0},
        {"regressions", SD_OPT_STR, &regressions, "FILE", "the nightly comparison (showdown-regressions/1, from nightly)", 0, 0},
        {"db", SD_OPT_STR, &dbpath, "FILE", "results database: the latest run when no --results, and the history (default out/showdown.db)", 0, 0},
        {"no-db", SD_OPT_FLAG, &no_db, NULL, "do not read the results database", 0, 0},
        {"template", SD_OPT_STR, &tmpl, "NAME|FILE", "report template: showdown (full), brief (one page), or a path", 0, 0},
        {"out", SD_OPT_STR, &out, "DIR", "output directory (default out)", 0, 0},
        {"format", SD_OPT_LIST, &fmts, "pdf|svg|md|csv|all", "output formats (md implies csv; default pdf,svg,md)", 0, 0},
        {"record", SD_OPT_FLAG, &rec, NULL, "keep a copy of this report's inputs in OUT/" RECORD_DIR "/N/ (what make report does)", 0, 0},
        {"run", SD_OPT_INT, &run_n, "N", "render recorded report N again (without inputs: the last recorded one)", 1, 99999},
        {0},
    };
    int rc = sd_opts_parse(opts, argc, argv, NULL, 0, NULL, &help);
    if (help) {
        sd_opts_usage(stdout, "report", synopsis,
                      "Render the showdown report: an A4 PDF, one SVG per figure, a Markdown index with every table\n"
                      "as text and a CSV per table. With no inputs and a recorded report in OUT/" RECORD_DIR "/, the last\n"
                      "recorded one (make report records its own) is rendered again, byte for byte; --run N renders\n"
                      "recorded report N. Otherwise, without --results, the latest complete run of the results\n"
                      "database is reported; earlier runs make the history section. Without --scores,\n"
                      "out/scores.json is used when it exists. Sections whose data are absent are omitted (and listed).",
                      opts);
        return SD_EXIT_OK;
    }
    if (rc < 0) return sd_cli_fail("report", rc);
    if ((rc = sd_out_path_ok(out, "--out")) != 0) return sd_cli_fail("report", rc);
    if (!fmts.n) sd_list_split(&fmts, "pdf,svg,md");
    sd_list_join(&fmts, fmtbuf, sizeof fmtbuf);
    formats = fmtbuf;
    int given = results.n || verify.n || scores || regressions;
    char root[4096];
    snprintf(root, sizeof root, "%s/" RECORD_DIR, out);
    if (!given && !run_n) {   /* no inputs: the last recorded report, when there is one */
        char *num = NULL, lp[4200];
        size_t len;
        snprintf(lp, sizeof lp, "%s/latest", root);
        if (access(lp, R_OK) == 0 && sd_read_file(lp, 64, &num, &len) == 0) {
            char *e;
            run_n = strtol(num, &e, 10);
            if (e == num || run_n < 1) { free(num); sd_err(SD_EINPUT, "%s:1: expected a run number", lp); return sd_cli_fail("report", SD_EINPUT); }
            free(num);
        }
    }
    if (run_n) {
        if (given || rec) {
            sd_err(SD_EUSAGE, "--run renders a recorded report again: give no inputs and no --record with it");
            return sd_cli_fail("report", SD_EUSAGE);
        }
        if ((rc = replay(root, (int)run_n, &in)) < 0) { json_decref(in.doc); return sd_cli_fail("report", rc); }
        for (int i = 0; i < in.nres; i++) results.v[i] = in.results[i];
        for (int i = 0; i < in.nver; i++) verify.v[i] = in.verify[i];
        results.n = in.nres;
        verify.n = in.nver;
        scores = in.scores;
        regressions = in.regressions;
        tmpl = in.tmpl;
        if (in.formats) formats = in.formats;
        dbpath = in.db;
        no_db = !in.db;
        printf("report: recorded report %ld (%s/%ld/inputs.json)\n", run_n, root, run_n);
    }
    sd_sig_install();   /* a signal stops the render between files; the previous figures/tables stay whole */
    if (!dbpath) dbpath = DB_DEFAULT_PATH;
    int have_db = !no_db && access(dbpath, R_OK) == 0;   /* never create a database just to read it */
    if (results.n == 0 && !scores && verify.n == 0) {
        if (access("out/scores.json", R_OK) == 0) scores = "out/scores.json";
        if (!have_db && !scores) {
            sd_err(SD_EUSAGE, "nothing to report: give --results FILE... and/or --scores FILE (see --help), or run bench first");
            return sd_cli_fail("report", SD_EUSAGE);
        }
    }
    unsigned fmt = 0;
    char tpath[4096];
    render_model *m = NULL;
    render_arena *a = NULL;
    render_template *t = NULL;
    render_report_stats st;
    SD_TRY_GOTO(rc, render_parse_formats(formats, &fmt), done);
    SD_TRY_GOTO(rc, render_template_find(tmpl, tpath, sizeof tpath), done);
    if (render_arena_new(&a) < 0) { rc = sd_err(SD_ENOMEM, "out of memory"); goto done; }
    SD_TRY_GOTO(rc, render_template_load(a, tpath, &t), done);
    SD_TRY_GOTO(rc, render_model_new(&m), done);
    for (int i = 0; i < results.n; i++) SD_TRY_GOTO(rc, render_model_add_results(m, results.v[i]), done);
    if (run_n && in.db && !have_db) { rc = sd_err(SD_EINPUT, "recorded report %ld read the database %s, which is gone", run_n, in.db); goto done; }
    if (have_db) SD_TRY_GOTO(rc, read_db(m, dbpath, results.n == 0, &in.used, run_n ? &in.used : NULL), done);
    if (scores) SD_TRY_GOTO(rc, render_model_set_scores(m, scores), done);
    for (int i = 0; i < verify.n; i++) SD_TRY_GOTO(rc, render_model_add_verify(m, verify.v[i]), done);
    if (regressions) SD_TRY_GOTO(rc, render_model_set_regressions(m, regressions), done);
    SD_TRY_GOTO(rc, render_report(m, t, out, fmt, &st), done);
    if (fmt & RENDER_OUT_PDF) printf("report: %s/showdown.pdf (%d page%s, template %s)\n", out, st.pages, st.pages == 1 ? "" : "s", t->name);
    if (fmt & RENDER_OUT_SVG) printf("report: %s/figures/ (%d figure%s and %d table%s as SVG)\n", out, st.figures,
                                     st.figures == 1 ? "" : "s", st.tables, st.tables == 1 ? "" : "s");
    if (fmt & RENDER_OUT_CSV) printf("report: %s/tables/ (%d CSV)\n", out, st.tables);
    if (fmt & RENDER_OUT_MD) printf("report: %s/showdown.md\n", out);
    if (st.omitted) printf("report: omitted for lack of data: %s\n", st.omitted_names);
    if (rec) {
        int n;
        for (int i = 0; i < results.n; i++) in.results[i] = results.v[i];
        for (int i = 0; i < verify.n; i++) in.verify[i] = verify.v[i];
        in.nres = results.n;
        in.nver = verify.n;
        in.scores = scores;
        in.regressions = regressions;
        in.formats = formats;
        in.db = have_db ? dbpath : NULL;
        SD_TRY_GOTO(rc, record(out, &in, tpath, &n), done);
        printf("report: inputs recorded in %s/%d/ (render again: showdown report, or showdown report --run %d)\n", root, n, n);
    }
done:
    json_decref(in.doc);
    render_model_free(m);
    render_arena_free(a);
    render_shutdown();
    if (rc == SD_EINTR && sd_sig_pending()) {
        fprintf(stderr, "showdown report: interrupted by %s; the previous outputs in %s are left as they were\n",
                sd_sig_pending() == SIGINT ? "SIGINT" : "SIGTERM", out);
        return sd_sig_exit_code();
    }
    return rc < 0 ? sd_cli_fail("report", rc) : SD_EXIT_OK;
}
