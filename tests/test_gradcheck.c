/* test_gradcheck — finite-difference checks of every layer's backward on the reference back-end, of
 * a whole model's gradient, and of each optimizer step against the formulas in double precision. */
#include "testutil.h"

#include <math.h>

#include "core/err.h"
#include "nn/backend_impl.h"
#include "nn/kernels.h"
#include "nn/model.h"

static nn_backend *ref(int threads) {
    nn_backend *be = NULL;
    nn_backend_opts o = {.threads = threads};
    cr_assert_eq(nn_backend_new(&be, "ref", &o, NULL, 0), 0, "%s", sd_errmsg());
    return be;
}

static uint64_t g_rng = 12345;
static float urand(float lo, float hi) {
    g_rng = nn_hash64(g_rng);
    return lo + (hi - lo) * (float)(g_rng >> 40) / 16777216.0f;
}
static float *rnd(size_t n, float lo, float hi) {
    float *p = malloc(sizeof(float) * (n ? n : 1));
    for (size_t i = 0; i < n; i++) p[i] = urand(lo, hi);
    return p;
}
static size_t in_n(const nn_op *op) { return (size_t)op->n * op->c * op->h * op->w; }
static size_t out_n(const nn_op *op) { return (size_t)op->n * op->oc * op->oh * op->ow; }

/* L = sum(y .* r) in double */
static double dotd(const float *y, const float *r, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)y[i] * r[i];
    return s;
}

/* Compare an analytic gradient with central differences of f over every element of v (or a sample
 * of 60 when larger). */
typedef double (*loss_fn)(void *ctx);
static void check_grad(const char *what, float *v, size_t n, const float *ana, loss_fn f, void *ctx, float h) {
    size_t step = n > 60 ? n / 60 : 1;
    int checked = 0;
    for (size_t i = 0; i < n; i += step) {
        float save = v[i];
        v[i] = save + h;
        double lp = f(ctx);
        v[i] = save - h;
        double lm = f(ctx);
        v[i] = save;
        double num = (lp - lm) / (2.0 * h);
        double tol = 2e-3 * fmax(1.0, fabs(num));
        cr_assert(fabs(num - ana[i]) <= tol, "%s[%zu]: numeric %.6f vs analytic %.6f", what, i, num, (double)ana[i]);
        checked++;
    }
    cr_assert_gt(checked, 0);
}

/* As check_grad, for a network with ReLUs after batch norm: a step of h can cross a ReLU kink (the
 * difference quotient is then off by a few %), so each element passes if the quotient at h or at h/5
 * agrees with the analytic value. */
static void check_grad_kinks(const char *what, float *v, size_t n, const float *ana, loss_fn f, void *ctx, float h) {
    size_t step = n > 60 ? n / 60 : 1;
    for (size_t i = 0; i < n; i += step) {
        double num[2];
        for (int k = 0; k < 2; k++) {
            float hk = k ? h / 5 : h, save = v[i];
            v[i] = save + hk;
            double lp = f(ctx);
            v[i] = save - hk;
            double lm = f(ctx);
            v[i] = save;
            num[k] = (lp - lm) / (2.0 * hk);
        }
        int ok = 0;
        for (int k = 0; k < 2; k++) ok |= fabs(num[k] - ana[i]) <= 2e-3 * fmax(1.0, fabs(num[k]));
        cr_assert(ok, "%s[%zu]: numeric %.6f (h/5: %.6f) vs analytic %.6f", what, i, num[0], num[1], (double)ana[i]);
    }
}

/* ---- per-op harness ---------------------------------------------------------------------------- */

typedef struct opctx {
    nn_backend *be;
    nn_op op;
    float *x, *w, *b, *y, *r;
    void *ws;
    uint64_t seed;
} opctx;

static void fwd(opctx *c) {
    const nn_backend_ops *o = c->be->ops;
    int rc = 0;
    switch (c->op.kind) {
    case NN_OP_DENSE: rc = o->dense_forward(c->be, &c->op, c->y, c->x, c->w, c->b); break;
    case NN_OP_CONV2D: rc = o->conv2d_forward(c->be, &c->op, c->y, c->x, c->w, c->b); break;
    case NN_OP_MAXPOOL: rc = o->maxpool_forward(c->be, &c->op, c->y, c->ws, c->x); break;
    case NN_OP_RELU: rc = o->relu_forward(c->be, &c->op, c->y, c->x); break;
    case NN_OP_DROPOUT: rc = o->dropout_forward(c->be, &c->op, c->y, c->ws, c->x, c->seed); break;
    case NN_OP_AVGPOOL: case NN_OP_GLOBAL_AVGPOOL: rc = o->avgpool_forward(c->be, &c->op, c->y, c->x); break;
    case NN_OP_BATCHNORM: {
        float running[64];
        for (int k = 0; k < 2 * c->op.c; k++) running[k] = k < c->op.c ? 0.0f : 1.0f;
        rc = o->batchnorm_forward(c->be, &c->op, c->y, c->ws, c->x, c->w, c->b, running, 1);
        break;
    }
    default: cr_assert_fail("op");
    }
    cr_assert_eq(rc, 0, "%s", sd_errmsg());
}

static double op_loss(void *p) {
    opctx *c = p;
    fwd(c);
    return dotd(c->y, c->r, out_n(&c->op));
}

static void run_op_check(nn_op op, int with_w, float xlo, float xhi) {
    opctx c = {.be = ref(2), .op = op, .seed = 99};
    size_t wn = 0;
    if (op.kind == NN_OP_DENSE) wn = (size_t)op.oc * op.c;
    if (op.kind == NN_OP_CONV2D) wn = (size_t)op.oc * op.c * op.kh * op.kw;
    if (op.kind == NN_OP_BATCHNORM) wn = (size_t)op.c;
    c.x = rnd(in_n(&op), xlo, xhi);
    c.w = with_w ? rnd(wn, -1, 1) : NULL;
    c.b = with_w && op.has_bias ? rnd((size_t)op.oc, -1, 1) : NULL;
    c.y = rnd(out_n(&op), 0, 0);
    c.r = rnd(out_n(&op), -1, 1);
    size_t wsb = c.be->ops->workspace_size(c.be, &op);
    c.ws = wsb ? malloc(wsb) : NULL;
    fwd(&c);
    float *dx = rnd(in_n(&op), 7, 7);            /* garbage: backward must overwrite dx */
    float *dw = wn ? rnd(wn, 0, 0) : NULL;
    float *db = c.b ? rnd((size_t)op.oc, 0, 0) : NULL;
    const nn_backend_ops *o = c.be->ops;
    int rc = 0;
    switch (op.kind) {
    case NN_OP_DENSE: rc = o->dense_backward(c.be, &op, dx, dw, db, c.r, c.x, c.w); break;
    case NN_OP_CONV2D: rc = o->conv2d_backward(c.be, &op, dx, dw, db, c.r, c.x, c.w); break;
    case NN_OP_MAXPOOL: rc = o->maxpool_backward(c.be, &op, dx, c.r, c.x, c.y, c.ws); break;
    case NN_OP_RELU: rc = o->relu_backward(c.be, &op, dx, c.r, c.y); break;
    case NN_OP_DROPOUT: rc = o->dropout_backward(c.be, &op, dx, c.r, c.ws); break;
    case NN_OP_AVGPOOL: case NN_OP_GLOBAL_AVGPOOL: rc = o->avgpool_backward(c.be, &op, dx, c.r); break;
    case NN_OP_BATCHNORM: rc = o->batchnorm_backward(c.be, &op, dx, dw, db, c.r, c.x, c.w, c.ws); break;
    default: break;
    }
    cr_assert_eq(rc, 0, "%s", sd_errmsg());
    check_grad("dx", c.x, in_n(&op), dx, op_loss, &c, 1e-2f);
    if (dw) check_grad("dw", c.w, wn, dw, op_loss, &c, 1e-2f);
    if (db) check_grad("db", c.b, (size_t)op.oc, db, op_loss, &c, 1e-2f);
    if (dw) {   /* backward accumulates into dw: a second call doubles it */
        float *dw2 = malloc(sizeof(float) * wn);
        memcpy(dw2, dw, sizeof(float) * wn);
        if (op.kind == NN_OP_DENSE) rc = o->dense_backward(c.be, &op, NULL, dw, db, c.r, c.x, c.w);
        else if (op.kind == NN_OP_BATCHNORM) rc = o->batchnorm_backward(c.be, &op, NULL, dw, db, c.r, c.x, c.w, c.ws);
        else rc = o->conv2d_backward(c.be, &op, NULL, dw, db, c.r, c.x, c.w);
        cr_assert_eq(rc, 0);
        for (size_t i = 0; i < wn; i++) cr_assert_float_eq(dw[i], 2 * dw2[i], 1e-4f * (1 + fabsf(dw2[i])));
        free(dw2);
    }
    free(c.x); free(c.w); free(c.b); free(c.y); free(c.r); free(c.ws); free(dx); free(dw); free(db);
    nn_backend_free(c.be);
}

Test(gradcheck, dense) {
    nn_op op = {.kind = NN_OP_DENSE, .n = 3, .c = 5, .h = 1, .w = 1, .oc = 4, .oh = 1, .ow = 1, .has_bias = 1};
    run_op_check(op, 1, -1, 1);
}

Test(gradcheck, dense_no_bias_batch1) {
    nn_op op = {.kind = NN_OP_DENSE, .n = 1, .c = 17, .h = 1, .w = 1, .oc = 3, .oh = 1, .ow = 1, .has_bias = 0};
    run_op_check(op, 1, -1, 1);
}

Test(gradcheck, conv2d_stride2_pad1) {
    nn_op op = {.kind = NN_OP_CONV2D, .n = 2, .c = 3, .h = 7, .w = 6, .oc = 4, .kh = 3, .kw = 3, .sh = 2, .sw = 2,
                .ph = 1, .pw = 1, .has_bias = 1};
    op.oh = (op.h + 2 * op.ph - op.kh) / op.sh + 1;
    op.ow = (op.w + 2 * op.pw - op.kw) / op.sw + 1;
    run_op_check(op, 1, -1, 1);
}

Test(gradcheck, conv2d_rect_valid) {
    nn_op op = {.kind = NN_OP_CONV2D, .n = 3, .c = 2, .h = 5, .w = 6, .oc = 5, .kh = 3, .kw = 2, .sh = 1, .sw = 1,
                .ph = 0, .pw = 0, .has_bias = 1};
    op.oh = op.h - op.kh + 1;
    op.ow = op.w - op.kw + 1;
    run_op_check(op, 1, -1, 1);
}

/* Max-pool and ReLU are piecewise linear: inputs are kept away from the kinks (distinct values, |x| > h). */
static void spread_inputs(float *x, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float v = 0.1f * (float)((i * 7919) % n) + 0.05f;
        x[i] = (i % 2) ? v : -v;
    }
}

Test(gradcheck, maxpool_and_relu) {
    nn_op pools[2] = {
        {.kind = NN_OP_MAXPOOL, .n = 2, .c = 3, .h = 5, .w = 5, .oc = 3, .oh = 2, .ow = 2, .kh = 2, .kw = 2, .sh = 2, .sw = 2},
        {.kind = NN_OP_MAXPOOL, .n = 1, .c = 2, .h = 6, .w = 5, .oc = 2, .oh = 3, .ow = 3, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .ph = 1, .pw = 1},
    };
    for (int k = 0; k < 2; k++) {
        opctx c = {.be = ref(1), .op = pools[k]};
        size_t n = in_n(&c.op);
        c.x = malloc(sizeof(float) * n);
        spread_inputs(c.x, n);
        c.y = rnd(out_n(&c.op), 0, 0);
        c.r = rnd(out_n(&c.op), -1, 1);
        c.ws = malloc(c.be->ops->workspace_size(c.be, &c.op));
        fwd(&c);
        float *dx = rnd(n, 3, 3);
        cr_assert_eq(c.be->ops->maxpool_backward(c.be, &c.op, dx, c.r, c.x, c.y, c.ws), 0);
        check_grad("maxpool dx", c.x, n, dx, op_loss, &c, 1e-2f);
        free(c.x); free(c.y); free(c.r); free(c.ws); free(dx);
        nn_backend_free(c.be);
    }
    nn_op relu = {.kind = NN_OP_RELU, .n = 2, .c = 3, .h = 4, .w = 3, .oc = 3, .oh = 4, .ow = 3};
    opctx c = {.be = ref(2), .op = relu};
    size_t n = in_n(&relu);
    c.x = malloc(sizeof(float) * n);
    spread_inputs(c.x, n);
    c.y = rnd(n, 0, 0);
    c.r = rnd(n, -1, 1);
    fwd(&c);
    float *dx = rnd(n, 3, 3);
    cr_assert_eq(c.be->ops->relu_backward(c.be, &relu, dx, c.r, c.y), 0);
    check_grad("relu dx", c.x, n, dx, op_loss, &c, 1e-2f);
    free(c.x); free(c.y); free(c.r); free(dx);
    nn_backend_free(c.be);
}

Test(gradcheck, dropout_mask_and_scale) {
    nn_op op = {.kind = NN_OP_DROPOUT, .n = 4, .c = 50, .h = 1, .w = 1, .oc = 50, .oh = 1, .ow = 1, .rate = 0.25f};
    run_op_check(op, 0, -1, 1);
    /* the kept fraction is near 1 - rate, and the mask is nn_dropout_keep's */
    nn_backend *be = ref(2);
    nn_op big = {.kind = NN_OP_DROPOUT, .n = 100, .c = 1000, .h = 1, .w = 1, .oc = 1000, .oh = 1, .ow = 1, .rate = 0.25f};
    size_t n = in_n(&big);
    float *x = rnd(n, 1, 1), *y = rnd(n, 0, 0);
    void *ws = malloc(be->ops->workspace_size(be, &big));
    cr_assert_eq(be->ops->dropout_forward(be, &big, y, ws, x, 7), 0);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        int keep = nn_dropout_keep(7, i, 0.25f);
        kept += keep;
        cr_assert_float_eq(y[i], keep ? 1.0f / 0.75f : 0.0f, 1e-6f);
    }
    cr_assert(fabs((double)kept / n - 0.75) < 0.01, "kept fraction %f", (double)kept / n);
    free(x); free(y); free(ws);
    nn_backend_free(be);
}

/* The mask's integer threshold (bits >= ceil(rate 2^24)) keeps exactly the elements the rule u >= rate keeps, u the
 * 24 bits times 2^-24 in float, which the framework runners reproduce: every rate near a threshold step, the edges. */
Test(gradcheck, dropout_threshold_is_the_float_rule) {
    const float rates[] = {0.0f, -0.5f, 0.1f, 0.2f, 0.25f, 1.0f / 3.0f, 0.5f, 0.9f, 0.99999994f, 1.0f, 1.5f,
                           5.9604645e-8f, 1.0f / 16777216.0f * 3.0f, nextafterf(0.25f, 0.0f), nextafterf(0.25f, 1.0f)};
    for (size_t r = 0; r < sizeof rates / sizeof *rates; r++) {
        const float rate = rates[r];
        const uint32_t thr = nn_dropout_threshold(rate);
        /* the bits on either side of the threshold, and a sample of hashes */
        for (int64_t b = (int64_t)thr - 2; b <= (int64_t)thr + 2; b++) {
            if (b < 0 || b >= 16777216) continue;
            const float u = (float)b * (1.0f / 16777216.0f);
            cr_assert_eq((uint32_t)b >= thr, u >= rate, "rate %.9g bits %lld: threshold %u", rate, (long long)b, thr);
        }
        for (uint64_t i = 0; i < 20000; i++) {
            const float u = (float)nn_dropout_bits(3, i) * (1.0f / 16777216.0f);
            cr_assert_eq(nn_dropout_keep(3, i, rate), u >= rate, "rate %.9g element %llu", rate, (unsigned long long)i);
        }
    }
    cr_assert_eq(nn_dropout_threshold(NAN), 16777216u);   /* u >= NaN: nothing kept */
}

typedef struct xent_ctx { nn_backend *be; nn_op op; float *z, *p, *l; int32_t *lab; } xent_ctx;
static double xent_loss(void *v) {
    xent_ctx *c = v;
    cr_assert_eq(c->be->ops->softmax_xent_forward(c->be, &c->op, c->p, c->l, c->z, c->lab), 0);
    double s = 0;
    for (int i = 0; i < c->op.n; i++) s += c->l[i];
    return s / c->op.n;
}

Test(gradcheck, softmax_cross_entropy) {
    xent_ctx c = {.be = ref(1)};
    c.op = (nn_op){.kind = NN_OP_SOFTMAX_XENT, .n = 5, .c = 7, .h = 1, .w = 1, .oc = 7, .oh = 1, .ow = 1};
    c.z = rnd(35, -3, 3);
    c.p = rnd(35, 0, 0);
    c.l = rnd(5, 0, 0);
    int32_t lab[5] = {0, 6, 3, 3, 1};
    c.lab = lab;
    xent_loss(&c);
    for (int i = 0; i < 5; i++) {   /* probabilities sum to 1; loss = -log p[label] */
        double s = 0;
        for (int k = 0; k < 7; k++) s += c.p[i * 7 + k];
        cr_assert_float_eq(s, 1.0, 1e-5);
        cr_assert_float_eq(c.l[i], -logf(c.p[i * 7 + lab[i]]), 1e-4);
    }
    float *dz = rnd(35, 0, 0);
    cr_assert_eq(c.be->ops->softmax_xent_backward(c.be, &c.op, dz, c.p, lab), 0);
    check_grad("dlogits", c.z, 35, dz, xent_loss, &c, 1e-2f);
    free(c.z); free(c.p); free(c.l); free(dz);
    nn_backend_free(c.be);
}

/* ---- graph ops ----------------------------------------------------------------------- */

Test(gradcheck, batchnorm_train) {
    const int shapes[][4] = {{3, 4, 5, 3}, {1, 3, 7, 5}, {5, 7, 1, 1}};
    for (int k = 0; k < 3; k++) {
        nn_op op = {.kind = NN_OP_BATCHNORM, .n = shapes[k][0], .c = shapes[k][1], .h = shapes[k][2], .w = shapes[k][3],
                    .has_bias = 1, .eps = 1e-3f, .momentum = 0.1f};
        op.oc = op.c; op.oh = op.h; op.ow = op.w;
        run_op_check(op, 1, -2, 2);
    }
}

Test(gradcheck, batchnorm_running_statistics) {
    nn_backend *be = ref(2);
    nn_op op = {.kind = NN_OP_BATCHNORM, .n = 4, .c = 2, .h = 3, .w = 1, .oc = 2, .oh = 3, .ow = 1, .has_bias = 1,
                .eps = 1e-5f, .momentum = 0.25f};
    float x[24], y[24], g[2] = {2, 0.5f}, b[2] = {1, -1}, run[4] = {0, 0, 1, 1}, ws[4];
    for (int i = 0; i < 24; i++) x[i] = (float)(i % 7) - 2.0f * (float)(i % 3);
    cr_assert_eq(be->ops->batchnorm_forward(be, &op, y, ws, x, g, b, run, 1), 0);
    for (int c = 0; c < 2; c++) {   /* batch mean/variance of channel c over n, h */
        double s = 0, q = 0;
        for (int i = 0; i < 4; i++) for (int h = 0; h < 3; h++) s += x[(i * 2 + c) * 3 + h];
        double mean = s / 12;
        for (int i = 0; i < 4; i++) for (int h = 0; h < 3; h++) { double d = x[(i * 2 + c) * 3 + h] - mean; q += d * d; }
        double var = q / 12;
        cr_assert_float_eq(run[c], 0.25 * mean, 1e-5);
        cr_assert_float_eq(run[2 + c], 0.75 + 0.25 * q / 11, 1e-5);
        float y0 = (float)(g[c] * (x[c * 3] - mean) / sqrt(var + 1e-5) + b[c]);
        cr_assert_float_eq(y[c * 3], y0, 1e-5);
    }
    /* inference uses the running statistics and leaves them alone */
    float run2[4] = {0.5f, -1, 4, 0.25f}, y2[24];
    cr_assert_eq(be->ops->batchnorm_forward(be, &op, y2, ws, x, g, b, run2, 0), 0);
    cr_assert_float_eq(y2[0], (float)(2 * (x[0] - 0.5) / sqrt(4 + 1e-5) + 1), 1e-5);
    cr_assert_float_eq(y2[3], (float)(0.5 * (x[3] + 1) / sqrt(0.25 + 1e-5) - 1), 1e-5);
    cr_assert_eq(run2[0], 0.5f);
    nn_backend_free(be);
}

Test(gradcheck, avgpool_and_global) {
    nn_op ops[3] = {
        {.kind = NN_OP_AVGPOOL, .n = 2, .c = 3, .h = 5, .w = 6, .oc = 3, .kh = 2, .kw = 2, .sh = 2, .sw = 2},
        {.kind = NN_OP_AVGPOOL, .n = 1, .c = 2, .h = 7, .w = 5, .oc = 2, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .ph = 1, .pw = 1},
        {.kind = NN_OP_GLOBAL_AVGPOOL, .n = 3, .c = 5, .h = 4, .w = 3, .oc = 5, .kh = 4, .kw = 3, .sh = 4, .sw = 3},
    };
    for (int k = 0; k < 3; k++) {
        nn_op op = ops[k];
        op.oh = (op.h + 2 * op.ph - op.kh) / op.sh + 1;
        op.ow = (op.w + 2 * op.pw - op.kw) / op.sw + 1;
        run_op_check(op, 0, -1, 1);
    }
    /* padding is not counted: a corner window of a 3x3/pad 1 pool averages 4 inputs */
    nn_backend *be = ref(1);
    nn_op op = ops[1];
    op.oh = 4; op.ow = 3;
    float x[70], y[24];
    for (int i = 0; i < 70; i++) x[i] = 1.0f;
    cr_assert_eq(be->ops->avgpool_forward(be, &op, y, x), 0);
    cr_assert_float_eq(y[0], 1.0f, 1e-6);
    nn_backend_free(be);
}

typedef struct cat_ctx { nn_backend *be; nn_op op; float *x[2], *y, *r; } cat_ctx;
static double cat_loss(void *v) {
    cat_ctx *c = v;
    cr_assert_eq(c->be->ops->concat_forward(c->be, &c->op, c->y, (const float *const *)c->x), 0);
    return dotd(c->y, c->r, out_n(&c->op));
}

Test(gradcheck, concat_and_add) {
    cat_ctx c = {.be = ref(2)};
    c.op = (nn_op){.kind = NN_OP_CONCAT, .n = 2, .c = 3, .h = 3, .w = 2, .oc = 8, .oh = 3, .ow = 2, .ninputs = 2,
                   .in_c = {3, 5}};
    size_t n0 = 2 * 3 * 6, n1 = 2 * 5 * 6;
    c.x[0] = rnd(n0, -1, 1); c.x[1] = rnd(n1, -1, 1);
    c.y = rnd(out_n(&c.op), 0, 0); c.r = rnd(out_n(&c.op), -1, 1);
    cat_loss(&c);
    cr_assert_eq(c.y[6 * 3], c.x[1][0]);   /* example 0, channel 3 = input 1's channel 0 */
    float *d0 = rnd(n0, 9, 9), *d1 = rnd(n1, 9, 9);
    float *dx[2] = {d0, d1};
    cr_assert_eq(c.be->ops->concat_backward(c.be, &c.op, dx, c.r), 0);
    check_grad("concat dx0", c.x[0], n0, d0, cat_loss, &c, 1e-2f);
    check_grad("concat dx1", c.x[1], n1, d1, cat_loss, &c, 1e-2f);
    float *d1b = rnd(n1, 5, 5);
    float *dxs[2] = {NULL, d1b};   /* a NULL slot is skipped */
    cr_assert_eq(c.be->ops->concat_backward(c.be, &c.op, dxs, c.r), 0);
    for (size_t i = 0; i < n1; i++) cr_assert_eq(d1b[i], d1[i]);
    /* add: y = a + b, in place too */
    nn_op add = {.kind = NN_OP_ADD, .n = 1, .c = 5, .h = 1, .w = 1, .oc = 5, .oh = 1, .ow = 1, .ninputs = 2};
    float a[5] = {1, 2, 3, 4, 5}, b[5] = {0.5f, -2, 1, 0, 7}, y[5];
    cr_assert_eq(c.be->ops->add_forward(c.be, &add, y, a, b), 0);
    cr_assert_eq(c.be->ops->add_forward(c.be, &add, a, a, b), 0);
    for (int i = 0; i < 5; i++) { cr_assert_eq(y[i], a[i]); cr_assert_eq(y[i], (float)(i + 1) + b[i]); }
    free(c.x[0]); free(c.x[1]); free(c.y); free(c.r); free(d0); free(d1); free(d1b);
    nn_backend_free(c.be);
}

typedef struct bce_ctx { nn_backend *be; nn_op op; float *z, *p, *l, *t; } bce_ctx;
static double bce_loss(void *v) {
    bce_ctx *c = v;
    cr_assert_eq(c->be->ops->sigmoid_bce_forward(c->be, &c->op, c->p, c->l, c->z, c->t), 0);
    double s = 0;
    for (int i = 0; i < c->op.n; i++) s += c->l[i];
    return s / c->op.n;
}

Test(gradcheck, sigmoid_binary_cross_entropy) {
    bce_ctx c = {.be = ref(1)};
    c.op = (nn_op){.kind = NN_OP_SIGMOID_BCE, .n = 4, .c = 6, .h = 1, .w = 1, .oc = 6, .oh = 1, .ow = 1};
    c.z = rnd(24, -4, 4);
    c.z[0] = 40.0f; c.z[1] = -40.0f;              /* saturated logits stay finite */
    c.t = rnd(24, 0, 1);
    for (int i = 0; i < 24; i += 3) c.t[i] = (float)(i % 2);
    c.p = rnd(24, 0, 0);
    c.l = rnd(4, 0, 0);
    bce_loss(&c);
    for (int i = 0; i < 4; i++) {   /* loss = mean_k -(t log p + (1-t) log(1-p)) */
        double s = 0;
        for (int k = 0; k < 6; k++) {
            double z = c.z[i * 6 + k], t = c.t[i * 6 + k];
            s += fmax(z, 0) - z * t + log1p(exp(-fabs(z)));
            cr_assert_float_eq(c.p[i * 6 + k], 1 / (1 + exp(-z)), 1e-6);
        }
        cr_assert_float_eq(c.l[i], s / 6, 1e-5);
        cr_assert(isfinite(c.l[i]));
    }
    float *dz = rnd(24, 0, 0);
    cr_assert_eq(c.be->ops->sigmoid_bce_backward(c.be, &c.op, dz, c.p, c.t), 0);
    c.z[0] = 2.0f; c.z[1] = -1.0f;                /* back to the smooth region for differences */
    bce_loss(&c);
    cr_assert_eq(c.be->ops->sigmoid_bce_backward(c.be, &c.op, dz, c.p, c.t), 0);
    check_grad("dlogits", c.z, 24, dz, bce_loss, &c, 1e-2f);
    free(c.z); free(c.p); free(c.l); free(c.t); free(dz);
    nn_backend_free(c.be);
}

/* ---- whole model ------------------------------------------------------------------------------- */

typedef struct model_ctx { nn_model *m; float *host; } model_ctx;

static double model_loss(void *v) {
    model_ctx *c = v;
    nn_model *m = c->m;
    cr_assert_eq(m->be->ops->upload(m->be, m->params, c->host, m->nparams * sizeof(float)), 0);
    cr_assert_eq(nn_model_forward(m, 1, 555), 0, "%s", sd_errmsg());
    double s = 0;
    for (int i = 0; i < m->batch; i++) s += m->loss[i];
    return s / m->batch;
}

Test(gradcheck, whole_model_conv_pool_dropout_dense) {
    nn_layer_spec layers[] = {
        {.kind = NN_OP_CONV2D, .units = 3, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1, .bias = 1},
        {.kind = NN_OP_RELU},
        {.kind = NN_OP_MAXPOOL, .kh = 2, .kw = 2, .sh = 2, .sw = 2},
        {.kind = NN_OP_DROPOUT, .rate = 0.3f},
        {.kind = NN_OP_FLATTEN},
        {.kind = NN_OP_DENSE, .units = 6, .bias = 1},
        {.kind = NN_OP_RELU},
        {.kind = NN_OP_DENSE, .units = 4, .bias = 1},
    };
    sd_workload w = {.name = "tiny", .in_c = 2, .in_h = 6, .in_w = 6, .classes = 4, .layers = layers, .nlayers = 8,
                     .optim = {.kind = NN_OPTIM_SGD, .lr = 0.1f}, .batch = 3};
    nn_backend *be = ref(2);
    nn_model *m = NULL;
    cr_assert_eq(nn_model_build(&m, &w, be, 3, 1), 0, "%s", sd_errmsg());
    cr_assert_eq(m->nparams, (size_t)(3 * 2 * 9 + 3) + (27 * 6 + 6) + (6 * 4 + 4));
    float *x = rnd((size_t)3 * 2 * 36, 0, 1);
    memcpy(m->x, x, sizeof(float) * 3 * 72);
    int32_t lab[3] = {1, 3, 0};
    memcpy(m->labels, lab, sizeof lab);
    model_ctx c = {.m = m, .host = malloc(sizeof(float) * m->nparams)};
    memcpy(c.host, m->params, sizeof(float) * m->nparams);
    model_loss(&c);
    cr_assert_eq(nn_model_backward(m), 0, "%s", sd_errmsg());
    float *g = malloc(sizeof(float) * m->nparams);
    memcpy(g, m->grads, sizeof(float) * m->nparams);
    check_grad("model params", c.host, m->nparams, g, model_loss, &c, 5e-3f);
    free(g); free(c.host); free(x);
    nn_model_free(m);
    nn_backend_free(be);
}

/* A DAG: residual block with a projection, a dense (concat) block whose input also feeds a
 * residual add, batch norm, average pooling and global average pooling, with either loss. Every
 * parameter's gradient by central differences, including through the summed fan-out gradients. */
static void dag_model_check(nn_loss_kind loss) {
#define L1(k, ...) {.kind = k, __VA_ARGS__}
    nn_layer_spec layers[] = {
        /* 0 */ L1(NN_OP_CONV2D, .units = 4, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1, .bias = 1),
        /* 1 */ L1(NN_OP_BATCHNORM, .eps = 1e-3f, .momentum = 0.1f),
        /* 2 */ L1(NN_OP_RELU),
        /* 3: residual main path */ L1(NN_OP_CONV2D, .units = 6, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .ph = 1, .pw = 1, .bias = 0),
        /* 4 */ L1(NN_OP_BATCHNORM, .eps = 1e-3f, .momentum = 0.1f),
        /* 5: projection of 2 */ L1(NN_OP_CONV2D, .units = 6, .kh = 1, .kw = 1, .sh = 2, .sw = 2, .bias = 0, .ninputs = 1, .inputs = {2}),
        /* 6 */ L1(NN_OP_ADD, .ninputs = 2, .inputs = {4, 5}),
        /* 7 */ L1(NN_OP_RELU),
        /* 8: dense block: 7 -> conv -> concat(7, 8) */ L1(NN_OP_CONV2D, .units = 3, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1, .bias = 1),
        /* 9 */ L1(NN_OP_CONCAT, .ninputs = 2, .inputs = {7, 8}),
        /* 10 */ L1(NN_OP_CONV2D, .units = 6, .kh = 1, .kw = 1, .sh = 1, .sw = 1, .bias = 1),
        /* 11: identity residual: 7 feeds 8, 9 and 11 */ L1(NN_OP_ADD, .ninputs = 2, .inputs = {10, 7}),
        /* 12 */ L1(NN_OP_AVGPOOL, .kh = 2, .kw = 2, .sh = 1, .sw = 1),
        /* 13 */ L1(NN_OP_GLOBAL_AVGPOOL),
        /* 14 */ L1(NN_OP_FLATTEN),
        /* 15 */ L1(NN_OP_DENSE, .units = 5, .bias = 1),
    };
#undef L1
    sd_workload w = {.name = "dag", .in_c = 2, .in_h = 6, .in_w = 5, .classes = 5, .layers = layers, .nlayers = 16,
                     .optim = {.kind = NN_OPTIM_SGD, .lr = 0.1f}, .batch = 3, .loss = loss};
    nn_backend *be = ref(2);
    nn_model *m = NULL;
    cr_assert_eq(nn_model_build(&m, &w, be, 3, 1), 0, "%s", sd_errmsg());
    cr_assert_eq(m->layers[9].op.oc, 9);
    cr_assert_eq(m->layers[6].op.oh, 3);
    cr_assert_eq(m->consumers[7], 3);
    cr_assert_not_null(m->scratch);
    float *x = rnd((size_t)3 * 2 * 30, 0, 1);
    memcpy(m->x, x, sizeof(float) * 3 * 60);
    int32_t lab[3] = {1, 4, 0};
    memcpy(m->labels, lab, sizeof lab);
    if (loss == NN_LOSS_SIGMOID_BCE) {
        float t[15];
        for (int i = 0; i < 15; i++) t[i] = (float)((i * 7) % 3 == 0);
        memcpy(m->targets, t, sizeof t);
    }
    model_ctx c = {.m = m, .host = malloc(sizeof(float) * m->nparams)};
    memcpy(c.host, m->params, sizeof(float) * m->nparams);
    model_loss(&c);
    cr_assert_eq(nn_model_backward(m), 0, "%s", sd_errmsg());
    float *g = malloc(sizeof(float) * m->nparams);
    memcpy(g, m->grads, sizeof(float) * m->nparams);
    check_grad_kinks("dag params", c.host, m->nparams, g, model_loss, &c, 1e-3f);
    free(g); free(c.host); free(x);
    nn_model_free(m);
    nn_backend_free(be);
}

Test(gradcheck, whole_dag_residual_concat_batchnorm_softmax) { dag_model_check(NN_LOSS_SOFTMAX_XENT); }
Test(gradcheck, whole_dag_residual_concat_batchnorm_bce) { dag_model_check(NN_LOSS_SIGMOID_BCE); }

/* ---- optimizers ------------------------------------------------------------------------------------ */

static void optim_check(nn_optim o) {
    nn_backend *be = ref(2);
    enum { N = 37, STEPS = 6 };
    float p[N], g[N], st[2 * N] = {0};
    double pd[N], s0[N] = {0}, s1[N] = {0};
    for (int i = 0; i < N; i++) pd[i] = p[i] = urand(-1, 1);
    for (int t = 1; t <= STEPS; t++) {
        for (int i = 0; i < N; i++) g[i] = urand(-1, 1);
        cr_assert_eq(be->ops->optimizer_step(be, &o, p, g, st, N, t), 0);
        for (int i = 0; i < N; i++) {
            double gd = g[i];
            switch (o.kind) {
            case NN_OPTIM_SGD: s0[i] = o.momentum * s0[i] + gd; pd[i] -= o.lr * s0[i]; break;
            case NN_OPTIM_RMSPROP:
                s0[i] = o.rho * s0[i] + (1 - o.rho) * gd * gd;
                pd[i] -= o.lr * gd / (sqrt(s0[i]) + o.eps);
                break;
            case NN_OPTIM_ADADELTA: {
                s0[i] = o.rho * s0[i] + (1 - o.rho) * gd * gd;
                double d = gd * sqrt(s1[i] + o.eps) / sqrt(s0[i] + o.eps);
                pd[i] -= o.lr * d;
                s1[i] = o.rho * s1[i] + (1 - o.rho) * d * d;
                break;
            }
            case NN_OPTIM_ADAM: {
                s0[i] = o.beta1 * s0[i] + (1 - o.beta1) * gd;
                s1[i] = o.beta2 * s1[i] + (1 - o.beta2) * gd * gd;
                double mh = s0[i] / (1 - pow(o.beta1, t)), vh = s1[i] / (1 - pow(o.beta2, t));
                pd[i] -= o.lr * mh / (sqrt(vh) + o.eps);
                break;
            }
            default: break;
            }
        }
        for (int i = 0; i < N; i++)
            cr_assert(fabs(p[i] - pd[i]) <= 1e-5 * (1 + fabs(pd[i])), "optimizer %d step %d [%d]: %f vs %f",
                      (int)o.kind, t, i, (double)p[i], pd[i]);
    }
    /* and it descends: minimise 0.5*|p - 3|^2 from 0 */
    float q[4] = {0}, qs[8] = {0};
    for (int t = 1; t <= 400; t++) {
        float gq[4];
        for (int i = 0; i < 4; i++) gq[i] = q[i] - 3.0f;
        be->ops->optimizer_step(be, &o, q, gq, qs, 4, t);
    }
    for (int i = 0; i < 4; i++) cr_assert(fabsf(q[i] - 3.0f) < 0.3f, "optimizer %d did not converge: %f", (int)o.kind, (double)q[i]);
    nn_backend_free(be);
}

Test(optimizer, sgd_momentum) { optim_check((nn_optim){.kind = NN_OPTIM_SGD, .lr = 0.01f, .momentum = 0.9f}); }
Test(optimizer, sgd_plain) { optim_check((nn_optim){.kind = NN_OPTIM_SGD, .lr = 0.05f}); }
Test(optimizer, rmsprop) { optim_check((nn_optim){.kind = NN_OPTIM_RMSPROP, .lr = 0.02f, .rho = 0.9f, .eps = 1e-7f}); }
Test(optimizer, adadelta) { optim_check((nn_optim){.kind = NN_OPTIM_ADADELTA, .lr = 1.0f, .rho = 0.95f, .eps = 1e-4f}); }
Test(optimizer, adam) { optim_check((nn_optim){.kind = NN_OPTIM_ADAM, .lr = 0.05f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f}); }

/* ---- recurrent ops -------------------------------------------------------------------- */

typedef struct rnnctx {
    nn_backend *be;
    nn_op op;
    float *x, *w, *y, *r;
    void *ws;
} rnnctx;

static size_t rnn_wn(const nn_op *op) {
    return (size_t)nn_rnn_params(op->kind == NN_OP_LSTM ? NN_LSTM_GATES : NN_GRU_GATES, op->w, op->units);
}

static double rnn_loss(void *p) {
    rnnctx *c = p;
    const nn_backend_ops *o = c->be->ops;
    int rc = c->op.kind == NN_OP_GRU ? o->gru_forward(c->be, &c->op, c->y, c->ws, c->x, c->w, 1)
                                     : o->lstm_forward(c->be, &c->op, c->y, c->ws, c->x, c->w, 1);
    cr_assert_eq(rc, 0, "%s", sd_errmsg());
    return dotd(c->y, c->r, out_n(&c->op));
}

static nn_op rnn_op(nn_op_kind kind, int n, int T, int F, int H, int ret_seq) {
    nn_op op = {.kind = kind, .n = n, .c = T, .h = 1, .w = F, .units = H, .ret_seq = ret_seq, .has_bias = 1};
    op.oc = ret_seq ? T : H;
    op.oh = 1;
    op.ow = ret_seq ? H : 1;
    return op;
}

static void run_rnn_check(nn_op op, int threads) {
    rnnctx c = {.be = ref(threads), .op = op};
    const size_t wn = rnn_wn(&op);
    c.x = rnd(in_n(&op), -1, 1);
    c.w = rnd(wn, -0.6f, 0.6f);
    c.y = rnd(out_n(&op), 0, 0);
    c.r = rnd(out_n(&op), -1, 1);
    size_t wsb = c.be->ops->workspace_size(c.be, &op);
    cr_assert_gt(wsb, 0);
    c.ws = malloc(wsb);
    rnn_loss(&c);
    float *dx = rnd(in_n(&op), 7, 7);            /* garbage: backward must overwrite dx */
    float *dw = rnd(wn, 0, 0);
    const nn_backend_ops *o = c.be->ops;
    int rc = op.kind == NN_OP_GRU ? o->gru_backward(c.be, &op, dx, dw, c.r, c.x, c.w, c.y, c.ws)
                                  : o->lstm_backward(c.be, &op, dx, dw, c.r, c.x, c.w, c.y, c.ws);
    cr_assert_eq(rc, 0, "%s", sd_errmsg());
    check_grad("dx", c.x, in_n(&op), dx, rnn_loss, &c, 1e-2f);
    /* every parameter block: W_x, W_h, b_x, b_h (check_grad samples large blocks) */
    const int G = op.kind == NN_OP_LSTM ? NN_LSTM_GATES : NN_GRU_GATES, H = op.units, F = op.w;
    const size_t off[5] = {0, (size_t)G * H * F, (size_t)G * H * (F + H), (size_t)G * H * (F + H + 1), wn};
    const char *names[4] = {"dW_x", "dW_h", "db_x", "db_h"};
    for (int b = 0; b < 4; b++)
        check_grad(names[b], c.w + off[b], off[b + 1] - off[b], dw + off[b], rnn_loss, &c, 1e-2f);
    /* backward accumulates into dw: a second call doubles it */
    float *dw1 = malloc(sizeof(float) * wn);
    memcpy(dw1, dw, sizeof(float) * wn);
    rnn_loss(&c);
    rc = op.kind == NN_OP_GRU ? o->gru_backward(c.be, &op, NULL, dw, c.r, c.x, c.w, c.y, c.ws)
                              : o->lstm_backward(c.be, &op, NULL, dw, c.r, c.x, c.w, c.y, c.ws);
    cr_assert_eq(rc, 0, "%s", sd_errmsg());
    for (size_t i = 0; i < wn; i++)
        cr_assert_float_eq(dw[i], 2.0f * dw1[i], 1e-5f * (1.0f + fabsf(dw1[i])), "dw[%zu] did not accumulate", i);
    free(dw1); free(dx); free(dw); free(c.x); free(c.w); free(c.y); free(c.r); free(c.ws);
    nn_backend_free(c.be);
}

Test(gradcheck, gru_sequences_odd_sizes) { run_rnn_check(rnn_op(NN_OP_GRU, 3, 4, 5, 3, 1), 2); }
Test(gradcheck, gru_last_state) { run_rnn_check(rnn_op(NN_OP_GRU, 2, 5, 3, 4, 0), 2); }
Test(gradcheck, gru_batch1_seq1) { run_rnn_check(rnn_op(NN_OP_GRU, 1, 1, 2, 3, 0), 1); }
Test(gradcheck, lstm_sequences_odd_sizes) { run_rnn_check(rnn_op(NN_OP_LSTM, 3, 4, 5, 3, 1), 2); }
Test(gradcheck, lstm_last_state) { run_rnn_check(rnn_op(NN_OP_LSTM, 2, 5, 3, 4, 0), 2); }
Test(gradcheck, lstm_batch1_seq1) { run_rnn_check(rnn_op(NN_OP_LSTM, 1, 1, 2, 3, 1), 1); }

/* A GRU step computed by hand from the documented equations (nn/backend.h): one unit, one input. */
Test(gradcheck, gru_matches_documented_equations) {
    nn_backend *be = ref(1);
    nn_op op = rnn_op(NN_OP_GRU, 1, 2, 1, 1, 1);
    /* W_x = [r z n], W_h = [r z n], b_x, b_h */
    float w[12] = {0.5f, -0.3f, 0.8f, 0.2f, 0.4f, -0.6f, 0.1f, 0.05f, -0.2f, 0.3f, -0.1f, 0.25f};
    float x[2] = {0.7f, -1.1f}, y[2];
    void *ws = malloc(be->ops->workspace_size(be, &op));
    cr_assert_eq(be->ops->gru_forward(be, &op, y, ws, x, w, 1), 0, "%s", sd_errmsg());
    double h = 0;
    for (int t = 0; t < 2; t++) {
        double r = 1 / (1 + exp(-(w[0] * x[t] + w[6] + w[3] * h + w[9])));
        double z = 1 / (1 + exp(-(w[1] * x[t] + w[7] + w[4] * h + w[10])));
        double n = tanh(w[2] * x[t] + w[8] + r * (w[5] * h + w[11]));
        h = (1 - z) * n + z * h;
        cr_assert_float_eq(y[t], h, 1e-6, "step %d: %f vs %f", t, y[t], h);
    }
    free(ws);
    nn_backend_free(be);
}

/* Embedding: the gradient is the scatter-add of dy into the rows the ids select (duplicates add up). */
Test(gradcheck, embedding_scatter_add_and_bad_id) {
    nn_backend *be = ref(2);
    nn_op op = {.kind = NN_OP_EMBEDDING, .n = 2, .c = 3, .h = 1, .w = 1, .units = 5, .vocab = 4,
                .oc = 3, .oh = 1, .ow = 5};
    int32_t ids[6] = {1, 3, 1, 0, 1, 2};
    float *table = rnd(4 * 5, -1, 1), *y = rnd(30, 0, 0), *r = rnd(30, -1, 1), *dt = rnd(20, 0, 0);
    cr_assert_eq(be->ops->embedding_forward(be, &op, y, ids, table), 0, "%s", sd_errmsg());
    for (int i = 0; i < 6; i++)
        for (int e = 0; e < 5; e++) cr_assert_eq(y[i * 5 + e], table[ids[i] * 5 + e]);
    cr_assert_eq(be->ops->embedding_backward(be, &op, dt, r, ids), 0, "%s", sd_errmsg());
    for (int v = 0; v < 4; v++)
        for (int e = 0; e < 5; e++) {
            double want = 0;   /* d(sum y.r)/d table[v][e] */
            for (int i = 0; i < 6; i++) if (ids[i] == v) want += r[i * 5 + e];
            cr_assert_float_eq(dt[v * 5 + e], want, 1e-6, "dtable[%d][%d]", v, e);
        }
    ids[4] = 4;
    cr_assert_eq(be->ops->embedding_forward(be, &op, y, ids, table), SD_EINPUT);
    cr_assert(strstr(sd_errmsg(), "token id 4") != NULL, "%s", sd_errmsg());
    free(table); free(y); free(r); free(dt);
    nn_backend_free(be);
}

/* RepeatVector: y[i][t] = x[i]; the gradient is the sum over t (dx overwritten). Embedding over a range of
 * the input ids (ids_stride, the graph's pointer offset), as babi_rnn's two embeddings read one input. */
Test(gradcheck, repeat_vector_and_embedding_range) {
    nn_backend *be = ref(2);
    nn_op op = {.kind = NN_OP_REPEAT, .n = 3, .c = 4, .h = 1, .w = 1, .oc = 5, .oh = 1, .ow = 4};
    float *x = rnd(12, -1, 1), *y = rnd(60, 0, 0), *dy = rnd(60, -1, 1), *dx = rnd(12, 7, 7);
    cr_assert_eq(be->ops->repeat_forward(be, &op, y, x), 0, "%s", sd_errmsg());
    cr_assert_eq(be->ops->repeat_backward(be, &op, dx, dy), 0, "%s", sd_errmsg());
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 4; k++) {
            double s = 0;
            for (int t = 0; t < 5; t++) {
                cr_assert_eq(y[(i * 5 + t) * 4 + k], x[i * 4 + k]);
                s += dy[(i * 5 + t) * 4 + k];
            }
            cr_assert_float_eq(dx[i * 4 + k], s, 1e-5, "dx[%d][%d]", i, k);
        }
    /* ids of 2 examples x 6 positions; the op reads positions [4, 6) of each */
    int32_t ids[12] = {0, 1, 2, 3, 1, 2, 3, 3, 3, 3, 0, 1};
    nn_op e = {.kind = NN_OP_EMBEDDING, .n = 2, .c = 2, .h = 1, .w = 1, .units = 3, .vocab = 4, .ids_stride = 6,
               .ids_off = 4, .oc = 2, .oh = 1, .ow = 3};
    float *table = rnd(12, -1, 1), *ye = rnd(12, 0, 0), *dt = rnd(12, 0, 0), *g = rnd(12, -1, 1);
    cr_assert_eq(be->ops->embedding_forward(be, &e, ye, ids + e.ids_off, table), 0, "%s", sd_errmsg());
    const int want[4] = {1, 2, 0, 1};
    for (int r = 0; r < 4; r++)
        for (int k = 0; k < 3; k++) cr_assert_eq(ye[r * 3 + k], table[want[r] * 3 + k], "row %d", r);
    cr_assert_eq(be->ops->embedding_backward(be, &e, dt, g, ids + e.ids_off), 0, "%s", sd_errmsg());
    for (int k = 0; k < 3; k++) {
        cr_assert_float_eq(dt[1 * 3 + k], g[0 * 3 + k] + g[3 * 3 + k], 1e-6);
        cr_assert_float_eq(dt[3 * 3 + k], 0.0f, 0.0);
    }
    free(x); free(y); free(dy); free(dx); free(table); free(ye); free(dt); free(g);
    nn_backend_free(be);
}
