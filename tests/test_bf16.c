/* test_bf16 — --precision bf16 on the dnnl back-end against the fp32 reference: convolutions (training and the
 * fused inference one) and dense layers forward and backward, and a whole training step, within bf16 tolerances;
 * that bf16 is really what ran (oneDNN's avx512_core_bf16 kernels, and an error above fp32's); and the refusals:
 * the reference back-end and a CPU without AVX512_BF16/AMX are usage errors (exit 2). On such a CPU the parity
 * tests print "skipped: no avx512_bf16 on this CPU".
 * Tolerance: an operand rounded to bf16 keeps 8 significant bits (unit roundoff u = 2^-8 = 3.9e-3); a product
 * of two carries at most ~2u, and the fp32 sums of such products stay within a few u of max |ref|. BF16_TOL = 4u
 * bounds max |got - ref| / max |ref| per tensor (measured 1.5e-3 to 6e-3); a training step's gradients, which
 * compound several layers, are held by NMSE. */
#include "testutil.h"
#include "nn/backend_impl.h"
#include "nn/model.h"
#include "core/err.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BF16_TOL 1.6e-2      /* 4 u, u = 2^-8 */
#define FP32_LEVEL 1e-4      /* an error below this on every tensor means nothing was rounded to bf16 */
#define LOSS_NMSE 1e-5       /* a training step's loss */
#define TOP_NMSE 1e-4        /* the last layer's dW: (a few u)^2 */
#define STEP_NMSE 2e-2       /* all gradients and the updated parameters (see step_vs_ref) */

static uint64_t rng_state = 88172645463325252ULL;
static float rnd_f(void) {
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return (float)(uint32_t)(rng_state >> 32) / 4294967296.0f * 2.0f - 1.0f;
}
static float *rnd_buf(size_t n, float scale) {
    float *p = malloc(sizeof(float) * (n ? n : 1));
    cr_assert_not_null(p);
    for (size_t i = 0; i < n; i++) p[i] = rnd_f() * scale;
    return p;
}
static double nmse(const float *got, const float *ref, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) { double d = (double)got[i] - ref[i]; num += d * d; den += (double)ref[i] * ref[i]; }
    return den > 0 ? num / den : (num > 0 ? INFINITY : 0);
}

/* Does this CPU multiply bf16 natively (what dnnl requires for --precision bf16)? */
static int cpu_has_bf16(void) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return 0;
    char line[8192];
    int yes = 0;
    while (!yes && fgets(line, sizeof line, f))
        if (strncmp(line, "flags", 5) == 0) yes = strstr(line, " avx512_bf16") || strstr(line, " amx_bf16");
    fclose(f);
    return yes;
}

static nn_backend *open_named(const char *name, const char *precision) {
    nn_backend_opts o = {.threads = 0, .autotune = 1, .precision = precision, .quiet = 1};
    nn_backend *be = NULL;
    int rc = nn_backend_new(&be, name, &o, NULL, 0);
    cr_assert_eq(rc, 0, "%s (%s): %s", name, precision, sd_errmsg());
    return be;
}

/* dnnl in bf16, or a skip: not built, or a CPU without bf16 (where creating it must be a usage error). */
static nn_backend *open_bf16(void) {
    if (!nn_backend_compiled("dnnl")) TU_SKIP("dnnl: not compiled into this build (%s)", nn_backend_list());
    if (!cpu_has_bf16()) {
        nn_backend_opts o = {.precision = "bf16", .quiet = 1};
        nn_backend *be = NULL;
        int rc = nn_backend_new(&be, "dnnl", &o, NULL, 0);
        cr_assert_eq(rc, SD_EUSAGE, "dnnl accepted bf16 on a CPU without it (%d)", rc);
        TU_SKIP("no avx512_bf16 on this CPU");
    }
    return open_named("dnnl", "bf16");
}

#define OK(call, be) cr_assert_eq((call), 0, "%s: %s: %s", (be)->name, #call, sd_errmsg())

static void *dev(nn_backend *be, const void *src, size_t bytes) {
    void *p = NULL;
    cr_assert_eq(nn_dev_alloc(be, &p, bytes), 0, "%s", sd_errmsg());
    if (src) OK(be->ops->upload(be, p, src, bytes), be);
    else OK(be->ops->zero(be, p, bytes), be);
    return p;
}
static float *host(nn_backend *be, const void *d, size_t n) {
    float *h = malloc(sizeof(float) * (n ? n : 1));
    cr_assert_not_null(h);
    OK(be->ops->sync(be), be);
    OK(be->ops->download(be, h, d, sizeof(float) * n), be);
    return h;
}

/* The largest error seen by the layer checks: bf16 must show (an fp32 run stays near 1e-6). */
static double g_worst;

static void expect_close(const char *what, const float *got, const float *ref, size_t n) {
    double e = tu_rel_err(got, ref, n);
    printf("dnnl bf16 %-46s rel %.2e\n", what, e);
    if (e > g_worst) g_worst = e;
    cr_expect(e < BF16_TOL, "%s: relative error %.3e >= %.1e", what, e, BF16_TOL);
}

typedef struct lout { float *y, *dx, *dw, *db; } lout;

/* Forward, then backward with dw/db accumulating onto dw0/db0 (as the engine's contract). */
static lout run_layer(nn_backend *be, nn_op op, const float *x, const float *w, const float *b, const float *dy,
                      const float *dw0, const float *db0) {
    const int conv = op.kind == NN_OP_CONV2D;
    size_t nx = (size_t)op.n * op.c * op.h * op.w, ny = (size_t)op.n * op.oc * op.oh * op.ow;
    size_t nw = (size_t)op.oc * op.c * (conv ? op.kh * op.kw : 1), nb = (size_t)op.oc;
    op.priv = NULL;
    if (be->ops->prepare) OK(be->ops->prepare(be, &op), be);
    void *dX = dev(be, x, nx * 4), *dW = dev(be, w, nw * 4), *dB = dev(be, b, nb * 4), *dY = dev(be, NULL, ny * 4);
    void *dDY = dev(be, dy, ny * 4), *dDX = dev(be, NULL, nx * 4), *dDW = dev(be, dw0, nw * 4);
    void *dDB = dev(be, db0, nb * 4);
    lout o;
    if (conv) OK(be->ops->conv2d_forward(be, &op, dY, dX, dW, dB), be);
    else OK(be->ops->dense_forward(be, &op, dY, dX, dW, dB), be);
    if (conv) OK(be->ops->conv2d_backward(be, &op, dDX, dDW, dDB, dDY, dX, dW), be);
    else OK(be->ops->dense_backward(be, &op, dDX, dDW, dDB, dDY, dX, dW), be);
    o.y = host(be, dY, ny); o.dx = host(be, dDX, nx); o.dw = host(be, dDW, nw); o.db = host(be, dDB, nb);
    nn_dev_free(be, dX, nx * 4); nn_dev_free(be, dW, nw * 4); nn_dev_free(be, dB, nb * 4); nn_dev_free(be, dY, ny * 4);
    nn_dev_free(be, dDY, ny * 4); nn_dev_free(be, dDX, nx * 4); nn_dev_free(be, dDW, nw * 4);
    nn_dev_free(be, dDB, nb * 4);
    if (be->ops->release) be->ops->release(be, &op);
    return o;
}

static void check_layer(nn_backend *be, nn_backend *ref, nn_op op, const char *label) {
    const int conv = op.kind == NN_OP_CONV2D;
    size_t nx = (size_t)op.n * op.c * op.h * op.w, ny = (size_t)op.n * op.oc * op.oh * op.ow;
    size_t nw = (size_t)op.oc * op.c * (conv ? op.kh * op.kw : 1), nb = (size_t)op.oc;
    float *x = rnd_buf(nx, 1.0f), *w = rnd_buf(nw, 0.5f), *b = rnd_buf(nb, 0.5f), *dy = rnd_buf(ny, 1.0f);
    float *dw0 = rnd_buf(nw, 0.01f), *db0 = rnd_buf(nb, 0.01f);
    lout r = run_layer(ref, op, x, w, b, dy, dw0, db0), g = run_layer(be, op, x, w, b, dy, dw0, db0);
    char what[160];
    snprintf(what, sizeof what, "%s y", label); expect_close(what, g.y, r.y, ny);
    snprintf(what, sizeof what, "%s dx", label); expect_close(what, g.dx, r.dx, nx);
    snprintf(what, sizeof what, "%s dw (+=)", label); expect_close(what, g.dw, r.dw, nw);
    snprintf(what, sizeof what, "%s db (+=)", label); expect_close(what, g.db, r.db, nb);
    free(r.y); free(r.dx); free(r.dw); free(r.db); free(g.y); free(g.dx); free(g.dw); free(g.db);
    free(x); free(w); free(b); free(dy); free(dw0); free(db0);
}

static nn_op conv_op(int n, int c, int h, int w, int oc, int k, int s, int p) {
    nn_op op = {.kind = NN_OP_CONV2D, .n = n, .c = c, .h = h, .w = w, .oc = oc, .kh = k, .kw = k, .sh = s, .sw = s,
                .ph = p, .pw = p, .has_bias = 1};
    op.oh = (h + 2 * p - k) / s + 1;
    op.ow = (w + 2 * p - k) / s + 1;
    return op;
}

/* The backend_impl line of be's environment (what the results record). */
typedef struct impl_buf { char *out; size_t len; } impl_buf;
static void impl_add(void *user, const char *k, const char *v) {
    impl_buf *u = user;
    if (strcmp(k, "backend_impl") == 0) snprintf(u->out, u->len, "%s", v);
}
static void impl_of(nn_backend *be, char *out, size_t len) {
    out[0] = 0;
    impl_buf u = {out, len};
    nn_backend_env(be, impl_add, &u);
}

/* 1 if some kernel backend_impl names for what (e.g. "conv fwd ") is a bf16 one: avx512_core_bf16 (AVX512_BF16)
 * or avx512_core_amx_bf16 (AMX; oneDNN 3.x names its AMX kernels avx512_core_amx, without the type, and runs
 * f32 without AMX). The 1-channel backward-data may run fp32 gemm, so one of them is enough. */
static int kernel_is_bf16(const char *impl, const char *what) {
    for (const char *p = strstr(impl, what); p; p = strstr(p + 1, what)) {
        size_t n = strcspn(p + strlen(what), ",");
        char k[160];
        snprintf(k, sizeof k, "%.*s", (int)(n < sizeof k - 1 ? n : sizeof k - 1), p + strlen(what));
        if (strstr(k, "avx512_core_bf16") || strstr(k, "avx512_core_amx")) return 1;
    }
    return 0;
}

static const nn_op *conv_shapes(size_t *n) {
    static nn_op shapes[7];
    const nn_op s[] = {
        conv_op(8, 1, 28, 28, 32, 3, 1, 0),     /* mnist_cnn conv1 */
        conv_op(8, 32, 26, 26, 64, 3, 1, 0),    /* mnist_cnn conv2 */
        conv_op(4, 3, 32, 32, 50, 3, 1, 1),     /* cifar10_vgg conv1 */
        conv_op(4, 64, 16, 16, 64, 3, 1, 1),    /* a 3x3 that fp32 runs as Winograd */
        conv_op(2, 17, 11, 10, 19, 3, 2, 1),    /* stride 2, odd channels */
        conv_op(1, 20, 9, 9, 33, 1, 1, 0),      /* 1x1 */
        conv_op(2, 8, 13, 12, 16, 5, 2, 2),     /* 5x5 stride 2 pad 2 */
    };
    memcpy(shapes, s, sizeof s);
    *n = sizeof s / sizeof s[0];
    return shapes;
}

/* Every pass of every convolution in bf16 (dnnl otherwise times each pass in both types and keeps the faster,
 * conv2d_chosen below). */
Test(bf16, conv2d, .timeout = 600) {
    setenv("SD_DNNL_BF16_PASSES", "all", 1);
    nn_backend *be = open_bf16(), *ref = open_named("ref", "fp32");
    size_t n;
    const nn_op *shapes = conv_shapes(&n);
    g_worst = 0;
    char label[96];
    for (size_t i = 0; i < n; i++) {
        const nn_op o = shapes[i];
        snprintf(label, sizeof label, "conv n%d %d->%d %dx%d k%d s%d p%d", o.n, o.c, o.oc, o.h, o.w, o.kh, o.sh, o.ph);
        check_layer(be, ref, o, label);
    }
    cr_expect(g_worst > FP32_LEVEL, "largest error %.2e: at fp32's level, so nothing ran in bf16", g_worst);
    char impl[1024];
    impl_of(be, impl, sizeof impl);
    printf("backend_impl: %s\n", impl);
    cr_expect(strstr(impl, "oneDNN bf16") && kernel_is_bf16(impl, "conv fwd ") && kernel_is_bf16(impl, "bwd-data ") &&
              kernel_is_bf16(impl, "bwd-weights "), "not oneDNN's bf16 kernels: %s", impl);
    nn_backend_free(ref);
    nn_backend_free(be);
}

/* The same shapes with each pass in the type that timed faster: every output within bf16's tolerance
 * whichever type ran, and the kernels named are the ones chosen. */
Test(bf16, conv2d_chosen, .timeout = 600) {
    unsetenv("SD_DNNL_BF16_PASSES");
    nn_backend *be = open_bf16(), *ref = open_named("ref", "fp32");
    size_t n;
    const nn_op *shapes = conv_shapes(&n);
    char label[96];
    for (size_t i = 0; i < n; i++) {
        const nn_op o = shapes[i];
        snprintf(label, sizeof label, "chosen conv n%d %d->%d %dx%d k%d s%d p%d", o.n, o.c, o.oc, o.h, o.w, o.kh,
                 o.sh, o.ph);
        check_layer(be, ref, o, label);
    }
    char impl[1024];
    impl_of(be, impl, sizeof impl);
    printf("backend_impl: %s\n", impl);
    cr_expect(strstr(impl, "conv fwd ") && strstr(impl, "bwd-data ") && strstr(impl, "bwd-weights "),
              "the convolutions' kernels are not named: %s", impl);
    nn_backend_free(ref);
    nn_backend_free(be);
}

/* nchw <-> fmt (nChw16c: padded channels zero, as oneDNN requires of its inputs; nhwc) */
static float *to_blocked(int fmt, const float *a, int n, int c, int hw) {
    float *b = calloc(nn_fmt_elems(fmt, n, c, hw, 1), sizeof(float));
    cr_assert_not_null(b);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < c; k++)
            for (int s = 0; s < hw; s++) b[nn_fmt_at(fmt, c, hw, i, k, s)] = a[((size_t)i * c + k) * hw + s];
    return b;
}
static void from_blocked(int fmt, float *a, const float *b, int n, int c, int hw) {
    for (int i = 0; i < n; i++)
        for (int k = 0; k < c; k++)
            for (int s = 0; s < hw; s++) a[((size_t)i * c + k) * hw + s] = b[nn_fmt_at(fmt, c, hw, i, k, s)];
}

/* Backward only (dx written, dw and db accumulated onto dw0, db0), x and dy given nchw and passed to be in
 * op.fmt_in / fmt_out; dx comes back nchw. db is NULL without a bias. */
static void run_bwd(nn_backend *be, nn_op op, const float *x, const float *w, const float *dy, const float *dw0,
                    const float *db0, float *dx, float *dw, float *db) {
    const size_t nx = nn_fmt_elems(op.fmt_in, op.n, op.c, op.h, op.w);
    const size_t ny = nn_fmt_elems(op.fmt_out, op.n, op.oc, op.oh, op.ow);
    const size_t nw = (size_t)op.oc * op.c * op.kh * op.kw, nb = (size_t)op.oc;
    const int bx = op.fmt_in != NN_FMT_NCHW, by = op.fmt_out != NN_FMT_NCHW;
    float *xb = bx ? to_blocked(op.fmt_in, x, op.n, op.c, op.h * op.w) : NULL;
    float *dyb = by ? to_blocked(op.fmt_out, dy, op.n, op.oc, op.oh * op.ow) : NULL;
    op.priv = NULL;
    if (be->ops->prepare) OK(be->ops->prepare(be, &op), be);
    void *dX = dev(be, bx ? xb : x, nx * 4), *dW = dev(be, w, nw * 4), *dDY = dev(be, by ? dyb : dy, ny * 4);
    void *dDX = dev(be, NULL, nx * 4), *dDW = dev(be, dw0, nw * 4), *dDB = op.has_bias ? dev(be, db0, nb * 4) : NULL;
    OK(be->ops->conv2d_backward(be, &op, dDX, dDW, dDB, dDY, dX, dW), be);
    float *g = host(be, dDX, nx);
    if (bx) from_blocked(op.fmt_in, dx, g, op.n, op.c, op.h * op.w);
    else memcpy(dx, g, nx * 4);
    free(g);
    g = host(be, dDW, nw);
    memcpy(dw, g, nw * 4);
    free(g);
    if (op.has_bias) {
        g = host(be, dDB, nb);
        memcpy(db, g, nb * 4);
        free(g);
        nn_dev_free(be, dDB, nb * 4);
    }
    nn_dev_free(be, dX, nx * 4); nn_dev_free(be, dW, nw * 4); nn_dev_free(be, dDY, ny * 4);
    nn_dev_free(be, dDX, nx * 4); nn_dev_free(be, dDW, nw * 4);
    if (be->ops->release) be->ops->release(be, &op);
    free(xb); free(dyb);
}

/* Backward-weights as im2col + one bf16 matmul, forced (SD_DNNL_BWDW=matmul; matmul1: one image per matmul call):
 * dW and db (accumulated) and dx (backward-data then stages its own dy) against ref, over stride 1 and 2, padding,
 * 1x1, 3x3 and 5x5, nchw, nChw16c and nhwc inputs and outputs, with and without a bias, channels not multiples of
 * 16. */
static void bwdw_matmul(const char *mode) {
    unsetenv("SD_DNNL_BF16_PASSES");
    setenv("SD_DNNL_BWDW", mode, 1);
    nn_backend *be = open_bf16(), *ref = open_named("ref", "fp32");
    struct { nn_op op; int fin, fout; } cases[] = {
        {conv_op(4, 20, 9, 9, 33, 3, 1, 1), NN_FMT_NCHW, NN_FMT_NCHW},
        {conv_op(2, 17, 11, 10, 19, 3, 2, 1), NN_FMT_NCHW16C, NN_FMT_NCHW16C},
        {conv_op(3, 24, 8, 8, 40, 1, 1, 0), NN_FMT_NCHW16C, NN_FMT_NCHW},
        {conv_op(2, 16, 9, 9, 32, 1, 2, 0), NN_FMT_NCHW, NN_FMT_NCHW16C},
        {conv_op(2, 8, 13, 12, 16, 5, 2, 2), NN_FMT_NCHW16C, NN_FMT_NCHW16C},
        {conv_op(4, 64, 4, 4, 48, 3, 1, 1), NN_FMT_NCHW16C, NN_FMT_NCHW16C},   /* resnet's small-image shape */
        {conv_op(1, 3, 12, 12, 8, 3, 1, 0), NN_FMT_NCHW, NN_FMT_NCHW},
        {conv_op(1, 20, 12, 12, 8, 9, 1, 1), NN_FMT_NCHW16C, NN_FMT_NCHW},    /* over 64 kernel positions */
        {conv_op(2, 17, 11, 10, 19, 3, 2, 1), NN_FMT_NHWC, NN_FMT_NHWC},      /* nhwc (SD_DNNL_BLOCK=nhwc) */
        {conv_op(3, 24, 8, 8, 40, 1, 1, 0), NN_FMT_NHWC, NN_FMT_NCHW},
        {conv_op(2, 16, 9, 9, 32, 1, 2, 0), NN_FMT_NCHW, NN_FMT_NHWC},
    };
    const size_t ncase = sizeof cases / sizeof cases[0];
    double worst_w = 0;
    for (size_t i = 0; i < ncase; i++) {
        nn_op op = cases[i].op;
        op.has_bias = i % 2 == 0;
        const size_t nx = (size_t)op.n * op.c * op.h * op.w, ny = (size_t)op.n * op.oc * op.oh * op.ow;
        const size_t nw = (size_t)op.oc * op.c * op.kh * op.kw, nb = (size_t)op.oc;
        float *x = rnd_buf(nx, 1.0f), *w = rnd_buf(nw, 0.5f), *dy = rnd_buf(ny, 1.0f);
        /* dw0, db0 as large as the gradients: an overwrite instead of += shows */
        float *dw0 = rnd_buf(nw, 10.0f), *db0 = rnd_buf(nb, 10.0f);
        float *rdx = malloc(nx * 4), *rdw = malloc(nw * 4), *rdb = malloc(nb * 4);
        float *gdx = malloc(nx * 4), *gdw = malloc(nw * 4), *gdb = malloc(nb * 4);
        cr_assert(rdx && rdw && rdb && gdx && gdw && gdb);
        run_bwd(ref, op, x, w, dy, dw0, db0, rdx, rdw, rdb);
        nn_op ob = op;
        ob.fmt_in = cases[i].fin;
        ob.fmt_out = cases[i].fout;
        run_bwd(be, ob, x, w, dy, dw0, db0, gdx, gdw, gdb);
        char what[160];
        snprintf(what, sizeof what, "%s n%d %d->%d %dx%d k%d s%d p%d %s/%s%s", mode, op.n, op.c, op.oc, op.h, op.w,
                 op.kh, op.sh, op.ph, nn_fmt_name(cases[i].fin), nn_fmt_name(cases[i].fout),
                 op.has_bias ? " bias" : "");
        char lab[200];
        snprintf(lab, sizeof lab, "%s dw (+=)", what);
        expect_close(lab, gdw, rdw, nw);
        const double ew = tu_rel_err(gdw, rdw, nw);
        if (ew > worst_w) worst_w = ew;
        snprintf(lab, sizeof lab, "%s dx", what);
        expect_close(lab, gdx, rdx, nx);
        if (op.has_bias) {
            snprintf(lab, sizeof lab, "%s db (+=)", what);
            expect_close(lab, gdb, rdb, nb);
        }
        free(x); free(w); free(dy); free(dw0); free(db0);
        free(rdx); free(rdw); free(rdb); free(gdx); free(gdw); free(gdb);
    }
    /* dW went through bf16 (the matmul), so it cannot sit at fp32's level */
    cr_expect(worst_w > FP32_LEVEL, "largest dW error %.2e: at fp32's level, so no bf16 matmul ran", worst_w);
    char impl[1024];
    impl_of(be, impl, sizeof impl);
    printf("backend_impl: %s\n", impl);
    cr_expect(strstr(impl, "bwd-weights im2col+matmul ") && kernel_is_bf16(impl, "bwd-weights im2col+matmul "),
              "backward-weights did not run as a bf16 matmul: %s", impl);
    cr_expect(!strstr(impl, "bwd-weights jit") && !strstr(impl, "bwd-weights brg"),
              "a backward-weights convolution was made though the matmul was forced: %s", impl);
    unsetenv("SD_DNNL_BWDW");
    nn_backend_free(ref);
    nn_backend_free(be);
}

Test(bf16, conv2d_bwdw_matmul, .timeout = 600) { bwdw_matmul("matmul"); }
Test(bf16, conv2d_bwdw_matmul1, .timeout = 600) { bwdw_matmul("matmul1"); }

/* Forward and backward-data of small outputs (oh*ow <= 16) as bf16 matmuls over the column matrix, forced
 * (SD_DNNL_GEMM=on): y, dx, dw (+=) and db against ref at 4x4, 2x2, stride 2, 1x1 and 5x5, channels not multiples
 * of 16, in nchw; dx again between nChw16c tensors with and without a bias; and the matmuls are what ran. */
Test(bf16, conv2d_small_matmul, .timeout = 600) {
    unsetenv("SD_DNNL_BF16_PASSES");
    setenv("SD_DNNL_GEMM", "on", 1);
    nn_backend *be = open_bf16(), *ref = open_named("ref", "fp32");
    const nn_op shapes[] = {
        conv_op(4, 64, 4, 4, 48, 3, 1, 1),      /* resnet18_cifar's last stage, fewer channels */
        conv_op(3, 40, 2, 2, 24, 3, 1, 1),      /* vgg16_cifar's 2x2 */
        conv_op(2, 17, 7, 8, 19, 3, 2, 1),      /* stride 2 into 4x4 */
        conv_op(2, 33, 4, 4, 20, 1, 1, 0),      /* 1x1 */
        conv_op(2, 8, 6, 6, 16, 5, 2, 2),       /* 5x5 stride 2 pad 2 */
    };
    g_worst = 0;
    char label[128];
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const nn_op o = shapes[i];
        snprintf(label, sizeof label, "small mm n%d %d->%d %dx%d k%d s%d p%d", o.n, o.c, o.oc, o.h, o.w, o.kh, o.sh,
                 o.ph);
        check_layer(be, ref, o, label);
    }
    cr_expect(g_worst > FP32_LEVEL, "largest error %.2e: at fp32's level, so no bf16 matmul ran", g_worst);
    for (int v = 0; v < 4; v++) {   /* dx between blocked tensors: col2im into nChw16c, and into nhwc */
        const int bias = v & 1, fmt = v < 2 ? NN_FMT_NCHW16C : NN_FMT_NHWC;
        nn_op op = conv_op(2, 20, 4, 4, 36, 3, 1, 1);
        op.has_bias = bias;
        const size_t nx = (size_t)op.n * op.c * op.h * op.w, ny = (size_t)op.n * op.oc * op.oh * op.ow;
        const size_t nw = (size_t)op.oc * op.c * op.kh * op.kw, nb = (size_t)op.oc;
        float *x = rnd_buf(nx, 1.0f), *w = rnd_buf(nw, 0.5f), *dy = rnd_buf(ny, 1.0f);
        float *dw0 = rnd_buf(nw, 10.0f), *db0 = rnd_buf(nb, 10.0f);
        float *rdx = malloc(nx * 4), *rdw = malloc(nw * 4), *rdb = malloc(nb * 4);
        float *gdx = malloc(nx * 4), *gdw = malloc(nw * 4), *gdb = malloc(nb * 4);
        cr_assert(rdx && rdw && rdb && gdx && gdw && gdb);
        run_bwd(ref, op, x, w, dy, dw0, db0, rdx, rdw, rdb);
        nn_op ob = op;
        ob.fmt_in = ob.fmt_out = fmt;
        run_bwd(be, ob, x, w, dy, dw0, db0, gdx, gdw, gdb);
        snprintf(label, sizeof label, "small mm %s%s dx", nn_fmt_name(fmt), bias ? " bias" : "");
        expect_close(label, gdx, rdx, nx);
        snprintf(label, sizeof label, "small mm %s%s dw (+=)", nn_fmt_name(fmt), bias ? " bias" : "");
        expect_close(label, gdw, rdw, nw);
        free(x); free(w); free(dy); free(dw0); free(db0);
        free(rdx); free(rdw); free(rdb); free(gdx); free(gdw); free(gdb);
    }
    char impl[1024];
    impl_of(be, impl, sizeof impl);
    printf("backend_impl: %s\n", impl);
    cr_expect(kernel_is_bf16(impl, "conv fwd im2col+matmul ") && kernel_is_bf16(impl, "bwd-data matmul+col2im "),
              "forward and backward-data did not run as bf16 matmuls: %s", impl);
    unsetenv("SD_DNNL_GEMM");
    nn_backend_free(ref);
    nn_backend_free(be);
}

Test(bf16, dense, .timeout = 300) {
    nn_backend *be = open_bf16(), *ref = open_named("ref", "fp32");
    const int shapes[][3] = {{128, 784, 512}, {128, 512, 10}, {64, 9216, 128}, {3, 33, 65}, {1, 17, 3}};
    g_worst = 0;
    char label[96];
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        nn_op o = {.kind = NN_OP_DENSE, .n = shapes[i][0], .c = shapes[i][1], .h = 1, .w = 1, .oc = shapes[i][2],
                   .oh = 1, .ow = 1, .has_bias = 1};
        snprintf(label, sizeof label, "dense n%d %d->%d", o.n, o.c, o.oc);
        check_layer(be, ref, o, label);
    }
    cr_expect(g_worst > FP32_LEVEL, "largest error %.2e: at fp32's level, so nothing ran in bf16", g_worst);
    char impl[1024];
    impl_of(be, impl, sizeof impl);
    cr_expect(kernel_is_bf16(impl, "matmul "), "not oneDNN's bf16 matmul: %s", impl);
    nn_backend_free(ref);
    nn_backend_free(be);
}

/* The eval forward (the fused inference convolution) and one training step (forward, backward, optimizer) of a
 * workload at batch 16 on the same data and weights, bf16 dnnl against fp32 ref. A ReLU input within bf16 rounding
 * of 0 (~0.5% of them) may fall on the other side, which swaps that unit's whole gradient row in every layer
 * below: measured gradient NMSE 4e-4 (mnist_cnn) to 5e-3 (mnist_mlp), all of it below the last ReLU; the last
 * layer's dW, above every such decision, stays at (bf16 rounding)^2 ~ 2e-5. */
static void step_vs_ref(const char *workload, const char *want_impl) {
    nn_backend *be = open_bf16(), *ref = open_named("ref", "fp32");
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, "workloads", workload), 0, "%s", sd_errmsg());
    w.batch = 16;
    nn_model *m[2] = {NULL, NULL};
    nn_backend *bes[2] = {ref, be};
    size_t nx = (size_t)w.batch * w.in_c * w.in_h * w.in_w;
    float *x = rnd_buf(nx, 1.0f);
    int32_t lab[16];
    for (int i = 0; i < 16; i++) lab[i] = i % w.classes;
    float *loss[2], *grads[2], *params[2], *out[2];
    size_t nlog = 0;
    for (int v = 0; v < 2; v++) {
        OK(nn_model_build(&m[v], &w, bes[v], w.batch, 42), bes[v]);
        OK(bes[v]->ops->upload(bes[v], m[v]->x, x, nx * 4), bes[v]);
        OK(bes[v]->ops->upload(bes[v], m[v]->labels, lab, sizeof lab), bes[v]);
        OK(nn_model_forward(m[v], 0, 0), bes[v]);
        const nn_layer *last = &m[v]->layers[m[v]->nlayers - 2];
        nlog = (size_t)last->op.n * last->op.oc * last->op.oh * last->op.ow;
        out[v] = malloc(sizeof(float) * nlog);
        cr_assert_not_null(out[v]);
        OK(bes[v]->ops->sync(bes[v]), bes[v]);
        OK(nn_model_download_y(m[v], m[v]->nlayers - 2, 0, out[v]), bes[v]);
        OK(nn_model_forward(m[v], 1, 7), bes[v]);
        OK(nn_model_backward(m[v]), bes[v]);
        loss[v] = host(bes[v], m[v]->loss, (size_t)w.batch);
        grads[v] = host(bes[v], m[v]->grads, m[v]->nparams);
        OK(nn_model_step(m[v]), bes[v]);
        params[v] = host(bes[v], m[v]->params, m[v]->nparams);
    }
    cr_assert_eq(m[0]->nparams, m[1]->nparams);
    double el = nmse(loss[1], loss[0], (size_t)w.batch), eg = nmse(grads[1], grads[0], m[0]->nparams);
    double ep = nmse(params[1], params[0], m[0]->nparams);
    double eo = tu_rel_err(out[1], out[0], nlog);
    for (int i = 0; getenv("SD_TEST_BF16_LAYERS") && i < m[0]->nlayers; i++) {
        const nn_layer *l = &m[0]->layers[i];
        if (l->w_len) printf("  layer %d %s dW NMSE %.2e\n", i, nn_op_name(l->op.kind),
                             nmse(grads[1] + l->w_off, grads[0] + l->w_off, l->w_len));
    }
    printf("dnnl bf16 %s step: loss NMSE %.2e, gradients NMSE %.2e, parameters NMSE %.2e; eval logits rel %.2e\n",
           workload, el, eg, ep, eo);
    /* the last layer's dW sits above every ReLU decision: bf16 rounding only */
    const nn_layer *top = NULL;
    for (int i = 0; i < m[0]->nlayers; i++) if (m[0]->layers[i].w_len) top = &m[0]->layers[i];
    cr_assert_not_null(top);
    double et = nmse(grads[1] + top->w_off, grads[0] + top->w_off, top->w_len);
    printf("  last layer dW NMSE %.2e\n", et);
    cr_expect(el < LOSS_NMSE, "%s: loss NMSE %.2e >= %.0e", workload, el, LOSS_NMSE);
    cr_expect(et < TOP_NMSE, "%s: last layer's dW NMSE %.2e >= %.0e", workload, et, TOP_NMSE);
    cr_expect(eg < STEP_NMSE && ep < STEP_NMSE, "%s: gradients NMSE %.2e or parameters NMSE %.2e >= %.0e", workload,
              eg, ep, STEP_NMSE);
    cr_expect(eg > 1e-9, "%s: gradients NMSE %.2e: nothing ran in bf16", workload, eg);
    cr_expect(eo < BF16_TOL, "%s: eval logits relative error %.2e >= %.1e", workload, eo, BF16_TOL);
    if (want_impl) {
        char impl[1024];
        impl_of(be, impl, sizeof impl);
        cr_expect(strstr(impl, want_impl) != NULL, "%s: \"%s\" did not run: backend_impl %s", workload, want_impl,
                  impl);
    }
    for (int v = 0; v < 2; v++) {
        free(loss[v]); free(grads[v]); free(params[v]); free(out[v]);
        nn_model_free(m[v]);
    }
    free(x);
    sd_workload_free(&w);
    nn_backend_free(ref);
    nn_backend_free(be);
}

Test(bf16, step_mnist_mlp, .timeout = 600) { step_vs_ref("mnist_mlp", NULL); }
Test(bf16, step_mnist_cnn, .timeout = 600) { step_vs_ref("mnist_cnn", NULL); }

/* A graph in nhwc whose convolution passes run fp32 (SD_DNNL_BF16_PASSES=fp32: what the timing leaves in fp32, made
 * certain) with the host Winograd forced where it can run: those passes run there, the matmuls in bf16. */
Test(bf16, step_nhwc_fp32_passes_winograd, .timeout = 600) {
    setenv("SD_DNNL_BLOCK", "nhwc", 1);
    setenv("SD_DNNL_BF16_PASSES", "fp32", 1);
    setenv("SD_DNNL_WINO", "on", 1);
    step_vs_ref("mnist_cnn", "bwd-data host winograd");
}

/* The yardstick stays fp32: the reference back-end refuses bf16, a usage error (exit 2). */
Test(bf16, ref_refuses) {
    nn_backend_opts o = {.precision = "bf16", .quiet = 1};
    nn_backend *be = NULL;
    int rc = nn_backend_new(&be, "ref", &o, NULL, 0);
    cr_expect_eq(rc, SD_EUSAGE, "ref with bf16 returned %d", rc);
    cr_expect_eq(sd_exit_code(rc), 2);
    cr_expect(strstr(sd_errmsg(), "fp32 only") != NULL, "%s", sd_errmsg());
    nn_backend_free(be);
}

/* A CPU without AVX512_BF16 or AMX, as oneDNN sees it with its instruction set capped at AVX-512 core: dnnl and
 * auto refuse bf16 with a usage error naming the CPU; fp32 still starts. */
Test(bf16, no_bf16_cpu_refuses) {
    if (!nn_backend_compiled("dnnl")) TU_SKIP("dnnl: not compiled into this build (%s)", nn_backend_list());
    setenv("ONEDNN_MAX_CPU_ISA", "AVX512_CORE", 1);   /* read once, at oneDNN's first ISA query in this process */
    nn_backend_opts o = {.precision = "bf16", .quiet = 1};
    nn_backend *be = NULL;
    int rc = nn_backend_new(&be, "dnnl", &o, NULL, 0);
    cr_expect_eq(rc, SD_EUSAGE, "dnnl with bf16 on an AVX512_CORE-capped oneDNN returned %d", rc);
    cr_expect(strstr(sd_errmsg(), "bf16 is not supported on this CPU") != NULL, "%s", sd_errmsg());
    nn_backend_free(be);
    be = NULL;
    rc = nn_backend_new(&be, "auto", &o, NULL, 0);
    cr_expect_eq(rc, SD_EUSAGE, "auto with bf16 returned %d: %s", rc, sd_errmsg());
    cr_expect(strstr(sd_errmsg(), "not supported on this CPU") != NULL, "%s", sd_errmsg());
    nn_backend_free(be);
    nn_backend_free(open_named("dnnl", "fp32"));
}

/* fp16 is cuDNN's (it needs loss scaling and tensor cores): the CPU back-ends refuse it with a usage error naming
 * where it runs, never an fp32 run under an fp16 label. */
Test(bf16, cpu_refuses_fp16) {
    nn_backend_opts o = {.precision = "fp16", .quiet = 1};
    const char *names[] = {"ref", "dnnl"};
    for (int i = 0; i < 2; i++) {
        if (!nn_backend_compiled(names[i])) continue;
        nn_backend *be = NULL;
        int rc = nn_backend_new(&be, names[i], &o, NULL, 0);
        cr_expect_eq(rc, SD_EUSAGE, "%s with fp16 returned %d", names[i], rc);
        cr_expect(strstr(sd_errmsg(), "fp16 runs on cudnn") != NULL, "%s: %s", names[i], sd_errmsg());
        nn_backend_free(be);
    }
}
