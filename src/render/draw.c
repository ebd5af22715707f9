/* draw — the shared look of every figure: the arena behind report models, the palette, pango text
 * (DejaVu only, unhinted metrics so measurements agree on every surface), number formatting and axis ticks. */
#include "render/render_int.h"
#include "core/sig.h"

#include <math.h>
#include <fontconfig/fontconfig.h>
#include <pango/pangocairo.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ------------------------------------------------------------------------------------- */
typedef struct arena_block { struct arena_block *next; size_t used, cap; max_align_t data[]; } arena_block;
struct render_arena { arena_block *head; };

int render_arena_new(render_arena **out) {
    *out = calloc(1, sizeof **out);
    return *out ? 0 : -5;
}

void render_arena_free(render_arena *a) {
    if (!a) return;
    for (arena_block *b = a->head, *n; b; b = n) { n = b->next; free(b); }
    free(a);
}

void *render_alloc(render_arena *a, size_t n) {
    n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    if (n == 0) n = sizeof(max_align_t);
    arena_block *b = a->head;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        b = calloc(1, sizeof *b + cap);
        if (!b) return NULL;
        b->cap = cap;
        b->next = a->head;
        a->head = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    return p;
}

char *render_strdup(render_arena *a, const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *p = render_alloc(a, n);
    if (p) memcpy(p, s, n);
    return p;
}

char *render_printf(render_arena *a, const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = n >= 0 ? render_alloc(a, (size_t)n + 1) : NULL;
    if (p) vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

/* ---- palette ----------------------------------------------------------------------------------- */
render_rgb render_palette(int i) {
    /* Okabe & Ito (2008); yellow last, it is weak on white. */
    static const unsigned hex[RENDER_PALETTE_N] = {0x0072B2, 0xE69F00, 0x009E73, 0xD55E00,
                                                   0x56B4E9, 0xCC79A7, 0x999999, 0xF0E442};
    unsigned h = hex[((i % RENDER_PALETTE_N) + RENDER_PALETTE_N) % RENDER_PALETTE_N];
    return (render_rgb){((h >> 16) & 255) / 255.0, ((h >> 8) & 255) / 255.0, (h & 255) / 255.0};
}

/* ---- text -------------------------------------------------------------------------------------- */
static PangoFontDescription *g_fonts[RENDER_FONT_N];
static cairo_font_options_t *g_fopts;

static PangoFontDescription *font_desc(render_font f) {
    static const char *const spec[RENDER_FONT_N] = {
        [RENDER_FONT_BODY] = "DejaVu Sans 9",          [RENDER_FONT_BOLD] = "DejaVu Sans Bold 9",
        [RENDER_FONT_SMALL] = "DejaVu Sans 7.5",       [RENDER_FONT_SMALL_BOLD] = "DejaVu Sans Bold 7.5",
        [RENDER_FONT_ITALIC] = "DejaVu Sans Oblique 7.5", [RENDER_FONT_TITLE] = "DejaVu Sans Bold 10.5",
        [RENDER_FONT_H2] = "DejaVu Sans Bold 14",      [RENDER_FONT_H1] = "DejaVu Sans Bold 24",
        [RENDER_FONT_MONO] = "DejaVu Sans Mono 7.5",
    };
    if (!g_fonts[f]) g_fonts[f] = pango_font_description_from_string(spec[f]);
    return g_fonts[f];
}

/* One pango context for every layout (creating one per text costs more than the text): its matrix and
 * the surface's options are refreshed from cr on each use, and our options then override the hinting. */
static PangoContext *g_ctx;

/* Pango looks for a break in an unbroken word by re-measuring it at every character, and re-shapes the
 * rest of a paragraph for every line it fills: its time grows with the square of a long text's length
 * (docs/report.md, "Long texts"). So a zero-width space
 * every BREAK_RUN characters of an unbroken word gives it break opportunities (it draws nothing), and a
 * text is cut after what a page could show (about 90 lines at 3 pt a character; one line's worth, at least
 * 2000 characters, unwrapped), the cut said in the text itself. NULL when s needs neither (or no memory). */
#define BREAK_RUN 24
static char *fit_text(const char *s, double wrap_w) {
    size_t max_chars = wrap_w > 0 && wrap_w * 30 > 2000 ? (size_t)(wrap_w * 30) : 2000;
    int wrap = wrap_w > 0;
    size_t n = 0, run = 0, extra = 0, chars = 0, keep = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++, n++) {
        if ((*p & 0xC0) == 0x80) continue;   /* UTF-8 continuation byte: same character */
        if (++chars == max_chars + 1) keep = n;
        if (chars > max_chars) continue;
        if (*p == ' ' || *p == '\n' || *p == '\t') run = 0;
        else if (wrap && ++run > BREAK_RUN) { extra++; run = 1; }
    }
    if (!extra && chars <= max_chars) return NULL;
    if (chars <= max_chars) keep = n;
    size_t cap = keep + 3 * extra + 96;   /* the bytes kept, a U+200B (3 bytes) per break, the cut's note */
    char *out = malloc(cap), *o = out;
    if (!out) return NULL;
    run = 0;
    for (const unsigned char *p = (const unsigned char *)s; p < (const unsigned char *)s + keep; p++) {
        if ((*p & 0xC0) != 0x80) {
            if (*p == ' ' || *p == '\n' || *p == '\t') run = 0;
            else if (wrap && ++run > BREAK_RUN) { memcpy(o, "\xE2\x80\x8B", 3); o += 3; run = 1; }   /* U+200B */
        }
        *o++ = (char)*p;
    }
    if (chars > max_chars) snprintf(o, cap - (size_t)(o - out), "\xE2\x80\xA6 [cut: %zu more characters]", chars - max_chars);
    else *o = 0;
    return out;
}

/* `code` spans, as the templates and messages write commands: the backticks go and the span is set in the
 * monospace face (Markdown output keeps them). A lone backtick stays as it is. NULL: nothing to change. */
static char *code_spans(const char *s, PangoAttrList *al) {
    if (!strchr(s, '`')) return NULL;
    char *out = malloc(strlen(s) + 1);
    if (!out) return NULL;
    size_t o = 0, start = 0;
    int open = 0;
    for (const char *p = s; *p; p++) {
        if (*p == '`' && (open || strchr(p + 1, '`'))) {
            if (open && o > start) {
                PangoAttribute *a = pango_attr_family_new("Monospace");
                a->start_index = (guint)start;
                a->end_index = (guint)o;
                pango_attr_list_insert(al, a);
            }
            open = !open;
            start = o;
            continue;
        }
        out[o++] = *p;
    }
    out[o] = 0;
    return out;
}

static PangoLayout *make_layout(cairo_t *cr, render_font f, const char *s, double wrap_w) {
    if (!g_fopts) {
        g_fopts = cairo_font_options_create();
        cairo_font_options_set_hint_style(g_fopts, CAIRO_HINT_STYLE_NONE);
        cairo_font_options_set_hint_metrics(g_fopts, CAIRO_HINT_METRICS_OFF);
        cairo_font_options_set_antialias(g_fopts, CAIRO_ANTIALIAS_GRAY);
    }
    if (!g_ctx) {
        g_ctx = pango_font_map_create_context(pango_cairo_font_map_get_default());
        pango_cairo_context_set_font_options(g_ctx, g_fopts);
        pango_cairo_context_set_resolution(g_ctx, 72.0);   /* 1 pt = 1 user unit on every surface */
    }
    pango_cairo_update_context(cr, g_ctx);
    PangoLayout *l = pango_layout_new(g_ctx);
    pango_layout_set_font_description(l, font_desc(f));
    char *broken = s ? fit_text(s, wrap_w) : NULL;
    if (wrap_w > 0) {
        pango_layout_set_width(l, (int)(wrap_w * PANGO_SCALE));
        pango_layout_set_wrap(l, PANGO_WRAP_WORD_CHAR);
    }
    PangoAttrList *al = pango_attr_list_new();
    char *plain = code_spans(broken ? broken : s ? s : "", al);
    pango_layout_set_text(l, plain ? plain : broken ? broken : s ? s : "", -1);
    free(plain);
    free(broken);
    /* a line broken inside a word (a URL, a path) gets no hyphen: the text stays what it says */
    pango_attr_list_insert(al, pango_attr_insert_hyphens_new(FALSE));
    pango_layout_set_attributes(l, al);
    pango_attr_list_unref(al);
    return l;
}

/* Every http(s):// URL in s becomes a live link over the area its characters take (PDF; other surfaces ignore
 * tags). A URL runs to the next space or closing bracket; one wrapped over lines gets one rectangle per part.
 * It reads the layout's text: the zero-width spaces fit_text put into a long URL are left out of the link. */
static void link_urls(cairo_t *cr, PangoLayout *l, double x, double y, double wrap_w) {
    const char *s = pango_layout_get_text(l);
    for (const char *p = s; p && (p = strstr(p, "http")) != NULL;) {
        if (strncmp(p, "http://", 7) != 0 && strncmp(p, "https://", 8) != 0) { p += 4; continue; }
        size_t n = strcspn(p, " \n\t)]>'\"");
        while (n > 0 && strchr(".,;:", p[n - 1])) n--;   /* the sentence's full stop is not the URL's */
        PangoRectangle a, b;
        pango_layout_index_to_pos(l, (int)(p - s), &a);
        pango_layout_index_to_pos(l, (int)(p - s + n - 1), &b);
        double ax = x + (double)a.x / PANGO_SCALE, ay = y + (double)a.y / PANGO_SCALE, ah = (double)a.height / PANGO_SCALE;
        double bx = x + (double)(b.x + b.width) / PANGO_SCALE, by = y + (double)b.y / PANGO_SCALE, bh = (double)b.height / PANGO_SCALE;
        char attr[4096], uri[2048];
        size_t u = 0;
        for (size_t i = 0; i < n && u + 1 < sizeof uri; i++) {
            if (i + 2 < n && memcmp(p + i, "\xE2\x80\x8B", 3) == 0) { i += 2; continue; }   /* U+200B */
            uri[u++] = p[i];
        }
        uri[u] = 0;
        int k;
        if (by - ay < 0.5 * ah || wrap_w <= 0)
            k = snprintf(attr, sizeof attr, "rect=[%.2f %.2f %.2f %.2f] uri='%s'", ax, ay, bx - ax, ah, uri);
        else
            k = snprintf(attr, sizeof attr, "rect=[%.2f %.2f %.2f %.2f %.2f %.2f %.2f %.2f] uri='%s'", ax, ay, x + wrap_w - ax,
                         ah, x, ay + ah, bx - x, by + bh - ay - ah, uri);
        if (k > 0 && (size_t)k < sizeof attr) {
            cairo_tag_begin(cr, CAIRO_TAG_LINK, attr);
            cairo_tag_end(cr, CAIRO_TAG_LINK);
        }
        p += n;
    }
}

/* Sizes measured, by font, wrap width, the context's matrix and text: a table is measured for its height
 * and again to draw it, and every page and figure for the PDF and again for its SVG. Exact: pango gives the
 * same layout for the same inputs (font options and resolution are fixed). */
#define MCACHE_N 4096   /* a power of two */
#define MCACHE_PROBE 8
typedef struct mentry { char *text; unsigned long long hash; int font; double wrap, m[4], w, h; } mentry;
static mentry *g_mcache;

static unsigned long long text_hash(const char *s, int f) {
    unsigned long long h = 1469598103934665603ULL ^ (unsigned long long)f;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static mentry *mcache_find(const char *s, render_font f, double wrap_w, const double m[4], unsigned long long h,
                           int *hit) {
    if (!g_mcache && !(g_mcache = calloc(MCACHE_N, sizeof *g_mcache))) return NULL;
    size_t i0 = (size_t)(h & (MCACHE_N - 1));
    for (size_t k = 0; k < MCACHE_PROBE; k++) {
        mentry *e = &g_mcache[(i0 + k) & (MCACHE_N - 1)];
        if (!e->text) { *hit = 0; return e; }
        if (e->hash == h && e->font == (int)f && e->wrap == wrap_w && memcmp(e->m, m, sizeof e->m) == 0 &&
            strcmp(e->text, s) == 0) { *hit = 1; return e; }
    }
    mentry *e = &g_mcache[i0];   /* all probed slots taken: replace the first */
    free(e->text);
    e->text = NULL;
    *hit = 0;
    return e;
}

void render_text_size(cairo_t *cr, render_font f, const char *s, double wrap_w, double *w, double *h) {
    cairo_matrix_t cm;
    cairo_get_matrix(cr, &cm);
    double m[4] = {cm.xx, cm.yx, cm.xy, cm.yy};
    if (!s) s = "";
    unsigned long long hash = text_hash(s, f);
    int hit = 0;
    mentry *e = mcache_find(s, f, wrap_w, m, hash, &hit);
    if (!hit) {
        PangoLayout *l = make_layout(cr, f, s, wrap_w);
        int pw, ph;
        pango_layout_get_size(l, &pw, &ph);
        g_object_unref(l);
        if (!e) {   /* no memory for the cache: measured all the same */
            if (w) *w = (double)pw / PANGO_SCALE;
            if (h) *h = (double)ph / PANGO_SCALE;
            return;
        }
        e->text = strdup(s);
        if (e->text) {
            e->hash = hash;
            e->font = (int)f;
            e->wrap = wrap_w;
            memcpy(e->m, m, sizeof e->m);
        }
        e->w = (double)pw / PANGO_SCALE;
        e->h = (double)ph / PANGO_SCALE;
    }
    if (w) *w = e->w;
    if (h) *h = e->h;
}

double render_text(cairo_t *cr, render_font f, const char *s, double x, double y, double wrap_w, int align,
                   render_rgb c) {
    PangoLayout *l = make_layout(cr, f, s, wrap_w);
    if (wrap_w > 0 && align != RENDER_LEFT)
        pango_layout_set_alignment(l, align == RENDER_CENTER ? PANGO_ALIGN_CENTER : PANGO_ALIGN_RIGHT);
    int pw, ph;
    pango_layout_get_size(l, &pw, &ph);
    double w = (double)pw / PANGO_SCALE, h = (double)ph / PANGO_SCALE;
    if (wrap_w <= 0) {
        if (align == RENDER_CENTER) x -= w / 2;
        else if (align == RENDER_RIGHT) x -= w;
    }
    cairo_save(cr);
    cairo_set_source_rgb(cr, c.r, c.g, c.b);
    cairo_move_to(cr, x, y);
    pango_cairo_show_layout(cr, l);
    cairo_restore(cr);
    if (s && strstr(s, "://")) link_urls(cr, l, x, y, wrap_w);
    g_object_unref(l);
    return h;
}

/* ---- numbers ----------------------------------------------------------------------------------- */
void render_fmt_num(char *buf, size_t n, double v, int dec) {
    if (n == 0) return;
    if (isnan(v)) { snprintf(buf, n, "missing"); return; }
    if (isinf(v)) { snprintf(buf, n, v > 0 ? "inf" : "-inf"); return; }
    if (dec < 0) dec = 0;
    if (dec > 6) dec = 6;
    char raw[64];
    snprintf(raw, sizeof raw, "%.*f", dec, fabs(v));
    /* "-0.00" would say a value is negative when it rounds to zero */
    int neg = v < 0 && strspn(raw, "0.") != strlen(raw);
    const char *dot = strchr(raw, '.');
    size_t ilen = dot ? (size_t)(dot - raw) : strlen(raw);
    char out[96];
    size_t o = 0;
    if (neg) out[o++] = '-';
    for (size_t i = 0; i < ilen; i++) {
        out[o++] = raw[i];
        size_t left = ilen - i - 1;
        if (left > 0 && left % 3 == 0) out[o++] = ',';
    }
    if (dot) { size_t dl = strlen(dot); memcpy(out + o, dot, dl); o += dl; }
    out[o] = 0;
    snprintf(buf, n, "%s", out);
}

int render_nice_ticks(double lo, double hi, int target, double *t0, double *step) {
    if (!(hi > lo)) hi = lo + 1;
    if (target < 2) target = 2;
    double raw = (hi - lo) / target;
    double mag = pow(10, floor(log10(raw)));
    double f = raw / mag, s;
    if (f <= 1) s = 1; else if (f <= 2) s = 2; else if (f <= 2.5) s = 2.5; else if (f <= 5) s = 5; else s = 10;
    s *= mag;
    double a = floor(lo / s + 1e-9) * s, b = ceil(hi / s - 1e-9) * s;
    int n = (int)lround((b - a) / s) + 1;
    while (n > 12) { s *= 2; a = floor(lo / s + 1e-9) * s; b = ceil(hi / s - 1e-9) * s; n = (int)lround((b - a) / s) + 1; }
    *t0 = a;
    *step = s;
    return n;
}

int render_decimals_for_step(double step) {
    for (int d = 0; d < 3; d++) {
        double m = step * pow(10, d);
        if (fabs(m - round(m)) < 1e-6) return d;
    }
    return 3;
}

cairo_t *render_measure_context(void) {
    cairo_surface_t *s = cairo_recording_surface_create(CAIRO_CONTENT_COLOR_ALPHA, NULL);
    cairo_t *cr = cairo_create(s);
    cairo_surface_destroy(s);
    return cr;
}

void render_shutdown_after(int rendered) {
    if (g_mcache)
        for (size_t i = 0; i < MCACHE_N; i++) free(g_mcache[i].text);
    free(g_mcache);
    g_mcache = NULL;
    for (int i = 0; i < RENDER_FONT_N; i++) {
        if (g_fonts[i]) pango_font_description_free(g_fonts[i]);
        g_fonts[i] = NULL;
    }
    if (g_ctx) g_object_unref(g_ctx);
    g_ctx = NULL;
    if (g_fopts) cairo_font_options_destroy(g_fopts);
    g_fopts = NULL;
    pango_cairo_font_map_set_default(NULL);
    /* Releasing cairo's and fontconfig's static caches only serves LeakSanitizer, and cairo asserts when a font
     * is still referenced (pango may hold one a little longer): a normal build leaves the caches to the
     * process's exit (docs/report.md, "Shutting the renderer down"). */
#if defined(__SANITIZE_ADDRESS__)
    if (rendered) {   /* a render that failed or was interrupted may still hold a font: the process exits now */
        cairo_debug_reset_static_data();
        FcFini();
    }
#else
    (void)rendered;
#endif
}

void render_shutdown(void) { render_shutdown_after(!sd_sig_pending()); }

/* ---- legend (shared by the charts) ---------------------------------------------------------------- */
double render_legend(cairo_t *cr, int n, const char **names, const int *colors, double x, double y, double w,
                     int draw) {
    const double sw = 9, gap = 4, sep = 14;
    double cx = x, cy = y, line_h = 0;
    for (int i = 0; i < n; i++) {
        double tw, th;
        render_text_size(cr, RENDER_FONT_SMALL, names[i], 0, &tw, &th);
        double iw = sw + gap + tw;
        if (cx > x && cx + iw > x + w) { cx = x; cy += line_h + 4; line_h = 0; }
        if (th > line_h) line_h = th;
        if (draw) {
            render_rgb c = render_palette(colors ? colors[i] : i);
            cairo_set_source_rgb(cr, c.r, c.g, c.b);
            cairo_rectangle(cr, cx, cy + (th - sw) / 2, sw, sw);
            cairo_fill(cr);
            render_text(cr, RENDER_FONT_SMALL, names[i], cx + sw + gap, cy, 0, RENDER_LEFT, RC_INK);
        }
        cx += iw + sep;
    }
    return n > 0 ? cy + line_h - y : 0;
}
