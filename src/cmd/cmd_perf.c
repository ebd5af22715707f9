/* cmd_perf — `showdown perf`: steady-state throughput of workloads on back-ends (training and inference
 * images/s on one resident synthetic batch, median of repeats), per-layer GFLOP/s of the conv and dense
 * layers forward and backward, all against the sgemm ceiling measured on this machine in the same run.
 * No data loading, no validation: the engine's own speed, for `make bench` and `make bench-cpu`. */
#include "bench/results.h"
#include "nn/backend_impl.h"
#include "cmd/cli.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/util.h"
#include "core/sig.h"
#include "nn/model.h"
#include "nn/train.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct perf_args {
    const char *json, *workloads_dir;
    long threads, repeat, batch;
    double seconds;
    int layers, quiet, no_ceiling;
} perf_args;

/* Median seconds per call of fn over `repeat` timed runs (windows) of k calls, k chosen to fill `seconds`.
 * windows (NULL: not wanted), at least 32 long, gets every window's seconds per call, ascending: the bench
 * reads the fastest, which a host that slows for seconds at a time leaves alone. */
typedef int (*perf_fn)(void *arg);
static int time_median(perf_fn fn, void *arg, nn_backend *be, double seconds, int repeat, double *out,
                       double *windows) {
    SD_TRY(fn(arg));                                         /* warm-up (first-touch, jit) */
    SD_TRY(be->ops->sync(be));
    double t0 = nn_now();
    SD_TRY(fn(arg));
    SD_TRY(be->ops->sync(be));
    double once = nn_now() - t0;
    int k = once > 0 ? (int)(seconds / repeat / once) : 1;
    if (k < 1) k = 1;
    if (k > 1000) k = 1000;
    double t[32];
    if (repeat > 32) repeat = 32;
    for (int r = 0; r < repeat; r++) {
        t0 = nn_now();
        for (int i = 0; i < k; i++) SD_TRY(fn(arg));
        SD_TRY(be->ops->sync(be));
        t[r] = (nn_now() - t0) / k;
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
 * every op's share of an inference pass. */
static int profile_steps(nn_model *m, model_arg *ma, int training, json_t *run) {
    const int L = m->nlayers, steps = training ? 20 : 10;
    perf_fn step = training ? train_once : infer_once;
    double *prof = calloc((size_t)2 * L + 1, sizeof *prof);
    SD_ALLOC_CHECK(prof);
    m->prof = prof;
    int rc = 0;
    double t0 = nn_now();
    for (int s = 0; s < steps && rc == 0; s++) rc = step(ma);
    double total = (nn_now() - t0) / steps;
    m->prof = NULL;
    if (rc) { free(prof); return rc; }
    printf("    %s profile (%d %s, synced after every op): %.2f ms a %s\n", training ? "step" : "inference", steps,
           training ? "steps" : "passes", total * 1e3, training ? "step" : "pass");
    json_t *ops = json_array();
    for (int i = 0; i <= L; i++) {
        if (i < L && m->layers[i].op.kind == NN_OP_FLATTEN) continue;   /* a view: nothing runs */
        if (i == L && !training) continue;                               /* no optimizer step */
        double f = prof[2 * i] / steps, b = i < L ? prof[2 * i + 1] / steps : 0;
        const char *name = i < L ? m->layers[i].name : "optimizer";
        const char *kind = i < L ? nn_op_name(m->layers[i].op.kind) : "step + zero grads";
        const nn_op *op = i < L ? &m->layers[i].op : NULL;
        const char *fi = op && op->fmt_in == NN_FMT_NCHW16C ? "nChw16c" : "nchw";
        const char *fo = op && op->fmt_out == NN_FMT_NCHW16C ? "nChw16c" : "nchw";
        char lay[32] = "";
        if (op && (op->fmt_in || op->fmt_out)) snprintf(lay, sizeof lay, "  %s -> %s", fi, fo);
        printf("      %-14s %-18s fwd %7.3f ms  bwd %7.3f ms  %5.1f%%%s\n", name, kind, f * 1e3, b * 1e3,
               100 * (f + b) / total, lay);
        json_array_append_new(ops, json_pack("{s:s, s:s, s:f, s:f}", "op", name, "kind", kind, "fwd_ms", f * 1e3,
                                             "bwd_ms", b * 1e3));
    }
    json_object_set_new(run, training ? "step_profile" : "inference_profile", ops);
    free(prof);
    return 0;
}

static double train_flops(const nn_model *m) {   /* per example, as nn_train counts them */
    double fwd, train;
    nn_model_flops(m->layers, m->nlayers, &fwd, &train);
    return train;
}

static int run_one(const perf_args *a, const char *wname, const char *bname, double ceiling, json_t *doc) {
    sd_workload w;
    SD_TRY(sd_workload_load(&w, a->workloads_dir ? a->workloads_dir : "workloads", wname));
    nn_backend_opts bo = {.threads = (int)a->threads, .quiet = 1, .autotune = 1, .precision = "fp32"};
    nn_backend *be = NULL;
    nn_model *m = NULL;
    float *hx = NULL;
    int32_t *hy = NULL;
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
    json_t *run = json_pack("{s:s, s:s, s:s, s:i, s:i, s:f, s:f, s:f}", "workload", w.name, "backend", be->name,
                            "device", be->device, "batch", batch, "threads", (int)a->threads,
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
    if (a->layers && m->training) {
        json_t *ls = json_array();
        SD_TRY_GOTO(rc, train_once(&ma), done);           /* activations and gradients in place */
        for (int i = 0; i < m->nlayers; i++) {
            const nn_layer *l = &m->layers[i];
            if (l->op.kind != NN_OP_CONV2D && l->op.kind != NN_OP_DENSE) continue;
            layer_arg la = {m, i, 0};
            double tf, tb;
            SD_TRY_GOTO(rc, time_median(layer_once, &la, be, 0.6, 5, &tf, NULL), done);
            la.backward = 1;
            SD_TRY_GOTO(rc, time_median(layer_once, &la, be, 1.2, 5, &tb, NULL), done);
            const int has_dx = nn_layer_has_dx(m->layers, i);
            double ff = l->flops * batch, fbw = ff * (has_dx ? 2 : 1);
            double gf = ff / tf / 1e9, gb = fbw / tb / 1e9;
            printf("    %-10s %4dx%-3dx%-3d -> %4dx%-3dx%-3d fwd %7.2f ms %6.1f GFLOP/s (%3.0f%%)  bwd %7.2f ms %6.1f GFLOP/s (%3.0f%%)%s\n",
                   l->name, l->op.c, l->op.h, l->op.w, l->op.oc, l->op.oh, l->op.ow, tf * 1e3, gf,
                   100 * gf / ceiling, tb * 1e3, gb, 100 * gb / ceiling, has_dx ? "" : " (no dx)");
            json_array_append_new(ls, json_pack("{s:s, s:f, s:f, s:f, s:f}", "layer", l->name, "fwd_ms", tf * 1e3,
                                                "fwd_gflops", gf, "bwd_ms", tb * 1e3, "bwd_gflops", gb));
        }
        json_object_set_new(run, "layers", ls);
        SD_TRY_GOTO(rc, profile_steps(m, &ma, 1, run), done);
    }
    if (a->layers) {   /* the inference pass's ops, for training workloads too */
        SD_TRY_GOTO(rc, infer_once(&ma), done);
        SD_TRY_GOTO(rc, profile_steps(m, &ma, 0, run), done);
    }
    rc = sd_results_append(doc, run);
done:
    if (rc) fprintf(stderr, "showdown perf: %s on %s failed: %s\n", wname, bname, sd_errmsg());
    free(hx);
    free(hy);
    nn_model_free(m);
    nn_backend_free(be);
    sd_workload_free(&w);
    return rc;
}

int cmd_perf(int argc, char **argv) {
    perf_args a = {.repeat = 3, .seconds = 6};
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
        {"workloads", SD_OPT_STR, &a.workloads_dir, "DIR", "directory of workload specs (default ./workloads)", 0, 0},
        {"json", SD_OPT_STR, &a.json, "FILE", "write the measurements as JSON to FILE, atomically", 0, 0},
        {0},
    };
    int help = 0;
    int rc = sd_opts_parse(opts, argc, argv, NULL, 0, NULL, &help);
    if (rc) return sd_cli_fail("perf", rc);
    if (help) {
        sd_opts_usage(stdout, "perf", "[options]",
                      "Steady-state training and inference images/s of workloads on one resident synthetic batch,\n"
                      "GFLOP/s against the sgemm ceiling measured in the same run (and per layer with --layers).",
                      opts);
        return SD_EXIT_OK;
    }
    if (a.json && (rc = sd_out_file_check(a.json, "--json")) != 0) return sd_cli_fail("perf", rc);
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
    int failed = 0;
    for (int i = 0; i < wl.n; i++)
        for (int j = 0; j < bl.n; j++)
            if (run_one(&a, wl.v[i], bl.v[j], ceiling, doc) != 0) failed = SD_EBACKEND;
    if (a.json && (rc = sd_json_write_atomic(doc, a.json)) != 0) { json_decref(doc); return sd_cli_fail("perf", rc); }
    json_decref(doc);
    return failed ? SD_EXIT_FAIL : SD_EXIT_OK;
}
