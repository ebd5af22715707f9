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
        if (r->published || r->failed || !r->backend) continue;
        const char *b = backend_name(r->backend);
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = !d->m->runs[j].published && !d->m->runs[j].failed && d->m->runs[j].backend &&
                   strcmp(backend_name(d->m->runs[j].backend), b) == 0;
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
                              : mixed && r->data_kind ? render_printf(d->a, "%s · %s data ", device_of(d, r), r->data_kind)
                                                      : render_printf(d->a, "%s ", device_of(d, r));   /* keep apart */
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
        int c = 0;
        while (c < g->nc && g->pub[c]) c++;
        if (c == g->nc && (c = idx_of(g->cols, &g->nc, "CPU", 64)) < 0) continue;
        int row = idx_of(g->rows, &g->nr, r->implementation, 64);
        if (row >= 0 && !g->cell[row][c]) g->cell[row][c] = r;
    }
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
                                    render_printf(d->a, "%s: %s time per device", wl[w], infer ? "inference" : "training"))
                          : NULL;
        if (!f) return sd_err(SD_ENOMEM, "out of memory");
        t->row_head = "Implementation";
        t->groups = NEW(d, const char *, nc);
        if (!t->groups) return sd_err(SD_ENOMEM, "out of memory");
        const char *tg = g.epochs ? render_printf(d->a, "measured: time for %d epoch%s", g.epochs, g.epochs == 1 ? "" : "s") : "measured: time";
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
        const char *pg = pep && pep_same ? render_printf(d->a, "published: time for %s epoch%s", pep, strcmp(pep, "1") ? "s" : "")
                                         : "published";
        for (int c = 0; c < g.nc; c++) {
            t->cols[c] = g.cols[c];
            t->units[c] = "s";
            for (int r = 0; r < g.nr; r++)   /* a published column may hold s/epoch or s per 1,000 images */
                if (g.cell[r][c] && g.cell[r][c]->total_unit) { t->units[c] = g.cell[r][c]->total_unit; break; }
            t->best[c] = -1;
            t->groups[c] = g.pub[c] ? pg : tg;
            double mx = 0;
            int integral = 1;
            for (int r = 0; r < g.nr; r++) {
                const rm_run *run = g.cell[r][c];
                if (!run) { t->text[r * nc + c] = "–"; continue; }   /* not run there: not a missing value */
                if (run->failed) { t->text[r * nc + c] = status_word(run); continue; }
                double v = run->total_s.median;
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
        f->note = render_printf(d->a, "%s%s%s%s%s", g.repeats ? render_printf(d->a, "Median of %d repeat%s.", g.repeats,
                                                                                   g.repeats == 1 ? "" : "s") : "Nothing measured here.",
                                g.source ? " Published figures: " : "", g.source ? g.source : "", g.source ? "." : "",
                                cross ? " –: not run on that device." : "");
        for (int i = 0; i < g.nfailed; i++) {
            const rm_run *r = g.failed[i];
            const char *err = r->error ? r->error : "no reason recorded";
            const char *colon = strchr(err, ':');   /* the first clause of the error is the reason */
            if (strcmp(status_word(r), "failed") != 0) colon = NULL;   /* "unavailable: <why>", "unsupported: <op>" */
            f->note = render_printf(d->a, "%s Not run: %s (%.*s).", f->note, row_of(d, r),
                                    colon ? (int)(colon - err) : (int)strlen(err), err);
        }
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
        for (int k = 0; k < ns; k++) b->series[k] = g.cols[cols[k]];
        for (int i = 0; i < nr; i++) {
            b->groups[i] = g.rows[rows[i]];
            for (int k = 0; k < ns; k++) {
                const rm_run *r = g.cell[rows[i]][cols[k]];
                int j = i * ns + k;
                b->lo[j] = b->hi[j] = NAN;
                if (!r || r->failed) continue;
                b->v[j] = r->steady_epoch_s.median;
                b->lo[j] = r->steady_epoch_s.min;
                b->hi[j] = r->steady_epoch_s.max;
                if (!isnan(b->v[j])) any = 1;
                if (b->v[j] > mx) mx = b->v[j];
            }
        }
        if (!any) continue;
        b->dec = time_decimals(mx);
        b->xlabel = "steady-state epoch time (s): median, whiskers min–max";
        render_fig *f = new_fig(d, RENDER_FIG_BAR, render_printf(d->a, "bench-%s-chart", rb_slug(d, wl[w])),
                                render_printf(d->a, "%s: steady-state epoch time", wl[w]));
        if (!f) return sd_err(SD_ENOMEM, "out of memory");
        f->u.bar = b;
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
        /* accuracy on a tenth grid: a 0.01 wiggle must not fill the chart */
        double lo = INFINITY, hi = -INFINITY;
        for (int k = 0; k < l->nseries; k++)
            for (int e = 0; e < l->npts[k]; e++)
                if (!isnan(l->y[k][e])) { if (l->y[k][e] < lo) lo = l->y[k][e]; if (l->y[k][e] > hi) hi = l->y[k][e]; }
        l->ymin = floor(lo * 10 + 1e-9) / 10;
        l->ymax = ceil(hi * 10 - 1e-9) / 10;
        if (l->ymax <= l->ymin) l->ymax = l->ymin + 0.1;
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

/* The cover lists the short facts; the appendix has the full environment. */
static int cover_skip(const char *key, const char *value, const char *dev) {
    return strlen(value) > 60 || (dev && strcmp(value, dev) == 0) || strcmp(key, "cpu_flags") == 0;
}

static int sec_cover(rdoc *d, const rt_section *s) {
    if (!s->compact) {
        SD_TRY(rb_add(d, RB_GAP, NULL, NULL));
        d->b[d->n - 1].gap = 70;
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
    SD_TRY(rb_add(d, RB_GAP, NULL, NULL));
    d->b[d->n - 1].gap = 24;
    /* machine summary: device, back-ends, library versions of the first measured results file */
    const rm_file *fl = NULL;
    for (int i = 0; i < d->m->nfiles && !fl; i++) if (strcmp(d->m->files[i].kind, "results") == 0) fl = &d->m->files[i];
    int n = 2;
    for (int i = 0; fl && i < fl->nenv; i++) n += !cover_skip(fl->env[i].key, fl->env[i].value, dev);
    render_table *t = new_table(d, n, 1);
    render_fig *f = t ? new_fig(d, RENDER_FIG_TABLE, "cover-machine", "Machine and software") : NULL;
    if (!f) return sd_err(SD_ENOMEM, "out of memory");
    t->row_head = "";
    t->cols[0] = "";
    t->rows[0] = "Device";
    t->text[0] = dev ? dev : "not recorded";
    t->rows[1] = "Back-ends measured";
    t->text[1] = bk ? bk : "none (no benchmark results)";
    for (int i = 0, r = 2; fl && i < fl->nenv; i++) {
        if (cover_skip(fl->env[i].key, fl->env[i].value, dev)) continue;
        t->rows[r] = fl->env[i].key;
        t->text[r++] = fl->env[i].value;
    }
    f->u.table = t;
    SD_TRY(add_fig(d, f));
    return inputs_table(d, "cover-inputs");
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
            for (int k = 0; k < r->nsettings; k++) idx_of(keys, &nk, r->settings[k].key, 128);
        }
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
static int sec_verification(rdoc *d, const rt_section *s) {
    (void)s;
    if (d->m->nverify == 0) return 1;
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
