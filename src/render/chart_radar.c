/* chart_radar — radar (spider) plots as small multiples, one panel per series on the same 0..max scale,
 * or all series overlaid in one panel. Axis labels are measured and placed outside the web, aligned away
 * from the centre; a missing axis value has no vertex and its label says "missing". */
#include "render/render_int.h"

#include <math.h>
#include <string.h>

#define LABEL_W 62.0    /* axis labels wrap at this width */
#define SUB_GAP 4.0

static double axis_angle(int a, int n) {
    return -M_PI / 2 + 2 * M_PI * a / n + (n % 2 == 0 ? M_PI / n : 0);
}

typedef struct rlay { int per_row, rows; double panel_w, radius, above, below, top_h, panel_h, legend_h, h; } rlay;

/* Where axis a's label goes for a web of radius rad centred at (cx, cy): beside the vertex on the
 * left and right, centred above or below it near the top and bottom. Box height bh includes room for
 * the "missing" line. */
static void label_box(cairo_t *cr, const render_radar *r, int a, double rad, double cx, double cy, double *x0,
                      double *y0, double *tw, double *th, double *bh, int *align) {
    double ang = axis_angle(a, r->naxes), ca = cos(ang), sa = sin(ang), mh;
    render_text_size(cr, RENDER_FONT_SMALL, r->axes[a], LABEL_W, tw, th);
    render_text_size(cr, RENDER_FONT_ITALIC, "missing", 0, NULL, &mh);
    *bh = *th + mh;
    double lx = cx + (rad + 5) * ca, ly = cy + (rad + 5) * sa;
    if (fabs(ca) <= 0.25) {
        *align = RENDER_CENTER;
        *x0 = lx - *tw / 2;
        *y0 = sa > 0 ? ly : ly - *th;
    } else if (fabs(sa) >= 0.3) {   /* above or below the vertex, leaning outwards */
        *align = ca > 0 ? RENDER_LEFT : RENDER_RIGHT;
        *x0 = ca > 0 ? lx - 0.3 * *tw : lx - 0.7 * *tw;
        *y0 = sa > 0 ? ly : ly - *th;
    } else {
        *align = ca > 0 ? RENDER_LEFT : RENDER_RIGHT;
        *x0 = ca > 0 ? lx : lx - *tw;
        *y0 = ly - *th / 2;
    }
}

/* The largest radius at which every axis label fits in a panel of width pw. */
static double fit_radius(cairo_t *cr, const render_radar *r, double pw) {
    double best = 22;
    for (double rad = 50; rad >= 22; rad -= 2) {
        int ok = 1;
        for (int a = 0; a < r->naxes && ok; a++) {
            double x0, y0, tw, th, bh;
            int al;
            label_box(cr, r, a, rad, pw / 2, 0, &x0, &y0, &tw, &th, &bh, &al);
            if (x0 < 2 || x0 + tw > pw - 2) ok = 0;
        }
        if (ok) { best = rad; break; }
    }
    return best;
}

static void layout(cairo_t *cr, const render_radar *r, double w, rlay *L) {
    memset(L, 0, sizeof *L);
    int panels = r->overlay ? 1 : r->nseries;
    if (panels < 1) panels = 1;
    if (r->per_row > 0) {
        L->per_row = r->per_row;
        L->radius = fit_radius(cr, r, w / L->per_row);
    } else {   /* as many panels per row as keep the web readable */
        int start = panels < 5 ? panels : 5;
        for (L->per_row = start; L->per_row >= 1; L->per_row--) {
            L->radius = fit_radius(cr, r, w / L->per_row);
            if (L->radius >= 32 || L->per_row == 1) break;
        }
        /* balance the rows: 11 panels in 4+4+3 rather than 5+5+1 */
        int rows = (panels + L->per_row - 1) / L->per_row;
        while (L->per_row > 1 && (panels + L->per_row - 2) / (L->per_row - 1) == rows) L->per_row--;
        L->radius = fit_radius(cr, r, w / L->per_row);
    }
    if (L->per_row < 1) L->per_row = 1;
    L->rows = (panels + L->per_row - 1) / L->per_row;
    L->panel_w = w / L->per_row;
    if (L->radius < 22) L->radius = 22;
    double th;
    L->above = L->below = 0;
    for (int a = 0; a < r->naxes; a++) {
        double x0, y0, tw, bh;
        int al;
        label_box(cr, r, a, L->radius, 0, 0, &x0, &y0, &tw, &th, &bh, &al);
        if (-y0 > L->above) L->above = -y0;
        if (y0 + bh > L->below) L->below = y0 + bh;
    }
    if (L->above < L->radius) L->above = L->radius;
    if (L->below < L->radius) L->below = L->radius;
    render_text_size(cr, RENDER_FONT_SMALL_BOLD, "Ag", 0, NULL, &th);
    L->top_h = r->overlay ? 0 : th + (r->subtitles ? th : 0) + SUB_GAP;
    L->panel_h = L->top_h + L->above + L->below + 8;
    L->legend_h = r->overlay && r->nseries > 1 ? render_legend(cr, r->nseries, r->series, r->colors, 0, 0, w, 0) + 6 : 0;
    L->h = L->legend_h + L->rows * L->panel_h;
}

double render_radar_height(cairo_t *cr, const render_radar *r, double w) {
    rlay L;
    layout(cr, r, w, &L);
    return L.h;
}

static void vertex(double cx, double cy, double rad, int a, int n, double *x, double *y) {
    double ang = axis_angle(a, n);
    *x = cx + rad * cos(ang);
    *y = cy + rad * sin(ang);
}

static void draw_web(cairo_t *cr, const render_radar *r, double cx, double cy, double rad) {
    int n = r->naxes;
    for (int k = 1; k <= 4; k++) {
        double rr = rad * k / 4.0, vx, vy;
        for (int a = 0; a <= n; a++) {
            vertex(cx, cy, rr, a % n, n, &vx, &vy);
            if (a == 0) cairo_move_to(cr, vx, vy); else cairo_line_to(cr, vx, vy);
        }
        cairo_set_line_width(cr, k == 4 ? 0.7 : 0.5);
        rc_set(cr, k == 4 ? RC_LIGHT : RC_GRID);
        cairo_stroke(cr);
    }
    for (int a = 0; a < n; a++) {
        double vx, vy;
        vertex(cx, cy, rad, a, n, &vx, &vy);
        rc_line(cr, cx, cy, vx, vy, 0.5, RC_GRID);
    }
    /* scale labels along the first axis */
    char buf[32];
    for (int k = 2; k <= 4; k += 2) {
        render_fmt_num(buf, sizeof buf, r->max * k / 4.0, 0);
        double vx, vy;
        vertex(cx, cy, rad * k / 4.0, 0, r->naxes, &vx, &vy);
        render_text(cr, RENDER_FONT_SMALL, buf, vx + 2, vy - 4, 0, RENDER_LEFT, RC_LIGHT);
    }
}

static void draw_labels(cairo_t *cr, const render_radar *r, const double *vals, double cx, double cy, double rad) {
    for (int a = 0; a < r->naxes; a++) {
        double x0, y0, tw, th, bh, mw;
        int al, miss = vals && isnan(vals[a]);
        label_box(cr, r, a, rad, cx, cy, &x0, &y0, &tw, &th, &bh, &al);
        render_text(cr, RENDER_FONT_SMALL, r->axes[a], x0, y0, tw + 0.5, al, miss ? RC_LIGHT : RC_INK);
        if (miss) {
            render_text_size(cr, RENDER_FONT_ITALIC, "missing", 0, &mw, NULL);
            double mx = al == RENDER_LEFT ? x0 : al == RENDER_RIGHT ? x0 + tw - mw : x0 + (tw - mw) / 2;
            render_text(cr, RENDER_FONT_ITALIC, "missing", mx, y0 + th, 0, RENDER_LEFT, RC_LIGHT);
        }
    }
}

static void draw_series(cairo_t *cr, const render_radar *r, const double *vals, render_rgb c, double cx, double cy,
                        double rad) {
    int n = r->naxes, first = 1, present = 0;
    for (int a = 0; a < n; a++) {
        if (isnan(vals[a])) continue;
        double v = vals[a] < 0 ? 0 : vals[a] > r->max ? r->max : vals[a], vx, vy;
        vertex(cx, cy, rad * v / r->max, a, n, &vx, &vy);
        if (first) cairo_move_to(cr, vx, vy); else cairo_line_to(cr, vx, vy);
        first = 0;
        present++;
    }
    if (present >= 2) {
        cairo_close_path(cr);
        cairo_set_source_rgba(cr, c.r, c.g, c.b, 0.22);
        cairo_fill_preserve(cr);
        cairo_set_line_width(cr, 1.4);
        rc_set(cr, c);
        cairo_stroke(cr);
    } else {
        cairo_new_path(cr);
    }
    for (int a = 0; a < n; a++) {
        if (isnan(vals[a])) continue;
        double v = vals[a] < 0 ? 0 : vals[a] > r->max ? r->max : vals[a], vx, vy;
        vertex(cx, cy, rad * v / r->max, a, n, &vx, &vy);
        rc_set(cr, c);
        cairo_arc(cr, vx, vy, 2.0, 0, 2 * M_PI);
        cairo_fill(cr);
    }
}

/* The range of a series: the ring between its hi and lo polygons (even-odd fill), with a dashed outer edge,
 * so a value known only as "between 0 and 100" shows as the whole axis. */
static void draw_band(cairo_t *cr, const render_radar *r, const double *lo, const double *hi, render_rgb c, double cx,
                      double cy, double rad) {
    int n = r->naxes;
    for (int a = 0; a < n; a++)
        if (isnan(lo[a]) || isnan(hi[a])) return;
    const double *edge[2] = {hi, lo};
    for (int e = 0; e < 2; e++) {
        for (int a = 0; a < n; a++) {
            double v = edge[e][a] < 0 ? 0 : edge[e][a] > r->max ? r->max : edge[e][a], vx, vy;
            vertex(cx, cy, rad * v / r->max, a, n, &vx, &vy);
            if (a == 0) cairo_move_to(cr, vx, vy); else cairo_line_to(cr, vx, vy);
        }
        cairo_close_path(cr);
    }
    cairo_set_fill_rule(cr, CAIRO_FILL_RULE_EVEN_ODD);
    cairo_set_source_rgba(cr, c.r, c.g, c.b, 0.12);
    cairo_fill(cr);
    cairo_set_fill_rule(cr, CAIRO_FILL_RULE_WINDING);
    for (int a = 0; a < n; a++) {
        double v = hi[a] > r->max ? r->max : hi[a] < 0 ? 0 : hi[a], vx, vy;
        vertex(cx, cy, rad * v / r->max, a, n, &vx, &vy);
        if (a == 0) cairo_move_to(cr, vx, vy); else cairo_line_to(cr, vx, vy);
    }
    cairo_close_path(cr);
    double dash[2] = {2.0, 2.0};
    cairo_set_dash(cr, dash, 2, 0);
    cairo_set_line_width(cr, 0.6);
    rc_set(cr, c);
    cairo_stroke(cr);
    cairo_set_dash(cr, NULL, 0, 0);
}

void render_radar_draw(cairo_t *cr, const render_radar *r, double x, double y, double w) {
    rlay L;
    layout(cr, r, w, &L);
    if (r->naxes < 3 || r->max <= 0) return;
    if (r->overlay) {
        if (L.legend_h > 0) render_legend(cr, r->nseries, r->series, r->colors, x, y, w, 1);
        double cx = x + w / 2, cy = y + L.legend_h + L.above + 3;
        draw_web(cr, r, cx, cy, L.radius);
        for (int s = 0; s < r->nseries; s++)
            draw_series(cr, r, r->v + (size_t)s * r->naxes, render_palette(r->colors ? r->colors[s] : s), cx, cy, L.radius);
        draw_labels(cr, r, NULL, cx, cy, L.radius);
        return;
    }
    for (int s = 0; s < r->nseries; s++) {
        int col = s % L.per_row, row = s / L.per_row;
        double px = x + col * L.panel_w, py = y + row * L.panel_h, cx = px + L.panel_w / 2, th;
        render_text_size(cr, RENDER_FONT_SMALL_BOLD, r->series[s], 0, NULL, &th);
        render_text(cr, RENDER_FONT_SMALL_BOLD, r->series[s], cx, py, 0, RENDER_CENTER, RC_INK);
        if (r->subtitles && r->subtitles[s])
            render_text(cr, RENDER_FONT_SMALL, r->subtitles[s], cx, py + th, 0, RENDER_CENTER, RC_GREY);
        double cy = py + L.top_h + L.above + 3;
        const double *vals = r->v + (size_t)s * r->naxes;
        draw_web(cr, r, cx, cy, L.radius);
        if (r->lo && r->hi)
            draw_band(cr, r, r->lo + (size_t)s * r->naxes, r->hi + (size_t)s * r->naxes,
                      render_palette(r->colors ? r->colors[s] : s), cx, cy, L.radius);
        draw_series(cr, r, vals, render_palette(r->colors ? r->colors[s] : s), cx, cy, L.radius);
        draw_labels(cr, r, vals, cx, cy, L.radius);
    }
}
