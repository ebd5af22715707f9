/* score_out — the two outputs of scoring: a text table (summary, then per framework raw and normalised
 * criteria, category scores and the missing-data list) and the "showdown-scores/1" JSON file the report
 * reads (documented in scoring/README.md). Both state the snapshot's date. */
#include "score/score_out.h"
#include "core/err.h"
#include "core/fsutil.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static int cmp_rank(const void *a, const void *b) {
    const score_fw *x = *(const score_fw *const *)a, *y = *(const score_fw *const *)b;
    if (x->overall_present != y->overall_present) return y->overall_present - x->overall_present;
    if (x->rank_key != y->rank_key) return x->rank_key < y->rank_key ? 1 : -1;
    if (x->overall_hi != y->overall_hi) return x->overall_hi < y->overall_hi ? 1 : -1;
    return strcmp(x->id, y->id);
}

void score_rank(score_fw *fw, int n, const score_fw **order) {
    for (int i = 0; i < n; i++) order[i] = &fw[i];
    qsort(order, (size_t)n, sizeof *order, cmp_rank);
}

static const score_framework *input_of(const score_inputs *in, const char *id) {
    for (int i = 0; i < in->nfw; i++)
        if (strcmp(in->fw[i].id, id) == 0) return &in->fw[i];
    return NULL;
}

static void print_missing(void *ctx, const char *label, const char *why) {
    fprintf((FILE *)ctx, "      missing %-18s %s\n", label, why);
}

static void range_cell(char *buf, size_t len, double lo, double hi, int insufficient) {
    if (hi - lo < 0.05) snprintf(buf, len, "%.1f%s", lo, insufficient ? "*" : "");
    else snprintf(buf, len, "%.0f-%.0f%s", lo, hi, insufficient ? "*" : "");
}

/* Method v2: the point with its range, categories as ranges, coverage, derived and typed status; then per
 * framework the criteria (stale values shown with the reason they are not scored). */
static void print_v2(FILE *f, const score_run *r, const score_fw *const *order, int n) {
    const score_method *m = r->method;
    fprintf(f, "method v2 (%s); %d frameworks; criterion values 0-100. A missing criterion counts 0 in the lower\n"
            "and 100 in the upper bound; the score is the midpoint of [lower, upper]; ranks and tiers use the lower\n"
            "bound. Categories are lower-upper; * = insufficient data (under %.0f%% of its criteria measured: no tier).\n"
            "coverage = inputs measured (git, network) / hand-entered / missing.\n\n", r->method_path, n,
            100 * m->min_measured);
    fprintf(f, "%-4s %-15s %-4s %-19s", "rank", "framework", "tier", "score [lower, upper]");
    for (int k = 0; k < m->ncat; k++) fprintf(f, " %-10.10s", m->cat[k].id);
    fprintf(f, " %-8s %-11s %s\n", "coverage", "status", "(typed)");
    for (int i = 0; i < n; i++) {
        const score_fw *x = order[i];
        const score_framework *fi = input_of(r->inputs, x->id);
        char tier[8] = "-", sc[40], cell[32], cov[24];
        if (x->tier) snprintf(tier, sizeof tier, "%d", x->tier);
        snprintf(sc, sizeof sc, "%5.1f [%4.1f, %5.1f]", x->overall, x->overall_lo, x->overall_hi);
        fprintf(f, "%-4d %-15s %-4s %-19s", i + 1, x->name, tier, sc);
        for (int k = 0; k < m->ncat; k++) {
            range_cell(cell, sizeof cell, x->cat_lo[k], x->cat_hi[k], x->cat_insufficient[k]);
            fprintf(f, " %-10s", cell);
        }
        snprintf(cov, sizeof cov, "%d/%d/%d", x->cover_measured, x->cover_hand, x->cover_missing);
        fprintf(f, " %-8s %-11s (%s)%s\n", cov, x->status, fi ? fi->status : "?", fi && fi->in_2018 ? "" : " new");
    }
    fprintf(f, "\n");
    for (int i = 0; i < n; i++) {
        const score_fw *x = order[i];
        fprintf(f, "%s: score %.1f [%.1f, %.1f], ", x->name, x->overall, x->overall_lo, x->overall_hi);
        if (x->tier) fprintf(f, "tier %d", x->tier);
        else fprintf(f, "no tier (insufficient data)");
        fprintf(f, "; status %s: %s\n", x->status, x->status_why);
        for (int k = 0; k < m->ncat; k++) {
            fprintf(f, "  %-22s %5.1f [%.1f, %.1f], %d of %d criteria measured%s\n", m->cat[k].name, x->cat[k],
                    x->cat_lo[k], x->cat_hi[k], x->cat_measured[k], x->cat_ncrit[k],
                    x->cat_insufficient[k] ? ": insufficient data" : "");
            for (int c = 0; c < m->ncrit; c++) {
                const score_criterion *cr = &m->crit[c];
                if (cr->category != k) continue;
                const score_value *v = &x->crit[c];
                if (cr->formula != SCORE_F_PARTS_MEAN) {
                    if (v->present) fprintf(f, "    %-24s raw %8.3f norm %6.1f\n", cr->id, v->raw, v->norm);
                    continue;
                }
                fprintf(f, "    %-24s %-12s range [%.1f, %.1f]\n", cr->id, "", v->lo, v->hi);
                for (int p = 0; p < cr->nparts; p++) {
                    const score_value *pv = &x->part[c][p];
                    char label[80];
                    snprintf(label, sizeof label, "%s.%s", cr->id, cr->part_id[p]);
                    if (pv->present) fprintf(f, "      %-22s raw %8.3f norm %6.1f%s%s\n", label, pv->raw, pv->norm,
                                             pv->src[0] ? "  from " : "", pv->src);
                    else if (pv->stale) fprintf(f, "      %-22s raw %8.3f (stale, not scored)\n", label, pv->stale_raw);
                }
            }
        }
        score_missing(m, x, print_missing, f);
        fprintf(f, "\n");
    }
}

void score_print(FILE *f, const score_run *r, score_fw *fw, int n) {
    const score_method *m = r->method;
    char as_of[32];
    score_date_iso(r->snapshot->as_of, as_of, sizeof as_of);
    fprintf(f, "Framework scores: snapshot of %s (measured inputs as of %s), %s\n", r->snapshot->date, as_of,
            r->mode);
    const score_snapshot *sn = r->snapshot;
    int g = 0, rc = 0, so = 0, stale = 0;
    for (int i = 0; i < sn->ngit; i++) g += sn->git[i].present;
    for (int i = 0; i < sn->nrepo_counts; i++) { rc += sn->repo_counts[i].v.present; stale += sn->repo_counts[i].v.stale; }
    for (int i = 0; i < sn->nso; i++) { so += sn->so[i].v.present; stale += sn->so[i].v.stale; }
    fprintf(f, "measured inputs: git history of %d/%d repositories, GitHub repository counts for %d/%d terms, "
            "StackOverflow questions for %d/%d tags", g, sn->ngit, rc, sn->nrepo_counts, so, sn->nso);
    if (stale) fprintf(f, "; %d count(s) stale (last good value kept, see %s)", stale, r->snapshot_path);
    fprintf(f, "\n");
    const score_fw *order[SCORE_MAX_FW];
    score_rank(fw, n, order);
    if (m->version >= 2) { print_v2(f, r, order, n); return; }
    fprintf(f, "method %s; %d frameworks; criterion values 0-100; a missing criterion is left out of its category\n\n",
            r->method_path, n);
    fprintf(f, "%-4s %-15s %-4s %7s", "rank", "framework", "tier", "overall");
    for (int k = 0; k < m->ncat; k++) fprintf(f, " %9.9s", m->cat[k].id);
    fprintf(f, "  %-7s %-11s\n", "missing", "status");
    for (int i = 0; i < n; i++) {
        const score_fw *x = order[i];
        const score_framework *fi = input_of(r->inputs, x->id);
        char tier[8] = "-", overall[16] = "-";
        if (x->overall_present) {
            snprintf(tier, sizeof tier, "%d", x->tier);
            snprintf(overall, sizeof overall, "%.1f", x->overall);
        }
        fprintf(f, "%-4d %-15s %-4s %7s", i + 1, x->name, tier, overall);
        for (int k = 0; k < m->ncat; k++) {
            if (x->cat_present[k]) fprintf(f, " %9.1f", x->cat[k]);
            else fprintf(f, " %9s", "-");
        }
        fprintf(f, "  %-7d %s%s\n", score_missing(m, x, NULL, NULL), fi ? fi->status : "?",
                fi && fi->in_2018 ? "" : " (new)");
    }
    fprintf(f, "\n");
    for (int i = 0; i < n; i++) {
        const score_fw *x = order[i];
        fprintf(f, "%s", x->name);
        if (x->overall_present) fprintf(f, ": overall %.1f, tier %d\n", x->overall, x->tier);
        else fprintf(f, ": no overall score (no category has data)\n");
        for (int k = 0; k < m->ncat; k++) {
            if (x->cat_present[k]) fprintf(f, "  %-22s %6.1f\n", m->cat[k].name, x->cat[k]);
            else fprintf(f, "  %-22s %6s\n", m->cat[k].name, "-");
            for (int c = 0; c < m->ncrit; c++) {
                const score_criterion *cr = &m->crit[c];
                if (cr->category != k) continue;
                const score_value *v = &x->crit[c];
                if (cr->formula == SCORE_F_PARTS_MEAN) {
                    if (v->present) fprintf(f, "    %-20s %-12s norm %6.1f  (mean of parts)\n", cr->id, "", v->norm);
                    else fprintf(f, "    %-20s %-12s norm %6s\n", cr->id, "", "-");
                    for (int p = 0; p < cr->nparts; p++) {
                        const score_value *pv = &x->part[c][p];
                        char label[80];
                        snprintf(label, sizeof label, "%s.%s", cr->id, cr->part_id[p]);
                        if (pv->present) fprintf(f, "      %-18s raw %8.3f norm %6.1f\n", label, pv->raw, pv->norm);
                    }
                } else if (v->present) {
                    fprintf(f, "    %-20s raw %8.3f norm %6.1f\n", cr->id, v->raw, v->norm);
                }
            }
        }
        score_missing(m, x, print_missing, f);
        fprintf(f, "\n");
    }
}

static json_t *num_or_null(int present, double v) { return present ? json_real(v) : json_null(); }

static json_t *value_json(const score_method *m, const score_value *v) {
    json_t *o = json_pack("{s:o, s:o}", "raw", num_or_null(v->present, v->raw), "normalised",
                          num_or_null(v->present, v->norm));
    if (o && !v->present) json_object_set_new(o, "missing", json_string(v->why));
    if (o && m->version >= 2) {
        json_object_set_new(o, "lower", json_real(v->lo));
        json_object_set_new(o, "upper", json_real(v->hi));
        json_object_set_new(o, "measured", json_boolean(v->measured));
        if (v->src[0]) json_object_set_new(o, "from", json_string(v->src));
        if (v->stale) json_object_set_new(o, "stale_raw", json_real(v->stale_raw));
    }
    return o;
}

int score_write_json(const char *path, const score_run *r, score_fw *fw, int n) {
    const score_method *m = r->method;
    char as_of[32], snap_as_of[32];
    score_date_iso(r->as_of, as_of, sizeof as_of);
    score_date_iso(r->snapshot->as_of, snap_as_of, sizeof snap_as_of);
    json_t *root = json_object(), *cats = json_array(), *crits = json_array(), *fws = json_array();
    if (!root || !cats || !crits || !fws) goto oom;
    json_object_set_new(root, "schema", json_string("showdown-scores/1"));
    json_object_set_new(root, "as_of", json_string(as_of));
    json_object_set_new(root, "mode", json_string(r->mode));
    json_object_set_new(root, "snapshot", json_pack("{s:s, s:s, s:s}", "date", r->snapshot->date, "as_of", snap_as_of,
                                                    "path", r->snapshot_path));
    for (int k = 0; k < m->ncat; k++)
        json_array_append_new(cats, json_pack("{s:s, s:s, s:f}", "id", m->cat[k].id, "name", m->cat[k].name, "weight",
                                              m->cat[k].weight));
    for (int c = 0; c < m->ncrit; c++) {
        const score_criterion *cr = &m->crit[c];
        json_t *o = json_pack("{s:s, s:s, s:s, s:f}", "id", cr->id, "name", cr->name, "category",
                              m->cat[cr->category].id, "weight", cr->weight);
        if (cr->about[0] && m->version >= 2) json_object_set_new(o, "about", json_string(cr->about));
        if (cr->formula == SCORE_F_PARTS_MEAN) {
            json_t *parts = json_array();
            for (int p = 0; p < cr->nparts; p++) json_array_append_new(parts, json_string(cr->part_id[p]));
            json_object_set_new(o, "parts", parts);
        } else {
            json_object_set_new(o, "scale", cr->scale.kind == SCORE_SCALE_FIXED
                                ? json_pack("{s:s, s:f, s:f}", "kind", "fixed", "min", cr->scale.min, "max", cr->scale.max)
                                : json_pack("{s:s}", "kind", "best"));
        }
        json_array_append_new(crits, o);
    }
    json_object_set_new(root, "method", json_pack("{s:s, s:i, s:o, s:o}", "path", r->method_path, "version",
                                                  m->version, "categories", cats, "criteria", crits));
    const score_fw *order[SCORE_MAX_FW];
    score_rank(fw, n, order);
    for (int i = 0; i < n; i++) {
        const score_fw *x = order[i];
        const score_framework *fi = input_of(r->inputs, x->id);
        json_t *o = json_object(), *cv = json_object(), *kv = json_object(), *miss = json_array();
        for (int c = 0; c < m->ncrit; c++) {
            const score_criterion *cr = &m->crit[c];
            json_t *e = value_json(m, &x->crit[c]);
            if (cr->formula == SCORE_F_PARTS_MEAN) {
                json_t *parts = json_object();
                for (int p = 0; p < cr->nparts; p++) json_object_set_new(parts, cr->part_id[p], value_json(m, &x->part[c][p]));
                json_object_set_new(e, "parts", parts);
            }
            json_object_set_new(cv, cr->id, e);
            if (cr->formula == SCORE_F_PARTS_MEAN) {
                for (int p = 0; p < cr->nparts; p++) {
                    if (x->part[c][p].present) continue;
                    char label[80];
                    snprintf(label, sizeof label, "%s.%s", cr->id, cr->part_id[p]);
                    json_array_append_new(miss, json_pack("{s:s, s:s}", "criterion", label, "why", x->part[c][p].why));
                }
            } else if (!x->crit[c].present) {
                json_array_append_new(miss, json_pack("{s:s, s:s}", "criterion", cr->id, "why", x->crit[c].why));
            }
        }
        for (int k = 0; k < m->ncat; k++) json_object_set_new(kv, m->cat[k].id, num_or_null(x->cat_present[k], x->cat[k]));
        json_object_set_new(o, "id", json_string(x->id));
        json_object_set_new(o, "name", json_string(x->name));
        json_object_set_new(o, "rank", json_integer(i + 1));
        json_object_set_new(o, "in_2018", json_boolean(fi && fi->in_2018));
        json_object_set_new(o, "status", json_string(m->version >= 2 ? x->status : fi ? fi->status : ""));
        json_object_set_new(o, "criteria", cv);
        json_object_set_new(o, "categories", kv);
        json_object_set_new(o, "overall", num_or_null(x->overall_present, x->overall));
        json_object_set_new(o, "tier", x->overall_present && x->tier ? json_integer(x->tier) : json_null());
        json_object_set_new(o, "missing", miss);
        if (m->version >= 2) {
            json_t *cr = json_object();
            for (int k = 0; k < m->ncat; k++)
                json_object_set_new(cr, m->cat[k].id, json_pack("{s:f, s:f, s:i, s:i, s:b}", "lower", x->cat_lo[k], "upper",
                                                                x->cat_hi[k], "measured", x->cat_measured[k], "criteria",
                                                                x->cat_ncrit[k], "insufficient", x->cat_insufficient[k]));
            json_object_set_new(o, "category_ranges", cr);
            json_object_set_new(o, "overall_range", json_pack("{s:f, s:f, s:s}", "lower", x->overall_lo, "upper",
                                                              x->overall_hi, "point", "midpoint"));
            json_object_set_new(o, "coverage", json_pack("{s:i, s:i, s:i}", "measured", x->cover_measured,
                                                         "hand_entered", x->cover_hand, "missing", x->cover_missing));
            json_object_set_new(o, "status_typed", json_string(fi ? fi->status : ""));
            json_object_set_new(o, "status_why", json_string(x->status_why));
        }
        json_array_append_new(fws, o);
    }
    json_object_set_new(root, "frameworks", fws);
    char *text = json_dumps(root, JSON_SORT_KEYS | JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    json_decref(root);
    if (!text) return sd_err(SD_ENOMEM, "out of memory");
    int rc = sd_write_file_atomic(path, text, strlen(text));
    free(text);
    return rc;
oom:
    json_decref(root); json_decref(cats); json_decref(crits); json_decref(fws);
    return sd_err(SD_ENOMEM, "out of memory");
}
