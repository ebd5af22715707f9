/* report_record — one report from its inputs, and recorded reports: `--record` keeps a copy of every input in
 * OUT/report-runs/N/ (the results files, verdicts, scores, regressions, template, and the database runs it read as
 * JSON documents) with inputs.json naming each copy and its content hash; rendering record N again reads only
 * those copies, each confined to the record's folder and checked against its hash, so it gives the same bytes
 * whatever happened to the database or the current directory since. A record's folder is created exclusively. */
#ifndef SD_RENDER_REPORT_RECORD_H
#define SD_RENDER_REPORT_RECORD_H

#include "render/render.h"
#include "render/report.h"

#define REPORT_MAX_INPUTS 64
#define REPORT_RECORD_DIR "report-runs"

typedef struct report_req {
    const char *results[REPORT_MAX_INPUTS], *verify[REPORT_MAX_INPUTS];
    int nres, nver;
    const char *scores, *regressions;
    const char *tmpl;      /* a template name or path */
    const char *formats;   /* "pdf,svg,md" */
    const char *db;        /* the results database to read (the latest run when no results, and history), or NULL */
    const char *out;
    int record;            /* keep the inputs in OUT/report-runs/N/ */
    int run;               /* > 0: render recorded report N again (nothing else of the request is read) */
} report_req;

typedef struct report_result {
    render_report_stats st;
    unsigned formats;      /* RENDER_OUT_* */
    char tmpl[128];        /* the template's name */
    int recorded;          /* N of OUT/report-runs/N/ when recorded, else 0 */
} report_result;

/* Render the report the request asks for into req->out (and record it when asked). */
int report_make(const report_req *req, report_result *res);
/* The run OUT/report-runs/latest names, or 0 when there is none; a latest that is not exactly a run number
 * (1 to 99999, one optional newline) or not a regular file is SD_EINPUT. */
int report_latest_run(const char *out, int *run);

#endif
