/* report_bench — the benchmark sections: per workload, a grid of implementations by device; its table
 * (measured beside published, in seconds per full epoch), time bars, accuracy per epoch, first epoch vs steady. */
#include "render/report_sections.h"
#include "core/err.h"

#include <math.h>
#include <string.h>

typedef struct grid {
    int nr, nc;
    const char *rows[64], *cols[64];
    int pub[64];
    const rm_run *cell[64][64];
    const char *source;
    int repeats, epochs, nfailed;
    const rm_run *failed[16];   /* failed runs take no row or column; the table's note lists them */
} grid;

static void make_grid(rdoc *d, const char *wl, grid *g) {
    memset(g, 0, sizeof *g);
    /* a publication with real and synthetic data tables for one workload (DenseNet-121) keeps them apart */
    const char *kind0 = NULL;
    int mixed = 0;
    for (int i = 0; i < d->m->nruns; i++) {
        const rm_run *r = &d->m->runs[i];
        if (!r->published || strcmp(r->workload, wl) != 0 || !r->data_kind) continue;
        if (!kind0) kind0 = r->data_kind;
        else if (strcmp(kind0, r->data_kind) != 0) mixed = 1;
    }
    /* measured columns first, then published */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < d->m->nruns; i++) {
            const rm_run *r = &d->m->runs[i];
            if (strcmp(r->workload, wl) != 0 || r->published != pass) continue;
            if (r->failed) {
                if (g->nfailed < 16) g->failed[g->nfailed++] = r;
                continue;
            }
            int row = rb_idx_of(g->rows, &g->nr, rb_row_of(d, r), 64);
            const char *col = !pass ? rb_device_of(d, r)
                              : render_printf(d->a, "%s%s%.4s%s%s ", rb_device_of(d, r),   /* the trailing space keeps it apart */
                                              r->file && r->file->as_of ? " · " : "", r->file && r->file->as_of ? r->file->as_of : "",
                                              mixed && r->data_kind ? " · " : "", mixed && r->data_kind ? r->data_kind : "");
            int c = rb_idx_of(g->cols, &g->nc, col, 64);
            if (row < 0 || c < 0) continue;
            g->pub[c] = pass;
            g->cell[row][c] = r;   /* a later file wins */
            if (pass && r->file && r->file->source) g->source = r->file->source;
            if (!pass && r->nrepeats > g->repeats) g->repeats = r->nrepeats;
            if (!pass && r->nepochs > g->epochs) g->epochs = r->nepochs;
        }
    /* a framework that was not run here (unavailable, unsupported, failed) keeps its row, the status in its
     * cell of the first measured column; the note says why */
    for (int i = 0; i < g->nfailed; i++) {
        const rm_run *r = g->failed[i];
        if (r->published || strcmp(r->implementation, "native") == 0) continue;
        if (r->status && strcmp(r->status, "unavailable") == 0) continue;   /* not installed: the note lists it */
        int c = 0;
        while (c < g->nc && g->pub[c]) c++;
        if (c == g->nc && (c = rb_idx_of(g->cols, &g->nc, "CPU", 64)) < 0) continue;
        int row = rb_idx_of(g->rows, &g->nr, r->implementation, 64);
        if (row >= 0 && !g->cell[row][c]) g->cell[row][c] = r;
    }
}

/* The time columns of a workload's table, one per device of the grid: measured in seconds per full epoch
 * (projected when the runs cut their epochs), published as the publication gives them. */
static void time_columns(rdoc *d, const grid *g, render_table *t, int infer, int proj_batches) {
    int nc = t->ncols;
    const char *tg = infer ? "measured: time" : "measured here";
    /* published: "time for 10 epochs" when every published cell of the workload states the same count */
    const char *pep = NULL;
    int pep_same = 1;
    for (int c = 0; c < g->nc; c++)
        for (int r = 0; r < g->nr; r++) {
            const rm_run *run = g->cell[r][c];
            if (!g->pub[c] || !run || strcmp(run->total_unit ? run->total_unit : "s", "s") != 0) continue;
            const char *e = rb_run_setting(run, "epochs");
            if (!e || (pep && strcmp(pep, e) != 0)) pep_same = 0;
            else pep = e;
        }
    int per_epoch = !infer && pep && pep_same;   /* a published total over a stated epoch count: divided */
    const char *pg = per_epoch ? render_printf(d->a, "published: per epoch (total ÷ %s)", pep) : "published";
    for (int c = 0; c < g->nc; c++) {
        t->cols[c] = g->cols[c];
        t->units[c] = "s";
        for (int r = 0; r < g->nr; r++)   /* a published column may hold s/epoch or s per 1,000 images */
            if (g->cell[r][c] && g->cell[r][c]->total_unit) { t->units[c] = g->cell[r][c]->total_unit; break; }
        if (!infer && strcmp(t->units[c], "s") == 0 && g->pub[c] && per_epoch) t->units[c] = "s/epoch";
        if (!infer && !g->pub[c]) t->units[c] = proj_batches ? "s/full epoch, projected" : "s/full epoch";
        t->best[c] = -1;
        t->groups[c] = g->pub[c] ? pg : tg;
        double mx = 0;
        int integral = 1;
        for (int r = 0; r < g->nr; r++) {
            const rm_run *run = g->cell[r][c];
            if (!run) { t->text[r * nc + c] = "–"; continue; }   /* not run there: not a missing value */
            if (run->failed) { t->text[r * nc + c] = rb_status_word(run); continue; }
            double v = run->total_s.median;
            int pj;
            const char *ep = g->pub[c] ? rb_run_setting(run, "epochs") : NULL;
            if (!infer && !g->pub[c]) v = rb_full_epoch_s(run, &pj);
            else if (per_epoch && rb_pos_int(ep) && strcmp(run->total_unit ? run->total_unit : "s", "s") == 0) v /= rb_pos_int(ep);
            t->v[r * nc + c] = v;
            if (v > mx) mx = v;
            if (!isnan(v) && v != floor(v)) integral = 0;
        }
        t->dec[c] = integral ? 0 : rb_time_decimals(mx);
    }
}

/* After the time columns: test accuracy per measured device (nacc), then "same model" (neq). */
static void check_columns(const grid *g, render_table *t, int nacc, int neq) {
    int nc = t->ncols, k = g->nc;
    for (int c = 0; c < g->nc && nacc; c++) {
        if (g->pub[c]) continue;
        t->cols[k] = g->cols[c];
        t->units[k] = "";
        t->best[k] = 1;
        t->dec[k] = 3;
        t->groups[k] = "test accuracy";
        for (int r = 0; r < g->nr; r++) {
            const rm_run *run = g->cell[r][c];
            if (!run) t->text[r * nc + k] = "–";
            else if (run->failed) t->text[r * nc + k] = rb_status_word(run);
            else t->v[r * nc + k] = run->accuracy.median;
        }
        k++;
    }
    if (neq) {   /* "same model": the framework's forward pass on the native weights (showdown bench) */
        t->cols[k] = "forward vs native";
        t->units[k] = "max rel. diff";
        t->best[k] = 0;
        t->groups[k] = "same model";
        for (int r = 0; r < g->nr; r++) {
            const char *txt = "";   /* no run to check: an empty cell, not "–" (not run on that device) */
            for (int c = 0; c < g->nc; c++) {
                const rm_run *run = g->cell[r][c];
                if (!run || g->pub[c]) continue;
                if (run->equivalence) txt = run->equivalence;
                else if (strcmp(run->implementation, "native") == 0) txt = "reference";
            }
            t->text[r * nc + k] = txt;
        }
    }
}

/* The note under a workload's table: repeats, projection, the publication, and every run that did not run. */
static const char *table_note(rdoc *d, const grid *g, const render_table *t, int proj_batches) {
    int cross = 0;
    for (int i = 0; i < g->nr * t->ncols; i++) cross |= t->text[i] && strcmp(t->text[i], "–") == 0;
    const char *note = render_printf(d->a, "%s%s%s%s%s%s", g->repeats ? render_printf(d->a, "Median of %d repeat%s.", g->repeats,
                                                                                         g->repeats == 1 ? "" : "s") : "Nothing measured here.",
                                     proj_batches ? render_printf(d->a, " Measured epochs were cut to %d batches: the time of a full "
                                                                        "epoch of the data set is projected from their throughput.",
                                                                  proj_batches) : "",
                                     g->source ? " Published figures: " : "", g->source ? g->source : "", g->source ? "." : "",
                                     cross ? " –: not run on that device." : "");
    const char *uninstalled = NULL;
    for (int i = 0; i < g->nfailed; i++) {
        const rm_run *r = g->failed[i];
        if (r->status && strcmp(r->status, "unavailable") == 0 && strcmp(r->implementation, "native") != 0) {
            uninstalled = uninstalled ? render_printf(d->a, "%s, %s", uninstalled, r->implementation) : r->implementation;
            continue;
        }
        const char *err = r->error ? r->error : "no reason recorded", *word = rb_status_word(r);
        if (strcmp(word, "not run") == 0 && strncmp(err, "not run: ", 9) == 0) err += 9;
        const char *colon = strchr(err, ':');   /* the first clause of the error is the reason */
        if (strcmp(word, "failed") != 0) colon = NULL;   /* "unavailable: <why>", "unsupported: <op>" */
        note = render_printf(d->a, "%s Not run: %s (%.*s).", note, rb_row_of(d, r),
                             colon ? (int)(colon - err) : (int)strlen(err), err);
    }
    if (uninstalled)
        note = render_printf(d->a, "%s Not installed here: %s (`make deps-frameworks` installs them).", note, uninstalled);
    return note;
}

/* One workload's table: implementations by device, measured beside published, then accuracy and "same model". */
static int bench_table(rdoc *d, const char *wl) {
    grid g;
    make_grid(d, wl, &g);
    int nmeas = 0, nacc = 0;
    for (int c = 0; c < g.nc; c++) nmeas += !g.pub[c];
    for (int c = 0; c < g.nc; c++) {
        if (g.pub[c]) continue;
        for (int r = 0; r < g.nr; r++) if (g.cell[r][c] && !isnan(g.cell[r][c]->accuracy.median)) { nacc++; break; }
    }
    int neq = 0;
    for (int r = 0; r < g.nr; r++)
        for (int c = 0; c < g.nc; c++) neq |= g.cell[r][c] && g.cell[r][c]->equivalence != NULL;
    int nc = g.nc + (nacc ? nmeas : 0) + neq;
    int infer = 0;   /* a table of inference figures only (ResNet-50 features) */
    for (int c = 0; c < g.nc; c++)
        for (int r = 0; r < g.nr; r++)
            if (g.cell[r][c] && g.cell[r][c]->total_unit && strcmp(g.cell[r][c]->total_unit, "s/1,000 images") == 0) infer = 1;
    render_table *t = rb_new_table(d, g.nr, nc);
    render_fig *f = t ? rb_new_fig(d, RENDER_FIG_TABLE, render_printf(d->a, "bench-%s-table", rb_slug(d, wl)),
                                   render_printf(d->a, "%s: %s per device", wl, infer ? "inference time" : "training time per full epoch"))
                      : NULL;
    if (!f) return sd_err(SD_ENOMEM, "out of memory");
    t->row_head = "Implementation";
    t->groups = NEW(d, const char *, nc);
    if (!t->groups) return sd_err(SD_ENOMEM, "out of memory");
    /* measured and published side by side only in one unit: seconds per full epoch (projected from the timed
     * batches when the run cut its epochs), never a cut epoch beside a whole one */
    int proj_batches = 0;
    for (int c = 0; c < g.nc; c++)
        for (int r = 0; r < g.nr; r++) {
            int pj = 0;
            if (!g.pub[c] && g.cell[r][c] && !g.cell[r][c]->failed && (rb_full_epoch_s(g.cell[r][c], &pj), pj))
                proj_batches = g.cell[r][c]->max_batches;
        }
    time_columns(d, &g, t, infer, proj_batches);
    check_columns(&g, t, nacc, neq);
    for (int r = 0; r < g.nr; r++) t->rows[r] = g.rows[r];
    f->u.table = t;
    f->note = table_note(d, &g, t, proj_batches);
    return rb_add_fig(d, f);
}

int rb_sec_bench_tables(rdoc *d, const rt_section *s) {
    const char *wl[64];
    int nw = rb_workloads(d, wl, 64);
    (void)s;
    for (int w = 0; w < nw; w++) SD_TRY(bench_table(d, wl[w]));
    return nw ? 0 : 1;
}

/* Each workload's figure by one(d, s, workload, its grid): 1 added, 0 none for that workload. The section: 0 when
 * any workload added one, 1 when none did (no data), or an error. */
static int per_workload(rdoc *d, const rt_section *s, int (*one)(rdoc *, const rt_section *, const char *, const grid *)) {
    const char *wl[64];
    int nw = rb_workloads(d, wl, 64), added = 0;
    for (int w = 0; w < nw; w++) {
        grid g;
        make_grid(d, wl[w], &g);
        int rc = one(d, s, wl[w], &g);
        if (rc < 0) return rc;
        added += rc;
    }
    return added ? 0 : 1;
}

static int chart_of(rdoc *d, const rt_section *s, const char *wl, const grid *g) {
    (void)s;
    int cols[64], ns = 0, any = 0;
    for (int c = 0; c < g->nc; c++) if (!g->pub[c]) cols[ns++] = c;
    if (ns == 0 || g->nr == 0) return 0;
    /* only rows that have a measured run */
    int rows[64], nr = 0;
    for (int r = 0; r < g->nr; r++) {
        int has = 0;
        for (int k = 0; k < ns; k++) has |= g->cell[r][cols[k]] != NULL && !g->cell[r][cols[k]]->failed;
        if (has) rows[nr++] = r;
    }
    render_bar *b = rb_new_bar(d, nr, ns);
    if (!b) return sd_err(SD_ENOMEM, "out of memory");
    b->lo = NEW(d, double, nr * ns);
    b->hi = NEW(d, double, nr * ns);
    if (!b->lo || !b->hi) return sd_err(SD_ENOMEM, "out of memory");
    double mx = 0;
    int projected = 0;
    for (int k = 0; k < ns; k++) b->series[k] = g->cols[cols[k]];
    for (int i = 0; i < nr; i++) {
        b->groups[i] = g->rows[rows[i]];
        for (int k = 0; k < ns; k++) {
            const rm_run *r = g->cell[rows[i]][cols[k]];
            int j = i * ns + k;
            b->lo[j] = b->hi[j] = NAN;
            if (!r || r->failed) continue;
            int pj;   /* per full epoch, as the tables: a cut epoch's spread scaled with it */
            double full = rb_full_epoch_s(r, &pj), scale = pj ? full / r->steady_epoch_s.median : 1;
            b->v[j] = full;
            b->lo[j] = r->steady_epoch_s.min * scale;
            b->hi[j] = r->steady_epoch_s.max * scale;
            if (pj) projected = r->max_batches;
            if (!isnan(b->v[j])) any = 1;
            if (b->v[j] > mx) mx = b->v[j];
        }
    }
    if (!any) return 0;
    b->dec = rb_time_decimals(mx);
    b->xlabel = projected ? "time per full epoch (s), projected: median, whiskers min–max"
                          : "time per full epoch (s), steady state: median, whiskers min–max";
    render_fig *f = rb_new_fig(d, RENDER_FIG_BAR, render_printf(d->a, "bench-%s-chart", rb_slug(d, wl)),
                               render_printf(d->a, "%s: time per full epoch", wl));
    if (!f) return sd_err(SD_ENOMEM, "out of memory");
    f->u.bar = b;
    if (projected)
        f->note = render_printf(d->a, "Projected to the data set's full epoch from a steady epoch cut to %d batches.", projected);
    SD_TRY(rb_add_fig(d, f));
    return 1;
}

int rb_sec_bench_charts(rdoc *d, const rt_section *s) { return per_workload(d, s, chart_of); }

static int accuracy_of(rdoc *d, const rt_section *s, const char *wl, const grid *g) {
    (void)s;
    int nmeas = 0;
    for (int c = 0; c < g->nc; c++) nmeas += !g->pub[c];
    render_line *l = NEW(d, render_line, 1);
    if (!l) return sd_err(SD_ENOMEM, "out of memory");
    l->series = NEW(d, const char *, g->nr * g->nc);
    l->npts = NEW(d, int, g->nr * g->nc);
    l->x = NEW(d, double *, g->nr * g->nc);
    l->y = NEW(d, double *, g->nr * g->nc);
    if (!l->series || !l->npts || !l->x || !l->y) return sd_err(SD_ENOMEM, "out of memory");
    for (int r = 0; r < g->nr; r++)
        for (int c = 0; c < g->nc; c++) {
            const rm_run *run = g->cell[r][c];
            if (!run || g->pub[c] || run->failed || run->nepochs == 0) continue;
            int has = 0;
            for (int e = 0; e < run->nepochs; e++) has |= !isnan(run->epochs[e].accuracy);
            if (!has) continue;
            int k = l->nseries++;
            l->series[k] = nmeas > 1 ? render_printf(d->a, "%s on %s", g->rows[r], g->cols[c]) : g->rows[r];
            l->npts[k] = run->nepochs;
            l->x[k] = NEW(d, double, run->nepochs);
            l->y[k] = NEW(d, double, run->nepochs);
            if (!l->x[k] || !l->y[k]) return sd_err(SD_ENOMEM, "out of memory");
            for (int e = 0; e < run->nepochs; e++) {
                l->x[k][e] = run->epochs[e].epoch;
                l->y[k][e] = run->epochs[e].accuracy;
            }
        }
    if (l->nseries == 0) return 0;
    /* the whole 0–1 scale: a 1.6-point wiggle must not look like a trend */
    l->ymin = 0;
    l->ymax = 1;
    l->xlabel = "epoch";
    l->ylabel = "test accuracy";
    l->x_integer = 1;
    render_fig *f = rb_new_fig(d, RENDER_FIG_LINE, render_printf(d->a, "accuracy-%s", rb_slug(d, wl)),
                               render_printf(d->a, "%s: test accuracy per epoch (median over repeats)", wl));
    if (!f) return sd_err(SD_ENOMEM, "out of memory");
    f->u.line = l;
    SD_TRY(rb_add_fig(d, f));
    return 1;
}

int rb_sec_accuracy(rdoc *d, const rt_section *s) { return per_workload(d, s, accuracy_of); }

static int first_steady_of(rdoc *d, const rt_section *s, const char *wl, const grid *g) {
    const rm_run *runs[256];
    const char *labels[256];
    int n = 0;
    int nmeas = 0;
    for (int c = 0; c < g->nc; c++) nmeas += !g->pub[c];
    for (int r = 0; r < g->nr; r++)
        for (int c = 0; c < g->nc && n < 256; c++) {
            const rm_run *run = g->cell[r][c];
            if (!run || g->pub[c] || run->failed) continue;
            if (isnan(run->first_epoch_s.median) && isnan(run->steady_epoch_s.median)) continue;
            runs[n] = run;
            labels[n++] = nmeas > 1 ? render_printf(d->a, "%s on %s", g->rows[r], g->cols[c]) : g->rows[r];
        }
    if (n == 0) return 0;
    const char *slug = rb_slug(d, wl);
    if (s->show & RT_SHOW_CHART) {
        render_bar *b = rb_new_bar(d, n, 2);
        render_fig *f = b ? rb_new_fig(d, RENDER_FIG_BAR, render_printf(d->a, "first-steady-%s-chart", slug),
                                       render_printf(d->a, "%s: first epoch vs steady state", wl)) : NULL;
        if (!f) return sd_err(SD_ENOMEM, "out of memory");
        b->series[0] = "first epoch";
        b->series[1] = "steady-state epoch (fastest)";
        b->colors = NEW(d, int, 2);
        if (!b->colors) return sd_err(SD_ENOMEM, "out of memory");
        b->colors[0] = 3;
        b->colors[1] = 0;
        double mx = 0;
        for (int i = 0; i < n; i++) {
            b->groups[i] = labels[i];
            b->v[i * 2] = runs[i]->first_epoch_s.median;
            b->v[i * 2 + 1] = runs[i]->steady_epoch_s.median;
            if (b->v[i * 2] > mx) mx = b->v[i * 2];
        }
        b->dec = rb_time_decimals(mx);
        b->xlabel = "epoch time (s)";
        f->u.bar = b;
        SD_TRY(rb_add_fig(d, f));
    }
    if (s->show & RT_SHOW_TABLE) {
        render_table *t = rb_new_table(d, n, 5);
        render_fig *f = t ? rb_new_fig(d, RENDER_FIG_TABLE, render_printf(d->a, "first-steady-%s-table", slug),
                                       render_printf(d->a, "%s: warm-up, steady state, validation, throughput", wl)) : NULL;
        if (!f) return sd_err(SD_ENOMEM, "out of memory");
        static const char *const cn[] = {"First epoch", "Steady epoch", "First / steady", "Validation", "Throughput"};
        static const char *const un[] = {"s", "s, median", "×", "s, median", "images/s"};
        static const signed char bst[] = {-1, -1, 0, -1, 1};
        for (int c = 0; c < 5; c++) { t->cols[c] = cn[c]; t->units[c] = un[c]; t->best[c] = bst[c]; }
        t->row_head = "Implementation";
        double mx = 0;
        for (int i = 0; i < n; i++) {
            const rm_run *r = runs[i];
            t->rows[i] = labels[i];
            t->v[i * 5] = r->first_epoch_s.median;
            t->v[i * 5 + 1] = r->steady_epoch_s.median;
            t->v[i * 5 + 2] = r->first_epoch_s.median / r->steady_epoch_s.median;
            t->v[i * 5 + 3] = r->val_s.median;
            t->v[i * 5 + 4] = r->images_per_s.median;
            if (r->first_epoch_s.median > mx) mx = r->first_epoch_s.median;
        }
        t->dec[0] = t->dec[1] = t->dec[3] = rb_time_decimals(mx);
        t->dec[2] = 2;
        t->dec[4] = 0;
        f->u.table = t;
        SD_TRY(rb_add_fig(d, f));
    }
    return 1;
}

int rb_sec_first_steady(rdoc *d, const rt_section *s) { return per_workload(d, s, first_steady_of); }
