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
    if (x->overall != y->overall) return x->overall < y->overall ? 1 : -1;
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
    fprintf(f, "method %s; %d frameworks; criterion values 0-100; a missing criterion is left out of its category\n\n",
            r->method_path, n);
    const score_fw *order[SCORE_MAX_FW];
    score_rank(fw, n, order);
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

static json_t *value_json(const score_value *v) {
    json_t *o = json_pack("{s:o, s:o}", "raw", num_or_null(v->present, v->raw), "normalised",
                          num_or_null(v->present, v->norm));
    if (o && !v->present) json_object_set_new(o, "missing", json_string(v->why));
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
    json_object_set_new(root, "method", json_pack("{s:s, s:o, s:o}", "path", r->method_path, "categories", cats,
                                                  "criteria", crits));
    const score_fw *order[SCORE_MAX_FW];
    score_rank(fw, n, order);
    for (int i = 0; i < n; i++) {
        const score_fw *x = order[i];
        const score_framework *fi = input_of(r->inputs, x->id);
        json_t *o = json_object(), *cv = json_object(), *kv = json_object(), *miss = json_array();
        for (int c = 0; c < m->ncrit; c++) {
            const score_criterion *cr = &m->crit[c];
            json_t *e = value_json(&x->crit[c]);
            if (cr->formula == SCORE_F_PARTS_MEAN) {
                json_t *parts = json_object();
                for (int p = 0; p < cr->nparts; p++) json_object_set_new(parts, cr->part_id[p], value_json(&x->part[c][p]));
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
        json_object_set_new(o, "status", json_string(fi ? fi->status : ""));
        json_object_set_new(o, "criteria", cv);
        json_object_set_new(o, "categories", kv);
        json_object_set_new(o, "overall", num_or_null(x->overall_present, x->overall));
        json_object_set_new(o, "tier", x->overall_present ? json_integer(x->tier) : json_null());
        json_object_set_new(o, "missing", miss);
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
