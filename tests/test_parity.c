/* test_parity — one parity suite for every compute back-end ("dnnl", "cudnn") against the reference:
 * every operation forward and backward on fixed awkward shapes and seeded random ones (odd sizes, channel
 * counts not a multiple of 16, batch 1, stride 2, padding). Error measure, per output tensor:
 *     rel = max_i |out_i - ref_i| / max(1e-6, max_i |ref_i|)     and the test requires rel < 1e-5
 * (cuDNN convolutions: the tolerance of the algorithm family it picked, cu_algo_tolerance, named on failure;
 * a training step's gradients: the widest family of the model's convolutions; TF32: at least 5e-3; fp16 and
 * bf16: the 16-bit tolerances of convolutions and dense layers, a training step by NMSE, see g_prec).
 * Backward is checked for its contract: dx is overwritten (pre-filled with garbage), dw/db accumulate
 * (pre-filled with random values, and backward runs twice). A back-end not compiled into this build, or
 * whose device is absent, is reported "skipped: <reason>". */
#include "testutil.h"
#include "nn/backend_impl.h"
#include "core/err.h"
#include "nn/model.h"
#include "nn/train.h"
#include "nn/half.h"           /* the 16-bit roundings, for the emulated tolerance check (no CUDA needed) */

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#if SD_HAVE_CUDNN
#include "be_cudnn/cudnn_be.h"
#endif

#define TOL 1e-5

/* ---- helpers ------------------------------------------------------------------------------------------ */

static uint64_t rng_state = 88172645463325252ULL;
static uint32_t rnd(void) {
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 32);
}
static int rnd_int(int lo, int hi) { return lo + (int)(rnd() % (uint32_t)(hi - lo + 1)); }
static float rnd_f(void) { return (float)rnd() / 4294967296.0f * 2.0f - 1.0f; }
static float *rnd_buf(size_t n, float scale) {
    float *p = malloc(sizeof(float) * (n ? n : 1));
    cr_assert_not_null(p);
    for (size_t i = 0; i < n; i++) p[i] = rnd_f() * scale;
    return p;
}

/* SD_TEST_PRECISION (make gpu-check) is the precision of the back-end under test; SD_TEST_AUTOTUNE=0: cuDNN's
 * heuristics instead of its Find search.
 * tf32: every tolerance becomes at least TF32_TOL (a 10-bit mantissa).
 * fp16, bf16 (mixed precision, docs/precision.md): convolutions and dense layers compute on 16-bit copies of x, w
 * and dy, so their y, dx and dw get the 16-bit type's tolerance, 4 unit roundoffs (FP16_TOL, BF16_TOL, as
 * test_bf16.c holds dnnl's bf16 to; cuDNN's Winograd and FFT twice that, cu_algo_tolerance); every other op is
 * fp32 and keeps 1e-5 (bias gradients too: reduced from the fp32 dy). A training step is held by NMSE as
 * test_bf16.c does (a ReLU input within 16-bit rounding of 0 may fall on the other side and move that unit's
 * gradient row in every layer below), its fp16 backward loss-scaled by 65536 as training does; the forward of a
 * deep network by a wider NMSE (HALF_NMSE_*; dnnl in bf16 measures 6e-6 to 3e-5 here, cuDNN also rounds each
 * convolution's output to 16 bits: first estimates, to revisit with a GPU's figures). */
#define TF32_TOL 5e-3
#define FP16_TOL 2e-3        /* 4 u, u = 2^-11 (cu_prec_tolerance) */
#define BF16_TOL 1.6e-2      /* 4 u, u = 2^-8 */
enum { P_FP32, P_TF32, P_FP16, P_BF16 };   /* the values of cu_prec (be_cudnn/cudnn_be.h) */
static int g_prec, g_tf32;
static int half_prec(void) { return g_prec == P_FP16 || g_prec == P_BF16; }
static double half_tol(void) { return g_prec == P_FP16 ? FP16_TOL : BF16_TOL; }
#define EXPECT_CLOSE(be, what, got, ref, n) EXPECT_CLOSE_TOL(be, what, got, ref, n, TOL, "")
/* note: what the tolerance depends on ("algorithm WINOGRAD_NONFUSED"), printed with the result */
#define EXPECT_CLOSE_TOL(be, what, got, ref, n, tol, note) do {                                      \
        double e_ = tu_rel_err((got), (ref), (n));                                                      \
        printf("%-5s %-44s rel %.2e%s%s\n", (be)->name, (what), e_, (note)[0] ? "  " : "", (note));  \
        double t_ = g_tf32 && (tol) < TF32_TOL ? TF32_TOL : (tol);                                   \
        cr_expect(e_ < t_, "%s: %s: relative error %.3e >= %.0e%s%s%s", (be)->name, (what), e_, t_,  \
                  (note)[0] ? " with " : "", (note), g_tf32 ? " (tf32)" : "");                       \
    } while (0)

/* Tolerance and note for output dir (0 y, 1 dx, 2 dw) of a convolution: cuDNN's chosen algorithm's family. */
static double conv_tol(nn_backend *be, const nn_op *op, int dir, char *note, size_t len) {
    note[0] = 0;
#if SD_HAVE_CUDNN
    static const int dirs[3] = {CU_FWD, CU_BWD_DATA, CU_BWD_FILTER};
    cu_conv_choice ch;
    if (cu_conv_choice_of(be, op, &ch) == 0) {
        const cu_algo_perf *a = &ch.dir[dirs[dir]];
        snprintf(note, len, "algorithm %s%s", cu_algo_name(dirs[dir], a->algo), ch.searched ? " (find)" : "");
        return cu_algo_tolerance(dirs[dir], a->algo, half_prec() ? g_prec : a->math == CUDNN_TENSOR_OP_MATH ||
                                                     a->math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);
    }
#else
    (void)be; (void)op; (void)dir; (void)len;
#endif
    if (half_prec()) snprintf(note, len, "%s operands", g_prec == P_FP16 ? "fp16" : "bf16");
    return half_prec() ? half_tol() : TOL;
}

/* Tolerance and note of a dense layer's y, dx, dw: the products' precision (cublasGemmEx on 16-bit operands). */
static double dense_tol(char *note, size_t len) {
    note[0] = 0;
    if (!half_prec()) return TOL;
    snprintf(note, len, "%s operands", g_prec == P_FP16 ? "fp16" : "bf16");
    return half_tol();
}

/* Under TF32 every tolerance is at least TF32_TOL; an NMSE limit at least TF32_NMSE (the square of a few
 * 10-bit roundings accumulated over a deep network's layers). */
#define TF32_NMSE 1e-4
#define HALF_NMSE_FP16 1e-4
#define HALF_NMSE_BF16 1e-3
static double widen(double tol) { return g_tf32 && tol < TF32_TOL ? TF32_TOL : tol; }
static double widen_nmse(double lim) {
    const double floor_ = g_tf32 ? TF32_NMSE : g_prec == P_FP16 ? HALF_NMSE_FP16 : g_prec == P_BF16 ? HALF_NMSE_BF16 : 0;
    return lim < floor_ ? floor_ : lim;
}

/* Tolerance of every gradient and parameter of a training step of m on be: a layer's dW reads the forward
 * outputs of the layers below it and the data gradients of those above, so any convolution's algorithm
 * (cu_algo_tolerance of its family, in any direction) bounds all of them; 1e-3 below a ReLU tie; TF32 widens. */
static double step_tol(nn_backend *be, const nn_model *m, int below_tie) {
    double tol = below_tie ? 1e-3 : TOL;
    char note[160];
    for (int i = 0; m && i < m->nlayers; i++) {
        if (m->layers[i].op.kind != NN_OP_CONV2D) continue;
        for (int dir = 0; dir < 3; dir++) {
            double t = conv_tol(be, &m->layers[i].op, dir, note, sizeof note);
            if (t > tol) tol = t;
        }
    }
    return widen(tol);
}

static nn_backend *open_be(const char *name) {
    if (!nn_backend_compiled(name)) TU_SKIP("%s: not compiled into this build (%s)", name, nn_backend_list());
    const char *prec = getenv("SD_TEST_PRECISION"), *tune = getenv("SD_TEST_AUTOTUNE");
    nn_backend_opts o = {.threads = 0, .autotune = !(tune && strcmp(tune, "0") == 0),
                         .precision = prec && *prec ? prec : "fp32", .quiet = 1};
    g_tf32 = strcmp(o.precision, "tf32") == 0;
    g_prec = g_tf32 ? P_TF32 : strcmp(o.precision, "fp16") == 0 ? P_FP16 : strcmp(o.precision, "bf16") == 0 ? P_BF16
                                                                                                            : P_FP32;
    /* dnnl in bf16 on AMX times each convolution pass in bf16 and fp32 and keeps the faster: two builds of one
     * model (fused and unfused) could choose differently. Every pass bf16 here, so they compare like with like. */
    if (g_prec == P_BF16) setenv("SD_DNNL_BF16_PASSES", "all", 0);
    nn_backend *be = NULL;
    int rc = nn_backend_new(&be, name, &o, NULL, 0);
    /* only a missing device is a skip: a broken install (a library that does not load, cudnnCreate or
     * out-of-memory failing) must fail, or gpu-check would call it "cannot run" */
    if (rc == SD_ENODEV) TU_SKIP("%s: %s", name, sd_errmsg());
    /* a precision this device cannot compute (bf16 below compute capability 8.0): not run here, not a failure */
    if (rc == SD_EUSAGE && strstr(sd_errmsg(), "compute capability")) TU_SKIP("%s: %s", name, sd_errmsg());
    cr_assert_eq(rc, 0, "%s: could not be created (%s): %s", name, sd_status_name(rc), sd_errmsg());
    return be;
}
static nn_backend *open_ref(void) {
    nn_backend_opts o = {.threads = 0, .autotune = 1, .precision = "fp32", .quiet = 1};
    nn_backend *be = NULL;
    cr_assert_eq(nn_backend_new(&be, "ref", &o, NULL, 0), 0, "%s", sd_errmsg());
    return be;
}

/* Device buffers: upload host data (or zeros when src is NULL), download into host. */
static void *dev(nn_backend *be, const void *src, size_t bytes) {
    void *p = NULL;
    cr_assert_eq(nn_dev_alloc(be, &p, bytes), 0, "%s", sd_errmsg());
    if (src) cr_assert_eq(be->ops->upload(be, p, src, bytes), 0, "%s", sd_errmsg());
    else cr_assert_eq(be->ops->zero(be, p, bytes), 0, "%s", sd_errmsg());
    return p;
}
static float *host(nn_backend *be, const void *d, size_t n) {
    float *h = malloc(sizeof(float) * (n ? n : 1));
    cr_assert_not_null(h);
    cr_assert_eq(be->ops->sync(be), 0, "%s", sd_errmsg());
    cr_assert_eq(be->ops->download(be, h, d, sizeof(float) * n), 0, "%s", sd_errmsg());
    return h;
}
#define OK(call, be) cr_assert_eq((call), 0, "%s: %s: %s", (be)->name, #call, sd_errmsg())

static void prepare(nn_backend *be, nn_op *op) {
    op->priv = NULL;
    if (be->ops->prepare) OK(be->ops->prepare(be, op), be);
}
static void release(nn_backend *be, nn_op *op) {
    if (be->ops->release) be->ops->release(be, op);
}
static size_t wsize(nn_backend *be, const nn_op *op) {
    return be->ops->workspace_size ? be->ops->workspace_size(be, op) : 0;
}

/* ---- dense and conv2d: y, then dx / dw / db, with the contract of backward ------------------------------ */

typedef struct layer_out { float *y, *dx, *dw, *db, *dx_skip_dw; } layer_out;

/* Runs forward once, backward twice (with dx, then dx NULL) on one back-end. */
static layer_out run_layer(nn_backend *be, nn_op op, const float *x, const float *w, const float *b,
                           const float *dy, const float *dw0, const float *db0) {
    const int conv = op.kind == NN_OP_CONV2D;
    size_t nx = (size_t)op.n * op.c * op.h * op.w, ny = (size_t)op.n * op.oc * op.oh * op.ow;
    size_t nw = (size_t)op.oc * op.c * (conv ? op.kh * op.kw : 1), nb = (size_t)op.oc;
    prepare(be, &op);
    float *garbage = rnd_buf(nx, 1e3f);
    void *dX = dev(be, x, nx * 4), *dW = dev(be, w, nw * 4), *dB = b ? dev(be, b, nb * 4) : NULL;
    void *dY = dev(be, NULL, ny * 4), *dDY = dev(be, dy, ny * 4), *dDX = dev(be, garbage, nx * 4);
    void *dDW = dev(be, dw0, nw * 4), *dDB = dev(be, db0, nb * 4);
    layer_out o;
    if (conv) OK(be->ops->conv2d_forward(be, &op, dY, dX, dW, dB), be);
    else OK(be->ops->dense_forward(be, &op, dY, dX, dW, dB), be);
    o.y = host(be, dY, ny);
    if (conv) OK(be->ops->conv2d_backward(be, &op, dDX, dDW, dDB, dDY, dX, dW), be);
    else OK(be->ops->dense_backward(be, &op, dDX, dDW, dDB, dDY, dX, dW), be);
    o.dx = host(be, dDX, nx);
    o.dx_skip_dw = host(be, dDW, nw);
    /* second backward: dx NULL (first layer), dw/db accumulate again */
    if (conv) OK(be->ops->conv2d_backward(be, &op, NULL, dDW, dDB, dDY, dX, dW), be);
    else OK(be->ops->dense_backward(be, &op, NULL, dDW, dDB, dDY, dX, dW), be);
    o.dw = host(be, dDW, nw);
    o.db = host(be, dDB, nb);
    nn_dev_free(be, dX, nx * 4); nn_dev_free(be, dW, nw * 4); nn_dev_free(be, dB, nb * 4); nn_dev_free(be, dY, ny * 4);
    nn_dev_free(be, dDY, ny * 4); nn_dev_free(be, dDX, nx * 4); nn_dev_free(be, dDW, nw * 4); nn_dev_free(be, dDB, nb * 4);
    free(garbage);
    release(be, &op);
    return o;
}

static void free_out(layer_out *o) { free(o->y); free(o->dx); free(o->dw); free(o->db); free(o->dx_skip_dw); }

static void check_layer(nn_backend *be, nn_backend *ref, nn_op op, const char *label) {
    const int conv = op.kind == NN_OP_CONV2D;
    size_t nx = (size_t)op.n * op.c * op.h * op.w, ny = (size_t)op.n * op.oc * op.oh * op.ow;
    size_t nw = (size_t)op.oc * op.c * (conv ? op.kh * op.kw : 1), nb = (size_t)op.oc;
    float *x = rnd_buf(nx, 1.0f), *w = rnd_buf(nw, 0.5f), *b = op.has_bias ? rnd_buf(nb, 0.5f) : NULL;
    float *dy = rnd_buf(ny, 1.0f), *dw0 = rnd_buf(nw, 1.0f), *db0 = rnd_buf(nb, 1.0f);
    layer_out r = run_layer(ref, op, x, w, b, dy, dw0, db0);
    layer_out g = run_layer(be, op, x, w, b, dy, dw0, db0);
    char what[160], note[3][64];
    double tol[3];
    for (int d = 0; d < 3; d++)
        tol[d] = conv ? conv_tol(be, &op, d, note[d], sizeof note[d]) : dense_tol(note[d], sizeof note[d]);
    snprintf(what, sizeof what, "%s y", label); EXPECT_CLOSE_TOL(be, what, g.y, r.y, ny, tol[0], note[0]);
    snprintf(what, sizeof what, "%s dx", label); EXPECT_CLOSE_TOL(be, what, g.dx, r.dx, nx, tol[1], note[1]);
    snprintf(what, sizeof what, "%s dw (+= once)", label);
    EXPECT_CLOSE_TOL(be, what, g.dx_skip_dw, r.dx_skip_dw, nw, tol[2], note[2]);
    snprintf(what, sizeof what, "%s dw (+= twice)", label); EXPECT_CLOSE_TOL(be, what, g.dw, r.dw, nw, tol[2], note[2]);
    /* db is reduced from the fp32 dy on cudnn (cudnnConvolutionBackwardBias) in every precision; oneDNN's bf16
     * backward-weights reduces its bf16 copy of dy (SD_TEST_PRECISION=bf16 on dnnl) */
    const double tol_db = half_prec() && strcmp(be->name, "cudnn") != 0 ? half_tol() : TOL;
    snprintf(what, sizeof what, "%s db (+= twice)", label);
    EXPECT_CLOSE_TOL(be, what, g.db, r.db, nb, tol_db, "");
    free_out(&r); free_out(&g);
    free(x); free(w); free(b); free(dy); free(dw0); free(db0);
}

static nn_op conv_op(int n, int c, int h, int w, int oc, int kh, int kw, int s, int p, int bias) {
    nn_op op = {.kind = NN_OP_CONV2D, .n = n, .c = c, .h = h, .w = w, .oc = oc, .kh = kh, .kw = kw,
                .sh = s, .sw = s, .ph = p, .pw = p, .has_bias = bias};
    op.oh = (h + 2 * p - kh) / s + 1;
    op.ow = (w + 2 * p - kw) / s + 1;
    return op;
}

static void parity_conv(const char *name) {
    nn_backend *be = open_be(name), *ref = open_ref();
    const nn_op fixed[] = {
        conv_op(2, 3, 32, 32, 50, 3, 3, 1, 1, 1),    /* cifar10_vgg conv1 (batch 2) */
        conv_op(2, 50, 16, 16, 100, 3, 3, 1, 1, 1),  /* cifar10_vgg conv3-like */
        conv_op(3, 1, 28, 28, 32, 3, 3, 1, 0, 1),    /* mnist_cnn conv1 */
        conv_op(2, 32, 26, 26, 64, 3, 3, 1, 0, 1),   /* mnist_cnn conv2 */
        conv_op(1, 3, 7, 9, 5, 3, 3, 1, 1, 1),       /* batch 1, odd sizes */
        conv_op(2, 17, 11, 10, 19, 3, 3, 2, 1, 1),   /* stride 2, odd channels */
        conv_op(1, 20, 9, 9, 33, 1, 1, 1, 0, 0),     /* 1x1, no bias */
        conv_op(2, 8, 13, 12, 16, 5, 5, 2, 2, 1),    /* 5x5 stride 2 pad 2 */
        conv_op(1, 5, 6, 5, 7, 3, 2, 2, 0, 1),       /* non-square kernel, floor output */
    };
    char label[96];
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        nn_op o = fixed[i];
        snprintf(label, sizeof label, "conv n%d %d->%d %dx%d k%dx%d s%d p%d%s", o.n, o.c, o.oc, o.h, o.w, o.kh,
                 o.kw, o.sh, o.ph, o.has_bias ? "" : " nobias");
        check_layer(be, ref, o, label);
    }
    rng_state = 12345;
    for (int i = 0; i < 8; i++) {
        int k = rnd_int(1, 5), s = rnd_int(1, 2), p = rnd_int(0, k / 2);
        int h = rnd_int(k, 19), w = rnd_int(k, 19);
        nn_op o = conv_op(rnd_int(1, 4), rnd_int(1, 40), h, w, rnd_int(1, 40), k, k, s, p, rnd_int(0, 1));
        snprintf(label, sizeof label, "conv random n%d %d->%d %dx%d k%d s%d p%d", o.n, o.c, o.oc, o.h, o.w, k, s, p);
        check_layer(be, ref, o, label);
    }
    nn_backend_free(ref);
    nn_backend_free(be);
}

/* ---- conv2d as host Winograd F(4x4,3x3) (be_dnnl/dnnl_wino.c) --------------------------------------------------
 * SD_DNNL_WINO=on runs every 3x3 stride-1 convolution between blocked tensors there, untimed: forward, backward-data
 * (the turned, transposed weights), backward-weights (dw and db accumulate), and the inference call with bias,
 * residual and relu. Against the reference in
 * NCHW: odd channels (padded lanes must stay 0), planes not a multiple of the 4x4 tile, pad 0 and 1, tiny planes. */
static void slab_io(float *buf, float *nchw, int fmt, int n, int c, int cs, size_t hw, int to);
static void env_impl(void *user, const char *key, const char *value) {
    if (strcmp(key, "backend_impl") == 0) snprintf(user, 800, "%s", value);
}

/* gemm: SD_DNNL_GEMM=on instead, the backward passes of small outputs as sgemm over the column matrix (dnnl_conv.c
 * conv_gemm_choose): VGG-16's 2x2 and 4x4, odd channels, stride 2, a 1x1 kernel, no bias. block 0: nhwc (the
 * Winograd takes the shapes whose channels are whole vectors of 8; oneDNN the others). split: SD_DNNL_WINO_SPLIT,
 * "on" (the threads split the output channels wherever they come in vectors of 16), "off" (the tiles), or NULL
 * (by size: the one-tile and the many-channel shapes split). */
static void parity_conv_blocked(int block, int gemm, const char *split) {
    setenv(gemm ? "SD_DNNL_GEMM" : "SD_DNNL_WINO", "on", 1);
    if (split) setenv("SD_DNNL_WINO_SPLIT", split, 1);
    else unsetenv("SD_DNNL_WINO_SPLIT");
    setenv("SD_DNNL_BLOCK", block == 8 ? "8" : block == 0 ? "nhwc" : "16", 1);
    nn_backend *be = open_be("dnnl"), *ref = open_ref();
    const int fmt = block == 8 ? NN_FMT_NCHW8C : block == 0 ? NN_FMT_NHWC : NN_FMT_NCHW16C;
    const nn_op wshapes[] = {
        conv_op(2, 16, 8, 8, 16, 3, 3, 1, 1, 1),
        conv_op(2, 50, 13, 11, 37, 3, 3, 1, 1, 1),   /* odd channels and sizes */
        conv_op(3, 32, 26, 26, 64, 3, 3, 1, 0, 1),   /* mnist_cnn conv2 at batch 3 */
        conv_op(1, 9, 5, 7, 20, 3, 3, 1, 0, 0),      /* no bias, pad 0 */
        conv_op(2, 64, 4, 4, 24, 3, 3, 1, 1, 1),     /* one tile */
        conv_op(1, 8, 2, 3, 8, 3, 3, 1, 1, 1),       /* a plane smaller than the tile */
        conv_op(2, 80, 6, 5, 130, 3, 3, 1, 1, 1),    /* channel blocks of a split, the last one 2 channels */
    };
    const nn_op gshapes[] = {
        conv_op(3, 32, 2, 2, 24, 3, 3, 1, 1, 1),     /* VGG-16's last block on CIFAR */
        conv_op(2, 20, 4, 4, 13, 3, 3, 1, 1, 1),     /* 4x4, odd output channels */
        conv_op(2, 9, 7, 6, 12, 3, 3, 2, 1, 0),      /* stride 2, odd input channels, no bias */
        conv_op(2, 24, 3, 3, 8, 1, 1, 1, 0, 1),      /* 1x1 */
    };
    const nn_op *shapes = gemm ? gshapes : wshapes;
    const char *tag = gemm ? "sgemm" : "winograd";
    const size_t nshapes = gemm ? sizeof gshapes / sizeof gshapes[0] : sizeof wshapes / sizeof wshapes[0];
    for (size_t i = 0; i < nshapes; i++) {
        nn_op op = shapes[i];
        const size_t nx = (size_t)op.n * op.c * op.h * op.w, ny = (size_t)op.n * op.oc * op.oh * op.ow;
        const size_t nw = (size_t)op.oc * op.c * op.kh * op.kw, nb = (size_t)op.oc;
        float *x = rnd_buf(nx, 1.0f), *w = rnd_buf(nw, 0.5f), *b = op.has_bias ? rnd_buf(nb, 0.5f) : NULL;
        float *dy = rnd_buf(ny, 1.0f), *res = rnd_buf(ny, 1.0f), *zw = rnd_buf(nw, 1.0f), *zb = rnd_buf(nb, 1.0f);
        layer_out r = run_layer(ref, op, x, w, b, dy, zw, zb);   /* r.dx_skip_dw: dw after one backward (+=) */
        nn_op bo = op;
        bo.fmt_in = bo.fmt_out = fmt;
        const size_t bx = nn_fmt_elems(fmt, op.n, op.c, op.h, op.w), by = nn_fmt_elems(fmt, op.n, op.oc, op.oh, op.ow);
        float *hx = calloc(bx, 4), *hdy = calloc(by, 4), *hres = calloc(by, 4);
        cr_assert(hx && hdy && hres);
        slab_io(hx, x, fmt, op.n, op.c, op.c, (size_t)op.h * op.w, 1);
        slab_io(hdy, dy, fmt, op.n, op.oc, op.oc, (size_t)op.oh * op.ow, 1);
        slab_io(hres, res, fmt, op.n, op.oc, op.oc, (size_t)op.oh * op.ow, 1);
        prepare(be, &bo);
        void *dX = dev(be, hx, bx * 4), *dW = dev(be, w, nw * 4), *dB = b ? dev(be, b, nb * 4) : NULL;
        void *dY = dev(be, NULL, by * 4), *dDY = dev(be, hdy, by * 4), *dDX = dev(be, NULL, bx * 4);
        void *dDW = dev(be, zw, nw * 4), *dDB = dev(be, zb, nb * 4), *dR = dev(be, hres, by * 4);
        void *dYi = dev(be, NULL, by * 4);
        OK(be->ops->conv2d_forward(be, &bo, dY, dX, dW, dB), be);
        OK(be->ops->conv2d_backward(be, &bo, dDX, dDW, dDB, dDY, dX, dW), be);
        const nn_conv_fuse f = {.res = dR, .res_fmt = fmt, .y_fmt = fmt, .x_fmt = fmt, .relu = 1};
        OK(be->ops->conv2d_infer(be, &bo, &f, dYi, dX, dW, dB), be);
        float *gy = host(be, dY, by), *gdx = host(be, dDX, bx), *gyi = host(be, dYi, by), *gdw = host(be, dDW, nw);
        float *gdb = host(be, dDB, nb), *db1 = malloc(nb * 4);
        cr_assert(db1);
        for (size_t k = 0; k < nb; k++) db1[k] = zb[k] + (r.db[k] - zb[k]) / 2;   /* r.db: two backwards */
        float *y = malloc(ny * 4), *dx = malloc(nx * 4), *yi = malloc(ny * 4), *want = malloc(ny * 4);
        cr_assert(y && dx && yi && want);
        slab_io(gy, y, fmt, op.n, op.oc, op.oc, (size_t)op.oh * op.ow, 0);
        slab_io(gdx, dx, fmt, op.n, op.c, op.c, (size_t)op.h * op.w, 0);
        slab_io(gyi, yi, fmt, op.n, op.oc, op.oc, (size_t)op.oh * op.ow, 0);
        for (size_t k = 0; k < ny; k++) want[k] = r.y[k] + res[k] > 0 ? r.y[k] + res[k] : 0.0f;
        char what[128];
        const char *out[5] = {"y", "dx", "relu(y+res)", "dw (+=)", "db (+=)"};
        const float *got[5] = {y, dx, yi, gdw, gdb}, *wants[5] = {r.y, r.dx, want, r.dx_skip_dw, db1};
        const size_t len[5] = {ny, nx, ny, nw, nb};
        for (int v = 0; v < 5; v++) {
            snprintf(what, sizeof what, "%s %s n%d %d->%d %dx%d p%d %s", tag, nn_fmt_name(fmt), op.n, op.c, op.oc, op.h,
                     op.w, op.ph, out[v]);
            EXPECT_CLOSE(be, what, got[v], wants[v], len[v]);
        }
        /* the padded channels of the last block stay exactly 0 */
        const int cpad = block ? (op.oc + block - 1) / block * block : op.oc;
        int dirty = 0;
        for (int n = 0; n < op.n; n++)
            for (int ch = op.oc; ch < cpad; ch++)
                for (size_t q = 0; q < (size_t)op.oh * op.ow; q++) {
                    const size_t at = nn_fmt_at(fmt, (size_t)op.oc, (size_t)op.oh * op.ow, (size_t)n, (size_t)ch, q);
                    dirty |= gy[at] != 0.0f || gyi[at] != 0.0f;
                }
        cr_expect(!dirty, "%s %s %d->%d: a padded output channel is not 0", tag, nn_fmt_name(fmt), op.c, op.oc);
        release(be, &bo);
        nn_dev_free(be, dX, bx * 4); nn_dev_free(be, dW, nw * 4); if (dB) nn_dev_free(be, dB, nb * 4);
        nn_dev_free(be, dY, by * 4); nn_dev_free(be, dDY, by * 4); nn_dev_free(be, dDX, bx * 4);
        nn_dev_free(be, dDW, nw * 4); nn_dev_free(be, dDB, nb * 4); nn_dev_free(be, dR, by * 4);
        nn_dev_free(be, dYi, by * 4);
        free(gdw); free(gdb); free(db1);
        free(gy); free(gdx); free(gyi); free(y); free(dx); free(yi); free(want);
        free(hx); free(hdy); free(hres); free(x); free(w); free(b); free(dy); free(res); free(zw); free(zb);
        free_out(&r);
    }
    char impl[800] = "";
    be->ops->env(be, env_impl, impl);
    if (gemm)
        cr_expect(strstr(impl, "conv fwd sgemm") && strstr(impl, "bwd-data sgemm") && strstr(impl, "bwd-weights sgemm"),
                  "the sgemm backward did not run: backend_impl \"%s\"", impl);
    else
        cr_expect(strstr(impl, "conv fwd host winograd") && strstr(impl, "bwd-data host winograd") &&
                  strstr(impl, "bwd-weights host winograd") &&
                  strstr(impl, "conv infer host winograd"), "the host Winograd did not run: backend_impl \"%s\"", impl);
    if (!gemm && split && !strcmp(split, "on"))
        cr_expect(strstr(impl, "conv fwd host winograd split") && strstr(impl, "bwd-data host winograd split") &&
                  strstr(impl, "bwd-weights host winograd split") && strstr(impl, "conv infer host winograd split"),
                  "the split schedule did not run: backend_impl \"%s\"", impl);
    if (!gemm && split && !strcmp(split, "off"))
        cr_expect(!strstr(impl, "split"), "the split schedule ran: backend_impl \"%s\"", impl);
    if (!gemm && !split && block == 16) {   /* by size: the 8x8 planes run the tiles, the one-tile shape splits */
        int items = 0;
        for (const char *at = strstr(impl, "conv fwd host winograd"); at; at = strstr(at + 1, "conv fwd host winograd"))
            items++;
        cr_expect(items == 2 && strstr(impl, "conv fwd host winograd split"),
                  "not both schedules by size: backend_impl \"%s\"", impl);
    }
    unsetenv("SD_DNNL_WINO_SPLIT");
    nn_backend_free(ref);
    nn_backend_free(be);
}

static void parity_dense(const char *name) {
    nn_backend *be = open_be(name), *ref = open_ref();
    const int shapes[][4] = {/* n, c, oc, bias */
        {128, 784, 512, 1}, {128, 512, 10, 1}, {64, 6400, 512, 1}, {1, 1, 1, 1}, {1, 17, 3, 0},
        {3, 33, 65, 1}, {7, 100, 1, 0}};
    char label[96];
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        nn_op o = {.kind = NN_OP_DENSE, .n = shapes[i][0], .c = shapes[i][1], .h = 1, .w = 1, .oc = shapes[i][2],
                   .oh = 1, .ow = 1, .has_bias = shapes[i][3]};
        snprintf(label, sizeof label, "dense n%d %d->%d%s", o.n, o.c, o.oc, o.has_bias ? "" : " nobias");
        check_layer(be, ref, o, label);
    }
    rng_state = 777;
    for (int i = 0; i < 6; i++) {
        nn_op o = {.kind = NN_OP_DENSE, .n = rnd_int(1, 70), .c = rnd_int(1, 300), .h = 1, .w = 1,
                   .oc = rnd_int(1, 130), .oh = 1, .ow = 1, .has_bias = rnd_int(0, 1)};
        snprintf(label, sizeof label, "dense random n%d %d->%d", o.n, o.c, o.oc);
        check_layer(be, ref, o, label);
    }
    nn_backend_free(ref);
    nn_backend_free(be);
}

/* ---- maxpool ------------------------------------------------------------------------------------------ */
static void run_pool(nn_backend *be, nn_op op, const float *x, const float *dy, float **y, float **dx) {
    size_t nx = nn_fmt_elems(op.fmt_in, op.n, op.c, op.h, op.w), ny = nn_fmt_elems(op.fmt_out, op.n, op.oc, op.oh, op.ow);
    prepare(be, &op);
    size_t wsz = wsize(be, &op);
    float *garbage = rnd_buf(nx, 1e3f);
    void *dX = dev(be, x, nx * 4), *dY = dev(be, NULL, ny * 4), *dDY = dev(be, dy, ny * 4);
    void *dDX = dev(be, garbage, nx * 4), *ws = dev(be, NULL, wsz);
    void *dYi = dev(be, garbage, ny * 4);
    OK(be->ops->maxpool_forward(be, &op, dYi, NULL, dX), be);   /* inference: no workspace */
    OK(be->ops->maxpool_forward(be, &op, dY, ws, dX), be);
    OK(be->ops->maxpool_backward(be, &op, dDX, dDY, dX, dY, ws), be);
    *y = host(be, dY, ny);
    *dx = host(be, dDX, nx);
    float *yi = host(be, dYi, ny);
    cr_expect(memcmp(yi, *y, ny * 4) == 0, "%s: maxpool n%d c%d %dx%d: the inference forward (no workspace) differs "
              "from the training forward", be->name, op.n, op.c, op.h, op.w);
    free(yi);
    nn_dev_free(be, dYi, ny * 4);
    nn_dev_free(be, dX, nx * 4); nn_dev_free(be, dY, ny * 4); nn_dev_free(be, dDY, ny * 4); nn_dev_free(be, dDX, nx * 4);
    nn_dev_free(be, ws, wsz);
    free(garbage);
    release(be, &op);
}

static void parity_maxpool(const char *name) {
    nn_backend *be = open_be(name), *ref = open_ref();
    const int shapes[][7] = {/* n, c, h, w, k, s, p */
        {2, 50, 32, 32, 2, 2, 0}, {3, 64, 24, 24, 2, 2, 0}, {1, 3, 7, 9, 2, 2, 0}, {2, 17, 15, 13, 3, 2, 1},
        {1, 5, 8, 8, 3, 1, 1}, {2, 19, 11, 11, 3, 3, 0}};
    char label[96];
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const int *s = shapes[i];
        nn_op o = {.kind = NN_OP_MAXPOOL, .n = s[0], .c = s[1], .h = s[2], .w = s[3], .oc = s[1], .kh = s[4],
                   .kw = s[4], .sh = s[5], .sw = s[5], .ph = s[6], .pw = s[6]};
        o.oh = (o.h + 2 * o.ph - o.kh) / o.sh + 1;
        o.ow = (o.w + 2 * o.pw - o.kw) / o.sw + 1;
        size_t nx = (size_t)o.n * o.c * o.h * o.w, ny = (size_t)o.n * o.c * o.oh * o.ow;
        float *x = rnd_buf(nx, 1.0f), *dy = rnd_buf(ny, 1.0f), *ry, *rdx, *gy, *gdx;
        run_pool(ref, o, x, dy, &ry, &rdx);
        run_pool(be, o, x, dy, &gy, &gdx);
        snprintf(label, sizeof label, "maxpool n%d c%d %dx%d k%d s%d p%d y", o.n, o.c, o.h, o.w, o.kh, o.sh, o.ph);
        EXPECT_CLOSE(be, label, gy, ry, ny);
        snprintf(label, sizeof label, "maxpool n%d c%d %dx%d k%d s%d p%d dx", o.n, o.c, o.h, o.w, o.kh, o.sh, o.ph);
        EXPECT_CLOSE(be, label, gdx, rdx, nx);
        /* dnnl: also over nChw8c, nChw16c and nhwc tensors (the graph hands blocked ones over), on x with ties (steps
         * of 0.5, so the first maximum of a window must win, as in the reference), padded channels 0 in and out */
        for (int bo = 0; bo < 6 && strcmp(name, "dnnl") == 0; bo++) {   /* 8c, 16c, nhwc; y so, then NCHW */
            const int lay[3] = {NN_FMT_NCHW8C, NN_FMT_NCHW16C, NN_FMT_NHWC};
            nn_op ob = o;
            ob.fmt_in = ob.fmt_out = lay[bo % 3];
            const int b = (int)nn_fmt_block(ob.fmt_in, (size_t)o.c);
            if (bo >= 3) ob.fmt_out = NN_FMT_NCHW;   /* the pooling before a dense layer */
            for (size_t k = 0; k < nx; k++) x[k] = floorf(x[k] * 2.0f) * 0.5f;
            free(ry); free(rdx);
            run_pool(ref, o, x, dy, &ry, &rdx);
            const size_t hw = (size_t)o.h * o.w, ohw = (size_t)o.oh * o.ow;
            const size_t bx = nn_fmt_elems(ob.fmt_in, o.n, o.c, o.h, o.w), by = nn_fmt_elems(ob.fmt_out, o.n, o.c, o.oh, o.ow);
            float *xb = calloc(bx, 4), *dyb = calloc(by, 4), *yb, *dxb, *y2 = malloc(ny * 4), *dx2 = malloc(nx * 4);
            cr_assert(xb && dyb && y2 && dx2);
            slab_io(xb, x, ob.fmt_in, o.n, o.c, o.c, hw, 1);
            slab_io(dyb, dy, ob.fmt_out, o.n, o.c, o.c, ohw, 1);
            nn_backend *pb = open_be(name);   /* its own, so that its backend_impl names this pooling's kernel */
            run_pool(pb, ob, xb, dyb, &yb, &dxb);
            slab_io(yb, y2, ob.fmt_out, o.n, o.c, o.c, ohw, 0);
            slab_io(dxb, dx2, ob.fmt_in, o.n, o.c, o.c, hw, 0);
            const char *to = bo >= 3 ? "->nchw" : "", *fn = nn_fmt_name(ob.fmt_in);
            snprintf(label, sizeof label, "maxpool %s%s n%d c%d %dx%d k%d s%d p%d y", fn, to, o.n, o.c, o.h, o.w, o.kh,
                     o.sh, o.ph);
            EXPECT_CLOSE(be, label, y2, ry, ny);
            snprintf(label, sizeof label, "maxpool %s%s n%d c%d %dx%d k%d s%d p%d dx", fn, to, o.n, o.c, o.h, o.w, o.kh,
                     o.sh, o.ph);
            EXPECT_CLOSE(be, label, dx2, rdx, nx);
            size_t pad = 0;   /* the padded channels' lanes of y and dx */
            for (int i = 0; i < o.n; i++)
                for (int ch = o.c; ch < (o.c + b - 1) / b * b; ch++) {
                    for (size_t q = 0; q < ohw && bo < 3; q++) pad += yb[nn_fmt_at(ob.fmt_out, (size_t)o.c, ohw, i, ch, q)] != 0.0f;
                    for (size_t q = 0; q < hw; q++) pad += dxb[nn_fmt_at(ob.fmt_in, (size_t)o.c, hw, i, ch, q)] != 0.0f;
                }
            cr_expect_eq(pad, 0, "maxpool %s c%d: %zu nonzero padded lanes", fn, o.c, pad);
#ifdef __AVX2__
            if (ob.fmt_in != NN_FMT_NHWC || o.c % 8 == 0) {   /* the host kernel's layouts (dnnl_pool.c) */
                char impl[800] = "";
                pb->ops->env(pb, env_impl, impl);
                cr_expect(strstr(impl, "maxpool host") != NULL, "maxpool %s c%d: not the host kernel: %s", fn, o.c,
                          impl);
            }
#endif
            nn_backend_free(pb);
            free(xb); free(dyb); free(yb); free(dxb); free(y2); free(dx2);
        }
        free(x); free(dy); free(ry); free(rdx); free(gy); free(gdx);
    }
    nn_backend_free(ref);
    nn_backend_free(be);
}

/* ---- relu and dropout: elementwise, must be exact ---------------------------------------------------- */

static void run_elt(nn_backend *be, nn_op op, const float *x, const float *dy, uint64_t seed, float **y,
                    float **dx) {
    size_t n = (size_t)op.n * op.oc * op.oh * op.ow;
    prepare(be, &op);
    size_t wsz = wsize(be, &op);
    float *garbage = rnd_buf(n, 1e3f);
    void *dX = dev(be, x, n * 4), *dY = dev(be, garbage, n * 4), *dDY = dev(be, dy, n * 4);
    void *dDX = dev(be, garbage, n * 4), *ws = dev(be, NULL, wsz);
    if (op.kind == NN_OP_RELU) {
        OK(be->ops->relu_forward(be, &op, dY, dX), be);
        OK(be->ops->relu_backward(be, &op, dDX, dDY, dY), be);
    } else {
        OK(be->ops->dropout_forward(be, &op, dY, ws, dX, seed), be);
        OK(be->ops->dropout_backward(be, &op, dDX, dDY, ws), be);
    }
    *y = host(be, dY, n);
    *dx = host(be, dDX, n);
    nn_dev_free(be, dX, n * 4); nn_dev_free(be, dY, n * 4); nn_dev_free(be, dDY, n * 4); nn_dev_free(be, dDX, n * 4);
    nn_dev_free(be, ws, wsz);
    free(garbage);
    release(be, &op);
}

static void parity_elementwise(const char *name, nn_op_kind kind) {
    nn_backend *be = open_be(name), *ref = open_ref();
    const int shapes[][4] = {{2, 50, 32, 32}, {1, 1, 1, 1}, {3, 17, 5, 7}, {128, 512, 1, 1}, {1, 3, 9, 11}};
    const float rates[] = {0.25f, 0.5f, 0.2f, 0.5f, 0.9f};
    char label[96];
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const int *s = shapes[i];
        nn_op o = {.kind = kind, .n = s[0], .c = s[1], .h = s[2], .w = s[3], .oc = s[1], .oh = s[2], .ow = s[3],
                   .rate = rates[i]};
        size_t n = (size_t)o.n * o.c * o.h * o.w;
        float *x = rnd_buf(n, 1.0f), *dy = rnd_buf(n, 1.0f), *ry, *rdx, *gy, *gdx;
        run_elt(ref, o, x, dy, 1000 + i, &ry, &rdx);
        run_elt(be, o, x, dy, 1000 + i, &gy, &gdx);
        const char *k = kind == NN_OP_RELU ? "relu" : "dropout";
        snprintf(label, sizeof label, "%s n%d c%d %dx%d y", k, o.n, o.c, o.h, o.w);
        EXPECT_CLOSE(be, label, gy, ry, n);
        cr_expect(tu_rel_err(gy, ry, n) == 0.0, "%s: %s: not bit-identical", be->name, label);
        snprintf(label, sizeof label, "%s n%d c%d %dx%d dx", k, o.n, o.c, o.h, o.w);
        EXPECT_CLOSE(be, label, gdx, rdx, n);
        cr_expect(tu_rel_err(gdx, rdx, n) == 0.0, "%s: %s: not bit-identical", be->name, label);
        free(x); free(dy); free(ry); free(rdx); free(gy); free(gdx);
    }
    nn_backend_free(ref);
    nn_backend_free(be);
}

/* ---- softmax cross-entropy ----------------------------------------------------------------------------- */

static void run_xent(nn_backend *be, nn_op op, const float *z, const int32_t *lab, float **prob, float **loss,
                     float **dz) {
    size_t n = (size_t)op.n * op.c;
    prepare(be, &op);
    void *dZ = dev(be, z, n * 4), *dP = dev(be, NULL, n * 4), *dL = dev(be, NULL, op.n * 4);
    void *dLab = dev(be, lab, op.n * 4), *dDZ = dev(be, NULL, n * 4);
    OK(be->ops->softmax_xent_forward(be, &op, dP, dL, dZ, dLab), be);
    OK(be->ops->softmax_xent_backward(be, &op, dDZ, dP, dLab), be);
    *prob = host(be, dP, n);
    *loss = host(be, dL, op.n);
    *dz = host(be, dDZ, n);
    nn_dev_free(be, dZ, n * 4); nn_dev_free(be, dP, n * 4); nn_dev_free(be, dL, op.n * 4); nn_dev_free(be, dLab, op.n * 4);
    nn_dev_free(be, dDZ, n * 4);
    release(be, &op);
}

static void parity_xent(const char *name) {
    nn_backend *be = open_be(name), *ref = open_ref();
    const int shapes[][2] = {{128, 10}, {1, 10}, {64, 10}, {7, 2}, {3, 1000}};
    char label[96];
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        nn_op o = {.kind = NN_OP_SOFTMAX_XENT, .n = shapes[i][0], .c = shapes[i][1], .h = 1, .w = 1,
                   .oc = shapes[i][1], .oh = 1, .ow = 1};
        size_t n = (size_t)o.n * o.c;
        float *z = rnd_buf(n, 8.0f);
        int32_t *lab = malloc(sizeof(int32_t) * o.n);
        for (int k = 0; k < o.n; k++) lab[k] = rnd_int(0, o.c - 1);
        float *rp, *rl, *rdz, *gp, *gl, *gdz;
        run_xent(ref, o, z, lab, &rp, &rl, &rdz);
        run_xent(be, o, z, lab, &gp, &gl, &gdz);
        snprintf(label, sizeof label, "softmax_xent n%d c%d prob", o.n, o.c); EXPECT_CLOSE(be, label, gp, rp, n);
        snprintf(label, sizeof label, "softmax_xent n%d c%d loss", o.n, o.c); EXPECT_CLOSE(be, label, gl, rl, o.n);
        snprintf(label, sizeof label, "softmax_xent n%d c%d dlogits", o.n, o.c); EXPECT_CLOSE(be, label, gdz, rdz, n);
        free(z); free(lab); free(rp); free(rl); free(rdz); free(gp); free(gl); free(gdz);
    }
    nn_backend_free(ref);
    nn_backend_free(be);
}

/* ---- optimizers: three steps, parameters and state ------------------------------------------------------- */

static void run_optim(nn_backend *be, const nn_optim *opt, const float *p0, const float *g, size_t n, int k,
                      float **p, float **s) {
    void *dP = dev(be, p0, n * 4), *dG = dev(be, g, n * 4), *dS = dev(be, NULL, n * k * 4);
    for (long step = 1; step <= 3; step++) OK(be->ops->optimizer_step(be, opt, dP, dG, dS, n, step), be);
    *p = host(be, dP, n);
    *s = host(be, dS, n * k);
    nn_dev_free(be, dP, n * 4); nn_dev_free(be, dG, n * 4); nn_dev_free(be, dS, n * k * 4);
}

static void parity_optim(const char *name) {
    nn_backend *be = open_be(name), *ref = open_ref();
    const nn_optim opts[] = {
        {.kind = NN_OPTIM_SGD, .lr = 0.01f, .momentum = 0.9f},
        {.kind = NN_OPTIM_SGD, .lr = 0.1f, .momentum = 0.0f},
        {.kind = NN_OPTIM_RMSPROP, .lr = 0.001f, .rho = 0.9f, .eps = 1e-7f},
        {.kind = NN_OPTIM_ADADELTA, .lr = 1.0f, .rho = 0.95f, .eps = 1e-7f},
        {.kind = NN_OPTIM_ADAM, .lr = 0.001f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f},
    };
    const char *names[] = {"sgd momentum", "sgd", "rmsprop", "adadelta", "adam"};
    const size_t n = 100003;
    float *p0 = rnd_buf(n, 1.0f), *g = rnd_buf(n, 1.0f);
    char label[96];
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        int k = nn_optim_state_per_param(opts[i].kind);
        float *rp, *rs, *gp, *gs;
        run_optim(ref, &opts[i], p0, g, n, k, &rp, &rs);
        run_optim(be, &opts[i], p0, g, n, k, &gp, &gs);
        snprintf(label, sizeof label, "optimizer %s params", names[i]); EXPECT_CLOSE(be, label, gp, rp, n);
        snprintf(label, sizeof label, "optimizer %s state", names[i]); EXPECT_CLOSE(be, label, gs, rs, n * k);
        free(rp); free(rs); free(gp); free(gs);
    }
    free(p0); free(g);
    nn_backend_free(ref);
    nn_backend_free(be);
}


/* ---- denormals: the CPU back-ends flush them to zero on every thread (nn/host_ops.h) ---------------------
 * An RMSprop step with gradients of 1e-20: (1 - rho) g^2 = 1e-41 is a denormal, so a flushing back-end keeps
 * the accumulator at exactly 0 on every element (both halves of the parallel loop); one that does not keeps
 * 1e-41. The step itself still moves the parameters (lr g / eps = 1e-16, below p's rounding: p unchanged). */
static void denormals_flushed(const char *name) {
    nn_backend *be = strcmp(name, "ref") == 0 ? open_ref() : open_be(name);
    const size_t n = 100003;
    float *p0 = rnd_buf(n, 1.0f), *g = malloc(sizeof(float) * n);
    cr_assert_not_null(g);
    for (size_t i = 0; i < n; i++) g[i] = 1e-20f;
    const nn_optim opt = {.kind = NN_OPTIM_RMSPROP, .lr = 0.001f, .rho = 0.9f, .eps = 1e-7f};
    float *p, *s;
    run_optim(be, &opt, p0, g, n, 1, &p, &s);
    size_t nonzero = 0;
    for (size_t i = 0; i < n; i++) nonzero += s[i] != 0.0f;
    printf("%-5s denormal RMSprop accumulators left: %zu of %zu\n", be->name, nonzero, n);
    cr_expect_eq(nonzero, 0, "%s: %zu of %zu accumulators hold a denormal (first %g): not flushed to zero",
                 be->name, nonzero, n, (double)s[0]);
    free(p0); free(g); free(p); free(s);
    nn_backend_free(be);
}
/* TF32 emulated on the host: mnist_mlp's first dense layer's dW = dy^T x with both operands rounded to a
 * 10-bit mantissa (round to nearest, as the tensor cores' conversion), against fp32 operands. Its error is
 * far above fp32's 1e-5, so the step test under SD_TEST_PRECISION=tf32 must widen every gradient's
 * tolerance (step_tol), and the widened one must hold it. */
static float tf32_round(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u = (u + 0x1000u) & ~0x1FFFu;
    memcpy(&f, &u, sizeof f);
    return f;
}
Test(cpu, tf32_emulated_step_tolerance) {
    nn_backend *ref = open_ref();
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, "workloads", "mnist_mlp"), 0, "%s", sd_errmsg());
    nn_model *m = NULL;
    OK(nn_model_build(&m, &w, ref, 16, 42), ref);
    const nn_op *op = NULL;
    const char *name = "";
    for (int i = 0; i < m->nlayers && !op; i++)
        if (m->layers[i].op.kind == NN_OP_DENSE) { op = &m->layers[i].op; name = m->layers[i].name; }
    cr_assert_not_null(op);
    const int B = op->n, I = op->c * op->h * op->w, O = op->oc;
    rng_state = 4242;
    float *x = malloc(sizeof(float) * (size_t)B * I), *dy = rnd_buf((size_t)B * O, 1e-2f);
    float *dw32 = malloc(sizeof(float) * (size_t)O * I), *dwtf = malloc(sizeof(float) * (size_t)O * I);
    cr_assert(x && dw32 && dwtf);
    for (size_t k = 0; k < (size_t)B * I; k++) x[k] = (rnd() >> 8) * (1.0f / 16777216.0f);
    for (int o = 0; o < O; o++)
        for (int i = 0; i < I; i++) {
            double a = 0, t = 0;
            for (int b = 0; b < B; b++) {
                a += (double)dy[(size_t)b * O + o] * x[(size_t)b * I + i];
                t += (double)tf32_round(dy[(size_t)b * O + o]) * tf32_round(x[(size_t)b * I + i]);
            }
            dw32[(size_t)o * I + i] = (float)a;
            dwtf[(size_t)o * I + i] = (float)t;
        }
    double e = tu_rel_err(dwtf, dw32, (size_t)O * I);
    const int saved = g_tf32;
    g_tf32 = 0;
    const double t_fp32 = step_tol(ref, m, 0);
    g_tf32 = 1;
    const double t_tf32 = step_tol(ref, m, 0), t_tie = step_tol(ref, m, 1);
    g_tf32 = saved;
    printf("ref   mnist_mlp %s dW, TF32 operands: rel %.2e (fp32 tolerance %.0e, tf32 %.0e)\n", name, e, t_fp32,
           t_tf32);
    cr_expect(e > t_fp32, "emulated TF32 rounding (%.2e) should exceed fp32's tolerance %.0e", e, t_fp32);
    cr_expect(e < t_tf32, "emulated TF32 rounding %.2e >= the tf32 step tolerance %.0e", e, t_tf32);
    cr_expect(t_tie >= t_tf32);
    free(x); free(dy); free(dw32); free(dwtf);
    nn_model_free(m);
    sd_workload_free(&w);
    nn_backend_free(ref);
}

/* fp16 and bf16 emulated on the host, as the GPU computes them: mnist_mlp's first dense layer's dW = dy^T x with
 * both operands rounded to the 16-bit type (what cublasGemmEx reads), accumulated exactly, and once more with the
 * result rounded to 16 bits too (a cuDNN convolution's output under PSEUDO_HALF_CONFIG), against fp32 operands:
 * the error must exceed fp32's tolerance (so the widening is needed) and stay within the 16-bit one. */
static float round16(float f, int bf16) {
    return bf16 ? nn_bf16_to_f32(nn_f32_to_bf16(f)) : nn_f16_to_f32(nn_f32_to_f16(f));
}
Test(cpu, half_emulated_tolerance) {
    const int B = 16, I = 784, O = 64;   /* a slice of mnist_mlp's 784 -> 512 at batch 16 */
    rng_state = 4343;
    float *x = malloc(sizeof(float) * (size_t)B * I), *dy = rnd_buf((size_t)B * O, 1e-2f);
    float *dw = malloc(sizeof(float) * (size_t)O * I), *dwh = malloc(sizeof(float) * (size_t)O * I);
    float *dwo = malloc(sizeof(float) * (size_t)O * I);
    cr_assert(x && dw && dwh && dwo);
    for (size_t k = 0; k < (size_t)B * I; k++) x[k] = (rnd() >> 8) * (1.0f / 16777216.0f);
    for (int bf16 = 0; bf16 < 2; bf16++) {
        for (int o = 0; o < O; o++)
            for (int i = 0; i < I; i++) {
                double a = 0, h = 0;
                for (int b = 0; b < B; b++) {
                    a += (double)dy[(size_t)b * O + o] * x[(size_t)b * I + i];
                    h += (double)round16(dy[(size_t)b * O + o], bf16) * round16(x[(size_t)b * I + i], bf16);
                }
                dw[(size_t)o * I + i] = (float)a;
                dwh[(size_t)o * I + i] = (float)h;
                dwo[(size_t)o * I + i] = round16((float)h, bf16);
            }
        g_prec = bf16 ? P_BF16 : P_FP16;
        const double e = tu_rel_err(dwh, dw, (size_t)O * I), eo = tu_rel_err(dwo, dw, (size_t)O * I);
        const double t = dense_tol((char[32]){0}, 32);
        printf("ref   dW with %s operands: rel %.2e, with a %s output too: %.2e (tolerance %.1e)\n", bf16 ? "bf16" : "fp16",
               e, bf16 ? "bf16" : "fp16", eo, t);
        cr_expect(e > TOL, "%s rounding (%.2e) should exceed fp32's tolerance", bf16 ? "bf16" : "fp16", e);
        cr_expect(e < t && eo < t, "%s: emulated error %.2e / %.2e >= the tolerance %.1e", bf16 ? "bf16" : "fp16", e,
                  eo, t);
    }
    g_prec = P_FP32;
    free(x); free(dy); free(dw); free(dwh); free(dwo);
}

Test(cpu, denormals_flushed_ref) { denormals_flushed("ref"); }
Test(cpu, denormals_flushed_dnnl) { denormals_flushed("dnnl"); }

/* ---- one full training step of each workload (same seed, same batch): loss, every layer's gradients,
 * the parameters after the optimizer step.
 * A ReLU input within fp32 rounding of 0 (or a max-pool near-tie) can fall on different sides in two correct
 * back-ends; that one decision legitimately moves the gradients below it by ~1e-4. The test therefore
 * detects differing decisions: it tries up to 4 data seeds and holds the first batch with none to the full
 * 1e-5 on everything. If every seed has one, each differing ReLU decision must be a genuine tie
 * (|pre-activation| <= 1e-5 max), layers above the lowest such decision must meet 1e-5, those below 1e-3. */

typedef struct step_out {
    nn_model *m;
    float *loss, *grads, *params;
    float **y, **dy;          /* per layer: host copies of outputs (relu) and input gradients (maxpool) */
} step_out;

/* scaled: the backward loss-scaled by 65536 (fp16 under test, as training runs it). */
static step_out run_step(nn_backend *be, const sd_workload *w, const float *x, const int32_t *lab, int scaled) {
    step_out o = {0};
    setenv("SD_NO_BUFFER_REUSE", "1", 1);   /* the max poolings' input gradients are read after the pass */
    OK(nn_model_build(&o.m, w, be, w->batch, 42), be);
    unsetenv("SD_NO_BUFFER_REUSE");
    nn_model *m = o.m;
    size_t nx = (size_t)w->batch * w->in_c * w->in_h * w->in_w;
    OK(be->ops->upload(be, m->x, x, nx * sizeof(float)), be);
    OK(be->ops->upload(be, m->labels, lab, (size_t)w->batch * sizeof(int32_t)), be);
    OK(nn_model_forward(m, 1, 7), be);
    if (scaled) {
        int nonfinite = -1;
        OK(nn_train_backward_scaled(m, 65536.0f, &nonfinite), be);
        cr_expect_eq(nonfinite, 0, "%s: %s: an inf or NaN gradient at loss scale 65536", be->name, w->name);
    } else {
        OK(nn_model_backward(m), be);
    }
    o.loss = host(be, m->loss, (size_t)w->batch);
    o.grads = host(be, m->grads, m->nparams);
    o.y = calloc((size_t)m->nlayers, sizeof(float *));
    o.dy = calloc((size_t)m->nlayers, sizeof(float *));
    for (int i = 0; i < m->nlayers; i++) {
        const nn_layer *l = &m->layers[i];
        size_t ny = (size_t)l->op.n * l->op.oc * l->op.oh * l->op.ow;
        size_t nxi = (size_t)l->op.n * l->op.c * l->op.h * l->op.w;
        if (l->op.kind == NN_OP_RELU) {   /* in NCHW whatever layout the graph keeps it in */
            o.y[i] = malloc(sizeof(float) * ny);
            cr_assert_not_null(o.y[i]);
            OK(be->ops->sync(be), be);
            OK(nn_model_download_y(m, i, 0, o.y[i]), be);
        }
        if (l->op.kind == NN_OP_MAXPOOL && l->input >= 0) {
            /* a relu under the pooling had its backward done by it: the gradient lands at the relu's input */
            const int at = m->relu_folded && m->relu_folded[l->input] ? m->layers[l->input].input : l->input;
            if (at < 0) continue;
            o.dy[i] = malloc(sizeof(float) * nxi);
            cr_assert_not_null(o.dy[i]);
            OK(be->ops->sync(be), be);
            OK(nn_model_download_y(m, at, 1, o.dy[i]), be);
        }
    }
    OK(nn_model_step(m), be);
    o.params = host(be, m->params, m->nparams);
    return o;
}

static void free_step(step_out *o) {
    for (int i = 0; i < o->m->nlayers; i++) { free(o->y[i]); free(o->dy[i]); }
    free(o->y); free(o->dy); free(o->loss); free(o->grads); free(o->params);
    nn_backend *be = o->m->be;
    nn_model_free(o->m);
    (void)be;
}

/* Layer index of the lowest differing ReLU/max-pool decision, or -1; counts them into *count. */
static int differing_decisions(const step_out *r, const step_out *g, int *count, double *worst_tie) {
    int lowest = -1;
    *count = 0;
    *worst_tie = 0;
    for (int i = r->m->nlayers - 1; i >= 0; i--) {
        const nn_layer *l = &r->m->layers[i];
        size_t ny = (size_t)l->op.n * l->op.oc * l->op.oh * l->op.ow;
        size_t nxi = (size_t)l->op.n * l->op.c * l->op.h * l->op.w;
        int here = 0;
        if (r->y[i]) {
            double maxv = 0;
            for (size_t k = 0; k < ny; k++) maxv = fmax(maxv, fabs(r->y[i][k]));
            for (size_t k = 0; k < ny; k++)
                if ((r->y[i][k] > 0) != (g->y[i][k] > 0)) {
                    here++;
                    double t = fmax(r->y[i][k], g->y[i][k]) / (maxv > 0 ? maxv : 1);
                    if (t > *worst_tie) *worst_tie = t;
                }
        }
        if (r->dy[i])
            for (size_t k = 0; k < nxi; k++) here += (r->dy[i][k] != 0) != (g->dy[i][k] != 0);
        if (here) { *count += here; lowest = i; }
    }
    return lowest;
}

/* A training step under fp16/bf16 against the fp32 reference, by NMSE: the loss and the last layer's dW (above
 * every ReLU decision: 16-bit rounding only) within the square of the 16-bit tolerance, (4 u)^2 (dnnl's bf16 here:
 * 1e-7 to 4e-5 and 2e-5), all gradients and the updated parameters within test_bf16.c's 2e-2; and the gradients
 * must differ from the reference's by more than fp32 rounding (the 16-bit products really ran). */
#define HALF_STEP_NMSE 2e-2
static double nmse(const float *got, const float *ref, size_t n);
static void step_half(nn_backend *be, const char *workload, const sd_workload *w, const step_out *r, const step_out *g) {
    const nn_model *m = r->m;
    const double el = nmse(g->loss, r->loss, (size_t)w->batch), eg = nmse(g->grads, r->grads, m->nparams);
    const double ep = nmse(g->params, r->params, m->nparams);
    const nn_layer *top = NULL;
    for (int i = 0; i < m->nlayers; i++) if (m->layers[i].w_len) top = &m->layers[i];
    cr_assert_not_null(top);
    const double et = nmse(g->grads + top->w_off, r->grads + top->w_off, top->w_len);
    const char *pn = g_prec == P_FP16 ? "fp16" : "bf16";
    printf("%-5s %s %s step: loss NMSE %.2e, %s dW NMSE %.2e, gradients NMSE %.2e, parameters NMSE %.2e\n", be->name,
           pn, workload, el, top->name, et, eg, ep);
    const double lim = half_tol() * half_tol();
    cr_expect(el < lim, "%s %s: %s step: loss NMSE %.2e >= %.1e", be->name, pn, workload, el, lim);
    cr_expect(et < lim, "%s %s: %s step: %s dW NMSE %.2e >= %.1e", be->name, pn, workload, top->name, et, lim);
    cr_expect(eg < HALF_STEP_NMSE && ep < HALF_STEP_NMSE, "%s %s: %s step: gradients NMSE %.2e or parameters NMSE "
              "%.2e >= %.0e", be->name, pn, workload, eg, ep, HALF_STEP_NMSE);
    cr_expect(eg > 1e-10, "%s %s: %s step: gradients NMSE %.2e: at fp32's level, nothing ran in 16 bits", be->name, pn,
              workload, eg);
}

static void parity_train_step_in(const char *name, const char *dir, const char *workload, int batch) {
    nn_backend *be = open_be(name), *ref = open_ref();
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, dir, workload), 0, "%s", sd_errmsg());
    /* Every layer of the workload at a batch of 16 (not the published 64/128): the same code paths,
     * a quarter of the reference's time, so the suite stays within its timeout under ASan on 2 cores. */
    if (w.batch > 16) w.batch = 16;
    if (batch > 0) w.batch = batch;
    size_t nx = (size_t)w.batch * w.in_c * w.in_h * w.in_w;
    float *x = malloc(sizeof(float) * nx);
    int32_t *lab = malloc(sizeof(int32_t) * (size_t)w.batch);
    cr_assert(x && lab);
    step_out r, g;
    int lowest = -1, count = 0;
    double worst_tie = 0;
    for (int attempt = 0; attempt < 4; attempt++) {
        rng_state = 0x9e3779b97f4a7c15ULL + (uint64_t)attempt * 1000003;
        for (size_t i = 0; i < nx; i++) x[i] = (rnd() >> 8) * (1.0f / 16777216.0f);   /* pixels in [0,1) */
        for (int i = 0; i < w.batch; i++) lab[i] = rnd_int(0, w.classes - 1);
        r = run_step(ref, &w, x, lab, 0);
        g = run_step(be, &w, x, lab, g_prec == P_FP16);
        if (half_prec()) break;   /* held by NMSE below: decisions within 16-bit rounding differ by design */
        lowest = differing_decisions(&r, &g, &count, &worst_tie);
        printf("%-5s %s step, data seed %d: %d ReLU/max-pool decisions differ%s\n", be->name, workload, attempt,
               count, count ? " (ties within rounding)" : "");
        if (lowest < 0 || attempt == 3) break;
        free_step(&r);
        free_step(&g);
    }
    if (half_prec()) {
        step_half(be, workload, &w, &r, &g);
        goto done;
    }
    const double tol_step = step_tol(be, g.m, 0), tol_tie = step_tol(be, g.m, 1);
    if (lowest >= 0)
        cr_expect(worst_tie <= tol_step, "%s: %s: a ReLU decision differs on an input of %.2e of the max: not a tie "
                  "(within %.0e)", be->name, workload, worst_tie, tol_step);
    char label[128];
    snprintf(label, sizeof label, "%s step: loss", workload);
    EXPECT_CLOSE_TOL(be, label, g.loss, r.loss, (size_t)w.batch, tol_step, "");
    for (int i = 0; i < r.m->nlayers; i++) {
        const nn_layer *l = &r.m->layers[i];
        const size_t off[2] = {l->w_off, l->b_off}, len[2] = {l->w_len, l->b_len};
        for (int k = 0; k < 2; k++) {
            if (!len[k]) continue;
            snprintf(label, sizeof label, "%s step: %s %s%s", workload, l->name, k ? "db" : "dW",
                     lowest >= 0 && i < lowest ? " (below a tie)" : "");
            double e = tu_rel_err(g.grads + off[k], r.grads + off[k], len[k]);
            double tol = lowest >= 0 && i < lowest ? tol_tie : tol_step;
            printf("%-5s %-44s rel %.2e (tolerance %.0e)\n", be->name, label, e, tol);
            cr_expect(e < tol, "%s: %s: relative error %.3e >= %.0e%s", be->name, label, e, tol,
                      g_tf32 ? " (tf32)" : "");
        }
    }
    /* Parameters after the update: SGD is linear in the gradient, so 1e-5 carries over. RMSprop and
     * Adadelta at step 1 move each weight by ~lr*sign(g) whatever |g|, so a gradient that is ~0 in both
     * back-ends (within rounding) can move either way: printed, checked by the optimizer test instead. */
    snprintf(label, sizeof label, "%s step: parameters after the update", workload);
    double e = tu_rel_err(g.params, r.params, r.m->nparams);
    printf("%-5s %-44s rel %.2e%s\n", be->name, label, e, w.optim.kind == NN_OPTIM_SGD ? "" : " (not checked)");
    if (w.optim.kind == NN_OPTIM_SGD && lowest < 0)
        cr_expect(e < tol_step, "%s: %s: relative error %.3e >= %.0e", be->name, label, e, tol_step);
done:
    free_step(&r);
    free_step(&g);
    free(x); free(lab);
    sd_workload_free(&w);
    nn_backend_free(ref);
    nn_backend_free(be);
}

static void layouts_in(const char *be_name, const char *dir, const char *workload, char *out, size_t len);

static void parity_train_step(const char *name, const char *workload) {
    parity_train_step_in(name, "workloads", workload, 0);
}

/* A relu whose backward its reader does (nn/fuse.c): under max pooling, on the pooling's output gradient; under a
 * convolution (dnnl), on the gradient its backward-data writes. Either gives the unfused backward's gradients, bit
 * for bit on ref (a selection either way); dnnl also runs the convolution and its relu as one call in training (one
 * oneDNN primitive with a post-op: identical here, held to NMSE 1e-10 as another kernel may round differently).
 * min_folded: how many relus the workload's graph folds on this back-end. */
static double nmse(const float *got, const float *ref, size_t n);
static void relu_folded_vs_unfused(const char *name, const char *workload, int min_folded) {
    nn_backend *be = open_be(name);
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, "workloads", workload), 0, "%s", sd_errmsg());
    w.batch = 8;
    size_t nx = (size_t)w.batch * w.in_c * w.in_h * w.in_w;
    float *x = malloc(sizeof(float) * nx), *grads[2];
    int32_t lab[8];
    cr_assert_not_null(x);
    rng_state = 99;
    for (size_t i = 0; i < nx; i++) x[i] = (rnd() >> 8) * (1.0f / 16777216.0f) - 0.3f;
    for (int i = 0; i < 8; i++) lab[i] = rnd_int(0, w.classes - 1);
    int pooled[2] = {0, 0};
    size_t np = 0;
    for (int v = 0; v < 2; v++) {
        nn_model *m;
        if (v == 1) setenv("SD_NO_FUSE", "1", 1);
        OK(nn_model_build(&m, &w, be, w.batch, 42), be);
        unsetenv("SD_NO_FUSE");
        for (int i = 0; m->relu_folded && i < m->nlayers; i++) pooled[v] += m->relu_folded[i];
        OK(be->ops->upload(be, m->x, x, nx * sizeof(float)), be);
        OK(be->ops->upload(be, m->labels, lab, sizeof lab), be);
        OK(nn_model_forward(m, 1, 7), be);
        OK(nn_model_backward(m), be);
        np = m->nparams;
        grads[v] = host(be, m->grads, np);
        nn_model_free(m);
    }
    size_t diff = 0;
    for (size_t k = 0; k < np; k++) diff += memcmp(&grads[0][k], &grads[1][k], sizeof(float)) != 0;
    const double e = nmse(grads[0], grads[1], np);
    const int exact = strcmp(name, "ref") == 0;
    printf("%-5s %s: %d relu(s) folded into their reader; %zu of %zu gradients differ from the unfused backward, "
           "NMSE %.2e\n", be->name, workload, pooled[0], diff, np, e);
    cr_expect(pooled[0] >= min_folded && pooled[1] == 0, "%s: %s: %d relus folded (at least %d expected), %d with "
              "SD_NO_FUSE", be->name, workload, pooled[0], min_folded, pooled[1]);
    if (exact) cr_expect(diff == 0, "%s: %s: %zu gradients differ from the unfused backward", be->name, workload, diff);
    cr_expect(e < widen_nmse(1e-10), "%s: %s: gradients against the unfused backward: NMSE %.3e", be->name,
              workload, e);
    free(grads[0]); free(grads[1]); free(x);
    sd_workload_free(&w);
    nn_backend_free(be);
}
Test(ref, relu_folded) { relu_folded_vs_unfused("ref", "mnist_cnn", 1); }   /* under its pooling */
/* cudnn has neither relu_mask nor conv2d_backward_relu; dnnl folds mnist_cnn's relu under its pooling and the one
 * between its convolutions, and cifar10_vgg's two between convolutions (its relus follow its poolings): with the
 * host Winograd's backward-data, which masks dx as it writes it, and with oneDNN's, masked after */
Test(dnnl, relu_folded) { relu_folded_vs_unfused("dnnl", "mnist_cnn", 2); }
Test(dnnl, relu_folded_wino, .timeout = 300) {
    setenv("SD_DNNL_WINO", "on", 1);
    relu_folded_vs_unfused("dnnl", "cifar10_vgg", 2);
    unsetenv("SD_DNNL_WINO");
}
Test(dnnl, relu_folded_onednn, .timeout = 300) {
    setenv("SD_DNNL_WINO", "off", 1);
    relu_folded_vs_unfused("dnnl", "cifar10_vgg", 2);
    unsetenv("SD_DNNL_WINO");
}

/* A workload spec written to a fresh temporary directory (dir: "/tmp/sd_parity_XXXXXX", filled in);
 * spec_tmp_done removes both. */
static void spec_tmp(char *dir, const char *name, const char *json) {
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(json, f);
    cr_assert_eq(fclose(f), 0);
}
static void spec_tmp_done(const char *dir, const char *name) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    remove(path);
    rmdir(dir);
}

/* The dnnl back-end blocks by what oneDNN's kernels use here (16 with AVX-512, 8 with AVX2); the layout tests
 * run both blocks and nhwc on any CPU (SD_DNNL_BLOCK; the other block gets oneDNN's slower kernels): they are
 * about the layouts, not the kernels. test_block: 16, 8 in the _8c tests, 0 (nhwc) in the _nhwc tests (criterion
 * runs each test in a process of its own). */
static int test_block = 16;   /* 0: nhwc */
static int test_fmt(void) { return test_block == 8 ? NN_FMT_NCHW8C : test_block == 0 ? NN_FMT_NHWC : NN_FMT_NCHW16C; }
static void blocked_layouts(void) {
    setenv("SD_DNNL_BLOCK", test_block == 8 ? "8" : test_block == 0 ? "nhwc" : "16", 1);
}

/* 1 if /proc/cpuinfo's flags include flag (" name") */
static int cpu_flag(const char *flag) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192];
    int yes = 0;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "flags", 5) == 0) {
            yes = strstr(line, flag) != NULL;
            break;
        }
    if (f) fclose(f);
    return yes;
}

/* 1 if this CPU has what oneDNN's avx512_core kernels need */
static int cpu_avx512_core(void) {
    return cpu_flag(" avx512f") && cpu_flag(" avx512bw") && cpu_flag(" avx512vl") && cpu_flag(" avx512dq");
}

/* Layouts on awkward shapes: channel counts that pad (5, 19, 17 -> 16, 32, 32), odd planes, stride 2, batch
 * normalisation in the chain (after bias-free convolutions: a bias before it has a zero gradient, all
 * rounding), a pooling that hands nChw16c back to NCHW before flatten, batch 1 and 3: one training step
 * against ref. */
static void parity_layouts_odd(const char *name) {
    blocked_layouts();
    nn_backend *be = open_be(name);   /* first: a skipped back-end leaves no temporary directory behind */
    const int negotiates = be->ops->layout_ok != NULL;
    nn_backend_free(be);
    char dir[] = "/tmp/sd_parity_XXXXXX";
    spec_tmp(dir, "odd_layouts",
          "{\"schema\": \"showdown-workload/1\", \"name\": \"odd_layouts\", \"title\": \"layouts on odd shapes\",\n"
          " \"data\": {\"dataset\": \"synthetic\", \"shape\": [3, 13, 11], \"classes\": 7, \"train\": 64, \"test\": 16},\n"
          " \"model\": {\"init\": {\"weights\": \"glorot_uniform\", \"bias\": \"zeros\"}, \"layers\": [\n"
          "   {\"op\": \"conv2d\", \"filters\": 5, \"kernel\": 3, \"padding\": 1, \"bias\": false}, {\"op\": \"batchnorm\", \"eps\": 0.5},\n"
          "   {\"op\": \"relu\"}, {\"op\": \"dropout\", \"rate\": 0.3},\n"
          "   {\"op\": \"conv2d\", \"filters\": 19, \"kernel\": 3, \"stride\": 2, \"padding\": 1},\n"
          "   {\"op\": \"relu\"}, {\"op\": \"maxpool\", \"size\": 2},\n"
          "   {\"op\": \"conv2d\", \"filters\": 17, \"kernel\": 1, \"bias\": false}, {\"op\": \"batchnorm\", \"eps\": 0.5},\n"
          "   {\"op\": \"dropout\", \"rate\": 0.25}, {\"op\": \"maxpool\", \"size\": 2},\n"
          "   {\"op\": \"flatten\"}, {\"op\": \"dense\", \"units\": 7}],\n"
          "  \"loss\": \"softmax_cross_entropy\"},\n"
          " \"training\": {\"optimizer\": {\"name\": \"sgd\", \"lr\": 0.05, \"momentum\": 0.9}, \"batch\": 3, \"epochs\": 1}}\n");
    if (negotiates) {   /* the chain is the one meant: all of it nChw16c up to the last pooling */
        char got[1024];
        layouts_in(name, dir, "odd_layouts", got, sizeof got);
        if (test_block == 0)   /* nhwc: batch norm over 5 and 17 channels (not whole groups of 16) stays NCHW */
            cr_expect_str_eq(got, "conv2d_2:-/B relu_2:B/B maxpool_1:B/B conv2d_3:B/-");
        else
            cr_expect_str_eq(got, "conv2d_1:-/B batchnorm_1:B/B relu_1:B/B dropout_1:B/B conv2d_2:B/B relu_2:B/B "
                                  "maxpool_1:B/B conv2d_3:B/B batchnorm_2:B/B dropout_2:B/B maxpool_2:B/-");
    }
    parity_train_step_in(name, dir, "odd_layouts", 1);
    parity_train_step_in(name, dir, "odd_layouts", 3);
    spec_tmp_done(dir, "odd_layouts");
}

/* ---- a small DenseNet (concat slabs, batchnorm with its relu: nn/fuse.c) -------------------------------------------
 * Two dense blocks of growth 16 around a transition with average pooling, on an odd 13x11 input, a 24-channel
 * bottleneck (padded to 32 in nChw16c): one training step against ref at batch 1 and 3; on a back-end with
 * bn_fused_* the blocks' concatenations share a slab each and every batchnorm runs with its relu, the step's
 * gradients match the unfused build's (SD_NO_FUSE), and it needs less memory. Growth 5 (not whole 16-channel
 * blocks) keeps the concatenations whole: the same step against ref. Every path from a DenseNet's inner batchnorms
 * ends in another batchnorm, which leaves the loss invariant to their scale but for eps: with the usual eps their
 * dgamma are rounding-sized and a relative error of them means nothing; eps 0.5 makes them real. */
static const char *const densenet_spec =
    "{\"schema\": \"showdown-workload/2\", \"name\": \"tiny_densenet\", \"title\": \"a small DenseNet\",\n"
    " \"data\": {\"dataset\": \"synthetic\", \"shape\": [3, 13, 11], \"classes\": 5, \"train\": 64, \"test\": 16},\n"
    " \"model\": {\"init\": {\"weights\": \"glorot_uniform\", \"bias\": \"zeros\"},\n"
    "  \"blocks\": {\n"
    "   \"dense_layer\": {\"connection\": \"concat\", \"layers\": [{\"op\": \"batchnorm\", \"eps\": 0.5}, {\"op\": \"relu\"},\n"
    "     {\"op\": \"conv2d\", \"filters\": 24, \"kernel\": 1, \"bias\": false}, {\"op\": \"batchnorm\", \"eps\": 0.5}, {\"op\": \"relu\"},\n"
    "     {\"op\": \"conv2d\", \"filters\": GROWTH, \"kernel\": 3, \"padding\": 1, \"bias\": false}]},\n"
    "   \"transition\": {\"layers\": [{\"op\": \"batchnorm\", \"eps\": 0.5}, {\"op\": \"relu\"},\n"
    "     {\"op\": \"conv2d\", \"filters\": 32, \"kernel\": 1, \"bias\": false}, {\"op\": \"avgpool\", \"size\": 2, \"stride\": 2}]}},\n"
    "  \"layers\": [{\"op\": \"conv2d\", \"filters\": 16, \"kernel\": 3, \"stride\": 2, \"padding\": 1, \"bias\": false},\n"
    "   {\"op\": \"batchnorm\", \"eps\": 0.5}, {\"op\": \"relu\"}, {\"block\": \"dense_layer\", \"repeat\": 3}, {\"block\": \"transition\"},\n"
    "   {\"block\": \"dense_layer\", \"repeat\": 2}, {\"op\": \"batchnorm\", \"eps\": 0.5}, {\"op\": \"relu\"}, {\"op\": \"global_avgpool\"},\n"
    "   {\"op\": \"flatten\"}, {\"op\": \"dense\", \"units\": 5}],\n"
    "  \"loss\": \"softmax_cross_entropy\"},\n"
    " \"training\": {\"optimizer\": {\"name\": \"sgd\", \"lr\": 0.05, \"momentum\": 0.9}, \"batch\": 3, \"epochs\": 1}}\n";

static void parity_fused_inference_in(const char *name, const char *dir, const char *workload, int hw, int batch,
                                      int want_blocked);

static void densenet_spec_tmp(char *dir, const char *growth) {
    char json[4096];
    const char *at = strstr(densenet_spec, "GROWTH");
    snprintf(json, sizeof json, "%.*s%s%s", (int)(at - densenet_spec), densenet_spec, growth, at + strlen("GROWTH"));
    spec_tmp(dir, "tiny_densenet", json);
}

/* One training step of the spec in dir on be: gradients, the peak of device memory, how many layers sit in slabs
 * and how many batchnorms run with their relu. */
static float *densenet_step(nn_backend *be, const char *dir, int no_fuse, size_t *np, size_t *peak, int *slabbed,
                            int *bn_relu) {
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, dir, "tiny_densenet"), 0, "%s", sd_errmsg());
    const size_t nx = (size_t)w.batch * w.in_c * w.in_h * w.in_w;
    float *x = malloc(sizeof(float) * nx);
    int32_t lab[3] = {1, 4, 0};
    cr_assert_not_null(x);
    rng_state = 4711;
    for (size_t i = 0; i < nx; i++) x[i] = (rnd() >> 8) * (1.0f / 16777216.0f);
    nn_model *m;
    if (no_fuse) setenv("SD_NO_FUSE", "1", 1);
    nn_backend_reset_peak(be);
    OK(nn_model_build(&m, &w, be, w.batch, 42), be);
    unsetenv("SD_NO_FUSE");
    *slabbed = *bn_relu = 0;
    for (int i = 0; i < m->nlayers; i++) {
        *slabbed += m->slab && m->slab[i] >= 0;
        *bn_relu += m->bn_relu && m->bn_relu[i] >= 0;
    }
    OK(be->ops->upload(be, m->x, x, nx * sizeof(float)), be);
    OK(be->ops->upload(be, m->labels, lab, sizeof lab), be);
    OK(nn_model_forward(m, 1, 7), be);
    OK(nn_model_backward(m), be);
    *np = m->nparams;
    float *g = host(be, m->grads, m->nparams);
    *peak = nn_backend_peak_bytes(be);
    nn_model_free(m);
    free(x);
    sd_workload_free(&w);
    return g;
}

static void parity_densenet(const char *name) {
    blocked_layouts();
    nn_backend *be = open_be(name);   /* first: a skipped back-end leaves no temporary directory behind */
    const int fuses = be->ops->bn_fused_forward != NULL;
    char dir[] = "/tmp/sd_parity_XXXXXX";
    densenet_spec_tmp(dir, "16");
    if (fuses) {   /* the concatenations in slabs, the batchnorms with their relus, the layouts meant */
        char got[2048];
        layouts_in(name, dir, "tiny_densenet", got, sizeof got);
        if (test_block == 0)   /* nhwc: the 24-channel bottleneck's batch norm stays NCHW, and so its chain */
            cr_expect_str_eq(got, "conv2d_1:-/B batchnorm_1:B/B relu_1:B/B batchnorm_2:B/B relu_2:B/B conv2d_2:B/- "
                             "conv2d_3:-/B concat_1:B/B batchnorm_4:B/B relu_4:B/B conv2d_4:B/- conv2d_5:-/B "
                             "concat_2:B/B batchnorm_6:B/B relu_6:B/B conv2d_6:B/- conv2d_7:-/B concat_3:B/B "
                             "batchnorm_8:B/B relu_8:B/B conv2d_8:B/B avgpool_1:B/B batchnorm_9:B/B relu_9:B/B "
                             "conv2d_9:B/- conv2d_10:-/B concat_4:B/B batchnorm_11:B/B relu_11:B/B conv2d_11:B/- "
                             "conv2d_12:-/B concat_5:B/B batchnorm_13:B/B relu_13:B/B global_avgpool_1:B/-");
        else cr_expect_str_eq(got, "conv2d_1:-/B batchnorm_1:B/B relu_1:B/B batchnorm_2:B/B relu_2:B/B conv2d_2:B/B "
                         "batchnorm_3:B/B relu_3:B/B conv2d_3:B/B concat_1:B/B batchnorm_4:B/B relu_4:B/B conv2d_4:B/B "
                         "batchnorm_5:B/B relu_5:B/B conv2d_5:B/B concat_2:B/B batchnorm_6:B/B relu_6:B/B conv2d_6:B/B "
                         "batchnorm_7:B/B relu_7:B/B conv2d_7:B/B concat_3:B/B batchnorm_8:B/B relu_8:B/B conv2d_8:B/B "
                         "avgpool_1:B/B batchnorm_9:B/B relu_9:B/B conv2d_9:B/B batchnorm_10:B/B relu_10:B/B "
                         "conv2d_10:B/B concat_4:B/B batchnorm_11:B/B relu_11:B/B conv2d_11:B/B batchnorm_12:B/B "
                         "relu_12:B/B conv2d_12:B/B concat_5:B/B batchnorm_13:B/B relu_13:B/B global_avgpool_1:B/-");
        size_t np[2], peak[2];
        int slabbed[2], bnr[2];
        float *g[2];
        for (int v = 0; v < 2; v++) g[v] = densenet_step(be, dir, v, &np[v], &peak[v], &slabbed[v], &bnr[v]);
        const double e = nmse(g[0], g[1], np[0]);
        printf("%-5s tiny_densenet: %d layers in slabs, %d batchnorms with their relu; gradients against the unfused "
               "build NMSE %.2e; peak memory %zu vs %zu bytes unfused\n", be->name, slabbed[0], bnr[0], e, peak[0],
               peak[1]);
        cr_expect(slabbed[0] == 5 && slabbed[1] == 0, "%s: %d layers in slabs (%d unfused), expected 5", be->name,
                  slabbed[0], slabbed[1]);
        cr_expect(bnr[0] == 13 && bnr[1] == 0, "%s: %d batchnorms with their relu (%d unfused), expected 13", be->name,
                  bnr[0], bnr[1]);
        cr_expect(e < widen_nmse(1e-10), "%s: fused against unfused gradients: NMSE %.3e", be->name, e);
        cr_expect(peak[0] < peak[1], "%s: fused peak %zu not below unfused %zu", be->name, peak[0], peak[1]);
        free(g[0]); free(g[1]);
    }
    nn_backend_free(be);
    parity_fused_inference_in(name, dir, "tiny_densenet", 0, 3, 0);   /* a slab's views read at inference too */
    parity_train_step_in(name, dir, "tiny_densenet", 1);
    parity_train_step_in(name, dir, "tiny_densenet", 3);
    spec_tmp_done(dir, "tiny_densenet");
    char dir5[] = "/tmp/sd_parity_XXXXXX";
    densenet_spec_tmp(dir5, "5");
    parity_train_step_in(name, dir5, "tiny_densenet", 3);
    spec_tmp_done(dir5, "tiny_densenet");
}

/* ---- a small ResNet: residual adds and tensors read twice, blocked, in training (nn/fuse.c layouts) ------------
 * Basic blocks on an odd 11x13 input: 16 channels (identity shortcut), 32 with stride 2 and a projection, then 20
 * with a projection: a tensor read twice must be whole blocks (of 16 or 8) to be blocked in training (its readers'
 * gradients are summed flat), so the 20-channel block stays NCHW. One training step against ref at batch 1 and 3. */
static void parity_resnet_step(const char *name) {
    blocked_layouts();
    nn_backend *be = open_be(name);
    const int negotiates = be->ops->layout_ok != NULL;
    nn_backend_free(be);
    char dir[] = "/tmp/sd_parity_XXXXXX";
    spec_tmp(dir, "tiny_resnet",
        "{\"schema\": \"showdown-workload/2\", \"name\": \"tiny_resnet\", \"title\": \"a small ResNet\",\n"
        " \"data\": {\"dataset\": \"synthetic\", \"shape\": [3, 11, 13], \"classes\": 5, \"train\": 64, \"test\": 16},\n"
        " \"model\": {\"init\": {\"weights\": \"glorot_uniform\", \"bias\": \"zeros\"},\n"
        "  \"blocks\": {\"basic\": {\"params\": {\"filters\": 16, \"stride\": 1}, \"connection\": \"residual\",\n"
        "    \"layers\": [{\"op\": \"conv2d\", \"filters\": \"$filters\", \"kernel\": 3, \"stride\": \"$stride\", \"padding\": 1,\n"
        "                 \"bias\": false}, {\"op\": \"batchnorm\"}, {\"op\": \"relu\"},\n"
        "                {\"op\": \"conv2d\", \"filters\": \"$filters\", \"kernel\": 3, \"padding\": 1, \"bias\": false},\n"
        "                {\"op\": \"batchnorm\"}],\n"
        "    \"projection\": [{\"op\": \"conv2d\", \"filters\": \"$filters\", \"kernel\": 1, \"stride\": \"$stride\",\n"
        "                    \"bias\": false}, {\"op\": \"batchnorm\"}],\n"
        "    \"after\": [{\"op\": \"relu\"}]}},\n"
        "  \"layers\": [{\"op\": \"conv2d\", \"filters\": 16, \"kernel\": 3, \"padding\": 1, \"bias\": false},\n"
        "   {\"op\": \"batchnorm\"}, {\"op\": \"relu\"}, {\"block\": \"basic\", \"filters\": 16},\n"
        "   {\"block\": \"basic\", \"filters\": 32, \"stride\": 2, \"project\": true},\n"
        "   {\"block\": \"basic\", \"filters\": 20, \"project\": true},\n"
        "   {\"op\": \"global_avgpool\"}, {\"op\": \"flatten\"}, {\"op\": \"dense\", \"units\": 5}],\n"
        "  \"loss\": \"softmax_cross_entropy\"},\n"
        " \"training\": {\"optimizer\": {\"name\": \"sgd\", \"lr\": 0.05, \"momentum\": 0.9}, \"batch\": 3, \"epochs\": 1}}\n");
    if (negotiates) {
        char got[2048];
        layouts_in(name, dir, "tiny_resnet", got, sizeof got);
        if (test_block == 0)   /* nhwc: the last block's 20-channel batch norms stay NCHW */
            cr_expect_str_eq(got, "conv2d_1:-/B batchnorm_1:B/B relu_1:B/B conv2d_2:B/B batchnorm_2:B/B relu_2:B/B "
                             "conv2d_3:B/B batchnorm_3:B/B add_1:B/B relu_3:B/B conv2d_4:B/B batchnorm_4:B/B "
                             "relu_4:B/B conv2d_5:B/B batchnorm_5:B/B conv2d_6:B/B batchnorm_6:B/B add_2:B/B "
                             "relu_5:B/B conv2d_7:B/- conv2d_9:B/-");
        else cr_expect_str_eq(got, "conv2d_1:-/B batchnorm_1:B/B relu_1:B/B conv2d_2:B/B batchnorm_2:B/B relu_2:B/B "
                         "conv2d_3:B/B batchnorm_3:B/B add_1:B/B relu_3:B/B conv2d_4:B/B batchnorm_4:B/B relu_4:B/B "
                         "conv2d_5:B/B batchnorm_5:B/B conv2d_6:B/B batchnorm_6:B/B add_2:B/B relu_5:B/B "
                         "conv2d_7:B/B batchnorm_7:B/B relu_6:B/B conv2d_8:B/- conv2d_9:B/-");
    }
    parity_train_step_in(name, dir, "tiny_resnet", 1);
    parity_train_step_in(name, dir, "tiny_resnet", 3);
    spec_tmp_done(dir, "tiny_resnet");
}

/* ---- graph ops ------------------------------------------------------------------------------ */

static size_t nin(const nn_op *o) { return (size_t)o->n * o->c * o->h * o->w; }
static size_t nout(const nn_op *o) { return (size_t)o->n * o->oc * o->oh * o->ow; }

/* batchnorm: training forward (y, running statistics), backward twice (dx, dgamma/dbeta +=), and an
 * inference forward on the updated running statistics */
typedef struct bn_out { float *y, *run, *dx, *dg, *db, *yi; } bn_out;

static bn_out run_bn(nn_backend *be, nn_op op, const float *x, const float *g, const float *b, const float *dy,
                     const float *dg0, const float *db0) {
    size_t nx = nin(&op), C = (size_t)op.c;
    prepare(be, &op);
    size_t wsz = wsize(be, &op);
    float *run0 = malloc(sizeof(float) * 2 * C), *garbage = rnd_buf(nx, 1e3f);
    for (size_t k = 0; k < C; k++) { run0[k] = 0.1f * (float)k; run0[C + k] = 1.0f + 0.05f * (float)k; }
    void *dX = dev(be, x, nx * 4), *dG = dev(be, g, C * 4), *dB = dev(be, b, C * 4), *dY = dev(be, NULL, nx * 4);
    void *dRun = dev(be, run0, 2 * C * 4), *ws = dev(be, NULL, wsz), *dDY = dev(be, dy, nx * 4);
    void *dDX = dev(be, garbage, nx * 4), *dDG = dev(be, dg0, C * 4), *dDB = dev(be, db0, C * 4);
    bn_out o;
    OK(be->ops->batchnorm_forward(be, &op, dY, ws, dX, dG, dB, dRun, 1), be);
    o.y = host(be, dY, nx);
    o.run = host(be, dRun, 2 * C);
    OK(be->ops->batchnorm_backward(be, &op, dDX, dDG, dDB, dDY, dX, dG, ws), be);
    OK(be->ops->batchnorm_backward(be, &op, NULL, dDG, dDB, dDY, dX, dG, ws), be);
    o.dx = host(be, dDX, nx);
    o.dg = host(be, dDG, C);
    o.db = host(be, dDB, C);
    OK(be->ops->batchnorm_forward(be, &op, dY, ws, dX, dG, dB, dRun, 0), be);
    o.yi = host(be, dY, nx);
    nn_dev_free(be, dX, nx * 4); nn_dev_free(be, dG, C * 4); nn_dev_free(be, dB, C * 4); nn_dev_free(be, dY, nx * 4);
    nn_dev_free(be, dRun, 2 * C * 4); nn_dev_free(be, ws, wsz); nn_dev_free(be, dDY, nx * 4); nn_dev_free(be, dDX, nx * 4);
    nn_dev_free(be, dDG, C * 4); nn_dev_free(be, dDB, C * 4);
    free(run0); free(garbage);
    release(be, &op);
    return o;
}

static void parity_batchnorm(const char *name) {
    nn_backend *be = open_be(name), *ref = open_ref();
    int shapes[14][4] = {/* n, c, h, w */
        {2, 64, 56, 56}, {1, 3, 7, 9}, {3, 17, 5, 5}, {4, 33, 1, 1}, {2, 256, 7, 7}, {1, 1, 13, 11}};
    int ns = 6;
    rng_state = 4242;
    for (int i = 0; i < 8; i++, ns++) {
        shapes[ns][0] = rnd_int(1, 5); shapes[ns][1] = rnd_int(1, 70); shapes[ns][2] = rnd_int(1, 19); shapes[ns][3] = rnd_int(1, 19);
        if (shapes[ns][0] * shapes[ns][2] * shapes[ns][3] < 2) shapes[ns][2] = 2;   /* a batch of one value has no variance */
    }
    char label[96];
    for (int i = 0; i < ns; i++) {
        nn_op o = {.kind = NN_OP_BATCHNORM, .n = shapes[i][0], .c = shapes[i][1], .h = shapes[i][2], .w = shapes[i][3],
                   .has_bias = 1, .eps = i % 2 ? 1e-3f : 1e-5f, .momentum = 0.1f};
        o.oc = o.c; o.oh = o.h; o.ow = o.w;
        size_t nx = nin(&o), C = (size_t)o.c;
        float *x = rnd_buf(nx, 1.0f), *g = rnd_buf(C, 1.0f), *b = rnd_buf(C, 1.0f), *dy = rnd_buf(nx, 1.0f);
        for (size_t k = 0; k < nx; k++) x[k] = 0.5f + 2.0f * x[k];   /* a mean away from 0 */
        float *dg0 = rnd_buf(C, 1.0f), *db0 = rnd_buf(C, 1.0f);
        bn_out r = run_bn(ref, o, x, g, b, dy, dg0, db0), q = run_bn(be, o, x, g, b, dy, dg0, db0);
        const char *parts[] = {"y (train)", "running mean/var", "dx", "dgamma (+= twice)", "dbeta (+= twice)", "y (inference)"};
        float *rv[] = {r.y, r.run, r.dx, r.dg, r.db, r.yi}, *qv[] = {q.y, q.run, q.dx, q.dg, q.db, q.yi};
        size_t nv[] = {nx, 2 * C, nx, C, C, nx};
        for (int k = 0; k < 6; k++) {
            snprintf(label, sizeof label, "batchnorm n%d c%d %dx%d %s", o.n, o.c, o.h, o.w, parts[k]);
            EXPECT_CLOSE(be, label, qv[k], rv[k], nv[k]);
            free(rv[k]); free(qv[k]);
        }
        free(x); free(g); free(b); free(dy); free(dg0); free(db0);
    }
    nn_backend_free(ref);
    nn_backend_free(be);
}

/* ---- batchnorm with its relu, on a concat slab's view (bn_fused_*, nn/fuse.c) ----------------------------------
 * The back-end's fused call against the reference's batchnorm then relu (ref has no fused entry: the graph runs
 * them apart there): x and dx the first c of cs channels of a buffer (a slab view), in NCHW or nChw16c, dx added
 * into what the buffer holds (dx_acc) or written over the view only; training forward, backward twice (dgamma and
 * dbeta +=), inference forward. */

/* Host NCHW [n][c][hw] <-> a buffer of cs channels in fmt: copy the first c channels in (to = 1) or out. */
static void slab_io(float *buf, float *nchw, int fmt, int n, int c, int cs, size_t hw, int to) {
    for (int i = 0; i < n; i++)
        for (int ch = 0; ch < c; ch++)
            for (size_t q = 0; q < hw; q++) {
                const size_t b = nn_fmt_at(fmt, (size_t)cs, hw, (size_t)i, (size_t)ch, q);
                float *h = &nchw[((size_t)i * c + ch) * hw + q];
                if (to) buf[b] = *h; else *h = buf[b];
            }
}

typedef struct bnf_out { float *y, *run, *dx, *dxbuf, *dg, *db, *yi; } bnf_out;

/* On be with the fused call (fused = 1) or on ref layer by layer; x, dy, y, dx host NCHW of the view; dxbuf0: the
 * whole dx buffer before backward (host, in the buffer's layout, cs channels). */
static bnf_out run_bnf(nn_backend *be, int fused, nn_op op, int relu, int acc, const float *x, const float *g,
                       const float *b, const float *dy, const float *dg0, const float *db0, const float *dxbuf0) {
    const int fmt = op.fmt_in, cs = op.in_cs ? op.in_cs : op.c;
    const size_t hw = (size_t)op.h * op.w, nx = nin(&op), C = (size_t)op.c;
    const size_t nb = nn_fmt_elems(fmt, op.n, cs, op.h, op.w), ny = nn_fmt_elems(fmt, op.n, op.c, op.h, op.w);
    bnf_out o;
    float *run0 = malloc(sizeof(float) * 2 * C), *xb = calloc(nb, 4), *dyb = calloc(ny, 4), *yb = NULL;
    cr_assert(run0 && xb && dyb);
    for (size_t k = 0; k < C; k++) { run0[k] = 0.1f * (float)k; run0[C + k] = 1.0f + 0.05f * (float)k; }
    slab_io(xb, (float *)x, fmt, op.n, op.c, cs, hw, 1);
    nn_op yo = op;   /* y and dy: c channels of their own */
    yo.in_cs = 0;
    slab_io(dyb, (float *)dy, fmt, op.n, op.c, op.c, hw, 1);
    prepare(be, &op);
    size_t wsz = wsize(be, &op);
    void *dX = dev(be, xb, nb * 4), *dG = dev(be, g, C * 4), *dB = dev(be, b, C * 4), *dY = dev(be, NULL, ny * 4);
    void *dRun = dev(be, run0, 2 * C * 4), *ws = dev(be, NULL, wsz), *dDY = dev(be, dyb, ny * 4);
    void *dDX = dev(be, dxbuf0, nb * 4), *dDG = dev(be, dg0, C * 4), *dDB = dev(be, db0, C * 4);
    const nn_bn_fuse f = {.relu = relu, .dx_acc = acc};
    if (fused) {
        OK(be->ops->bn_fused_forward(be, &op, &f, dY, ws, dX, dG, dB, dRun, 1), be);
    } else {   /* ref, NCHW, a dense x: batchnorm then relu */
        OK(be->ops->batchnorm_forward(be, &op, dY, ws, dX, dG, dB, dRun, 1), be);
        if (relu) OK(be->ops->relu_forward(be, &yo, dY, dY), be);
    }
    yb = host(be, dY, ny);
    o.y = malloc(nx * 4);
    slab_io(yb, o.y, fmt, op.n, op.c, op.c, hw, 0);
    o.run = host(be, dRun, 2 * C);
    if (fused) {
        OK(be->ops->bn_fused_backward(be, &op, &f, dDX, dDG, dDB, dDY, dX, dY, dG, ws), be);
        OK(be->ops->bn_fused_backward(be, &op, &f, NULL, dDG, dDB, dDY, dX, dY, dG, ws), be);
    } else {
        void *dZ = dev(be, NULL, ny * 4), *dT = dev(be, NULL, nb * 4);
        if (relu) OK(be->ops->relu_backward(be, &yo, dZ, dDY, dY), be);
        else OK(be->ops->copy(be, dZ, dDY, ny * 4), be);
        OK(be->ops->batchnorm_backward(be, &op, dT, dDG, dDB, dZ, dX, dG, ws), be);
        OK(be->ops->batchnorm_backward(be, &op, NULL, dDG, dDB, dZ, dX, dG, ws), be);
        if (acc) OK(be->ops->add_forward(be, &yo, dDX, dDX, dT), be);
        else OK(be->ops->copy(be, dDX, dT, nx * 4), be);
        nn_dev_free(be, dZ, ny * 4); nn_dev_free(be, dT, nb * 4);
    }
    o.dxbuf = host(be, dDX, nb);
    o.dx = malloc(nx * 4);
    slab_io(o.dxbuf, o.dx, fmt, op.n, op.c, cs, hw, 0);
    o.dg = host(be, dDG, C);
    o.db = host(be, dDB, C);
    if (fused) OK(be->ops->bn_fused_forward(be, &op, &f, dY, ws, dX, dG, dB, dRun, 0), be);
    else {
        OK(be->ops->batchnorm_forward(be, &op, dY, ws, dX, dG, dB, dRun, 0), be);
        if (relu) OK(be->ops->relu_forward(be, &yo, dY, dY), be);
    }
    free(yb);
    yb = host(be, dY, ny);
    o.yi = malloc(nx * 4);
    slab_io(yb, o.yi, fmt, op.n, op.c, op.c, hw, 0);
    nn_dev_free(be, dX, nb * 4); nn_dev_free(be, dG, C * 4); nn_dev_free(be, dB, C * 4); nn_dev_free(be, dY, ny * 4);
    nn_dev_free(be, dRun, 2 * C * 4); nn_dev_free(be, ws, wsz); nn_dev_free(be, dDY, ny * 4); nn_dev_free(be, dDX, nb * 4);
    nn_dev_free(be, dDG, C * 4); nn_dev_free(be, dDB, C * 4);
    free(run0); free(xb); free(dyb); free(yb);
    release(be, &op);
    return o;
}

static void parity_bn_fused(const char *name) {
    nn_backend *be = open_be(name), *ref = open_ref();
    if (!be->ops->bn_fused_forward) {
        printf("%-5s batchnorm+relu: no fused entry (the graph runs the layers apart)\n", be->name);
        nn_backend_free(ref); nn_backend_free(be);
        return;
    }
    const int shapes[][8] = {/* n, c, h, w, cs (0: c), nn_fmt (1 nChw16c, 2 nChw8c), relu, dx_acc */
        {2, 64, 56, 56, 96, 1, 1, 1}, {3, 32, 5, 7, 64, 1, 1, 0}, {1, 19, 7, 9, 0, 1, 1, 0}, {3, 24, 3, 3, 0, 1, 0, 1},
        {3, 17, 5, 5, 0, 0, 1, 0}, {2, 5, 13, 11, 9, 0, 1, 1}, {4, 33, 1, 1, 0, 0, 0, 0}, {1, 1, 13, 11, 3, 0, 1, 1},
        {2, 256, 7, 7, 512, 1, 1, 1}, {16, 16, 3, 3, 48, 1, 0, 0},
        {2, 64, 28, 28, 96, 2, 1, 1}, {3, 32, 5, 7, 64, 2, 1, 0}, {1, 19, 7, 9, 0, 2, 1, 0}, {3, 12, 3, 3, 0, 2, 0, 1},
        {3, 5, 1, 1, 0, 2, 1, 0}, {16, 8, 3, 3, 40, 2, 0, 0}};
    char label[128];
    rng_state = 777;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const int *s = shapes[i];
        nn_op o = {.kind = NN_OP_BATCHNORM, .n = s[0], .c = s[1], .h = s[2], .w = s[3], .has_bias = 1,
                   .eps = i % 2 ? 1e-3f : 1e-5f, .momentum = 0.1f, .in_cs = s[4], .fmt_in = s[5], .fmt_out = s[5]};
        o.oc = o.c; o.oh = o.h; o.ow = o.w;
        const int cs = o.in_cs ? o.in_cs : o.c, relu = s[6], acc = s[7];
        const size_t nx = nin(&o), C = (size_t)o.c, nb = nn_fmt_elems(o.fmt_in, o.n, cs, o.h, o.w);
        float *x = rnd_buf(nx, 1.0f), *g = rnd_buf(C, 1.0f), *b = rnd_buf(C, 1.0f), *dy = rnd_buf(nx, 1.0f);
        for (size_t k = 0; k < nx; k++) x[k] = 0.5f + 2.0f * x[k];   /* a mean away from 0 */
        float *dg0 = rnd_buf(C, 1.0f), *db0 = rnd_buf(C, 1.0f), *dxbuf0 = calloc(nb, 4);
        float *full = rnd_buf((size_t)o.n * cs * o.h * o.w, 1.0f);   /* the buffer's values; padded channels 0 */
        cr_assert_not_null(dxbuf0);
        slab_io(dxbuf0, full, o.fmt_in, o.n, cs, cs, (size_t)o.h * o.w, 1);
        free(full);
        nn_op ro = o;   /* the reference: a dense NCHW x */
        ro.in_cs = 0; ro.fmt_in = ro.fmt_out = NN_FMT_NCHW;
        /* ref's dx buffer: the view's values in NCHW (what it adds to, or overwrites) */
        float *view0 = malloc(nx * 4);
        cr_assert_not_null(view0);
        slab_io(dxbuf0, view0, o.fmt_in, o.n, o.c, cs, (size_t)o.h * o.w, 0);
        bnf_out r = run_bnf(ref, 0, ro, relu, acc, x, g, b, dy, dg0, db0, view0);
        bnf_out q = run_bnf(be, 1, o, relu, acc, x, g, b, dy, dg0, db0, dxbuf0);
        /* the rest of the buffer (channels c..cs, padding) is untouched */
        float *rest = malloc(nb * 4);
        cr_assert_not_null(rest);
        memcpy(rest, q.dxbuf, nb * 4);
        slab_io(rest, view0, o.fmt_in, o.n, o.c, cs, (size_t)o.h * o.w, 1);   /* the view put back as it was */
        const char *parts[] = {"y (train)", "running mean/var", "dx", "dgamma (+= twice)", "dbeta (+= twice)",
                               "y (inference)"};
        float *rv[] = {r.y, r.run, r.dx, r.dg, r.db, r.yi}, *qv[] = {q.y, q.run, q.dx, q.dg, q.db, q.yi};
        size_t nv[] = {nx, 2 * C, nx, C, C, nx};
        for (int k = 0; k < 6; k++) {
            snprintf(label, sizeof label, "bn%s n%d c%d/%d %dx%d %s%s %s", relu ? "+relu" : "", o.n, o.c, cs, o.h, o.w,
                     nn_fmt_name(o.fmt_in), acc ? " dx+=" : "", parts[k]);
            EXPECT_CLOSE(be, label, qv[k], rv[k], nv[k]);
        }
        snprintf(label, sizeof label, "bn n%d c%d/%d %dx%d: the rest of dx's buffer", o.n, o.c, cs, o.h, o.w);
        cr_expect(memcmp(rest, dxbuf0, nb * 4) == 0, "%s: %s changed", be->name, label);
        for (int k = 0; k < 6; k++) { free(rv[k]); free(qv[k]); }
        free(r.dxbuf); free(q.dxbuf); free(rest); free(view0);
        free(x); free(g); free(b); free(dy); free(dg0); free(db0); free(dxbuf0);
    }
    nn_backend_free(ref);
    nn_backend_free(be);
}

static void run_avg(nn_backend *be, nn_op op, const float *x, const float *dy, float **y, float **dx) {
    size_t nx = nin(&op), ny = nout(&op);
    prepare(be, &op);
    float *garbage = rnd_buf(nx, 1e3f);
    void *dX = dev(be, x, nx * 4), *dY = dev(be, NULL, ny * 4), *dDY = dev(be, dy, ny * 4), *dDX = dev(be, garbage, nx * 4);
    OK(be->ops->avgpool_forward(be, &op, dY, dX), be);
    OK(be->ops->avgpool_backward(be, &op, dDX, dDY), be);
    *y = host(be, dY, ny);
    *dx = host(be, dDX, nx);
    nn_dev_free(be, dX, nx * 4); nn_dev_free(be, dY, ny * 4); nn_dev_free(be, dDY, ny * 4); nn_dev_free(be, dDX, nx * 4);
    free(garbage);
    release(be, &op);
}

static void parity_avgpool(const char *name) {
    nn_backend *be = open_be(name), *ref = open_ref();
    const int shapes[][8] = {/* n, c, h, w, k, s, p, global */
        {2, 128, 56, 56, 2, 2, 0, 0}, {1, 3, 7, 9, 2, 2, 0, 0}, {2, 17, 15, 13, 3, 2, 1, 0}, {1, 5, 8, 8, 3, 1, 1, 0},
        {3, 19, 11, 11, 3, 3, 0, 0}, {2, 2048, 7, 7, 0, 0, 0, 1}, {1, 33, 5, 3, 0, 0, 0, 1}, {4, 7, 1, 1, 0, 0, 0, 1}};
    char label[96];
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const int *s = shapes[i];
        nn_op o = {.kind = s[7] ? NN_OP_GLOBAL_AVGPOOL : NN_OP_AVGPOOL, .n = s[0], .c = s[1], .h = s[2], .w = s[3],
                   .oc = s[1], .kh = s[4], .kw = s[4], .sh = s[5], .sw = s[5], .ph = s[6], .pw = s[6]};
        if (s[7]) { o.kh = o.sh = o.h; o.kw = o.sw = o.w; }
        o.oh = (o.h + 2 * o.ph - o.kh) / o.sh + 1;
        o.ow = (o.w + 2 * o.pw - o.kw) / o.sw + 1;
        float *x = rnd_buf(nin(&o), 1.0f), *dy = rnd_buf(nout(&o), 1.0f), *ry, *rdx, *gy, *gdx;
        run_avg(ref, o, x, dy, &ry, &rdx);
        run_avg(be, o, x, dy, &gy, &gdx);
        snprintf(label, sizeof label, "%s n%d c%d %dx%d k%d s%d p%d y", s[7] ? "global_avgpool" : "avgpool", o.n, o.c,
                 o.h, o.w, o.kh, o.sh, o.ph);
        EXPECT_CLOSE(be, label, gy, ry, nout(&o));
        snprintf(label, sizeof label, "%s n%d c%d %dx%d k%d s%d p%d dx", s[7] ? "global_avgpool" : "avgpool", o.n, o.c,
                 o.h, o.w, o.kh, o.sh, o.ph);
        EXPECT_CLOSE(be, label, gdx, rdx, nin(&o));
        free(x); free(dy); free(ry); free(rdx); free(gy); free(gdx);
    }
    nn_backend_free(ref);
    nn_backend_free(be);
}

/* concat (forward, backward of each slice) and add (including in place): data movement and one sum,
 * must be bit-identical */
static void run_cat(nn_backend *be, nn_op op, float *const *x, const float *dy, float **y, float **dx, float **sum) {
    size_t ny = nout(&op), hw = (size_t)op.h * op.w;
    prepare(be, &op);
    void *dX[NN_OP_MAX_INPUTS], *dDX[NN_OP_MAX_INPUTS];
    for (int k = 0; k < op.ninputs; k++) {
        size_t n = (size_t)op.n * op.in_c[k] * hw;
        dX[k] = dev(be, x[k], n * 4);
        float *garbage = rnd_buf(n, 1e3f);
        dDX[k] = dev(be, garbage, n * 4);
        free(garbage);
    }
    void *dY = dev(be, NULL, ny * 4), *dDY = dev(be, dy, ny * 4);
    OK(be->ops->concat_forward(be, &op, dY, (const float *const *)dX), be);
    OK(be->ops->concat_backward(be, &op, (float *const *)dDX, dDY), be);
    *y = host(be, dY, ny);
    *dx = malloc(sizeof(float) * ny);
    size_t off = 0;
    for (int k = 0; k < op.ninputs; k++) {
        size_t n = (size_t)op.n * op.in_c[k] * hw;
        float *h = host(be, dDX[k], n);
        memcpy(*dx + off, h, n * 4);
        off += n;
        free(h);
    }
    release(be, &op);
    /* add over the output shape: y = y + dy, in place */
    nn_op add = {.kind = NN_OP_ADD, .n = op.n, .c = op.oc, .h = op.h, .w = op.w, .oc = op.oc, .oh = op.oh, .ow = op.ow,
                 .ninputs = 2};
    prepare(be, &add);
    OK(be->ops->add_forward(be, &add, dY, dY, dDY), be);
    *sum = host(be, dY, ny);
    release(be, &add);
    for (int k = 0; k < op.ninputs; k++) {
        size_t n = (size_t)op.n * op.in_c[k] * hw;
        nn_dev_free(be, dX[k], n * 4); nn_dev_free(be, dDX[k], n * 4);
    }
    nn_dev_free(be, dY, ny * 4); nn_dev_free(be, dDY, ny * 4);
}

static void parity_concat_add(const char *name) {
    nn_backend *be = open_be(name), *ref = open_ref();
    const int shapes[][6] = {/* n, h, w, ninputs, c0, c1 (c2 = c1 + 1) */
        {2, 56, 56, 2, 64, 32}, {1, 7, 9, 2, 3, 5}, {3, 5, 5, 3, 17, 1}, {1, 1, 1, 2, 1, 1}, {2, 14, 14, 2, 512, 32}};
    char label[96];
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const int *s = shapes[i];
        nn_op o = {.kind = NN_OP_CONCAT, .n = s[0], .h = s[1], .w = s[2], .oh = s[1], .ow = s[2], .ninputs = s[3],
                   .in_c = {s[4], s[5], s[5] + 1}};
        o.c = s[4];
        for (int k = 0; k < o.ninputs; k++) o.oc += o.in_c[k];
        float *x[NN_OP_MAX_INPUTS];
        for (int k = 0; k < o.ninputs; k++) x[k] = rnd_buf((size_t)o.n * o.in_c[k] * o.h * o.w, 1.0f);
        float *dy = rnd_buf(nout(&o), 1.0f), *ry, *rdx, *rs, *gy, *gdx, *gs;
        run_cat(ref, o, x, dy, &ry, &rdx, &rs);
        run_cat(be, o, x, dy, &gy, &gdx, &gs);
        snprintf(label, sizeof label, "concat n%d %d inputs c%d.. %dx%d y", o.n, o.ninputs, o.c, o.h, o.w);
        EXPECT_CLOSE(be, label, gy, ry, nout(&o));
        cr_expect(tu_rel_err(gy, ry, nout(&o)) == 0.0, "%s: %s: not bit-identical", be->name, label);
        snprintf(label, sizeof label, "concat n%d %d inputs c%d.. %dx%d dx", o.n, o.ninputs, o.c, o.h, o.w);
        EXPECT_CLOSE(be, label, gdx, rdx, nout(&o));
        cr_expect(tu_rel_err(gdx, rdx, nout(&o)) == 0.0, "%s: %s: not bit-identical", be->name, label);
        snprintf(label, sizeof label, "add n%d c%d %dx%d (in place)", o.n, o.oc, o.h, o.w);
        EXPECT_CLOSE(be, label, gs, rs, nout(&o));
        cr_expect(tu_rel_err(gs, rs, nout(&o)) == 0.0, "%s: %s: not bit-identical", be->name, label);
        for (int k = 0; k < o.ninputs; k++) free(x[k]);
        free(dy); free(ry); free(rdx); free(rs); free(gy); free(gdx); free(gs);
    }
    nn_backend_free(ref);
    nn_backend_free(be);
}

/* concat across layouts (dnnl): inputs in either layout into an nChw16c output or a concat slab's view (the first oc
 * of cs channels), input 0 already in place or copied; backward copies the slices out to each input's layout. Data
 * movement: bit-identical to ref's NCHW concat, and the slab's other channels untouched. */
static void parity_concat_layouts(const char *name) {
    blocked_layouts();
    nn_backend *be = open_be(name), *ref = open_ref();
    nn_op probe = {.kind = NN_OP_CONCAT, .ninputs = 2, .in_c = {16, 16}, .oc = 32};
    const int F = test_fmt();
    if (!be->ops->layout_ok || !be->ops->layout_ok(be, &probe, F)) {
        printf("%-5s concat: no %s concatenation (slabs stay whole)\n", be->name, nn_fmt_name(F));
        nn_backend_free(ref); nn_backend_free(be);
        return;
    }
    const int cases[][9] = {/* n, h, w, c0, c1, blocked0, 1, out, extra channels of the slab (cs - oc); in place */
        {2, 7, 9, 64, 32, 0, 1, 1, 64}, {3, 5, 5, 32, 16, 1, 1, 1, 0}, {1, 13, 11, 16, 32, 1, 0, 0, 0},
        {2, 3, 3, 48, 16, 1, 1, 1, 32}, {1, 1, 1, 16, 16, 0, 0, 1, 16}};
    char label[128];
    rng_state = 31337;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int inplace = 0; inplace < 2; inplace++) {
            const int *s = cases[i];
            if (inplace && !s[7]) continue;   /* a slab is blocked */
            nn_op o = {.kind = NN_OP_CONCAT, .n = s[0], .h = s[1], .w = s[2], .oh = s[1], .ow = s[2], .ninputs = 2,
                       .in_c = {s[3], s[4]}, .in_fmt = {s[5] ? F : 0, s[6] ? F : 0}, .fmt_out = s[7] ? F : 0,
                       .cat_inplace = inplace};
            o.c = s[3]; o.oc = s[3] + s[4];
            o.out_cs = s[8] ? o.oc + s[8] : 0;
            const int cs = o.out_cs ? o.out_cs : o.oc;
            const size_t hw = (size_t)o.h * o.w, nb = nn_fmt_elems(o.fmt_out, o.n, cs, o.h, o.w);
            float *x[2], *xb[2], *dy = rnd_buf(nout(&o), 1.0f);
            nn_op ro = {.kind = NN_OP_CONCAT, .n = o.n, .c = o.c, .h = o.h, .w = o.w, .oc = o.oc, .oh = o.oh, .ow = o.ow,
                        .ninputs = 2, .in_c = {s[3], s[4]}};
            for (int k = 0; k < 2; k++) {
                const size_t n = (size_t)o.n * o.in_c[k] * hw;
                x[k] = rnd_buf(n, 1.0f);
                xb[k] = malloc(n * 4);
                cr_assert_not_null(xb[k]);
                slab_io(xb[k], x[k], o.in_fmt[k], o.n, o.in_c[k], o.in_c[k], hw, 1);
            }
            float *ry, *rdx, *rs;
            run_cat(ref, ro, x, dy, &ry, &rdx, &rs);
            /* the slab before: random channels, the in-place input's values in its first channels */
            float *full = rnd_buf((size_t)o.n * cs * hw, 1.0f), *slab0 = calloc(nb, 4), *dyb = calloc(nb, 4);
            cr_assert(slab0 && dyb);
            slab_io(slab0, full, o.fmt_out, o.n, cs, cs, hw, 1);
            if (inplace) slab_io(slab0, x[0], o.fmt_out, o.n, o.in_c[0], cs, hw, 1);
            memcpy(dyb, slab0, nb * 4);
            slab_io(dyb, dy, o.fmt_out, o.n, o.oc, cs, hw, 1);
            prepare(be, &o);
            void *dX[2], *dDX[2], *dY = dev(be, slab0, nb * 4), *dDY = dev(be, dyb, nb * 4);
            for (int k = 0; k < 2; k++) {
                const size_t n = (size_t)o.n * o.in_c[k] * hw;
                dX[k] = dev(be, inplace && k == 0 ? NULL : xb[k], n * 4);   /* in place: not read */
                dDX[k] = dev(be, NULL, n * 4);
            }
            OK(be->ops->concat_forward(be, &o, dY, (const float *const *)dX), be);
            OK(be->ops->concat_backward(be, &o, (float *const *)dDX, dDY), be);
            float *yb = host(be, dY, nb), *gy = malloc(nout(&o) * 4), *gdx = calloc(nout(&o), 4);
            cr_assert(gy && gdx);
            slab_io(yb, gy, o.fmt_out, o.n, o.oc, cs, hw, 0);
            size_t off = 0;
            for (int k = 0; k < 2; k++) {
                const size_t n = (size_t)o.n * o.in_c[k] * hw;
                float *h = host(be, dDX[k], n);
                if (!(inplace && k == 0)) slab_io(h, gdx + off, o.in_fmt[k], o.n, o.in_c[k], o.in_c[k], hw, 0);
                else memcpy(gdx + off, rdx + off, n * 4);   /* in place: its gradient is the slab's, not copied */
                off += n;
                free(h);
            }
            snprintf(label, sizeof label, "concat %s+%s -> %s%s n%d c%d+%d/%d %dx%d", s[5] ? "B" : "-", s[6] ? "B" : "-",
                     s[7] ? "B" : "-", inplace ? " (in place)" : "", o.n, s[3], s[4], cs, o.h, o.w);
            cr_expect(tu_rel_err(gy, ry, nout(&o)) == 0.0, "%s: %s y: not bit-identical", be->name, label);
            cr_expect(tu_rel_err(gdx, rdx, nout(&o)) == 0.0, "%s: %s dx: not bit-identical", be->name, label);
            /* channels oc..cs (and padding) as they were: y's view put back to its first values gives the slab */
            float *keep = malloc(nout(&o) * 4);
            cr_assert_not_null(keep);
            slab_io(slab0, keep, o.fmt_out, o.n, o.oc, cs, hw, 0);
            slab_io(yb, keep, o.fmt_out, o.n, o.oc, cs, hw, 1);
            cr_expect(memcmp(yb, slab0, nb * 4) == 0, "%s: %s: the slab's other channels changed", be->name, label);
            printf("%-5s %-44s y, dx bit-identical\n", be->name, label);
            for (int k = 0; k < 2; k++) {
                const size_t n = (size_t)o.n * o.in_c[k] * hw;
                nn_dev_free(be, dX[k], n * 4); nn_dev_free(be, dDX[k], n * 4);
                free(x[k]); free(xb[k]);
            }
            nn_dev_free(be, dY, nb * 4); nn_dev_free(be, dDY, nb * 4);
            release(be, &o);
            free(dy); free(ry); free(rdx); free(rs); free(full); free(slab0); free(dyb); free(yb); free(gy); free(gdx);
            free(keep);
        }
    nn_backend_free(ref);
    nn_backend_free(be);
}

static void run_bce(nn_backend *be, nn_op op, const float *z, const float *t, float **prob, float **loss, float **dz) {
    size_t n = (size_t)op.n * op.c;
    prepare(be, &op);
    void *dZ = dev(be, z, n * 4), *dP = dev(be, NULL, n * 4), *dL = dev(be, NULL, op.n * 4);
    void *dT = dev(be, t, n * 4), *dDZ = dev(be, NULL, n * 4);
    OK(be->ops->sigmoid_bce_forward(be, &op, dP, dL, dZ, dT), be);
    OK(be->ops->sigmoid_bce_backward(be, &op, dDZ, dP, dT), be);
    *prob = host(be, dP, n);
    *loss = host(be, dL, op.n);
    *dz = host(be, dDZ, n);
    nn_dev_free(be, dZ, n * 4); nn_dev_free(be, dP, n * 4); nn_dev_free(be, dL, op.n * 4); nn_dev_free(be, dT, n * 4);
    nn_dev_free(be, dDZ, n * 4);
    release(be, &op);
}

static void parity_bce(const char *name) {
    nn_backend *be = open_be(name), *ref = open_ref();
    const int shapes[][2] = {{64, 14}, {1, 14}, {7, 1}, {3, 1000}};
    char label[96];
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        nn_op o = {.kind = NN_OP_SIGMOID_BCE, .n = shapes[i][0], .c = shapes[i][1], .h = 1, .w = 1, .oc = shapes[i][1],
                   .oh = 1, .ow = 1};
        size_t n = (size_t)o.n * o.c;
        float *z = rnd_buf(n, 8.0f), *t = rnd_buf(n, 1.0f);
        for (size_t k = 0; k < n; k++) t[k] = k % 3 ? (t[k] > 0) : 0.5f + 0.5f * t[k];
        float *rp, *rl, *rdz, *gp, *gl, *gdz;
        run_bce(ref, o, z, t, &rp, &rl, &rdz);
        run_bce(be, o, z, t, &gp, &gl, &gdz);
        snprintf(label, sizeof label, "sigmoid_bce n%d c%d prob", o.n, o.c); EXPECT_CLOSE(be, label, gp, rp, n);
        snprintf(label, sizeof label, "sigmoid_bce n%d c%d loss", o.n, o.c); EXPECT_CLOSE(be, label, gl, rl, o.n);
        snprintf(label, sizeof label, "sigmoid_bce n%d c%d dlogits", o.n, o.c); EXPECT_CLOSE(be, label, gdz, rdz, n);
        free(z); free(t); free(rp); free(rl); free(rdz); free(gp); free(gl); free(gdz);
    }
    nn_backend_free(ref);
    nn_backend_free(be);
}

/* ResNet-50 features (the shipped spec, every block, inference-mode batch norm) on both back-ends with the
 * same weights and input: NMSE = sum (f - f_ref)^2 / sum f_ref^2 must be < 1e-6. A reduced resolution and
 * batch keep the reference back-end's time in the suite's budget; SHOWDOWN_TEST_RESNET_FULL=1 runs the
 * published size (batch 32 at 224x224 ... slow on the reference). Running statistics are randomised so
 * batch norm is not the identity. */
static void parity_resnet50_features(const char *name) {
    nn_backend *be = open_be(name), *ref = open_ref();
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, "workloads", "resnet50_features"), 0, "%s", sd_errmsg());
    int full = getenv("SHOWDOWN_TEST_RESNET_FULL") != NULL;
    if (!full) { w.in_h = w.in_w = 64; w.batch = 2; }
    size_t nx = (size_t)w.batch * w.in_c * w.in_h * w.in_w;
    nn_model *mr = NULL, *mg = NULL;
    OK(nn_model_build(&mr, &w, ref, w.batch, 7), ref);
    OK(nn_model_build(&mg, &w, be, w.batch, 7), be);
    cr_assert_eq(mr->nparams, (size_t)23508032);
    float *stats = malloc(sizeof(float) * mr->nstats), *x = malloc(sizeof(float) * nx);
    rng_state = 99;
    for (int i = 0; i < mr->nlayers; i++) {
        const nn_layer *l = &mr->layers[i];
        for (size_t k = 0; k < l->s_len / 2; k++) {
            stats[l->s_off + k] = 0.1f * rnd_f();
            stats[l->s_off + l->s_len / 2 + k] = 0.5f + 0.5f * (rnd_f() + 1.0f);
        }
    }
    for (size_t i = 0; i < nx; i++) x[i] = (rnd() >> 8) * (1.0f / 16777216.0f);
    float *params = host(ref, mr->params, mr->nparams);
    OK(be->ops->upload(be, mg->params, params, mr->nparams * 4), be);
    OK(ref->ops->upload(ref, mr->stats, stats, mr->nstats * 4), ref);
    OK(be->ops->upload(be, mg->stats, stats, mr->nstats * 4), be);
    OK(ref->ops->upload(ref, mr->x, x, nx * 4), ref);
    OK(be->ops->upload(be, mg->x, x, nx * 4), be);
    OK(nn_model_forward(mr, 0, 0), ref);
    OK(nn_model_forward(mg, 0, 0), be);
    size_t nf = (size_t)w.batch * mr->out_elems;
    cr_assert_eq(mr->out_elems, (size_t)2048);
    float *fr = host(ref, mr->out, nf), *fg = host(be, mg->out, nf);
    double num = 0, den = 0;
    for (size_t i = 0; i < nf; i++) { double d = (double)fg[i] - fr[i]; num += d * d; den += (double)fr[i] * fr[i]; }
    double nmse = num / (den > 0 ? den : 1);
    printf("%-5s resnet50_features batch %d %dx%d: NMSE %.3e (features rms %.3e)\n", be->name, w.batch, w.in_h, w.in_w,
           nmse, sqrt(den / nf));
    cr_expect(den > 0 && nmse < widen_nmse(1e-6), "%s: resnet50 features NMSE %.3e >= %.0e", be->name, nmse,
              widen_nmse(1e-6));
    free(stats); free(x); free(params); free(fr); free(fg);
    nn_model_free(mr);
    nn_model_free(mg);
    sd_workload_free(&w);
    nn_backend_free(ref);
    nn_backend_free(be);
}

/* ---- fused inference (nn/model.c "inference fusion"): a convolution with its batch norm folded in and the
 * relu and residual add after it run as one back-end call. The same model on the reference, on the back-end
 * fused and on the back-end layer by layer (SD_NO_FUSE=1), with random batch-norm parameters and running
 * statistics: NMSE of the output < 1e-6 against each. Then the parameters change through the table (as an
 * optimizer step or a checkpoint load does) and the fused output must follow (no stale folded weights). */
static double nmse(const float *got, const float *ref, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) { double d = (double)got[i] - ref[i]; num += d * d; den += (double)ref[i] * ref[i]; }
    return den > 0 ? num / den : (num > 0 ? INFINITY : 0);
}
static float *infer_out(nn_model *m, size_t *n) {
    const int i = m->out ? m->nlayers - 1 : m->nlayers - 2;   /* the logits before the loss */
    const nn_op *op = &m->layers[i].op;
    *n = (size_t)op->n * op->oc * op->oh * op->ow;
    float *h = malloc(sizeof(float) * *n);
    cr_assert_not_null(h);
    OK(m->be->ops->sync(m->be), m->be);
    OK(nn_model_download_y(m, i, 0, h), m->be);
    return h;
}
static void parity_fused_inference_in(const char *name, const char *dir, const char *workload, int hw, int batch,
                                      int want_blocked) {
    nn_backend *be = open_be(name), *ref = open_ref();
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, dir, workload), 0, "%s", sd_errmsg());
    if (hw) w.in_h = w.in_w = hw;
    w.batch = batch;
    size_t nx = (size_t)w.batch * w.in_c * w.in_h * w.in_w;
    nn_model *m[3] = {NULL, NULL, NULL};   /* ref, fused, layer by layer */
    nn_backend *bes[3] = {ref, be, be};
    for (int v = 0; v < 3; v++) {   /* SD_NO_FUSE is read by the build: only around m[2]'s */
        if (v == 2) setenv("SD_NO_FUSE", "1", 1);
        OK(nn_model_build(&m[v], &w, bes[v], w.batch, 7), bes[v]);
        unsetenv("SD_NO_FUSE");
    }
    float *params = host(ref, m[0]->params, m[0]->nparams), *x = malloc(sizeof(float) * nx);
    float *stats = malloc(sizeof(float) * (m[0]->nstats + 1));
    cr_assert(x && stats);
    rng_state = 1234;
    for (int i = 0; i < m[0]->nlayers; i++) {
        const nn_layer *l = &m[0]->layers[i];
        if (l->op.kind != NN_OP_BATCHNORM) continue;
        for (size_t k = 0; k < l->w_len; k++) params[l->w_off + k] = 1.0f + 0.5f * rnd_f();   /* gamma */
        for (size_t k = 0; k < l->b_len; k++) params[l->b_off + k] = 0.1f * rnd_f();          /* beta */
        for (size_t k = 0; k < l->s_len / 2; k++) {
            stats[l->s_off + k] = 0.1f * rnd_f();
            stats[l->s_off + l->s_len / 2 + k] = 0.5f + 0.5f * (rnd_f() + 1.0f);
        }
    }
    for (size_t i = 0; i < nx; i++) x[i] = (rnd() >> 8) * (1.0f / 16777216.0f);
    float *out[3];
    size_t n = 0;
    for (int round = 0; round < 2; round++) {
        if (round) {   /* new parameters through the table: every gamma scaled, every weight nudged */
            for (size_t k = 0; k < m[0]->nparams; k++) params[k] *= 1.0f + 0.25f * rnd_f();
        }
        for (int v = 0; v < 3; v++) {
            OK(bes[v]->ops->upload(bes[v], m[v]->params, params, m[0]->nparams * 4), bes[v]);
            if (m[0]->nstats) OK(bes[v]->ops->upload(bes[v], m[v]->stats, stats, m[0]->nstats * 4), bes[v]);
            OK(bes[v]->ops->upload(bes[v], m[v]->x, x, nx * 4), bes[v]);
            if (m[v]->labels) OK(bes[v]->ops->zero(bes[v], m[v]->labels, sizeof(int32_t) * (size_t)w.batch), bes[v]);
            OK(nn_model_forward(m[v], 0, 0), bes[v]);
            out[v] = infer_out(m[v], &n);
        }
        double e_ref = nmse(out[1], out[0], n), e_unf = nmse(out[1], out[2], n), e_unf_ref = nmse(out[2], out[0], n);
        printf("%-5s %s inference %s params: fused vs ref NMSE %.2e, fused vs unfused %.2e (unfused vs ref %.2e)\n",
               be->name, workload, round ? "changed" : "first", e_ref, e_unf, e_unf_ref);
        cr_expect(e_ref < widen_nmse(1e-6), "%s: %s fused inference vs ref: NMSE %.3e", be->name, workload, e_ref);
        cr_expect(e_unf < widen_nmse(1e-6), "%s: %s fused vs unfused inference: NMSE %.3e", be->name, workload, e_unf);
        for (int v = 0; v < 3; v++) free(out[v]);
    }
    /* a training model's residual blocks hand their outputs on in nChw16c (nn/fuse.c: the layouts, or at
     * inference only inference_layouts): one such output, read back, is the unfused model's */
    int blocked = 0, first = -1;
    for (int i = 0; i < m[1]->nlayers; i++)   /* blocked by the training layouts, or at inference only */
        if ((m[1]->inf_blocked && m[1]->inf_blocked[i]) ||
            (m[1]->layers[i].op.fmt_out != NN_FMT_NCHW && m[1]->consumers[i] > 1)) {
            blocked++;
            if (first < 0) first = i;
        }
    printf("%-5s %s inference: %d layer outputs kept blocked (%s)\n", be->name, workload, blocked, nn_fmt_name(m[1]->blk_fmt));
    if (want_blocked && strcmp(name, "dnnl") == 0) {   /* the back-end with conv2d_infer and blocked layouts */
        cr_expect(blocked >= want_blocked, "%s: %s: %d outputs kept blocked at inference, expected %d", be->name,
                  workload, blocked, want_blocked);
        if (first >= 0) {
            const nn_op *op = &m[1]->layers[first].op;
            size_t ne = (size_t)op->n * op->oc * op->oh * op->ow;
            float *a = malloc(ne * 4), *b = malloc(ne * 4);
            cr_assert(a && b);
            OK(nn_model_download_y(m[1], first, 0, a), be);
            OK(nn_model_download_y(m[2], first, 0, b), be);
            double e = nmse(a, b, ne);
            cr_expect(e < widen_nmse(1e-6), "%s: %s layer %s read back after inference: NMSE %.3e", be->name, workload,
                      m[1]->layers[first].name, e);
            free(a); free(b);
        }
    }
    for (int v = 0; v < 3; v++) nn_model_free(m[v]);
    free(params); free(x); free(stats);
    sd_workload_free(&w);
    nn_backend_free(ref);
    nn_backend_free(be);
}

static void parity_fused_inference(const char *name, const char *workload, int hw, int batch, int want_blocked) {
    blocked_layouts();
    parity_fused_inference_in(name, "workloads", workload, hw, batch, want_blocked);
}

/* ---- buffer reuse in inference-only models (nn/model.c): the same outputs, bit for bit, in less memory ------
 * ResNet-50 (residual connections: a block's input is read twice, far apart) at 64x64, and a chain with
 * dropout, which inference hands on as the identity (its input must outlive it), on the reference. */
static void reuse_vs_plain(const char *dir, const char *workload, int hw, double max_ratio) {
    nn_backend *be = open_ref();
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, dir, workload), 0, "%s", sd_errmsg());
    if (hw) { w.in_h = w.in_w = hw; }
    w.batch = 2;
    size_t nx = (size_t)w.batch * w.in_c * w.in_h * w.in_w;
    float *x = malloc(sizeof(float) * nx);
    cr_assert_not_null(x);
    rng_state = 4242;
    for (size_t i = 0; i < nx; i++) x[i] = (rnd() >> 8) * (1.0f / 16777216.0f);
    nn_model *m[2] = {NULL, NULL};
    size_t bytes[2];
    float *out[2];
    for (int v = 0; v < 2; v++) {
        if (v) setenv("SD_NO_BUFFER_REUSE", "1", 1);
        size_t b0 = be->bytes_in_use;
        OK(nn_model_build(&m[v], &w, be, w.batch, 7), be);
        bytes[v] = be->bytes_in_use - b0 - (m[v]->nparams + m[v]->nstats + nx) * sizeof(float);   /* activations */
        if (v) unsetenv("SD_NO_BUFFER_REUSE");
        cr_assert_eq(m[v]->training, 0, "%s is not an inference-only model", workload);
        OK(be->ops->upload(be, m[v]->x, x, nx * 4), be);
        OK(nn_model_forward(m[v], 0, 0), be);
        out[v] = host(be, m[v]->out, (size_t)w.batch * m[v]->out_elems);
    }
    size_t n = (size_t)w.batch * m[0]->out_elems, differ = 0;
    for (size_t i = 0; i < n; i++) differ += memcmp(&out[0][i], &out[1][i], sizeof(float)) != 0;
    printf("ref   %s inference: %zu of %zu outputs differ with buffer reuse; activation bytes %zu reused vs %zu "
           "(%d shared buffers)\n", workload, differ, n, bytes[0], bytes[1], m[0]->npool);
    cr_expect_eq(differ, 0, "%s: %zu outputs differ with buffer reuse", workload, differ);
    cr_expect(bytes[0] < max_ratio * bytes[1], "%s: %zu bytes with reuse, %zu without", workload, bytes[0], bytes[1]);
    for (int v = 0; v < 2; v++) { free(out[v]); nn_model_free(m[v]); }
    free(x);
    sd_workload_free(&w);
    nn_backend_free(be);
}
Test(cpu, buffer_reuse_resnet50, .timeout = 600) { reuse_vs_plain("workloads", "resnet50_features", 64, 0.2); }
Test(cpu, buffer_reuse_dropout, .timeout = 300) {
    char dir[] = "/tmp/sd_parity_XXXXXX";
    /* the block's input is the dropout's output, read by the block's convolution and again by its add */
    spec_tmp(dir, "drop_infer",
          "{\"schema\": \"showdown-workload/2\", \"name\": \"drop_infer\", \"title\": \"dropout at inference\",\n"
          " \"data\": {\"dataset\": \"synthetic\", \"shape\": [3, 12, 12]},\n"
          " \"model\": {\"init\": {\"weights\": \"glorot_uniform\", \"bias\": \"zeros\"},\n"
          "  \"blocks\": {\"res\": {\"connection\": \"residual\",\n"
          "     \"layers\": [{\"op\": \"conv2d\", \"filters\": 8, \"kernel\": 3, \"padding\": 1}]}},\n"
          "  \"layers\": [\n"
          "   {\"op\": \"conv2d\", \"filters\": 8, \"kernel\": 3, \"padding\": 1}, {\"op\": \"dropout\", \"rate\": 0.5},\n"
          "   {\"block\": \"res\"}, {\"op\": \"relu\"}, {\"op\": \"dropout\", \"rate\": 0.5},\n"
          "   {\"block\": \"res\"}, {\"op\": \"conv2d\", \"filters\": 4, \"kernel\": 1}], \"loss\": \"none\"},\n"
          " \"inference\": {\"batch\": 2, \"images\": 4, \"warmup\": 0}}\n");
    reuse_vs_plain(dir, "drop_infer", 0, 0.6);
    spec_tmp_done(dir, "drop_infer");
}

/* ---- gradient buffers shared in training (nn/memory.c nn_mem_grads): the same step, bit for bit, in less memory --
 * One training step with and without SD_NO_BUFFER_REUSE on the same back-end: the loss and every parameter's
 * gradient equal, and the activation and gradient bytes (all but parameters, their gradients, optimizer state and
 * input) at most max_ratio of the plain build's. */
static void grad_reuse_vs_plain(const char *name, const char *dir, const char *workload, int hw, int batch,
                                double max_ratio) {
    nn_backend *be = open_be(name);
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, dir, workload), 0, "%s", sd_errmsg());
    if (hw) { w.in_h = w.in_w = hw; }
    w.batch = batch;
    const size_t nx = (size_t)w.batch * w.in_c * w.in_h * w.in_w;
    float *x = malloc(sizeof(float) * nx);
    int32_t *lab = malloc(sizeof(int32_t) * (size_t)w.batch);
    cr_assert(x && lab);
    rng_state = 31337;
    for (size_t i = 0; i < nx; i++) x[i] = (float)rnd_int(0, 9);   /* pixels, or token ids of an embedding */
    for (int i = 0; i < w.batch; i++) lab[i] = rnd_int(0, w.classes - 1);
    nn_model *m[2] = {NULL, NULL};
    size_t bytes[2];
    float *g[2], *loss[2];
    for (int v = 0; v < 2; v++) {
        if (v) setenv("SD_NO_BUFFER_REUSE", "1", 1);
        const size_t b0 = be->bytes_in_use;
        OK(nn_model_build(&m[v], &w, be, w.batch, 7), be);
        if (v) unsetenv("SD_NO_BUFFER_REUSE");
        const nn_model *mv = m[v];
        cr_assert_eq(mv->training, 1, "%s is not a training model", workload);
        bytes[v] = be->bytes_in_use - b0 - (2 * mv->nparams + mv->nstate + mv->nstats + nx) * sizeof(float);
        OK(nn_model_upload_input(m[v], x), be);
        OK(be->ops->upload(be, m[v]->labels, lab, sizeof(int32_t) * (size_t)w.batch), be);
        OK(nn_model_forward(m[v], 1, 7), be);
        OK(nn_model_backward(m[v]), be);
        OK(be->ops->sync(be), be);
        g[v] = host(be, m[v]->grads, m[v]->nparams);
        loss[v] = host(be, m[v]->loss, (size_t)w.batch);
    }
    size_t differ = 0;
    for (size_t i = 0; i < m[0]->nparams; i++) differ += memcmp(&g[0][i], &g[1][i], sizeof(float)) != 0;
    const int loss_same = memcmp(loss[0], loss[1], sizeof(float) * (size_t)w.batch) == 0;
    printf("%-5s %s step: %zu of %zu gradients differ with shared gradient buffers; loss %s; activation and "
           "gradient bytes %zu shared vs %zu (%d gradient buffers for %d layers)\n", be->name, workload, differ,
           m[0]->nparams, loss_same ? "equal" : "differs", bytes[0], bytes[1], m[0]->ngpool, m[0]->nlayers);
    cr_expect_eq(differ, 0, "%s: %s: %zu gradients differ with shared gradient buffers", be->name, workload, differ);
    cr_expect(loss_same, "%s: %s: the loss differs with shared gradient buffers", be->name, workload);
    cr_expect(m[0]->ngpool > 0 && m[1]->ngpool == 0, "%s: %s: %d / %d gradient buffers", be->name, workload,
              m[0]->ngpool, m[1]->ngpool);
    cr_expect(bytes[0] <= max_ratio * bytes[1], "%s: %s: %zu bytes with shared gradients, %zu without", be->name,
              workload, bytes[0], bytes[1]);
    for (int v = 0; v < 2; v++) { free(g[v]); free(loss[v]); nn_model_free(m[v]); }
    free(x); free(lab);
    sd_workload_free(&w);
    nn_backend_free(be);
}
static void grad_reuse_all(const char *name) {
    grad_reuse_vs_plain(name, "workloads", "resnet18_cifar", 16, 2, 0.7);   /* residual adds, projections */
    grad_reuse_vs_plain(name, "workloads", "mnist_cnn", 0, 4, 0.8);         /* relu under max pooling, dropout */
    /* a chain whose every gradient is larger than the one after it shares nothing: the same bytes */
    grad_reuse_vs_plain(name, "workloads", "imdb_gru", 0, 4, 1.0);          /* embedding, GRU */
    grad_reuse_vs_plain(name, "workloads", "mnist_hrnn", 0, 4, 1.0);        /* LSTMs */
    char dir[] = "/tmp/sd_parity_XXXXXX";
    densenet_spec_tmp(dir, "16");                                           /* concat slabs */
    grad_reuse_vs_plain(name, dir, "tiny_densenet", 0, 3, 0.8);
    spec_tmp_done(dir, "tiny_densenet");
}
Test(ref, grad_reuse, .timeout = 600) { grad_reuse_all("ref"); }
Test(dnnl, grad_reuse, .timeout = 600) { grad_reuse_all("dnnl"); }

/* ---- recurrent ops: GRU / LSTM (sequences and last state), embedding --------------------------- */

typedef struct rnn_out { float *y, *yinf, *dx, *dw, *dw2; } rnn_out;

static void rnn_fwd(nn_backend *be, nn_op *op, void *y, void *ws, const void *x, const void *w, int train) {
    if (op->kind == NN_OP_GRU) OK(be->ops->gru_forward(be, op, y, ws, x, w, train), be);
    else OK(be->ops->lstm_forward(be, op, y, ws, x, w, train), be);
}

/* Evaluation forward; training forward, backward with dx (dw += once); a new training forward (one backward
 * per forward: nn/backend.h), backward with dx NULL (dw += twice). */
static rnn_out run_rnn(nn_backend *be, nn_op op, const float *x, const float *w, const float *dy, const float *dw0) {
    const size_t nx = (size_t)op.n * op.c * op.w, ny = (size_t)op.n * op.oc * op.oh * op.ow;
    const size_t nw = (size_t)nn_rnn_params(op.kind == NN_OP_LSTM ? NN_LSTM_GATES : NN_GRU_GATES, op.w, op.units);
    rnn_out o;
    if (op.kind == NN_OP_GRU ? !be->ops->gru_forward : !be->ops->lstm_forward)
        cr_assert_fail("%s: no %s", be->name, op.kind == NN_OP_GRU ? "gru" : "lstm");
    prepare(be, &op);
    size_t wsb = wsize(be, &op);
    float *garbage = rnd_buf(nx, 1e3f);
    void *dX = dev(be, x, nx * 4), *dW = dev(be, w, nw * 4), *dY = dev(be, NULL, ny * 4), *dDY = dev(be, dy, ny * 4);
    void *dDX = dev(be, garbage, nx * 4), *dDW = dev(be, dw0, nw * 4), *dWS = dev(be, NULL, wsb ? wsb : 1);
    rnn_fwd(be, &op, dY, dWS, dX, dW, 0);
    o.yinf = host(be, dY, ny);
    rnn_fwd(be, &op, dY, dWS, dX, dW, 1);
    o.y = host(be, dY, ny);
    if (op.kind == NN_OP_GRU) OK(be->ops->gru_backward(be, &op, dDX, dDW, dDY, dX, dW, dY, dWS), be);
    else OK(be->ops->lstm_backward(be, &op, dDX, dDW, dDY, dX, dW, dY, dWS), be);
    o.dx = host(be, dDX, nx);
    o.dw = host(be, dDW, nw);
    rnn_fwd(be, &op, dY, dWS, dX, dW, 1);
    if (op.kind == NN_OP_GRU) OK(be->ops->gru_backward(be, &op, NULL, dDW, dDY, dX, dW, dY, dWS), be);
    else OK(be->ops->lstm_backward(be, &op, NULL, dDW, dDY, dX, dW, dY, dWS), be);
    o.dw2 = host(be, dDW, nw);
    nn_dev_free(be, dX, nx * 4); nn_dev_free(be, dW, nw * 4); nn_dev_free(be, dY, ny * 4);
    nn_dev_free(be, dDY, ny * 4); nn_dev_free(be, dDX, nx * 4); nn_dev_free(be, dDW, nw * 4);
    nn_dev_free(be, dWS, wsb ? wsb : 1);
    free(garbage);
    release(be, &op);
    return o;
}

static void parity_rnn(const char *name, nn_op_kind kind) {
    nn_backend *be = open_be(name), *ref = open_ref();
    /* n, T, F, H, ret_seq: fixed awkward shapes (batch 1, one step, odd sizes), then random ones */
    /* ... and imdb_gru's F and H at its batch, and an odd batch split unevenly over the threads, large
     * enough for the dnnl GRU's sgemm to take its blocked kernels, and a long batch that dnnl's host path
     * splits into sub-batches (two per thread, the second short); and babi_rnn's F and H at its batch, whose
     * backward products run on the dnnl host path's packed weights (few rows a thread), in one chunk of steps
     * for the weight gradients and, longer, in full chunks and a short last one */
    int shapes[15][5] = {{1, 1, 1, 1, 0}, {1, 1, 3, 5, 1}, {3, 7, 5, 3, 1}, {5, 4, 9, 17, 0}, {2, 13, 16, 8, 0},
                         {64, 6, 125, 100, 0}, {33, 4, 64, 48, 1}, {140, 110, 100, 96, 1}, {32, 9, 50, 50, 0},
                         {32, 41, 50, 50, 1}};
    for (int k = 10; k < 15; k++) {
        shapes[k][0] = rnd_int(1, 9); shapes[k][1] = rnd_int(1, 12); shapes[k][2] = rnd_int(1, 33);
        shapes[k][3] = rnd_int(1, 40); shapes[k][4] = rnd_int(0, 1);
    }
    for (int k = 0; k < 15; k++) {
        const int n = shapes[k][0], T = shapes[k][1], F = shapes[k][2], H = shapes[k][3], rs = shapes[k][4];
        nn_op op = {.kind = kind, .n = n, .c = T, .h = 1, .w = F, .units = H, .ret_seq = rs, .has_bias = 1,
                    .oc = rs ? T : H, .oh = 1, .ow = rs ? H : 1};
        const size_t nx = (size_t)n * T * F, ny = (size_t)n * op.oc * op.ow;
        const size_t nw = (size_t)nn_rnn_params(kind == NN_OP_LSTM ? NN_LSTM_GATES : NN_GRU_GATES, F, H);
        float *x = rnd_buf(nx, 1.0f), *w = rnd_buf(nw, 0.5f), *dy = rnd_buf(ny, 1.0f), *dw0 = rnd_buf(nw, 1.0f);
        rnn_out r = run_rnn(ref, op, x, w, dy, dw0), g = run_rnn(be, op, x, w, dy, dw0);
        char label[64], what[160];
        snprintf(label, sizeof label, "%s n%d T%d F%d H%d %s", kind == NN_OP_GRU ? "gru" : "lstm", n, T, F, H,
                 rs ? "seq" : "last");
        snprintf(what, sizeof what, "%s y", label); EXPECT_CLOSE(be, what, g.y, r.y, ny);
        snprintf(what, sizeof what, "%s y (evaluation)", label); EXPECT_CLOSE(be, what, g.yinf, r.yinf, ny);
        snprintf(what, sizeof what, "%s dx", label); EXPECT_CLOSE(be, what, g.dx, r.dx, nx);
        snprintf(what, sizeof what, "%s dw (+= once)", label); EXPECT_CLOSE(be, what, g.dw, r.dw, nw);
        snprintf(what, sizeof what, "%s dw (+= twice)", label); EXPECT_CLOSE(be, what, g.dw2, r.dw2, nw);
        free(r.y); free(r.yinf); free(r.dx); free(r.dw); free(r.dw2);
        free(g.y); free(g.yinf); free(g.dx); free(g.dw); free(g.dw2);
        free(x); free(w); free(dy); free(dw0);
    }
    nn_backend_free(ref);
    nn_backend_free(be);
}

/* A NaN in the input reaches the outputs as NaN (IEEE, as the reference) without undefined behaviour on the way:
 * the host GRU/LSTM's exp turned a NaN into an int (UBSan aborts there in a sanitizer build). */
static void rnn_nan_input(const char *name, nn_op_kind kind) {
    nn_backend *be = open_be(name);
    const int n = 2, T = 3, F = 4, H = 5;
    nn_op op = {.kind = kind, .n = n, .c = T, .h = 1, .w = F, .units = H, .ret_seq = 1, .has_bias = 1, .oc = T, .oh = 1,
                .ow = H};
    const size_t nx = (size_t)n * T * F, ny = (size_t)n * T * H;
    const size_t nw = (size_t)nn_rnn_params(kind == NN_OP_LSTM ? NN_LSTM_GATES : NN_GRU_GATES, F, H);
    float *x = rnd_buf(nx, 1.0f), *w = rnd_buf(nw, 0.5f), *dy = rnd_buf(ny, 1.0f), *dw0 = rnd_buf(nw, 1.0f);
    x[0] = NAN;   /* example 0, step 0: every later output of example 0 is NaN, example 1 stays finite */
    rnn_out g = run_rnn(be, op, x, w, dy, dw0);
    int nan0 = 1, fin1 = 1;
    for (size_t i = 0; i < ny / 2; i++) nan0 &= isnan(g.y[i]);
    for (size_t i = ny / 2; i < ny; i++) fin1 &= isfinite(g.y[i]);
    cr_expect(nan0, "%s %s: a NaN input did not reach example 0's outputs", name, kind == NN_OP_GRU ? "gru" : "lstm");
    cr_expect(fin1, "%s %s: example 1's outputs are not finite", name, kind == NN_OP_GRU ? "gru" : "lstm");
    free(g.y); free(g.yinf); free(g.dx); free(g.dw); free(g.dw2);
    free(x); free(w); free(dy); free(dw0);
    nn_backend_free(be);
}

static void parity_embedding(const char *name) {
    nn_backend *be = open_be(name), *ref = open_ref();
    for (int k = 0; k < 5; k++) {
        nn_op op = {.kind = NN_OP_EMBEDDING, .n = k ? rnd_int(1, 9) : 1, .c = k ? rnd_int(1, 20) : 1, .h = 1, .w = 1,
                    .units = rnd_int(1, 37), .vocab = rnd_int(1, 50)};
        if (k == 4) { op.n = 32; op.c = 552; op.units = 50; op.vocab = 36; }   /* babi_rnn's story: many rows */
        op.oc = op.c; op.oh = 1; op.ow = op.units;
        if (k >= 3) {   /* a range of a longer input (babi_rnn) */
            op.ids_stride = op.c + (k == 4 ? 5 : 3);
            op.ids_off = k == 4 ? 0 : 2;
        }
        const size_t nt = (size_t)op.n * (op.ids_stride ? op.ids_stride : op.c), ny = (size_t)op.n * op.c * op.units;
        const size_t nw = (size_t)op.vocab * op.units;
        int32_t *ids = malloc(sizeof(int32_t) * nt);
        for (size_t i = 0; i < nt; i++) ids[i] = rnd_int(0, op.vocab - 1);
        float *table = rnd_buf(nw, 1.0f), *dy = rnd_buf(ny, 1.0f), *dt0 = rnd_buf(nw, 1.0f);
        float *out[2][2];
        nn_backend *bes[2] = {ref, be};
        for (int b = 0; b < 2; b++) {
            nn_backend *e = bes[b];
            void *dI = dev(e, ids, nt * 4), *dT = dev(e, table, nw * 4), *dY = dev(e, NULL, ny * 4);
            void *dDY = dev(e, dy, ny * 4), *dDT = dev(e, dt0, nw * 4);
            OK(e->ops->embedding_forward(e, &op, dY, (int32_t *)dI + op.ids_off, dT), e);
            OK(e->ops->embedding_backward(e, &op, dDT, dDY, (int32_t *)dI + op.ids_off), e);
            out[b][0] = host(e, dY, ny);
            out[b][1] = host(e, dDT, nw);
            nn_dev_free(e, dI, nt * 4); nn_dev_free(e, dT, nw * 4); nn_dev_free(e, dY, ny * 4);
            nn_dev_free(e, dDY, ny * 4); nn_dev_free(e, dDT, nw * 4);
        }
        char what[160];
        snprintf(what, sizeof what, "embedding n%d T%d V%d E%d y", op.n, op.c, op.vocab, op.units);
        EXPECT_CLOSE(be, what, out[1][0], out[0][0], ny);
        snprintf(what, sizeof what, "embedding n%d T%d V%d E%d dtable (+=)", op.n, op.c, op.vocab, op.units);
        EXPECT_CLOSE(be, what, out[1][1], out[0][1], nw);
        for (int b = 0; b < 2; b++) { free(out[b][0]); free(out[b][1]); }
        free(ids); free(table); free(dy); free(dt0);
    }
    nn_backend_free(ref);
    nn_backend_free(be);
}

static void parity_repeat(const char *name) {
    nn_backend *be = open_be(name), *ref = open_ref();
    const int shapes[4][3] = {{1, 1, 1}, {3, 7, 5}, {32, 552, 50}, {5, 2, 33}};   /* n, times, c */
    for (int k = 0; k < 4; k++) {
        nn_op op = {.kind = NN_OP_REPEAT, .n = shapes[k][0], .c = shapes[k][2], .h = 1, .w = 1, .oc = shapes[k][1],
                    .oh = 1, .ow = shapes[k][2]};
        const size_t nx = (size_t)op.n * op.c, ny = nx * op.oc;
        float *x = rnd_buf(nx, 1.0f), *dy = rnd_buf(ny, 1.0f), *out[2][2];
        nn_backend *bes[2] = {ref, be};
        for (int b = 0; b < 2; b++) {
            nn_backend *e = bes[b];
            float *garbage = rnd_buf(nx, 1e3f);
            void *dX = dev(e, x, nx * 4), *dY = dev(e, NULL, ny * 4), *dDY = dev(e, dy, ny * 4), *dDX = dev(e, garbage, nx * 4);
            prepare(e, &op);
            OK(e->ops->repeat_forward(e, &op, dY, dX), e);
            OK(e->ops->repeat_backward(e, &op, dDX, dDY), e);
            out[b][0] = host(e, dY, ny);
            out[b][1] = host(e, dDX, nx);
            release(e, &op);
            nn_dev_free(e, dX, nx * 4); nn_dev_free(e, dY, ny * 4); nn_dev_free(e, dDY, ny * 4); nn_dev_free(e, dDX, nx * 4);
            free(garbage);
        }
        char what[160];
        snprintf(what, sizeof what, "repeat_vector n%d T%d C%d y", op.n, op.oc, op.c);
        EXPECT_CLOSE(be, what, out[1][0], out[0][0], ny);
        snprintf(what, sizeof what, "repeat_vector n%d T%d C%d dx", op.n, op.oc, op.c);
        EXPECT_CLOSE(be, what, out[1][1], out[0][1], nx);
        for (int b = 0; b < 2; b++) { free(out[b][0]); free(out[b][1]); }
        free(x); free(dy);
    }
    nn_backend_free(ref);
    nn_backend_free(be);
}

/* ---- layouts: which tensors the graph keeps in nChw16c on dnnl (nn/model.c choose_layouts) ------------------
 * cifar10_vgg: everything from the first convolution's output to the last pooling's input; the last pooling
 * writes NCHW because flatten (a view) and the dense layer after it read NCHW. The reference keeps NCHW. */
static int layouts_blk;   /* the model's blocked layout, of the last layouts_in */
static void layouts_in(const char *be_name, const char *dir, const char *workload, char *out, size_t len) {
    nn_backend *be = strcmp(be_name, "ref") == 0 ? open_ref() : open_be(be_name);
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, dir, workload), 0, "%s", sd_errmsg());
    nn_model *m = NULL;
    OK(nn_model_build(&m, &w, be, 8, 42), be);
    out[0] = 0;
    for (int i = 0; i < m->nlayers; i++) {
        const nn_op *op = &m->layers[i].op;
        if (op->fmt_in == NN_FMT_NCHW && op->fmt_out == NN_FMT_NCHW) continue;
        size_t l = strlen(out);
        snprintf(out + l, len - l, "%s%s:%s/%s", l ? " " : "", m->layers[i].name, op->fmt_in ? "B" : "-",
                 op->fmt_out ? "B" : "-");
    }
    layouts_blk = m->blk_fmt;
    printf("%-5s %s layouts (B = %s, - = NCHW): %s\n", be->name, workload, nn_fmt_name(m->blk_fmt), out[0] ? out : "(all NCHW)");
    nn_model_free(m);
    sd_workload_free(&w);
    nn_backend_free(be);
}
Test(dnnl, layouts) {
    blocked_layouts();
    char got[1024];
    layouts_in("dnnl", "workloads", "cifar10_vgg", got, sizeof got);
    cr_expect_str_eq(got, "conv2d_1:-/B relu_1:B/B conv2d_2:B/B maxpool_1:B/B relu_2:B/B dropout_1:B/B "
                          "conv2d_3:B/B relu_3:B/B conv2d_4:B/B maxpool_2:B/-");
    layouts_in("dnnl", "workloads", "mnist_cnn", got, sizeof got);
    cr_expect_str_eq(got, "conv2d_1:-/B relu_1:B/B conv2d_2:B/B relu_2:B/B maxpool_1:B/-");
    layouts_in("ref", "workloads", "cifar10_vgg", got, sizeof got);
    cr_expect_str_eq(got, "");
}

/* Left to itself, the graph blocks by what oneDNN's kernels here use: 16 with AVX-512, 8 with AVX2 (given the
 * other block, oneDNN runs its reference convolution and pooling), none below. */
Test(dnnl, layouts_follow_isa) {
    if (!nn_backend_compiled("dnnl")) TU_SKIP("dnnl: not compiled into this build (%s)", nn_backend_list());
    unsetenv("SD_DNNL_BLOCK");
    char got[1024];
    layouts_in("dnnl", "workloads", "mnist_cnn", got, sizeof got);
    const int want = cpu_avx512_core() ? NN_FMT_NCHW16C : cpu_flag(" avx2") ? NN_FMT_NCHW8C : NN_FMT_NCHW;
    cr_expect_eq(layouts_blk, want, "the graph blocks as %s, expected %s on this CPU", nn_fmt_name(layouts_blk),
                 nn_fmt_name(want));
    if (want != NN_FMT_NCHW) cr_expect_str_eq(got, "conv2d_1:-/B relu_1:B/B conv2d_2:B/B relu_2:B/B maxpool_1:B/-");
    else cr_expect_str_eq(got, "", "without AVX2 the graph keeps NCHW, got %s", got);
}

/* The layout tests again in nChw8c (the graph's layout with AVX2), whatever this CPU */
Test(dnnl, step_odd_layouts_8c, .timeout = 600) { test_block = 8; parity_layouts_odd("dnnl"); }
Test(dnnl, step_densenet_8c, .timeout = 600) { test_block = 8; parity_densenet("dnnl"); }
Test(dnnl, step_resnet_8c, .timeout = 600) { test_block = 8; parity_resnet_step("dnnl"); }
Test(dnnl, concat_layouts_8c, .timeout = 300) { test_block = 8; parity_concat_layouts("dnnl"); }
Test(dnnl, fused_inference_mnist_cnn_8c, .timeout = 600) {
    test_block = 8;
    parity_fused_inference("dnnl", "mnist_cnn", 0, 3, 0);
}
Test(dnnl, fused_inference_resnet18_8c, .timeout = 600) {
    test_block = 8;
    parity_fused_inference("dnnl", "resnet18_cifar", 0, 2, 8);
}

/* The layout tests again in nhwc (SD_DNNL_BLOCK=nhwc: what oneDNN 2.6's AMX convolutions take), whatever this CPU */
Test(dnnl, step_odd_layouts_nhwc, .timeout = 600) { test_block = 0; parity_layouts_odd("dnnl"); }
Test(dnnl, step_densenet_nhwc, .timeout = 600) { test_block = 0; parity_densenet("dnnl"); }
/* the same with the host Winograd wherever it can run: at inference it reads the nhwc x the graph keeps there, whose
 * training layout is NCHW */
Test(dnnl, step_densenet_nhwc_winograd, .timeout = 600) {
    setenv("SD_DNNL_WINO", "on", 1);
    test_block = 0;
    parity_densenet("dnnl");
}
Test(dnnl, step_resnet_nhwc, .timeout = 600) { test_block = 0; parity_resnet_step("dnnl"); }
Test(dnnl, concat_layouts_nhwc, .timeout = 300) { test_block = 0; parity_concat_layouts("dnnl"); }
Test(dnnl, fused_inference_mnist_cnn_nhwc, .timeout = 600) {
    test_block = 0;
    parity_fused_inference("dnnl", "mnist_cnn", 0, 3, 0);
}
Test(dnnl, fused_inference_resnet18_nhwc, .timeout = 600) {
    test_block = 0;
    parity_fused_inference("dnnl", "resnet18_cifar", 0, 2, 8);
}

/* ---- the suite, once per back-end ------------------------------------------------------------------------ */

#define PARITY_SUITE(BE)                                                                   \
    Test(BE, dense, .timeout = 300) { parity_dense(#BE); }                                 \
    Test(BE, conv2d, .timeout = 300) { parity_conv(#BE); }                                 \
    Test(BE, maxpool, .timeout = 300) { parity_maxpool(#BE); }                             \
    Test(BE, relu, .timeout = 300) { parity_elementwise(#BE, NN_OP_RELU); }                \
    Test(BE, dropout, .timeout = 300) { parity_elementwise(#BE, NN_OP_DROPOUT); }          \
    Test(BE, softmax_xent, .timeout = 300) { parity_xent(#BE); }                           \
    Test(BE, optimizer, .timeout = 300) { parity_optim(#BE); }                             \
    Test(BE, step_mnist_mlp, .timeout = 1200) { parity_train_step(#BE, "mnist_mlp"); }     \
    Test(BE, step_mnist_cnn, .timeout = 1200) { parity_train_step(#BE, "mnist_cnn"); }     \
    Test(BE, step_cifar10_vgg, .timeout = 1200) { parity_train_step(#BE, "cifar10_vgg"); }   \
    Test(BE, step_odd_layouts, .timeout = 600) { parity_layouts_odd(#BE); }                \
    Test(BE, step_densenet, .timeout = 600) { parity_densenet(#BE); }                      \
    Test(BE, step_resnet, .timeout = 600) { parity_resnet_step(#BE); }                     \
    Test(BE, batchnorm, .timeout = 300) { parity_batchnorm(#BE); }                         \
    Test(BE, batchnorm_relu_fused, .timeout = 300) { parity_bn_fused(#BE); }               \
    Test(BE, avgpool, .timeout = 300) { parity_avgpool(#BE); }                             \
    Test(BE, concat_add, .timeout = 300) { parity_concat_add(#BE); }                       \
    Test(BE, concat_layouts, .timeout = 300) { parity_concat_layouts(#BE); }               \
    Test(BE, sigmoid_bce, .timeout = 300) { parity_bce(#BE); }                             \
    Test(BE, resnet50_features, .timeout = 1200) { parity_resnet50_features(#BE); }   \
    Test(BE, fused_inference_vgg16, .timeout = 600) { parity_fused_inference(#BE, "vgg16_cifar", 0, 2, 0); } \
    Test(BE, fused_inference_resnet50, .timeout = 1200) { parity_fused_inference(#BE, "resnet50_features", 64, 2, 0); } \
    Test(BE, fused_inference_mnist_cnn, .timeout = 600) { parity_fused_inference(#BE, "mnist_cnn", 0, 3, 0); } \
    Test(BE, fused_inference_resnet18, .timeout = 600) { parity_fused_inference(#BE, "resnet18_cifar", 0, 2, 8); } \
    /* recurrent ops */                                                         \
    Test(BE, gru, .timeout = 300) { parity_rnn(#BE, NN_OP_GRU); }                          \
    Test(BE, lstm, .timeout = 300) { parity_rnn(#BE, NN_OP_LSTM); }                        \
    Test(BE, embedding, .timeout = 300) { parity_embedding(#BE); }                         \
    Test(BE, repeat_vector, .timeout = 300) { parity_repeat(#BE); }

PARITY_SUITE(dnnl)
PARITY_SUITE(cudnn)

/* dnnl runs GRU and LSTM on the host; oneDNN's RNN primitives stay selectable (SD_DNNL_RNN_PRIMITIVE, read
 * when the op is prepared) to compare against, and must compute the same */
static void parity_rnn_primitive(nn_op_kind kind) {
    setenv("SD_DNNL_RNN_PRIMITIVE", "1", 1);
    parity_rnn("dnnl", kind);
    unsetenv("SD_DNNL_RNN_PRIMITIVE");
}
Test(dnnl, conv2d_winograd_8c, .timeout = 300) { parity_conv_blocked(8, 0, NULL); }
Test(dnnl, conv2d_winograd_16c, .timeout = 300) { parity_conv_blocked(16, 0, "off"); }
Test(dnnl, conv2d_winograd_nhwc, .timeout = 300) { parity_conv_blocked(0, 0, NULL); }
Test(dnnl, conv2d_winograd_16c_split, .timeout = 300) { parity_conv_blocked(16, 0, "on"); }
Test(dnnl, conv2d_winograd_8c_split, .timeout = 300) { parity_conv_blocked(8, 0, "on"); }
Test(dnnl, conv2d_winograd_16c_sized, .timeout = 300) { parity_conv_blocked(16, 0, NULL); }
Test(dnnl, conv2d_sgemm_8c, .timeout = 300) { parity_conv_blocked(8, 1, NULL); }
Test(dnnl, conv2d_sgemm_16c, .timeout = 300) { parity_conv_blocked(16, 1, NULL); }
Test(dnnl, conv2d_sgemm_nchw, .timeout = 300) { setenv("SD_DNNL_GEMM", "on", 1); parity_conv("dnnl"); }
/* a training step whose convolutions all have outputs of 16 positions or fewer (4x4, then 2x2 after pooling), with
 * their backward passes as sgemm between blocked layers: each parameter's gradient and update against the reference */
Test(dnnl, step_small_sgemm, .timeout = 300) {
    setenv("SD_DNNL_GEMM", "on", 1);
    blocked_layouts();
    char dir[] = "/tmp/sd_parity_XXXXXX";
    spec_tmp(dir, "tiny_small",
        "{\"schema\": \"showdown-workload/2\", \"name\": \"tiny_small\", \"title\": \"small planes\",\n"
        " \"data\": {\"dataset\": \"synthetic\", \"shape\": [3, 4, 4], \"classes\": 5, \"train\": 64, \"test\": 16},\n"
        " \"model\": {\"init\": {\"weights\": \"glorot_uniform\", \"bias\": \"zeros\"},\n"
        "  \"layers\": [{\"op\": \"conv2d\", \"filters\": 16, \"kernel\": 3, \"padding\": 1}, {\"op\": \"relu\"},\n"
        "   {\"op\": \"conv2d\", \"filters\": 24, \"kernel\": 3, \"padding\": 1}, {\"op\": \"relu\"},\n"
        "   {\"op\": \"maxpool\", \"size\": 2},\n"
        "   {\"op\": \"conv2d\", \"filters\": 16, \"kernel\": 3, \"padding\": 1}, {\"op\": \"relu\"},\n"
        "   {\"op\": \"flatten\"}, {\"op\": \"dense\", \"units\": 5}],\n"
        "  \"loss\": \"softmax_cross_entropy\"},\n"
        " \"training\": {\"optimizer\": {\"name\": \"sgd\", \"lr\": 0.05, \"momentum\": 0.9}, \"batch\": 3, \"epochs\": 1}}\n");
    parity_train_step_in("dnnl", dir, "tiny_small", 0);
    spec_tmp_done(dir, "tiny_small");
}
Test(dnnl, gru_primitive, .timeout = 300) { parity_rnn_primitive(NN_OP_GRU); }
Test(dnnl, gru_nan_input) { rnn_nan_input("dnnl", NN_OP_GRU); }
Test(dnnl, lstm_nan_input) { rnn_nan_input("dnnl", NN_OP_LSTM); }
Test(dnnl, lstm_primitive, .timeout = 300) { parity_rnn_primitive(NN_OP_LSTM); }
