/* fig — one figure = title + body (table or chart) + notes; the notes always list missing values, so a
 * reader never has to guess whether a short bar or an empty cell is a zero. */
#include "render/render_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define TITLE_GAP 5.0
#define NOTE_GAP 5.0

typedef struct sbuf { char *p; size_t n, len; int items; } sbuf;

static void sb_add(sbuf *b, const char *s) {
    if (b->len + 1 >= b->n) return;
    int k = snprintf(b->p + b->len, b->n - b->len, "%s", s);
    if (k > 0) b->len += (size_t)k < b->n - b->len ? (size_t)k : b->n - b->len - 1;
}

/* Collect "Group: a, b; Other: c" of the missing (row, col) cells of an nr x nc matrix. */
static int list_missing(sbuf *b, int nr, int nc, const double *v, const char *const *text, const char **rn,
                        const char **cn) {
    int total = 0;
    for (int r = 0; r < nr; r++) {
        int in_row = 0;
        for (int c = 0; c < nc; c++) {
            if (text && text[r * nc + c]) continue;
            if (!isnan(v[r * nc + c])) continue;
            total++;
            if (total > 24) continue;   /* keep the note short; the count says how many */
            sb_add(b, in_row ? ", " : (b->items++ ? "; " : ""));
            if (!in_row) { sb_add(b, rn && rn[r] ? rn[r] : "?"); sb_add(b, ": "); }
            sb_add(b, cn && cn[c] ? cn[c] : "?");
            in_row = 1;
        }
    }
    return total;
}

int render_fig_missing_note(const render_fig *f, char *buf, size_t n) {
    if (n == 0) return 0;
    buf[0] = 0;
    char list[1536] = "";
    sbuf b = {list, sizeof list, 0, 0};
    int total = 0;
    switch (f->kind) {
    case RENDER_FIG_TABLE: {
        const render_table *t = f->u.table;
        total = list_missing(&b, t->nrows, t->ncols, t->v, t->text, t->rows, t->cols);
        break;
    }
    case RENDER_FIG_BAR: {
        const render_bar *r = f->u.bar;
        total = list_missing(&b, r->ngroups, r->nseries, r->v, NULL, r->groups, r->series);
        break;
    }
    case RENDER_FIG_RADAR: {
        const render_radar *r = f->u.radar;
        total = list_missing(&b, r->nseries, r->naxes, r->v, NULL, r->series, r->axes);
        break;
    }
    case RENDER_FIG_LINE: {
        const render_line *l = f->u.line;
        for (int s = 0; s < l->nseries; s++)
            for (int i = 0; i < l->npts[s]; i++) total += isnan(l->y[s][i]);
        if (total) snprintf(list, sizeof list, "%d point%s not recorded", total, total == 1 ? "" : "s");
        break;
    }
    }
    if (total == 0) return 0;
    if (f->kind == RENDER_FIG_LINE)
        snprintf(buf, n, "Missing data (gaps, not zeros): %s.", list);
    else if (total <= 24)
        snprintf(buf, n, "Missing (no data, not counted as zero): %s.", list);
    else
        snprintf(buf, n, "Missing (no data, not counted as zero): %d values, among them %s.", total, list);
    return total;
}

static int has_best(const render_fig *f) {
    if (f->kind != RENDER_FIG_TABLE || !f->u.table->best) return 0;
    for (int c = 0; c < f->u.table->ncols; c++)
        if (f->u.table->best[c]) return 1;
    return 0;
}

/* The note under a figure: the caller's note, then the best-marking key, then missing values. */
static void full_note(const render_fig *f, char *buf, size_t n) {
    char miss[2048];
    render_fig_missing_note(f, miss, sizeof miss);
    snprintf(buf, n, "%s%s%s%s", f->note ? f->note : "", f->note && f->note[0] ? " " : "",
             has_best(f) ? "Shaded bold: best in its column. " : "", miss);
    size_t k = strlen(buf);
    while (k > 0 && buf[k - 1] == ' ') buf[--k] = 0;
}

static double body_height(cairo_t *cr, const render_fig *f, double w) {
    switch (f->kind) {
    case RENDER_FIG_TABLE: return render_table_height(cr, f->u.table, w);
    case RENDER_FIG_BAR: return render_bar_height(cr, f->u.bar, w);
    case RENDER_FIG_RADAR: return render_radar_height(cr, f->u.radar, w);
    case RENDER_FIG_LINE: return render_line_height(cr, f->u.line, w);
    }
    return 0;
}

double render_fig_height(cairo_t *cr, const render_fig *f, double w) {
    double h = 0, th;
    if (f->title && f->title[0]) {
        render_text_size(cr, RENDER_FONT_TITLE, f->title, w, NULL, &th);
        h += th + TITLE_GAP;
    }
    h += body_height(cr, f, w);
    char note[4096];
    full_note(f, note, sizeof note);
    if (note[0]) {
        render_text_size(cr, RENDER_FONT_ITALIC, note, w, NULL, &th);
        h += NOTE_GAP + th;
    }
    return h;
}

double render_fig_draw(cairo_t *cr, const render_fig *f, double x, double y, double w) {
    double y0 = y;
    if (f->title && f->title[0]) y += render_text(cr, RENDER_FONT_TITLE, f->title, x, y, w, RENDER_LEFT, RC_INK) + TITLE_GAP;
    double bh = body_height(cr, f, w);
    switch (f->kind) {
    case RENDER_FIG_TABLE: render_table_draw(cr, f->u.table, x, y, w); break;
    case RENDER_FIG_BAR: render_bar_draw(cr, f->u.bar, x, y, w); break;
    case RENDER_FIG_RADAR: render_radar_draw(cr, f->u.radar, x, y, w); break;
    case RENDER_FIG_LINE: render_line_draw(cr, f->u.line, x, y, w); break;
    }
    y += bh;
    char note[4096];
    full_note(f, note, sizeof note);
    if (note[0]) y += NOTE_GAP + render_text(cr, RENDER_FONT_ITALIC, note, x, y + NOTE_GAP, w, RENDER_LEFT, RC_GREY);
    return y - y0;
}
