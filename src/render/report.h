/* report — the whole report from a model and a template: an A4 PDF (out/showdown.pdf), one SVG per
 * figure (out/figures/), a Markdown index with every table as text (out/showdown.md) and a CSV per table
 * (out/tables/). Sections whose data are absent are left out; every file is written atomically and is
 * byte-identical for identical inputs (dates come from the inputs, never from the clock). */
#ifndef SD_RENDER_REPORT_H
#define SD_RENDER_REPORT_H

#include "render/model.h"
#include "render/outline.h"

enum { RENDER_OUT_PDF = 1, RENDER_OUT_SVG = 2, RENDER_OUT_MD = 4, RENDER_OUT_CSV = 8, RENDER_OUT_ALL = 15 };

typedef struct render_report_stats {
    int pages, figures, tables, sections, omitted;   /* omitted: template sections without data */
    char omitted_names[256];                          /* their types, comma-separated */
} render_report_stats;

/* Parse "pdf,svg,md,csv" into RENDER_OUT_* bits. */
int render_parse_formats(const char *s, unsigned *out);
int render_report(const render_model *m, const render_template *t, const char *out_dir, unsigned formats,
                  render_report_stats *stats);

#endif
