/* report_build — turns the template's sections into blocks: headings, texts with their placeholders
 * filled from the inputs, and the figures and tables of each section. A section whose data are absent
 * adds nothing and is listed as omitted. */
#include "render/report_int.h"
#include "core/err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NEW(d, T, n) ((T *)render_alloc((d)->a, (size_t)(n) * sizeof(T) + 1))

int rb_add(rdoc *d, rb_kind k, const char *text, render_fig *fig) {
    if (d->n == d->cap) {
        int cap = d->cap ? d->cap * 2 : 64;
        rb_block *b = render_alloc(d->a, (size_t)cap * sizeof *b);
        if (!b) return sd_err(SD_ENOMEM, "out of memory");
        if (d->n) memcpy(b, d->b, (size_t)d->n * sizeof *b);
        d->b = b;
        d->cap = cap;
    }
    d->b[d->n++] = (rb_block){.kind = k, .text = text, .fig = fig};
    return 0;
}

const char *rb_slug(rdoc *d, const char *s) {
    size_t n = strlen(s);
    char *o = render_alloc(d->a, n + 2);
    if (!o) return "x";
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) o[k++] = c;
        else if (k > 0 && o[k - 1] != '-') o[k++] = '-';
    }
    while (k > 0 && o[k - 1] == '-') k--;
    if (k == 0) o[k++] = 'x';
    o[k] = 0;
    return o;
}

/* ---- facts the texts and figures share --------------------------------------------------------------- */
static const char *backend_name(const char *b) {
    if (!b) return NULL;
    if (strcmp(b, "ref") == 0 || strcmp(b, "reference") == 0) return "reference C";
    if (strcmp(b, "dnnl") == 0 || strcmp(b, "onednn") == 0) return "oneDNN";
    if (strcmp(b, "cudnn") == 0) return "cuDNN";
    return b;
}

/* The GPU model without count, vendor, family and variant: "Tesla V100-SXM2-16GB" -> "V100", "4x Tesla
 * V100-PCIE-16GB" -> "V100", "NVIDIA A100-SXM4-40GB" -> "A100", "NVIDIA GeForce RTX 4090" -> "RTX 4090". */
static const char *gpu_short(rdoc *d, const char *dev) {
    static const char *const drop[] = {"NVIDIA ", "Tesla ", "GeForce ", "Quadro ", NULL};
    size_t k = strspn(dev, "0123456789");   /* a published "4x Tesla V100": the count is given apart */
    if (k && strncmp(dev + k, "x ", 2) == 0) dev += k + 2;
    else if (k && strncmp(dev + k, "× ", strlen("× ")) == 0) dev += k + strlen("× ");
    for (int again = 1; again;) {
        again = 0;
        for (int i = 0; drop[i]; i++)
            if (strncmp(dev, drop[i], strlen(drop[i])) == 0) { dev += strlen(drop[i]); again = 1; }
    }
    return render_printf(d->a, "%.*s", (int)strcspn(dev, "-"), dev);
}

/* The column of a run: its device without the back-end detail ("CPU (oneDNN 2.6.3, 2 threads)" -> "CPU"),
 * so that back-ends on one device share a column and differ by row. GPU runs are grouped by device type and
 * count as the published multi-GPU tables are ("1×V100 | 4×V100"); so are CPU runs over several replicas
 * and published runs that give "gpus". */
static const char *device_of(rdoc *d, const rm_run *r) {
    const char *dev = "CPU";
    int gpu = r->backend && strcmp(r->backend, "cudnn") == 0;
    if (r->device) {
        const char *p = strstr(r->device, " (");
        dev = p ? render_printf(d->a, "%.*s", (int)(p - r->device), r->device) : r->device;
        if (strcasecmp(dev, "cpu") == 0) dev = "CPU";   /* framework runners say "cpu" */
    } else if (gpu) {
        dev = "GPU";
    }
    if (r->published ? r->gpus > 0 : gpu || r->gpus > 1)
        return render_printf(d->a, "%d×%s", r->gpus > 0 ? r->gpus : 1, gpu || r->published ? gpu_short(d, dev) : dev);
    return dev;
}

/* A framework run's backend is its device kind (cpu, cuda; auto when it did not start): the column says that. */
static int is_device_kind(const char *b) {
    return b && (strcmp(b, "cpu") == 0 || strcmp(b, "cuda") == 0 || strcmp(b, "auto") == 0);
}

/* A run's setting as text, or NULL. */
static const char *run_setting(const rm_run *r, const char *key) {
    const char *v = NULL;
    for (int k = 0; r && k < r->nsettings; k++)
        if (strcmp(r->settings[k].key, key) == 0) v = r->settings[k].value;
    return v;
}

static const char *row_of(rdoc *d, const rm_run *r) {
    const char *b = backend_name(r->backend);
    if (!b || strcmp(b, r->implementation) == 0 || r->published ||
        (strcmp(r->implementation, "native") != 0 && is_device_kind(r->backend)))
        return r->implementation;
    return render_printf(d->a, "%s · %s", r->implementation, b);
}

static const char *env_device(const rdoc *d) {
    static const char *const keys[] = {"device", "cpu_model", "cpu", "gpu", "machine", NULL};
    for (const char *const *k = keys; *k; k++) {
        const char *v = render_model_env(d->m, *k);
        if (v) return v;
    }
    return NULL;
}

static const char *backends_list(rdoc *d) {
    char buf[512] = "";
    for (int i = 0; i < d->m->nruns; i++) {
        const rm_run *r = &d->m->runs[i];
        /* the engine's back-ends; a framework run's "backend" is its device kind */
        if (r->published || r->failed || !r->backend || strcmp(r->implementation, "native") != 0) continue;
        const char *b = backend_name(r->backend);
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = !d->m->runs[j].published && !d->m->runs[j].failed && d->m->runs[j].backend &&
                   strcmp(d->m->runs[j].implementation, "native") == 0 && strcmp(backend_name(d->m->runs[j].backend), b) == 0;
        if (seen) continue;
        if (buf[0]) strncat(buf, ", ", sizeof buf - strlen(buf) - 1);
        strncat(buf, b, sizeof buf - strlen(buf) - 1);
    }
    return buf[0] ? render_strdup(d->a, buf) : NULL;
}

static int workloads(const rdoc *d, const char **out, int max) {
    int n = 0;
    for (int i = 0; i < d->m->nruns; i++) {
        const char *w = d->m->runs[i].workload;
        int seen = 0;
        for (int k = 0; k < n && !seen; k++) seen = strcmp(out[k], w) == 0;
        if (!seen && n < max) out[n++] = w;
    }
    return n;
}

static int n_measured(const rdoc *d) {
    int n = 0;
    for (int i = 0; i < d->m->nruns; i++) n += !d->m->runs[i].published && !d->m->runs[i].failed;
    return n;
}

static int n_missing_criteria(const rdoc *d) {
    const rm_scores *s = d->m->scores;
    int n = 0;
    if (!s) return 0;
    for (int f = 0; f < s->nfw; f++)
        for (int k = 0; k < s->ncrit; k++) n += isnan(s->fw[f].crit[k]);
    return n;
}

static const char *kind_date(const rdoc *d, const char *kind) {
    const char *best = NULL;
    for (int i = 0; i < d->m->nfiles; i++)
        if (strcmp(d->m->files[i].kind, kind) == 0 && d->m->files[i].as_of &&
            (!best || strcmp(d->m->files[i].as_of, best) > 0))
            best = d->m->files[i].as_of;
    return best;
}

static const char *placeholder(rdoc *d, const char *name, size_t n) {
#define IS(s) (strlen(s) == n && strncmp(name, s, n) == 0)
    const rm_scores *s = d->m->scores;
    const char *w[256];
    if (IS("title")) return d->t->title;
    if (IS("date")) return d->date ? d->date : "undated";
    if (IS("version")) return SD_VERSION;
    if (IS("commit")) return SD_GIT_COMMIT;
    if (IS("device")) { const char *v = env_device(d); return v ? v : "an unrecorded device"; }
    if (IS("backends")) { const char *v = backends_list(d); return v ? v : "none"; }
    if (IS("n_frameworks")) return render_printf(d->a, "%d", s ? s->nfw : 0);
    if (IS("n_runs")) return render_printf(d->a, "%d", n_measured(d));
    if (IS("n_workloads")) return render_printf(d->a, "%d", workloads(d, w, 256));
    if (IS("top_framework")) return s && s->nfw && !isnan(s->fw[0].overall) ? s->fw[0].name : "none";
    if (IS("top_score")) return s && s->nfw && !isnan(s->fw[0].overall) ? render_printf(d->a, "%.1f", s->fw[0].overall) : "missing";
    if (IS("scores_as_of")) { const char *v = kind_date(d, "scores"); return v ? v : s ? "undated" : "– (no scores)"; }
    if (IS("results_as_of")) {
        const char *v = kind_date(d, "results");
        return v ? v : n_measured(d) ? "undated" : "– (no results)";
    }
    if (IS("n_missing")) return render_printf(d->a, "%d", n_missing_criteria(d));
#undef IS
    return NULL;
}

const char *rb_expand(rdoc *d, const char *s) {
    if (!s) return NULL;
    size_t cap = strlen(s) * 2 + 256, k = 0;
    char *o = malloc(cap);
    if (!o) return s;
    for (const char *p = s; *p; p++) {
        const char *add = NULL;
        size_t alen = 0;
        char one[2] = {*p, 0};
        if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) { one[0] = *p; add = one; alen = 1; p++; }
        else if (*p == '{' && strchr(p, '}')) {
            const char *e = strchr(p, '}');
            add = placeholder(d, p + 1, (size_t)(e - p - 1));
            if (add) p = e; else add = one;
            alen = strlen(add);
        } else { add = one; alen = 1; }
        if (k + alen + 1 > cap) {
            cap = (k + alen + 1) * 2;
            char *q = realloc(o, cap);
            if (!q) { free(o); return s; }
            o = q;
        }
        memcpy(o + k, add, alen);
        k += alen;
    }
    o[k] = 0;
    const char *r = render_strdup(d->a, o);
    free(o);
    return r ? r : s;
}

/* ---- figure constructors ------------------------------------------------------------------------------ */
static render_fig *new_fig(rdoc *d, render_fig_kind k, const char *id, const char *title) {
    render_fig *f = NEW(d, render_fig, 1);
    if (!f) return NULL;
    f->kind = k;
    f->id = id;
    if (k == RENDER_FIG_TABLE) f->title = render_printf(d->a, "Table %d. %s", ++d->ntab, title);
    else f->title = render_printf(d->a, "Figure %d. %s", ++d->nfig, title);
    return f;
}

static render_table *new_table(rdoc *d, int nr, int nc) {
    render_table *t = NEW(d, render_table, 1);
    if (!t) return NULL;
    t->nrows = nr;
    t->ncols = nc;
    t->rows = NEW(d, const char *, nr);
    t->cols = NEW(d, const char *, nc);
    t->units = NEW(d, const char *, nc);
    t->v = NEW(d, double, nr * nc);
    t->text = NEW(d, const char *, nr * nc);
    t->best = NEW(d, signed char, nc);
    t->dec = NEW(d, int, nc);
    if (!t->rows || !t->cols || !t->units || !t->v || !t->text || !t->best || !t->dec) return NULL;
    for (int i = 0; i < nr * nc; i++) t->v[i] = NAN;
    for (int c = 0; c < nc; c++) t->dec[c] = 1;
    return t;
}

static render_bar *new_bar(rdoc *d, int ng, int ns) {
    render_bar *b = NEW(d, render_bar, 1);
    if (!b) return NULL;
    b->ngroups = ng;
    b->nseries = ns;
    b->groups = NEW(d, const char *, ng);
    b->series = NEW(d, const char *, ns);
    b->v = NEW(d, double, ng * ns);
    if (!b->groups || !b->series || !b->v) return NULL;
    for (int i = 0; i < ng * ns; i++) b->v[i] = NAN;
    return b;
}

static int add_fig(rdoc *d, render_fig *f) {
    if (!f) return sd_err(SD_ENOMEM, "out of memory");
    if (f->kind == RENDER_FIG_TABLE) d->st->tables++; else d->st->figures++;
    return rb_add(d, RB_FIG, NULL, f);
}

static int time_decimals(double max) { return max < 10 ? 2 : max < 1000 ? 1 : 0; }

/* ---- sections: scores ----------------------------------------------------------------------------------- */
static const char *fw_label(rdoc *d, const rm_framework *w) {
    return w->status ? render_printf(d->a, "%s (%s)", w->name, w->status) : w->name;
}

/* Where the scores come from, for the note of every figure drawn from them. */
static const char *scores_note(rdoc *d) {
    const rm_file *f = d->m->scores ? d->m->scores->file : NULL;
    if (!f) return "";
    return render_printf(d->a, "Scores as of %s%s%s%s.%s", f->as_of ? f->as_of : "an undated run", f->detail ? " (" : "",
                         f->detail ? f->detail : "", f->detail ? ")" : "",
                         d->m->scores->has_ranges ? " Each score is the midpoint of a range: missing inputs at 0 (lower) "
                         "and 100 (upper); frameworks are ranked and tiered on the lower bound." : "");
}

/* A range as text: "62–88", or the single value when the range is closed. */
static const char *range_text(rdoc *d, double lo, double hi) {
    if (isnan(lo) || isnan(hi)) return NULL;
    if (hi - lo < 0.05) return render_printf(d->a, "%.1f", lo);
    return render_printf(d->a, "%.0f–%.0f", lo, hi);
}

/* The scoring pages' preamble: how to read a range, then what each criterion measures. */
static int scores_preamble(rdoc *d, const rm_scores *sc) {
    SD_TRY(rb_add(d, RB_PARA, "How to read these scores. Each framework's score is a range: its lower end counts every "
                  "input showdown could not measure as the worst possible value, its upper end as the best. The number "
                  "shown is the middle of that range; the order and the tiers follow the lower end, so a framework never "
                  "climbs by lacking data. A wide range means \"not known\", not \"average\": the coverage column gives how "
                  "many inputs were measured (git history, network counts), hand-entered (with a source and a check date) "
                  "or missing, and a category marked * has fewer than half of its criteria with data (no tier). Activity "
                  "and status come from each project's own git history as of the snapshot's date.", NULL));
    char *g = NULL;
    for (int k = 0; k < sc->ncrit; k++)
        if (sc->crit_about && sc->crit_about[k])
            g = render_printf(d->a, "%s%s%s: %s.", g ? g : "Criteria. ", g ? " " : "", sc->crit_name[k], sc->crit_about[k]);
    if (g) SD_TRY(rb_add(d, RB_PARA, g, NULL));
    return 0;
}

static int sec_podium(rdoc *d, const rt_section *s) {
    const rm_scores *sc = d->m->scores;
    if (!sc || sc->nfw == 0) return 1;
    if (sc->has_ranges) SD_TRY(scores_preamble(d, sc));
    if (s->show & RT_SHOW_TABLE) {
        int has_tier = 0, rg = sc->has_ranges;
        for (int f = 0; f < sc->nfw; f++) has_tier |= sc->fw[f].tier != NULL;
        int nc = 1 + sc->ncat + has_tier + 2 * rg;   /* ranges: a range column after Overall, coverage at the end */
        render_table *t = new_table(d, sc->nfw, nc);
        render_fig *f = t ? new_fig(d, RENDER_FIG_TABLE, "podium-table", "Overall and category scores") : NULL;
        if (!f) return sd_err(SD_ENOMEM, "out of memory");
        t->row_head = "Framework";
        t->cols[0] = "Overall";
        if (rg) t->cols[1] = "Range";
        for (int c = 0; c < sc->ncat; c++) t->cols[1 + rg + c] = sc->cat_name[c];
        if (has_tier) t->cols[1 + rg + sc->ncat] = "Tier";
        if (rg) t->cols[nc - 1] = "Coverage";
        for (int c = 0; c < 1 + rg + sc->ncat; c++) { t->best[c] = 1; t->units[c] = "0–100"; }
        if (rg) t->units[nc - 1] = "meas./hand/miss.";
        for (int r = 0; r < sc->nfw; r++) {
            const rm_framework *w = &sc->fw[r];
            t->rows[r] = fw_label(d, w);
            t->v[r * nc] = w->overall;
            if (rg) t->text[r * nc + 1] = range_text(d, w->overall_lo, w->overall_hi);
            for (int c = 0; c < sc->ncat; c++) {
                t->v[r * nc + 1 + rg + c] = w->cat[c];
                const char *txt = rg ? range_text(d, w->cat_lo[c], w->cat_hi[c]) : NULL;
                if (txt) t->text[r * nc + 1 + rg + c] = w->cat_insufficient[c] ? render_printf(d->a, "%s*", txt) : txt;
            }
            if (has_tier) t->text[r * nc + 1 + rg + sc->ncat] = w->tier ? w->tier : "–";
            if (rg) t->text[r * nc + nc - 1] = w->cov_measured >= 0
                ? render_printf(d->a, "%d/%d/%d", w->cov_measured, w->cov_hand, w->cov_missing) : "–";
        }
        f->u.table = t;
        f->note = rg ? render_printf(d->a, "Overall = midpoint of the range; categories as lower–upper (* insufficient "
                                           "data: under half of the criteria with data). %s", scores_note(d))
                     : render_printf(d->a, "Category score = mean of its criteria that have data; overall = mean of the "
                                           "categories. %s", scores_note(d));
        SD_TRY(add_fig(d, f));
    }
    /* Without ranges a bar of the overall column would only repeat the table; with them it draws the ranges. */
    if ((s->show & RT_SHOW_CHART) && sc->has_ranges) {
        render_bar *b = new_bar(d, sc->nfw, 1);
        render_fig *f = b ? new_fig(d, RENDER_FIG_BAR, "podium-chart", "Overall score and its range") : NULL;
        if (!f) return sd_err(SD_ENOMEM, "out of memory");
        b->lo = NEW(d, double, sc->nfw);
        b->hi = NEW(d, double, sc->nfw);
        if (!b->lo || !b->hi) return sd_err(SD_ENOMEM, "out of memory");
        b->series[0] = "overall";
        for (int r = 0; r < sc->nfw; r++) {
            const rm_framework *w = &sc->fw[r];
            b->groups[r] = w->tier ? render_printf(d->a, "%s  (tier %s)", fw_label(d, w), w->tier) : fw_label(d, w);
            b->v[r] = w->overall;
            b->lo[r] = w->overall_lo;
            b->hi[r] = w->overall_hi;
        }
        b->xmax = 100;
        b->dec = 1;
        b->xlabel = "overall score (0–100): bar at the midpoint, whisker from lower to upper bound";
        f->u.bar = b;
        f->note = scores_note(d);
        SD_TRY(add_fig(d, f));
    }
    return 0;
}

static int crit_in_cat(const rm_scores *sc, int c, int *idx) {
    int n = 0;
    for (int k = 0; k < sc->ncrit; k++)
        if (sc->crit_cat[k] == c) idx[n++] = k;
    return n;
}

static int sec_radars(rdoc *d, const rt_section *s) {
    const rm_scores *sc = d->m->scores;
    if (!sc || sc->nfw == 0) return 1;
    int added = 0;
    if ((s->show & RT_SHOW_CATEGORIES) && sc->ncat >= 3) {
        render_radar *r = NEW(d, render_radar, 1);
        render_fig *f = r ? new_fig(d, RENDER_FIG_RADAR, "radar-categories", "Category scores of each framework (0–100)") : NULL;
        if (!f) return sd_err(SD_ENOMEM, "out of memory");
        r->naxes = sc->ncat;
        r->nseries = sc->nfw;
        r->axes = sc->cat_name;
        r->series = NEW(d, const char *, sc->nfw);
        r->subtitles = NEW(d, const char *, sc->nfw);
        r->colors = NEW(d, int, sc->nfw);
        r->v = NEW(d, double, sc->nfw * sc->ncat);
        r->max = 100;
        if (!r->series || !r->subtitles || !r->v || !r->colors) return sd_err(SD_ENOMEM, "out of memory");
        if (sc->has_ranges) {
            r->lo = NEW(d, double, sc->nfw * sc->ncat);
            r->hi = NEW(d, double, sc->nfw * sc->ncat);
            if (!r->lo || !r->hi) return sd_err(SD_ENOMEM, "out of memory");
        }
        for (int i = 0; i < sc->nfw; i++) {
            const rm_framework *w = &sc->fw[i];
            r->series[i] = fw_label(d, w);
            char ov[32];
            render_fmt_num(ov, sizeof ov, w->overall, 1);
            const char *rng = sc->has_ranges ? range_text(d, w->overall_lo, w->overall_hi) : NULL;
            if (rng) snprintf(ov + strlen(ov), sizeof ov - strlen(ov), " [%s]", rng);
            r->subtitles[i] = w->tier ? render_printf(d->a, "overall %s · tier %s", ov, w->tier) : render_printf(d->a, "overall %s", ov);
            for (int c = 0; c < sc->ncat; c++) {
                r->v[i * sc->ncat + c] = w->cat[c];
                if (r->lo) { r->lo[i * sc->ncat + c] = w->cat_lo[c]; r->hi[i * sc->ncat + c] = w->cat_hi[c]; }
            }
        }
        f->u.radar = r;
        f->note = scores_note(d);
        SD_TRY(add_fig(d, f));
        added++;
    }
    if (s->show & RT_SHOW_CRITERIA) {
        int *idx = NEW(d, int, sc->ncrit);
        if (!idx) return sd_err(SD_ENOMEM, "out of memory");
        for (int c = 0; c < sc->ncat; c++) {
            int n = crit_in_cat(sc, c, idx);
            if (n < 3) continue;   /* a radar needs three axes; the criteria bars show the rest */
            render_radar *r = NEW(d, render_radar, 1);
            render_fig *f = r ? new_fig(d, RENDER_FIG_RADAR, render_printf(d->a, "radar-%s", rb_slug(d, sc->cat_id[c])),
                                        render_printf(d->a, "%s: criteria of each framework (normalised 0–100)", sc->cat_name[c])) : NULL;
            if (!f) return sd_err(SD_ENOMEM, "out of memory");
            r->naxes = n;
            r->nseries = sc->nfw;
            r->axes = NEW(d, const char *, n);
            r->series = NEW(d, const char *, sc->nfw);
            r->colors = NEW(d, int, sc->nfw);
            r->v = NEW(d, double, sc->nfw * n);
            r->max = 100;
            if (!r->axes || !r->series || !r->v || !r->colors) return sd_err(SD_ENOMEM, "out of memory");
            if (sc->has_ranges) {   /* a missing criterion is drawn as its whole range, 0 to 100 */
                r->lo = NEW(d, double, sc->nfw * n);
                r->hi = NEW(d, double, sc->nfw * n);
                if (!r->lo || !r->hi) return sd_err(SD_ENOMEM, "out of memory");
            }
            for (int k = 0; k < n; k++) r->axes[k] = sc->crit_name[idx[k]];
            for (int i = 0; i < sc->nfw; i++) {
                r->series[i] = fw_label(d, &sc->fw[i]);
                r->colors[i] = c;
                for (int k = 0; k < n; k++) {
                    r->v[i * n + k] = sc->fw[i].crit[idx[k]];
                    if (r->lo) { r->lo[i * n + k] = sc->fw[i].crit_lo[idx[k]]; r->hi[i * n + k] = sc->fw[i].crit_hi[idx[k]]; }
                }
            }
            f->u.radar = r;
            f->note = scores_note(d);
            SD_TRY(add_fig(d, f));
            added++;
        }
    }
    return added ? 0 : 1;
}

static int sec_criteria(rdoc *d, const rt_section *s) {
    const rm_scores *sc = d->m->scores;
    if (!sc || sc->nfw == 0 || sc->ncrit == 0) return 1;
    int *idx = NEW(d, int, sc->ncrit);
    if (!idx) return sd_err(SD_ENOMEM, "out of memory");
    int added = 0;
    for (int c = 0; c < sc->ncat; c++) {
        int n = crit_in_cat(sc, c, idx);
        if (n == 0) continue;
        SD_TRY(rb_add(d, RB_H3, sc->cat_name[c], NULL));
        const char *slug = rb_slug(d, sc->cat_id[c]);
        {   /* the numbers always reach the Markdown and CSV; the PDF shows the table when asked */
            int pdf = (s->show & RT_SHOW_TABLE) != 0;
            render_table *t = new_table(d, sc->nfw, n + 1);
            render_fig *f = t ? new_fig(d, RENDER_FIG_TABLE, render_printf(d->a, "criteria-%s-table", slug),
                                        render_printf(d->a, "%s: criteria and category score", sc->cat_name[c])) : NULL;
            if (!f) return sd_err(SD_ENOMEM, "out of memory");
            t->row_head = "Framework";
            for (int k = 0; k < n; k++) { t->cols[k] = sc->crit_name[idx[k]]; t->dec[k] = 0; t->best[k] = 1; }
            t->cols[n] = "Category";
            t->best[n] = 1;
            for (int i = 0; i < sc->nfw; i++) {
                t->rows[i] = fw_label(d, &sc->fw[i]);
                for (int k = 0; k < n; k++) t->v[i * (n + 1) + k] = sc->fw[i].crit[idx[k]];
                t->v[i * (n + 1) + n] = sc->fw[i].cat[c];
            }
            f->u.table = t;
            SD_TRY(add_fig(d, f));
            if (!pdf) {   /* not in the PDF: no number in the PDF's sequence */
                d->b[d->n - 1].md_only = 1;
                d->ntab--;
                f->title = strstr(f->title, ". ") + 2;
            }
        }
        if (s->show & RT_SHOW_CHART) {
            render_bar *b = new_bar(d, sc->nfw, n);
            render_fig *f = b ? new_fig(d, RENDER_FIG_BAR, render_printf(d->a, "criteria-%s-chart", slug),
                                        render_printf(d->a, "%s: criteria (normalised 0–100)", sc->cat_name[c])) : NULL;
            if (!f) return sd_err(SD_ENOMEM, "out of memory");
            for (int k = 0; k < n; k++) b->series[k] = sc->crit_name[idx[k]];
            if (sc->has_ranges) {   /* parts criteria (activity, numerics) have a range of their own */
                b->lo = NEW(d, double, sc->nfw * n);
                b->hi = NEW(d, double, sc->nfw * n);
                if (!b->lo || !b->hi) return sd_err(SD_ENOMEM, "out of memory");
            }
            for (int i = 0; i < sc->nfw; i++) {
                b->groups[i] = fw_label(d, &sc->fw[i]);
                for (int k = 0; k < n; k++) {
                    b->v[i * n + k] = sc->fw[i].crit[idx[k]];
                    if (b->lo) { b->lo[i * n + k] = sc->fw[i].crit_lo[idx[k]]; b->hi[i * n + k] = sc->fw[i].crit_hi[idx[k]]; }
                }
            }
            b->xmax = 100;
            b->dec = 0;
            b->xlabel = "criterion score (0–100)";
            f->u.bar = b;
            f->note = scores_note(d);
            SD_TRY(add_fig(d, f));
        }
        added++;
    }
    /* why values are missing, where the scorer said: in the Markdown (long, per framework) */
    char *why = NULL;
    for (int i = 0; i < sc->nfw; i++)
        for (int k = 0; k < sc->ncrit; k++)
            if (isnan(sc->fw[i].crit[k]) && sc->fw[i].crit_why && sc->fw[i].crit_why[k])
                why = render_printf(d->a, "%s\n- %s, %s: %s", why ? why : "Why values are missing:", sc->fw[i].name,
                                    sc->crit_name[k], sc->fw[i].crit_why[k]);
    if (why) {
        SD_TRY(rb_add(d, RB_PARA, why, NULL));
        d->b[d->n - 1].md_only = 1;
    }
    return added ? 0 : 1;
}

/* ---- sections: benchmarks -------------------------------------------------------------------------------- */
typedef struct grid {
    int nr, nc;
    const char *rows[64], *cols[64];
    int pub[64];
    const rm_run *cell[64][64];
    const char *source;
    int repeats, epochs, nfailed;
    const rm_run *failed[16];   /* failed runs take no row or column; the table's note lists them */
} grid;

static int idx_of(const char **a, int *n, const char *s, int max) {
    for (int i = 0; i < *n; i++) if (strcmp(a[i], s) == 0) return i;
    if (*n >= max) return -1;
    a[*n] = s;
    return (*n)++;
}

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
            int row = idx_of(g->rows, &g->nr, row_of(d, r), 64);
            const char *col = !pass ? device_of(d, r)
                              : render_printf(d->a, "%s%s%.4s%s%s ", device_of(d, r),   /* the trailing space keeps it apart */
                                              r->file && r->file->as_of ? " · " : "", r->file && r->file->as_of ? r->file->as_of : "",
                                              mixed && r->data_kind ? " · " : "", mixed && r->data_kind ? r->data_kind : "");
            int c = idx_of(g->cols, &g->nc, col, 64);
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
        if (c == g->nc && (c = idx_of(g->cols, &g->nc, "CPU", 64)) < 0) continue;
        int row = idx_of(g->rows, &g->nr, r->implementation, 64);
        if (row >= 0 && !g->cell[row][c]) g->cell[row][c] = r;
    }
}

static double full_epoch_s(const rm_run *r, int *projected);

/* A setting's positive integer value ("10"), else 0. */
static int pos_int(const char *s) {
    char *e;
    long v = s ? strtol(s, &e, 10) : 0;
    return s && e != s && *e == 0 && v > 0 && v < 1000000 ? (int)v : 0;
}

/* The word a table cell shows for a run that has no figures. */
static const char *status_word(const rm_run *r) {
    return r->status && (strcmp(r->status, "unavailable") == 0 || strcmp(r->status, "unsupported") == 0) ? r->status
                                                                                                          : "failed";
}

static int sec_bench_tables(rdoc *d, const rt_section *s) {
    const char *wl[64];
    int nw = workloads(d, wl, 64), added = 0;
    (void)s;
    for (int w = 0; w < nw; w++) {
        grid g;
        make_grid(d, wl[w], &g);
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
        render_table *t = new_table(d, g.nr, nc);
        render_fig *f = t ? new_fig(d, RENDER_FIG_TABLE, render_printf(d->a, "bench-%s-table", rb_slug(d, wl[w])),
                                    render_printf(d->a, "%s: %s per device", wl[w], infer ? "inference time" : "training time per full epoch"))
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
                if (!g.pub[c] && g.cell[r][c] && !g.cell[r][c]->failed && (full_epoch_s(g.cell[r][c], &pj), pj))
                    proj_batches = g.cell[r][c]->max_batches;
            }
        const char *tg = infer ? "measured: time" : "measured here";
        /* published: "time for 10 epochs" when every published cell of the workload states the same count */
        const char *pep = NULL;
        int pep_same = 1;
        for (int c = 0; c < g.nc; c++)
            for (int r = 0; r < g.nr; r++) {
                const rm_run *run = g.cell[r][c];
                if (!g.pub[c] || !run || strcmp(run->total_unit ? run->total_unit : "s", "s") != 0) continue;
                const char *e = run_setting(run, "epochs");
                if (!e || (pep && strcmp(pep, e) != 0)) pep_same = 0;
                else pep = e;
            }
        int per_epoch = !infer && pep && pep_same;   /* a published total over a stated epoch count: divided */
        const char *pg = per_epoch ? render_printf(d->a, "published: per epoch (total ÷ %s)", pep) : "published";
        for (int c = 0; c < g.nc; c++) {
            t->cols[c] = g.cols[c];
            t->units[c] = "s";
            for (int r = 0; r < g.nr; r++)   /* a published column may hold s/epoch or s per 1,000 images */
                if (g.cell[r][c] && g.cell[r][c]->total_unit) { t->units[c] = g.cell[r][c]->total_unit; break; }
            if (!infer && strcmp(t->units[c], "s") == 0 && g.pub[c] && per_epoch) t->units[c] = "s/epoch";
            if (!infer && !g.pub[c]) t->units[c] = proj_batches ? "s/full epoch, projected" : "s/full epoch";
            t->best[c] = -1;
            t->groups[c] = g.pub[c] ? pg : tg;
            double mx = 0;
            int integral = 1;
            for (int r = 0; r < g.nr; r++) {
                const rm_run *run = g.cell[r][c];
                if (!run) { t->text[r * nc + c] = "–"; continue; }   /* not run there: not a missing value */
                if (run->failed) { t->text[r * nc + c] = status_word(run); continue; }
                double v = run->total_s.median;
                int pj;
                const char *ep = g.pub[c] ? run_setting(run, "epochs") : NULL;
                if (!infer && !g.pub[c]) v = full_epoch_s(run, &pj);
                else if (per_epoch && pos_int(ep) && strcmp(run->total_unit ? run->total_unit : "s", "s") == 0) v /= pos_int(ep);
                t->v[r * nc + c] = v;
                if (v > mx) mx = v;
                if (!isnan(v) && v != floor(v)) integral = 0;
            }
            t->dec[c] = integral ? 0 : time_decimals(mx);
        }
        int k = g.nc;
        for (int c = 0; c < g.nc && nacc; c++) {
            if (g.pub[c]) continue;
            t->cols[k] = g.cols[c];
            t->units[k] = "";
            t->best[k] = 1;
            t->dec[k] = 3;
            t->groups[k] = "test accuracy";
            for (int r = 0; r < g.nr; r++) {
                const rm_run *run = g.cell[r][c];
                if (!run) t->text[r * nc + k] = "–";
                else if (run->failed) t->text[r * nc + k] = status_word(run);
                else t->v[r * nc + k] = run->accuracy.median;
            }
            k++;
        }
        if (neq) {   /* "same model": the framework's forward pass on the native weights (showdown bench) */
            t->cols[k] = "forward vs native";
            t->units[k] = "max rel. diff";
            t->best[k] = 0;
            t->groups[k] = "same model";
            for (int r = 0; r < g.nr; r++) {
                const char *txt = "";   /* no run to check: an empty cell, not "–" (not run on that device) */
                for (int c = 0; c < g.nc; c++) {
                    const rm_run *run = g.cell[r][c];
                    if (!run || g.pub[c]) continue;
                    if (run->equivalence) txt = run->equivalence;
                    else if (strcmp(run->implementation, "native") == 0) txt = "reference";
                }
                t->text[r * nc + k] = txt;
            }
            k++;
        }
        for (int r = 0; r < g.nr; r++) t->rows[r] = g.rows[r];
        f->u.table = t;
        int cross = 0;
        for (int i = 0; i < g.nr * nc; i++) cross |= t->text[i] && strcmp(t->text[i], "–") == 0;
        f->note = render_printf(d->a, "%s%s%s%s%s%s", g.repeats ? render_printf(d->a, "Median of %d repeat%s.", g.repeats,
                                                                                   g.repeats == 1 ? "" : "s") : "Nothing measured here.",
                                proj_batches ? render_printf(d->a, " Measured epochs were cut to %d batches: the time of a full "
                                                                   "epoch of the data set is projected from their throughput.",
                                                             proj_batches) : "",
                                g.source ? " Published figures: " : "", g.source ? g.source : "", g.source ? "." : "",
                                cross ? " –: not run on that device." : "");
        const char *uninstalled = NULL;
        for (int i = 0; i < g.nfailed; i++) {
            const rm_run *r = g.failed[i];
            if (r->status && strcmp(r->status, "unavailable") == 0 && strcmp(r->implementation, "native") != 0) {
                uninstalled = uninstalled ? render_printf(d->a, "%s, %s", uninstalled, r->implementation) : r->implementation;
                continue;
            }
            const char *err = r->error ? r->error : "no reason recorded";
            const char *colon = strchr(err, ':');   /* the first clause of the error is the reason */
            if (strcmp(status_word(r), "failed") != 0) colon = NULL;   /* "unavailable: <why>", "unsupported: <op>" */
            f->note = render_printf(d->a, "%s Not run: %s (%.*s).", f->note, row_of(d, r),
                                    colon ? (int)(colon - err) : (int)strlen(err), err);
        }
        if (uninstalled)
            f->note = render_printf(d->a, "%s Not installed here: %s (`make deps-frameworks` installs them).", f->note, uninstalled);
        SD_TRY(add_fig(d, f));
        added++;
    }
    return added ? 0 : 1;
}

static int sec_bench_charts(rdoc *d, const rt_section *s) {
    const char *wl[64];
    int nw = workloads(d, wl, 64), added = 0;
    (void)s;
    for (int w = 0; w < nw; w++) {
        grid g;
        make_grid(d, wl[w], &g);
        int cols[64], ns = 0, any = 0;
        for (int c = 0; c < g.nc; c++) if (!g.pub[c]) cols[ns++] = c;
        if (ns == 0 || g.nr == 0) continue;
        /* only rows that have a measured run */
        int rows[64], nr = 0;
        for (int r = 0; r < g.nr; r++) {
            int has = 0;
            for (int k = 0; k < ns; k++) has |= g.cell[r][cols[k]] != NULL && !g.cell[r][cols[k]]->failed;
            if (has) rows[nr++] = r;
        }
        render_bar *b = new_bar(d, nr, ns);
        if (!b) return sd_err(SD_ENOMEM, "out of memory");
        b->lo = NEW(d, double, nr * ns);
        b->hi = NEW(d, double, nr * ns);
        if (!b->lo || !b->hi) return sd_err(SD_ENOMEM, "out of memory");
        double mx = 0;
        int projected = 0;
        for (int k = 0; k < ns; k++) b->series[k] = g.cols[cols[k]];
        for (int i = 0; i < nr; i++) {
            b->groups[i] = g.rows[rows[i]];
            for (int k = 0; k < ns; k++) {
                const rm_run *r = g.cell[rows[i]][cols[k]];
                int j = i * ns + k;
                b->lo[j] = b->hi[j] = NAN;
                if (!r || r->failed) continue;
                int pj;   /* per full epoch, as the tables: a cut epoch's spread scaled with it */
                double full = full_epoch_s(r, &pj), k = pj ? full / r->steady_epoch_s.median : 1;
                b->v[j] = full;
                b->lo[j] = r->steady_epoch_s.min * k;
                b->hi[j] = r->steady_epoch_s.max * k;
                if (pj) projected = r->max_batches;
                if (!isnan(b->v[j])) any = 1;
                if (b->v[j] > mx) mx = b->v[j];
            }
        }
        if (!any) continue;
        b->dec = time_decimals(mx);
        b->xlabel = projected ? "time per full epoch (s), projected: median, whiskers min–max"
                              : "time per full epoch (s), steady state: median, whiskers min–max";
        render_fig *f = new_fig(d, RENDER_FIG_BAR, render_printf(d->a, "bench-%s-chart", rb_slug(d, wl[w])),
                                render_printf(d->a, "%s: time per full epoch", wl[w]));
        if (!f) return sd_err(SD_ENOMEM, "out of memory");
        f->u.bar = b;
        if (projected)
            f->note = render_printf(d->a, "Projected to the data set's full epoch from a steady epoch cut to %d batches.", projected);
        SD_TRY(add_fig(d, f));
        added++;
    }
    return added ? 0 : 1;
}

static int sec_accuracy(rdoc *d, const rt_section *s) {
    const char *wl[64];
    int nw = workloads(d, wl, 64), added = 0;
    (void)s;
    for (int w = 0; w < nw; w++) {
        grid g;
        make_grid(d, wl[w], &g);
        int nmeas = 0;
        for (int c = 0; c < g.nc; c++) nmeas += !g.pub[c];
        render_line *l = NEW(d, render_line, 1);
        if (!l) return sd_err(SD_ENOMEM, "out of memory");
        l->series = NEW(d, const char *, g.nr * g.nc);
        l->npts = NEW(d, int, g.nr * g.nc);
        l->x = NEW(d, double *, g.nr * g.nc);
        l->y = NEW(d, double *, g.nr * g.nc);
        if (!l->series || !l->npts || !l->x || !l->y) return sd_err(SD_ENOMEM, "out of memory");
        for (int r = 0; r < g.nr; r++)
            for (int c = 0; c < g.nc; c++) {
                const rm_run *run = g.cell[r][c];
                if (!run || g.pub[c] || run->failed || run->nepochs == 0) continue;
                int has = 0;
                for (int e = 0; e < run->nepochs; e++) has |= !isnan(run->epochs[e].accuracy);
                if (!has) continue;
                int k = l->nseries++;
                l->series[k] = nmeas > 1 ? render_printf(d->a, "%s on %s", g.rows[r], g.cols[c]) : g.rows[r];
                l->npts[k] = run->nepochs;
                l->x[k] = NEW(d, double, run->nepochs);
                l->y[k] = NEW(d, double, run->nepochs);
                if (!l->x[k] || !l->y[k]) return sd_err(SD_ENOMEM, "out of memory");
                for (int e = 0; e < run->nepochs; e++) {
                    l->x[k][e] = run->epochs[e].epoch;
                    l->y[k][e] = run->epochs[e].accuracy;
                }
            }
        if (l->nseries == 0) continue;
        /* the whole 0–1 scale: a 1.6-point wiggle must not look like a trend */
        l->ymin = 0;
        l->ymax = 1;
        l->xlabel = "epoch";
        l->ylabel = "test accuracy";
        l->x_integer = 1;
        render_fig *f = new_fig(d, RENDER_FIG_LINE, render_printf(d->a, "accuracy-%s", rb_slug(d, wl[w])),
                                render_printf(d->a, "%s: test accuracy per epoch (median over repeats)", wl[w]));
        if (!f) return sd_err(SD_ENOMEM, "out of memory");
        f->u.line = l;
        SD_TRY(add_fig(d, f));
        added++;
    }
    return added ? 0 : 1;
}

static int sec_first_steady(rdoc *d, const rt_section *s) {
    const char *wl[64];
    int nw = workloads(d, wl, 64), added = 0;
    for (int w = 0; w < nw; w++) {
        grid g;
        make_grid(d, wl[w], &g);
        const rm_run *runs[256];
        const char *labels[256];
        int n = 0;
        int nmeas = 0;
        for (int c = 0; c < g.nc; c++) nmeas += !g.pub[c];
        for (int r = 0; r < g.nr; r++)
            for (int c = 0; c < g.nc && n < 256; c++) {
                const rm_run *run = g.cell[r][c];
                if (!run || g.pub[c] || run->failed) continue;
                if (isnan(run->first_epoch_s.median) && isnan(run->steady_epoch_s.median)) continue;
                runs[n] = run;
                labels[n++] = nmeas > 1 ? render_printf(d->a, "%s on %s", g.rows[r], g.cols[c]) : g.rows[r];
            }
        if (n == 0) continue;
        const char *slug = rb_slug(d, wl[w]);
        if (s->show & RT_SHOW_CHART) {
            render_bar *b = new_bar(d, n, 2);
            render_fig *f = b ? new_fig(d, RENDER_FIG_BAR, render_printf(d->a, "first-steady-%s-chart", slug),
                                        render_printf(d->a, "%s: first epoch vs steady state", wl[w])) : NULL;
            if (!f) return sd_err(SD_ENOMEM, "out of memory");
            b->series[0] = "first epoch";
            b->series[1] = "steady-state epoch (median)";
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
            b->dec = time_decimals(mx);
            b->xlabel = "epoch time (s)";
            f->u.bar = b;
            SD_TRY(add_fig(d, f));
        }
        if (s->show & RT_SHOW_TABLE) {
            render_table *t = new_table(d, n, 5);
            render_fig *f = t ? new_fig(d, RENDER_FIG_TABLE, render_printf(d->a, "first-steady-%s-table", slug),
                                        render_printf(d->a, "%s: warm-up, steady state, validation, throughput", wl[w])) : NULL;
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
            t->dec[0] = t->dec[1] = t->dec[3] = time_decimals(mx);
            t->dec[2] = 2;
            t->dec[4] = 0;
            f->u.table = t;
            SD_TRY(add_fig(d, f));
        }
        added++;
    }
    return added ? 0 : 1;
}

/* ---- frameworks against the native floor --------------------------------------------------------------------- */
static int is_native(const rm_run *r) { return strcmp(r->implementation, "native") == 0; }

static int is_measured(const rm_run *r) { return !r->published && !r->failed; }

/* The native floor of a workload: its fastest measured native run (highest training throughput). */
static const rm_run *native_floor(const rdoc *d, const char *wl) {
    const rm_run *best = NULL;
    for (int i = 0; i < d->m->nruns; i++) {
        const rm_run *r = &d->m->runs[i];
        if (!is_measured(r) || !is_native(r) || strcmp(r->workload, wl) != 0 || isnan(r->images_per_s.median)) continue;
        if (!best || r->images_per_s.median > best->images_per_s.median) best = r;
    }
    return best;
}

/* A framework's version as its runner reported it ("1.13.0a0+git..." cut at the '+'), or NULL. */
static const char *fw_version(rdoc *d, const char *impl) {
    const char *v = render_model_env(d->m, impl);
    return v ? render_printf(d->a, "%.*s", (int)strcspn(v, "+ "), v) : NULL;
}

static const char *impl_label(rdoc *d, const rm_run *r) {
    if (is_native(r)) return render_printf(d->a, "native · %s", backend_name(r->backend) ? backend_name(r->backend) : "?");
    const char *v = fw_version(d, r->implementation);
    return v ? render_printf(d->a, "%s %s", r->implementation, v) : r->implementation;
}

/* Seconds for one full epoch of the data set: the steady epoch when epochs were whole, else projected from the
 * timed batches' throughput (*projected = 1). NAN when neither is recorded. */
static double full_epoch_s(const rm_run *r, int *projected) {
    *projected = 0;
    if (r->max_batches > 0 && !r->epoch_examples) { *projected = 1; return NAN; }   /* cut, and the full size unknown */
    if (r->max_batches > 0 && r->batch > 0 && r->epoch_examples > (long long)r->max_batches * r->batch) {
        *projected = 1;
        double ips = r->images_per_s.median;
        return ips > 0 ? (double)r->epoch_examples / ips : NAN;
    }
    return !isnan(r->steady_epoch_s.median) ? r->steady_epoch_s.median : r->first_epoch_s.median;
}

/* Frameworks (not native) with at least one run in the results, in order of appearance; measured[i] says
 * whether any of its runs has figures. */
static int framework_names(const rdoc *d, const char **names, int *measured, int max) {
    int n = 0;
    for (int i = 0; i < d->m->nruns; i++) {
        const rm_run *r = &d->m->runs[i];
        if (r->published || is_native(r)) continue;
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
static const rm_run *run_of(const rdoc *d, const char *wl, const char *impl) {
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
static int framework_workloads(rdoc *d, const char **out, int max) {
    const char *wl[64];
    int nw = workloads(d, wl, 64), n = 0;
    for (int w = 0; w < nw && n < max; w++) {
        if (!native_floor(d, wl[w])) continue;
        int any = 0;
        for (int i = 0; i < d->m->nruns && !any; i++)
            any = !d->m->runs[i].published && !is_native(&d->m->runs[i]) && strcmp(d->m->runs[i].workload, wl[w]) == 0;
        if (any) out[n++] = wl[w];
    }
    return n;
}

static const char *not_installed(rdoc *d) {
    const char *names[32];
    int measured[32], n = framework_names(d, names, measured, 32);
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

/* A measured framework older than its current release: Debian's PyTorch 1.13. */
static int outdated(const char *impl, const char *version) {
    return version && strcmp(impl, "pytorch") == 0 && strncmp(version, "1.", 2) == 0;
}

static int sec_frameworks(rdoc *d, const rt_section *s) {
    const char *wl[16], *names[32];
    int measured[32];
    int nw = framework_workloads(d, wl, 16), nf = framework_names(d, names, measured, 32);
    if (nw == 0 || nf == 0) return 1;
    const char *rows[33];
    int nr = 0;
    for (int k = 0; k < nf; k++) if (measured[k]) rows[nr++] = names[k];
    const char *missing = not_installed(d);
    if (nr == 0) {
        SD_TRY(rb_add(d, RB_PARA, render_printf(d->a, "No framework runner could run here%s%s%s: only the native engine was "
                                                      "measured. `make deps-frameworks` installs them.",
                                                 missing ? " (not installed: " : "", missing ? missing : "", missing ? ")" : ""),
                      NULL));
        return 0;
    }
    int nc = 2 * nw + 1, repeats = 0, projected = 0;
    render_table *t = new_table(d, nr + 1, nc);
    render_fig *f = t ? new_fig(d, RENDER_FIG_TABLE, "frameworks-table", "Frameworks against the native floor: training throughput")
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
            const rm_run *nat = native_floor(d, wl[w]);
            const rm_run *run = r == 0 ? nat : run_of(d, wl[w], rows[r - 1]);
            if (r == 0 && w == 0) t->rows[0] = impl_label(d, nat);
            if (r > 0 && w == 0) t->rows[r] = impl_label(d, &(rm_run){.implementation = rows[r - 1]});
            double *v = &t->v[r * nc + 2 * w];
            if (!run) { t->text[r * nc + 2 * w] = t->text[r * nc + 2 * w + 1] = "–"; continue; }
            if (run->failed) { t->text[r * nc + 2 * w] = t->text[r * nc + 2 * w + 1] = status_word(run); continue; }
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
        if (outdated(rows[k], fw_version(d, rows[k])))
            old = render_printf(d->a, " %s %s is Debian's, not the current release: `make deps-frameworks` installs the "
                                      "current one.", rows[k], fw_version(d, rows[k]));
    f->note = render_printf(d->a, "Training images per second, median of %d repeat%s%s; × native: how many times longer the "
                                  "same training takes than on the native floor (1 = as fast; the fastest native back-end). "
                                  "Same model: the framework built the workload with native's parameter count and its "
                                  "forward pass on native's initial weights matched native's (max relative difference).%s%s%s%s",
                            repeats, repeats == 1 ? "" : "s",
                            projected ? render_printf(d->a, " over epochs cut to %d batches", projected) : "",
                            missing ? " Not installed here: " : "", missing ? missing : "", missing ? "." : "", old ? old : "");
    SD_TRY(add_fig(d, f));
    if (s->show & RT_SHOW_CHART) {
        render_bar *b = new_bar(d, nr, nw);
        render_fig *g = b ? new_fig(d, RENDER_FIG_BAR, "frameworks-chart", "Training time relative to the native floor") : NULL;
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
        SD_TRY(add_fig(d, g));
    }
    return 0;
}

/* ---- page-1 summary ----------------------------------------------------------------------------------------- */
/* Appends to a growing text in the arena. */
static const char *cat(rdoc *d, const char *a, const char *sep, const char *b) {
    return a && a[0] ? render_printf(d->a, "%s%s%s", a, sep, b) : b;
}

/* Whether s contains word, ignoring ASCII case. */
static int has_ci(const char *s, const char *word) {
    size_t n = strlen(word);
    for (; *s; s++)
        if (strncasecmp(s, word, n) == 0) return 1;
    return 0;
}

/* The data set a run read, by name: "Fashion-MNIST", "CIFAR-10", or what its source says. */
static const char *dataset_name(rdoc *d, const rm_run *r) {
    const char *src = r->data_source ? r->data_source : r->data ? r->data : "";
    int syn = r->data_kind && strcmp(r->data_kind, "synthetic") == 0;
    const char *shape = strncmp(r->workload, "cifar10", 7) == 0 ? "CIFAR-10" : strncmp(r->workload, "mnist", 5) == 0 ? "MNIST"
                        : NULL;
    if (syn) return shape ? render_printf(d->a, "synthetic (seeded random images shaped as %s; accuracy meaningless)", shape)
                          : "synthetic (seeded random data; accuracy meaningless)";
    if (has_ci(src, "fashion")) return "Fashion-MNIST (real; not the digits: its accuracies run lower than MNIST's)";
    if (has_ci(src, "mnist")) return "MNIST (real)";
    if (has_ci(src, "cifar")) return "CIFAR-10 (real)";
    if (!r->data_kind) return "not recorded";
    return render_printf(d->a, "%s (%s)", src[0] ? src : "unnamed", r->data_kind);
}

static const char *summary_data(rdoc *d) {
    const char *names[32], *wls[32];
    int n = 0;
    for (int i = 0; i < d->m->nruns; i++) {
        const rm_run *r = &d->m->runs[i];
        if (!is_measured(r)) continue;
        const char *nm = dataset_name(d, r);
        int k = 0;
        while (k < n && strcmp(names[k], nm) != 0) k++;
        if (k == n) { if (n == 32) continue; names[n] = nm; wls[n++] = r->workload; continue; }
        if (!strstr(wls[k], r->workload)) wls[k] = render_printf(d->a, "%s, %s", wls[k], r->workload);
    }
    const char *out = NULL;
    for (int k = 0; k < n; k++) out = cat(d, out, "; ", render_printf(d->a, "%s: %s", wls[k], names[k]));
    return out;
}

static const char *summary_length(rdoc *d) {
    int epochs = 0, batches = 0, batch = 0, repeats = 0, any = 0;
    for (int i = 0; i < d->m->nruns; i++) {
        const rm_run *r = &d->m->runs[i];
        if (!is_measured(r)) continue;
        any = 1;
        int e = pos_int(run_setting(r, "epochs"));
        if (e > epochs) epochs = e;
        if (r->max_batches > batches) batches = r->max_batches;
        if (r->batch > batch) batch = r->batch;
        if (r->nrepeats > repeats) repeats = r->nrepeats;
    }
    if (!any) return NULL;
    const char *list = NULL;
    for (int i = 0; i < d->m->nruns; i++) {
        const rm_run *r = &d->m->runs[i];
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = !d->m->runs[j].published && strcmp(d->m->runs[j].workload, r->workload) == 0;
        if (!r->published && !seen) list = cat(d, list, ",", r->workload);
    }
    return render_printf(d->a, "%d epoch%s per run%s, %d repeat%s (medians shown). %s Full length (whole epochs): `make report "
                               "REPORT_BENCH_ARGS='--repeat 3'`, or `./showdown bench --workload %s --impl all --repeat 3`.",
                         epochs, epochs == 1 ? "" : "s",
                         batches ? render_printf(d->a, ", each cut to %d batches of %d images", batches, batch) : "", repeats,
                         repeats == 1 ? "" : "s",
                         batches ? "A short first try: times per full epoch are projected from the timed batches." : "",
                         list ? list : "W");
}

static const char *summary_fastest(rdoc *d) {
    const char *wl[64], *out = NULL;
    int nw = workloads(d, wl, 64);
    for (int w = 0; w < nw; w++) {
        const rm_run *best = NULL;
        for (int i = 0; i < d->m->nruns; i++) {
            const rm_run *r = &d->m->runs[i];
            if (!is_measured(r) || strcmp(r->workload, wl[w]) != 0 || isnan(r->images_per_s.median)) continue;
            if (!best || r->images_per_s.median > best->images_per_s.median) best = r;
        }
        if (!best) continue;
        char v[32];
        render_fmt_num(v, sizeof v, best->images_per_s.median, 0);
        out = cat(d, out, "; ", render_printf(d->a, "%s: %s (%s images/s)", wl[w], impl_label(d, best), v));
    }
    return out;
}

static const char *summary_overhead(rdoc *d) {
    const char *wl[16], *names[32], *out = NULL;
    int measured[32], nw = framework_workloads(d, wl, 16), nf = framework_names(d, names, measured, 32);
    for (int k = 0; k < nf; k++) {
        if (!measured[k]) continue;
        const char *one = NULL;
        for (int w = 0; w < nw; w++) {
            const rm_run *nat = native_floor(d, wl[w]), *r = run_of(d, wl[w], names[k]);
            if (!r || r->failed || isnan(r->images_per_s.median)) continue;
            one = cat(d, one, ", ", render_printf(d->a, "%.1f× (%s)", nat->images_per_s.median / r->images_per_s.median, wl[w]));
        }
        if (one) out = cat(d, out, "; ", render_printf(d->a, "%s: %s", impl_label(d, &(rm_run){.implementation = names[k]}), one));
    }
    return out ? render_printf(d->a, "%s — training time relative to the fastest native back-end.", out) : NULL;
}

static const char *summary_frameworks(rdoc *d) {
    const char *names[32], *out = NULL, *missing = not_installed(d);
    int measured[32], nf = framework_names(d, names, measured, 32);
    for (int k = 0; k < nf; k++) {
        if (!measured[k]) continue;
        const char *v = fw_version(d, names[k]);
        out = cat(d, out, ", ", v ? render_printf(d->a, "%s %s", names[k], v) : names[k]);
        if (outdated(names[k], v))
            out = render_printf(d->a, "%s (Debian's; not the current release: `make deps-frameworks` installs the current one)", out);
    }
    if (!out && !missing) return NULL;
    if (!out) out = "none ran here";
    if (missing) out = render_printf(d->a, "%s. Not installed: %s (`make deps-frameworks` installs them)", out, missing);
    return render_printf(d->a, "%s. Each on the same spec, data and initial weights as native, after a parameter-count and "
                               "forward-pass check.", out);
}

static const char *summary_scores(rdoc *d) {
    const rm_scores *sc = d->m->scores;
    if (!sc || sc->nfw == 0) return NULL;
    const char *out = NULL;
    for (int f = 0; f < sc->nfw && f < 5; f++) {
        if (isnan(sc->fw[f].overall)) continue;
        const rm_framework *x = &sc->fw[f];
        /* the order follows the lower bound: the range shows why a higher midpoint can rank below */
        if (sc->has_ranges && !isnan(x->overall_lo) && !isnan(x->overall_hi))
            out = cat(d, out, ", ", render_printf(d->a, "%d. %s %.1f (%.0f–%.0f)", f + 1, x->name, x->overall,
                                                  x->overall_lo, x->overall_hi));
        else
            out = cat(d, out, ", ", render_printf(d->a, "%d. %s %.1f", f + 1, x->name, x->overall));
    }
    int total = sc->nfw * sc->ncrit, miss = n_missing_criteria(d);
    return render_printf(d->a, "%s%s (of %d; 0–100). Coverage: %d of %d framework-criterion values have data; the %d "
                               "without are left out of the means, not scored zero. %s",
                         out ? out : "no overall scores", sc->nfw > 5 ? ", ..." : "", sc->nfw, total - miss, total, miss,
                         scores_note(d));
}

static const char *summary_published(rdoc *d) {
    if (d->m->nverify == 0) return NULL;
    int n = 0, comparable = 0, nogpu = 0, disagree = 0;
    const char *devs = NULL, *verdicts = NULL;
    static const char *const kinds[] = {"REPRODUCED", "SLOWER", "FASTER", "ACCURACY-DIFFERS"};
    int counts[4] = {0};
    for (int i = 0; i < d->m->nverify; i++)
        for (int c = 0; c < d->m->verify[i].ncells; c++) {
            const rm_verdict *x = &d->m->verify[i].cells[c];
            n++;
            disagree += x->published_check != NULL;
            for (int k = 0; k < 4; k++)
                if (strcmp(x->verdict, kinds[k]) == 0) { counts[k]++; comparable++; }
            if (x->why && strstr(x->why, "no GPU")) {
                nogpu++;
                const char *dv = x->device ? gpu_short(d, x->device) : NULL;
                if (dv && (!devs || !strstr(devs, dv))) devs = cat(d, devs, ", ", dv);
            }
        }
    for (int k = 0; k < 4; k++)
        if (counts[k]) verdicts = cat(d, verdicts, ", ", render_printf(d->a, "%d %s", counts[k], kinds[k]));
    const char *s = render_printf(d->a, "This machine can check %d of the %d published cells%s%s%s.", comparable, n,
                                  verdicts ? " (" : "", verdicts ? verdicts : "", verdicts ? ")" : "");
    if (nogpu)
        s = render_printf(d->a, "%s It cannot check %d: they were measured on GPUs%s%s%s and this machine has none (cuDNN "
                                "needs one; run `make report` on a GPU machine for those).",
                          s, nogpu, devs ? " (" : "", devs ? devs : "", devs ? ")" : "");
    if (n - comparable - nogpu > 0)
        s = render_printf(d->a, "%s %d more are not comparable for other reasons (see Verification).", s, n - comparable - nogpu);
    if (disagree)
        s = render_printf(d->a, "%s %d place%s where a publication disagrees with its own evidence: see Verification.", s,
                          disagree, disagree == 1 ? "" : "s");
    return s;
}

static const char *summary_hardware(rdoc *d) {
    const char *dev = env_device(d), *cores = render_model_env(d->m, "cores"), *mem = render_model_env(d->m, "memory_bytes");
    const char *gpus = render_model_env(d->m, "gpu.count");
    if (!dev && !cores) return NULL;
    char *e;
    double mb = mem ? strtod(mem, &e) : NAN;
    return render_printf(d->a, "%s%s%s%s%s%s", dev ? dev : "CPU not recorded", cores ? render_printf(d->a, ", %s cores", cores) : "",
                         !isnan(mb) && mb > 0 ? render_printf(d->a, ", %.0f GiB", mb / 1073741824.0) : "",
                         gpus && strcmp(gpus, "0") == 0 ? "; no GPU" : "", gpus && strcmp(gpus, "0") ? "; GPUs: " : "",
                         gpus && strcmp(gpus, "0") ? gpus : "");
}

static const char *summary_backends(rdoc *d) {
    const char *bk = backends_list(d);
    if (!bk) return NULL;
    const char *s = bk;
    if (strstr(bk, "reference C")) s = render_printf(d->a, "%s (reference C is the plain-C specification the others are checked "
                                                         "against, not an optimised path)", s);
    for (int i = 0; i < d->m->nruns; i++) {
        const rm_run *r = &d->m->runs[i];
        if (!r->published && r->failed && is_native(r) && r->backend && strcmp(r->backend, "cudnn") == 0) {
            s = render_printf(d->a, "%s; cuDNN built but not run (no GPU)", s);
            break;
        }
    }
    return s;
}

static int summary_table(rdoc *d) {
    const char *k[9], *v[9];
    int n = 0;
#define ROW(key, val) do { const char *x_ = (val); if (x_) { k[n] = (key); v[n++] = x_; } } while (0)
    ROW("Hardware", summary_hardware(d));
    ROW("Back-ends", summary_backends(d));
    ROW("Frameworks", summary_frameworks(d));
    ROW("Data sets", summary_data(d));
    ROW("Run length", summary_length(d));
    ROW("Fastest", summary_fastest(d));
    ROW("Framework overhead", summary_overhead(d));
    ROW("Score ranking", summary_scores(d));
    ROW("Published numbers", summary_published(d));
#undef ROW
    if (n == 0) return 0;
    render_table *t = new_table(d, n, 1);
    render_fig *f = t ? new_fig(d, RENDER_FIG_TABLE, "summary", "At a glance") : NULL;
    if (!f) return sd_err(SD_ENOMEM, "out of memory");
    t->row_head = "";
    t->cols[0] = "";
    for (int i = 0; i < n; i++) { t->rows[i] = k[i]; t->text[i] = v[i]; }
    f->u.table = t;
    return add_fig(d, f);
}

/* ---- cover and appendix ------------------------------------------------------------------------------------ */
static const char *base(const char *p) {
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static int inputs_table(rdoc *d, const char *id) {
    if (d->m->nfiles == 0) return 0;
    render_table *t = new_table(d, d->m->nfiles, 3);
    render_fig *f = t ? new_fig(d, RENDER_FIG_TABLE, id, "Inputs of this report") : NULL;
    if (!f) return sd_err(SD_ENOMEM, "out of memory");
    t->row_head = "File";
    t->cols[0] = "Kind";
    t->cols[1] = "As of";
    t->cols[2] = "Written by";
    for (int i = 0; i < d->m->nfiles; i++) {
        const rm_file *fl = &d->m->files[i];
        t->rows[i] = base(fl->path);
        t->text[i * 3] = fl->detail ? render_printf(d->a, "%s: %s", fl->kind, fl->detail) : fl->kind;
        t->text[i * 3 + 1] = fl->as_of ? fl->as_of : "undated";
        t->text[i * 3 + 2] = fl->version ? render_printf(d->a, "showdown %s%s%s%s", fl->version, fl->commit ? " (" : "",
                                                         fl->commit ? fl->commit : "", fl->commit ? (fl->dirty ? ", dirty)" : ")") : "")
                           : fl->source ? fl->source : "–";
    }
    f->u.table = t;
    return add_fig(d, f);
}

static int sec_cover(rdoc *d, const rt_section *s) {
    if (!s->compact) {
        SD_TRY(rb_add(d, RB_GAP, NULL, NULL));
        d->b[d->n - 1].gap = 20;
    }
    SD_TRY(rb_add(d, RB_TITLE, rb_expand(d, s->title ? s->title : d->t->title), NULL));
    if (d->t->subtitle) SD_TRY(rb_add(d, RB_SUBTITLE, rb_expand(d, d->t->subtitle), NULL));
    const char *dev = env_device(d), *bk = backends_list(d);
    const char *line = render_printf(d->a, "As of %s · showdown %s", d->date ? d->date : "undated (no input carries a date)", SD_VERSION);
    SD_TRY(rb_add(d, RB_SUBTITLE, line, NULL));
    if (s->text) SD_TRY(rb_add(d, RB_PARA, rb_expand(d, s->text), NULL));
    SD_TRY(rb_add(d, RB_GAP, NULL, NULL));   /* becomes the note on omitted sections, if any */
    d->omit_note = d->n - 1;
    if (s->compact) {
        SD_TRY(rb_add(d, RB_PARA, render_printf(d->a, "Machine: %s. Back-ends: %s. Scores as of %s; results as of %s.",
                                                 dev ? dev : "unknown", bk ? bk : "none",
                                                 kind_date(d, "scores") ? kind_date(d, "scores") : "–",
                                                 kind_date(d, "results") ? kind_date(d, "results") : "–"), NULL));
        return 0;
    }
    /* what was measured, where, on what data, for how long, and what to conclude; the full environment and
     * the inputs are in the appendix */
    return summary_table(d);
}

/* Data-parallel settings of a run on one CPU replica: "gpus 1" on a machine without a GPU says nothing true. */
static int cpu_only_key(const rm_run *r, const char *key) {
    int gpu = r->backend && strcmp(r->backend, "cudnn") == 0;
    return !gpu && r->gpus <= 1 && (strcmp(key, "gpus") == 0 || strcmp(key, "global_batch") == 0);
}

static int sec_methodology(rdoc *d, const rt_section *s) {
    if (s->text) SD_TRY(rb_add(d, RB_PARA, rb_expand(d, s->text), NULL));
    /* environment of every measured results file, side by side */
    const rm_file *fl[16];
    int nf = 0;
    for (int i = 0; i < d->m->nfiles && nf < 16; i++) if (strcmp(d->m->files[i].kind, "results") == 0) fl[nf++] = &d->m->files[i];
    const char *keys[128];
    int nk = 0;
    for (int i = 0; i < nf; i++)
        for (int k = 0; k < fl[i]->nenv; k++) idx_of(keys, &nk, fl[i]->env[k].key, 128);
    if (nk > 0) {
        render_table *t = new_table(d, nk, nf);
        render_fig *f = t ? new_fig(d, RENDER_FIG_TABLE, "method-environment", "Environment of each results file") : NULL;
        if (!f) return sd_err(SD_ENOMEM, "out of memory");
        t->row_head = "Key";
        for (int i = 0; i < nf; i++) t->cols[i] = base(fl[i]->path);
        for (int k = 0; k < nk; k++) {
            t->rows[k] = keys[k];
            for (int i = 0; i < nf; i++) {
                t->text[k * nf + i] = "–";
                for (int e = 0; e < fl[i]->nenv; e++)
                    if (strcmp(fl[i]->env[e].key, keys[k]) == 0) t->text[k * nf + i] = fl[i]->env[e].value;
            }
        }
        f->u.table = t;
        SD_TRY(add_fig(d, f));
    }
    /* settings of each workload (its first measured run) */
    const char *wl[64];
    int nw = workloads(d, wl, 64);
    const rm_run *first[64] = {0};
    nk = 0;
    for (int w = 0; w < nw; w++)
        for (int i = 0; i < d->m->nruns; i++) {
            const rm_run *r = &d->m->runs[i];
            if (r->published || strcmp(r->workload, wl[w]) != 0) continue;
            if (!first[w]) first[w] = r;
            for (int k = 0; k < r->nsettings; k++)
                if (!cpu_only_key(r, r->settings[k].key)) idx_of(keys, &nk, r->settings[k].key, 128);
        }
    int kept = 0;   /* workloads measured here; published-only ones have no settings */
    for (int w = 0; w < nw; w++)
        if (first[w]) { wl[kept] = wl[w]; first[kept++] = first[w]; }
    nw = kept;
    if (nk > 0 && nw > 0) {
        int nc = nw < 6 ? nw : 6;
        render_table *t = new_table(d, nk, nc);
        render_fig *f = t ? new_fig(d, RENDER_FIG_TABLE, "method-settings", "Settings of each workload") : NULL;
        if (!f) return sd_err(SD_ENOMEM, "out of memory");
        t->row_head = "Setting";
        for (int w = 0; w < nc; w++) t->cols[w] = wl[w];
        for (int k = 0; k < nk; k++) {
            t->rows[k] = keys[k];
            for (int w = 0; w < nc; w++) {
                const char *v = run_setting(first[w], keys[k]);
                t->text[k * nc + w] = v ? v : "–";
            }
        }
        f->u.table = t;
        SD_TRY(add_fig(d, f));
    }
    return inputs_table(d, "method-inputs");
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
    render_table *t = new_table(d, nv, nc);
    render_fig *f = t ? new_fig(d, RENDER_FIG_TABLE, "verify-summary", "Verdicts per published file") : NULL;
    if (!f) return sd_err(SD_ENOMEM, "out of memory");
    t->row_head = "Published file";
    t->cols[0] = "cells";
    static const char *const heads[] = {"reproduced", "slower", "faster", "accuracy differs", "not comparable", "missing"};
    for (int k = 0, c = 1; k < NK; k++) if (used[k]) t->cols[c++] = heads[k];
    for (int c = 0; c < nc; c++) t->dec[c] = 0;
    const char *nogpu_why = NULL;
    for (int i = 0; i < nv; i++) {
        const rm_verify *v = &d->m->verify[i];
        t->rows[i] = v->title ? v->title : v->source ? v->source : base(v->file->path);
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
    SD_TRY(add_fig(d, f));
    if (ndis == 0) return 0;
    render_table *u = new_table(d, ndis, 2);
    render_fig *g = u ? new_fig(d, RENDER_FIG_TABLE, "verify-disagreements", "Where a publication disagrees with its own evidence")
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
    return add_fig(d, g);
}

static int sec_verification(rdoc *d, const rt_section *s) {
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
        const char *src = v->title ? v->title : v->source ? v->source : base(v->file->path);
        SD_TRY(rb_add(d, RB_PARA, render_printf(d->a, "%s: %d cell%s checked against measurements from %s (tolerance %s%%): %s.",
                                                 src, v->ncells, v->ncells == 1 ? "" : "s",
                                                 v->measured_from ? v->measured_from : "an unnamed source",
                                                 isnan(v->tolerance_pct) ? "?" : render_printf(d->a, "%g", v->tolerance_pct),
                                                 counts[0] ? counts : "no cells"), NULL));
        d->b[d->n - 1].md_only = 1;
        if (v->ncells == 0) continue;
        render_table *t = new_table(d, v->ncells, 4);
        render_fig *f = t ? new_fig(d, RENDER_FIG_TABLE, render_printf(d->a, "verify-%d", i + 1),
                                    render_printf(d->a, "Verification of %s", src)) : NULL;
        if (!f) return sd_err(SD_ENOMEM, "out of memory");
        t->row_head = "Cell";
        t->cols[0] = "Published";
        t->cols[1] = "Measured";
        t->cols[2] = "Verdict";
        t->cols[3] = "Why";
        t->units[0] = t->units[1] = "s, median";
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
                                      "published figure lies inside the measured min–max. –: no measurement.%s%s",
                                nogpu_why ? " No GPU here: " : "", nogpu_why ? nogpu_why : "");
        SD_TRY(add_fig(d, f));
        d->b[d->n - 1].md_only = 1;   /* the PDF has the summary above; not numbered in its sequence */
        d->ntab--;
        f->title = strstr(f->title, ". ") + 2;
    }
    return 0;
}

/* ---- regressions (nightly) ----------------------------------------------------------------------------------- */
static int sec_regressions(rdoc *d, const rt_section *s) {
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
    render_table *t = new_table(d, m->nregressions, 4);
    render_fig *f = t ? new_fig(d, RENDER_FIG_TABLE, "regressions", "Regressions against the previous nightly run") : NULL;
    if (!f) return sd_err(SD_ENOMEM, "out of memory");
    t->row_head = "Cell";
    t->cols[0] = "Previous";
    t->cols[1] = "Now";
    t->cols[2] = "Slower";
    t->cols[3] = "Threshold";
    t->units[0] = t->units[1] = "s, median";
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
    return add_fig(d, f);
}

/* ---- history ------------------------------------------------------------------------------------------------- */
static int cmp_day(const void *a, const void *b) {
    const rm_hist *x = *(const rm_hist *const *)a, *y = *(const rm_hist *const *)b;
    return (x->day > y->day) - (x->day < y->day);
}

static int sec_history(rdoc *d, const rt_section *s) {
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
    for (int i = 0; i < m->nhist; i++) idx_of(wl, &nw, m->hist[i].workload, 64);
    const rm_hist **pts = NEW(d, const rm_hist *, m->nhist);
    if (!pts) return sd_err(SD_ENOMEM, "out of memory");
    for (int w = 0; w < nw; w++) {
        const char *rows[32];
        int nr = 0;
        for (int i = 0; i < m->nhist; i++) {
            const rm_hist *h = &m->hist[i];
            if (strcmp(h->workload, wl[w]) != 0 || isnan(h->day)) continue;
            rm_run tmp = {.implementation = h->implementation, .backend = h->backend};
            idx_of(rows, &nr, row_of(d, &tmp), 32);
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
                if (strcmp(h->workload, wl[w]) == 0 && !isnan(h->day) && strcmp(row_of(d, &tmp), rows[r]) == 0) pts[n++] = h;
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
        render_fig *f = new_fig(d, RENDER_FIG_LINE, render_printf(d->a, "history-%s", rb_slug(d, wl[w])),
                                render_printf(d->a, "%s: steady-state epoch time across runs", wl[w]));
        if (!f) return sd_err(SD_ENOMEM, "out of memory");
        f->u.line = l;
        f->note = render_printf(d->a, "%d runs from the results database, oldest %s.", m->nhist_runs, date0);
        SD_TRY(add_fig(d, f));
        added++;
    }
    return added ? 0 : 1;
}

/* ---- the outline ------------------------------------------------------------------------------------------ */
static const char *default_title(rt_kind k) {
    switch (k) {
    case RT_COVER: return NULL;
    case RT_PODIUM: return "Podium";
    case RT_RADARS: return "Profiles";
    case RT_CRITERIA: return "Criteria breakdown";
    case RT_BENCH_TABLES: return "Benchmarks";
    case RT_BENCH_CHARTS: return "Training time";
    case RT_ACCURACY: return "Accuracy per epoch";
    case RT_FIRST_STEADY: return "First epoch vs steady state";
    case RT_VERIFICATION: return "Verification";
    case RT_HISTORY: return "History";
    case RT_REGRESSIONS: return "Regressions";
    case RT_FRAMEWORKS: return "Frameworks against the native floor";
    case RT_METHODOLOGY: return "Methodology and environment";
    case RT_TEXT: return NULL;
    case RT_KIND_N: break;
    }
    return NULL;
}

static const char *omitted_title(rt_kind k) {
    const char *t = default_title(k);
    return t ? t : render_template_kind_name(k);
}

int rb_build(rdoc *d) {
    d->omit_note = -1;
    char omitted[512] = "";
    for (int i = 0; i < d->t->nsections; i++) {
        const rt_section *s = &d->t->sections[i];
        int mark = d->n, nfig = d->nfig, ntab = d->ntab, figs = d->st->figures, tabs = d->st->tables;
        if (s->new_page && d->n > 0) SD_TRY(rb_add(d, RB_BREAK, NULL, NULL));
        if (s->kind != RT_COVER) {
            const char *title = s->title ? s->title : default_title(s->kind);
            if (title) SD_TRY(rb_add(d, RB_H2, rb_expand(d, title), NULL));
            if (s->text && s->kind != RT_METHODOLOGY) SD_TRY(rb_add(d, RB_PARA, rb_expand(d, s->text), NULL));
        }
        int rc;
        switch (s->kind) {
        case RT_COVER: rc = sec_cover(d, s); break;
        case RT_PODIUM: rc = sec_podium(d, s); break;
        case RT_RADARS: rc = sec_radars(d, s); break;
        case RT_CRITERIA: rc = sec_criteria(d, s); break;
        case RT_BENCH_TABLES: rc = sec_bench_tables(d, s); break;
        case RT_BENCH_CHARTS: rc = sec_bench_charts(d, s); break;
        case RT_ACCURACY: rc = sec_accuracy(d, s); break;
        case RT_FIRST_STEADY: rc = sec_first_steady(d, s); break;
        case RT_METHODOLOGY: rc = sec_methodology(d, s); break;
        case RT_TEXT: rc = 0; break;
        case RT_VERIFICATION: rc = sec_verification(d, s); break;
        case RT_HISTORY: rc = sec_history(d, s); break;
        case RT_REGRESSIONS: rc = sec_regressions(d, s); break;
        case RT_FRAMEWORKS: rc = sec_frameworks(d, s); break;
        default: rc = 1; break;
        }
        if (rc < 0) return rc;
        if (rc == 0 && s->kind == RT_COVER && !s->compact) SD_TRY(rb_add(d, RB_BREAK, NULL, NULL));
        if (rc == 1) {   /* no data: drop what the section added and say so */
            d->n = mark;
            d->nfig = nfig;
            d->ntab = ntab;
            d->st->figures = figs;
            d->st->tables = tabs;
            d->st->omitted++;
            size_t k = strlen(d->st->omitted_names);
            snprintf(d->st->omitted_names + k, sizeof d->st->omitted_names - k, "%s%s", k ? ", " : "",
                     render_template_kind_name(s->kind));
            k = strlen(omitted);
            snprintf(omitted + k, sizeof omitted - k, "%s%s", k ? ", " : "",
                     s->title ? rb_expand(d, s->title) : omitted_title(s->kind));
            continue;
        }
        d->st->sections++;
    }
    if (d->omit_note >= 0 && omitted[0]) {
        rb_block *b = &d->b[d->omit_note];
        b->kind = RB_PARA;
        b->text = render_printf(d->a, "Not in this report for lack of data in its inputs: %s.", omitted);
    }
    return 0;
}
