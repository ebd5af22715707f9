/* report_frameworks — frameworks against the native floor: each framework's training throughput beside the
 * fastest native back-end's on the same workloads, and whether it built the same model. */
#include "render/report_sections.h"
#include "core/err.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The native floor of a workload: its fastest measured native run (highest training throughput). */
const rm_run *rb_native_floor(const rdoc *d, const char *wl) {
    const rm_run *best = NULL;
    for (int i = 0; i < d->m->nruns; i++) {
        const rm_run *r = &d->m->runs[i];
        if (!rb_is_measured(r) || !rb_is_native(r) || strcmp(r->workload, wl) != 0 || isnan(r->images_per_s.median)) continue;
        if (!best || r->images_per_s.median > best->images_per_s.median) best = r;
    }
    return best;
}

/* A framework's version as its runner reported it ("1.13.0a0+git..." cut at the '+'), or NULL. */
const char *rb_fw_version(rdoc *d, const char *impl) {
    const char *v = render_model_env(d->m, impl);
    return v ? render_printf(d->a, "%.*s", (int)strcspn(v, "+ "), v) : NULL;
}

const char *rb_impl_label(rdoc *d, const rm_run *r) {
    if (rb_is_native(r)) return render_printf(d->a, "native · %s", rb_backend_name(r->backend) ? rb_backend_name(r->backend) : "?");
    const char *v = rb_fw_version(d, r->implementation);
    return v ? render_printf(d->a, "%s %s", r->implementation, v) : r->implementation;
}

/* Frameworks (not native) with at least one run in the results, in order of appearance; measured[i] says
 * whether any of its runs has figures. */
int rb_framework_names(const rdoc *d, const char **names, int *measured, int max) {
    int n = 0;
    for (int i = 0; i < d->m->nruns; i++) {
        const rm_run *r = &d->m->runs[i];
        if (r->published || rb_is_native(r)) continue;
        int k = 0;
        while (k < n && strcmp(names[k], r->implementation) != 0) k++;
        if (k == n) {
            if (n == max) continue;
            names[n] = r->implementation;
            measured[n++] = 0;
        }
        if (!r->failed) measured[k] = 1;
    }
    return n;
}

/* The run of impl on workload wl (measured first, else a failed one), or NULL. */
const rm_run *rb_run_of(const rdoc *d, const char *wl, const char *impl) {
    const rm_run *failed = NULL;
    for (int i = 0; i < d->m->nruns; i++) {
        const rm_run *r = &d->m->runs[i];
        if (r->published || strcmp(r->workload, wl) != 0 || strcmp(r->implementation, impl) != 0) continue;
        if (!r->failed) return r;
        failed = r;
    }
    return failed;
}

/* Workloads that have a native floor and at least one framework run. */
int rb_framework_workloads(rdoc *d, const char **out, int max) {
    const char *wl[64];
    int nw = rb_workloads(d, wl, 64), n = 0;
    for (int w = 0; w < nw && n < max; w++) {
        if (!rb_native_floor(d, wl[w])) continue;
        int any = 0;
        for (int i = 0; i < d->m->nruns && !any; i++)
            any = !d->m->runs[i].published && !rb_is_native(&d->m->runs[i]) && strcmp(d->m->runs[i].workload, wl[w]) == 0;
        if (any) out[n++] = wl[w];
    }
    return n;
}

const char *rb_not_installed(rdoc *d) {
    const char *names[32];
    int measured[32], n = rb_framework_names(d, names, measured, 32);
    char buf[512] = "";
    for (int k = 0; k < n; k++) {
        if (measured[k]) continue;
        int unavailable = 1;
        for (int i = 0; i < d->m->nruns; i++) {
            const rm_run *r = &d->m->runs[i];
            if (!r->published && strcmp(r->implementation, names[k]) == 0)
                unavailable &= r->status && strcmp(r->status, "unavailable") == 0;
        }
        if (!unavailable) continue;
        size_t l = strlen(buf);
        snprintf(buf + l, sizeof buf - l, "%s%s", l ? ", " : "", names[k]);
    }
    return buf[0] ? render_strdup(d->a, buf) : NULL;
}

/* Framework versions known to be behind their current release, by version prefix; which and why: docs/report.md
 * ("Outdated frameworks"). */
static const struct { const char *impl, *prefix; } outdated_versions[] = {
    {"pytorch", "1."},
};

int rb_outdated(const char *impl, const char *version) {
    for (size_t i = 0; version && i < sizeof outdated_versions / sizeof *outdated_versions; i++)
        if (strcmp(impl, outdated_versions[i].impl) == 0 &&
            strncmp(version, outdated_versions[i].prefix, strlen(outdated_versions[i].prefix)) == 0)
            return 1;
    return 0;
}

int rb_sec_frameworks(rdoc *d, const rt_section *s) {
    const char *wl[16], *names[32];
    int measured[32];
    int nw = rb_framework_workloads(d, wl, 16), nf = rb_framework_names(d, names, measured, 32);
    if (nw == 0 || nf == 0) return 1;
    const char *rows[33];
    int nr = 0;
    for (int k = 0; k < nf; k++) if (measured[k]) rows[nr++] = names[k];
    const char *missing = rb_not_installed(d);
    if (nr == 0) {
        SD_TRY(rb_add(d, RB_PARA, render_printf(d->a, "No framework runner could run here%s%s%s: only the native engine was "
                                                      "measured. `make deps-frameworks` installs them.",
                                                 missing ? " (not installed: " : "", missing ? missing : "", missing ? ")" : ""),
                      NULL));
        return 0;
    }
    int nc = 2 * nw + 1, repeats = 0, projected = 0;
    render_table *t = rb_new_table(d, nr + 1, nc);
    render_fig *f = t ? rb_new_fig(d, RENDER_FIG_TABLE, "frameworks-table", "Frameworks against the native floor: training throughput")
                      : NULL;
    if (!f) return sd_err(SD_ENOMEM, "out of memory");
    t->row_head = "Implementation";
    t->groups = NEW(d, const char *, nc);
    if (!t->groups) return sd_err(SD_ENOMEM, "out of memory");
    for (int w = 0; w < nw; w++) {
        t->cols[2 * w] = "images/s";
        t->cols[2 * w + 1] = "× native";
        t->units[2 * w] = "median";
        t->units[2 * w + 1] = "time";
        t->groups[2 * w] = t->groups[2 * w + 1] = wl[w];
        t->best[2 * w] = 1;
        t->dec[2 * w] = 0;
        t->dec[2 * w + 1] = 2;
    }
    t->cols[nc - 1] = "same model";
    t->units[nc - 1] = "forward vs native";
    t->groups[nc - 1] = "";
    for (int r = 0; r <= nr; r++) {
        const char *eq = NULL;
        for (int w = 0; w < nw; w++) {
            const rm_run *nat = rb_native_floor(d, wl[w]);
            const rm_run *run = r == 0 ? nat : rb_run_of(d, wl[w], rows[r - 1]);
            if (r == 0 && w == 0) t->rows[0] = rb_impl_label(d, nat);
            if (r > 0 && w == 0) t->rows[r] = rb_impl_label(d, &(rm_run){.implementation = rows[r - 1]});
            double *v = &t->v[r * nc + 2 * w];
            if (!run) { t->text[r * nc + 2 * w] = t->text[r * nc + 2 * w + 1] = "–"; continue; }
            if (run->failed) { t->text[r * nc + 2 * w] = t->text[r * nc + 2 * w + 1] = rb_status_word(run); continue; }
            v[0] = run->images_per_s.median;
            v[1] = nat->images_per_s.median / run->images_per_s.median;
            if (run->nrepeats > repeats) repeats = run->nrepeats;
            if (run->max_batches > 0) projected = run->max_batches;
            if (r > 0 && run->equivalence && (!eq || strncmp(run->equivalence, "passed", 6) != 0)) eq = run->equivalence;
        }
        t->text[r * nc + nc - 1] = r == 0 ? "the reference" : eq ? eq : "not checked";
    }
    f->u.table = t;
    const char *old = NULL;
    for (int k = 0; k < nr && !old; k++)
        if (rb_outdated(rows[k], rb_fw_version(d, rows[k])))
            old = render_printf(d->a, " %s %s is Debian's, not the current release: `make deps-frameworks` installs the "
                                      "current one.", rows[k], rb_fw_version(d, rows[k]));
    f->note = render_printf(d->a, "Training images per second, median of %d repeat%s%s; × native: how many times longer the "
                                  "same training takes than on the native floor (1 = as fast; the fastest native back-end). "
                                  "Same model: the framework built the workload with native's parameter count and its "
                                  "forward pass on native's initial weights matched native's (max relative difference).%s%s%s%s",
                            repeats, repeats == 1 ? "" : "s",
                            projected ? render_printf(d->a, " over epochs cut to %d batches", projected) : "",
                            missing ? " Not installed here: " : "", missing ? missing : "", missing ? "." : "", old ? old : "");
    SD_TRY(rb_add_fig(d, f));
    if (s->show & RT_SHOW_CHART) {
        render_bar *b = rb_new_bar(d, nr, nw);
        render_fig *g = b ? rb_new_fig(d, RENDER_FIG_BAR, "frameworks-chart", "Training time relative to the native floor") : NULL;
        if (!g) return sd_err(SD_ENOMEM, "out of memory");
        for (int w = 0; w < nw; w++) b->series[w] = wl[w];
        for (int r = 0; r < nr; r++) {
            b->groups[r] = t->rows[r + 1];
            for (int w = 0; w < nw; w++) b->v[r * nw + w] = t->v[(r + 1) * nc + 2 * w + 1];
        }
        b->dec = 1;
        b->xlabel = "training time ÷ native floor's (× ; 1 = as fast as native)";
        g->u.bar = b;
        g->note = "Zero-based axis. A missing bar: the framework did not run that workload (see the table).";
        SD_TRY(rb_add_fig(d, g));
    }
    return 0;
}
