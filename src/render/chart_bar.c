/* chart_bar — horizontal grouped bar charts: group labels measured and wrapped on the left, a legend
 * above, a zero-based value axis with round ticks below, value labels at the bar ends, min-max whiskers.
 * A missing value gets no bar: a dashed box reading "missing" sits at the axis instead. */
#include "render/render_int.h"

#include <math.h>
#include <string.h>

#define BAR_H1 13.0     /* bar height with one series */
#define BAR_HN 10.5     /* with several */
#define GROUP_GAP 7.0
#define AXIS_H 30.0     /* tick labels + axis label */

typedef struct blay {
    double legend_h, lab_w, plot_x, plot_w, val_w, bar_h, plot_h, h;
    double t0, step;
    int nticks, tick_dec;
} blay;

static double group_height(const render_bar *b, double bar_h) { return b->nseries * bar_h + GROUP_GAP; }

static void layout(cairo_t *cr, const render_bar *b, double w, blay *L) {
    memset(L, 0, sizeof *L);
    L->legend_h = b->nseries > 1 ? render_legend(cr, b->nseries, b->series, b->colors, 0, 0, w, 0) + 8 : 0;
    double tw, th, maxlab = 0;
    for (int g = 0; g < b->ngroups; g++) {
        render_text_size(cr, RENDER_FONT_SMALL, b->groups[g], 0, &tw, NULL);
        if (tw > maxlab) maxlab = tw;
    }
    L->lab_w = (maxlab < 0.3 * w ? maxlab : 0.3 * w) + 8;
    double vmax = 0;
    char buf[64];
    L->val_w = 0;
    for (int i = 0; i < b->ngroups * b->nseries; i++) {
        double v = b->v[i];
        if (!isnan(v) && v > vmax) vmax = v;
        if (b->hi && !isnan(b->hi[i]) && b->hi[i] > vmax) vmax = b->hi[i];
        render_fmt_num(buf, sizeof buf, v, b->dec);
        render_text_size(cr, isnan(v) ? RENDER_FONT_ITALIC : RENDER_FONT_SMALL, buf, 0, &tw, NULL);
        if (tw > L->val_w) L->val_w = tw;
    }
    if (b->xmax > 0) vmax = b->xmax;
    if (vmax <= 0) vmax = 1;
    L->nticks = render_nice_ticks(0, vmax, 5, &L->t0, &L->step);
    L->tick_dec = render_decimals_for_step(L->step);
    L->plot_x = L->lab_w + 6;
    L->plot_w = w - L->plot_x - L->val_w - 8;
    if (L->plot_w < 60) L->plot_w = 60;
    L->bar_h = b->nseries > 1 ? BAR_HN : BAR_H1;
    if (b->nseries > 1 && b->ngroups * b->nseries > 0) {   /* many bars: thinner, within limits */
        double fit = 400.0 / (b->ngroups * b->nseries);
        if (fit < L->bar_h) L->bar_h = fit < 7.5 ? 7.5 : fit;
    }
    L->plot_h = 0;
    for (int g = 0; g < b->ngroups; g++) {
        double gh = group_height(b, L->bar_h);
        render_text_size(cr, RENDER_FONT_SMALL, b->groups[g], L->lab_w - 8, NULL, &th);
        if (th + GROUP_GAP > gh) gh = th + GROUP_GAP;
        L->plot_h += gh;
    }
    L->plot_h += GROUP_GAP / 2;
    L->h = L->legend_h + L->plot_h + AXIS_H - (b->xlabel && b->xlabel[0] ? 0 : 11);
}

double render_bar_height(cairo_t *cr, const render_bar *b, double w) {
    blay L;
    layout(cr, b, w, &L);
    return L.h;
}

void render_bar_draw(cairo_t *cr, const render_bar *b, double x, double y, double w) {
    blay L;
    layout(cr, b, w, &L);
    if (b->nseries > 1) render_legend(cr, b->nseries, b->series, b->colors, x + L.plot_x, y, w - L.plot_x, 1);
    double py = y + L.legend_h, px = x + L.plot_x;
    double vmax = L.t0 + L.step * (L.nticks - 1);
    char buf[64];
    /* grid and ticks */
    for (int i = 0; i < L.nticks; i++) {
        double tv = L.t0 + i * L.step, tx = px + L.plot_w * tv / vmax;
        rc_line(cr, tx, py, tx, py + L.plot_h, 0.5, i == 0 ? RC_RULE : RC_GRID);
        rc_line(cr, tx, py + L.plot_h, tx, py + L.plot_h + 3, 0.6, RC_RULE);
        render_fmt_num(buf, sizeof buf, tv, L.tick_dec);
        render_text(cr, RENDER_FONT_SMALL, buf, tx, py + L.plot_h + 4, 0, RENDER_CENTER, RC_GREY);
    }
    rc_line(cr, px, py + L.plot_h, px + L.plot_w, py + L.plot_h, 0.6, RC_RULE);
    if (b->xlabel && b->xlabel[0])
        render_text(cr, RENDER_FONT_SMALL, b->xlabel, px + L.plot_w / 2, py + L.plot_h + 16, 0, RENDER_CENTER, RC_INK);
    double gy = py + GROUP_GAP / 2;
    for (int g = 0; g < b->ngroups; g++) {
        double gh = group_height(b, L.bar_h), th;
        render_text_size(cr, RENDER_FONT_SMALL, b->groups[g], L.lab_w - 8, NULL, &th);
        if (th + GROUP_GAP > gh) gh = th + GROUP_GAP;
        double bars_h = b->nseries * L.bar_h;
        double by = gy + (gh - GROUP_GAP - bars_h) / 2;
        render_text(cr, RENDER_FONT_SMALL, b->groups[g], x + L.lab_w - 4 - (L.lab_w - 8), gy + (gh - GROUP_GAP - th) / 2,
                    L.lab_w - 8, RENDER_RIGHT, RC_INK);
        for (int s = 0; s < b->nseries; s++) {
            int i = g * b->nseries + s;
            double v = b->v[i], yy = by + s * L.bar_h;
            if (isnan(v)) {
                double mw, mh;
                render_text_size(cr, RENDER_FONT_ITALIC, "missing", 0, &mw, &mh);
                cairo_save(cr);
                double dash[] = {2.0, 1.5};
                cairo_set_dash(cr, dash, 2, 0);
                cairo_set_line_width(cr, 0.6);
                rc_set(cr, RC_LIGHT);
                cairo_rectangle(cr, px + 1.5, yy + 0.75, mw + 6, L.bar_h - 1.5);
                cairo_stroke(cr);
                cairo_restore(cr);
                render_text(cr, RENDER_FONT_ITALIC, "missing", px + 4.5, yy + (L.bar_h - mh) / 2, 0, RENDER_LEFT, RC_LIGHT);
                continue;
            }
            double bw = L.plot_w * (v > 0 ? v : 0) / vmax;
            render_rgb c = render_palette(b->colors ? b->colors[s] : (b->nseries > 1 ? s : 0));
            rc_set(cr, c);
            cairo_rectangle(cr, px, yy + 0.75, bw, L.bar_h - 1.5);
            cairo_fill(cr);
            double end = px + bw;
            if (b->lo && b->hi && !isnan(b->lo[i]) && !isnan(b->hi[i])) {
                double x0 = px + L.plot_w * b->lo[i] / vmax, x1 = px + L.plot_w * b->hi[i] / vmax, cyy = yy + L.bar_h / 2;
                rc_line(cr, x0, cyy, x1, cyy, 0.7, RC_INK);
                rc_line(cr, x0, cyy - 2.5, x0, cyy + 2.5, 0.7, RC_INK);
                rc_line(cr, x1, cyy - 2.5, x1, cyy + 2.5, 0.7, RC_INK);
                if (x1 > end) end = x1;
            }
            render_fmt_num(buf, sizeof buf, v, b->dec);
            double mh;
            render_text_size(cr, RENDER_FONT_SMALL, buf, 0, NULL, &mh);
            render_text(cr, RENDER_FONT_SMALL, buf, end + 3, yy + (L.bar_h - mh) / 2, 0, RENDER_LEFT, RC_INK);
        }
        gy += gh;
    }
}
