/* render — the report's drawing layer over cairo + pango: tables, grouped horizontal bar charts, radar
 * small multiples and line charts, each drawn into a box on any cairo context (a PDF page or its own SVG).
 * Promises: missing values (NAN / NULL) are drawn as "missing", never as zero; the same figure measures
 * and draws identically on every surface; PDF and SVG files are byte-identical for identical inputs. */
#ifndef SD_RENDER_H
#define SD_RENDER_H

#include <cairo.h>
#include <stddef.h>

/* ---- arena: every string and array of a report model lives in one, freed at once ------------------ */
typedef struct render_arena render_arena;
int render_arena_new(render_arena **out);
void render_arena_free(render_arena *a);
void *render_alloc(render_arena *a, size_t n);                 /* zeroed; NULL only on out of memory */
char *render_strdup(render_arena *a, const char *s);           /* NULL -> NULL */
char *render_printf(render_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- look -------------------------------------------------------------------------------------- */
typedef struct render_rgb { double r, g, b; } render_rgb;
#define RENDER_PALETTE_N 8
/* Okabe-Ito, colour-blind safe, in the order series take them. */
render_rgb render_palette(int i);

typedef enum render_font {
    RENDER_FONT_BODY,      /* DejaVu Sans 9 */
    RENDER_FONT_BOLD,      /* DejaVu Sans Bold 9 */
    RENDER_FONT_SMALL,     /* DejaVu Sans 7.5 */
    RENDER_FONT_SMALL_BOLD,
    RENDER_FONT_ITALIC,    /* DejaVu Sans Oblique 7.5, grey notes and "missing" */
    RENDER_FONT_TITLE,     /* DejaVu Sans Bold 10.5, figure titles */
    RENDER_FONT_H2,        /* DejaVu Sans Bold 13, section titles */
    RENDER_FONT_H1,        /* DejaVu Sans Bold 24, the cover */
    RENDER_FONT_MONO,      /* DejaVu Sans Mono 7.5 */
    RENDER_FONT_N
} render_font;

enum { RENDER_LEFT = 0, RENDER_CENTER = 1, RENDER_RIGHT = 2 };

/* Size of s in font, wrapped at wrap_w points (<= 0: no wrapping). */
void render_text_size(cairo_t *cr, render_font f, const char *s, double wrap_w, double *w, double *h);
/* Draw s with its top at y; x is the left edge, centre or right edge by align. Returns the height. */
double render_text(cairo_t *cr, render_font f, const char *s, double x, double y, double wrap_w, int align,
                   render_rgb c);
/* Format v with dec decimals and thousands separators ("3,441,592", "12.35"); NAN -> "missing". */
void render_fmt_num(char *buf, size_t n, double v, int dec);
/* "Nice" axis: ticks from 0 (or lo) to a round maximum >= hi; returns the tick count (<= 12). */
int render_nice_ticks(double lo, double hi, int target, double *t0, double *step);
/* Decimals enough to tell the values apart at a step (0..3). */
int render_decimals_for_step(double step);

/* ---- figures ----------------------------------------------------------------------------------- */
/* A table. Numeric cells are v[r*ncols+c] (NAN = missing, drawn "missing"); a non-NULL text[r*ncols+c]
 * replaces the number. best[c]: +1 the highest is best, -1 the lowest, 0 no marking; the best cell of a
 * column is bold on a tinted background (ties all marked). */
typedef struct render_table {
    int nrows, ncols;
    const char *row_head;        /* header of the row-label column */
    const char **rows;           /* nrows row labels */
    const char **cols;           /* ncols column headers; "\n" allowed */
    const char **units;          /* ncols units shown under the header, or NULL */
    double *v;
    const char **text;           /* NULL or nrows*ncols */
    signed char *best;           /* NULL or ncols */
    int *dec;                    /* NULL (2 decimals) or ncols */
    const char **groups;         /* NULL, or ncols group headers spanning equal neighbours ("measured") */
    const struct render_table *whole;   /* a part of a longer table (continued on the next page): best values are the whole's */
    const double *heat;          /* NULL or nrows*ncols: each cell shaded by a ratio on a log scale (<= 1 green,
                                    then pale yellow at 1 to red at 100 and beyond); NAN: unshaded */
    int compact;                 /* numeric headers wrap down to their values' width (a grid of many columns) */
} render_table;

/* Horizontal grouped bars: one group per row label, one bar per series. NAN = missing: drawn as a
 * dashed outline labelled "missing" and listed in the figure's note. lo/hi (optional) draw a min-max
 * whisker. */
typedef struct render_bar {
    int ngroups, nseries;
    const char **groups;
    const char **series;         /* legend; nseries == 1 draws no legend */
    int *colors;                 /* NULL or nseries palette indices */
    double *v, *lo, *hi;         /* ngroups*nseries */
    const char *xlabel;          /* axis label, with unit */
    double xmax;                 /* 0: automatic */
    int dec;                     /* decimals of value labels */
} render_bar;

/* Radar small multiples: one panel per series over naxes axes scaled 0..max (NAN = missing axis: no
 * vertex, the axis label says "missing"). overlay = 1 draws every series in one panel instead. */
typedef struct render_radar {
    int naxes, nseries;
    const char **axes;
    const char **series;
    const char **subtitles;      /* NULL or per series, e.g. "overall 87.1" */
    int *colors;
    double *v;                   /* nseries*naxes */
    double max;
    int overlay;
    int per_row;                 /* panels per row, 0 = automatic */
    double *lo, *hi;             /* NULL or nseries*naxes: a band from lo to hi drawn under each series (last:
                                    positional initialisers of the fields above stay valid) */
} render_radar;

/* Line chart: series of points (NAN y = gap). */
typedef struct render_line {
    int nseries;
    const char **series;
    int *colors;
    int *npts;
    double **x, **y;
    const char *xlabel, *ylabel;
    double ymin, ymax;           /* ymin == ymax: automatic */
    int x_integer;               /* ticks at integers (epochs) */
} render_line;

typedef enum render_fig_kind { RENDER_FIG_TABLE, RENDER_FIG_BAR, RENDER_FIG_RADAR, RENDER_FIG_LINE } render_fig_kind;

typedef struct render_fig {
    render_fig_kind kind;
    const char *id;              /* file stem: figures/<id>.svg, tables/<id>.csv */
    const char *title;           /* drawn above the figure */
    const char *note;            /* drawn below (plus automatic notes on missing values) */
    union {
        render_table *table;
        render_bar *bar;
        render_radar *radar;
        render_line *line;
    } u;
} render_fig;

/* Height the figure needs at width w (title, body, legend, notes). */
double render_fig_height(cairo_t *cr, const render_fig *f, double w);
/* Draw it with its top-left at (x, y) in width w; returns the height used. */
double render_fig_draw(cairo_t *cr, const render_fig *f, double x, double y, double w);
/* Number of missing values in the figure (0 for none), and the automatic note naming them, written to
 * buf (empty when none). */
int render_fig_missing_note(const render_fig *f, char *buf, size_t n);

/* Per-kind bodies (used by render_fig_*; drawn below the title). */
double render_table_height(cairo_t *cr, const render_table *t, double w);
/* The header's height (rules included) and each row's height (nrows) at width w; -1 when out of memory. */
int render_table_rows(cairo_t *cr, const render_table *t, double w, double *head_h, double *row_h);
void render_table_draw(cairo_t *cr, const render_table *t, double x, double y, double w);
double render_bar_height(cairo_t *cr, const render_bar *b, double w);
void render_bar_draw(cairo_t *cr, const render_bar *b, double x, double y, double w);
double render_radar_height(cairo_t *cr, const render_radar *r, double w);
void render_radar_draw(cairo_t *cr, const render_radar *r, double x, double y, double w);
double render_line_height(cairo_t *cr, const render_line *l, double w);
void render_line_draw(cairo_t *cr, const render_line *l, double x, double y, double w);

/* Legend row (wrapping); returns its height. draw = 0 only measures. */
double render_legend(cairo_t *cr, int n, const char **names, const int *colors, double x, double y, double w,
                     int draw);

/* ---- output surfaces --------------------------------------------------------------------------- */
/* Write a whole file atomically (temp file in the same directory + rename). */
int render_write_file(const char *path, const void *data, size_t n);
/* Render one figure alone to an SVG file of width w points; cairo's process-global surfaceN / ids are
 * renumbered in order of appearance so the file depends only on the figure. */
int render_fig_svg(const render_fig *f, double w, const char *path);
/* Release pango's font map and fontconfig's caches (call once at exit, after every cairo object is
 * destroyed; keeps leak checkers quiet). Rendering after it starts over. */
void render_shutdown(void);
/* The same after a render: rendered = 0 when it failed or was interrupted (sanitizer builds then leave cairo's and
 * fontconfig's static caches to the exit, as a font may still be held). */
void render_shutdown_after(int rendered);
/* A scratch context for measuring (a recording surface); free with cairo_destroy. */
cairo_t *render_measure_context(void);

#endif
