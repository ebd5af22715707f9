/* score — the scoring arithmetic: normalisation per scale, weighted category means (v1: missing criteria
 * left out; v2: ranges with missing criteria at 0 and 100), overall score, tier from cut points. Pure functions over
 * score_method and score_fw; no I/O, so tests can check every number by hand. */
#include "score/score.h"
#include "core/err.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int score_criterion_index(const score_method *m, const char *id) {
    for (int i = 0; i < m->ncrit; i++)
        if (strcmp(m->crit[i].id, id) == 0) return i;
    return -1;
}

int score_git_input_valid(const char *input) {
    static const char *const metrics[] = {"weeks_active_13", "authors_90", "bus_factor_365", "releases_365",
                                          "days_since_release"};
    const char *p = strncmp(input, "git:main:", 9) == 0 ? input + 9
                  : strncmp(input, "git:numerics:", 13) == 0 ? input + 13 : NULL;
    if (!p) return 0;
    for (size_t i = 0; i < sizeof metrics / sizeof metrics[0]; i++)
        if (strcmp(p, metrics[i]) == 0) return 1;
    return 0;
}

double score_activity(int64_t as_of, int64_t last_commit, long prs, double weeks_min) {
    double weeks = (double)(as_of - last_commit) / (7.0 * 86400.0);
    if (weeks < weeks_min) weeks = weeks_min;
    return 1.0 / weeks + (double)prs;
}

const char *score_status_from(const score_status_rule *r, long weeks_13, long authors_90, long releases_365) {
    if (weeks_13 >= r->active_weeks_13 && authors_90 >= r->active_authors_90) return "active";
    if (weeks_13 >= r->maintenance_weeks_13 || releases_365 >= r->maintenance_releases_365) return "maintenance";
    return "inactive";
}

int score_tier(const score_method *m, double overall) {
    for (int i = 0; i < m->ntiers; i++)
        if (overall >= m->tier_min[i]) return m->tier_id[i];
    return m->tier_last;
}

/* Normalise column `get(fw[i])` of n frameworks on scale s. */
static int normalise(const score_scale *s, score_value *const *col, size_t n, const char *what) {
    double best = 0;
    for (size_t i = 0; i < n; i++) {
        if (!col[i]->present) continue;
        if (s->kind == SCORE_SCALE_FIXED && (col[i]->raw < s->min || col[i]->raw > s->max))
            return sd_err(SD_EINPUT, "%s: raw value %g outside its scale [%g, %g]", what, col[i]->raw, s->min,
                          s->max);
        if ((s->kind == SCORE_SCALE_CAPPED || s->kind == SCORE_SCALE_DECAY) && col[i]->raw < s->min)
            return sd_err(SD_EINPUT, "%s: raw value %g below its scale's minimum %g", what, col[i]->raw, s->min);
        if (col[i]->raw > best) best = col[i]->raw;
    }
    for (size_t i = 0; i < n; i++) {
        if (!col[i]->present) continue;
        double r = col[i]->raw;
        if (s->kind == SCORE_SCALE_CAPPED) col[i]->norm = 100.0 * (r < s->max ? r : s->max) / s->max;
        else if (s->kind == SCORE_SCALE_DECAY) col[i]->norm = r >= s->max ? 0.0 : 100.0 * (1.0 - r / s->max);
        else {
            double den = s->kind == SCORE_SCALE_FIXED ? s->max : best;
            col[i]->norm = den > 0 ? 100.0 * r / den : 0.0;
        }
    }
    for (size_t i = 0; i < n; i++) {
        col[i]->lo = col[i]->present ? col[i]->norm : 0.0;
        col[i]->hi = col[i]->present ? col[i]->norm : 100.0;
    }
    return 0;
}

/* Method v2: every criterion contributes [lo, hi] (its value, or 0 and 100 when missing), so category and
 * overall scores are ranges whose midpoint is shown; the ranking and the tier use the lower bound, which
 * a missing value can only lower. A category with fewer than min_measured of its criteria measured is
 * insufficient, and the framework gets no tier. */
static void ranges(const score_method *m, score_fw *f) {
    double olo = 0, ohi = 0, ow = 0;
    int insufficient = 0;
    for (int k = 0; k < m->ncat; k++) {
        double lo = 0, hi = 0, w = 0;
        int nc = 0, meas = 0;
        for (int c = 0; c < m->ncrit; c++) {
            if (m->crit[c].category != k || m->crit[c].weight <= 0) continue;
            nc++;
            meas += f->crit[c].present;
            lo += m->crit[c].weight * f->crit[c].lo;
            hi += m->crit[c].weight * f->crit[c].hi;
            w += m->crit[c].weight;
        }
        f->cat_ncrit[k] = nc;
        f->cat_measured[k] = meas;
        f->cat_present[k] = w > 0;
        f->cat_lo[k] = w > 0 ? lo / w : 0.0;
        f->cat_hi[k] = w > 0 ? hi / w : 0.0;
        f->cat[k] = (f->cat_lo[k] + f->cat_hi[k]) / 2;
        f->cat_insufficient[k] = nc > 0 && (double)meas < m->min_measured * nc;
        insufficient |= f->cat_insufficient[k];
        if (w > 0 && m->cat[k].weight > 0) {
            olo += m->cat[k].weight * f->cat_lo[k];
            ohi += m->cat[k].weight * f->cat_hi[k];
            ow += m->cat[k].weight;
        }
    }
    f->overall_present = ow > 0;
    f->overall_lo = ow > 0 ? olo / ow : 0.0;
    f->overall_hi = ow > 0 ? ohi / ow : 0.0;
    f->overall = (f->overall_lo + f->overall_hi) / 2;
    f->rank_key = f->overall_lo;
    f->tier = f->overall_present && !insufficient ? score_tier(m, f->overall_lo) : 0;
}

int score_compute(const score_method *m, score_fw *fw, size_t n) {
    score_value *col[256];
    if (n > sizeof col / sizeof col[0]) return sd_err(SD_ELIMIT, "score: at most 256 frameworks, got %zu", n);
    for (int c = 0; c < m->ncrit; c++) {
        const score_criterion *cr = &m->crit[c];
        char what[96];
        if (cr->formula != SCORE_F_PARTS_MEAN) {
            for (size_t i = 0; i < n; i++) col[i] = &fw[i].crit[c];
            snprintf(what, sizeof what, "criterion '%s'", cr->id);
            SD_TRY(normalise(&cr->scale, col, n, what));
            continue;
        }
        for (int p = 0; p < cr->nparts; p++) {
            for (size_t i = 0; i < n; i++) col[i] = &fw[i].part[c][p];
            snprintf(what, sizeof what, "criterion '%s.%s'", cr->id, cr->part_id[p]);
            SD_TRY(normalise(&cr->part_scale[p], col, n, what));
        }
        for (size_t i = 0; i < n; i++) {
            double sum = 0, lo = 0, hi = 0;
            int k = 0;
            for (int p = 0; p < cr->nparts; p++) {
                if (fw[i].part[c][p].present) { sum += fw[i].part[c][p].norm; k++; }
                lo += fw[i].part[c][p].lo;
                hi += fw[i].part[c][p].hi;
            }
            score_value *v = &fw[i].crit[c];
            v->present = k > 0;
            v->raw = v->norm = k > 0 ? sum / k : 0.0;
            v->lo = lo / cr->nparts;
            v->hi = hi / cr->nparts;
            if (!k && !v->why[0]) snprintf(v->why, sizeof v->why, "no part has data");
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (m->version >= 2) { ranges(m, &fw[i]); continue; }
        score_fw *f = &fw[i];
        double osum = 0, ow = 0;
        for (int k = 0; k < m->ncat; k++) {
            double sum = 0, w = 0;
            for (int c = 0; c < m->ncrit; c++) {
                if (m->crit[c].category != k || !f->crit[c].present || m->crit[c].weight <= 0) continue;
                sum += m->crit[c].weight * f->crit[c].norm;
                w += m->crit[c].weight;
            }
            f->cat_present[k] = w > 0;
            f->cat[k] = w > 0 ? sum / w : 0.0;
            if (f->cat_present[k] && m->cat[k].weight > 0) {
                osum += m->cat[k].weight * f->cat[k];
                ow += m->cat[k].weight;
            }
        }
        f->overall_present = ow > 0;
        f->overall = ow > 0 ? osum / ow : 0.0;
        f->tier = f->overall_present ? score_tier(m, f->overall) : 0;
        f->rank_key = f->overall;
        for (int k = 0; k < m->ncat; k++) f->cat_lo[k] = f->cat_hi[k] = f->cat[k];
        f->overall_lo = f->overall_hi = f->overall;
    }
    return 0;
}

int score_missing(const score_method *m, const score_fw *f,
                  void (*fn)(void *ctx, const char *label, const char *why), void *ctx) {
    int count = 0;
    for (int c = 0; c < m->ncrit; c++) {
        const score_criterion *cr = &m->crit[c];
        if (cr->formula == SCORE_F_PARTS_MEAN) {
            for (int p = 0; p < cr->nparts; p++) {
                if (f->part[c][p].present) continue;
                char label[2 * SCORE_ID_LEN + 2];
                snprintf(label, sizeof label, "%s.%s", cr->id, cr->part_id[p]);
                if (fn) fn(ctx, label, f->part[c][p].why);
                count++;
            }
        } else if (!f->crit[c].present) {
            if (fn) fn(ctx, cr->id, f->crit[c].why);
            count++;
        }
    }
    return count;
}
