/* render_int — colours and helpers shared by the figure files of src/render (not part of the API). */
#ifndef SD_RENDER_INT_H
#define SD_RENDER_INT_H

#include "render/render.h"

#include <stdlib.h>
#include <string.h>

#define RC_INK   ((render_rgb){0.13, 0.13, 0.13})
#define RC_GREY  ((render_rgb){0.40, 0.40, 0.40})
#define RC_LIGHT ((render_rgb){0.55, 0.55, 0.55})
#define RC_GRID  ((render_rgb){0.87, 0.87, 0.87})
#define RC_RULE  ((render_rgb){0.25, 0.25, 0.25})
#define RC_ZEBRA ((render_rgb){0.965, 0.969, 0.976})
#define RC_BEST  ((render_rgb){0.84, 0.91, 0.97})

static inline void rc_set(cairo_t *cr, render_rgb c) { cairo_set_source_rgb(cr, c.r, c.g, c.b); }
static inline void rc_line(cairo_t *cr, double x0, double y0, double x1, double y1, double lw, render_rgb c) {
    cairo_set_line_width(cr, lw);
    rc_set(cr, c);
    cairo_move_to(cr, x0, y0);
    cairo_line_to(cr, x1, y1);
    cairo_stroke(cr);
}

/* A growing byte buffer that cairo streams into (and the Markdown/CSV writers append to). */
typedef struct render_membuf { char *p; size_t n, cap; int oom; } render_membuf;

static inline cairo_status_t render_mem_write(void *closure, const unsigned char *data, unsigned int len) {
    render_membuf *m = closure;
    if (m->oom) return CAIRO_STATUS_NO_MEMORY;
    if (m->n + len + 1 > m->cap) {
        size_t cap = m->cap ? m->cap : 65536;
        while (cap < m->n + len + 1) cap *= 2;
        char *p = realloc(m->p, cap);
        if (!p) { m->oom = 1; return CAIRO_STATUS_NO_MEMORY; }
        m->p = p;
        m->cap = cap;
    }
    memcpy(m->p + m->n, data, len);
    m->n += len;
    m->p[m->n] = 0;
    return CAIRO_STATUS_SUCCESS;
}

/* End a drawing streamed into mb (surface.c): destroys cr, finishes and destroys s. 0, or SD_ERROR
 * "PREFIXPATH: cairo: ..." when cairo failed or mb ran out of memory. */
int render_stream_end(cairo_t *cr, cairo_surface_t *s, const render_membuf *mb, const char *prefix, const char *path);

#endif
