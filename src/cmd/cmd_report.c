/* cmd_report — `showdown report`: reads benchmark results and framework scores, renders the template
 * into out/showdown.pdf, out/figures/ID.svg, out/showdown.md and out/tables/ID.csv, and says where they are
 * and which sections had no data. */
#include "cmd/cli.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/sig.h"
#include "db/db.h"
#include "render/report.h"

#include <jansson.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_RESULTS 64

static const char synopsis[] =
    "[--results FILE...] [--scores FILE] [--verify FILE...] [--regressions FILE] [--db FILE|--no-db] [--template NAME|FILE] [--out DIR]\n"
    "       [--format pdf,svg,md,csv]";

/* From the database: the latest complete bench (else nightly) run as results when none were given, and up
 * to 30 complete runs of each kind as history. */
static int read_db(render_model *m, const char *path, int latest) {
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
            SD_TRY_GOTO(rc, db_run_load(d, ids[i], &doc), done);
            if (i == 0 && latest) {
                char name[512];
                snprintf(name, sizeof name, "%s (%s run %lld)", path, kinds[k], (long long)ids[i]);
                rc = render_model_add_results_doc(m, doc, name);
                latest = 0;
            }
            if (rc == 0) rc = render_model_add_history(m, doc);
            json_decref(doc);
        }
    }
done:
    db_close(d);
    return rc;
}

int cmd_report(int argc, char **argv) {
    const char *results[MAX_RESULTS], *verify[MAX_RESULTS], *scores = NULL, *tmpl = "showdown", *out = "out", *formats = "pdf,svg,md";
    const char *dummy = NULL, *dbpath = NULL, *regressions = NULL;
    int no_db = 0;
    int nres = 0, nver = 0, help = 0, npos = 0;
    const sd_opt opts[] = {
        {"results", SD_OPT_STR, &dummy, "FILE...", "benchmark results (showdown-results/1); several files may follow", 0, 0},
        {"scores", SD_OPT_STR, &scores, "FILE", "framework scores (showdown-scores/1)", 0, 0},
        {"verify", SD_OPT_STR, &dummy, "FILE...", "verification verdicts (showdown-verify/1, from verify --json)", 0, 0},
        {"regressions", SD_OPT_STR, &regressions, "FILE", "the nightly comparison (showdown-regressions/1, from nightly)", 0, 0},
        {"db", SD_OPT_STR, &dbpath, "FILE", "results database: the latest run when no --results, and the history (default out/showdown.db)", 0, 0},
        {"no-db", SD_OPT_FLAG, &no_db, NULL, "do not read the results database", 0, 0},
        {"template", SD_OPT_STR, &tmpl, "NAME|FILE", "report template: showdown (full), brief (one page), or a path", 0, 0},
        {"out", SD_OPT_STR, &out, "DIR", "output directory (default out)", 0, 0},
        {"format", SD_OPT_STR, &formats, "LIST", "any of pdf,svg,md,csv (md implies csv; default pdf,svg,md)", 0, 0},
        {0},
    };
    /* --results and --verify take every following argument up to the next option */
    char *rest[256];
    int nrest = 0;
    for (int i = 0; i < argc && nrest < 255; i++) {
        const char **list = NULL;
        int *n = NULL;
        const char *opt = argv[i];
        if (i > 0 && strncmp(opt, "--results", 9) == 0 && (opt[9] == 0 || opt[9] == '=')) { list = results; n = &nres; }
        if (i > 0 && strncmp(opt, "--verify", 8) == 0 && (opt[8] == 0 || opt[8] == '=')) { list = verify; n = &nver; }
        if (!list) { rest[nrest++] = argv[i]; continue; }
        const char *eq = strchr(opt, '=');
        int took = 0;
        if (eq) { list[(*n)++] = eq + 1; took = 1; }
        else
            while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0 && *n < MAX_RESULTS) { list[(*n)++] = argv[++i]; took++; }
        if (!took || *n >= MAX_RESULTS) {
            sd_err(SD_EUSAGE, "%.*s expects FILE... (at most %d)", eq ? (int)(eq - opt) : (int)strlen(opt), opt, MAX_RESULTS - 1);
            return sd_cli_fail("report", SD_EUSAGE);
        }
    }
    rest[nrest] = NULL;
    const char *pos[1];
    int rc = sd_opts_parse(opts, nrest, rest, pos, 0, &npos, &help);
    if (help) {
        sd_opts_usage(stdout, "report", synopsis,
                      "Render the showdown report: an A4 PDF, one SVG per figure, a Markdown index with every table\n"
                      "as text and a CSV per table. Without --results, the latest complete run of the results\n"
                      "database is reported; earlier runs make the history section. Without --scores,\n"
                      "out/scores.json is used when it exists. Sections whose data are absent are omitted (and listed).",
                      opts);
        return SD_EXIT_OK;
    }
    if (rc < 0) return sd_cli_fail("report", rc);
    if ((rc = sd_out_path_ok(out, "--out")) != 0) return sd_cli_fail("report", rc);
    sd_sig_install();   /* a signal stops the render between files; the previous figures/tables stay whole */
    if (!dbpath) dbpath = DB_DEFAULT_PATH;
    int have_db = !no_db && access(dbpath, R_OK) == 0;   /* never create a database just to read it */
    if (nres == 0 && !scores && nver == 0) {
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
    for (int i = 0; i < nres; i++) SD_TRY_GOTO(rc, render_model_add_results(m, results[i]), done);
    if (have_db) SD_TRY_GOTO(rc, read_db(m, dbpath, nres == 0), done);
    if (scores) SD_TRY_GOTO(rc, render_model_set_scores(m, scores), done);
    for (int i = 0; i < nver; i++) SD_TRY_GOTO(rc, render_model_add_verify(m, verify[i]), done);
    if (regressions) SD_TRY_GOTO(rc, render_model_set_regressions(m, regressions), done);
    SD_TRY_GOTO(rc, render_report(m, t, out, fmt, &st), done);
    if (fmt & RENDER_OUT_PDF) printf("report: %s/showdown.pdf (%d page%s, template %s)\n", out, st.pages, st.pages == 1 ? "" : "s", t->name);
    if (fmt & RENDER_OUT_SVG) printf("report: %s/figures/ (%d figure%s and %d table%s as SVG)\n", out, st.figures,
                                     st.figures == 1 ? "" : "s", st.tables, st.tables == 1 ? "" : "s");
    if (fmt & RENDER_OUT_CSV) printf("report: %s/tables/ (%d CSV)\n", out, st.tables);
    if (fmt & RENDER_OUT_MD) printf("report: %s/showdown.md\n", out);
    if (st.omitted) printf("report: omitted for lack of data: %s\n", st.omitted_names);
done:
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
