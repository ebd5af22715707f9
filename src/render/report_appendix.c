/* report_appendix — the sections after the results: verification of published numbers, regressions of the
 * nightly run, history from the results database, and the methodology (environment, settings, inputs). */
#include "render/report_sections.h"
#include "core/err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int inputs_table(rdoc *d, const char *id) {
    if (d->m->nfiles == 0) return 0;
    render_table *t = rb_new_table(d, d->m->nfiles, 3);
    render_fig *f = t ? rb_new_fig(d, RENDER_FIG_TABLE, id, "Inputs of this report") : NULL;
    if (!f) return sd_err(SD_ENOMEM, "out of memory");
    t->row_head = "File";
    t->cols[0] = "Kind";
    t->cols[1] = "As of";
    t->cols[2] = "Written by";
    for (int i = 0; i < d->m->nfiles; i++) {
        const rm_file *fl = &d->m->files[i];
        t->rows[i] = rb_base(fl->path);
        t->text[i * 3] = fl->detail ? render_printf(d->a, "%s: %s", fl->kind, fl->detail) : fl->kind;
        t->text[i * 3 + 1] = fl->as_of ? fl->as_of : "undated";
        t->text[i * 3 + 2] = fl->version ? render_printf(d->a, "showdown %s%s%s%s", fl->version, fl->commit ? " (" : "",
                                                         fl->commit ? fl->commit : "", fl->commit ? (fl->dirty ? ", dirty)" : ")") : "")
                           : fl->source ? fl->source : "–";
    }
    f->u.table = t;
    return rb_add_fig(d, f);
}

/* Data-parallel settings of a run on one CPU replica: "gpus 1" on a machine without a GPU says nothing true. */
static int cpu_only_key(const rm_run *r, const char *key) {
    return !rb_is_gpu(r) && r->gpus <= 1 && (strcmp(key, "gpus") == 0 || strcmp(key, "global_batch") == 0);
}

int rb_sec_methodology(rdoc *d, const rt_section *s) {
    (void)s;
    /* environment of every measured results file, side by side */
    const rm_file *fl[16];
    int nf = 0;
    for (int i = 0; i < d->m->nfiles && nf < 16; i++) if (strcmp(d->m->files[i].kind, "results") == 0) fl[nf++] = &d->m->files[i];
    const char *keys[128];
    int nk = 0;
    for (int i = 0; i < nf; i++)
        for (int k = 0; k < fl[i]->nenv; k++) rb_idx_of(keys, &nk, fl[i]->env[k].key, 128);
    if (nk > 0) {
        render_table *t = rb_new_table(d, nk, nf);
        render_fig *f = t ? rb_new_fig(d, RENDER_FIG_TABLE, "method-environment", "Environment of each results file") : NULL;
        if (!f) return sd_err(SD_ENOMEM, "out of memory");
        t->row_head = "Key";
        for (int i = 0; i < nf; i++) t->cols[i] = rb_base(fl[i]->path);
        for (int k = 0; k < nk; k++) {
            t->rows[k] = keys[k];
            for (int i = 0; i < nf; i++) {
                t->text[k * nf + i] = "–";
                for (int e = 0; e < fl[i]->nenv; e++)
                    if (strcmp(fl[i]->env[e].key, keys[k]) == 0) t->text[k * nf + i] = fl[i]->env[e].value;
            }
        }
        f->u.table = t;
        SD_TRY(rb_add_fig(d, f));
    }
    /* settings of each workload (its first measured run) */
    const char *wl[64];
    int nw = rb_workloads(d, wl, 64);
    const rm_run *first[64] = {0};
    nk = 0;
    for (int w = 0; w < nw; w++)
        for (int i = 0; i < d->m->nruns; i++) {
            const rm_run *r = &d->m->runs[i];
            if (r->published || strcmp(r->workload, wl[w]) != 0) continue;
            if (!first[w]) first[w] = r;
            for (int k = 0; k < r->nsettings; k++)
                if (!cpu_only_key(r, r->settings[k].key)) rb_idx_of(keys, &nk, r->settings[k].key, 128);
        }
    int kept = 0;   /* workloads measured here; published-only ones have no settings */
    for (int w = 0; w < nw; w++)
        if (first[w]) { wl[kept] = wl[w]; first[kept++] = first[w]; }
    nw = kept;
    if (nk > 0 && nw > 0) {
        int nc = nw < 6 ? nw : 6;
        render_table *t = rb_new_table(d, nk, nc);
        render_fig *f = t ? rb_new_fig(d, RENDER_FIG_TABLE, "method-settings", "Settings of each workload") : NULL;
        if (!f) return sd_err(SD_ENOMEM, "out of memory");
        t->row_head = "Setting";
        for (int w = 0; w < nc; w++) t->cols[w] = wl[w];
        for (int k = 0; k < nk; k++) {
            t->rows[k] = keys[k];
            for (int w = 0; w < nc; w++) {
                const char *v = rb_run_setting(first[w], keys[k]);
                t->text[k * nc + w] = v ? v : "–";
            }
        }
        f->u.table = t;
        SD_TRY(rb_add_fig(d, f));
    }
    return inputs_table(d, "method-inputs");
}

/* Heads of a four-column table with one row per benchmark cell, its first two columns medians in seconds
 * (verification and regressions). */
static void cell_table_head(render_table *t, const char *c0, const char *c1, const char *c2, const char *c3) {
    t->row_head = "Cell";
    t->cols[0] = c0;
    t->cols[1] = c1;
    t->cols[2] = c2;
    t->cols[3] = c3;
    t->units[0] = t->units[1] = "s, median";
}

/* ---- verification ---------------------------------------------------------------------------------------- */
/* The PDF's verification: verdict counts per published file, then every place a publication disagrees with its own
 * evidence; the cell-by-cell tables go to the Markdown and CSV only. */
static int verify_summary(rdoc *d) {
    static const char *const kinds[] = {"REPRODUCED", "SLOWER", "FASTER", "ACCURACY-DIFFERS", "NOT-COMPARABLE", "MISSING"};
    enum { NK = sizeof kinds / sizeof *kinds };
    int nv = d->m->nverify, used[NK] = {0}, nused = 0, ndis = 0;
    for (int i = 0; i < nv; i++)
        for (int c = 0; c < d->m->verify[i].ncells; c++) {
            for (int k = 0; k < NK; k++) used[k] |= strcmp(d->m->verify[i].cells[c].verdict, kinds[k]) == 0;
            ndis += d->m->verify[i].cells[c].published_check != NULL;
        }
    for (int k = 0; k < NK; k++) nused += used[k];
    int nc = 1 + nused;
    render_table *t = rb_new_table(d, nv, nc);
    render_fig *f = t ? rb_new_fig(d, RENDER_FIG_TABLE, "verify-summary", "Verdicts per published file") : NULL;
    if (!f) return sd_err(SD_ENOMEM, "out of memory");
    t->row_head = "Published file";
    t->cols[0] = "cells";
    static const char *const heads[] = {"reproduced", "slower", "faster", "accuracy differs", "not comparable", "missing"};
    for (int k = 0, c = 1; k < NK; k++) if (used[k]) t->cols[c++] = heads[k];
    for (int c = 0; c < nc; c++) t->dec[c] = 0;
    const char *nogpu_why = NULL;
    for (int i = 0; i < nv; i++) {
        const rm_verify *v = &d->m->verify[i];
        t->rows[i] = v->title ? v->title : v->source ? v->source : rb_base(v->file->path);
        t->v[i * nc] = v->ncells;
        for (int k = 0, c = 1; k < NK; k++) {
            if (!used[k]) continue;
            int n = 0;
            for (int x = 0; x < v->ncells; x++) n += strcmp(v->cells[x].verdict, kinds[k]) == 0;
            t->v[i * nc + c++] = n;
        }
        for (int x = 0; x < v->ncells && !nogpu_why; x++) {
            const char *w = v->cells[x].why ? strstr(v->cells[x].why, "; no GPU: ") : NULL;
            if (w) nogpu_why = w + 10;
        }
    }
    f->u.table = t;
    f->note = render_printf(d->a, "Every cell, with the published and measured figures and the reason for its verdict, is in "
                                  "showdown.md and tables/verify-N.csv.%s%s%s",
                            nogpu_why ? " NOT-COMPARABLE here mostly means a GPU cell on a machine without one (" : "",
                            nogpu_why ? nogpu_why : "", nogpu_why ? ")." : "");
    SD_TRY(rb_add_fig(d, f));
    if (ndis == 0) return 0;
    render_table *u = rb_new_table(d, ndis, 2);
    render_fig *g = u ? rb_new_fig(d, RENDER_FIG_TABLE, "verify-disagreements", "Where a publication disagrees with its own evidence")
                      : NULL;
    if (!g) return sd_err(SD_ENOMEM, "out of memory");
    u->row_head = "Cell";
    u->cols[0] = "Published";
    u->cols[1] = "What its own evidence says";
    u->dec[0] = 1;
    int r = 0;
    for (int i = 0; i < nv; i++)
        for (int c = 0; c < d->m->verify[i].ncells; c++) {
            const rm_verdict *x = &d->m->verify[i].cells[c];
            if (!x->published_check) continue;
            u->rows[r] = render_printf(d->a, "%s · %s%s%s%s%s", x->workload, x->implementation ? x->implementation : "?",
                                       x->backend ? " · " : "", x->backend ? x->backend : "", x->device ? "\n" : "",
                                       x->device ? x->device : "");
            u->v[r * 2] = x->published;
            u->text[r * 2 + 1] = x->published_check;
            r++;
        }
    u->units[0] = "s";
    g->u.table = u;
    return rb_add_fig(d, g);
}

int rb_sec_verification(rdoc *d, const rt_section *s) {
    (void)s;
    if (d->m->nverify == 0) return 1;
    SD_TRY(verify_summary(d));
    for (int i = 0; i < d->m->nverify; i++) {
        const rm_verify *v = &d->m->verify[i];
        static const char *const kinds[] = {"REPRODUCED", "SLOWER", "FASTER", "ACCURACY-DIFFERS", "NOT-COMPARABLE", "MISSING"};
        char counts[256] = "";
        for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
            int n = 0;
            for (int c = 0; c < v->ncells; c++) n += strcmp(v->cells[c].verdict, kinds[k]) == 0;
            if (!n) continue;
            size_t l = strlen(counts);
            snprintf(counts + l, sizeof counts - l, "%s%d %s", l ? ", " : "", n, kinds[k]);
        }
        const char *src = v->title ? v->title : v->source ? v->source : rb_base(v->file->path);
        SD_TRY(rb_add(d, RB_PARA, render_printf(d->a, "%s: %d cell%s checked against measurements from %s (tolerance %s%%): %s.",
                                                 src, v->ncells, v->ncells == 1 ? "" : "s",
                                                 v->measured_from ? v->measured_from : "an unnamed source",
                                                 isnan(v->tolerance_pct) ? "?" : render_printf(d->a, "%g", v->tolerance_pct),
                                                 counts[0] ? counts : "no cells"), NULL));
        d->b[d->n - 1].md_only = 1;
        if (v->ncells == 0) continue;
        render_table *t = rb_new_table(d, v->ncells, 4);
        render_fig *f = t ? rb_new_fig(d, RENDER_FIG_TABLE, render_printf(d->a, "verify-%d", i + 1),
                                       render_printf(d->a, "Verification of %s", src)) : NULL;
        if (!f) return sd_err(SD_ENOMEM, "out of memory");
        cell_table_head(t, "Published", "Measured", "Verdict", "Why");
        const char *nogpu_why = NULL;
        for (int c = 0; c < v->ncells; c++) {
            const rm_verdict *x = &v->cells[c];
            int one_wl = 1;   /* a published file is usually one workload: then the title names it */
            for (int k = 0; k < v->ncells; k++) one_wl &= strcmp(v->cells[k].workload, x->workload) == 0;
            t->rows[c] = render_printf(d->a, "%s%s%s%s%s%s%s", one_wl ? "" : x->workload, one_wl ? "" : " · ",
                                       x->implementation ? x->implementation : "?",
                                       x->backend ? " · " : "", x->backend ? x->backend : "", x->device ? "\n" : "",
                                       x->device ? x->device : "");
            t->v[c * 4] = x->published;
            t->v[c * 4 + 1] = x->measured;
            t->text[c * 4 + 2] = x->verdict;
            t->text[c * 4 + 3] = x->why ? x->why : "";
            const char *nogpu = x->why ? strstr(x->why, "; no GPU: ") : NULL;
            if (nogpu) {   /* the same reason on every row: once, in the note */
                t->text[c * 4 + 3] = render_printf(d->a, "%.*s", (int)(nogpu - x->why), x->why);
                if (!nogpu_why) nogpu_why = nogpu + 10;
            }
            if (x->published_check)
                t->text[c * 4 + 3] = render_printf(d->a, "%s\nThe publication itself: %s", t->text[c * 4 + 3], x->published_check);
            if (isnan(x->measured)) t->text[c * 4 + 1] = "–";
        }
        t->dec[0] = t->dec[1] = 1;
        f->u.table = t;
        f->note = render_printf(d->a, "Measured: the median of the repeats; a cell reproduces within the tolerance or when the "
                                      "published figure lies inside a measured min–max narrower than it. –: no measurement.%s%s",
                                nogpu_why ? " No GPU here: " : "", nogpu_why ? nogpu_why : "");
        SD_TRY(rb_add_fig(d, f));
        d->b[d->n - 1].md_only = 1;   /* the PDF has the summary above; not numbered in its sequence */
        d->ntab--;
        f->title = strstr(f->title, ". ") + 2;
    }
    return 0;
}

/* ---- regressions (nightly) ----------------------------------------------------------------------------------- */
int rb_sec_regressions(rdoc *d, const rt_section *s) {
    (void)s;
    const render_model *m = d->m;
    if (!m->have_regressions) return 1;
    if (m->nregressions == 0) {
        SD_TRY(rb_add(d, RB_PARA, m->regression_previous_run
                                      ? render_printf(d->a, "No regression: no median of run %lld is slower than run %lld's "
                                                            "by more than the threshold and outside its spread.",
                                                      m->regression_run, m->regression_previous_run)
                                      : "No earlier nightly run to compare with.", NULL));
        return 0;
    }
    SD_TRY(rb_add(d, RB_PARA, render_printf(d->a, "%d median%s of run %lld %s slower than run %lld's by more than the threshold "
                                                  "and above its max: the nightly run exits 6.",
                                            m->nregressions, m->nregressions == 1 ? "" : "s", m->regression_run,
                                            m->nregressions == 1 ? "is" : "are", m->regression_previous_run), NULL));
    render_table *t = rb_new_table(d, m->nregressions, 4);
    render_fig *f = t ? rb_new_fig(d, RENDER_FIG_TABLE, "regressions", "Regressions against the previous nightly run") : NULL;
    if (!f) return sd_err(SD_ENOMEM, "out of memory");
    cell_table_head(t, "Previous", "Now", "Slower", "Threshold");
    t->units[2] = t->units[3] = "%";
    for (int c = 0; c < m->nregressions; c++) {
        const rm_regression *r = &m->regressions[c];
        t->rows[c] = render_printf(d->a, "%s · %s · %s\n%s", r->workload, r->implementation ? r->implementation : "?",
                                   r->backend ? r->backend : "?", r->metric ? r->metric : "");
        t->v[c * 4] = r->previous_median;
        t->v[c * 4 + 1] = r->median;
        t->v[c * 4 + 2] = r->slower_pct;
        t->v[c * 4 + 3] = r->threshold_pct;
    }
    t->dec[0] = t->dec[1] = 3;
    t->dec[2] = t->dec[3] = 1;
    f->u.table = t;
    f->note = "A regression: the new median slower than the previous run's by more than the threshold and above its max.";
    return rb_add_fig(d, f);
}

/* ---- history ------------------------------------------------------------------------------------------------- */
static int cmp_day(const void *a, const void *b) {
    const rm_hist *x = *(const rm_hist *const *)a, *y = *(const rm_hist *const *)b;
    return (x->day > y->day) - (x->day < y->day);
}

int rb_sec_history(rdoc *d, const rt_section *s) {
    (void)s;
    const render_model *m = d->m;
    if (m->nhist_runs < 2) return 1;
    double day0 = INFINITY;
    const char *date0 = NULL;
    for (int i = 0; i < m->nhist; i++)
        if (!isnan(m->hist[i].day) && m->hist[i].day < day0) { day0 = m->hist[i].day; date0 = m->hist[i].date; }
    if (!date0) return 1;
    const char *wl[64];
    int nw = 0, added = 0;
    for (int i = 0; i < m->nhist; i++) rb_idx_of(wl, &nw, m->hist[i].workload, 64);
    const rm_hist **pts = NEW(d, const rm_hist *, m->nhist);
    if (!pts) return sd_err(SD_ENOMEM, "out of memory");
    for (int w = 0; w < nw; w++) {
        const char *rows[32];
        int nr = 0;
        for (int i = 0; i < m->nhist; i++) {
            const rm_hist *h = &m->hist[i];
            if (strcmp(h->workload, wl[w]) != 0 || isnan(h->day)) continue;
            rm_run tmp = {.implementation = h->implementation, .backend = h->backend};
            rb_idx_of(rows, &nr, rb_row_of(d, &tmp), 32);
        }
        render_line *l = NEW(d, render_line, 1);
        if (!l) return sd_err(SD_ENOMEM, "out of memory");
        l->series = NEW(d, const char *, nr);
        l->npts = NEW(d, int, nr);
        l->x = NEW(d, double *, nr);
        l->y = NEW(d, double *, nr);
        if (!l->series || !l->npts || !l->x || !l->y) return sd_err(SD_ENOMEM, "out of memory");
        int longest = 0;
        for (int r = 0; r < nr; r++) {
            int n = 0;
            for (int i = 0; i < m->nhist; i++) {
                const rm_hist *h = &m->hist[i];
                rm_run tmp = {.implementation = h->implementation, .backend = h->backend};
                if (strcmp(h->workload, wl[w]) == 0 && !isnan(h->day) && strcmp(rb_row_of(d, &tmp), rows[r]) == 0) pts[n++] = h;
            }
            qsort(pts, (size_t)n, sizeof *pts, cmp_day);
            int k = l->nseries++;
            l->series[k] = rows[r];
            l->npts[k] = n;
            l->x[k] = NEW(d, double, n);
            l->y[k] = NEW(d, double, n);
            if (!l->x[k] || !l->y[k]) return sd_err(SD_ENOMEM, "out of memory");
            for (int i = 0; i < n; i++) { l->x[k][i] = pts[i]->day - day0; l->y[k][i] = pts[i]->steady_epoch_s; }
            if (n > longest) longest = n;
        }
        if (longest < 2) continue;   /* a trend needs two runs */
        double span = 0;
        for (int k = 0; k < l->nseries; k++)
            for (int i = 0; i < l->npts[k]; i++) if (l->x[k][i] > span) span = l->x[k][i];
        double scale = span < 2.0 / 24 ? 1440 : span < 2 ? 24 : 1;
        for (int k = 0; k < l->nseries; k++)
            for (int i = 0; i < l->npts[k]; i++) l->x[k][i] *= scale;
        l->xlabel = render_printf(d->a, "%s since %s", scale == 1440 ? "minutes" : scale == 24 ? "hours" : "days", date0);
        l->ylabel = "steady-state epoch (s)";
        render_fig *f = rb_new_fig(d, RENDER_FIG_LINE, render_printf(d->a, "history-%s", rb_slug(d, wl[w])),
                                   render_printf(d->a, "%s: steady-state epoch time across runs", wl[w]));
        if (!f) return sd_err(SD_ENOMEM, "out of memory");
        f->u.line = l;
        f->note = render_printf(d->a, "%d runs from the results database, oldest %s.", m->nhist_runs, date0);
        SD_TRY(rb_add_fig(d, f));
        added++;
    }
    return added ? 0 : 1;
}
