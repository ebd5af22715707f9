/* chart_line — line charts (accuracy per epoch): legend above, y axis with round ticks and a rotated
 * label, integer x ticks for epochs, a marker shape per series as well as a colour, gaps where y is NAN. */
#include "render/render_int.h"

#include <math.h>
#include <string.h>

#define PLOT_H 150.0

typedef struct llay {
    double legend_h, left, plot_w, h, y0, ystep, x0, xstep, ymin, ymax, xmin, xmax;
    int ny, nx, ydec, xdec;
} llay;

static void layout(cairo_t *cr, const render_line *l, double w, llay *L) {
    memset(L, 0, sizeof *L);
    L->legend_h = l->nseries > 1 ? render_legend(cr, l->nseries, l->series, l->colors, 0, 0, w, 0) + 8 : 0;
    double ylo = INFINITY, yhi = -INFINITY, xlo = INFINITY, xhi = -INFINITY;
    for (int s = 0; s < l->nseries; s++)
        for (int i = 0; i < l->npts[s]; i++) {
            if (!isnan(l->x[s][i])) { if (l->x[s][i] < xlo) xlo = l->x[s][i]; if (l->x[s][i] > xhi) xhi = l->x[s][i]; }
            if (isnan(l->y[s][i])) continue;
            if (l->y[s][i] < ylo) ylo = l->y[s][i];
            if (l->y[s][i] > yhi) yhi = l->y[s][i];
        }
    if (!isfinite(ylo)) { ylo = 0; yhi = 1; }
    if (!isfinite(xlo)) { xlo = 0; xhi = 1; }
    if (l->ymin != l->ymax) { ylo = l->ymin; yhi = l->ymax; }
    else {
        if (ylo > 0) ylo = 0;   /* zero-based: a small change must not fill the chart */
        if (yhi - ylo < 1e-9) { ylo -= 0.5; yhi += 0.5; }
    }
    L->ny = render_nice_ticks(ylo, yhi, 5, &L->y0, &L->ystep);
    L->ymin = L->y0;
    L->ymax = L->y0 + L->ystep * (L->ny - 1);
    L->ydec = render_decimals_for_step(L->ystep);
    if (xhi <= xlo) xhi = xlo + 1;
    if (l->x_integer) {
        L->xstep = ceil((xhi - xlo) / 10.0);
        if (L->xstep < 1) L->xstep = 1;
        L->x0 = xlo;
        L->nx = (int)floor((xhi - xlo) / L->xstep + 1e-9) + 1;
        L->xmin = xlo;
        L->xmax = xhi;
        L->xdec = 0;
    } else {
        L->nx = render_nice_ticks(xlo, xhi, 6, &L->x0, &L->xstep);
        L->xmin = L->x0;
        L->xmax = L->x0 + L->xstep * (L->nx - 1);
        L->xdec = render_decimals_for_step(L->xstep);
    }
    char buf[64];
    double tw, maxw = 0, th = 0;
    for (int i = 0; i < L->ny; i++) {
        render_fmt_num(buf, sizeof buf, L->y0 + i * L->ystep, L->ydec);
        render_text_size(cr, RENDER_FONT_SMALL, buf, 0, &tw, NULL);
        if (tw > maxw) maxw = tw;
    }
    if (l->ylabel && l->ylabel[0]) render_text_size(cr, RENDER_FONT_SMALL, l->ylabel, 0, NULL, &th);
    L->left = maxw + 6 + (th > 0 ? th + 6 : 0);
    L->plot_w = w - L->left - 10;
    L->h = L->legend_h + PLOT_H + 18 + (l->xlabel && l->xlabel[0] ? 12 : 0) + 4;
}

double render_line_height(cairo_t *cr, const render_line *l, double w) {
    llay L;
    layout(cr, l, w, &L);
    return L.h;
}

static void marker(cairo_t *cr, int shape, double x, double y) {
    const double r = 2.4;
    switch (shape % 4) {
    case 0: cairo_arc(cr, x, y, r, 0, 2 * M_PI); break;
    case 1: cairo_rectangle(cr, x - r * 0.9, y - r * 0.9, 1.8 * r, 1.8 * r); break;
    case 2: cairo_move_to(cr, x, y - r * 1.2); cairo_line_to(cr, x + r * 1.1, y + r * 0.8);
            cairo_line_to(cr, x - r * 1.1, y + r * 0.8); cairo_close_path(cr); break;
    default: cairo_move_to(cr, x, y - r * 1.3); cairo_line_to(cr, x + r * 1.1, y); cairo_line_to(cr, x, y + r * 1.3);
             cairo_line_to(cr, x - r * 1.1, y); cairo_close_path(cr); break;
    }
    cairo_fill(cr);
}

void render_line_draw(cairo_t *cr, const render_line *l, double x, double y, double w) {
    llay L;
    layout(cr, l, w, &L);
    if (l->nseries > 1) render_legend(cr, l->nseries, l->series, l->colors, x + L.left, y, w - L.left, 1);
    double px = x + L.left, py = y + L.legend_h + 4, ph = PLOT_H;
    char buf[64];
#define MAPX(v) (px + L.plot_w * ((v) - L.xmin) / (L.xmax - L.xmin))
#define MAPY(v) (py + ph - ph * ((v) - L.ymin) / (L.ymax - L.ymin))
    for (int i = 0; i < L.ny; i++) {
        double tv = L.y0 + i * L.ystep, ty = MAPY(tv), th;
        rc_line(cr, px, ty, px + L.plot_w, ty, 0.5, i == 0 ? RC_RULE : RC_GRID);
        render_fmt_num(buf, sizeof buf, tv, L.ydec);
        render_text_size(cr, RENDER_FONT_SMALL, buf, 0, NULL, &th);
        render_text(cr, RENDER_FONT_SMALL, buf, px - 4, ty - th / 2, 0, RENDER_RIGHT, RC_GREY);
    }
    for (int i = 0; i < L.nx; i++) {
        double tv = L.x0 + i * L.xstep, tx = MAPX(tv);
        rc_line(cr, tx, py + ph, tx, py + ph + 3, 0.6, RC_RULE);
        render_fmt_num(buf, sizeof buf, tv, L.xdec);
        render_text(cr, RENDER_FONT_SMALL, buf, tx, py + ph + 4, 0, RENDER_CENTER, RC_GREY);
    }
    rc_line(cr, px, py, px, py + ph, 0.6, RC_RULE);
    if (l->xlabel && l->xlabel[0])
        render_text(cr, RENDER_FONT_SMALL, l->xlabel, px + L.plot_w / 2, py + ph + 15, 0, RENDER_CENTER, RC_INK);
    if (l->ylabel && l->ylabel[0]) {
        double tw, th;
        render_text_size(cr, RENDER_FONT_SMALL, l->ylabel, 0, &tw, &th);
        cairo_save(cr);
        cairo_translate(cr, x, py + ph / 2 + tw / 2);
        cairo_rotate(cr, -M_PI / 2);
        render_text(cr, RENDER_FONT_SMALL, l->ylabel, 0, 0, 0, RENDER_LEFT, RC_INK);
        cairo_restore(cr);
    }
    cairo_save(cr);
    cairo_rectangle(cr, px - 4, py - 4, L.plot_w + 8, ph + 8);
    cairo_clip(cr);
    for (int s = 0; s < l->nseries; s++) {
        render_rgb c = render_palette(l->colors ? l->colors[s] : s);
        int pen = 0;
        for (int i = 0; i < l->npts[s]; i++) {
            if (isnan(l->y[s][i]) || isnan(l->x[s][i])) { pen = 0; continue; }
            if (!pen) cairo_move_to(cr, MAPX(l->x[s][i]), MAPY(l->y[s][i]));
            else cairo_line_to(cr, MAPX(l->x[s][i]), MAPY(l->y[s][i]));
            pen = 1;
        }
        cairo_set_line_width(cr, 1.5);
        cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
        rc_set(cr, c);
        cairo_stroke(cr);
        for (int i = 0; i < l->npts[s]; i++) {
            if (isnan(l->y[s][i]) || isnan(l->x[s][i])) continue;
            rc_set(cr, c);
            marker(cr, s, MAPX(l->x[s][i]), MAPY(l->y[s][i]));
        }
    }
    cairo_restore(cr);
#undef MAPX
#undef MAPY
}
