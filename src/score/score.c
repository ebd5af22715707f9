/* score — the scoring arithmetic: normalisation per scale, weighted category means that leave missing
 * criteria out, overall mean of present categories, tier from cut points. Pure functions over
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

double score_activity(int64_t as_of, int64_t last_commit, long prs, double weeks_min) {
    double weeks = (double)(as_of - last_commit) / (7.0 * 86400.0);
    if (weeks < weeks_min) weeks = weeks_min;
    return 1.0 / weeks + (double)prs;
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
        if (col[i]->raw > best) best = col[i]->raw;
    }
    for (size_t i = 0; i < n; i++) {
        if (!col[i]->present) continue;
        double den = s->kind == SCORE_SCALE_FIXED ? s->max : best;
        col[i]->norm = den > 0 ? 100.0 * col[i]->raw / den : 0.0;
    }
    return 0;
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
            double sum = 0;
            int k = 0;
            for (int p = 0; p < cr->nparts; p++)
                if (fw[i].part[c][p].present) { sum += fw[i].part[c][p].norm; k++; }
            score_value *v = &fw[i].crit[c];
            v->present = k > 0;
            v->raw = v->norm = k > 0 ? sum / k : 0.0;
            if (!k && !v->why[0]) snprintf(v->why, sizeof v->why, "no part has data");
        }
    }
    for (size_t i = 0; i < n; i++) {
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
