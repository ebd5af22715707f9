/* cmd_report — `showdown report`: reads benchmark results and framework scores, renders the template
 * into out/showdown.pdf, out/figures/ID.svg, out/showdown.md and out/tables/ID.csv, and says where they are
 * and which sections had no data. */
#include "cmd/cli.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/sig.h"
#include "db/db.h"
#include "render/report.h"
#include "render/report_record.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RECORD_DIR REPORT_RECORD_DIR

static const char synopsis[] =
    "[--results FILE...] [--scores FILE] [--verify FILE...] [--regressions FILE] [--db FILE|--no-db] [--template NAME|FILE] [--out DIR]\n"
    "       [--format pdf,svg,md,csv] [--record] [--run N]";

int cmd_report(int argc, char **argv) {
    sd_list results = {0}, verify = {0}, fmts = {0};
    const char *scores = NULL, *tmpl = NULL, *out = "out", *dbpath = NULL, *regressions = NULL;
    char fmtbuf[sizeof fmts.buf];   /* the joined list is never longer than its items with their NULs */
    int no_db = 0, rec = 0, help = 0;
    long run_n = 0;
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
                      "as text and a CSV per table. With no inputs (no --results, --scores, --verify, --regressions or\n"
                      "--db) and a recorded report in OUT/" RECORD_DIR "/, the last recorded one (make report records its\n"
                      "own) is rendered again from its copies, byte for byte; --run N renders recorded report N. A\n"
                      "recorded report keeps its template and formats: --template, --format and --no-db with it are\n"
                      "errors. Otherwise, without --results, the latest complete run of the results database is\n"
                      "reported; earlier runs make the history section. Without --scores, out/scores.json is used when\n"
                      "it exists. Sections whose data are absent are omitted (and listed).",
                      opts);
        return SD_EXIT_OK;
    }
    if (rc < 0) return sd_cli_fail("report", rc);
    if ((rc = sd_out_path_ok(out, "--out")) != 0) return sd_cli_fail("report", rc);
    if (results.n > REPORT_MAX_INPUTS || verify.n > REPORT_MAX_INPUTS)
        return sd_cli_fail("report", sd_err(SD_EUSAGE, "--%s: at most %d files", results.n > REPORT_MAX_INPUTS ? "results" : "verify",
                                            REPORT_MAX_INPUTS));
    int given = results.n || verify.n || scores || regressions || dbpath;
    if (!given && !run_n) {   /* no inputs: the last recorded report, when there is one */
        int latest = 0;
        if ((rc = report_latest_run(out, &latest)) != 0) return sd_cli_fail("report", rc);
        run_n = latest;
    }
    if (run_n) {   /* a recorded report is rendered as recorded: an option that would change it is an error */
        if (given || rec)
            return sd_cli_fail("report", sd_err(SD_EUSAGE, "--run renders a recorded report again: give no inputs and no --record with it"));
        const char *clash = tmpl ? "template" : fmts.n ? "format" : no_db ? "no-db" : NULL;
        if (clash)
            return sd_cli_fail("report", sd_err(SD_EUSAGE, "--%s: recorded report %ld is rendered with its own inputs and "
                                                "options; to render the database anew, give --db FILE", clash, run_n));
        printf("report: recorded report %ld (%s/" RECORD_DIR "/%ld/inputs.json)\n", run_n, out, run_n);
    }
    if (!fmts.n) sd_list_split(&fmts, "pdf,svg,md");
    sd_list_join(&fmts, fmtbuf, sizeof fmtbuf);
    report_req rq = {.tmpl = tmpl ? tmpl : "showdown", .formats = fmtbuf, .out = out, .record = rec, .run = (int)run_n,
                     .scores = scores, .regressions = regressions, .nres = results.n, .nver = verify.n};
    for (int i = 0; i < results.n; i++) rq.results[i] = results.v[i];
    for (int i = 0; i < verify.n; i++) rq.verify[i] = verify.v[i];
    if (!run_n) {
        if (!dbpath) dbpath = DB_DEFAULT_PATH;
        if (!no_db && access(dbpath, F_OK) == 0) rq.db = dbpath;   /* never create a database just to read it */
        if (results.n == 0 && !scores && verify.n == 0) {
            if (access("out/scores.json", R_OK) == 0) rq.scores = "out/scores.json";
            if (!rq.db && !rq.scores) {
                sd_err(SD_EUSAGE, "nothing to report: give --results FILE... and/or --scores FILE (see --help), or run bench first");
                return sd_cli_fail("report", SD_EUSAGE);
            }
        }
    }
    sd_sig_install();   /* a signal stops the render before its outputs are switched in; the previous set stays whole */
    report_result r;
    rc = report_make(&rq, &r);
    if (rc == 0) {
        const render_report_stats *st = &r.st;
        if (r.formats & RENDER_OUT_PDF) printf("report: %s/showdown.pdf (%d page%s, template %s)\n", out, st->pages, st->pages == 1 ? "" : "s", r.tmpl);
        if (r.formats & RENDER_OUT_SVG) printf("report: %s/figures/ (%d figure%s and %d table%s as SVG)\n", out, st->figures,
                                             st->figures == 1 ? "" : "s", st->tables, st->tables == 1 ? "" : "s");
        if (r.formats & RENDER_OUT_CSV) printf("report: %s/tables/ (%d CSV)\n", out, st->tables);
        if (r.formats & RENDER_OUT_MD) printf("report: %s/showdown.md\n", out);
        if (st->omitted) printf("report: omitted for lack of data: %s\n", st->omitted_names);
        if (r.recorded)
            printf("report: inputs recorded in %s/" RECORD_DIR "/%d/ (render again: showdown report, or showdown report --run %d)\n",
                   out, r.recorded, r.recorded);
    }
    if (rc == SD_EINTR && sd_sig_pending()) {
        fprintf(stderr, "showdown report: interrupted by %s; the previous outputs in %s are left as they were\n",
                sd_sig_pending() == SIGINT ? "SIGINT" : "SIGTERM", out);
        return sd_sig_exit_code();
    }
    return rc < 0 ? sd_cli_fail("report", rc) : SD_EXIT_OK;
}
