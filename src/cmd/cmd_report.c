/* cmd_report — `showdown report`: reads benchmark results and framework scores, renders the template
 * into out/showdown.pdf, out/figures/ID.svg, out/showdown.md and out/tables/ID.csv, and says where they are
 * and which sections had no data. */
#include "cmd/cli.h"
#include "core/err.h"
#include "render/report.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_RESULTS 64

static const char synopsis[] =
    "[--results FILE...] [--scores FILE] [--verify FILE...] [--template NAME|FILE] [--out DIR] [--format pdf,svg,md,csv]";

int cmd_report(int argc, char **argv) {
    const char *results[MAX_RESULTS], *verify[MAX_RESULTS], *scores = NULL, *tmpl = "showdown", *out = "out", *formats = "pdf,svg,md";
    const char *dummy = NULL;
    int nres = 0, nver = 0, help = 0, npos = 0;
    const sd_opt opts[] = {
        {"results", SD_OPT_STR, &dummy, "FILE...", "benchmark results (showdown-results/1); several files may follow", 0, 0},
        {"scores", SD_OPT_STR, &scores, "FILE", "framework scores (showdown-scores/1)", 0, 0},
        {"verify", SD_OPT_STR, &dummy, "FILE...", "verification verdicts (showdown-verify/1, from verify --json)", 0, 0},
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
                      "as text and a CSV per table. Without --results/--scores, out/results.json and out/scores.json\n"
                      "are used when they exist. Sections whose data are absent are omitted (and listed).",
                      opts);
        return SD_EXIT_OK;
    }
    if (rc < 0) return sd_cli_fail("report", rc);
    if (nres == 0 && !scores && nver == 0) {
        if (access("out/results.json", R_OK) == 0) results[nres++] = "out/results.json";
        if (access("out/scores.json", R_OK) == 0) scores = "out/scores.json";
        if (nres == 0 && !scores && nver == 0) {
            sd_err(SD_EUSAGE, "nothing to report: give --results FILE... and/or --scores FILE (see --help)");
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
    if (scores) SD_TRY_GOTO(rc, render_model_set_scores(m, scores), done);
    for (int i = 0; i < nver; i++) SD_TRY_GOTO(rc, render_model_add_verify(m, verify[i]), done);
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
    return rc < 0 ? sd_cli_fail("report", rc) : SD_EXIT_OK;
}
