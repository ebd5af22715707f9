/* verify — the verdict of each published cell (verify.h). Reads documents only through the results module
 * (bench/results.h): the keys of a results file are spelled there. */
#include "bench/verify.h"
#include "bench/bench.h"
#include "bench/frameworks.h"
#include "bench/results.h"
#include "core/err.h"
#include "core/omp_policy.h"
#include "core/util.h"
#include "db/db.h"
#include "nn/backend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

typedef struct vcounts { int reproduced, slower, faster, accuracy, unverifiable, notcomp, missing, unmeasured; } vcounts;

/* One published cell and what became of it. */
typedef struct vcell {
    sd_run_view v;
    const char *w, *impl, *be, *metric;   /* metric: the published time figure, NULL when there is none */
    sd_stat pub, ms;                      /* published and measured statistic of metric (ms.n = 0: none) */
    double macc;
    json_t *env;                          /* the cell's published environment */
    char dev[320];
    const char *verdict;
    char why[1024], note[512];            /* note: said after the why (a substitute interpreter, ...) */
    char status_up[32];                   /* the verdict of a run that measured nothing: its status, upper case */
    int unrunnable;                       /* its rerun cannot run here as published (interpreter, script) */
    int wide;                             /* UNVERIFIABLE because its measurement spreads wider than the tolerance */
    const json_t *run;                    /* the published run */
    double mhost;                         /* the host's speed over the measurement (its canary; NAN: not known) */
    json_t *mdoc;                         /* its rerun's results, kept for a sibling cell of the same run */
    const struct vcell *sibling;          /* the cell of the same run whose rerun this one is judged from */
    int again;                            /* measured again after the others */
    json_t *pre;                          /* a bench cell's processes from the rounds, joined into one run */
    char *pre_why;                        /* why its rounds gave no figure (a process failed) */
    long pre_n;                           /* how many processes pre holds */
} vcell;

static const char *str(const json_t *v) { return json_is_string(v) ? json_string_value(v) : ""; }

static void addf(char *buf, size_t n, const char *fmt, const char *a, const char *b) {
    size_t l = strlen(buf);
    if (l && l + 2 < n) { strncat(buf, "; ", n - l - 1); l += 2; }
    if (l < n) snprintf(buf + l, n - l, fmt, a, b);
}

/* "CPU Intel Xeon ... (2 cores)", "Tesla K80 (GPU)", "4x Tesla V100 (GPU)" or "GPU (model not stated)" */
static void device_str(char *buf, size_t n, const sd_env_view *e, int is_gpu) {
    if (e->gpu_name && e->gpu_count > 1) snprintf(buf, n, "%lldx %s (GPU)", e->gpu_count, e->gpu_name);
    else if (e->gpu_name) snprintf(buf, n, "%s (GPU)", e->gpu_name);
    else if (is_gpu) snprintf(buf, n, "GPU (model not stated)");
    else if (e->cores > 0) snprintf(buf, n, "CPU %s (%lld cores)", e->cpu_model ? e->cpu_model : "unknown", e->cores);
    else snprintf(buf, n, "CPU %s", e->cpu_model ? e->cpu_model : "unknown");
}

/* Machine differences that make a published cell not comparable with this one. */
static void env_diff(char *why, size_t n, const json_t *pub_env, const json_t *here_env, const char *pub_backend) {
    sd_env_view p, h;
    sd_env_view_of(pub_env, &p);
    sd_env_view_of(here_env, &h);
    char a[320], b[400];
    int pub_gpu = p.gpu_name || nn_backend_name_gpu(pub_backend);
    device_str(a, sizeof a, &p, pub_gpu);
    device_str(b, sizeof b, &h, h.gpu_name != NULL);
    if (pub_gpu != (h.gpu_name != NULL) || (p.gpu_name && h.gpu_name && strcasecmp(p.gpu_name, h.gpu_name) != 0) ||
        (pub_gpu && !p.gpu_name) || (p.gpu_count > 0 && h.gpu_count > 0 && p.gpu_count != h.gpu_count)) {
        if (!h.gpu_name && h.gpu_note) { size_t l = strlen(b); snprintf(b + l, sizeof b - l, "; no GPU: %s", h.gpu_note); }
        addf(why, n, "device: published %s, here %s", a, b);
        return;
    }
    if (pub_gpu) return;
    if (p.cpu_model && h.cpu_model && strcmp(p.cpu_model, h.cpu_model) != 0)
        addf(why, n, "cpu: published %s, here %s", p.cpu_model, h.cpu_model);
    if (p.cores && h.cores && p.cores != h.cores) {
        snprintf(a, sizeof a, "%lld", p.cores);
        snprintf(b, sizeof b, "%lld", h.cores);
        addf(why, n, "cores: published %s, here %s", a, b);
    }
}

static const sd_ident *ident_find(const sd_ident *l, int n, const char *what) {
    for (int i = 0; i < n; i++)
        if (strcmp(l[i].what, what) == 0) return &l[i];
    return NULL;
}

/* Implementation and settings differences between the published cell and a measurement: the framework, its
 * version and every version the back-end or runner recorded (when both sides recorded it; an unknown published
 * value is not compared), the settings the publication states (max_batches always: a cut epoch is not a whole
 * one; epochs only for a total time), the data. The interpreter's path is not its identity (its version is):
 * a different one is named in c->note. */
static void ident_diff(vcell *c, const json_t *pub, const json_t *meas, const sd_run_view *mv) {
    sd_ident p[SD_IDENT_MAX], m[SD_IDENT_MAX];
    int np = sd_run_identity(pub, p, SD_IDENT_MAX), nm = sd_run_identity(meas, m, SD_IDENT_MAX);
    for (int i = 0; i < np; i++) {
        const sd_ident *h = ident_find(m, nm, p[i].what);
        if (p[i].setting) {
            if (strcmp(p[i].what, "epochs") == 0 && strcmp(c->metric, "train_total_s") != 0) continue;
        } else if (!h || strcmp(p[i].value, "null") == 0 || strcmp(p[i].what, "interpreter") == 0) {
            continue;
        }
        const char *hv = h ? h->value : "null";
        int differ = strcmp(p[i].what, "framework") == 0 ? strcasecmp(p[i].value, hv) : strcmp(p[i].value, hv);
        if (differ) {
            char fmt[96];
            snprintf(fmt, sizeof fmt, "%s: published %%s, here %%s", p[i].what);
            addf(c->why, sizeof c->why, fmt, p[i].value, hv);
        }
    }
    const sd_ident *hb = ident_find(m, nm, "max_batches");
    if (!ident_find(p, np, "max_batches") && hb && strcmp(hb->value, "null") != 0)
        addf(c->why, sizeof c->why, "max_batches: published %s, here %s", "null", hb->value);
    const char *pk = json_string_value(c->v.data_kind), *mk = json_string_value(mv->data_kind);
    if (pk && mk && strcmp(pk, mk) != 0) addf(c->why, sizeof c->why, "data: published %s, here %s", pk, mk);
    if (c->v.interpreter && mv->interpreter && strcmp(c->v.interpreter, mv->interpreter) != 0)
        snprintf(c->note, sizeof c->note, " (ran under %s, published %s: same versions)", mv->interpreter,
                 c->v.interpreter);
}

/* A native cell's OpenMP wait policy is one of its settings: spinning and sleeping threads differ by up to 1.7x on
 * small steps (docs/performance.md). Only a policy both sides recorded is compared. */
static void omp_diff(vcell *c, const json_t *mdoc, const json_t *m) {
    if (strcmp(c->impl, "native") != 0 || !mdoc) return;
    char pk[128], hk[128];
    json_t *me = sd_results_run_env(mdoc, m);
    sd_env_view p, h;
    sd_env_view_of(c->env, &p);
    sd_env_view_of(me, &h);
    const int known = sd_omp_policy_kind(p.omp_wait_policy, pk, sizeof pk) &&
                      sd_omp_policy_kind(h.omp_wait_policy, hk, sizeof hk);
    json_decref(me);
    if (known && strcmp(pk, hk) != 0) addf(c->why, sizeof c->why, "openmp wait policy: published %s, here %s", pk, hk);
}

/* The measured statistic for metric: the summary's, or for train_total_s the sums of each sample's epoch times. */
static int measured_stat(const sd_run_view *m, const char *metric, sd_stat *out) {
    sd_stat s = sd_run_stat(m, metric);
    if (!isnan(s.median)) {
        if (s.n == 0) s.n = 1;   /* a bare figure, or a statistic that does not count its repeats */
        if (isnan(s.min) || isnan(s.max)) s.min = s.max = s.median;
        *out = s;
        return 1;
    }
    size_t ns = sd_run_nsamples(m);
    if (strcmp(metric, "train_total_s") != 0 || !ns) return 0;
    double *v = calloc(ns, sizeof *v);
    if (!v) return 0;
    for (size_t i = 0; i < ns; i++)
        for (size_t e = 0; e < sd_run_nepochs(m, i); e++) {
            sd_epoch_view ev;
            sd_epoch_view_of(m, i, e, &ev);
            v[i] += ev.train_s;
        }
    *out = sd_stat_of(v, (int)ns);
    free(v);
    return 1;
}

/* A framework runner's results name its device ("cuda", "cpu") where a published cell names a back-end. */
static const char *runner_device(const char *pub_backend) {
    return nn_backend_name_gpu(pub_backend) ? "cuda" : "cpu";
}

static int same_or_both_absent(const char *a, const char *b, const char *absent) {
    return strcmp(a ? a : absent, b ? b : absent) == 0;
}

/* The measurement of a published cell: the run of its workload, implementation and back-end, of its setting and
 * precision where one is (a framework's best setting is a run of its own beside the shipped one), else the first. */
static const json_t *find_run(const json_t *doc, const sd_run_view *p, const char *w, const char *impl, const char *be) {
    if (strcmp(impl, "native") != 0) be = runner_device(be);
    size_t i;
    const json_t *r, *first = NULL;
    sd_results_foreach(doc, i, r) {
        sd_run_view v;
        sd_run_view_of(r, &v);
        if (strcmp(str(v.workload), w) || strcmp(str(v.implementation), impl) || strcmp(str(v.backend), be) ||
            strcmp(str(v.status), "ok"))
            continue;
        if (same_or_both_absent(v.setting, p->setting, "shipped") && same_or_both_absent(v.precision, p->precision, "fp32"))
            return r;
        if (!first) first = r;
    }
    return first;
}

typedef struct vctx {
    const sd_verify_opts *o;
    const json_t *pubdoc, *measured, *here;
    const char *msource;
    int partial;   /* the rounds were interrupted: each cell judged from the processes it has, nothing more run */
} vctx;

/* Why a rerun's cell failed, from its results: the failed run's error, or the framework's equivalence check. */
static const char *rerun_error(const json_t *doc) {
    size_t i;
    const json_t *r;
    sd_results_foreach(doc, i, r) {
        sd_run_view v;
        sd_run_view_of(r, &v);
        if (json_is_string(v.error)) return str(v.error);
        if (v.equivalence_status && strcmp(v.equivalence_status, "failed") == 0) return "the equivalence check failed";
    }
    return "a run failed";
}

static int is_best_setting(const vcell *c) { return c->v.source && strcmp(c->v.source, "bench-cpu") == 0; }

/* A rerun's processes (a best setting's, a bench cell's repeats): as many as make report's, or --repeat's more */
static long nprocesses(const sd_verify_opts *a) { return a->repeat < 3 ? 3 : a->repeat; }

/* The bench options and cell that measure c again with the published settings, under the published interpreter
 * when it is here (else the one bench finds: its versions are then compared like any other measurement's). */
static void rerun_opts(const sd_verify_opts *a, const vcell *c, sd_bench_opts *o, sd_bench_cell *cell) {
    const sd_run_view *p = &c->v;
    sd_bench_opts_default(o);
    *cell = (sd_bench_cell){.workload = c->w, .implementation = c->impl, .backend = c->be};
    if (strcmp(c->impl, "native") != 0)   /* a framework runner on the published kind of device */
        cell->backend = o->device = runner_device(c->be);
    const char *kind = json_string_value(p->data_kind);
    o->data = kind && strcmp(kind, "synthetic") == 0 ? "synthetic" : "auto";
    if (p->epochs > 0) o->epochs = p->epochs;
    if (p->batch > 0) o->batch = p->batch;
    if (a->batches > 0 || p->max_batches > 0) o->batches = a->batches > 0 ? a->batches : p->max_batches;
    if (p->precision) o->precision = p->precision;
    if (p->threads > 0) o->threads = p->threads;
    if (p->seed > 0) o->seed = p->seed;
    if (p->autotune >= 0) o->autotune = p->autotune ? "on" : "off";
    if (p->interpreter && access(p->interpreter, X_OK) == 0) o->python = p->interpreter;
    o->repeat = nprocesses(a);
    o->host_wait_s = a->host_wait_s;   /* as make report measured: each cell once the host runs at its speed */
    o->workloads_dir = a->workloads;
    o->quiet = 1;
    o->again = 0;   /* verify measures a slowed cell again itself, after the others */
}

/* A bench measurement's outcome for a cell: *doc, or *doc NULL and why saying what failed (a bench run that exits
 * non-zero: no measurement to compare). Only an interruption is returned. */
static int outcome(int rc, const sd_bench_outcome *out, json_t **doc, char *why, size_t n) {
    if (rc == SD_EINTR) return rc;
    if (rc) {
        snprintf(why, n, "rerun failed: %s", sd_errmsg());
    } else if (out->failed) {
        snprintf(why, n, "rerun failed: %s", rerun_error(*doc));
        json_decref(*doc);
        *doc = NULL;
    }
    return 0;
}

/* c measured again, from the processes its pass's rounds ran. *doc gets its results, or stays NULL with c->why
 * saying what went wrong. Only an interruption is returned. */
static int rerun(const vctx *x, vcell *c, json_t **doc) {
    const sd_verify_opts *a = x->o;
    const sd_run_view *p = &c->v;
    const long want = nprocesses(a);
    if (c->pre || c->pre_why) {   /* a bench cell measured in the rounds */
        if (c->pre_why) snprintf(c->why, sizeof c->why, "%s", c->pre_why);
        else if (c->pre_n < want)
            snprintf(c->note, sizeof c->note, "; interrupted after %ld of its %ld processes", c->pre_n, want);
        *doc = c->pre;
        c->pre = NULL;
        free(c->pre_why);
        c->pre_why = NULL;
        return 0;
    }
    if (is_best_setting(c)) {   /* a best setting: its cell script's processes */
        const long have = x->partial ? sd_bench_setting_have(p) : want;
        int rc = sd_bench_setting_rerun(p, have, a->host_wait_s, a->quiet, doc);
        if (rc == SD_EINTR) return rc;
        if (rc == 0 && have < want)
            snprintf(c->note, sizeof c->note, "; interrupted after %ld of its %ld processes", have, want);
        c->unrunnable = rc == SD_ENODEV;
        if (rc == SD_ENODEV) snprintf(c->why, sizeof c->why, "setting %s cannot be measured here: %s",
                                      p->setting ? p->setting : "?", sd_errmsg());
        else if (rc) snprintf(c->why, sizeof c->why, "rerun failed: %s", sd_errmsg());
        return 0;
    }
    /* a bench cell is measured only in the rounds (make report measured it so): none of its processes ran */
    snprintf(c->why, sizeof c->why, "rerun failed: no process of it ran");
    return 0;
}

/* Round r of a bench cell: one process more, joined to those of the rounds before (c->pre, as bench --spread joins
 * a cell's processes); a failed process takes the cell's place (c->pre_why). Only an interruption is returned. */
static int bench_round(const vctx *x, vcell *c) {
    sd_bench_opts o;
    sd_bench_cell cell;
    rerun_opts(x->o, c, &o, &cell);
    o.repeat = 1;
    json_t *doc = NULL;
    sd_bench_outcome out;
    char why[1024] = "";
    SD_TRY(outcome(sd_bench_matrix_run(&o, &cell, 1, NULL, &doc, &out), &out, &doc, why, sizeof why));
    if (doc && sd_results_count(doc) != 1) {
        snprintf(why, sizeof why, "rerun failed: a process gave %zu runs, not one", sd_results_count(doc));
        json_decref(doc);
        doc = NULL;
    }
    if (doc && c->pre && sd_results_merge_run(sd_results_run(c->pre, 0), sd_results_run(doc, 0)) != 0) {
        snprintf(why, sizeof why, "rerun failed: process %ld: %s", c->pre_n + 1, sd_errmsg());
        json_decref(doc);
        doc = NULL;
    } else if (doc && c->pre) {
        json_decref(doc);
        c->pre_n++;
        return 0;
    }
    if (doc) {
        c->pre = doc;
        c->pre_n = 1;
        return 0;
    }
    json_decref(c->pre);
    c->pre = NULL;
    return (c->pre_why = strdup(why)) ? 0 : sd_err(SD_ENOMEM, "out of memory");
}

/* "x.x% slower" or "x.x% faster": measured against published pv, in buf. */
static const char *off_by(char *buf, size_t n, double measured, double pv) {
    snprintf(buf, n, "%.1f%% %s", fabs(measured - pv) / pv * 100, measured > pv ? "slower" : "faster");
    return buf;
}

/* The verdict of a comparable cell with its measurement m. */
static void judge(const sd_verify_opts *a, vcell *c, const sd_run_view *m) {
    double pv = c->pub.median, tol = a->tolerance_pct / 100.0 * pv, pacc = c->v.accuracy.median;
    c->macc = m->accuracy.median;
    double spread = sd_stat_spread_pct(c->pub), mspread = sd_stat_spread_pct(c->ms);
    char sp[160] = "";
    if (spread > a->tolerance_pct)
        snprintf(sp, sizeof sp, "published spread %.1f%% [%.4g-%.4g] is wider than the %.3g%% tolerance", spread,
                 c->pub.min, c->pub.max, a->tolerance_pct);
    /* synthetic data's labels are random: its accuracy says nothing (the report says so), and a model at chance
     * flips near-tie predictions between two runs that differ only in the order of a float sum */
    const char *kind = json_string_value(c->v.data_kind);
    int judge_acc = !(kind && strcmp(kind, "synthetic") == 0);
    if (judge_acc && !isnan(pacc) && !isnan(c->macc) && fabs(pacc - c->macc) > a->acc_tolerance) {
        snprintf(c->why, sizeof c->why, "accuracy: published %.4f, measured %.4f (tolerance %.4f)", pacc, c->macc,
                 a->acc_tolerance);
        c->verdict = "ACCURACY-DIFFERS";
    } else if (fabs(c->ms.median - pv) <= tol || (pv >= c->ms.min && pv <= c->ms.max && !(mspread > a->tolerance_pct))) {
        /* inside the measured min-max counts only while that range is narrower than the tolerance: a rerun whose
         * processes spread 36% held a published figure 39% off its median */
        snprintf(c->why, sizeof c->why, "within %.3g%% or inside the measured spread%s", a->tolerance_pct,
                 judge_acc ? "" : "; accuracy not compared (synthetic data)");
        c->verdict = "REPRODUCED";
    } else if (sp[0] && c->ms.median >= c->pub.min - tol && c->ms.median <= c->pub.max + tol) {
        snprintf(c->why, sizeof c->why, "%s: the measured %.4g lies inside it, so this figure cannot be re-checked "
                 "to within %.3g%%", sp, c->ms.median, a->tolerance_pct);
        c->verdict = "UNVERIFIABLE";
    } else if (c->ms.median > pv && m->host_speed > 0 && m->host_speed < SD_HOST_SLOW) {
        /* the machine itself ran slow (its canary, bench/host.c): a slower figure says nothing of the publication */
        snprintf(c->why, sizeof c->why, "%.1f%% slower than published, but measured while this host ran at %.0f%% of "
                 "its speed (its canary): rerun it when the host is quiet", (c->ms.median - pv) / pv * 100,
                 100 * m->host_speed);
        c->verdict = "UNVERIFIABLE";
    } else if (c->ms.median < pv && c->v.host_speed > 0 && c->v.host_speed < SD_HOST_SLOW) {
        snprintf(c->why, sizeof c->why, "%.1f%% faster than published, which was measured while its host ran at "
                 "%.0f%% of its speed (its canary)", (pv - c->ms.median) / pv * 100, 100 * c->v.host_speed);
        c->verdict = "UNVERIFIABLE";
    } else if (mspread > a->tolerance_pct && pv >= c->ms.min - tol && pv <= c->ms.max + tol) {
        /* a rerun whose own processes differ by more than the tolerance has no median to within it; a figure
         * beyond the tolerance of all of them is still SLOWER or FASTER */
        char off[48];
        snprintf(c->why, sizeof c->why, "%s than published, but this measurement's own spread %.1f%% [%.4g-%.4g] is "
                 "wider than the %.3g%% tolerance and the published figure lies within it of that range: rerun it "
                 "when the host is quiet", off_by(off, sizeof off, c->ms.median, pv), mspread, c->ms.min, c->ms.max,
                 a->tolerance_pct);
        c->verdict = "UNVERIFIABLE";
        c->wide = 1;
    } else {
        char off[48];
        snprintf(c->why, sizeof c->why, "%s than published, outside the tolerance and the spread%s%s",
                 off_by(off, sizeof off, c->ms.median, pv), sp[0] ? "; " : "", sp);
        c->verdict = c->ms.median > pv ? "SLOWER" : "FASTER";
    }
}

#define INFER_KEY "inference_s_per_1000_images"

/* A cell judged without a measurement (the published run measured nothing or has no time figure, another machine,
 * no runner): its verdict set, 1. 0: it is measured. */
static int settled(const vctx *x, vcell *c) {
    if (sd_run_unmeasured(&c->v)) {   /* bench's run that measured nothing: said as it was */
        const char *status = json_string_value(c->v.status);
        size_t k = 0;
        for (; status[k] && k + 1 < sizeof c->status_up; k++)
            c->status_up[k] = (char)(status[k] >= 'a' && status[k] <= 'z' ? status[k] - 32 : status[k]);
        c->status_up[k] = 0;
        c->verdict = c->status_up;
        snprintf(c->why, sizeof c->why, "not measured in the published run: %s", str(c->v.error));
        return 1;
    }
    if (!c->metric) {
        c->verdict = "N/A";
        snprintf(c->why, sizeof c->why, "the published run has no time figure");
        return 1;
    }
    env_diff(c->why, sizeof c->why, c->env, x->here, c->be);
    if (c->why[0]) { c->verdict = "NOT-COMPARABLE"; return 1; }
    if (!sd_bench_impl_known(c->impl)) {
        snprintf(c->why, sizeof c->why, "no %s runner in showdown (bench --impl runs native and the runners of "
                 "workloads/runners/)", c->impl);
        c->verdict = "MISSING";
        return 1;
    }
    return 0;
}

/* Everything about one published run up to its verdict; only an interruption is returned. */
static int check_cell(const vctx *x, const json_t *pub, vcell *c) {
    if (settled(x, c)) return 0;
    json_t *rerun_doc = NULL;
    const json_t *m = NULL;
    if (x->o->rerun && c->sibling) {   /* the run's other figure: judged from the same processes, not a rerun more */
        rerun_doc = json_incref(c->sibling->mdoc);
        c->unrunnable = c->sibling->unrunnable;
        snprintf(c->note, sizeof c->note, "%s", c->sibling->note);
        if (!rerun_doc) snprintf(c->why, sizeof c->why, "%s", c->sibling->why);   /* why its rerun gave no figure */
        m = rerun_doc ? find_run(rerun_doc, &c->v, c->w, c->impl, c->be) : NULL;
    } else if (x->o->rerun) {
        SD_TRY(rerun(x, c, &rerun_doc));
        m = rerun_doc ? find_run(rerun_doc, &c->v, c->w, c->impl, c->be) : NULL;
    } else if (x->measured) {
        m = find_run(x->measured, &c->v, c->w, c->impl, c->be);
    }
    sd_run_view mv;
    if (!m) {
        if (!c->why[0])
            snprintf(c->why, sizeof c->why, "no measurement of %s/%s/%s in %s", c->w, c->impl,
                     strcmp(c->impl, "native") ? runner_device(c->be) : c->be,
                     x->msource[0] ? x->msource : "the database (run bench, or verify --rerun)");
        c->verdict = c->unrunnable ? "NOT-COMPARABLE" : "MISSING";
    } else {
        sd_run_view_of(m, &mv);
        c->mhost = mv.host_speed;
        ident_diff(c, pub, m, &mv);
        omp_diff(c, rerun_doc ? rerun_doc : x->measured, m);
        if (c->why[0]) {
            c->verdict = "NOT-COMPARABLE";
        } else if (!measured_stat(&mv, c->metric, &c->ms)) {
            snprintf(c->why, sizeof c->why, "the measurement has no %s", c->metric);
            c->verdict = "MISSING";
        } else {
            judge(x->o, c, &mv);
            size_t l = strlen(c->why);
            snprintf(c->why + l, sizeof c->why - l, "%s", c->note);
        }
    }
    json_decref(c->mdoc);
    c->mdoc = rerun_doc;
    return 0;
}

/* A rerun slower than published that did not reproduce while this host ran slow (its canary): measured once more
 * after the others. (A faster one the spell cannot explain.) */
static int ran_slow(const vcell *c) {
    return c->verdict && c->ms.n && c->ms.median > c->pub.median && c->mhost > 0 && c->mhost < SD_HOST_SLOW &&
           strcmp(c->verdict, "REPRODUCED");
}

/* SLOWER or FASTER from one rerun: a spell its canary missed gives one too (such a FASTER and SLOWER came from the
 * same report's reruns an hour apart), so it stands only when a second rerun after the others agrees. */
static int to_confirm(const vcell *c) {
    return c->verdict && (!strcmp(c->verdict, "SLOWER") || !strcmp(c->verdict, "FASTER"));
}

/* The second rerun t of a SLOWER or FASTER cell c: the verdict stands when t lies beyond the tolerance on the same
 * side (a slow spell during t does not make a SLOWER doubtful); else the two reruns disagree: UNVERIFIABLE. */
static void confirm(const sd_verify_opts *a, vcell *c, const vcell *t) {
    double pv = c->pub.median, tol = a->tolerance_pct / 100.0 * pv;
    size_t l = strlen(c->why);
    if (!t->ms.n) {
        snprintf(c->why + l, sizeof c->why - l, "; a second rerun after the others gave no figure (%s): not confirmed",
                 t->verdict ? t->verdict : "interrupted");
        return;
    }
    int slower = c->ms.median > pv;
    int agree = strcmp(t->verdict, "REPRODUCED") && !t->wide && fabs(t->ms.median - pv) > tol &&
                (t->ms.median > pv) == slower;
    char off[48];
    if (agree) {
        snprintf(c->why + l, sizeof c->why - l, "; confirmed by a second rerun after the others: %.4g (%s)",
                 t->ms.median, off_by(off, sizeof off, t->ms.median, pv));
        return;
    }
    snprintf(c->why, sizeof c->why, "two reruns disagree: the first measured %.4g (%s), a second after the others "
             "%.4g (%s: %s)", c->ms.median, off_by(off, sizeof off, c->ms.median, pv), t->ms.median, t->verdict, t->why);
    c->verdict = "UNVERIFIABLE";
}

static int rounds(const vctx *x, vcell *cells, size_t n, const char *todo);

/* The second pass: the cells that ran in a slow spell measured again with a wait budget of their own, each judged
 * by the measurement of the faster host (the one a spell slowed less); a SLOWER or FASTER one measured again to
 * confirm it. */
static int measure_again(const vctx *x, vcell *cells, size_t n) {
    size_t k = 0, q = 0;
    for (size_t i = 0; i < n; i++) {
        k += ran_slow(&cells[i]) ? 1 : 0;
        q += to_confirm(&cells[i]) ? 1 : 0;
    }
    if (!k && !q) return 0;
    if (!x->o->quiet && k) fprintf(stderr, "verify: %zu cell(s) ran while this host was slow: measuring them again\n", k);
    if (!x->o->quiet && q)
        fprintf(stderr, "verify: %zu cell(s) outside the tolerance: measuring them again to confirm it\n", q);
    sd_verify_opts o = *x->o;
    o.host_wait_s *= SD_HOST_AGAIN_WAIT;   /* 20 s: 2 min */
    vctx y = *x;
    y.o = &o;
    sd_host_budget_renew();
    sd_bench_setting_forget();   /* a best setting's processes too, not the first pass's outputs */
    /* the cells measured again, fresh, their processes in rounds as the first pass's were (a run's other figure,
     * when its sibling is measured again too, is judged from the sibling's processes) */
    vcell *ts = calloc(n ? n : 1, sizeof *ts);
    char *todo = calloc(n ? n : 1, 1), *pick = calloc(n ? n : 1, 1);
    if (!ts || !todo || !pick) {
        free(ts);
        free(todo);
        free(pick);
        return sd_err(SD_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        vcell *c = &cells[i];
        pick[i] = ran_slow(c) || to_confirm(c);
        if (!pick[i]) continue;
        vcell *t = &ts[i];
        *t = *c;
        t->verdict = NULL;
        t->why[0] = t->note[0] = 0;
        memset(&t->ms, 0, sizeof t->ms);
        t->macc = t->mhost = NAN;
        t->unrunnable = t->wide = 0;
        t->mdoc = NULL;
        t->pre = NULL;
        t->pre_why = NULL;
        t->pre_n = 0;
        todo[i] = !(c->sibling && pick[c->sibling - cells]);
    }
    int rc = rounds(&y, ts, n, todo);
    vcell last = {0};            /* the last cell measured again (its rerun's results), and which cell it was */
    const vcell *last_of = NULL;
    for (size_t i = 0; i < n && !rc; i++) {
        vcell *c = &cells[i];
        int slow = ran_slow(c);
        if (!pick[i]) continue;
        vcell t = ts[i];
        ts[i].pre = NULL;   /* t owns them now */
        ts[i].pre_why = NULL;
        /* not from the first pass's processes; the run's other figure, when that was just measured again, from
         * those processes (a run's training and inference figures ran in a spell together) */
        t.sibling = c->sibling && c->sibling == last_of ? &last : NULL;
        if ((rc = check_cell(&y, c->run, &t)) != 0) break;
        t.sibling = c->sibling;
        json_decref(last.mdoc);
        last = t;
        last.mdoc = json_incref(t.mdoc);
        last_of = c;
        if (!slow) {
            confirm(x->o, c, &t);
            json_decref(t.mdoc);
            c->again = 1;
            continue;
        }
        double first = c->mhost;
        char said[160];
        if (t.ms.n && t.mhost > first) {
            json_decref(c->mdoc);
            *c = t;
            snprintf(said, sizeof said, ": the first rerun ran while this host was at %.0f%% of its speed", 100 * first);
        } else if (t.ms.n) {
            json_decref(t.mdoc);
            snprintf(said, sizeof said, " with the host at %.0f%%: the first measurement kept", 100 * t.mhost);
        } else {
            json_decref(t.mdoc);
            snprintf(said, sizeof said, ", with no figure (%s): the first measurement kept",
                     t.verdict ? t.verdict : "interrupted");
        }
        size_t l = strlen(c->why);
        snprintf(c->why + l, sizeof c->why - l, "; measured again after the others%s", said);
        c->again = 1;
    }
    json_decref(last.mdoc);
    for (size_t i = 0; i < n; i++) {   /* an interrupted pass's processes not judged */
        json_decref(ts[i].pre);
        free(ts[i].pre_why);
    }
    free(ts);
    free(todo);
    free(pick);
    return rc;
}

/* An interrupted rerun keeps what it measured: a SLOWER or FASTER that no second rerun confirmed does not stand. */
static void unconfirmed(vcell *cells, size_t n) {
    for (size_t i = 0; i < n; i++) {
        vcell *c = &cells[i];
        if (!to_confirm(c) || c->again) continue;
        size_t l = strlen(c->why);
        snprintf(c->why + l, sizeof c->why - l, "; interrupted before a second rerun could confirm it");
        c->verdict = "UNVERIFIABLE";
    }
}

static void count(vcounts *k, const char *verdict) {
    if (!strcmp(verdict, "REPRODUCED")) k->reproduced++;
    else if (!strcmp(verdict, "SLOWER")) k->slower++;
    else if (!strcmp(verdict, "FASTER")) k->faster++;
    else if (!strcmp(verdict, "ACCURACY-DIFFERS")) k->accuracy++;
    else if (!strcmp(verdict, "UNVERIFIABLE")) k->unverifiable++;
    else if (!strcmp(verdict, "NOT-COMPARABLE")) k->notcomp++;
    else if (!strcmp(verdict, "MISSING")) k->missing++;
    else k->unmeasured++;
}

static json_t *num_or_null(double v) { return isnan(v) || isinf(v) ? json_null() : json_real(v); }

/* The cell as a line of the table and an entry of the verdicts file; published-check lines go to pchecks. */
static json_t *cell_out(FILE *f, const vcell *c, json_t *pchecks) {
    char mstr[64] = "-", pstr[32] = "-";
    if (c->ms.n > 1) snprintf(mstr, sizeof mstr, "%.4g [%.4g-%.4g]", c->ms.median, c->ms.min, c->ms.max);
    else if (c->ms.n == 1) snprintf(mstr, sizeof mstr, "%.4g", c->ms.median);
    if (c->metric) snprintf(pstr, sizeof pstr, "%12.4g", c->pub.median);
    fprintf(f, "%-14s %-11s %-7s %-15s %12s %-26s %-16s %s\n", c->w, c->impl, c->be, c->metric ? c->metric : "-", pstr,
            mstr, c->verdict, c->why);
    json_t *cell = json_pack("{s:s,s:s,s:s,s:s,s:s?,s:o,s:s,s:s,s:O}", "workload", c->w, "implementation", c->impl,
                             "backend", c->be, "device_published", c->dev, "metric", c->metric, "published",
                             num_or_null(c->metric ? c->pub.median : NAN), "verdict", c->verdict, "why", c->why,
                             "environment_published", c->env);
    if (!cell) return NULL;
    if (c->ms.n) json_object_set_new(cell, "measured", json_pack("{s:f,s:f,s:f,s:i}", "median", c->ms.median, "min",
                                                                 c->ms.min, "max", c->ms.max, "n", c->ms.n));
    double spread = c->metric ? sd_stat_spread_pct(c->pub) : NAN;
    if (spread > 0) json_object_set_new(cell, "published_spread_pct", json_real(spread));
    double mspread = c->metric && c->ms.n ? sd_stat_spread_pct(c->ms) : NAN;
    if (mspread > 0) json_object_set_new(cell, "measured_spread_pct", json_real(mspread));
    /* the host's speed at each end (its canary): a difference the tolerance does not cover may be the host's */
    if (c->metric && c->v.host_speed > 0) json_object_set_new(cell, "host_speed_published", json_real(c->v.host_speed));
    if (c->ms.n && c->mhost > 0) json_object_set_new(cell, "host_speed_measured", json_real(c->mhost));
    if (!isnan(c->v.accuracy.median)) json_object_set_new(cell, "accuracy_published", json_real(c->v.accuracy.median));
    if (c->ms.n && !isnan(c->macc)) json_object_set_new(cell, "accuracy_measured", json_real(c->macc));
    if (c->v.note) json_object_set_new(cell, "note", json_string(c->v.note));
    /* where the publication disagrees with its own evidence (scripts/published_dlf.py): shown, not judged */
    json_t *checks = json_array();
    size_t k;
    const json_t *pc;
    json_array_foreach(c->v.published_check, k, pc) {
        const char *t = json_string_value(pc);
        if (!t || strncmp(t, "not checked", 11) == 0) continue;
        json_array_append_new(checks, json_string(t));
        char line[600];
        snprintf(line, sizeof line, "  published-check %s/%s on %s: %s", c->w, c->impl, c->dev, t);
        json_array_append_new(pchecks, json_string(line));
    }
    if (json_array_size(checks)) json_object_set_new(cell, "published_check", checks);
    else json_decref(checks);
    return cell;
}

/* Earlier measurements: --results FILE, else the newest complete bench run in the database (none without one). */
static int load_measured(const sd_verify_opts *a, json_t **measured, char *src, size_t n) {
    *measured = NULL;
    if (a->results) {
        SD_TRY(sd_results_load_file(a->results, measured));
        snprintf(src, n, "results %s", a->results);
        return 0;
    }
    if (a->rerun) return 0;
    const char *dbp = a->db ? a->db : DB_DEFAULT_PATH;
    if (!a->db && access(dbp, F_OK) != 0) return 0;
    db *d = NULL;
    int64_t id;
    int found = 0, rc;
    if ((rc = db_open(&d, dbp)) == 0 && (rc = db_runs_complete(d, "bench", 0, &id, 1, &found)) == 0 && found &&
        (rc = sd_results_load(d, id, measured)) == 0)
        snprintf(src, n, "database %s run %lld", dbp, (long long)id);
    db_close(d);
    return rc;
}

/* The closing lines, the counts and the exit code. */
static int finish(FILE *f, const vcounts *k, json_t *out, json_t *pchecks) {
    int code = SD_EXIT_OK;
    if (k->slower + k->faster + k->accuracy) code = SD_EXIT_MISMATCH;
    else if (k->notcomp + k->missing + k->unverifiable) code = SD_EXIT_NOTCOMPARABLE;
    int checked = k->reproduced + k->slower + k->faster + k->accuracy + k->unverifiable + k->notcomp + k->missing;
    if (checked == 0) code = SD_EXIT_NOTCOMPARABLE;   /* nothing measured in the publication: nothing verified */
    if (json_array_size(pchecks)) {
        fprintf(f, "\nWhere the publication disagrees with its own evidence (not a verdict on this machine):\n");
        size_t i;
        json_t *l;
        json_array_foreach(pchecks, i, l) fprintf(f, "%s\n", json_string_value(l));
    }
    fprintf(f, "\n%d cell(s): %d reproduced, %d slower, %d faster, %d accuracy differs, %d unverifiable, %d not "
            "comparable, %d missing; %d not measured in the publication\n", checked + k->unmeasured, k->reproduced,
            k->slower, k->faster, k->accuracy, k->unverifiable, k->notcomp, k->missing, k->unmeasured);
    if (checked == 0) fprintf(f, "nothing to verify: no published cell was measured\n");
    json_object_set_new(out, "counts", json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "REPRODUCED", k->reproduced, "SLOWER",
                                                 k->slower, "FASTER", k->faster, "ACCURACY-DIFFERS", k->accuracy,
                                                 "UNVERIFIABLE", k->unverifiable, "NOT-COMPARABLE", k->notcomp,
                                                 "MISSING", k->missing, "NOT-MEASURED", k->unmeasured));
    json_object_set_new(out, "exit_code", json_integer(code));
    return code;
}

/* A rerun measures the native cells in this process: under the OpenMP wait policy they were published with, when
 * they all name one and the user set none. This re-executes the process (core/omp_policy.h), which then reads
 * the file again and says so; a difference left is NOT-COMPARABLE, named (omp_diff). */
static void adopt_policy(const sd_verify_opts *a, const json_t *doc) {
    static const char why[] = "as the published results (verify --rerun)";
    char kind[128] = "", k[128];
    size_t i;
    const json_t *pub;
    sd_results_foreach(doc, i, pub) {
        sd_run_view v;
        sd_run_view_of(pub, &v);
        if (strcmp(str(v.implementation), "native") != 0 || sd_run_unmeasured(&v) ||
            !sd_in_list(a->only_workloads, str(v.workload)) || !sd_in_list(a->only_impls, "native"))
            continue;
        json_t *env = sd_results_run_env(doc, pub);
        sd_env_view e;
        sd_env_view_of(env, &e);
        const int known = sd_omp_policy_kind(e.omp_wait_policy, k, sizeof k);
        json_decref(env);
        if (!known) continue;
        if (kind[0] && strcmp(kind, k) != 0) return;   /* mixed: each cell is compared on its own */
        snprintf(kind, sizeof kind, "%s", k);
    }
    if (!kind[0]) return;
    if (sd_omp_policy_adopt(kind, why) != 0) {
        fprintf(stderr, "showdown verify: %s\n", sd_errmsg());
        sd_err_clear();
    } else if (!a->quiet && strstr(sd_omp_policy_note(), why)) {
        fprintf(stderr, "verify: the native cells were published with OpenMP wait policy %s: running under it "
                "(re-executed)\n", kind);
    }
}

/* The published run pub as the cell of its time figure, c (zeroed); 0 when the filter leaves it out. */
static int cell_of(const sd_verify_opts *a, const json_t *pubdoc, const json_t *pub, vcell *c) {
    memset(c, 0, sizeof *c);
    c->macc = c->mhost = NAN;
    c->run = pub;
    sd_run_view_of(pub, &c->v);
    c->w = str(c->v.workload);
    c->impl = str(c->v.implementation);
    c->be = str(c->v.backend);
    if (!sd_in_list(a->only_workloads, c->w) || !sd_in_list(a->only_impls, c->impl)) return 0;
    c->metric = sd_run_time_key(&c->v);
    c->pub = c->metric ? sd_run_published_stat(&c->v, c->metric) : (sd_stat){NAN, NAN, NAN, 0};
    c->env = sd_results_run_env(pubdoc, pub);
    return 1;
}

/* The rounds' view of the cells (sd_rounds_run). */
typedef struct vrounds {
    const vctx *x;
    vcell *cells;
    const char *todo;
} vrounds;

static long vround_have(void *ctx, size_t i) {
    const vrounds *v = ctx;
    const vcell *c = &v->cells[i];
    if (!v->todo[i]) return -1;
    return is_best_setting(c) ? sd_bench_setting_have(&c->v) : c->pre_why ? -1 : c->pre_n;
}

static int vround_step(void *ctx, size_t i, long round) {
    const vrounds *v = ctx;
    vcell *c = &v->cells[i];
    if (!is_best_setting(c)) return bench_round(v->x, c);
    const int rc = sd_bench_setting_grow(&c->v, round, v->x->o->host_wait_s, v->x->o->quiet);
    return rc == SD_EINTR || rc == SD_ENOMEM ? rc : 0;   /* a failure is said when it is judged */
}

static void vround_label(void *ctx, size_t i, char *buf, size_t len) {
    const vcell *c = &((vrounds *)ctx)->cells[i];
    if (is_best_setting(c)) snprintf(buf, len, "%s/%s setting %s", c->w, c->impl, c->v.setting);
    else snprintf(buf, len, "%s/%s/%s", c->w, c->impl, c->be);
}

/* A pass's measurements in rounds over the cells it measures (todo[i]), before any is judged: round r runs one
 * process of each (a best setting's command, a bench cell's repeat), as make report measured them (bench --spread,
 * bench --best-settings), so each cell's processes span the whole pass and a drift of the host over it shows in
 * every cell's spread alike, not in the medians of the cells measured during it. */
static int rounds(const vctx *x, vcell *cells, size_t n, const char *todo) {
    const long R = nprocesses(x->o);
    sd_run_view *views = calloc(n ? n : 1, sizeof *views);
    if (!views) return sd_err(SD_ENOMEM, "out of memory");
    size_t total = 0, nv = 0;
    for (size_t i = 0; i < n; i++) {
        if (!todo[i]) continue;
        if (is_best_setting(&cells[i])) views[nv++] = cells[i].v;
        else total += cells[i].pre_n < R ? (size_t)(R - cells[i].pre_n) : 0;
    }
    const size_t best = sd_bench_settings_todo(views, nv, R);   /* a command two settings share counted once */
    free(views);
    if (best == (size_t)-1) return SD_ENOMEM;
    vrounds v = {x, cells, todo};
    return sd_rounds_run(&(sd_rounds){.n = n, .total = total + best, .repeat = R, .who = "verify", .quiet = x->o->quiet,
                                      .ctx = &v, .have = vround_have, .step = vround_step, .label = vround_label});
}

/* The first pass: every cell that needs a measurement of its own (not the sibling of another, not settled). */
static int first_rounds(const vctx *x, vcell *cells, size_t n) {
    char *todo = calloc(n ? n : 1, 1);
    if (!todo) return sd_err(SD_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        vcell s = cells[i];   /* settled() writes its verdict: the cell itself is judged later */
        todo[i] = !cells[i].sibling && !settled(x, &s);
    }
    int rc = rounds(x, cells, n, todo);
    free(todo);
    return rc;
}

/* Whether an interrupted pass judges c: it needs no measurement, or its rounds ran a process of it. */
static int judgeable(const vctx *x, const vcell *c) {
    if (c->sibling) return c->sibling->verdict != NULL;
    vcell s = *c;
    if (settled(x, &s)) return 1;
    return is_best_setting(c) ? sd_bench_setting_have(&c->v) > 0 : c->pre || c->pre_why;
}

int sd_verify(const sd_verify_opts *a, FILE *f) {
    json_t *pubdoc = NULL, *measured = NULL, *here = NULL, *out = NULL, *pchecks = NULL;
    vcell *cells = NULL;   /* the published cells in order, judged once all are measured */
    size_t n = 0;
    char msource[512] = "";
    int rc;
    SD_TRY_GOTO(rc, sd_published_load(&pubdoc, a->published), done);
    if (a->rerun) adopt_policy(a, pubdoc);   /* may re-execute this process */
    SD_TRY_GOTO(rc, load_measured(a, &measured, msource, sizeof msource), done);
    sd_results_head mh = {0};
    if (measured) sd_results_head_of(measured, &mh);
    here = mh.environment ? json_incref(mh.environment) : sd_env_fingerprint();
    sd_results_head ph;
    sd_results_head_of(pubdoc, &ph);
    out = json_pack("{s:s,s:s,s:s?,s:s?,s:f,s:f,s:s?,s:O,s:[]}", "schema", "showdown-verify/1", "published_file",
                    a->published, "title", ph.pub_title, "source", ph.pub_source, "tolerance_pct", a->tolerance_pct,
                    "accuracy_tolerance", a->acc_tolerance, "measured_from", a->rerun ? "rerun" : (msource[0] ? msource : NULL),
                    "environment_here", here, "cells");
    pchecks = json_array();
    if (!out || !pchecks) { rc = sd_err(SD_ENOMEM, "out of memory"); goto done; }
    fprintf(f, "%-14s %-11s %-7s %-15s %12s %-26s %-16s %s\n", "workload", "impl", "backend", "metric", "published",
            "measured median [min-max]", "verdict", "why");
    vctx x = {a, pubdoc, measured, here, msource, 0};
    vcounts k = {0};
    size_t i, cap = sd_results_count(pubdoc), runs = 0;
    json_t *pub;
    cells = calloc(cap ? 2 * cap : 1, sizeof *cells);   /* a run's time figure, and its inference figure beside it */
    if (!cells) { rc = sd_err(SD_ENOMEM, "out of memory"); goto done; }
    sd_results_foreach(pubdoc, i, pub) {
        vcell *c = &cells[n];
        if (!cell_of(a, pubdoc, pub, c)) continue;
        runs++;
        n++;
        sd_env_view ev;
        sd_env_view_of(c->env, &ev);
        device_str(c->dev, sizeof c->dev, &ev, ev.gpu_name || nn_backend_name_gpu(c->be));
        /* the inference pass a run publishes beside its training figure (page 2's inference table) is a cell too,
         * judged from the same rerun */
        sd_stat inf = sd_run_published_stat(&c->v, INFER_KEY);
        if (c->metric && strcmp(c->metric, INFER_KEY) != 0 && !isnan(inf.median)) {
            vcell *d = &cells[n++];
            *d = *c;
            d->env = json_incref(c->env);
            d->metric = INFER_KEY;
            d->pub = inf;
            d->sibling = c;
        }
    }
    /* interrupted in the rounds, each cell that ran a process is still judged, from the processes it has */
    if (a->rerun && (rc = first_rounds(&x, cells, n)) != 0 && !(x.partial = rc == SD_EINTR)) goto done;
    rc = 0;
    for (size_t j = 0; j < n && rc == 0; j++)
        if (!x.partial || judgeable(&x, &cells[j])) rc = check_cell(&x, cells[j].run, &cells[j]);
    if (rc == 0 && x.partial) rc = SD_EINTR;
    else if (rc == 0 && a->rerun) rc = measure_again(&x, cells, n);
    /* the cells judged, an interrupted run's too: hours of reruns are not lost to a signal */
    const int intr = rc == SD_EINTR;
    if (intr) unconfirmed(cells, n);
    for (size_t j = 0; j < n; j++) {
        if (!cells[j].verdict) continue;
        count(&k, cells[j].verdict);
        json_t *cell = cell_out(f, &cells[j], pchecks);
        if (!cell || json_array_append_new(json_object_get(out, "cells"), cell)) {
            if (!rc) rc = sd_err(SD_ENOMEM, "out of memory");
            break;
        }
    }
    if (rc && !intr) goto done;
    rc = finish(f, &k, out, pchecks);
    if (intr) {
        size_t judged = 0;
        for (size_t j = 0; j < n; j++) judged += cells[j].verdict && !cells[j].sibling;
        fprintf(f, "interrupted: %zu of %zu published runs checked; the others are not in this table (--workload and "
                "--impl check a part)\n", judged, runs);
        json_object_set_new(out, "interrupted", json_pack("{s:I,s:I}", "runs_checked", (json_int_t)judged,
                                                          "runs_total", (json_int_t)runs));
        rc = sd_err(SD_EINTR, "interrupted: the verdicts of the %zu runs checked are kept%s%s", judged,
                    a->json ? " in " : "", a->json ? a->json : "");
    }
    if (a->json) {
        int wr = sd_json_write_atomic(out, a->json);
        if (wr) rc = wr;
    }
done:
    for (size_t j = 0; cells && j < n; j++) {
        json_decref(cells[j].env);
        json_decref(cells[j].mdoc);
        json_decref(cells[j].pre);
        free(cells[j].pre_why);
    }
    free(cells);
    json_decref(pchecks);
    json_decref(out);
    json_decref(here);
    json_decref(measured);
    json_decref(pubdoc);
    return rc;
}

