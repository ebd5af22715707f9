/* dnnl_bn — batch normalisation on the host, with the relu after it fused (bn_fused_*), on NCHW, blocked (nChw16c,
 * nChw8c) or nhwc, on x that may be a channel slice of a bigger buffer (op->in_cs), adding its data gradient into
 * what dx holds (dx_acc). oneDNN 2.6's batch-norm primitives measured slower on both blocked and plain layouts
 * (docs/performance.md); SD_DNNL_BN_PRIMITIVE=1 runs the unfused layers through them, for comparison. Same
 * arithmetic as the reference (nn/host_ops.c) up to rounding: statistics summed in float over short runs and in
 * double across them. */
#include "be_dnnl/dnnl_be.h"

int dn_bn_prepare(dnnl_ctx *c, nn_op *op, bn_priv *p) {
    dnnl_memory_desc_t d, v;
    if (op->fmt_in != op->fmt_out)
        return sd_err(SD_ERROR, "internal: dnnl batchnorm with input layout %d, output %d", op->fmt_in, op->fmt_out);
    if (!getenv("SD_DNNL_BN_PRIMITIVE") || op->in_cs) return 0;   /* the host kernels below */
    SD_TRY(dn_md_tag(&d, 4, (dnnl_dims_t){op->n, op->c, op->h, op->w}, dn_fmt_tag(op->fmt_out)));
    SD_TRY(dn_md_tag(&v, 1, (dnnl_dims_t){op->c}, dnnl_a));
    const unsigned ss = dnnl_use_scale | dnnl_use_shift;
    dn_desc ft, fi, bd;
    dnnl_primitive_desc_t ftp, fip, bp;
    SD_TRY(dn_bn_fwd_desc(&ft, dnnl_forward_training, &d, op->eps, ss));
    SD_TRY(dn_bn_fwd_desc(&fi, dnnl_forward_inference, &d, op->eps, ss | dnnl_use_global_stats));
    SD_TRY(dn_bn_bwd_desc(&bd, dnnl_backward, &d, &d, op->eps, ss));
    SD_TRY(dn_pd_new(c, &ftp, &ft, 0, NULL));
    int rc = dn_pd_new(c, &bp, &bd, 0, ftp);
    if (rc < 0) { dnnl_primitive_desc_destroy(ftp); return rc; }
    rc = dn_pd_new(c, &fip, &fi, 0, NULL);
    if (rc < 0) { dnnl_primitive_desc_destroy(ftp); dnnl_primitive_desc_destroy(bp); return rc; }
    SD_TRY(dn_step_make(c, &p->fwd_train, ftp));
    SD_TRY(dn_step_make(c, &p->fwd_inf, fip));
    SD_TRY(dn_step_make(c, &p->bwd, bp));
    dstep *fs[2] = {&p->fwd_train, &p->fwd_inf};
    for (int k = 0; k < 2; k++) {
        SD_TRY(dn_step_arg(c, fs[k], DNNL_ARG_SRC, &d));
        SD_TRY(dn_step_arg(c, fs[k], DNNL_ARG_DST, &d));
        SD_TRY(dn_step_arg(c, fs[k], DNNL_ARG_SCALE, &v));
        SD_TRY(dn_step_arg(c, fs[k], DNNL_ARG_SHIFT, &v));
        SD_TRY(dn_step_arg(c, fs[k], DNNL_ARG_MEAN, &v));
        SD_TRY(dn_step_arg(c, fs[k], DNNL_ARG_VARIANCE, &v));
    }
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_SRC, &d));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_MEAN, &v));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_VARIANCE, &v));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_DIFF_DST, &d));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_SCALE, &v));
    if (!DN_V3)   /* oneDNN 2.6 requires it, backward does not read it; 3.x refuses it (invalid arguments) */
        SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_SHIFT, &v));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_DIFF_SRC, &d));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_DIFF_SCALE, &v));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_DIFF_SHIFT, &v));
    p->prim = 1;
    return dn_grow(&c->tmp, &c->tmp_bytes, 2 * ((sizeof(float) * op->c + ALIGN - 1) / ALIGN * ALIGN));
}

/* ---- host kernels ----------------------------------------------------------------------------------------------
 * A group is what one thread normalises at a time: a 16-channel block of nChw16c (16 lanes, one vector here), an
 * 8-channel block of nChw8c (two positions a vector: lanes l and l + 8 are channel l) or one channel of NCHW (its
 * plane cut into 16-float rows, lanes across positions, and a tail), or 16 channels of nhwc (a row of 16 lanes at
 * each position, the buffer's channels apart). The tensor is n examples of
 * HW positions; example i of group g starts at x + base(i, g), the stride counting the buffer's channels (cs). */
#define RUN 128   /* positions summed in float before they go into the double sums */

typedef struct bn_geo {
    int n, c, cs, blk;        /* examples, channels, channels of the buffer x and dx live in, block (1: NCHW) */
    int nhwc;                 /* nhwc: a group is 16 of a position's channels (blk 16, c a multiple of 16) */
    size_t hw;
    size_t sx, sy;            /* floats from one row of 16 lanes to the next in x, dx and in y, dy: 16, or the
                               * buffers' channels in nhwc */
} bn_geo;

static bn_geo geo_of(const nn_op *op) {
    const int cs = op->in_cs ? op->in_cs : op->c, nhwc = op->fmt_in == NN_FMT_NHWC;
    return (bn_geo){.n = op->n, .c = op->c, .cs = cs, .blk = nhwc ? 16 : (int)nn_fmt_block(op->fmt_in, 1),
                    .nhwc = nhwc, .hw = (size_t)op->h * op->w, .sx = nhwc ? (size_t)cs : 16,
                    .sy = nhwc ? (size_t)op->c : 16};
}
static int groups(const bn_geo *g) { return (g->c + g->blk - 1) / g->blk; }
/* Offset of example i of group q in a buffer of cs channels (y and dy: of c channels, ys). */
static size_t at(const bn_geo *g, int cs, int i, int q) {
    if (g->nhwc) return (size_t)i * g->hw * (size_t)cs + (size_t)q * 16;
    return ((size_t)i * (size_t)((cs + g->blk - 1) / g->blk) + (size_t)q) * g->hw * (size_t)g->blk;
}
/* Lanes of one example of a group: blocked rows are positions of blk channels (nhwc: rows of 16 at a stride). */
static size_t span(const bn_geo *g) { return g->hw * (size_t)g->blk; }

/* 16 lanes in one vector (GCC's vector extension; one zmm register here): the accumulators stay in registers,
 * which the compiler did not manage with per-lane arrays under omp simd (it kept them on the stack and every
 * iteration waited on its own stores: the fused backward ran at half the plain one's speed). */
/* Without AVX-512 (-march=native on an older CPU) GCC notes that a v16 argument passes differently than with
 * it: every function here is static, so no call crosses that ABI. */
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float v16 __attribute__((vector_size(64), aligned(4)));
typedef int v16i __attribute__((vector_size(64), aligned(4)));
static inline v16 ld(const float *p) { return *(const v16 *)p; }
static inline void st(float *p, v16 v) { *(v16 *)p = v; }
static inline v16 mask_pos(v16 v, v16 by) { return (v16)((v16i)v & (by > (v16){0})); }   /* v where by > 0, else 0 */
/* The normalised value, one expression for the forward and the backward's relu decision, which must round alike. */
static inline v16 bn_v(v16 x, v16 mean, v16 sc, v16 b) { return (x - mean) * sc + b; }
static inline float bn_s(float x, float mean, float sc, float b) { return (x - mean) * sc + b; }
/* The gradient reaching the normalised value: dy, or (relu) dy where the forward's value, recomputed bit for bit
 * from x, passed the relu. relu is a constant at every call, so each kernel compiles a loop of its own for it. */
static inline __attribute__((always_inline)) v16 dz_v(v16 dy, v16 xv, v16 mv, v16 sv, v16 bv, int relu) {
    return relu ? mask_pos(dy, bn_v(xv, mv, sv, bv)) : dy;
}

/* Per-channel sums over a group, in double: s1 += x - k, s2 += (x - k)^2 (k: a shift near the mean, which keeps
 * the variance from cancelling). Lane l is channel l of the group (nChw16c, nhwc), channel l mod 8 (nChw8c) or
 * every 16th position of a channel's plane (NCHW); fold() adds up the lanes of a channel. The kernels here read
 * len lanes as rows of 16 a stride apart (sx, sy: 16 where they are contiguous; a tail of fewer than 16 only
 * there). */
static void sums_x(const float *x, size_t sx, size_t len, const float *k, double *s1, double *s2) {
    const v16 kv = ld(k);
    for (size_t o = 0; o < len; o += 16 * RUN) {
        const size_t end = o + 16 * RUN < len ? o + 16 * RUN : len;
        v16 a = {0}, q = {0};
        size_t e = o;
        for (; e + 16 <= end; e += 16) { const v16 d = ld(x + e / 16 * sx) - kv; a += d; q += d * d; }
        for (; e < end; e++) {   /* a plane's tail (NCHW) */
            const float d = x[e] - k[e % 16];
            a[e % 16] += d; q[e % 16] += d * d;
        }
        for (int l = 0; l < 16; l++) { s1[l] += a[l]; s2[l] += q[l]; }
    }
}

/* Backward sums over a group: s1 += dz, s2 += dz (x - mean), with dz = dy where the relu passed it (relu: the
 * forward's value recomputed from x, sc and b, bit for bit, instead of reading its output). */
static inline __attribute__((always_inline)) void sums_dy(const float *dy, size_t sy, const float *x, size_t sx,
                                                          size_t len,
                                                          const float *mean, const float *sc, const float *b,
                                                          int relu, double *s1, double *s2) {
    const v16 mv = ld(mean), sv = ld(sc), bv = ld(b);
    for (size_t o = 0; o < len; o += 16 * RUN) {
        const size_t end = o + 16 * RUN < len ? o + 16 * RUN : len;
        v16 a = {0}, q = {0};
        size_t e = o;
        for (; e + 16 <= end; e += 16) {
            const float *dp = dy + e / 16 * sy;
            const v16 xv = ld(x + e / 16 * sx), dz = dz_v(ld(dp), xv, mv, sv, bv, relu);
            a += dz; q += dz * (xv - mv);
        }
        for (; e < end; e++) {
            const int l = (int)(e % 16);
            const float dz = relu && !(bn_s(x[e], mean[l], sc[l], b[l]) > 0.0f) ? 0.0f : dy[e];
            a[l] += dz; q[l] += dz * (x[e] - mean[l]);
        }
        for (int l = 0; l < 16; l++) { s1[l] += a[l]; s2[l] += q[l]; }
    }
}

/* y = max?(0, (x - mean) sc + b) per lane. */
static inline __attribute__((always_inline)) void apply(float *y, size_t sy, const float *x, size_t sx, size_t len,
                                                        const float *mean, const float *sc, const float *b,
                                                        int relu) {
    const v16 mv = ld(mean), sv = ld(sc), bv = ld(b);
    size_t e = 0;
    for (; e + 16 <= len; e += 16) {
        const v16 v = bn_v(ld(x + e / 16 * sx), mv, sv, bv);
        st(y + e / 16 * sy, relu ? mask_pos(v, v) : v);
    }
    for (; e < len; e++) {
        const float v = bn_s(x[e], mean[e % 16], sc[e % 16], b[e % 16]);
        y[e] = relu && !(v > 0.0f) ? 0.0f : v;
    }
}

/* dx (+)= A dz - B - C (x - mean) per lane (dz as in sums_dy). */
static inline __attribute__((always_inline)) void apply_dx(float *dx, const float *dy, size_t sy, const float *x,
                                                           size_t sx, size_t len,
                                                           const float *mean, const float *sc, const float *b,
                                                           const float *A, const float *B, const float *C, int relu,
                                                           int acc) {
    const v16 mv = ld(mean), sv = ld(sc), shv = ld(b), av = ld(A), bv = ld(B), cv = ld(C);
    size_t e = 0;
    for (; e + 16 <= len; e += 16) {
        const float *dp = dy + e / 16 * sy;
        float *dxp = dx + e / 16 * sx;   /* dx lives in x's buffer layout */
        const v16 xv = ld(x + e / 16 * sx), dz = dz_v(ld(dp), xv, mv, sv, shv, relu);
        const v16 v = av * dz - bv - cv * (xv - mv);
        st(dxp, acc ? ld(dxp) + v : v);
    }
    for (; e < len; e++) {
        const int l = (int)(e % 16);
        const float dz = relu && !(bn_s(x[e], mean[l], sc[l], b[l]) > 0.0f) ? 0.0f : dy[e];
        const float v = A[l] * dz - B[l] - C[l] * (x[e] - mean[l]);
        dx[e] = acc ? dx[e] + v : v;
    }
}

/* The kernels above with relu and acc as constants, so that each combination compiles to its own loop. */
#define APPLY(y, sy, x, sx, len, mean, sc, b, relu) do {                                                \
        if (relu) apply(y, sy, x, sx, len, mean, sc, b, 1); else apply(y, sy, x, sx, len, mean, sc, b, 0);  \
    } while (0)
#define APPLY_DX(dx, dy, sy, x, sx, len, mean, sc, b, A, B, C, relu, acc) do {                          \
        if (relu && acc) apply_dx(dx, dy, sy, x, sx, len, mean, sc, b, A, B, C, 1, 1);                  \
        else if (relu) apply_dx(dx, dy, sy, x, sx, len, mean, sc, b, A, B, C, 1, 0);                    \
        else if (acc) apply_dx(dx, dy, sy, x, sx, len, mean, sc, b, A, B, C, 0, 1);                     \
        else apply_dx(dx, dy, sy, x, sx, len, mean, sc, b, A, B, C, 0, 0);                              \
    } while (0)

/* Channel of lane l of group q (-1: a padded channel of a block). */
static int chan(const bn_geo *g, int q, int l) {
    if (g->blk == 1) return q;
    const int ch = q * g->blk + l % g->blk;
    return ch < g->c ? ch : -1;
}
/* 1 if lane l is the first holding its channel (the one that writes the channel's results). */
static int first_lane(const bn_geo *g, int l) { return l < g->blk; }
/* Per-lane values of a group from per-channel ones (NCHW: the channel's in every lane); 0 on padded channels. */
static void lanes(const bn_geo *g, int q, const float *per_ch, float *out) {
    for (int l = 0; l < 16; l++) { const int ch = chan(g, q, l); out[l] = ch >= 0 ? per_ch[ch] : 0.0f; }
}
/* Per-channel double sums from per-lane ones: each lane gets the sum of the lanes of its channel (NCHW: all 16,
 * nChw8c: l and l + 8). */
static void fold(const bn_geo *g, double *s) {
    for (int l = 0; l < g->blk; l++) {
        double t = 0;
        for (int k = l; k < 16; k += g->blk) t += s[k];
        for (int k = l; k < 16; k += g->blk) s[k] = t;
    }
}

/* ---- nhwc by rows -------------------------------------------------------------------------------------------
 * In nhwc a position's channels are one contiguous row: the threads split the rows (n·hw of them) and stream
 * through them, each row's channels 16 lanes at a time, instead of one thread per 16 channels reading a short piece
 * of every row a buffer's channels apart (twice the time in `perf record`; one group for 16 channels leaves a core
 * idle). Each thread sums its rows per channel (in float over RUN rows, then in double), and the threads' sums are
 * added in thread order. Only for c a multiple of 16 (the graph's nhwc batch norms are). */

typedef struct nhwc_rows {
    const bn_geo *g;
    size_t r0, r1;            /* rows summed: [r0, r1) */
    int relu;                 /* dy sums: dz is dy where the forward's relu passed it */
    const float *x, *dy;      /* dy NULL: s1 += x - k, s2 += (x - k)^2 with k = mean */
    const float *mean, *sc, *b;
} nhwc_rows;

/* One thread's per-channel sums over rows [r0, r1) into d1, d2 (c doubles each); f: 2c floats of scratch. dy and
 * relu are constants at each call (nhwc_sums_part), so the three kinds of sum compile to loops of their own. */
static inline __attribute__((always_inline)) void nhwc_sums_rows(const nhwc_rows *w, size_t r0, size_t r1,
                                                                 double *d1, double *d2, float *f, int dy, int relu) {
    const bn_geo *g = w->g;
    const int C = g->c;
    for (size_t r = r0; r < r1; r += RUN) {
        const size_t e = r + RUN < r1 ? r + RUN : r1;
        memset(f, 0, 2 * sizeof(float) * (size_t)C);
        for (size_t rr = r; rr < e; rr++) {
            const float *xr = w->x + rr * g->sx, *dr = dy ? w->dy + rr * g->sy : NULL;
            for (int j = 0; j < C; j += 16) {
                const v16 xv = ld(xr + j), mv = ld(w->mean + j);
                if (!dy) {
                    const v16 d = xv - mv;
                    st(f + j, ld(f + j) + d);
                    st(f + C + j, ld(f + C + j) + d * d);
                } else {
                    const v16 dz = dz_v(ld(dr + j), xv, mv, ld(w->sc + j), ld(w->b + j), relu);
                    st(f + j, ld(f + j) + dz);
                    st(f + C + j, ld(f + C + j) + dz * (xv - mv));
                }
            }
        }
        for (int k = 0; k < C; k++) { d1[k] += f[k]; d2[k] += f[C + k]; }
    }
}
static void nhwc_sums_part(const nhwc_rows *w, size_t r0, size_t r1, double *d1, double *d2, float *f) {
    if (!w->dy) nhwc_sums_rows(w, r0, r1, d1, d2, f, 0, 0);
    else if (w->relu) nhwc_sums_rows(w, r0, r1, d1, d2, f, 1, 1);
    else nhwc_sums_rows(w, r0, r1, d1, d2, f, 1, 0);
}

/* The per-channel sums of w's rows into s1, s2 (c doubles each, set here); -1 when out of memory. */
static int nhwc_sums(int threads, const nhwc_rows *w, double *s1, double *s2) {
    const int C = w->g->c;
    const size_t rows = w->r1 - w->r0, per = 2 * (size_t)C * sizeof(double) + 2 * (size_t)C * sizeof(float);
    int T = threads > 0 ? threads : 1;
    if ((size_t)T > rows) T = rows ? (int)rows : 1;
    char *acc = calloc((size_t)T, per);
    if (!acc) return -1;
    #pragma omp parallel num_threads(T)
    {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        double *d1 = (double *)(acc + (size_t)t * per), *d2 = d1 + C;
        nhwc_sums_part(w, w->r0 + rows * (size_t)t / (size_t)nt, w->r0 + rows * (size_t)(t + 1) / (size_t)nt, d1, d2,
                       (float *)(d2 + C));
    }
    memset(s1, 0, sizeof(double) * (size_t)C);
    memset(s2, 0, sizeof(double) * (size_t)C);
    for (int t = 0; t < T; t++) {   /* in thread order: the same sums for the same thread count */
        const double *d1 = (const double *)(acc + (size_t)t * per), *d2 = d1 + C;
        for (int k = 0; k < C; k++) { s1[k] += d1[k]; s2[k] += d2[k]; }
    }
    free(acc);
    return 0;
}

/* y = relu?((x - mean) sc + b) over every row, per channel (mean, sc, b: c floats). */
static void nhwc_apply(int threads, const bn_geo *g, int relu, float *y, const float *x, const float *mean,
                       const float *sc, const float *b) {
    const long rows = (long)g->n * (long)g->hw;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (long r = 0; r < rows; r++)
        for (int j = 0; j < g->c; j += 16)
            APPLY(y + (size_t)r * g->sy + j, 16, x + (size_t)r * g->sx + j, 16, 16, mean + j, sc + j, b + j, relu);
}

/* Training forward in nhwc (bn_forward_train's contract); -1 when out of memory (nothing written). */
static int nhwc_forward_train(int threads, const bn_geo *g, int relu, float *y, float *saved, const float *x,
                              const float *gamma, const float *beta, double eps) {
    const int C = g->c;
    const double M = (double)g->n * g->hw;
    double *s = malloc(2 * sizeof(double) * (size_t)C);
    float *k = calloc((size_t)C, sizeof *k);
    int rc = s && k ? 0 : -1;
    /* shift: the mean of example 0's values of each channel */
    nhwc_rows w = {.g = g, .r0 = 0, .r1 = g->hw, .x = x, .mean = k};
    if (rc == 0) rc = nhwc_sums(threads, &w, s, s + C);
    if (rc == 0) {
        for (int c = 0; c < C; c++) k[c] = (float)(s[c] / (double)g->hw);
        w.r1 = (size_t)g->n * g->hw;
        rc = nhwc_sums(threads, &w, s, s + C);
    }
    if (rc == 0) {
        float *mean = saved, *var = saved + C, *sc = saved + 2 * C, *b = saved + 3 * C;
        for (int c = 0; c < C; c++) {
            const double d = s[c] / M, v = fmax(s[C + c] / M - d * d, 0.0);
            mean[c] = (float)(k[c] + d);
            var[c] = (float)v;
            sc[c] = (float)(gamma[c] / sqrt(v + eps));
            b[c] = beta[c];
        }
        nhwc_apply(threads, g, relu, y, x, mean, sc, b);
    }
    free(s);
    free(k);
    return rc;
}

/* Inference forward in nhwc; -1 when out of memory. */
static int nhwc_forward_infer(int threads, const bn_geo *g, int relu, float *y, const float *x, const float *gamma,
                              const float *beta, const float *running, double eps) {
    const int C = g->c;
    float *sc = malloc(sizeof(float) * (size_t)C);
    if (!sc) return -1;
    for (int c = 0; c < C; c++) sc[c] = (float)(gamma[c] / sqrt((double)running[C + c] + eps));
    nhwc_apply(threads, g, relu, y, x, running, sc, beta);
    free(sc);
    return 0;
}

/* Backward in nhwc (bn_backward's contract); -1 when out of memory (nothing written). */
static int nhwc_backward(int threads, const bn_geo *g, int relu, int acc, float *dx, float *dgamma, float *dbeta,
                         const float *dy, const float *x, const float *gamma, const float *saved, double eps) {
    const int C = g->c;
    const double M = (double)g->n * g->hw;
    double *s = malloc(2 * sizeof(double) * (size_t)C);
    float *abc = malloc(3 * sizeof(float) * (size_t)C);
    const float *mean = saved, *sc = saved + 2 * C, *sh = saved + 3 * C;
    const nhwc_rows w = {.g = g, .r0 = 0, .r1 = (size_t)g->n * g->hw, .relu = relu, .x = x, .dy = dy, .mean = mean,
                         .sc = sc, .b = sh};
    int rc = s && abc ? nhwc_sums(threads, &w, s, s + C) : -1;
    if (rc == 0) {
        float *A = abc, *B = abc + C, *Cc = abc + 2 * C;
        for (int c = 0; c < C; c++) {
            const double invstd = 1.0 / sqrt((double)saved[C + c] + eps), sdyx = s[C + c] * invstd;
            dbeta[c] += (float)s[c];
            dgamma[c] += (float)sdyx;
            const double k0 = gamma[c] * invstd / M;   /* dx = gamma invstd / M (M dz - sum dz - xhat sum dz xhat) */
            A[c] = (float)(k0 * M);
            B[c] = (float)(k0 * s[c]);
            Cc[c] = (float)(k0 * sdyx * invstd);
        }
        if (dx) {
            const long rows = (long)g->n * (long)g->hw;
            #pragma omp parallel for num_threads(threads) schedule(static)
            for (long r = 0; r < rows; r++)
                for (int j = 0; j < C; j += 16)
                    APPLY_DX(dx + (size_t)r * g->sx + j, dy + (size_t)r * g->sy + j, 16, x + (size_t)r * g->sx + j,
                             16, 16, mean + j, sc + j, sh + j, A + j, B + j, Cc + j, relu, acc);
        }
    }
    free(s);
    free(abc);
    return rc;
}

static int by_rows(const bn_geo *g) { return g->nhwc && g->c % 16 == 0 && !getenv("SD_DNNL_BN_GROUPS"); }

/* Training forward: batch mean, biased variance, scale and shift into saved ([4][C]), y = relu?(bn(x)) (y: c
 * channels). */
static void bn_forward_train(int threads, const bn_geo *g, int relu, float *y, float *saved, const float *x,
                             const float *gamma, const float *beta, double eps) {
    if (by_rows(g) && nhwc_forward_train(threads, g, relu, y, saved, x, gamma, beta, eps) == 0) return;
    const int G = groups(g), C = g->c;
    const size_t len = span(g);
    const double M = (double)g->n * g->hw;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int q = 0; q < G; q++) {
        /* shift: the mean of example 0's values of each channel */
        double k0[16] = {0}, k1[16] = {0};
        float zero[16] = {0}, k[16], mean[16], sc[16], b[16];
        sums_x(x + at(g, g->cs, 0, q), g->sx, len, zero, k0, k1);
        fold(g, k0);
        for (int l = 0; l < 16; l++) k[l] = (float)(k0[l] / (double)g->hw);
        double s1[16] = {0}, s2[16] = {0};
        for (int i = 0; i < g->n; i++) sums_x(x + at(g, g->cs, i, q), g->sx, len, k, s1, s2);
        fold(g, s1);
        fold(g, s2);
        for (int l = 0; l < 16; l++) {
            const int ch = chan(g, q, l);
            const double d = s1[l] / M, var = fmax(s2[l] / M - d * d, 0.0);
            mean[l] = (float)(k[l] + d);
            sc[l] = ch >= 0 ? (float)(gamma[ch] / sqrt(var + eps)) : 0.0f;
            b[l] = ch >= 0 ? beta[ch] : 0.0f;
            if (ch >= 0 && first_lane(g, l)) {
                saved[ch] = mean[l]; saved[C + ch] = (float)var; saved[2 * C + ch] = sc[l]; saved[3 * C + ch] = b[l];
            }
        }
        for (int i = 0; i < g->n; i++)
            APPLY(y + at(g, C, i, q), g->sy, x + at(g, g->cs, i, q), g->sx, len, mean, sc, b, relu);
    }
}

static void bn_forward_infer(int threads, const bn_geo *g, int relu, float *y, const float *x, const float *gamma,
                             const float *beta, const float *running, double eps) {
    if (by_rows(g) && nhwc_forward_infer(threads, g, relu, y, x, gamma, beta, running, eps) == 0) return;
    const int G = groups(g), C = g->c;
    const size_t len = span(g);
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int q = 0; q < G; q++) {
        float mean[16], sc[16], b[16];
        for (int l = 0; l < 16; l++) {
            const int ch = chan(g, q, l);
            mean[l] = ch >= 0 ? running[ch] : 0.0f;
            sc[l] = ch >= 0 ? (float)(gamma[ch] / sqrt((double)running[C + ch] + eps)) : 0.0f;
            b[l] = ch >= 0 ? beta[ch] : 0.0f;
        }
        for (int i = 0; i < g->n; i++)
            APPLY(y + at(g, C, i, q), g->sy, x + at(g, g->cs, i, q), g->sx, len, mean, sc, b, relu);
    }
}

/* Backward of the training forward: dgamma, dbeta += ; dx (+)= (NULL: skipped); dy of c channels. */
static void bn_backward(int threads, const bn_geo *g, int relu, int acc, float *dx, float *dgamma, float *dbeta,
                        const float *dy, const float *x, const float *gamma, const float *saved, double eps) {
    if (by_rows(g) && nhwc_backward(threads, g, relu, acc, dx, dgamma, dbeta, dy, x, gamma, saved, eps) == 0) return;
    const int G = groups(g), C = g->c;
    const size_t len = span(g);
    const double M = (double)g->n * g->hw;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int q = 0; q < G; q++) {
        float mean[16], sc[16], sh[16], A[16], B[16], Cc[16];
        double s1[16] = {0}, s2[16] = {0}, invstd[16];
        lanes(g, q, saved, mean);
        lanes(g, q, saved + 2 * C, sc);
        lanes(g, q, saved + 3 * C, sh);
        for (int l = 0; l < 16; l++) {
            const int ch = chan(g, q, l);
            invstd[l] = ch >= 0 ? 1.0 / sqrt((double)saved[C + ch] + eps) : 0.0;
        }
        for (int i = 0; i < g->n; i++)
            if (relu) sums_dy(dy + at(g, C, i, q), g->sy, x + at(g, g->cs, i, q), g->sx, len, mean, sc, sh, 1, s1, s2);
            else sums_dy(dy + at(g, C, i, q), g->sy, x + at(g, g->cs, i, q), g->sx, len, mean, sc, sh, 0, s1, s2);
        fold(g, s1);
        fold(g, s2);
        for (int l = 0; l < 16; l++) {
            const int ch = chan(g, q, l);
            if (ch < 0) { A[l] = B[l] = Cc[l] = 0; continue; }
            const double sdyx = s2[l] * invstd[l];   /* sum of dz xhat */
            if (first_lane(g, l)) { dbeta[ch] += (float)s1[l]; dgamma[ch] += (float)sdyx; }
            /* dx = gamma invstd / M (M dz - sum dz - xhat sum dz xhat) */
            const double k0 = gamma[ch] * invstd[l] / M;
            A[l] = (float)(k0 * M);
            B[l] = (float)(k0 * s1[l]);
            Cc[l] = (float)(k0 * sdyx * invstd[l]);
        }
        if (!dx) continue;
        for (int i = 0; i < g->n; i++)
            APPLY_DX(dx + at(g, g->cs, i, q), dy + at(g, C, i, q), g->sy, x + at(g, g->cs, i, q), g->sx, len, mean,
                     sc, sh, A, B, Cc, relu, acc);
    }
}

/* ---- the table's entries ----------------------------------------------------------------------------------- */

static void update_running(const nn_op *op, float *running, const float *mean, const float *var) {
    const int C = op->c;
    const double M = (double)op->n * op->h * op->w, mom = op->momentum;
    for (int k = 0; k < C; k++) {
        double unbiased = M > 1 ? (double)var[k] * M / (M - 1) : var[k];
        running[k] = (float)((1.0 - mom) * running[k] + mom * mean[k]);
        running[C + k] = (float)((1.0 - mom) * running[C + k] + mom * unbiased);
    }
}

int dn_bn_fused_forward(nn_backend *be, const nn_op *op, const nn_bn_fuse *f, float *y, void *ws, const float *x,
                        const float *gamma, const float *beta, float *running, int train) {
    dnnl_ctx *c = CTX(be);
    const bn_geo g = geo_of(op);
    if (!train) {
        bn_forward_infer(c->threads, &g, f->relu, y, x, gamma, beta, running, op->eps);
        return 0;
    }
    float *saved = ws;
    dn_touched(c, running, 2 * sizeof(float) * op->c);
    bn_forward_train(c->threads, &g, f->relu, y, saved, x, gamma, beta, op->eps);
    update_running(op, running, saved, saved + op->c);
    return 0;
}

int dn_bn_fused_backward(nn_backend *be, const nn_op *op, const nn_bn_fuse *f, float *dx, float *dgamma,
                         float *dbeta, const float *dy, const float *x, const float *y, const float *gamma,
                         const void *ws) {
    const bn_geo g = geo_of(op);
    (void)y;   /* the relu's decisions are recomputed from x and the forward's scale and shift, not read from y */
    bn_backward(CTX(be)->threads, &g, f->relu, f->dx_acc, dx, dgamma, dbeta, dy, x, gamma, ws, op->eps);
    return 0;
}

int dn_batchnorm_forward(nn_backend *be, const nn_op *op, float *y, void *ws, const float *x,
                         const float *gamma, const float *beta, float *running, int train) {
    NEED_PRIV(op);
    dnnl_ctx *c = CTX(be);
    bn_priv *p = PRIV(op, bn_priv);
    const nn_bn_fuse plain = {0};
    if (!p->prim) return dn_bn_fused_forward(be, op, &plain, y, ws, x, gamma, beta, running, train);
    const int C = op->c;
    dn_threads_on(c);
    if (!train) {
        void *args[6] = {(void *)x, y, (void *)gamma, (void *)beta, running, running + C};
        SD_TRY(dn_step_run(c, &p->fwd_inf, args));
        return dn_strm_wait(c);
    }
    float *mean = ws, *var = (float *)ws + C;
    dn_touched(c, running, 2 * sizeof(float) * C);
    void *args[6] = {(void *)x, y, (void *)gamma, (void *)beta, mean, var};
    SD_TRY(dn_step_run(c, &p->fwd_train, args));
    SD_TRY(dn_strm_wait(c));
    update_running(op, running, mean, var);
    return 0;
}

int dn_batchnorm_backward(nn_backend *be, const nn_op *op, float *dx, float *dgamma, float *dbeta,
                          const float *dy, const float *x, const float *gamma, const void *ws) {
    NEED_PRIV(op);
    dnnl_ctx *c = CTX(be);
    const int C = op->c;
    const nn_bn_fuse plain = {0};
    if (!PRIV(op, bn_priv)->prim) return dn_bn_fused_backward(be, op, &plain, dx, dgamma, dbeta, dy, x, NULL, gamma, ws);
    const size_t vb = (sizeof(float) * C + ALIGN - 1) / ALIGN * ALIGN;
    if (!dx)
        SD_TRY(dn_grow(&c->tmp, &c->tmp_bytes, 2 * vb + sizeof(float) * nn_fmt_elems(op->fmt_in, op->n, C, op->h, op->w)));
    dn_threads_on(c);
    float *dsc = c->tmp, *dsh = (float *)((char *)c->tmp + vb);
    void *dxs = dx ? (void *)dx : (char *)c->tmp + 2 * vb;
    const float *mean = ws, *var = (const float *)ws + C;
    void *args[9] = {(void *)x, (void *)mean, (void *)var, (void *)dy, (void *)gamma, (void *)gamma, dxs, dsc, dsh};
    if (DN_V3) memmove(args + 5, args + 6, 3 * sizeof args[0]);   /* no shift argument (dn_bn_prepare) */
    SD_TRY(dn_step_run(c, &PRIV(op, bn_priv)->bwd, args));
    SD_TRY(dn_strm_wait(c));
    for (int k = 0; k < C; k++) { dgamma[k] += dsc[k]; dbeta[k] += dsh[k]; }
    return 0;
}
