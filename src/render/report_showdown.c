/* report_showdown — "which framework, for what": every framework × workload phase as a multiple of the native
 * floor's time in one shaded grid per phase, Keras 3 on its back-ends side by side, the tables per phase (as
 * shipped, at the best setting and which, × native, peak memory, share of this machine's limit) and page 1's
 * ranking. A framework's best is its fastest measured setting; native's is its fastest back-end. */
#include "render/report_sections.h"
#include "bench/bench.h"
#include "bench/verify.h"
#include "core/err.h"
#include "nn/model.h"
#include "nn/roofline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXW 32
#define MAXF 32

enum { PH_TRAIN, PH_INFER, PH_N };
static const char *const phase_name[PH_N] = {"training", "inference"};

typedef struct cell {
    const rm_run *shipped, *best;   /* measured runs with a figure in the phase; NULL when none */
    const rm_run *why;              /* a run without figures (failed, n/a) */
    double shipped_v, best_v;       /* images/s; NAN when none */
} cell;

typedef struct grid {
    const char *precision;          /* the runs it holds: "fp32" (the headline) or "bf16" */
    int nw, nf;                     /* fw[0] is native */
    const char *wl[MAXW], *fw[MAXF];
    int has[MAXW][PH_N];            /* the workload has the phase */
    cell c[MAXF][MAXW][PH_N];
} grid;

static double phase_v(const rm_run *r, int ph) {
    double v = ph == PH_TRAIN ? r->images_per_s.median : r->infer_images_per_s.median;
    return v > 0 ? v : NAN;
}

static int idx(const char **a, int *n, const char *s, int max) {
    for (int i = 0; i < *n; i++)
        if (strcmp(a[i], s) == 0) return i;
    if (*n == max) return -1;
    a[*n] = s;
    return (*n)++;
}

/* Whether every run of impl was "unavailable" (not installed here). */
static int not_installed(const rdoc *d, const char *impl) {
    for (int i = 0; i < d->m->nruns; i++) {
        const rm_run *r = &d->m->runs[i];
        if (!r->published && strcmp(r->implementation, impl) == 0 && !(r->status && strcmp(r->status, "unavailable") == 0))
            return 0;
    }
    return 1;
}

static void cell_add(cell *c, const rm_run *r, int ph) {
    double v = phase_v(r, ph);
    if (!rb_is_measured(r) || isnan(v)) {
        if (!c->why && !rb_is_measured(r)) c->why = r;
        return;
    }
    int shipped = !r->setting || strcmp(r->setting, "shipped") == 0;
    if (shipped && (!c->shipped || v > c->shipped_v)) { c->shipped = r; c->shipped_v = v; }
    if (!c->best || v > c->best_v) { c->best = r; c->best_v = v; }
}

/* A run's precision; one that does not say is fp32. */
static const char *precision_of(const rm_run *r) { return r->precision ? r->precision : "fp32"; }

/* The grid of the measured results in one precision; 1 when there is no native floor or no framework beside it. */
static int grid_build(const rdoc *d, grid *g, const char *precision) {
    memset(g, 0, sizeof *g);
    g->precision = precision;
    g->fw[g->nf++] = "native";
    for (int i = 0; i < d->m->nruns; i++) {
        const rm_run *r = &d->m->runs[i];
        if (r->published || strcmp(precision_of(r), precision) != 0) continue;
        int w = idx(g->wl, &g->nw, r->workload, MAXW);
        if (w < 0 || (!rb_is_native(r) && not_installed(d, r->implementation))) continue;
        int f = idx(g->fw, &g->nf, r->implementation, MAXF);
        if (f < 0) continue;
        for (int ph = 0; ph < PH_N; ph++) {
            cell *c = &g->c[f][w][ph];
            cell_add(c, r, ph);
            if (!isnan(phase_v(r, ph)) && rb_is_measured(r)) g->has[w][ph] = 1;
        }
    }
    for (int w = 0; w < g->nw; w++)   /* a workload nothing measured still shows its failures */
        if (!g->has[w][PH_TRAIN] && !g->has[w][PH_INFER]) g->has[w][PH_TRAIN] = 1;
    int native = 0;
    for (int w = 0; w < g->nw; w++) native |= g->c[0][w][0].best || g->c[0][w][1].best;
    return native && g->nf > 1 ? 0 : 1;
}

/* Time relative to native (native's best images/s over the framework's): NAN when either is missing. */
static double ratio(const grid *g, int f, int w, int ph) {
    const cell *n = &g->c[0][w][ph], *c = &g->c[f][w][ph];
    return n->best && c->best ? n->best_v / c->best_v : NAN;
}

static const char *ratio_text(rdoc *d, double x) {
    return render_printf(d->a, x < 1 ? "%.2f×" : x < 10 ? "%.1f×" : "%.0f×", x);
}

/* A figure-less cell's word: "failed", "not run" (the quick report left it out), or "n/a" (unavailable,
 * unsupported). */
static const char *short_word(const rm_run *r) {
    const char *w = rb_status_word(r);
    return strcmp(w, "failed") == 0 || strcmp(w, "not run") == 0 ? w : "n/a";
}

/* A reason short enough for a cell: the error without its status prefix and the "<framework> runner" the row
 * names, cut at its first colon or parenthesis ("timed out", "not run"; the whole error is in the appendix). */
static const char *reason(rdoc *d, const rm_run *r) {
    const char *e = r->error ? r->error : "no reason recorded", *st = r->status;
    size_t sl = st ? strlen(st) : 0;
    if (st && strncmp(e, st, sl) == 0 && e[sl] == ':') e += sl + 1 + (e[sl + 1] == ' ');
    if (strncmp(e, "n/a: ", 5) == 0) e += 5;   /* a runner's own "n/a: no bf16 on CPU" */
    const size_t il = r->implementation ? strlen(r->implementation) : 0;
    if (il && strncmp(e, r->implementation, il) == 0 && strncmp(e + il, " runner ", 8) == 0) e += il + 8;
    size_t n = strcspn(e, "(:");
    while (n > 0 && e[n - 1] == ' ') n--;
    if (n > 48) n = 48;
    return render_printf(d->a, "%s: %.*s%s", short_word(r), (int)n, e, e[n] && n == 48 ? "…" : "");
}

static const char *cell_word(const cell *c) {
    if (c->best) return NULL;
    if (!c->why) return "–";
    return short_word(c->why);
}

/* A workload name that may wrap at its parts ("densenet121_xray" at "densenet|121_|xray"). */
static const char *wrap_name(rdoc *d, const char *s) {
    char buf[256];
    size_t o = 0;
    for (size_t i = 0; s[i] && o + 4 < sizeof buf; i++) {
        int digit_start = i > 0 && s[i] >= '0' && s[i] <= '9' && !(s[i - 1] >= '0' && s[i - 1] <= '9') && s[i - 1] != '_';
        if (digit_start) { memcpy(buf + o, "\xE2\x80\x8B", 3); o += 3; }
        buf[o++] = s[i];
        if (s[i] == '_') { memcpy(buf + o, "\xE2\x80\x8B", 3); o += 3; }
    }
    buf[o] = 0;
    return render_strdup(d->a, buf);
}

/* A shaded table figure of nr rows and nc columns from the report's arena (its table in *t, the shades in
 * *heat); NULL when out of memory. */
static render_fig *heat_fig(rdoc *d, int nr, int nc, const char *id, const char *title, render_table **t,
                            double **heat) {
    *t = rb_new_table(d, nr, nc);
    *heat = NEW(d, double, nr * nc);
    render_fig *f = *t && *heat ? rb_new_fig(d, RENDER_FIG_TABLE, id, title) : NULL;
    if (f) (*t)->heat = *heat;
    return f;
}

/* A grid figure of phase ph: a column per workload cols[0..nc) of g (names that wrap at their parts, two
 * decimals, the shade telling the fastest), nr rows headed row_head; its id "<what>-<phase>" and title
 * "<Phase>: <title>". NULL when out of memory. */
static render_fig *grid_fig(rdoc *d, const grid *g, int ph, const int *cols, int nc, int nr, const char *row_head,
                            const char *what, const char *title, render_table **t, double **heat) {
    render_fig *f = heat_fig(d, nr, nc, render_printf(d->a, "%s-%s", what, phase_name[ph]),
                             render_printf(d->a, "%s: %s", ph == PH_TRAIN ? "Training" : "Inference", title), t, heat);
    if (!f) return NULL;
    (*t)->row_head = row_head;
    (*t)->compact = 1;
    for (int k = 0; k < nc; k++) {
        (*t)->cols[k] = wrap_name(d, g->wl[cols[k]]);
        (*t)->best[k] = 0;
        (*t)->dec[k] = 2;
    }
    return f;
}

/* The grid of one phase: rows = frameworks, columns = workloads, cells = × native shaded on a log scale. */
static int heat_grid(rdoc *d, const grid *g, int ph) {
    int cols[MAXW], nc = 0;
    for (int w = 0; w < g->nw; w++) if (g->has[w][ph]) cols[nc++] = w;
    if (nc == 0) return 0;
    int nr = g->nf - 1;
    render_table *t;
    double *heat;
    render_fig *f = grid_fig(d, g, ph, cols, nc, nr, "Framework", "showdown",
                             "× native's time, each framework at its best setting", &t, &heat);
    if (!f) return sd_err(SD_ENOMEM, "out of memory");
    int nslow = 0;
    for (int f2 = 1; f2 <= nr; f2++) {
        t->rows[f2 - 1] = g->fw[f2];   /* versions are on page 1 and in the tables per phase */
        for (int k = 0; k < nc; k++) {
            int i = (f2 - 1) * nc + k;
            double x = ratio(g, f2, cols[k], ph);
            heat[i] = x;
            t->v[i] = x;
            const char *word = cell_word(&g->c[f2][cols[k]][ph]);
            /* a ratio either of whose figures a slow spell measured: on a quiet host it comes out otherwise */
            const int slow = !isnan(x) && (rb_ran_slow(g->c[f2][cols[k]][ph].best) || rb_ran_slow(g->c[0][cols[k]][ph].best));
            nslow += slow;
            t->text[i] = isnan(x) ? (word ? word : "–")
                                  : render_printf(d->a, x < 1 ? "%.2f%s" : x < 10 ? "%.1f%s" : "%.0f%s", x, slow ? " ‡" : "");
        }
    }
    f->u.table = t;
    f->note = render_printf(d->a, "How many times longer the same %s takes than on native (1 = as fast; under 1: faster). "
                                  "Each framework at its best setting (the tables of %s name it). Shade on a log scale: "
                                  "green at or under 1, pale yellow just over it, red at 100 and beyond. n/a: the runner "
                                  "cannot build the workload; failed: it crashed or ran out of time; not run: the quick report "
                                  "left it out after the framework overran its time on a lighter workload (FULL=1 runs "
                                  "it); –: not measured.%s",
                            ph == PH_TRAIN ? "training step" : "inference pass", phase_name[ph],
                            nslow ? render_printf(d->a, " ‡: the framework's or native's figure was measured while this "
                                                        "machine's host ran below %.0f%% of its speed (the tables of %s "
                                                        "say which): on a quiet host the ratio comes out otherwise.",
                                                  100 * SD_HOST_SLOW, phase_name[ph]) : "");
    return rb_add_fig(d, f);
}

/* Keras 3 on each back-end side by side: per workload and phase, each back-end's best images/s, shaded by its
 * time relative to native. */
static int keras_table(rdoc *d, const grid *g) {
    int ks[3], nk = 0;
    for (int f = 1; f < g->nf && nk < 3; f++)
        if (strncmp(g->fw[f], "keras-", 6) == 0) ks[nk++] = f;
    if (nk == 0) return 0;
    int nc = PH_N * nk;
    render_table *t;
    double *heat;
    render_fig *f = heat_fig(d, g->nw, nc, "keras-backends", "Keras 3 on its back-ends, side by side", &t, &heat);
    if (!f) return sd_err(SD_ENOMEM, "out of memory");
    t->groups = NEW(d, const char *, nc);
    if (!t->groups) return sd_err(SD_ENOMEM, "out of memory");
    t->row_head = "Workload";
    for (int ph = 0; ph < PH_N; ph++)
        for (int k = 0; k < nk; k++) {
            int c = ph * nk + k;
            t->groups[c] = ph == PH_TRAIN ? "training, images/s" : "inference, images/s";
            t->cols[c] = g->fw[ks[k]] + 6;
            t->best[c] = 0;
            t->dec[c] = 0;
        }
    for (int w = 0; w < g->nw; w++) {
        t->rows[w] = g->wl[w];
        for (int c = 0; c < nc; c++) {
            int ph = c / nk, k = c % nk, i = w * nc + c;
            const cell *x = &g->c[ks[k]][w][ph];
            heat[i] = NAN;
            if (!g->has[w][ph]) { t->text[i] = "–"; continue; }
            if (!x->best) { t->text[i] = cell_word(x); continue; }
            t->v[i] = x->best_v;
            heat[i] = ratio(g, ks[k], w, ph);
            if (t->v[i] < 10) t->text[i] = render_printf(d->a, "%.1f", t->v[i]);
        }
    }
    const char *v = rb_fw_version(d, g->fw[ks[0]]);
    f->u.table = t;
    f->note = render_printf(d->a, "The same Keras%s%s model code on each back-end (KERAS_BACKEND), at its fastest measured "
                                  "setting; shaded by time relative to native as in the figures above (green: as fast as "
                                  "native or faster).", v ? " " : "", v ? v : "");
    return rb_add_fig(d, f);
}

int rb_sec_showdown(rdoc *d, const rt_section *s) {
    (void)s;
    grid *g = calloc(1, sizeof *g);
    if (!g) return sd_err(SD_ENOMEM, "out of memory");
    int rc = grid_build(d, g, "fp32");
    if (rc == 0) rc = heat_grid(d, g, PH_TRAIN);
    if (rc == 0) rc = heat_grid(d, g, PH_INFER);
    if (rc == 0) rc = keras_table(d, g);
    free(g);
    return rc;
}

/* ---- the tables per phase --------------------------------------------------------------------------------- */
/* This machine's limits as the results recorded them (`showdown perf --roofline`'s roofline_machine); peak 0: none. */
static nn_machine machine_of(const rdoc *d) {
    static const char *const keys[] = {"peak_gflops", "wino_fwd_gflops", "wino_bwd_gflops", "bandwidth_gbs",
                                       "cache_bandwidth_gbs", "cache_bytes"};
    double x[6];
    for (int k = 0; k < 6; k++) {
        char key[64];
        snprintf(key, sizeof key, "roofline_machine.%s", keys[k]);
        const char *v = render_model_env(d->m, key);
        char *e;
        x[k] = v ? strtod(v, &e) : NAN;
        if (!v || e == v || !(x[k] > 0)) x[k] = 0;
    }
    return (nn_machine){.peak = x[0] * 1e9, .wino_fwd = x[1] * 1e9, .wino_bwd = x[2] * 1e9, .bandwidth = x[3] * 1e9,
                        .cache_bandwidth = x[4] * 1e9, .cache_bytes = x[5]};
}

/* The share of this machine's limit a run reached in a phase, in %: the roofline floor of a batch over the run's
 * time a batch (docs/roofline.md); without the workload's spec, its FLOP/s over the sgemm peak. NAN: unknown. */
static double pct_limit(const nn_machine *mc, const rm_run *r, int ph, double ips) {
    if (!(mc->peak > 0) || !(ips > 0)) return NAN;
    sd_workload w;
    if (r->batch > 0 && sd_workload_load(&w, "workloads", r->spec ? r->spec : r->workload) == 0) {
        nn_roofline rf;
        int rc = nn_roofline_workload(&w, r->batch, ph == PH_TRAIN ? NN_PHASE_TRAIN : NN_PHASE_INFER, mc, &rf);
        sd_workload_free(&w);
        if (rc == 0 && rf.floor_s > 0) return 100 * rf.floor_s * ips / r->batch;
    }
    double gf = ph == PH_TRAIN ? r->gflops : r->infer_gflops;
    return gf > 0 ? 100 * gf * 1e9 / mc->peak : NAN;
}

/* Whether a run's figure in phase ph is wider in its own spread than verify's tolerance: no rerun can check it. */
static int too_wide(const rm_run *r, int ph) {
    return r && (ph == PH_TRAIN ? r->train_spread_pct : r->infer_spread_pct) > SD_VERIFY_TOLERANCE_PCT;
}

static const char *setting_label(const rm_run *r) {
    if (rb_is_native(r)) return rb_backend_name(r->backend) ? rb_backend_name(r->backend) : "native";
    return r->setting ? r->setting : "shipped";
}

/* One phase: a row per workload and implementation, native first. */
static int phase_table(rdoc *d, const grid *g, int ph, const nn_machine *mc) {
    int nr = 0;
    for (int w = 0; w < g->nw; w++) if (g->has[w][ph]) nr += g->nf;
    if (nr == 0) return 0;
    int pct = mc->peak > 0, nc = 5 + pct;
    render_table *t;
    double *heat;
    render_fig *f = heat_fig(d, nr, nc, render_printf(d->a, "phase-%s", phase_name[ph]),
                             render_printf(d->a, "%s throughput per workload and framework",
                                           ph == PH_TRAIN ? "Training" : "Inference"), &t, &heat);
    if (!f) return sd_err(SD_ENOMEM, "out of memory");
    t->compact = 1;   /* narrow numeric columns leave the row labels room for one line */
    t->row_head = "Workload · implementation";
    /* memory like with like: on a GPU each side's device allocator peak, on the CPU each process's peak RSS */
    int gpu = 0;
    for (int w = 0; w < g->nw; w++) {
        const rm_run *n = g->c[0][w][ph].best;
        gpu |= n && rb_is_gpu(n);
    }
    static const char *const cols[] = {"as shipped", "best", "best setting", "× native", "peak", "of limit"};
    static const char *const units[] = {"images/s", "images/s", "", "time", "MiB", "%"};
    for (int c = 0; c < nc; c++) { t->cols[c] = cols[c]; t->units[c] = units[c]; heat[c] = NAN; }
    t->cols[4] = gpu ? "device peak" : "peak RSS";
    t->dec[0] = t->dec[1] = t->dec[4] = t->dec[5] = 0;
    t->dec[3] = 2;
    int r = 0, nwide = 0, nslow = 0;
    double slowest = 1;
    for (int w = 0; w < g->nw; w++) {
        if (!g->has[w][ph]) continue;
        for (int fi = 0; fi < g->nf; fi++, r++) {
            const cell *c = &g->c[fi][w][ph];
            double *v = &t->v[r * nc];
            const char **tx = &t->text[r * nc];
            for (int k = 0; k < nc; k++) heat[r * nc + k] = NAN;
            const rm_run *any = c->best ? c->best : c->why;   /* versions: page 1 */
            t->rows[r] = render_printf(d->a, "%s · %s", g->wl[w], fi == 0 && any ? rb_impl_label(d, any) : g->fw[fi]);
            if (!c->best) {
                tx[0] = tx[1] = tx[3] = tx[4] = "–";
                if (pct) tx[5] = "–";
                tx[2] = c->why ? reason(d, c->why) : "not run";
                continue;
            }
            v[0] = c->shipped_v;
            if (!c->shipped) tx[0] = fi == 0 ? "–" : "not run";
            v[1] = c->best_v;
            tx[2] = setting_label(c->best);
            v[3] = ratio(g, fi, w, ph);
            heat[r * nc + 3] = v[3];
            if (isnan(v[3])) tx[3] = "–";
            for (int k = 0; k < 2; k++) {   /* a slow framework's few images/s keep their digits */
                if (v[k] > 0 && v[k] < 10 && !tx[k]) tx[k] = render_printf(d->a, v[k] < 1 ? "%.2f" : "%.1f", v[k]);
                const rm_run *run = k == 0 ? c->shipped : c->best;
                const int wide = too_wide(run, ph), slow = rb_ran_slow(run);
                if (!wide && !slow) continue;
                char num[64];
                render_fmt_num(num, sizeof num, v[k], 0);
                tx[k] = render_printf(d->a, "%s%s%s", tx[k] ? tx[k] : num, wide ? " †" : "", slow ? " ‡" : "");
                nwide += wide;
                nslow += slow;
                if (slow && run->host_speed < slowest) slowest = run->host_speed;
            }
            const long long peak = gpu ? c->best->peak_bytes : c->best->peak_rss_bytes;
            v[4] = peak > 0 ? (double)peak / 1048576.0 : NAN;
            if (isnan(v[4])) tx[4] = "–";
            if (pct) {
                v[5] = pct_limit(mc, c->best, ph, c->best_v);
                if (isnan(v[5])) tx[5] = "–";
            }
        }
    }
    f->u.table = t;
    /* a best that reads "shipped" where the best-setting pass did not try the others says so */
    const char *untried = render_model_env(d->m, "best_not_tried");
    f->note = render_printf(d->a, "Steady-state %s images per second (medians), as shipped and at the framework's best "
                                  "setting, its fastest measured (native: its fastest back-end); × native: how many times "
                                  "longer than native, at the best setting; %s%s%s%s%s%s%s%s",
                            phase_name[ph],
                            gpu ? "device peak: the most device memory each side's allocator held at once (native: "
                                  "its back-end's buffers; a framework: its own allocator's peak)."
                                : "peak RSS: the peak resident memory of the process that measured the best setting, "
                                  "the most of its repeats (native: showdown's, reset at each repeat; a framework: its "
                                  "runner's or best-setting process's, the interpreter, the framework and the data "
                                  "included).",
                            ph == PH_INFER ? " A run's inference figure is its fastest timed pass (or window)." : "",
                            untried ? " Best settings not tried: " : "", untried ? untried : "",
                            untried ? "." : "",
                            nwide ? render_printf(d->a, " †: the figure's own spread (over its processes or repeats, and "
                                                        "a run's steady epochs) is wider than %.0f%%, the tolerance of "
                                                        "`showdown verify --rerun`, which then calls it UNVERIFIABLE "
                                                        "unless a rerun lands within %.0f%% of it.",
                                                  SD_VERIFY_TOLERANCE_PCT, SD_VERIFY_TOLERANCE_PCT) : "",
                            nslow ? render_printf(d->a, " ‡: measured while this machine's host ran below %.0f%% of its "
                                                        "speed (its canary; %.0f%% at the slowest) after the waits for it "
                                                        "ran out: a rerun on a quiet host runs faster, and `showdown "
                                                        "verify --rerun` calls such a figure UNVERIFIABLE.",
                                                  100 * SD_HOST_SLOW, 100 * slowest) : "",
                            pct ? " Of limit: the share of this machine's limit reached, the roofline floor of a batch "
                                  "(docs/roofline.md: each kernel's max of FLOPs over the measured sgemm peak and bytes "
                                  "over the measured bandwidth) over the measured time a batch; over 100% is possible "
                                  "where fused kernels move fewer bytes than the floor counts."
                                : "");
    return rb_add_fig(d, f);
}

int rb_sec_phase_tables(rdoc *d, const rt_section *s) {
    (void)s;
    grid *g = calloc(1, sizeof *g);
    if (!g) return sd_err(SD_ENOMEM, "out of memory");
    nn_machine mc = machine_of(d);
    int rc = grid_build(d, g, "fp32");
    if (rc == 0) rc = phase_table(d, g, PH_TRAIN, &mc);
    if (rc == 0) rc = phase_table(d, g, PH_INFER, &mc);
    free(g);
    return rc;
}

/* ---- mixed precision -------------------------------------------------------------------------------------- */
/* One phase: per framework (rows) and workload (columns) its best bf16 images/s over its best fp32 images/s, shaded
 * by the time ratio (green: bf16 faster); a framework without bf16 says why. 1 when the phase has no bf16 cell. */
static int precision_grid(rdoc *d, const grid *g32, const grid *g16, int ph) {
    int cols[MAXW], nc = 0;
    for (int w = 0; w < g16->nw; w++) {
        int any = 0;
        for (int f = 0; f < g16->nf; f++) any |= g16->c[f][w][ph].best != NULL || g16->c[f][w][ph].why != NULL;
        if (any && g16->has[w][ph]) cols[nc++] = w;
    }
    if (nc == 0) return 1;
    int nr = g16->nf;
    render_table *t;
    double *heat;
    render_fig *f = grid_fig(d, g16, ph, cols, nc, nr, "Implementation", "bf16",
                             "bf16 speed over fp32 speed, each at its best setting", &t, &heat);
    if (!f) return sd_err(SD_ENOMEM, "out of memory");
    for (int r = 0; r < nr; r++) {
        const char *fw = g16->fw[r];
        int f32 = -1;
        for (int j = 0; j < g32->nf; j++) if (strcmp(g32->fw[j], fw) == 0) f32 = j;
        t->rows[r] = fw;
        for (int k = 0; k < nc; k++) {
            int i = r * nc + k, w32 = -1;
            for (int j = 0; j < g32->nw; j++) if (strcmp(g32->wl[j], g16->wl[cols[k]]) == 0) w32 = j;
            const cell *c16 = &g16->c[r][cols[k]][ph];
            const cell *c32 = f32 >= 0 && w32 >= 0 ? &g32->c[f32][w32][ph] : NULL;
            double x = c16->best && c32 && c32->best ? c16->best_v / c32->best_v : NAN;
            t->v[i] = x;
            heat[i] = x > 0 ? 1 / x : NAN;
            if (isnan(x)) t->text[i] = c16->best ? "no fp32" : c16->why ? reason(d, c16->why) : "–";
        }
    }
    f->u.table = t;
    f->note = render_printf(d->a, "How many times faster the %s runs in bf16 mixed precision (bf16 products, fp32 weights, "
                                  "optimizer and loss) than in fp32, each precision at the framework's fastest measured "
                                  "setting (native: its fastest back-end). Over 1: bf16 is faster; shaded green where it "
                                  "is. n/a: the framework or this CPU has no bf16 mixed precision (the reason follows). "
                                  "The rest of this report is fp32.",
                            ph == PH_TRAIN ? "training step" : "inference pass");
    return rb_add_fig(d, f);
}

int rb_sec_precision(rdoc *d, const rt_section *s) {
    (void)s;
    grid *g32 = calloc(1, sizeof *g32), *g16 = calloc(1, sizeof *g16);
    int rc = g32 && g16 ? 0 : sd_err(SD_ENOMEM, "out of memory");
    if (rc == 0) {
        grid_build(d, g32, "fp32");
        grid_build(d, g16, "bf16");
        int tr = precision_grid(d, g32, g16, PH_TRAIN);
        int in = tr < 0 ? tr : precision_grid(d, g32, g16, PH_INFER);
        rc = tr < 0 ? tr : in < 0 ? in : tr == 1 && in == 1 ? 1 : 0;
    }
    free(g32);
    free(g16);
    return rc;
}

/* ---- page 1 --------------------------------------------------------------------------------------------- */
typedef struct rank { int f, n, of; double gm; } rank;

static int rank_cmp(const void *a, const void *b) {
    const rank *x = a, *y = b;
    return (x->gm > y->gm) - (x->gm < y->gm);
}

const char *rb_framework_ranking(rdoc *d) {
    grid *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    const char *out = NULL;
    rank rk[MAXF];
    int n = 0, cells = 0;
    if (grid_build(d, g, "fp32") == 0) {
        for (int w = 0; w < g->nw; w++) cells += g->has[w][PH_TRAIN] + g->has[w][PH_INFER];
        for (int f = 1; f < g->nf; f++) {
            double s = 0;
            int k = 0;
            for (int w = 0; w < g->nw; w++)
                for (int ph = 0; ph < PH_N; ph++) {
                    double x = g->has[w][ph] ? ratio(g, f, w, ph) : NAN;
                    if (!isnan(x)) { s += log(x); k++; }
                }
            rk[n++] = (rank){f, k, cells, k ? exp(s / k) : INFINITY};
        }
        qsort(rk, (size_t)n, sizeof *rk, rank_cmp);
        for (int i = 0; i < n; i++) {
            const char *lab = g->fw[rk[i].f];   /* the versions: the Frameworks row above */
            const char *item = rk[i].n ? render_printf(d->a, "%d. %s %s (%d of %d)", i + 1, lab, ratio_text(d, rk[i].gm),
                                                       rk[i].n, rk[i].of)
                                       : render_printf(d->a, "%s: none measured", lab);
            out = out ? render_printf(d->a, "%s · %s", out, item) : item;
        }
    }
    free(g);
    return out ? render_printf(d->a, "%s — time over native's at each one's best setting, geometric mean over the "
                                     "workload phases it ran (of all measured); per workload: the tables that follow.",
                               out)
               : NULL;
}
