/* report_int — the report as a list of blocks (headings, paragraphs, figures, page breaks), shared by the
 * section builders (report_build.c) and the writers (report_out.c). Not part of the API. */
#ifndef SD_RENDER_REPORT_INT_H
#define SD_RENDER_REPORT_INT_H

#include "render/report.h"

typedef enum rb_kind { RB_TITLE, RB_SUBTITLE, RB_H2, RB_H3, RB_PARA, RB_FIG, RB_BREAK, RB_GAP } rb_kind;

typedef struct rb_block {
    rb_kind kind;
    const char *text;
    render_fig *fig;
    double gap;                 /* RB_GAP */
    int page;                   /* set by pagination, 0-based; -1: not in the PDF */
    int md_only;                /* a table kept for the Markdown and CSV but not drawn in the PDF */
    int pdf_skip;               /* drawn in the PDF as its parts (the pdf_only blocks after it) */
    int pdf_only;               /* a part of a table too long for one page: the PDF only */
    double y, h;
} rb_block;

typedef struct rdoc {
    render_arena *a;
    const render_model *m;
    const render_template *t;
    rb_block *b;
    int n, cap;
    int nfig, ntab;             /* numbering of figures and tables */
    int npages;
    double scale;               /* one-page templates: content scale (1 = none) */
    const char *date;           /* latest input date, or NULL */
    int cover_page;             /* page 0 is a cover (no running header) */
    int compact;
    int omit_note;              /* block that will say which sections had no data (-1: none) */
    render_report_stats *st;
} rdoc;

int rb_add(rdoc *d, rb_kind k, const char *text, render_fig *fig);
/* Expand {placeholders} of a template text. */
const char *rb_expand(rdoc *d, const char *s);
/* Build every section of the template into blocks. */
int rb_build(rdoc *d);
/* A slug of s for file names ("Support & Community" -> "support-community"). */
const char *rb_slug(rdoc *d, const char *s);

#endif
