/* report_summary — the cover and page 1's "At a glance": what was measured, where, on what data, for how
 * long, the fastest, the frameworks' overhead, the score ranking and what the published numbers came to. */
#include "render/report_sections.h"
#include "core/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
    int n = 0, best = 0;
    for (int i = 0; i < d->m->nruns; i++) {
        const rm_run *r = &d->m->runs[i];
        if (!rb_is_measured(r)) continue;
        if (r->setting) { best = 1; continue; }   /* a best-setting run records no data: its batch is synthetic */
        const char *nm = dataset_name(d, r);
        int k = 0;
        while (k < n && strcmp(names[k], nm) != 0) k++;
        if (k == n) { if (n == 32) continue; names[n] = nm; wls[n++] = r->workload; continue; }
        if (!strstr(wls[k], r->workload)) wls[k] = render_printf(d->a, "%s, %s", wls[k], r->workload);
    }
    const char *out = NULL;
    for (int k = 0; k < n; k++) out = cat(d, out, "; ", render_printf(d->a, "%s: %s", wls[k], names[k]));
    return best ? cat(d, out, "; ", "best settings: one resident batch of synthetic data") : out;
}

static const char *summary_length(rdoc *d) {
    int epochs = 0, batches = 0, batch = 0, repeats = 0, any = 0, procs = 0;
    for (int i = 0; i < d->m->nruns; i++) {
        const rm_run *r = &d->m->runs[i];
        if (rb_is_measured(r) && r->setting && (!procs || r->nrepeats < procs)) procs = r->nrepeats;
        if (!rb_is_measured(r) || r->setting) continue;
        any = 1;
        int e = rb_pos_int(rb_run_setting(r, "epochs"));
        if (e > epochs) epochs = e;
        if (r->max_batches > batches) batches = r->max_batches;
        if (r->batch > batch) batch = r->batch;
        if (r->nrepeats > repeats) repeats = r->nrepeats;
    }
    if (!any) return NULL;
    return render_printf(d->a, "Up to %d epoch%s per run%s, %d repeat%s (medians shown). %s%s Longer cells and confirmed "
                               "rounds: `make report FULL=1`.",
                         epochs, epochs == 1 ? "" : "s",
                         batches ? render_printf(d->a, ", each cut to at most %d batches of up to %d images", batches, batch) : "",
                         repeats, repeats == 1 ? "" : "s",
                         batches ? "A short first try: times per full epoch are projected from the timed batches." : "",
                         procs > 1 ? render_printf(d->a, " Best settings: the median of %d processes each.", procs) : "");
}

/* The fastest implementation of each workload. The one fastest on the most workloads is said once with its figures,
 * the others by workload: a row of page 1's table, which must not push the table off page 1. */
static const char *summary_fastest(rdoc *d) {
    const char *wl[64], *name[64], *label[64], *fig[64], *mark[64];
    int nw = rb_workloads(d, wl, 64), n = 0, nslow = 0;
    for (int w = 0; w < nw; w++) {
        const rm_run *best = NULL;
        int slow = 0;   /* a contender a slow spell measured: on a quiet host another may come out fastest */
        for (int i = 0; i < d->m->nruns; i++) {
            const rm_run *r = &d->m->runs[i];
            if (!rb_is_measured(r) || strcmp(r->workload, wl[w]) != 0 || isnan(r->images_per_s.median)) continue;
            if (!best || r->images_per_s.median > best->images_per_s.median) best = r;
            slow |= rb_ran_slow(r);
        }
        if (!best) continue;
        nslow += slow;
        char v[32];
        render_fmt_num(v, sizeof v, best->images_per_s.median, 0);
        name[n] = wl[w];
        label[n] = rb_impl_label(d, best);
        mark[n] = slow ? " ‡" : "";
        fig[n++] = render_printf(d->a, "%s", v);
    }
    int top = -1, topn = 0;
    for (int i = 0; i < n; i++) {
        int k = 0;
        for (int j = 0; j < n; j++) k += strcmp(label[j], label[i]) == 0;
        if (k > topn) { top = i; topn = k; }
    }
    const char *figs = NULL, *rest = NULL;
    for (int i = 0; i < n; i++) {
        if (topn > 1 && strcmp(label[i], label[top]) == 0)
            figs = cat(d, figs, ", ", render_printf(d->a, "%s %s%s", name[i], fig[i], mark[i]));
        else
            rest = cat(d, rest, "; ", render_printf(d->a, "%s: %s (%s images/s)%s", name[i], label[i], fig[i], mark[i]));
    }
    const char *why = nslow ? " (‡: some measured in a host slow spell)" : "";
    if (topn < 2) return rest ? render_printf(d->a, "%s%s", rest, why) : NULL;
    const char *head = topn == n ? render_printf(d->a, "%s on every workload (images/s): %s", label[top], figs)
                                 : render_printf(d->a, "%s on %d of %d workloads (images/s): %s", label[top], topn, n, figs);
    return render_printf(d->a, "%s%s%s%s", head, rest ? "; elsewhere " : "", rest ? rest : "", why);
}

/* The command a reader runs to re-check the measured figures: verify --rerun on the results file. By its file name:
 * a recorded report renders again from a copy elsewhere, and must come out the same. */
static const char *summary_recheck(rdoc *d) {
    for (int i = 0; i < d->m->nfiles; i++) {
        const rm_file *f = &d->m->files[i];
        if (strcmp(f->kind, "results") != 0 || !f->path || strchr(f->path, '('))   /* a database run has no file */
            continue;
        return render_printf(d->a, "`showdown verify %s --rerun` (the results file of this report; `make report` writes "
                                   "it to out/bench/) measures every cell again and says, cell by cell, whether it "
                                   "reproduces within 10%% or why it cannot be compared.", rb_base(f->path));
    }
    return NULL;
}

static const char *summary_frameworks(rdoc *d) {
    const char *names[32], *out = NULL, *missing = rb_not_installed(d);
    int measured[32], nf = rb_framework_names(d, names, measured, 32);
    for (int k = 0; k < nf; k++) {
        if (!measured[k]) continue;
        const char *v = rb_fw_version(d, names[k]);
        out = cat(d, out, ", ", v ? render_printf(d->a, "%s %s", names[k], v) : names[k]);
        if (rb_outdated(names[k], v))
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
    int total = sc->nfw * sc->ncrit, miss = rb_n_missing_criteria(d);
    const rm_file *f = sc->file;
    return render_printf(d->a, "%s%s (of %d; 0–100%s). %d of %d framework-criterion values have data, the rest left out of "
                               "the means; as of %s (the Scores section says how).",
                         out ? out : "no overall scores", sc->nfw > 5 ? ", ..." : "", sc->nfw,
                         sc->has_ranges ? "; ranked on the lower bound of each range" : "", total - miss, total,
                         f && f->as_of ? f->as_of : "an undated run");
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
                const char *dv = x->device ? rb_gpu_short(d, x->device) : NULL;
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
    const char *dev = rb_env_device(d), *cores = render_model_env(d->m, "cores"), *mem = render_model_env(d->m, "memory_bytes");
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
    const char *bk = rb_backends_list(d);
    if (!bk) return NULL;
    const char *s = bk;
    if (strstr(bk, "reference C")) s = render_printf(d->a, "%s (reference C is the plain-C specification the others are checked "
                                                         "against, not an optimised path)", s);
    for (int i = 0; i < d->m->nruns; i++) {
        const rm_run *r = &d->m->runs[i];
        if (!r->published && r->failed && rb_is_native(r) && rb_is_gpu(r)) {
            s = render_printf(d->a, "%s; cuDNN built but not run (no GPU)", s);
            break;
        }
    }
    return s;
}

static int summary_table(rdoc *d) {
    const char *k[10], *v[10];
    int n = 0;
#define ROW(key, val) do { const char *x_ = (val); if (x_) { k[n] = (key); v[n++] = x_; } } while (0)
    ROW("Hardware", summary_hardware(d));
    ROW("Back-ends", summary_backends(d));
    ROW("Frameworks", summary_frameworks(d));
    ROW("Data sets", summary_data(d));
    ROW("Run length", summary_length(d));
    ROW("Fastest", summary_fastest(d));
    ROW("Frameworks ranked", rb_framework_ranking(d));
    ROW("Score ranking", summary_scores(d));
    ROW("Published numbers", summary_published(d));
    ROW("Re-check", summary_recheck(d));
#undef ROW
    if (n == 0) return 0;
    render_table *t = rb_new_table(d, n, 1);
    render_fig *f = t ? rb_new_fig(d, RENDER_FIG_TABLE, "summary", "At a glance") : NULL;
    if (!f) return sd_err(SD_ENOMEM, "out of memory");
    t->row_head = "";
    t->cols[0] = "";
    for (int i = 0; i < n; i++) { t->rows[i] = k[i]; t->text[i] = v[i]; }
    f->u.table = t;
    return rb_add_fig(d, f);
}

int rb_sec_cover(rdoc *d, const rt_section *s) {
    if (!s->compact) {
        SD_TRY(rb_add(d, RB_GAP, NULL, NULL));
        d->b[d->n - 1].gap = 20;
    }
    SD_TRY(rb_add(d, RB_TITLE, rb_expand(d, s->title ? s->title : d->t->title), NULL));
    if (d->t->subtitle) SD_TRY(rb_add(d, RB_SUBTITLE, rb_expand(d, d->t->subtitle), NULL));
    const char *dev = rb_env_device(d), *bk = rb_backends_list(d);
    const char *line = render_printf(d->a, "As of %s · showdown %s", d->date ? d->date : "undated (no input carries a date)", SD_VERSION);
    SD_TRY(rb_add(d, RB_SUBTITLE, line, NULL));
    if (s->text) SD_TRY(rb_add(d, RB_PARA, rb_expand(d, s->text), NULL));
    SD_TRY(rb_add(d, RB_GAP, NULL, NULL));   /* becomes the note on omitted sections, if any */
    d->omit_note = d->n - 1;
    if (s->compact) {
        SD_TRY(rb_add(d, RB_PARA, render_printf(d->a, "Machine: %s. Back-ends: %s. Scores as of %s; results as of %s.",
                                                 dev ? dev : "unknown", bk ? bk : "none",
                                                 rb_kind_date(d, "scores") ? rb_kind_date(d, "scores") : "–",
                                                 rb_kind_date(d, "results") ? rb_kind_date(d, "results") : "–"), NULL));
        return 0;
    }
    /* what was measured, where, on what data, for how long, and what to conclude; the full environment and
     * the inputs are in the appendix. The full cover is a page of its own. */
    SD_TRY(summary_table(d));
    return rb_add(d, RB_BREAK, NULL, NULL);
}
