/* table — booktabs-style tables: numbers right-aligned (units under the header), missing cells in grey
 * italic "missing", the best value of each marked column bold on a tint; widths come from measured text,
 * long row labels and headers wrap rather than clip. */
#include "render/render_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PADX 5.0
#define PADY 3.2
#define MAX_NUM_COL 120.0

typedef struct tlay {
    double lab_w, *col_w, group_h, head_h, *row_h, h;
    double *min_w;     /* a column's widest word: the last resort narrows no column below it */
    int has_head;
    int *textcol;
    char *isbest;      /* nrows*ncols */
} tlay;

static void cell_str(const render_table *t, int r, int c, char *buf, size_t n) {
    const char *s = t->text ? t->text[r * t->ncols + c] : NULL;
    if (s) { snprintf(buf, n, "%s", s); return; }
    render_fmt_num(buf, n, t->v[r * t->ncols + c], t->dec ? t->dec[c] : 2);
}

static int cell_missing(const render_table *t, int r, int c) {
    return !(t->text && t->text[r * t->ncols + c]) && isnan(t->v[r * t->ncols + c]);
}

static void mark_best(const render_table *t, char *isbest) {
    if (!t->best) return;
    const render_table *W = t->whole ? t->whole : t;   /* a continued part: the best of the whole table */
    for (int c = 0; c < t->ncols; c++) {
        if (!t->best[c]) continue;
        double best = NAN;
        int n = 0;
        for (int r = 0; r < W->nrows; r++) {
            if (W->text && W->text[r * W->ncols + c]) continue;
            double v = W->v[r * W->ncols + c];
            if (isnan(v)) continue;
            n++;
            if (isnan(best) || (W->best[c] > 0 ? v > best : v < best)) best = v;
        }
        if (isnan(best) || n < 2) continue;   /* a best of one is no comparison */
        char bs[64], cs[64];
        render_fmt_num(bs, sizeof bs, best, t->dec ? t->dec[c] : 2);
        for (int r = 0; r < t->nrows; r++) {
            if (cell_missing(t, r, c) || (t->text && t->text[r * t->ncols + c])) continue;
            render_fmt_num(cs, sizeof cs, t->v[r * t->ncols + c], t->dec ? t->dec[c] : 2);
            if (strcmp(bs, cs) == 0) isbest[r * t->ncols + c] = 1;   /* ties as displayed */
        }
    }
}

/* The shade of a ratio: green at or under 1, then pale yellow to red over 1..100 on a log scale; light enough
 * for ink text on every shade. */
static render_rgb heat_rgb(double v) {
    if (v <= 1.0) return (render_rgb){0.80, 0.92, 0.82};
    double k = log10(v) / 2;
    if (k > 1) k = 1;
    render_rgb lo = {1.00, 0.96, 0.82}, hi = {0.95, 0.55, 0.45};
    return (render_rgb){lo.r + k * (hi.r - lo.r), lo.g + k * (hi.g - lo.g), lo.b + k * (hi.b - lo.b)};
}

static void lay_free(tlay *L) { free(L->col_w); free(L->min_w); free(L->row_h); free(L->textcol); free(L->isbest); }

/* Natural widths: each column fits its widest cell, unit and (up to a cap) header; returns their sum and
 * sets *labnat to the natural width of the row-label column. */
static double natural_widths(cairo_t *cr, const render_table *t, tlay *L, double *labnat_out) {
    int nc = t->ncols, nr = t->nrows;
    double sum = 0, tw;
    char buf[1024];
    for (int c = 0; c < nc; c++) {
        int alltext = nr > 0;
        double vw = 0;
        for (int r = 0; r < nr; r++) {
            if (!(t->text && t->text[r * nc + c])) alltext = 0;
            cell_str(t, r, c, buf, sizeof buf);
            render_font f = cell_missing(t, r, c) ? RENDER_FONT_ITALIC : RENDER_FONT_BOLD;
            render_text_size(cr, f, buf, 0, &tw, NULL);
            if (tw > vw) vw = tw;
            for (char *word = buf; *word;) {   /* its words, one at a time */
                size_t n = strcspn(word, " ");
                char keep = word[n];
                word[n] = 0;
                render_text_size(cr, f, word, 0, &tw, NULL);
                if (tw + 2 * PADX + 1 > L->min_w[c]) L->min_w[c] = tw + 2 * PADX + 1;
                word += n + (keep != 0);
            }
        }
        L->textcol[c] = alltext;
        if (t->compact && alltext && vw > 90) vw = 90;   /* a grid's text wraps before its row labels do */
        if (t->units && t->units[c] && t->units[c][0]) {
            render_text_size(cr, RENDER_FONT_SMALL, t->units[c], 0, &tw, NULL);
            if (tw + 6 > vw) vw = tw + 6;
        }
        render_text_size(cr, RENDER_FONT_SMALL_BOLD, t->cols[c], 0, &tw, NULL);
        double hmin = t->compact ? 26 : 54;   /* the width a header may take before it wraps */
        double hw = tw < (vw > hmin ? vw : hmin) ? tw : (vw > hmin ? vw : hmin);
        if (alltext && tw > hw) hw = tw < 160 ? tw : 160;
        L->col_w[c] = (vw > hw ? vw : hw) + 2 * PADX + 1;   /* +1: pango must not wrap a text measured to fit */
        sum += L->col_w[c];
    }
    double labnat = 0;
    for (int r = 0; r < nr; r++) {
        render_text_size(cr, RENDER_FONT_BODY, t->rows[r], 0, &tw, NULL);
        if (tw > labnat) labnat = tw;
    }
    if (t->row_head) {
        render_text_size(cr, RENDER_FONT_SMALL_BOLD, t->row_head, 0, &tw, NULL);
        if (tw > labnat) labnat = tw;
    }
    *labnat_out = labnat + (2 * PADX + 1);   /* one rounding step, not two */
    return sum;
}

/* The last resort: every column narrows in proportion to fit avail (headers wrap), but none below its widest
 * word ("failed" must not break to "faile|d") while the others can give the width; when even the words do not
 * fit, all narrow alike. */
static void narrow_all(tlay *L, int nc, double avail, double sum) {
    double minsum = 0;
    for (int c = 0; c < nc; c++) {
        if (L->min_w[c] > L->col_w[c]) L->min_w[c] = L->col_w[c];   /* a grid's capped text column */
        minsum += L->min_w[c];
    }
    if (minsum >= avail) {
        for (int c = 0; c < nc; c++) L->col_w[c] *= avail / sum;
        return;
    }
    char *pinned = calloc((size_t)nc + 1, 1);
    if (!pinned) { for (int c = 0; c < nc; c++) L->col_w[c] *= avail / sum; return; }
    for (int changed = 1; changed;) {   /* pin the columns the scale would cut below their word, rescale the rest */
        changed = 0;
        double fixed = 0, free_w = 0;
        for (int c = 0; c < nc; c++) {
            if (pinned[c]) fixed += L->min_w[c];
            else free_w += L->col_w[c];
        }
        double k = free_w > 0 ? (avail - fixed) / free_w : 1;
        for (int c = 0; c < nc; c++)
            if (!pinned[c] && L->col_w[c] * k < L->min_w[c]) { pinned[c] = 1; changed = 1; }
        if (changed) continue;
        for (int c = 0; c < nc; c++) L->col_w[c] = pinned[c] ? L->min_w[c] : L->col_w[c] * k;
    }
    free(pinned);
}

/* Share the width w between the label column and the columns: spare width widens the number columns (up
 * to a cap) and then the labels; too little narrows the labels, then the text columns, then everything. */
static void fit_widths(const render_table *t, double w, double sum, double labnat, tlay *L) {
    int nc = t->ncols;
    if (labnat + sum <= w) {
        L->lab_w = labnat;
        double extra = w - labnat - sum;
        int grow = 0;
        for (int c = 0; c < nc; c++) grow += !L->textcol[c];
        for (int c = 0; c < nc && grow; c++) {
            if (L->textcol[c]) continue;
            double add = extra / grow;
            if (L->col_w[c] + add > MAX_NUM_COL) add = L->col_w[c] < MAX_NUM_COL ? MAX_NUM_COL - L->col_w[c] : 0;
            L->col_w[c] += add;
        }
        double used = labnat;
        for (int c = 0; c < nc; c++) used += L->col_w[c];
        if (used < w && labnat < 0.45 * w) L->lab_w += (w - used) < 0.45 * w - labnat ? (w - used) : 0.45 * w - labnat;
    } else {
        /* too wide: long row labels wrap to a quarter of the width, then the text columns wrap (down to
         * 70 pt), then the row labels narrow further */
        double labfull = labnat;   /* what is left after the columns narrowed goes back to the labels */
        if (labnat > 0.25 * w && labnat > 100) labnat = 0.25 * w > 100 ? 0.25 * w : 100;
        double excess = labnat + sum - w;
        while (excess > 0.01) {   /* narrow the widest text column, down to the next widest */
            int wi = -1;
            double second = 70;
            for (int c = 0; c < nc; c++) {
                if (!L->textcol[c] || L->col_w[c] <= 70) continue;
                if (wi < 0 || L->col_w[c] > L->col_w[wi]) { if (wi >= 0 && L->col_w[wi] > second) second = L->col_w[wi]; wi = c; }
                else if (L->col_w[c] > second) second = L->col_w[c];
            }
            if (wi < 0) break;
            double cut = L->col_w[wi] - second;
            if (cut > excess) cut = excess;
            if (cut < 0.01) {   /* several columns equally wide: narrow them together */
                int k = 0;
                double top = L->col_w[wi];
                for (int c = 0; c < nc; c++) k += L->textcol[c] && L->col_w[c] >= top - 0.01;
                double each = excess / k, floor_w = top - 70;
                if (each > floor_w) each = floor_w;
                for (int c = 0; c < nc; c++)
                    if (L->textcol[c] && L->col_w[c] >= top - 0.01) { L->col_w[c] -= each; sum -= each; excess -= each; }
                if (each <= 0.01) break;
                continue;
            }
            L->col_w[wi] -= cut;
            sum -= cut;
            excess -= cut;
        }
        L->lab_w = w - sum < labfull ? w - sum : labfull;
        if (L->lab_w < 70) {
            L->lab_w = 70;
            narrow_all(L, nc, w - 70, sum);
        }
    }
}

/* Heights of the group row, the header (a key-value table may have none) and each body row, at the
 * widths fit_widths chose; L->h is the table's total. */
static void heights(cairo_t *cr, const render_table *t, tlay *L) {
    int nc = t->ncols, nr = t->nrows;
    double th;
    L->head_h = 0;
    L->has_head = t->row_head && t->row_head[0];
    for (int c = 0; c < nc; c++) L->has_head |= t->cols[c] && t->cols[c][0];
    if (t->row_head) {
        render_text_size(cr, RENDER_FONT_SMALL_BOLD, t->row_head, L->lab_w - 2 * PADX, NULL, &th);
        L->head_h = th;
    }
    for (int c = 0; c < nc; c++) {
        render_text_size(cr, RENDER_FONT_SMALL_BOLD, t->cols[c], L->col_w[c] - 2 * PADX, NULL, &th);
        if (t->units && t->units[c] && t->units[c][0]) {
            double uh;
            render_text_size(cr, RENDER_FONT_SMALL, t->units[c], 0, NULL, &uh);
            th += uh;
        }
        if (th > L->head_h) L->head_h = th;
    }
    L->head_h = L->has_head ? L->head_h + 2 * PADY : 0;
    if (t->groups) {
        render_text_size(cr, RENDER_FONT_SMALL_BOLD, "Ag", 0, NULL, &th);
        L->group_h = th + 2 * PADY + 2;
    }
    L->h = L->group_h + L->head_h + 1.5;
    for (int r = 0; r < nr; r++) {
        render_text_size(cr, RENDER_FONT_BODY, t->rows[r], L->lab_w - 2 * PADX, NULL, &th);
        double ch;
        render_text_size(cr, RENDER_FONT_BOLD, "0", 0, NULL, &ch);
        if (ch > th) th = ch;
        for (int c = 0; c < nc; c++) {
            const char *cs = t->text ? t->text[r * nc + c] : NULL;
            if (!cs || !L->textcol[c]) continue;
            render_text_size(cr, RENDER_FONT_BODY, cs, L->col_w[c] - 2 * PADX, NULL, &ch);
            if (ch > th) th = ch;
        }
        L->row_h[r] = th + 2 * PADY;
        L->h += L->row_h[r];
    }
    L->h += 1.5;
}

static int layout(cairo_t *cr, const render_table *t, double w, tlay *L) {
    memset(L, 0, sizeof *L);
    int nc = t->ncols, nr = t->nrows;
    L->col_w = calloc((size_t)nc + 1, sizeof *L->col_w);
    L->min_w = calloc((size_t)nc + 1, sizeof *L->min_w);
    L->row_h = calloc((size_t)nr + 1, sizeof *L->row_h);
    L->textcol = calloc((size_t)nc + 1, sizeof *L->textcol);
    L->isbest = calloc((size_t)nr * nc + 1, 1);
    if (!L->col_w || !L->min_w || !L->row_h || !L->textcol || !L->isbest) { lay_free(L); return -1; }
    mark_best(t, L->isbest);
    double labnat;
    double sum = natural_widths(cr, t, L, &labnat);
    fit_widths(t, w, sum, labnat, L);
    heights(cr, t, L);
    return 0;
}

double render_table_height(cairo_t *cr, const render_table *t, double w) {
    tlay L;
    if (layout(cr, t, w, &L) < 0) return 0;
    double h = L.h;
    lay_free(&L);
    return h;
}

int render_table_rows(cairo_t *cr, const render_table *t, double w, double *head_h, double *row_h) {
    tlay L;
    if (layout(cr, t, w, &L) < 0) return -1;
    double body = 0;
    for (int r = 0; r < t->nrows; r++) { row_h[r] = L.row_h[r]; body += L.row_h[r]; }
    *head_h = L.h - body;
    lay_free(&L);
    return 0;
}

void render_table_draw(cairo_t *cr, const render_table *t, double x, double y, double w) {
    tlay L;
    if (layout(cr, t, w, &L) < 0) return;
    int nc = t->ncols;
    double tw = L.lab_w;
    for (int c = 0; c < nc; c++) tw += L.col_w[c];
    rc_line(cr, x, y, x + tw, y, 1.0, RC_RULE);
    double cy = y + 0.5;
    if (t->groups) {
        double cx = x + L.lab_w;
        for (int c = 0; c < nc;) {
            int e = c + 1;
            while (e < nc && t->groups[e] && t->groups[c] && strcmp(t->groups[e], t->groups[c]) == 0) e++;
            double gw = 0;
            for (int k = c; k < e; k++) gw += L.col_w[k];
            if (t->groups[c] && t->groups[c][0]) {
                render_text(cr, RENDER_FONT_SMALL_BOLD, t->groups[c], cx + gw / 2, cy + PADY, 0, RENDER_CENTER, RC_INK);
                rc_line(cr, cx + PADX, cy + L.group_h - 1, cx + gw - PADX, cy + L.group_h - 1, 0.5, RC_RULE);
            }
            cx += gw;
            c = e;
        }
        cy += L.group_h;
    }
    /* headers, bottom-aligned */
    double th, uh = 0;
    if (t->row_head) {
        render_text_size(cr, RENDER_FONT_SMALL_BOLD, t->row_head, L.lab_w - 2 * PADX, NULL, &th);
        render_text(cr, RENDER_FONT_SMALL_BOLD, t->row_head, x + PADX, cy + L.head_h - PADY - th, L.lab_w - 2 * PADX,
                    RENDER_LEFT, RC_INK);
    }
    double cx = x + L.lab_w;
    for (int c = 0; c < nc; c++) {
        double cw = L.col_w[c] - 2 * PADX;
        int has_unit = t->units && t->units[c] && t->units[c][0];
        uh = 0;
        if (has_unit) {
            render_text_size(cr, RENDER_FONT_SMALL, t->units[c], 0, NULL, &uh);
            render_text(cr, RENDER_FONT_SMALL, t->units[c], cx + PADX, cy + L.head_h - PADY - uh, cw,
                        L.textcol[c] ? RENDER_LEFT : RENDER_RIGHT, RC_GREY);
        }
        render_text_size(cr, RENDER_FONT_SMALL_BOLD, t->cols[c], cw, NULL, &th);
        render_text(cr, RENDER_FONT_SMALL_BOLD, t->cols[c], cx + PADX, cy + L.head_h - PADY - uh - th, cw,
                    L.textcol[c] ? RENDER_LEFT : RENDER_RIGHT, RC_INK);
        cx += L.col_w[c];
    }
    cy += L.head_h;
    if (L.has_head) rc_line(cr, x, cy + 0.3, x + tw, cy + 0.3, 0.6, RC_RULE);
    cy += 1.0;
    char buf[1024];
    for (int r = 0; r < t->nrows; r++) {
        double rh = L.row_h[r];
        if (r % 2 == 1) {
            rc_set(cr, RC_ZEBRA);
            cairo_rectangle(cr, x, cy, tw, rh);
            cairo_fill(cr);
        }
        render_text(cr, RENDER_FONT_BODY, t->rows[r], x + PADX, cy + PADY, L.lab_w - 2 * PADX, RENDER_LEFT, RC_INK);
        cx = x + L.lab_w;
        for (int c = 0; c < nc; c++) {
            int best = L.isbest[r * nc + c], miss = cell_missing(t, r, c);
            double hv = t->heat ? t->heat[r * nc + c] : NAN;
            if (!isnan(hv)) {
                rc_set(cr, heat_rgb(hv));
                cairo_rectangle(cr, cx + 1, cy + 0.5, L.col_w[c] - 2, rh - 1);
                cairo_fill(cr);
            } else if (best) {
                rc_set(cr, RC_BEST);
                cairo_rectangle(cr, cx + 1, cy + 0.5, L.col_w[c] - 2, rh - 1);
                cairo_fill(cr);
            }
            cell_str(t, r, c, buf, sizeof buf);
            render_font f = miss ? RENDER_FONT_ITALIC : best ? RENDER_FONT_BOLD : RENDER_FONT_BODY;
            double fh, bh;
            render_text_size(cr, f, buf, 0, NULL, &fh);
            render_text_size(cr, RENDER_FONT_BODY, "0", 0, NULL, &bh);
            double ty = cy + PADY + (bh - fh) / 2;
            if (L.textcol[c]) render_text(cr, f, buf, cx + PADX, ty, L.col_w[c] - 2 * PADX, RENDER_LEFT, miss ? RC_LIGHT : RC_INK);
            else render_text(cr, f, buf, cx + L.col_w[c] - PADX, ty, 0, RENDER_RIGHT, miss ? RC_LIGHT : RC_INK);
            cx += L.col_w[c];
        }
        cy += rh;
    }
    rc_line(cr, x, cy + 0.5, x + tw, cy + 0.5, 1.0, RC_RULE);
    lay_free(&L);
}
