/* report_scores — the score sections: the podium (overall and category scores, with their ranges), the
 * radars (categories, and the criteria of each category) and the criteria breakdown (tables and bars). */
#include "render/report_sections.h"
#include "core/err.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *fw_label(rdoc *d, const rm_framework *w) {
    return w->status ? render_printf(d->a, "%s (%s)", w->name, w->status) : w->name;
}

/* Where the scores come from, for the note of every figure drawn from them. */
const char *rb_scores_note(rdoc *d) {
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

/* Lower and upper bounds for the n bars of b (whiskers). */
static int bar_ranges(rdoc *d, render_bar *b, int n) {
    b->lo = NEW(d, double, n);
    b->hi = NEW(d, double, n);
    if (!b->lo || !b->hi) return sd_err(SD_ENOMEM, "out of memory");
    return 0;
}

/* A score bar chart on the 0–100 scale, with the scores note, added to the document. */
static int add_score_bar(rdoc *d, render_fig *f, render_bar *b, int dec, const char *xlabel) {
    b->xmax = 100;
    b->dec = dec;
    b->xlabel = xlabel;
    f->u.bar = b;
    f->note = rb_scores_note(d);
    return rb_add_fig(d, f);
}

int rb_sec_podium(rdoc *d, const rt_section *s) {
    const rm_scores *sc = d->m->scores;
    if (!sc || sc->nfw == 0) return 1;
    if (sc->has_ranges) SD_TRY(scores_preamble(d, sc));
    if (s->show & RT_SHOW_TABLE) {
        int has_tier = 0, rg = sc->has_ranges;
        for (int f = 0; f < sc->nfw; f++) has_tier |= sc->fw[f].tier != NULL;
        int nc = 1 + sc->ncat + has_tier + 2 * rg;   /* ranges: a range column after Overall, coverage at the end */
        render_table *t = rb_new_table(d, sc->nfw, nc);
        render_fig *f = t ? rb_new_fig(d, RENDER_FIG_TABLE, "podium-table", "Overall and category scores") : NULL;
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
                                           "data: under half of the criteria with data). %s", rb_scores_note(d))
                     : render_printf(d->a, "Category score = mean of its criteria that have data; overall = mean of the "
                                           "categories. %s", rb_scores_note(d));
        SD_TRY(rb_add_fig(d, f));
    }
    /* Without ranges a bar of the overall column would only repeat the table; with them it draws the ranges. */
    if ((s->show & RT_SHOW_CHART) && sc->has_ranges) {
        render_bar *b = rb_new_bar(d, sc->nfw, 1);
        render_fig *f = b ? rb_new_fig(d, RENDER_FIG_BAR, "podium-chart", "Overall score and its range") : NULL;
        if (!f) return sd_err(SD_ENOMEM, "out of memory");
        SD_TRY(bar_ranges(d, b, sc->nfw));
        b->series[0] = "overall";
        for (int r = 0; r < sc->nfw; r++) {
            const rm_framework *w = &sc->fw[r];
            b->groups[r] = w->tier ? render_printf(d->a, "%s  (tier %s)", fw_label(d, w), w->tier) : fw_label(d, w);
            b->v[r] = w->overall;
            b->lo[r] = w->overall_lo;
            b->hi[r] = w->overall_hi;
        }
        SD_TRY(add_score_bar(d, f, b, 1, "overall score (0–100): bar at the midpoint, whisker from lower to upper bound"));
    }
    return 0;
}

static int crit_in_cat(const rm_scores *sc, int c, int *idx) {
    int n = 0;
    for (int k = 0; k < sc->ncrit; k++)
        if (sc->crit_cat[k] == c) idx[n++] = k;
    return n;
}

int rb_sec_radars(rdoc *d, const rt_section *s) {
    const rm_scores *sc = d->m->scores;
    if (!sc || sc->nfw == 0) return 1;
    int added = 0;
    if ((s->show & RT_SHOW_CATEGORIES) && sc->ncat >= 3) {
        render_radar *r = NEW(d, render_radar, 1);
        render_fig *f = r ? rb_new_fig(d, RENDER_FIG_RADAR, "radar-categories", "Category scores of each framework (0–100)") : NULL;
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
        f->note = rb_scores_note(d);
        SD_TRY(rb_add_fig(d, f));
        added++;
    }
    if (s->show & RT_SHOW_CRITERIA) {
        int *idx = NEW(d, int, sc->ncrit);
        if (!idx) return sd_err(SD_ENOMEM, "out of memory");
        for (int c = 0; c < sc->ncat; c++) {
            int n = crit_in_cat(sc, c, idx);
            if (n < 3) continue;   /* a radar needs three axes; the criteria bars show the rest */
            render_radar *r = NEW(d, render_radar, 1);
            render_fig *f = r ? rb_new_fig(d, RENDER_FIG_RADAR, render_printf(d->a, "radar-%s", rb_slug(d, sc->cat_id[c])),
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
            f->note = rb_scores_note(d);
            SD_TRY(rb_add_fig(d, f));
            added++;
        }
    }
    return added ? 0 : 1;
}

int rb_sec_criteria(rdoc *d, const rt_section *s) {
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
            render_table *t = rb_new_table(d, sc->nfw, n + 1);
            render_fig *f = t ? rb_new_fig(d, RENDER_FIG_TABLE, render_printf(d->a, "criteria-%s-table", slug),
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
            SD_TRY(rb_add_fig(d, f));
            if (!pdf) {   /* not in the PDF: no number in the PDF's sequence */
                d->b[d->n - 1].md_only = 1;
                d->ntab--;
                f->title = strstr(f->title, ". ") + 2;
            }
        }
        if (s->show & RT_SHOW_CHART) {
            render_bar *b = rb_new_bar(d, sc->nfw, n);
            render_fig *f = b ? rb_new_fig(d, RENDER_FIG_BAR, render_printf(d->a, "criteria-%s-chart", slug),
                                           render_printf(d->a, "%s: criteria (normalised 0–100)", sc->cat_name[c])) : NULL;
            if (!f) return sd_err(SD_ENOMEM, "out of memory");
            for (int k = 0; k < n; k++) b->series[k] = sc->crit_name[idx[k]];
            if (sc->has_ranges) {   /* parts criteria (activity, numerics) have a range of their own */
                SD_TRY(bar_ranges(d, b, sc->nfw * n));
            }
            for (int i = 0; i < sc->nfw; i++) {
                b->groups[i] = fw_label(d, &sc->fw[i]);
                for (int k = 0; k < n; k++) {
                    b->v[i * n + k] = sc->fw[i].crit[idx[k]];
                    if (b->lo) { b->lo[i * n + k] = sc->fw[i].crit_lo[idx[k]]; b->hi[i * n + k] = sc->fw[i].crit_hi[idx[k]]; }
                }
            }
            SD_TRY(add_score_bar(d, f, b, 0, "criterion score (0–100)"));
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
