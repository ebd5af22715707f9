/* cmd_perf — `showdown perf`: steady-state throughput of workloads on back-ends (training and inference
 * images/s on one resident synthetic batch, median of repeats), per-layer GFLOP/s of the conv and dense
 * layers forward and backward, all against the sgemm ceiling measured on this machine in the same run.
 * No data loading, no validation: the engine's own speed, for `make bench` and `make bench-cpu`. */
#include "bench/bench.h"
#include "bench/results.h"
#include "nn/backend_impl.h"
#include "cmd/cli.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/util.h"
#include "core/sig.h"
#include "nn/model.h"
#include "nn/roofline.h"
#include "core/triad.h"
#include "nn/train.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct perf_args {
    const char *json, *workloads_dir, *precision, *host_ref;
    long threads, repeat, batch;
    double seconds;
    int layers, quiet, no_ceiling, roofline, host_ref_save;
} perf_args;

/* Median seconds per call of fn over `repeat` timed runs (windows) of k calls, k chosen to fill `seconds`.
 * windows (NULL: not wanted), at least 32 long, gets every window's seconds per call, ascending: the bench
 * reads the fastest, which a host that slows for seconds at a time leaves alone. */
typedef int (*perf_fn)(void *arg);
static int time_median(perf_fn fn, void *arg, nn_backend *be, double seconds, int repeat, double *out,
                       double *windows) {
    SD_TRY(fn(arg));                                         /* warm-up (first-touch, jit) */
    SD_TRY(be->ops->sync(be));
    double t0 = sd_now();
    SD_TRY(fn(arg));
    SD_TRY(be->ops->sync(be));
    double once = sd_now() - t0;
    int k = once > 0 ? (int)(seconds / repeat / once) : 1;
    if (k < 1) k = 1;
    if (k > 1000) k = 1000;
    double t[32];
    if (repeat > 32) repeat = 32;
    for (int r = 0; r < repeat; r++) {
        t0 = sd_now();
        for (int i = 0; i < k; i++) SD_TRY(fn(arg));
        SD_TRY(be->ops->sync(be));
        t[r] = (sd_now() - t0) / k;
    }
    qsort(t, (size_t)repeat, sizeof t[0], sd_cmp_double);
    *out = t[repeat / 2];
    if (windows) memcpy(windows, t, sizeof(double) * (size_t)repeat);
    return 0;
}

/* ---- the sgemm ceiling: a 4096x4096x4096 dense forward through the best CPU back-end built ---------- */

typedef struct gemm_arg { nn_backend *be; nn_op op; float *y, *x, *w; } gemm_arg;
static int gemm_once(void *p) {
    gemm_arg *g = p;
    return g->be->ops->dense_forward(g->be, &g->op, g->y, g->x, g->w, NULL);
}

static int measure_ceiling(int threads, double *gflops, char *how, size_t howlen) {
    const char *name = nn_backend_compiled("dnnl") ? "dnnl" : "ref";
    nn_backend_opts bo = {.threads = threads, .quiet = 1};
    nn_backend *be = NULL;
    SD_TRY(nn_backend_new(&be, name, &bo, NULL, 0));
    const int N = 4096;
    gemm_arg g = {.be = be, .op = {.kind = NN_OP_DENSE, .n = N, .c = N, .h = 1, .w = 1, .oc = N, .oh = 1, .ow = 1}};
    size_t bytes = sizeof(float) * (size_t)N * N;
    int rc = 0;
    if (be->ops->prepare) SD_TRY_GOTO(rc, be->ops->prepare(be, &g.op), done);
    SD_TRY_GOTO(rc, nn_dev_alloc(be, (void **)&g.x, bytes), done);
    SD_TRY_GOTO(rc, nn_dev_alloc(be, (void **)&g.w, bytes), done);
    SD_TRY_GOTO(rc, nn_dev_alloc(be, (void **)&g.y, bytes), done);
    float *h = malloc(bytes);
    if (!h) { rc = sd_err(SD_ENOMEM, "out of memory"); goto done; }
    for (size_t i = 0; i < (size_t)N * N; i++) h[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
    rc = be->ops->upload(be, g.x, h, bytes);
    if (!rc) rc = be->ops->upload(be, g.w, h, bytes);
    free(h);
    if (rc) goto done;
    double s;
    SD_TRY_GOTO(rc, time_median(gemm_once, &g, be, 3.0, 5, &s, NULL), done);
    *gflops = 2.0 * N * N * (double)N / s / 1e9;
    snprintf(how, howlen, "sgemm %dx%dx%d through the %s back-end's dense layer, %d threads, median of 5", N, N, N,
             be->name, threads);
done:
    nn_dev_free(be, g.x, bytes);
    nn_dev_free(be, g.w, bytes);
    nn_dev_free(be, g.y, bytes);
    if (be->ops->release) be->ops->release(be, &g.op);
    nn_backend_free(be);
    return rc;
}

/* ---- whole-model steps -------------------------------------------------------------------------------- */

typedef struct model_arg { nn_model *m; uint64_t seed; } model_arg;
static int train_once(void *p) {
    model_arg *a = p;
    SD_TRY(nn_model_forward(a->m, 1, a->seed++));
    SD_TRY(nn_model_backward(a->m));
    return nn_model_step(a->m);
}
static int infer_once(void *p) {
    model_arg *a = p;
    return nn_model_forward(a->m, 0, 0);
}

/* One layer's forward or backward alone, on the model's own buffers (after a training forward). */
typedef struct layer_arg { nn_model *m; int i, backward; } layer_arg;
static int layer_once(void *p) {
    layer_arg *a = p;
    nn_model *m = a->m;
    nn_backend *be = m->be;
    const nn_layer *l = &m->layers[a->i];
    const float *x = l->input >= 0 ? m->layers[l->input].y : m->x;
    float *dx = l->input >= 0 ? m->layers[l->input].dy : NULL;
    const float *W = m->params + l->w_off, *B = l->b_len ? m->params + l->b_off : NULL;
    float *dW = m->grads + l->w_off, *dB = l->b_len ? m->grads + l->b_off : NULL;
    if (l->op.kind == NN_OP_CONV2D)
        return a->backward ? be->ops->conv2d_backward(be, &l->op, dx, dW, dB, l->dy, x, W)
                           : be->ops->conv2d_forward(be, &l->op, l->y, x, W, B);
    return a->backward ? be->ops->dense_backward(be, &l->op, dx, dW, dB, l->dy, x, W)
                       : be->ops->dense_forward(be, &l->op, l->y, x, W, B);
}

/* Where a training step's time goes: every op's forward and backward and the optimizer step, with the
 * back-end synced around each (so the total exceeds an unprofiled step by the syncs' cost). With training 0:
 * every op's share of an inference pass. keep (may be NULL) gets the seconds per step of every op as m->prof
 * indexes them; the caller frees it. */
static int profile_steps(nn_model *m, model_arg *ma, int training, json_t *run, double **keep) {
    const int L = m->nlayers, steps = training ? 20 : 10;
    perf_fn step = training ? train_once : infer_once;
    double *prof = calloc((size_t)2 * L + 1, sizeof *prof);
    SD_ALLOC_CHECK(prof);
    m->prof = prof;
    int rc = 0;
    double t0 = sd_now();
    for (int s = 0; s < steps && rc == 0; s++) rc = step(ma);
    double total = (sd_now() - t0) / steps;
    m->prof = NULL;
    if (rc) { free(prof); return rc; }
    for (int i = 0; i <= 2 * L; i++) prof[i] /= steps;
    printf("    %s profile (%d %s, synced after every op): %.2f ms a %s\n", training ? "step" : "inference", steps,
           training ? "steps" : "passes", total * 1e3, training ? "step" : "pass");
    json_t *ops = json_array();
    for (int i = 0; i <= L; i++) {
        if (i < L && m->layers[i].op.kind == NN_OP_FLATTEN) continue;   /* a view: nothing runs */
        if (i == L && !training) continue;                               /* no optimizer step */
        double f = prof[2 * i], b = i < L ? prof[2 * i + 1] : 0;
        const char *name = i < L ? m->layers[i].name : "optimizer";
        const char *kind = i < L ? nn_op_name(m->layers[i].op.kind) : "step + zero grads";
        const nn_op *op = i < L ? &m->layers[i].op : NULL;
        char lay[32] = "";
        if (op && (op->fmt_in || op->fmt_out))
            snprintf(lay, sizeof lay, "  %s -> %s", nn_fmt_name(op->fmt_in), nn_fmt_name(op->fmt_out));
        printf("      %-14s %-18s fwd %7.3f ms  bwd %7.3f ms  %5.1f%%%s\n", name, kind, f * 1e3, b * 1e3,
               100 * (f + b) / total, lay);
        json_array_append_new(ops, json_pack("{s:s, s:s, s:f, s:f}", "op", name, "kind", kind, "fwd_ms", f * 1e3,
                                             "bwd_ms", b * 1e3));
    }
    json_object_set_new(run, training ? "step_profile" : "inference_profile", ops);
    if (keep) *keep = prof;
    else free(prof);
    return 0;
}

static double train_flops(const nn_model *m) {   /* per example, as nn_train counts them */
    double fwd, train;
    nn_model_flops(m->layers, m->nlayers, &fwd, &train);
    return train;
}

/* --layers: every conv and dense layer timed alone forward and backward, then the profiles of a training step
 * and an inference pass; *ptrain and *pinfer get the profiles' seconds per op (*ptrain stays NULL for an
 * inference workload). */
static int layers_report(nn_model *m, model_arg *ma, int batch, double ceiling, json_t *run, double **ptrain,
                         double **pinfer) {
    nn_backend *be = m->be;
    if (m->training) {
        json_t *ls = json_array();
        json_object_set_new(run, "layers", ls);
        SD_TRY(train_once(ma));           /* activations and gradients in place */
        for (int i = 0; i < m->nlayers; i++) {
            const nn_layer *l = &m->layers[i];
            if (l->op.kind != NN_OP_CONV2D && l->op.kind != NN_OP_DENSE) continue;
            layer_arg la = {m, i, 0};
            double tf, tb;
            SD_TRY(time_median(layer_once, &la, be, 0.6, 5, &tf, NULL));
            la.backward = 1;
            SD_TRY(time_median(layer_once, &la, be, 1.2, 5, &tb, NULL));
            const int has_dx = nn_layer_has_dx(m->layers, i);
            double ff = l->flops * batch, fbw = ff * (has_dx ? 2 : 1);
            double gf = ff / tf / 1e9, gb = fbw / tb / 1e9;
            printf("    %-10s %4dx%-3dx%-3d -> %4dx%-3dx%-3d fwd %7.2f ms %6.1f GFLOP/s (%3.0f%%)  bwd %7.2f ms %6.1f GFLOP/s (%3.0f%%)%s\n",
                   l->name, l->op.c, l->op.h, l->op.w, l->op.oc, l->op.oh, l->op.ow, tf * 1e3, gf,
                   100 * gf / ceiling, tb * 1e3, gb, 100 * gb / ceiling, has_dx ? "" : " (no dx)");
            json_array_append_new(ls, json_pack("{s:s, s:f, s:f, s:f, s:f}", "layer", l->name, "fwd_ms", tf * 1e3,
                                                "fwd_gflops", gf, "bwd_ms", tb * 1e3, "bwd_gflops", gb));
        }
        SD_TRY(profile_steps(m, ma, 1, run, ptrain));
    }
    SD_TRY(infer_once(ma));               /* the inference pass's ops, for training workloads too */
    return profile_steps(m, ma, 0, run, pinfer);
}

/* ---- the roofline: each phase's floor against its measured time ------------------------------------------ */

static json_t *jnum(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* A phase's totals: printed on one line and returned as JSON. */
static json_t *phase_line(const char *what, const nn_roofline *r, double measured) {
    double eff = r->floor_s / measured;
    printf("    roofline %-10s %9.3f GFLOP %9.1f MB  floor %9.3f ms (compute %.3f, memory %.3f)  measured %9.3f ms"
           "  %5.1f%% of floor\n", what, r->flops / 1e9, r->bytes / 1e6, r->floor_s * 1e3, r->compute_s * 1e3,
           r->memory_s * 1e3, measured * 1e3, 100 * eff);
    json_t *j = json_object();
    json_object_set_new(j, "flops", json_real(r->flops));
    json_object_set_new(j, "bytes", json_real(r->bytes));
    json_object_set_new(j, "compute_s", json_real(r->compute_s));
    json_object_set_new(j, "memory_s", json_real(r->memory_s));
    json_object_set_new(j, "floor_s", json_real(r->floor_s));
    json_object_set_new(j, "measured_s", jnum(measured));
    json_object_set_new(j, "efficiency", jnum(eff));
    return j;
}

/* One layer's row: FLOPs, bytes, floor and what bounds it (C compute, M memory; training: forward/backward),
 * with the profiled seconds when --layers ran. Returns the layer's floor in seconds. */
static double layer_row(const nn_model *m, int i, nn_phase ph, const nn_machine *mc, const double *prof,
                        json_t *jl) {
    nn_layer_cost lc;
    nn_roofline_layer(m->layers, m->nlayers, i, ph, &lc);
    const int tr = ph == NN_PHASE_TRAIN;
    double cf, mf, cb = 0, mb = 0;
    double floor = nn_roofline_time(&lc.fwd, mc, lc.winograd, 0, &cf, &mf);
    if (tr) floor += nn_roofline_time(&lc.bwd, mc, lc.winograd, 1, &cb, &mb);
    double flops = lc.fwd.flops + lc.bwd.flops, bytes = lc.fwd.bytes + lc.bwd.bytes;
    double meas = prof ? prof[2 * i] + (tr ? prof[2 * i + 1] : 0) : NAN;
    char bound[8];
    snprintf(bound, sizeof bound, tr ? "%c/%c" : "%c", cf >= mf ? 'C' : 'M', cb >= mb ? 'C' : 'M');
    printf("      %-16s %-14s %9.4f GFLOP %9.2f MB  floor %8.3f ms  %-3s%s", m->layers[i].name,
           nn_op_name(m->layers[i].op.kind), flops / 1e9, bytes / 1e6, floor * 1e3, bound, lc.winograd ? " W" : "  ");
    if (prof) printf("  measured %8.3f ms  %5.1f%%", meas * 1e3, 100 * floor / meas);
    printf("\n");
    const char *pre = tr ? "train" : "infer";
    char k[32];
    snprintf(k, sizeof k, "%s_flops", pre); json_object_set_new(jl, k, json_real(flops));
    snprintf(k, sizeof k, "%s_bytes", pre); json_object_set_new(jl, k, json_real(bytes));
    snprintf(k, sizeof k, "%s_floor_s", pre); json_object_set_new(jl, k, json_real(floor));
    snprintf(k, sizeof k, "%s_bound", pre); json_object_set_new(jl, k, json_string(bound));
    snprintf(k, sizeof k, "%s_measured_s", pre); json_object_set_new(jl, k, jnum(meas));
    return floor;
}

/* The per-layer table of a phase, into the run's "roofline" layers (one object per layer, both phases). */
static void phase_table(const nn_model *m, nn_phase ph, const nn_machine *mc, const double *prof, json_t *layers) {
    const int tr = ph == NN_PHASE_TRAIN;
    printf("    per layer, %s (bound: C compute, M memory%s; W: at the Winograd rate)%s\n",
           tr ? "training step" : "inference pass", tr ? ", forward/backward" : "",
           prof ? "; measured: the profile's, synced after every op" : "");
    for (int i = 0; i < m->nlayers; i++) {
        nn_layer_cost lc;
        nn_roofline_layer(m->layers, m->nlayers, i, ph, &lc);
        if (lc.fwd.flops + lc.fwd.bytes + lc.bwd.flops + lc.bwd.bytes == 0) continue;   /* runs nothing */
        layer_row(m, i, ph, mc, prof, json_array_get(layers, (size_t)i));
    }
    if (tr) {
        nn_cost oc = nn_roofline_optim(m->nparams, m->optim.kind);
        double f = nn_roofline_time(&oc, mc, 0, 0, NULL, NULL);
        printf("      %-16s %-14s %9.4f GFLOP %9.2f MB  floor %8.3f ms  M  ", "optimizer", "step", 0.0, oc.bytes / 1e6,
               f * 1e3);
        if (prof) printf("  measured %8.3f ms  %5.1f%%", prof[2 * m->nlayers] * 1e3, 100 * f / prof[2 * m->nlayers]);
        printf("\n");
    }
}

/* --roofline: the floor of the training step (training workloads) and of the inference pass, each against the
 * measured median, and the per-layer tables; into run as "roofline". */
static int roofline_report(const nn_model *m, const nn_machine *mc, double ts, double is, const double *ptrain,
                           const double *pinfer, json_t *run) {
    json_t *jr = json_object(), *layers = json_array();
    json_object_set_new(run, "roofline", jr);
    json_object_set_new(jr, "layers", layers);
    for (int i = 0; i < m->nlayers; i++)
        json_array_append_new(layers, json_pack("{s:s, s:s, s:b}", "layer", m->layers[i].name, "kind",
                                                nn_op_name(m->layers[i].op.kind), "winograd",
                                                nn_roofline_winograd(&m->layers[i].op)));
    nn_roofline r;
    if (m->training) {
        nn_roofline_phase(m->layers, m->nlayers, m->nparams, m->optim.kind, NN_PHASE_TRAIN, mc, &r);
        json_object_set_new(jr, "train", phase_line("train step", &r, ts));
    } else {
        json_object_set_new(jr, "train", json_null());
    }
    nn_roofline_phase(m->layers, m->nlayers, m->nparams, m->optim.kind, NN_PHASE_INFER, mc, &r);
    json_object_set_new(jr, "inference", phase_line("inference", &r, is));
    if (m->training) phase_table(m, NN_PHASE_TRAIN, mc, ptrain, layers);
    phase_table(m, NN_PHASE_INFER, mc, pinfer, layers);
    fflush(stdout);
    return 0;
}

/* ---- the roofline's other limits: memory bandwidth, and the Winograd convolutions' effective rate --------- */

typedef struct conv_arg { nn_backend *be; nn_op op; float *x, *w, *b, *y, *dx, *dw, *db; int backward; } conv_arg;
static int conv_once(void *p) {
    conv_arg *g = p;
    return g->backward ? g->be->ops->conv2d_backward(g->be, &g->op, g->dx, g->dw, g->db, g->y, g->x, g->w)
                       : g->be->ops->conv2d_forward(g->be, &g->op, g->y, g->x, g->w, g->b);
}

/* One Winograd-eligible shape's forward and backward through dnnl (--autotune on, as in bench: each pass takes
 * the faster of oneDNN's kernel and the engine's own Winograd), as the direct convolution's FLOPs per second.
 * *fmt: the layout it ran in. */
static int wino_shape(nn_backend *be, const int shape[3], double *fwd, double *bwd, int *fmt) {
    const int C = shape[0], H = shape[1], N = shape[2];
    conv_arg g = {.be = be, .op = {.kind = NN_OP_CONV2D, .n = N, .c = C, .h = H, .w = H, .oc = C, .oh = H, .ow = H,
                                   .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1, .has_bias = 1}};
    /* the blocked layout a workload's graph gives these layers here (nChw16c with AVX-512, nChw8c with AVX2): the
     * engine's own Winograd takes blocked tensors only; C is a whole number of blocks, so no padding */
    *fmt = g.op.fmt_in = g.op.fmt_out = nn_layout_blocked(be, &g.op);
    size_t act = sizeof(float) * (size_t)N * C * H * H, wb = sizeof(float) * (size_t)C * C * 9, bb = sizeof(float) * C;
    float **bufs[] = {&g.x, &g.y, &g.dx, &g.w, &g.dw, &g.b, &g.db};
    const size_t sizes[] = {act, act, act, wb, wb, bb, bb};
    int rc = 0, prepared = 0;
    if (be->ops->prepare) SD_TRY_GOTO(rc, be->ops->prepare(be, &g.op), done);
    prepared = 1;
    for (int i = 0; i < 7; i++) {
        SD_TRY_GOTO(rc, nn_dev_alloc(be, (void **)bufs[i], sizes[i]), done);
        SD_TRY_GOTO(rc, be->ops->zero(be, *bufs[i], sizes[i]), done);
    }
    const double flops = 2.0 * C * 9 * C * H * H * N;
    double s;
    SD_TRY_GOTO(rc, time_median(conv_once, &g, be, 1.0, 5, &s, NULL), done);
    *fwd = flops / s;
    g.backward = 1;
    SD_TRY_GOTO(rc, time_median(conv_once, &g, be, 2.0, 5, &s, NULL), done);
    *bwd = 2 * flops / s;
done:
    for (int i = 0; i < 7; i++) nn_dev_free(be, *bufs[i], sizes[i]);
    if (prepared && be->ops->release) be->ops->release(be, &g.op);
    return rc;
}

/* The Winograd rates (the shapes nn_roofline_winograd names): the fastest of three shapes, forward and backward
 * apart, since a floor is the best the machine does and the rate moves with the shape (405-491 GFLOP/s forward
 * over these three on an AVX2 Zen 3). NaN when dnnl is not built. */
static int measure_winograd(int threads, double *fwd, double *bwd, char *how, size_t howlen) {
    *fwd = *bwd = NAN;
    if (!nn_backend_compiled("dnnl")) { snprintf(how, howlen, "not measured (no dnnl back-end)"); return 0; }
    nn_backend_opts bo = {.threads = threads, .quiet = 1, .autotune = 1, .precision = "fp32"};
    nn_backend *be = NULL;
    SD_TRY(nn_backend_new(&be, "dnnl", &bo, NULL, 0));
    static const int shapes[][3] = {{128, 32, 32}, {64, 32, 64}, {256, 16, 16}};   /* channels, plane, batch */
    int rc = 0, bf = 0, bb = 0, fmt = NN_FMT_NCHW;
    char list[128] = "";
    for (int i = 0; i < 3 && !rc; i++) {
        double f = NAN, b = NAN;
        rc = wino_shape(be, shapes[i], &f, &b, &fmt);
        if (!rc && !(f <= *fwd)) { *fwd = f; bf = i; }
        if (!rc && !(b <= *bwd)) { *bwd = b; bb = i; }
        size_t at = strlen(list);
        snprintf(list + at, sizeof list - at, "%s%d->%d on %dx%d batch %d", i ? ", " : "", shapes[i][0], shapes[i][0],
                 shapes[i][1], shapes[i][1], shapes[i][2]);
    }
    nn_backend_free(be);
    SD_TRY(rc);
    snprintf(how, howlen, "3x3 convs in %s through dnnl with --autotune, %d threads, median of 5; the fastest of %s "
             "(forward: %d->%d, backward: %d->%d)", nn_fmt_name(fmt), threads, list, shapes[bf][0], shapes[bf][0],
             shapes[bb][0], shapes[bb][0]);
    return 0;
}

/* --roofline: bandwidth and the Winograd rates, measured once for every workload; printed, and into doc. */
static int measure_machine(int threads, double ceiling, nn_machine *mc, json_t *doc) {
    *mc = (nn_machine){.peak = ceiling * 1e9};
    const size_t elems = (size_t)16 << 20;   /* 64 MiB an array: twice this CPU's 32 MiB L3 */
    SD_TRY(sd_triad_bandwidth(threads, elems, 10, &mc->bandwidth));
    /* the cache's rate: three arrays filling half the last-level cache, many short passes */
    mc->cache_bytes = sd_llc_bytes();
    size_t celems = (size_t)(mc->cache_bytes / 24);
    if (celems >= 4096) SD_TRY(sd_triad_bandwidth(threads, celems, 200, &mc->cache_bandwidth));
    else mc->cache_bandwidth = NAN;
    char how[320];
    SD_TRY(measure_winograd(threads, &mc->wino_fwd, &mc->wino_bwd, how, sizeof how));
    printf("bandwidth: %.1f GB/s (STREAM triad, 3 x 64 MiB, %d threads, best of 10)\n", mc->bandwidth / 1e9, threads);
    printf("cache bandwidth: %.1f GB/s (the same triad, 3 x %.2f MiB, best of 200), for kernels moving at most the "
           "last-level cache's %.0f MiB\n", mc->cache_bandwidth / 1e9, (double)celems * 4 / 1048576,
           mc->cache_bytes / 1048576);
    printf("Winograd: forward %.1f, backward %.1f GFLOP/s effective (%s)\n", mc->wino_fwd / 1e9, mc->wino_bwd / 1e9,
           how);
    json_t *j = json_object();
    json_object_set_new(j, "peak_gflops", jnum(ceiling));
    json_object_set_new(j, "wino_fwd_gflops", jnum(mc->wino_fwd / 1e9));
    json_object_set_new(j, "wino_bwd_gflops", jnum(mc->wino_bwd / 1e9));
    json_object_set_new(j, "wino_how", json_string(how));
    json_object_set_new(j, "bandwidth_gbs", jnum(mc->bandwidth / 1e9));
    json_object_set_new(j, "cache_bandwidth_gbs", jnum(mc->cache_bandwidth / 1e9));
    json_object_set_new(j, "cache_bytes", jnum(mc->cache_bytes));
    json_object_set_new(j, "bandwidth_how", json_string("STREAM triad a = b + s*c, 3 x 64 MiB, best of 10"));
    json_object_set_new(doc, "roofline_machine", j);
    return 0;
}

static int run_one(const perf_args *a, const char *wname, const char *bname, double ceiling, const nn_machine *mc,
                   json_t *doc) {
    sd_workload w;
    SD_TRY(sd_workload_load(&w, a->workloads_dir ? a->workloads_dir : "workloads", wname));
    nn_backend_opts bo = {.threads = (int)a->threads, .quiet = 1, .autotune = 1, .precision = a->precision};
    nn_backend *be = NULL;
    nn_model *m = NULL;
    float *hx = NULL;
    int32_t *hy = NULL;
    double *ptrain = NULL, *pinfer = NULL;   /* --layers: the profiles' seconds per op */
    int rc = nn_backend_new(&be, bname, &bo, NULL, 0);
    if (rc) goto done;
    int batch = a->batch > 0 ? (int)a->batch : w.batch;
    SD_TRY_GOTO(rc, nn_model_build(&m, &w, be, batch, 42), done);
    size_t nx = (size_t)batch * w.in_c * w.in_h * w.in_w;
    hx = malloc(sizeof(float) * nx);
    hy = malloc(sizeof(int32_t) * (size_t)batch);
    if (!hx || !hy) { rc = sd_err(SD_ENOMEM, "out of memory"); goto done; }
    uint64_t s = 12345;
    for (size_t i = 0; i < nx; i++) { s = s * 6364136223846793005ULL + 1; hx[i] = (float)(s >> 40) / 16777216.0f; }
    for (int i = 0; i < batch; i++) hy[i] = i % w.classes;
    SD_TRY_GOTO(rc, nn_model_upload_input(m, hx), done);
    if (m->labels) SD_TRY_GOTO(rc, be->ops->upload(be, m->labels, hy, sizeof(int32_t) * (size_t)batch), done);
    if (m->targets) SD_TRY_GOTO(rc, be->ops->zero(be, m->targets, sizeof(float) * (size_t)batch * w.classes), done);

    model_arg ma = {m, 1};
    double ts = NAN, is, tw[32], iw[32];
    int nw = a->repeat < 32 ? (int)a->repeat : 32;
    if (m->training)   /* an inference workload is timed for inference only */
        SD_TRY_GOTO(rc, time_median(train_once, &ma, be, a->seconds, nw, &ts, tw), done);
    SD_TRY_GOTO(rc, time_median(infer_once, &ma, be, a->seconds / 2, nw, &is, iw), done);
    double ftr = train_flops(m) * batch, fin = m->flops_fwd * batch;
    double train_ips = batch / ts, infer_ips = batch / is;
    double train_gf = ftr / ts / 1e9, infer_gf = fin / is / 1e9;
    printf("%-12s %-5s batch %-4d ", w.name, be->name, batch);
    if (m->training)
        printf("train %9.1f img/s %7.1f GFLOP/s (%4.0f%%)", train_ips, train_gf, 100 * train_gf / ceiling);
    else
        printf("train %-39s", "n/a (an inference workload)");
    printf("   infer %9.1f img/s %7.1f GFLOP/s (%4.0f%%)\n", infer_ips, infer_gf, 100 * infer_gf / ceiling);
    fflush(stdout);
    json_t *run = json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:f, s:f, s:f}", "workload", w.name, "backend", be->name,
                            "device", be->device, "precision", a->precision, "batch", batch, "threads", (int)a->threads,
                            "infer_images_per_s", infer_ips, "infer_gflops", infer_gf,
                            "infer_flops_per_example", fin / batch);
    /* training figures: null for an inference workload */
    json_object_set_new(run, "train_images_per_s", m->training ? json_real(train_ips) : json_null());
    json_object_set_new(run, "train_gflops", m->training ? json_real(train_gf) : json_null());
    json_object_set_new(run, "train_flops_per_example", m->training ? json_real(ftr / batch) : json_null());
    /* seconds per call of every window, as scripts/perf_common.py records them */
    json_t *jtw = m->training ? json_array() : json_null(), *jiw = json_array();
    for (int i = 0; i < nw; i++) {
        if (m->training) json_array_append_new(jtw, json_real(tw[i]));
        json_array_append_new(jiw, json_real(iw[i]));
    }
    json_object_set_new(run, "train_windows_s", jtw);
    json_object_set_new(run, "infer_windows_s", jiw);
    if (a->layers) SD_TRY_GOTO(rc, layers_report(m, &ma, batch, ceiling, run, &ptrain, &pinfer), done);
    if (a->roofline) SD_TRY_GOTO(rc, roofline_report(m, mc, ts, is, ptrain, pinfer, run), done);
    rc = sd_results_append(doc, run);
done:
    if (rc) fprintf(stderr, "showdown perf: %s on %s failed: %s\n", wname, bname, sd_errmsg());
    free(ptrain);
    free(pinfer);
    free(hx);
    free(hy);
    nn_model_free(m);
    nn_backend_free(be);
    sd_workload_free(&w);
    return rc;
}

/* --host-ref KEY: the machine's recent canaries of KEY as lines "unix time<TAB>images/s", oldest first; with
 * --host-ref-save, such lines read from stdin become KEY's, and their usual speed (the reference bench judges a
 * canary by) is printed: bench-cpu keeps its canaries so, and judges them by the same rule as bench. */
static int host_ref(const char *key, int save) {
    if (!save) {
        sd_canary c[SD_HOST_REF_KEEP];
        const int n = sd_host_ref_load(key, c);
        for (int i = 0; i < n; i++) printf("%.0f\t%.1f\n", c[i].t, c[i].v);
        return SD_EXIT_OK;
    }
    sd_canary *c = NULL;   /* every line: sd_host_ref_save keeps the last */
    size_t n = 0, cap = 0;
    char line[256];
    for (long no = 1; fgets(line, sizeof line, stdin); no++) {
        char *end;
        double t = strtod(line, &end), v = *end == '\t' ? strtod(end + 1, &end) : NAN;
        if (!isfinite(t) || !isfinite(v) || v <= 0 || (*end && *end != '\n')) {
            fprintf(stderr, "showdown perf: stdin:%ld: expected \"unix time<TAB>images/s\"\n", no);
            free(c);
            return SD_EXIT_INPUT;
        }
        if (n == cap) {
            sd_canary *more = realloc(c, (cap = cap ? 2 * cap : 64) * sizeof *c);
            if (!more) {
                free(c);
                fprintf(stderr, "showdown perf: out of memory reading stdin\n");
                return SD_EXIT_FAIL;
            }
            c = more;
        }
        c[n++] = (sd_canary){.t = t, .v = v};
    }
    sd_host_ref_save(key, c, (int)n);
    printf("%.1f\n", sd_host_ref_usual(c, (int)n));
    free(c);
    return SD_EXIT_OK;
}

int cmd_perf(int argc, char **argv) {
    perf_args a = {.repeat = 3, .seconds = 6, .precision = "fp32"};
    sd_list wl = {0}, bl = {0};
    const sd_opt opts[] = {
        {"workload", SD_OPT_LIST, &wl, "NAME", "workloads (default mnist_mlp,mnist_cnn,cifar10_vgg)", 0, 0},
        {"backend", SD_OPT_LIST, &bl, "ref|dnnl|cudnn|all", "back-ends; all (default): every CPU back-end built, ref,dnnl", 0, 0},
        {"threads", SD_OPT_INT, &a.threads, "N", "CPU threads (default: all cores)", 1, 4096},
        {"batch", SD_OPT_INT, &a.batch, "N", "batch size (default: the workload's)", 1, 65536},
        {"repeat", SD_OPT_INT, &a.repeat, "R", "timed repeats; the median is reported (default 3)", 1, 32},
        {"seconds", SD_OPT_DOUBLE, &a.seconds, "S", "time budget of the timed training steps per cell (default 6)", 0.01, 3600},
        {"no-ceiling", SD_OPT_FLAG, &a.no_ceiling, NULL, "do not measure the sgemm ceiling (percentages: nan)", 0, 0},
        {"layers", SD_OPT_FLAG, &a.layers, NULL, "also time each conv/dense layer forward and backward", 0, 0},
        {"roofline", SD_OPT_FLAG, &a.roofline, NULL, "also each phase's time floor on this machine and % of it, per layer "
         "(docs/roofline.md)", 0, 0},
        {"precision", SD_OPT_CHOICE, &a.precision, "fp32|tf32|bf16|fp16", "fp32 (default), tf32 (cuDNN), bf16 (dnnl on a CPU "
         "with AVX512_BF16 or AMX, cuDNN) or fp16 (cuDNN; steps timed without loss scaling; docs/precision.md)", 0, 0},
        {"workloads", SD_OPT_STR, &a.workloads_dir, "DIR", "directory of workload specs (default ./workloads)", 0, 0},
        {"json", SD_OPT_OUT, &a.json, "FILE", "write the measurements as JSON to FILE, atomically", 0, 0},
        {"host-ref", SD_OPT_STR, &a.host_ref, "KEY", "print this machine's recent host canaries of KEY (unix time, "
         "images/s, oldest first) and measure nothing", 0, 0},
        {"host-ref-save", SD_OPT_FLAG, &a.host_ref_save, NULL, "with --host-ref: KEY's canaries become the lines on stdin "
         "(the last 500 kept), and their usual speed is printed: the reference bench judges a canary by", 0, 0},
        {0},
    };
    int code = sd_cli_parse("perf", "[options]",
                      "Steady-state training and inference images/s of workloads on one resident synthetic batch,\n"
                      "GFLOP/s against the sgemm ceiling measured in the same run (and per layer with --layers).",
                      opts, argc, argv);
    if (code >= 0) return code;
    if (a.host_ref_save && !a.host_ref) {
        fprintf(stderr, "showdown perf: --host-ref-save needs --host-ref KEY\n");
        return SD_EXIT_USAGE;
    }
    if (a.host_ref) return host_ref(a.host_ref, a.host_ref_save);
    int rc = 0;
    sd_sig_install_immediate();
    if (a.threads <= 0) a.threads = sysconf(_SC_NPROCESSORS_ONLN);
    if (!wl.n) sd_list_split(&wl, "mnist_mlp,mnist_cnn,cifar10_vgg");
    if (!bl.n || sd_list_has(&bl, "all")) {
        memset(&bl, 0, sizeof bl);
        sd_list_split(&bl, nn_backend_compiled("dnnl") ? "ref,dnnl" : "ref");
    }

    double ceiling = NAN;
    char how[256] = "not measured (--no-ceiling)";
    /* the ceiling's three 64 MiB matrices would be the process's peak memory: a caller that reads max RSS
     * measures it in another process */
    if (!a.no_ceiling) {
        if ((rc = measure_ceiling((int)a.threads, &ceiling, how, sizeof how)) != 0) return sd_cli_fail("perf", rc);
        printf("ceiling: %.1f GFLOP/s (%s)\n", ceiling, how);
        printf("GFLOP/s count a direct convolution's multiply-adds: dnnl's Winograd convolutions (3x3, stride 1, 16+\n"
               "channels; --autotune on as in bench) do fewer, so their effective rate can pass the ceiling.\n");
    }
    fflush(stdout);
    json_t *doc = json_pack("{s:s, s:o, s:s, s:i}", "format", "showdown-perf/1", "sgemm_gflops",
                            a.no_ceiling ? json_null() : json_real(ceiling), "sgemm_how", how,
                            "threads", (int)a.threads);
    sd_results_set_env(doc, sd_env_fingerprint());   /* incl. omp_wait_policy */
    if ((rc = sd_results_init_runs(doc)) != 0) { json_decref(doc); return sd_cli_fail("perf", rc); }
    nn_machine mc = {0};
    if (a.roofline && (rc = measure_machine((int)a.threads, ceiling, &mc, doc)) != 0) {
        json_decref(doc);
        return sd_cli_fail("perf", rc);
    }
    fflush(stdout);
    int failed = 0, refused = 0, ran = 0;   /* refused: a back-end that does not run this precision (SD_EUSAGE) */
    for (int i = 0; i < wl.n; i++)
        for (int j = 0; j < bl.n; j++) {
            int r = run_one(&a, wl.v[i], bl.v[j], ceiling, &mc, doc);
            if (r == 0) ran++;
            else if (r == SD_EUSAGE) refused++;
            else failed++;
        }
    if (a.json && (rc = sd_json_write_atomic(doc, a.json)) != 0) { json_decref(doc); return sd_cli_fail("perf", rc); }
    json_decref(doc);
    if (!ran && !failed && refused) {   /* nothing could run as asked: the command line is what is wrong */
        fprintf(stderr, "showdown perf: no back-end of this run (--backend) runs --precision %s\n", a.precision);
        return SD_EXIT_USAGE;
    }
    return failed || refused ? SD_EXIT_FAIL : SD_EXIT_OK;
}
