/* surface — files out of cairo: atomic writes, and one SVG per figure made reproducible by renumbering
 * cairo's process-global "surfaceN" ids in order of first appearance (the rest of cairo's SVG ids are
 * per document already). */
#include "render/render_int.h"
#include "core/err.h"
#include "core/fsutil.h"

#include <cairo-svg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int render_write_file(const char *path, const void *data, size_t n) { return sd_write_file_atomic(path, data, n); }

int render_stream_end(cairo_t *cr, cairo_surface_t *s, const render_membuf *mb, const char *prefix, const char *path) {
    cairo_status_t st = cairo_status(cr);
    cairo_destroy(cr);
    cairo_surface_finish(s);
    if (st == CAIRO_STATUS_SUCCESS) st = cairo_surface_status(s);
    cairo_surface_destroy(s);
    if (st != CAIRO_STATUS_SUCCESS || mb->oom)
        return sd_err(SD_ERROR, "%s%s: cairo: %s", prefix, path, cairo_status_to_string(st));
    return 0;
}

static const char *find(const char *p, const char *end, const char *key, size_t klen) {
    for (; p + klen <= end; p++)
        if (*p == key[0] && memcmp(p, key, klen) == 0) return p;
    return NULL;
}

/* Rewrite every "surface<digits>" to "surface<k>", k counting distinct ids from 1 in order of appearance. */
static int renumber(const char *in, size_t n, render_membuf *out) {
    long map_from[256];
    int nmap = 0;
    const char *p = in, *end = in + n;
    static const char key[] = "surface";
    while (p < end) {
        const char *q = find(p, end, key, sizeof key - 1);
        if (!q) { if (render_mem_write(out, (const unsigned char *)p, (unsigned)(end - p))) return -1; break; }
        const char *d = q + sizeof key - 1;
        if (d >= end || *d < '0' || *d > '9') {
            if (render_mem_write(out, (const unsigned char *)p, (unsigned)(d - p))) return -1;
            p = d;
            continue;
        }
        long id = 0;
        const char *e = d;
        while (e < end && *e >= '0' && *e <= '9' && id < 100000000) id = id * 10 + (*e++ - '0');
        int k = 0;
        while (k < nmap && map_from[k] != id) k++;
        if (k == nmap) {
            if (nmap == 256) return sd_err(SD_ELIMIT, "svg: more than 256 cairo surfaces in one figure");
            map_from[nmap++] = id;
        }
        char num[24];
        int nl = snprintf(num, sizeof num, "%d", k + 1);
        if (render_mem_write(out, (const unsigned char *)p, (unsigned)(d - p)) ||
            render_mem_write(out, (const unsigned char *)num, (unsigned)nl))
            return -1;
        p = e;
    }
    return 0;
}

int render_fig_svg(const render_fig *f, double w, const char *path) {
    const double pad = 12;
    cairo_t *m = render_measure_context();
    double h = render_fig_height(m, f, w - 2 * pad) + 2 * pad;
    cairo_destroy(m);
    render_membuf raw = {0}, fixed = {0};
    cairo_surface_t *s = cairo_svg_surface_create_for_stream(render_mem_write, &raw, w, h);
    cairo_svg_surface_restrict_to_version(s, CAIRO_SVG_VERSION_1_1);
    cairo_t *cr = cairo_create(s);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    render_fig_draw(cr, f, pad, pad, w - 2 * pad);
    int rc = render_stream_end(cr, s, &raw, "svg ", path);
    if (rc == 0 && (renumber(raw.p, raw.n, &fixed) < 0 || fixed.oom))
        rc = fixed.oom ? sd_err(SD_ENOMEM, "out of memory") : SD_ELIMIT;
    if (rc == 0) rc = render_write_file(path, fixed.p, fixed.n);
    free(raw.p);
    free(fixed.p);
    return rc;
}
