/* report_out — lays the blocks out on A4 pages (headings kept with what follows, figures never split:
 * one taller than a page is scaled to fit) and writes the PDF, the per-figure SVGs, the Markdown index
 * and the CSV tables. PDF dates are the inputs' latest date, so the same inputs give the same bytes. */
#include "render/report_int.h"
#include "render/render_int.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/sig.h"

#include <cairo-pdf.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PAGE_W 595.28
#define PAGE_H 841.89
#define MX 56.7
#define CW (PAGE_W - 2 * MX)
#define TOP 66.0
#define BOTTOM (PAGE_H - 60.0)

int render_parse_formats(const char *s, unsigned *out) {
    *out = 0;
    const char *p = s;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 3 && strncmp(p, "pdf", 3) == 0) *out |= RENDER_OUT_PDF;
        else if (n == 3 && strncmp(p, "svg", 3) == 0) *out |= RENDER_OUT_SVG;
        else if (n == 2 && strncmp(p, "md", 2) == 0) *out |= RENDER_OUT_MD | RENDER_OUT_CSV;
        else if (n == 3 && strncmp(p, "csv", 3) == 0) *out |= RENDER_OUT_CSV;
        else if (n == 3 && strncmp(p, "all", 3) == 0) *out |= RENDER_OUT_ALL;
        else return sd_err(SD_EUSAGE, "--format: unknown format '%.*s' (expected pdf, svg, md, csv or all)", (int)n, p);
        p += n;
        if (*p == ',') p++;
    }
    if (!*out) return sd_err(SD_EUSAGE, "--format: no format given");
    return 0;
}

/* ---- layout ----------------------------------------------------------------------------------------------- */
static double block_height(cairo_t *cr, const rb_block *b) {
    double h = 0;
    switch (b->kind) {
    case RB_TITLE: render_text_size(cr, RENDER_FONT_H1, b->text, CW, NULL, &h); return h + 10;
    case RB_SUBTITLE: render_text_size(cr, RENDER_FONT_BODY, b->text, CW, NULL, &h); return h + 5;
    case RB_H2: render_text_size(cr, RENDER_FONT_H2, b->text, CW, NULL, &h); return h + 9;
    case RB_H3: render_text_size(cr, RENDER_FONT_TITLE, b->text, CW, NULL, &h); return h + 6;
    case RB_PARA: render_text_size(cr, RENDER_FONT_BODY, b->text, CW, NULL, &h); return h + 10;
    case RB_FIG: return render_fig_height(cr, b->fig, CW) + 20;
    case RB_GAP: return b->gap;
    case RB_BREAK: return 0;
    }
    return 0;
}

/* A table taller than a page continues on the next: its rows are cut into parts, every part with the header
 * repeated (text never shrinks below its size); the whole stays one table in the SVG, CSV and Markdown. The first
 * part fills what is left of the page it starts on (at least PART_MIN rows' worth: less starts a fresh page), the
 * others a page each. */
#define PART_MIN 120.0   /* points of rows: about eight */

static int is_tall_table(cairo_t *cr, const rb_block *b) {
    if (b->kind != RB_FIG || b->md_only || b->pdf_skip || b->pdf_only || b->fig->kind != RENDER_FIG_TABLE) return 0;
    return b->fig->u.table->nrows >= 2 && render_fig_height(cr, b->fig, CW) + 20 > BOTTOM - TOP;
}

#define CONTINUED "Continued on the next page."

/* What a part of the table at b takes besides its rows: its title, note (the table's own, or CONTINUED on a part
 * the table goes on from), header and spacing. */
static double part_overhead(cairo_t *cr, const rb_block *b, int continued) {
    render_fig f = *b->fig;
    if (continued) f.note = CONTINUED;
    const render_table *t = f.u.table;
    double fh = render_fig_height(cr, &f, CW), th = render_table_height(cr, t, CW), head = 0;
    double *rh = malloc((size_t)t->nrows * sizeof *rh);
    if (rh && render_table_rows(cr, t, CW, &head, rh) < 0) head = 0;
    free(rh);
    return 20 + (fh - th) + head + 12;
}

/* Block i, a tall table, cut into parts placed right after it; the first part's rows get first_room points (less
 * its note's difference when it is the last). */
static int split_table(rdoc *d, cairo_t *cr, int i, double first_room) {
    const int n0 = d->n;
    const render_fig *f = d->b[i].fig;
    const render_table *t = f->u.table;
    double head, *rh = malloc((size_t)t->nrows * sizeof *rh);
    if (!rh) return sd_err(SD_ENOMEM, "out of memory");
    if (render_table_rows(cr, t, CW, &head, rh) < 0) { free(rh); return sd_err(SD_ENOMEM, "out of memory"); }
    double over = part_overhead(cr, &d->b[i], 1), last_more = part_overhead(cr, &d->b[i], 0) - over;
    double room = first_room;
    d->b[i].pdf_skip = 1;
    for (int r0 = 0, part = 0; r0 < t->nrows; part++, room = BOTTOM - TOP - over) {
        int r1 = r0 + 1;
        double h = rh[r0];
        while (r1 < t->nrows && h + rh[r1] <= room) h += rh[r1++];
        if (r1 == t->nrows)   /* the last part carries the table's own note: room for it */
            while (r1 > r0 + 1 && h > room - last_more) h -= rh[--r1];
        render_table *pt = render_alloc(d->a, sizeof *pt);
        render_fig *pf = render_alloc(d->a, sizeof *pf);
        if (!pt || !pf) { free(rh); return sd_err(SD_ENOMEM, "out of memory"); }
        *pt = *t;
        pt->whole = t;
        pt->nrows = r1 - r0;
        pt->rows = t->rows + r0;
        pt->v = t->v + (size_t)r0 * t->ncols;
        if (t->text) pt->text = t->text + (size_t)r0 * t->ncols;
        if (t->heat) pt->heat = t->heat + (size_t)r0 * t->ncols;
        *pf = *f;
        pf->u.table = pt;
        if (part > 0) pf->title = render_printf(d->a, "%s (continued)", f->title);
        if (r1 < t->nrows) pf->note = CONTINUED;
        int rc = rb_add(d, RB_FIG, NULL, pf);   /* appended; moved after block i below */
        if (rc) { free(rh); return rc; }
        d->b[d->n - 1].pdf_only = 1;
        r0 = r1;
    }
    free(rh);
    int nparts = d->n - n0;
    rb_block *tmp = malloc((size_t)nparts * sizeof *tmp);
    if (!tmp) return sd_err(SD_ENOMEM, "out of memory");
    memcpy(tmp, &d->b[n0], (size_t)nparts * sizeof *tmp);
    memmove(&d->b[i + 1 + nparts], &d->b[i + 1], (size_t)(n0 - i - 1) * sizeof *d->b);
    memcpy(&d->b[i + 1], tmp, (size_t)nparts * sizeof *tmp);
    free(tmp);
    return 0;
}

/* One page: every block in sequence, scaled as a whole if it runs past the bottom margin. */
static void paginate_one(rdoc *d, cairo_t *cr) {
    double y = TOP;
    for (int i = 0; i < d->n; i++) {
        rb_block *b = &d->b[i];
        b->page = b->md_only || b->pdf_only ? -1 : 0;   /* one page: the whole table, scaled with the page */
        if (b->md_only || b->pdf_only) continue;
        b->h = b->kind == RB_BREAK ? 0 : block_height(cr, b);
        if (b->kind == RB_H2 && i > 0) y += 14;
        b->y = y;
        y += b->h;
    }
    d->npages = 1;
    d->scale = y > BOTTOM ? (BOTTOM - TOP) / (y - TOP) : 1;
}

static int paginate(rdoc *d, cairo_t *cr) {
    d->scale = 1;
    if (d->t->one_page) { paginate_one(d, cr); return 0; }
    int page = 0;
    double y = TOP;
    int page_empty = 1;
    for (int i = 0; i < d->n; i++) {
        rb_block *b = &d->b[i];
        if (b->md_only || b->pdf_skip) { b->page = -1; continue; }
        if (b->kind == RB_BREAK) {
            if (!page_empty) { page++; y = TOP; page_empty = 1; }
            b->page = page;
            continue;
        }
        if (is_tall_table(cr, b)) {   /* cut here, its first part sized to what is left of this page */
            double over = part_overhead(cr, b, 1), left = BOTTOM - y - over;
            SD_TRY(split_table(d, cr, i, !page_empty && left >= PART_MIN ? left : BOTTOM - TOP - over));
            d->b[i].page = -1;
            continue;
        }
        b->h = block_height(cr, b);
        double need = b->h;
        if (b->kind == RB_H2 || b->kind == RB_H3) {   /* keep a heading with the start of what follows */
            double before = b->kind == RB_H2 ? 14 : 6;
            if (!page_empty) { y += before; }
            for (int j = i + 1; j < d->n && j <= i + 4; j++) {   /* up to and including the first figure */
                rb_kind k = d->b[j].kind;
                if (d->b[j].md_only || d->b[j].pdf_skip) continue;
                if (k == RB_BREAK || k == RB_H2 || (k == RB_H3 && b->kind == RB_H3)) break;
                double nh = is_tall_table(cr, &d->b[j]) ? part_overhead(cr, &d->b[j], 1) + PART_MIN
                                                        : block_height(cr, &d->b[j]);
                /* a figure taller than a page is scaled into any half-empty page: half a page will do */
                if (k == RB_FIG && nh > BOTTOM - TOP) nh = (BOTTOM - TOP) / 2;
                need += nh < BOTTOM - TOP - 60 ? nh : BOTTOM - TOP - 60;
                if (d->b[j].kind == RB_FIG) break;
            }
        }
        if (b->kind == RB_GAP && page_empty && i > 0) { b->page = page; b->y = y; b->h = 0; continue; }
        /* a figure taller than a page goes where at least half a page is free, scaled to fit */
        if (b->kind == RB_FIG && b->h > BOTTOM - TOP && y < (TOP + BOTTOM) / 2) need = 0;
        if (!page_empty && y + need > BOTTOM) { page++; y = TOP; }
        b->page = page;
        b->y = y;
        y += b->h;
        if (y > BOTTOM) y = BOTTOM;   /* a scaled figure ends the page */
        page_empty = 0;
    }
    d->npages = page + 1;
    return 0;
}

/* ---- PDF ---------------------------------------------------------------------------------------------------- */
static void page_frame(rdoc *d, cairo_t *cr, int page) {
    if (page == 0 && d->cover_page) return;
    render_text(cr, RENDER_FONT_SMALL, d->t->title, MX, 34, CW * 0.7, RENDER_LEFT, RC_GREY);
    char buf[160];
    snprintf(buf, sizeof buf, "as of %s", d->date ? d->date : "undated");
    render_text(cr, RENDER_FONT_SMALL, buf, PAGE_W - MX, 34, 0, RENDER_RIGHT, RC_GREY);
    rc_line(cr, MX, 46, PAGE_W - MX, 46, 0.4, RC_LIGHT);
    snprintf(buf, sizeof buf, "showdown %s (%s)%s", SD_VERSION, SD_GIT_COMMIT, d->t->footer ? "" : "");
    render_text(cr, RENDER_FONT_SMALL, d->t->footer ? rb_expand(d, d->t->footer) : buf, MX, PAGE_H - 40, CW * 0.7,
                RENDER_LEFT, RC_GREY);
    snprintf(buf, sizeof buf, "page %d of %d", page + 1, d->npages);
    render_text(cr, RENDER_FONT_SMALL, buf, PAGE_W - MX, PAGE_H - 40, 0, RENDER_RIGHT, RC_GREY);
}

static void draw_block(cairo_t *cr, const rb_block *b, int whole_page_scaled) {
    switch (b->kind) {
    case RB_TITLE: render_text(cr, RENDER_FONT_H1, b->text, MX, b->y, CW, RENDER_LEFT, RC_INK); break;
    case RB_SUBTITLE: render_text(cr, RENDER_FONT_BODY, b->text, MX, b->y, CW, RENDER_LEFT, RC_GREY); break;
    case RB_H2: {
        double h = render_text(cr, RENDER_FONT_H2, b->text, MX, b->y, CW, RENDER_LEFT, RC_INK);
        rc_line(cr, MX, b->y + h + 3, MX + CW, b->y + h + 3, 0.6, render_palette(0));
        break;
    }
    case RB_H3: render_text(cr, RENDER_FONT_TITLE, b->text, MX, b->y, CW, RENDER_LEFT, RC_GREY); break;
    case RB_PARA: render_text(cr, RENDER_FONT_BODY, b->text, MX, b->y, CW, RENDER_LEFT, RC_INK); break;
    case RB_FIG: {
        double avail = BOTTOM - b->y, h = b->h - 20;
        if (!whole_page_scaled && h > avail && avail > 0) {   /* taller than a page: scale to fit, not clip */
            double k = avail / h;
            cairo_save(cr);
            cairo_translate(cr, MX + CW * (1 - k) / 2, b->y);
            cairo_scale(cr, k, k);
            render_fig_draw(cr, b->fig, 0, 0, CW);
            cairo_restore(cr);
        } else {
            render_fig_draw(cr, b->fig, MX, b->y, CW);
        }
        break;
    }
    case RB_GAP: case RB_BREAK: break;
    }
}

/* "2026-11-20" or "2026-11-20T10:11:12Z" -> "2026-11-20T10:11:12Z"; anything else -> the epoch. */
static void pdf_date(const char *in, char *out, size_t n) {
    int ok = in && strlen(in) >= 10 && in[4] == '-' && in[7] == '-';
    for (int i = 0; ok && i < 10; i++) if (i != 4 && i != 7 && (in[i] < '0' || in[i] > '9')) ok = 0;
    if (!ok) { snprintf(out, n, "1970-01-01T00:00:00Z"); return; }
    int has_time = strlen(in) >= 19 && (in[10] == 'T' || in[10] == ' ') && in[13] == ':' && in[16] == ':';
    snprintf(out, n, "%.10sT%.8sZ", in, has_time ? in + 11 : "00:00:00");
}

static int write_pdf(rdoc *d, const char *path) {
    render_membuf mb = {0};
    cairo_surface_t *s = cairo_pdf_surface_create_for_stream(render_mem_write, &mb, PAGE_W, PAGE_H);
    char date[40];
    pdf_date(d->date, date, sizeof date);
    cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_TITLE, d->t->title);
    cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATOR, "showdown " SD_VERSION);
    cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATE_DATE, date);
    cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_MOD_DATE, date);
    cairo_t *cr = cairo_create(s);
    int i = 0, h2 = CAIRO_PDF_OUTLINE_ROOT;
    for (int p = 0; p < d->npages; p++) {
        page_frame(d, cr, p);
        cairo_save(cr);
        if (d->scale < 1) {
            cairo_translate(cr, MX + CW * (1 - d->scale) / 2, TOP);
            cairo_scale(cr, d->scale, d->scale);
            cairo_translate(cr, -MX, -TOP);
        }
        for (; i < d->n && (d->b[i].page == p || d->b[i].page < 0); i++) {
            if (d->b[i].page != p) continue;
            draw_block(cr, &d->b[i], d->t->one_page);
            /* the outline: sections, their subsections under them */
            const rb_block *b = &d->b[i];
            if ((b->kind == RB_H2 || (b->kind == RB_H3 && h2 != CAIRO_PDF_OUTLINE_ROOT)) && b->text) {
                char dest[96];
                snprintf(dest, sizeof dest, "page=%d pos=[%.1f %.1f]", p + 1, MX, b->y);
                int id = cairo_pdf_surface_add_outline(s, b->kind == RB_H2 ? CAIRO_PDF_OUTLINE_ROOT : h2, b->text, dest, 0);
                if (b->kind == RB_H2) h2 = id;
            }
        }
        cairo_restore(cr);
        cairo_show_page(cr);
    }
    int rc = render_stream_end(cr, s, &mb, "", path);
    if (rc == 0) rc = render_write_file(path, mb.p, mb.n);
    free(mb.p);
    return rc;
}

/* ---- Markdown and CSV --------------------------------------------------------------------------------------- */
static void mb_printf(render_membuf *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mb_printf(render_membuf *m, const char *fmt, ...) {
    char tmp[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= sizeof tmp) {   /* rare: long text */
        char *big = malloc((size_t)n + 1);
        if (!big) { m->oom = 1; return; }
        va_start(ap, fmt);
        vsnprintf(big, (size_t)n + 1, fmt, ap);
        va_end(ap);
        render_mem_write(m, (const unsigned char *)big, (unsigned)n);
        free(big);
        return;
    }
    render_mem_write(m, (const unsigned char *)tmp, (unsigned)n);
}

/* Does the line at s open a block that text must not open: an ATX heading, a setext underline or thematic
 * break, a code fence, or a numbered list item? Returns where a backslash goes, or NULL. */
static const char *md_block_start(const char *s) {
    const char *e = s, *q;
    while (*e == ' ') e++;
    if (*e == '#') {
        for (q = e; *q == '#'; q++) {}
        return q - e <= 6 && (*q == ' ' || *q == '\n' || !*q) ? e : NULL;
    }
    if (*e && strchr("=-*_", *e)) {
        for (q = e; *q && *q != '\n'; q++) if (*q != ' ' && *q != *e) return NULL;
        return e;
    }
    if ((*e == '`' || *e == '~') && e[1] == *e && e[2] == *e) return e;
    for (q = e; *q >= '0' && *q <= '9'; q++) {}
    if (q > e && q - e <= 9 && (*q == '.' || *q == ')') && (q[1] == ' ' || q[1] == '\n' || !q[1])) return q;
    return NULL;
}

/* Text from the inputs (device strings, framework names, notes) goes into Markdown as text, never as markup:
 * '<' and '>' as entities (no raw HTML), '[', ']' and '\\' escaped (no link or image), a line that would open a
 * heading or another block escaped. Our own markup is written around it. flat: newlines become spaces (headings,
 * titles, notes, cells, where the text never starts a line); cell: '|' escaped too. */
static void md_text(render_membuf *m, const char *s, int flat, int cell) {
    const char *esc = flat || !s ? NULL : md_block_start(s);
    for (; s && *s; s++) {
        char c = *s == '\r' || (*s == '\n' && flat) ? ' ' : *s;
        if (s == esc) mb_printf(m, "\\");
        if (c == '<') mb_printf(m, "&lt;");
        else if (c == '>') mb_printf(m, "&gt;");
        else if (c == '[' || c == ']' || c == '\\' || (c == '|' && cell)) mb_printf(m, "\\%c", c);
        else render_mem_write(m, (const unsigned char *)&c, 1);
        if (c == '\n') esc = md_block_start(s + 1);
    }
}

static void md_cell(render_membuf *m, const char *s) { md_text(m, s, 1, 1); }

static int best_of(const render_table *t, int c, double *out) {
    if (!t->best || !t->best[c]) return 0;
    double b = NAN;
    int n = 0;
    for (int r = 0; r < t->nrows; r++) {
        if (t->text && t->text[r * t->ncols + c]) continue;
        double v = t->v[r * t->ncols + c];
        if (isnan(v)) continue;
        n++;
        if (isnan(b) || (t->best[c] > 0 ? v > b : v < b)) b = v;
    }
    *out = b;
    return n >= 2;
}

static void md_table(render_membuf *m, const render_fig *f) {
    const render_table *t = f->u.table;
    mb_printf(m, "| ");
    md_cell(m, t->row_head ? t->row_head : "");
    for (int c = 0; c < t->ncols; c++) {
        mb_printf(m, " | ");
        if (t->groups && t->groups[c] && t->groups[c][0]) { md_cell(m, t->groups[c]); mb_printf(m, ": "); }
        md_cell(m, t->cols[c]);
        if (t->units && t->units[c] && t->units[c][0]) { mb_printf(m, " ("); md_cell(m, t->units[c]); mb_printf(m, ")"); }
    }
    mb_printf(m, " |\n|---");
    for (int c = 0; c < t->ncols; c++) {
        int text = 1;
        for (int r = 0; r < t->nrows; r++) text &= t->text && t->text[r * t->ncols + c] != NULL;
        mb_printf(m, text ? "|---" : "|---:");
    }
    mb_printf(m, "|\n");
    char buf[64], bs[64];
    for (int r = 0; r < t->nrows; r++) {
        mb_printf(m, "| ");
        md_cell(m, t->rows[r]);
        for (int c = 0; c < t->ncols; c++) {
            mb_printf(m, " | ");
            const char *s = t->text ? t->text[r * t->ncols + c] : NULL;
            double v = t->v[r * t->ncols + c], b;
            if (s) { md_cell(m, s); continue; }
            if (isnan(v)) { mb_printf(m, "*missing*"); continue; }
            int dec = t->dec ? t->dec[c] : 2;
            render_fmt_num(buf, sizeof buf, v, dec);
            int is_best = 0;
            if (best_of(t, c, &b)) { render_fmt_num(bs, sizeof bs, b, dec); is_best = strcmp(bs, buf) == 0; }
            mb_printf(m, is_best ? "**%s**" : "%s", buf);
        }
        mb_printf(m, " |\n");
    }
}

static void csv_cell(render_membuf *m, const char *s) {
    if (!s) return;
    if (!strpbrk(s, ",\"\n\r")) { mb_printf(m, "%s", s); return; }
    mb_printf(m, "\"");
    for (; *s; s++) mb_printf(m, *s == '"' ? "\"\"" : "%c", *s);
    mb_printf(m, "\"");
}

/* One header line, then one line per row; numbers in full precision without separators; missing = empty. */
static int write_csv(const render_fig *f, const char *path) {
    const render_table *t = f->u.table;
    render_membuf m = {0};
    csv_cell(&m, t->row_head && t->row_head[0] ? t->row_head : "row");
    for (int c = 0; c < t->ncols; c++) {
        mb_printf(&m, ",");
        char h[512];
        snprintf(h, sizeof h, "%s%s%s%s%s%s", t->groups && t->groups[c] && t->groups[c][0] ? t->groups[c] : "",
                 t->groups && t->groups[c] && t->groups[c][0] ? ": " : "", t->cols[c][0] ? t->cols[c] : "value",
                 t->units && t->units[c] && t->units[c][0] ? " (" : "", t->units && t->units[c] ? t->units[c] : "",
                 t->units && t->units[c] && t->units[c][0] ? ")" : "");
        csv_cell(&m, h);
    }
    mb_printf(&m, "\n");
    for (int r = 0; r < t->nrows; r++) {
        csv_cell(&m, t->rows[r]);
        for (int c = 0; c < t->ncols; c++) {
            mb_printf(&m, ",");
            const char *s = t->text ? t->text[r * t->ncols + c] : NULL;
            double v = t->v[r * t->ncols + c];
            if (s) csv_cell(&m, s);
            else if (!isnan(v)) mb_printf(&m, "%.10g", v);
        }
        mb_printf(&m, "\n");
    }
    int rc = m.oom ? sd_err(SD_ENOMEM, "out of memory") : render_write_file(path, m.p ? m.p : "", m.n);
    free(m.p);
    return rc;
}

static int write_md(rdoc *d, const char *path, unsigned formats) {
    render_membuf m = {0};
    for (int i = 0; i < d->n; i++) {
        const rb_block *b = &d->b[i];
        if (b->pdf_only) continue;
        switch (b->kind) {
        case RB_TITLE: case RB_H2: case RB_H3:
            mb_printf(&m, "%s ", b->kind == RB_TITLE ? "#" : b->kind == RB_H2 ? "##" : "###");
            md_text(&m, b->text, 1, 0);
            mb_printf(&m, "\n\n");
            break;
        case RB_SUBTITLE: case RB_PARA: md_text(&m, b->text, 0, 0); mb_printf(&m, "\n\n"); break;
        case RB_FIG: {
            const render_fig *f = b->fig;
            mb_printf(&m, "**");
            md_text(&m, f->title, 1, 0);
            mb_printf(&m, "**\n\n");
            if (f->kind == RENDER_FIG_TABLE) {
                md_table(&m, f);
                if (formats & RENDER_OUT_CSV) mb_printf(&m, "\n[CSV](tables/%s.csv)", f->id);
                if (formats & RENDER_OUT_SVG) mb_printf(&m, "%s[SVG](figures/%s.svg)", formats & RENDER_OUT_CSV ? " · " : "\n", f->id);
                mb_printf(&m, "\n\n");
            } else if (formats & RENDER_OUT_SVG) {
                mb_printf(&m, "![");
                md_text(&m, f->title, 1, 0);
                mb_printf(&m, "](figures/%s.svg)\n\n", f->id);
            } else {
                mb_printf(&m, "(figure %s: render with --format svg)\n\n", f->id);
            }
            char note[4096], miss[2048];
            render_fig_missing_note(f, miss, sizeof miss);
            snprintf(note, sizeof note, "%s%s%s", f->note ? f->note : "", f->note && miss[0] ? " " : "", miss);
            if (note[0]) { mb_printf(&m, "*"); md_text(&m, note, 1, 0); mb_printf(&m, "*\n\n"); }
            break;
        }
        case RB_GAP: case RB_BREAK: break;
        }
    }
    if (d->st->omitted) {
        mb_printf(&m, "---\n\nSections without data in these inputs (omitted): ");
        md_text(&m, d->st->omitted_names, 1, 0);
        mb_printf(&m, ".\n");
    }
    int rc = m.oom ? sd_err(SD_ENOMEM, "out of memory") : render_write_file(path, m.p ? m.p : "", m.n);
    free(m.p);
    return rc;
}

/* ---- the output set, switched as one ------------------------------------------------------------------------- */
/* A render writes everything it makes (showdown.pdf, showdown.md, figures/, tables/) into OUT/.render.new.PID/,
 * then switches: OUT/.render.old.PID/.set names the set; each existing output moves into .render.old.PID/, each
 * new one into OUT/; renaming .render.old.PID to .render.done.PID commits. A render that dies before the commit
 * is rolled back by the next one (every rename undone in reverse, each undo safe to repeat): OUT always ends up
 * holding the previous set or the new one, never a mix, and nothing of the previous set is lost. */
static const char *const set_names[] = {"showdown.pdf", "showdown.md", "figures", "tables"};
#define NSET ((int)(sizeof set_names / sizeof set_names[0]))

static void pjoin(char *buf, size_t n, const char *dir, const char *name) { snprintf(buf, n, "%s/%s", dir, name); }

static int exists(const char *p) {
    struct stat st;
    return lstat(p, &st) == 0;
}

/* Test only: SHOWDOWN_TEST_SWITCH_SLEEP_MS=N sleeps N ms after each rename of a switch (for the kill tests). */
static void test_pause(void) {
    const char *e = getenv("SHOWDOWN_TEST_SWITCH_SLEEP_MS");
    long ms = e ? strtol(e, NULL, 10) : 0;
    if (ms > 0 && ms < 60000) {
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* Undo a switch that did not commit: old holds .set and the outputs moved aside, stage what was not moved in. */
static void roll_back(const char *out_dir, const char *old, const char *stage) {
    char p[4200], q[4200], *set = NULL;
    pjoin(p, sizeof p, old, ".set");
    if (sd_read_file(p, 4096, &set, NULL) != 0) return;   /* no .set: nothing was moved yet */
    mkdir(stage, 0777);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < NSET; i++) {
            char line[32];
            snprintf(line, sizeof line, "%s\n", set_names[i]);
            if (!strstr(set, line)) continue;
            pjoin(p, sizeof p, out_dir, set_names[i]);
            pjoin(q, sizeof q, pass == 0 ? stage : old, set_names[i]);
            if (pass == 0 && !exists(q)) rename(p, q);   /* the new output back into the stage */
            if (pass == 1 && exists(q)) rename(q, p);    /* the previous output back in place */
        }
    free(set);
}

static int switch_locked(const char *out_dir, const char *stage) {
    char old[4200], done[4200], p[4200], q[4200], set[128] = "";
    snprintf(old, sizeof old, "%s/.render.old.%ld", out_dir, (long)getpid());
    snprintf(done, sizeof done, "%s/.render.done.%ld", out_dir, (long)getpid());
    SD_TRY(sd_remove_tree(old));
    SD_TRY(sd_remove_tree(done));
    if (mkdir(old, 0777) != 0) return sd_err(SD_EIO, "cannot create %s: %s", old, strerror(errno));
    for (int i = 0; i < NSET; i++) {
        pjoin(q, sizeof q, stage, set_names[i]);
        if (exists(q)) { strcat(set, set_names[i]); strcat(set, "\n"); }
    }
    pjoin(p, sizeof p, old, ".set");
    int rc = sd_write_file_atomic(p, set, strlen(set));
    for (int step = 0; step < 2 && rc == 0; step++)
        for (int i = 0; i < NSET && rc == 0; i++) {
            pjoin(q, sizeof q, stage, set_names[i]);
            if (!exists(q)) continue;
            pjoin(p, sizeof p, out_dir, set_names[i]);
            const char *from = step == 0 ? p : q, *to = step == 0 ? (pjoin(q, sizeof q, old, set_names[i]), q) : p;
            if (step == 0 && !exists(p)) continue;
            if (rename(from, to) != 0) rc = sd_err(SD_EIO, "cannot replace %s: %s", p, strerror(errno));
            test_pause();
        }
    if (rc == 0 && rename(old, done) != 0) rc = sd_err(SD_EIO, "cannot replace the outputs in %s: %s", out_dir, strerror(errno));
    if (rc) roll_back(out_dir, old, stage);
    sd_remove_tree(rc ? old : done);
    return rc;
}

/* Reports rendering into one directory at once switch their output sets one after another (OUT/.showdown.lock, kept):
 * each set goes in whole, and none fails on the other's half-moved files. The lock's descriptor, or < 0. */
static int switch_lock(const char *out_dir) {
    char p[4200];
    pjoin(p, sizeof p, out_dir, ".showdown.lock");
    int fd = open(p, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return sd_err(SD_EIO, "cannot open %s: %s", p, strerror(errno));
    while (flock(fd, LOCK_EX) != 0) {
        if (errno == EINTR && !sd_sig_pending()) continue;
        int e = errno;
        close(fd);
        return e == EINTR ? sd_err(SD_EINTR, "interrupted") : sd_err(SD_EIO, "cannot lock %s: %s", p, strerror(e));
    }
    return fd;
}

static int switch_in(const char *out_dir, const char *stage) {
    int lock = switch_lock(out_dir);
    if (lock < 0) return lock;
    int rc = switch_locked(out_dir, stage);
    close(lock);
    return rc;
}

/* What renders that died (kill -9) left: a switch not committed is rolled back, then their directories go. An
 * earlier version's .figures.old.PID / .tables.old.PID held the previous set while it was out of place. */
static void remove_dead_stages(const char *out_dir) {
    for (int pass = 0; pass < 2; pass++) {
        DIR *dh = opendir(out_dir);
        if (!dh) return;
        struct dirent *e;
        while ((e = readdir(dh))) {
            char what[16], kind[8], p[4200], q[4200];
            long pid = 0;
            int end = 0;
            if (sscanf(e->d_name, ".%15[a-z].%7[a-z].%ld%n", what, kind, &pid, &end) != 3 || e->d_name[end] ||
                (strcmp(what, "figures") && strcmp(what, "tables") && strcmp(what, "render")) ||
                (strcmp(kind, "new") && strcmp(kind, "old") && strcmp(kind, "done")) ||
                pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
                continue;
            pjoin(p, sizeof p, out_dir, e->d_name);
            if (pass == 0 && strcmp(kind, "old") == 0) {   /* first the rollbacks, which read the stages */
                if (strcmp(what, "render") == 0) {
                    snprintf(q, sizeof q, "%s/.render.new.%ld", out_dir, pid);
                    roll_back(out_dir, p, q);
                } else {
                    pjoin(q, sizeof q, out_dir, what);
                    if (!exists(q)) rename(p, q);
                }
            }
            if (pass == 1) sd_remove_tree(p);
        }
        closedir(dh);
    }
}

static int interrupted(void) { return sd_sig_pending() ? sd_err(SD_EINTR, "interrupted") : 0; }

/* ---- entry ------------------------------------------------------------------------------------------------------ */
int render_report(const render_model *m, const render_template *t, const char *out_dir, unsigned formats,
                  render_report_stats *stats) {
    render_report_stats local;
    if (!stats) stats = &local;
    memset(stats, 0, sizeof *stats);
    rdoc d = {0};
    int rc = render_arena_new(&d.a);
    if (rc < 0) return sd_err(SD_ENOMEM, "out of memory");
    d.m = m;
    d.t = t;
    d.st = stats;
    d.date = render_model_date(m);
    d.cover_page = t->nsections > 0 && t->sections[0].kind == RT_COVER && !t->sections[0].compact;
    char path[4300], stage[4200] = "";
    cairo_t *cr = NULL;
    SD_TRY_GOTO(rc, rb_build(&d), done);
    cr = render_measure_context();
    SD_TRY_GOTO(rc, paginate(&d, cr), done);
    stats->pages = d.npages;
    SD_TRY_GOTO(rc, sd_mkdir_p(out_dir, 0), done);
    remove_dead_stages(out_dir);
    SD_TRY_GOTO(rc, interrupted(), done);
    snprintf(stage, sizeof stage, "%s/.render.new.%ld", out_dir, (long)getpid());
    SD_TRY_GOTO(rc, sd_remove_tree(stage), done);
    SD_TRY_GOTO(rc, sd_mkdir_under(out_dir, stage, 0), done);
    for (int k = 0; k < 2; k++) {   /* figures/ as SVG, tables/ as CSV */
        unsigned f = k == 0 ? RENDER_OUT_SVG : RENDER_OUT_CSV;
        if (!(formats & f)) continue;
        snprintf(path, sizeof path, "%s/%s", stage, k == 0 ? "figures" : "tables");
        SD_TRY_GOTO(rc, sd_mkdir_under(stage, path, 0), done);
        for (int i = 0; i < d.n; i++) {
            const rb_block *b = &d.b[i];
            if (b->kind != RB_FIG || b->pdf_only || (k == 1 && b->fig->kind != RENDER_FIG_TABLE)) continue;
            snprintf(path, sizeof path, "%s/%s/%s.%s", stage, k == 0 ? "figures" : "tables", b->fig->id, k == 0 ? "svg" : "csv");
            SD_TRY_GOTO(rc, k == 0 ? render_fig_svg(b->fig, CW + 24, path) : write_csv(b->fig, path), done);
            SD_TRY_GOTO(rc, interrupted(), done);
        }
    }
    if (formats & RENDER_OUT_PDF) {
        snprintf(path, sizeof path, "%s/showdown.pdf", stage);
        SD_TRY_GOTO(rc, write_pdf(&d, path), done);
        SD_TRY_GOTO(rc, interrupted(), done);
    }
    if (formats & RENDER_OUT_MD) {
        snprintf(path, sizeof path, "%s/showdown.md", stage);
        SD_TRY_GOTO(rc, write_md(&d, path, formats), done);
    }
    SD_TRY_GOTO(rc, interrupted(), done);   /* the last point to stop at: from here the new set goes in whole */
    rc = switch_in(out_dir, stage);
done:
    if (stage[0]) sd_remove_tree(stage);
    if (cr) cairo_destroy(cr);
    render_arena_free(d.a);
    return rc;
}
