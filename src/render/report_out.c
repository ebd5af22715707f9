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
#include <signal.h>
#include <sys/stat.h>
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

/* A table taller than a page continues on the next: its rows are cut into parts that each fit a page, every part
 * with the header repeated (text never shrinks below its size); the whole stays one table in the SVG, CSV and
 * Markdown. */
static int split_tall_tables(rdoc *d, cairo_t *cr) {
    int n0 = d->n;
    for (int i = 0; i < n0; i++) {
        rb_block *b = &d->b[i];
        if (b->kind != RB_FIG || b->md_only || b->fig->kind != RENDER_FIG_TABLE) continue;
        const render_fig *f = b->fig;
        const render_table *t = f->u.table;
        double fh = render_fig_height(cr, f, CW), th = render_table_height(cr, t, CW);
        if (fh + 20 <= BOTTOM - TOP || t->nrows < 2) continue;
        double head, *rh = malloc((size_t)t->nrows * sizeof *rh);
        if (!rh) return sd_err(SD_ENOMEM, "out of memory");
        if (render_table_rows(cr, t, CW, &head, rh) < 0) { free(rh); return sd_err(SD_ENOMEM, "out of memory"); }
        double room = BOTTOM - TOP - 20 - (fh - th) - head - 12;   /* title and note kept on every part */
        b->pdf_skip = 1;
        for (int r0 = 0, part = 0; r0 < t->nrows; part++) {
            int r1 = r0 + 1;
            double h = rh[r0];
            while (r1 < t->nrows && h + rh[r1] <= room) h += rh[r1++];
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
            if (r1 < t->nrows) pf->note = "Continued on the next page.";
            SD_TRY(rb_add(d, RB_FIG, NULL, pf));   /* appended; moved after the whole below */
            d->b[d->n - 1].pdf_only = 1;
            r0 = r1;
        }
        free(rh);
        /* move the parts just appended to right after block i */
        int nparts = d->n - n0;
        rb_block *tmp = malloc((size_t)nparts * sizeof *tmp);
        if (!tmp) return sd_err(SD_ENOMEM, "out of memory");
        memcpy(tmp, &d->b[n0], (size_t)nparts * sizeof *tmp);
        memmove(&d->b[i + 1 + nparts], &d->b[i + 1], (size_t)(n0 - i - 1) * sizeof *d->b);
        memcpy(&d->b[i + 1], tmp, (size_t)nparts * sizeof *tmp);
        free(tmp);
        i += nparts;
        n0 += nparts;
    }
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

static void paginate(rdoc *d, cairo_t *cr) {
    d->scale = 1;
    if (d->t->one_page) { paginate_one(d, cr); return; }
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
        b->h = block_height(cr, b);
        double need = b->h;
        if (b->kind == RB_H2 || b->kind == RB_H3) {   /* keep a heading with the start of what follows */
            double before = b->kind == RB_H2 ? 14 : 6;
            if (!page_empty) { y += before; }
            for (int j = i + 1; j < d->n && j <= i + 4; j++) {   /* up to and including the first figure */
                rb_kind k = d->b[j].kind;
                if (d->b[j].md_only || d->b[j].pdf_skip) continue;
                if (k == RB_BREAK || k == RB_H2 || (k == RB_H3 && b->kind == RB_H3)) break;
                double nh = block_height(cr, &d->b[j]);
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

/* Table cells: text as is (pipes escaped, newlines as spaces). */
static void md_cell(render_membuf *m, const char *s) {
    for (; s && *s; s++) {
        if (*s == '|') mb_printf(m, "\\|");
        else if (*s == '\n') mb_printf(m, " ");
        else render_mem_write(m, (const unsigned char *)s, 1);
    }
}

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
    if (!strpbrk(s, ",\"\n")) { mb_printf(m, "%s", s); return; }
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
        case RB_TITLE: mb_printf(&m, "# %s\n\n", b->text); break;
        case RB_SUBTITLE: mb_printf(&m, "%s\n\n", b->text); break;
        case RB_H2: mb_printf(&m, "## %s\n\n", b->text); break;
        case RB_H3: mb_printf(&m, "### %s\n\n", b->text); break;
        case RB_PARA: mb_printf(&m, "%s\n\n", b->text); break;
        case RB_FIG: {
            const render_fig *f = b->fig;
            mb_printf(&m, "**%s**\n\n", f->title);
            if (f->kind == RENDER_FIG_TABLE) {
                md_table(&m, f);
                if (formats & RENDER_OUT_CSV) mb_printf(&m, "\n[CSV](tables/%s.csv)", f->id);
                if (formats & RENDER_OUT_SVG) mb_printf(&m, "%s[SVG](figures/%s.svg)", formats & RENDER_OUT_CSV ? " · " : "\n", f->id);
                mb_printf(&m, "\n\n");
            } else if (formats & RENDER_OUT_SVG) {
                mb_printf(&m, "![%s](figures/%s.svg)\n\n", f->title, f->id);
            } else {
                mb_printf(&m, "(figure %s: render with --format svg)\n\n", f->id);
            }
            char note[4096], miss[2048];
            render_fig_missing_note(f, miss, sizeof miss);
            snprintf(note, sizeof note, "%s%s%s", f->note ? f->note : "", f->note && miss[0] ? " " : "", miss);
            if (note[0]) mb_printf(&m, "*%s*\n\n", note);
            break;
        }
        case RB_GAP: case RB_BREAK: break;
        }
    }
    if (d->st->omitted) mb_printf(&m, "---\n\nSections without data in these inputs (omitted): %s.\n", d->st->omitted_names);
    int rc = m.oom ? sd_err(SD_ENOMEM, "out of memory") : render_write_file(path, m.p ? m.p : "", m.n);
    free(m.p);
    return rc;
}

/* ---- out/figures and out/tables as a set ------------------------------------------------------------------------ */
/* A render writes them into OUT/.NAME.new.PID and swaps that in at the end, so no file of an earlier render
 * stays beside this one's and an interrupted render leaves the previous set whole. */
static int stage_dir(const char *out_dir, const char *name, char *buf, size_t n) {
    snprintf(buf, n, "%s/.%s.new.%ld", out_dir, name, (long)getpid());
    SD_TRY(sd_remove_tree(buf));
    return sd_mkdir_under(out_dir, buf, 0);
}

static int swap_in(const char *out_dir, const char *name, const char *staged) {
    char final[4096], old[4096];
    snprintf(final, sizeof final, "%s/%s", out_dir, name);
    snprintf(old, sizeof old, "%s/.%s.old.%ld", out_dir, name, (long)getpid());
    SD_TRY(sd_remove_tree(old));
    struct stat st;
    int had = lstat(final, &st) == 0;
    if (had && rename(final, old) != 0) return sd_err(SD_EIO, "cannot replace %s: %s", final, strerror(errno));
    if (rename(staged, final) != 0) {
        int e = errno;
        if (had) rename(old, final);
        return sd_err(SD_EIO, "cannot replace %s: %s", final, strerror(e));
    }
    return had ? sd_remove_tree(old) : 0;
}

/* Staging directories of renders that died (kill -9): their process is gone. */
static void remove_dead_stages(const char *out_dir) {
    DIR *dh = opendir(out_dir);
    if (!dh) return;
    struct dirent *e;
    while ((e = readdir(dh))) {
        char what[16], kind[8];
        long pid = 0;
        int end = 0;
        if (sscanf(e->d_name, ".%15[a-z].%7[a-z].%ld%n", what, kind, &pid, &end) != 3 || e->d_name[end] ||
            (strcmp(what, "figures") && strcmp(what, "tables")) || (strcmp(kind, "new") && strcmp(kind, "old")) ||
            pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", out_dir, e->d_name);
        sd_remove_tree(p);
    }
    closedir(dh);
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
    char path[4096], figs[4096] = "", tabs[4096] = "";
    cairo_t *cr = NULL;
    SD_TRY_GOTO(rc, rb_build(&d), done);
    cr = render_measure_context();
    if (!t->one_page) SD_TRY_GOTO(rc, split_tall_tables(&d, cr), done);
    paginate(&d, cr);
    stats->pages = d.npages;
    SD_TRY_GOTO(rc, sd_mkdir_p(out_dir, 0), done);
    remove_dead_stages(out_dir);
    SD_TRY_GOTO(rc, interrupted(), done);
    if (formats & RENDER_OUT_SVG) {
        SD_TRY_GOTO(rc, stage_dir(out_dir, "figures", figs, sizeof figs), done);
        for (int i = 0; i < d.n; i++) {
            if (d.b[i].kind != RB_FIG || d.b[i].pdf_only) continue;
            snprintf(path, sizeof path, "%s/%s.svg", figs, d.b[i].fig->id);
            SD_TRY_GOTO(rc, render_fig_svg(d.b[i].fig, CW + 24, path), done);
            SD_TRY_GOTO(rc, interrupted(), done);
        }
    }
    if (formats & RENDER_OUT_CSV) {
        SD_TRY_GOTO(rc, stage_dir(out_dir, "tables", tabs, sizeof tabs), done);
        for (int i = 0; i < d.n; i++) {
            if (d.b[i].kind != RB_FIG || d.b[i].pdf_only || d.b[i].fig->kind != RENDER_FIG_TABLE) continue;
            snprintf(path, sizeof path, "%s/%s.csv", tabs, d.b[i].fig->id);
            SD_TRY_GOTO(rc, write_csv(d.b[i].fig, path), done);
            SD_TRY_GOTO(rc, interrupted(), done);
        }
    }
    if (formats & RENDER_OUT_PDF) {
        snprintf(path, sizeof path, "%s/showdown.pdf", out_dir);
        SD_TRY_GOTO(rc, write_pdf(&d, path), done);
        SD_TRY_GOTO(rc, interrupted(), done);
    }
    /* the figures and tables the Markdown links to are in place before it is */
    if (figs[0]) { SD_TRY_GOTO(rc, swap_in(out_dir, "figures", figs), done); figs[0] = 0; }
    if (tabs[0]) { SD_TRY_GOTO(rc, swap_in(out_dir, "tables", tabs), done); tabs[0] = 0; }
    if (formats & RENDER_OUT_MD) {
        snprintf(path, sizeof path, "%s/showdown.md", out_dir);
        SD_TRY_GOTO(rc, write_md(&d, path, formats), done);
    }
done:
    if (figs[0]) sd_remove_tree(figs);
    if (tabs[0]) sd_remove_tree(tabs);
    if (cr) cairo_destroy(cr);
    render_arena_free(d.a);
    return rc;
}
