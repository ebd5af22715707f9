/* dnnl_wino — Winograd F(4x4,3x3) convolution on the host, for 3x3 stride-1 convolutions between blocked tensors
 * (nChw8c, nChw16c) or nhwc ones (one block of all the channels). oneDNN 2.6 has a Winograd kernel only for AVX-512
 * and oneDNN 3.x none on CPUs: on AVX2 every 3x3 layer ran oneDNN's direct jit:avx2 kernel at about half the sgemm
 * ceiling (docs/roofline.md). Here each 6x6 input tile is transformed (V = Bt d B), multiplied over channels with the
 * transformed weights (U = G g Gt) as 36 matrix products M[xi] = V[xi] U[xi] (dnnl_sgemm), and transformed back
 * (Y = At M A), with bias, residual and relu on the way out: 4x fewer multiplications than direct (Lavin and Gray,
 * "Fast Algorithms for Convolutional Neural Networks", 2016; the matrices are theirs). A thread takes a chunk of tiles
 * through all three steps, so V and M stay in its cache; its products then run on one thread (oneDNN's sgemm does not
 * thread inside a parallel region). The products run over the real channels only: a blocked layer of 50 channels
 * pads them to 64, and products over the padding did (64/50)^2 the work. */
#include "be_dnnl/dnnl_be.h"

#define TILES_XI 36                      /* 6x6 transformed positions */

/* the weights' transform, U = G g Gt (and backward-weights' way back, dW = Gt dU G) */
static const float G[6][3] = {{1.0f / 4, 0, 0},
                              {-1.0f / 6, -1.0f / 6, -1.0f / 6},
                              {-1.0f / 6, 1.0f / 6, -1.0f / 6},
                              {1.0f / 24, 1.0f / 12, 1.0f / 6},
                              {1.0f / 24, -1.0f / 12, 1.0f / 6},
                              {0, 0, 1}};

typedef float v8 __attribute__((vector_size(32)));
typedef int v8i __attribute__((vector_size(32)));
static inline v8 ld8(const float *p) { v8 v; memcpy(&v, p, sizeof v); return v; }
static inline void st8(float *p, v8 v) { memcpy(p, &v, sizeof v); }
static inline v8 bc8(float f) { return (v8){f, f, f, f, f, f, f, f}; }

int dn_wino_ok(const nn_op *op, int x_fmt, int y_fmt) {
    const char *e = getenv("SD_DNNL_WINO");
    if (e && strcmp(e, "off") == 0) return 0;
    return op->kind == NN_OP_CONV2D && op->kh == 3 && op->kw == 3 && op->sh == 1 && op->sw == 1 && op->ph >= 0 &&
           op->ph <= 2 && op->pw >= 0 && op->pw <= 2 && op->oh == op->h + 2 * op->ph - 2 &&
           op->ow == op->w + 2 * op->pw - 2 && op->oh > 0 && op->ow > 0 && x_fmt == y_fmt &&
           (x_fmt == NN_FMT_NCHW16C || x_fmt == NN_FMT_NCHW8C ||   /* a fixed block of 8 or 16 lanes */
            (x_fmt == NN_FMT_NHWC && op->c % 8 == 0 && op->oc % 8 == 0));   /* whole vectors of 8 channels */
}

/* 1 when SD_DNNL_WINO=on asks for it wherever dn_wino_ok allows (tests, comparisons): nothing is timed */
int dn_wino_forced(void) {
    const char *e = getenv("SD_DNNL_WINO");
    return e && strcmp(e, "on") == 0;
}

void dn_wino_release(dn_wino *k) {
    if (k->own_u) free(k->u);
    free(k->bias);
    memset(k, 0, sizeof *k);
}

int dn_wino_make(dnnl_ctx *c, dn_wino *k, const nn_op *op, int shared_u) {
    dn_wino_release(k);
    k->bi = (int)nn_fmt_block(op->fmt_in, (size_t)op->c);
    k->bo = (int)nn_fmt_block(op->fmt_out, (size_t)op->oc);
    k->icp = (op->c + k->bi - 1) / k->bi * k->bi;
    k->ocp = (op->oc + k->bo - 1) / k->bo * k->bo;
    const size_t nu = (size_t)TILES_XI * k->icp * k->ocp;
    if (shared_u) SD_TRY(dn_grow(&c->wino_u, &c->wino_u_bytes, nu * sizeof(float)));
    k->own_u = !shared_u;
    k->u = shared_u ? NULL : aligned_alloc(ALIGN, (nu * sizeof(float) + ALIGN - 1) / ALIGN * ALIGN);
    k->bias = aligned_alloc(ALIGN, ((size_t)k->ocp * sizeof(float) + ALIGN - 1) / ALIGN * ALIGN);
    if ((!shared_u && !k->u) || !k->bias) {
        dn_wino_release(k);
        return sd_err(SD_ENOMEM, "dnnl: cannot allocate %zu bytes of Winograd weights", nu * sizeof(float));
    }
    if (k->u) memset(k->u, 0, nu * sizeof(float));
    memset(k->bias, 0, (size_t)k->ocp * sizeof(float));
    /* A chunk of tiles per thread: V [36][tc][icp] and M [36][tc][ocp], about 1 MiB together, but at least 32 tiles:
     * every chunk reads all of U (36 icp x ocp), which for 512 channels is 38 MB, and at 8 tiles a chunk (what 1 MiB
     * holds there) the products waited on memory (512->512 at 4x4 ran 2x slower than oneDNN's direct kernel); never
     * more than a thread's share of the tiles. */
    const size_t per_tile = (size_t)TILES_XI * (k->icp + k->ocp) * sizeof(float);
    const char *kb = getenv("SD_DNNL_WINO_KB");   /* the chunk's size, for experiments */
    size_t budget = (kb && atol(kb) > 0 ? (size_t)atol(kb) : 1024) * 1024;
    const long tiles = (long)op->n * ((op->oh + 3) / 4) * ((op->ow + 3) / 4);
    const long share = (tiles + c->threads - 1) / c->threads;
    long tc = (long)(budget / per_tile);
    if (tc < 32) tc = 32;
    if (tc > share) tc = share;
    k->tc = (int)(tc < 1 ? 1 : tc);
    k->per_thread = (size_t)k->tc * per_tile;
    SD_TRY(dn_grow(&c->wino_tmp, &c->wino_bytes, k->per_thread * (size_t)c->threads));
    k->on = 1;
    return 0;
}

/* U[xi][i][o] = (G g Gt)[xi] for the 3x3 kernel g joining input channel i to output channel o, zero past the real
 * channels. flip: the convolution is the backward-data of w [op->c][op->oc][3][3] (its output channels are w's
 * input ones): g is w[i][o] turned by 180 degrees. */
void dn_wino_weights(dn_wino *k, const nn_op *op, const float *w, const float *bias, int flip, int threads) {
    const int C = op->c, O = op->oc, icp = k->icp, ocp = k->ocp;
    const size_t xs = (size_t)icp * ocp;
    /* 8 output channels at a time, so the transform runs in vectors and U's rows are written 8 floats at a time: in
     * training it is redone at every call, 4x the weights' size */
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int i = 0; i < C; i++)
        for (int o0 = 0; o0 < ocp; o0 += 8) {
            v8 g[3][3], t[6][3];
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++) {
                    const int at = flip ? (2 - a) * 3 + (2 - b) : a * 3 + b;
                    for (int l = 0; l < 8; l++) {
                        const int o = o0 + l;
                        g[a][b][l] = o >= O ? 0.0f : flip ? w[((size_t)i * O + o) * 9 + at] : w[((size_t)o * C + i) * 9 + at];
                    }
                }
            for (int r = 0; r < 6; r++)
                for (int b = 0; b < 3; b++) t[r][b] = G[r][0] * g[0][b] + G[r][1] * g[1][b] + G[r][2] * g[2][b];
            for (int r = 0; r < 6; r++)
                for (int q = 0; q < 6; q++)
                    st8(k->u + (size_t)(r * 6 + q) * xs + (size_t)i * ocp + o0,
                        t[r][0] * G[q][0] + t[r][1] * G[q][1] + t[r][2] * G[q][2]);
        }
    for (int xi = 0; xi < TILES_XI; xi++)   /* padded input channels: a shared U holds another layer's there */
        memset(k->u + (size_t)xi * xs + (size_t)C * ocp, 0, sizeof(float) * (size_t)(icp - C) * ocp);
    for (int o = 0; o < ocp; o++) k->bias[o] = bias && o < O ? bias[o] : 0.0f;
}

/* Bt d B over one 6x6 tile of 8 channels */
static inline void in_tf(v8 d[6][6], float *v, size_t xstride) {
    v8 t[6][6];
    for (int j = 0; j < 6; j++) {
        const v8 d0 = d[0][j], d1 = d[1][j], d2 = d[2][j], d3 = d[3][j], d4 = d[4][j], d5 = d[5][j];
        t[0][j] = 4 * d0 - 5 * d2 + d4;
        t[1][j] = -4 * d1 - 4 * d2 + d3 + d4;
        t[2][j] = 4 * d1 - 4 * d2 - d3 + d4;
        t[3][j] = -2 * d1 - d2 + 2 * d3 + d4;
        t[4][j] = 2 * d1 - d2 - 2 * d3 + d4;
        t[5][j] = 4 * d1 - 5 * d3 + d5;
    }
    for (int i = 0; i < 6; i++) {
        const v8 d0 = t[i][0], d1 = t[i][1], d2 = t[i][2], d3 = t[i][3], d4 = t[i][4], d5 = t[i][5];
        float *o = v + (size_t)i * 6 * xstride;
        st8(o, 4 * d0 - 5 * d2 + d4);
        st8(o + xstride, -4 * d1 - 4 * d2 + d3 + d4);
        st8(o + 2 * xstride, 4 * d1 - 4 * d2 - d3 + d4);
        st8(o + 3 * xstride, -2 * d1 - d2 + 2 * d3 + d4);
        st8(o + 4 * xstride, 2 * d1 - d2 - 2 * d3 + d4);
        st8(o + 5 * xstride, 4 * d1 - 5 * d3 + d5);
    }
}

/* At m A: 4x4 outputs of 8 channels from one tile's 36 products */
static inline void out_tf(const float *m, size_t xstride, v8 y[4][4]) {
    v8 t[4][6];
    for (int j = 0; j < 6; j++) {
        const v8 m0 = ld8(m + (size_t)j * xstride), m1 = ld8(m + (size_t)(6 + j) * xstride),
                 m2 = ld8(m + (size_t)(12 + j) * xstride), m3 = ld8(m + (size_t)(18 + j) * xstride),
                 m4 = ld8(m + (size_t)(24 + j) * xstride), m5 = ld8(m + (size_t)(30 + j) * xstride);
        const v8 a = m1 + m2, b = m1 - m2, c = m3 + m4, d = m3 - m4;
        t[0][j] = m0 + a + c;
        t[1][j] = b + 2 * d;
        t[2][j] = a + 4 * c;
        t[3][j] = b + 8 * d + m5;
    }
    for (int r = 0; r < 4; r++) {
        const v8 a = t[r][1] + t[r][2], b = t[r][1] - t[r][2], c = t[r][3] + t[r][4], d = t[r][3] - t[r][4];
        y[r][0] = t[r][0] + a + c;
        y[r][1] = b + 2 * d;
        y[r][2] = a + 4 * c;
        y[r][3] = b + 8 * d + t[r][5];
    }
}

/* V [36][tc][icp] of tiles t0 .. t0 + tn - 1 of x (op->fmt_in) */
static void in_chunk(const dn_wino *k, const nn_op *op, const float *x, float *V, long t0, long tn) {
    const int B = k->bi, H = op->h, W = op->w, icp = k->icp, CB = icp / B;
    const int TW = (op->ow + 3) / 4;
    const long TI = (long)((op->oh + 3) / 4) * TW;
    const size_t vx = (size_t)k->tc * icp;
    for (long t = 0; t < tn; t++) {
        const long tt = t0 + t, n = tt / TI, ty = tt % TI / TW, tx = tt % TW;
        const int y0 = (int)ty * 4 - op->ph, x0 = (int)tx * 4 - op->pw;
        const int inside = y0 >= 0 && x0 >= 0 && y0 + 6 <= H && x0 + 6 <= W;
        for (int cb = 0; cb < CB; cb++)
            for (int g = 0; g < B && cb * B + g < op->c; g += 8) {
                const float *xp = x + (size_t)(n * CB + cb) * H * W * B + g;
                v8 d[6][6];
                for (int i = 0; i < 6; i++)
                    for (int j = 0; j < 6; j++) {
                        const int iy = y0 + i, ix = x0 + j;
                        d[i][j] = inside || (iy >= 0 && iy < H && ix >= 0 && ix < W)
                                      ? ld8(xp + ((size_t)iy * W + ix) * B) : bc8(0.0f);
                    }
                in_tf(d, V + (size_t)t * icp + (size_t)cb * B + g, vx);
            }
    }
}

int dn_wino_run(dnnl_ctx *c, const dn_wino *k, const nn_op *op, float *y, const float *x, const float *res,
                int relu) {
    const int B = k->bo, OH = op->oh, OW = op->ow, icp = k->icp, ocp = k->ocp, tc = k->tc;
    const int TH = (OH + 3) / 4, TW = (OW + 3) / 4, OB = ocp / B;
    const long TI = (long)TH * TW, T = (long)op->n * TI, chunks = (T + tc - 1) / tc;
    const size_t vx = (size_t)tc * icp, mx = (size_t)tc * ocp, ux = (size_t)icp * ocp;   /* strides between xi */
    int fail = 0;
    #pragma omp parallel num_threads(c->threads) reduction(| : fail)
    {
        float *V = (float *)((char *)c->wino_tmp + k->per_thread * (size_t)omp_get_thread_num());
        float *M = V + (size_t)TILES_XI * vx;
        #pragma omp for schedule(static)
        for (long ch = 0; ch < chunks; ch++) {
            const long t0 = ch * tc, tn = T - t0 < tc ? T - t0 : tc;
            in_chunk(k, op, x, V, t0, tn);
            for (int xi = 0; xi < TILES_XI && !fail; xi++)
                if (dnnl_sgemm('N', 'N', tn, op->oc, op->c, 1.0f, V + xi * vx, icp, k->u + xi * ux, ocp, 0.0f,
                               M + xi * mx, ocp) != dnnl_success) fail = 1;
            for (long t = 0; t < tn && !fail; t++) {   /* output transform, bias, residual, relu */
                const long tt = t0 + t, n = tt / TI, ty = tt % TI / TW, tx = tt % TW;
                const int rows = OH - (int)ty * 4 < 4 ? OH - (int)ty * 4 : 4, cols = OW - (int)tx * 4 < 4 ? OW - (int)tx * 4 : 4;
                for (int ob = 0; ob < OB; ob++)
                    for (int g = 0; g < B; g += 8) {
                        const int oc0 = ob * B + g;
                        const size_t base = (size_t)(n * OB + ob) * OH * OW * B + g;
                        if (oc0 >= op->oc) {   /* a whole vector of padded channels: M holds nothing there */
                            for (int r = 0; r < rows; r++)
                                for (int s = 0; s < cols; s++)
                                    st8(y + base + ((size_t)(ty * 4 + r) * OW + (size_t)(tx * 4 + s)) * B, bc8(0.0f));
                            continue;
                        }
                        v8 o[4][4];
                        out_tf(M + (size_t)t * ocp + oc0, mx, o);
                        const v8 bias = ld8(k->bias + oc0);
                        v8i keep;   /* padded channels stay exactly 0 */
                        for (int l = 0; l < 8; l++) keep[l] = oc0 + l < op->oc ? -1 : 0;
                        for (int r = 0; r < rows; r++)
                            for (int s = 0; s < cols; s++) {
                                const size_t at = base + ((size_t)(ty * 4 + r) * OW + (size_t)(tx * 4 + s)) * B;
                                v8 v = o[r][s] + bias;
                                if (res) v += ld8(res + at);
                                if (relu) v = (v8)((v8i)v & (v > bc8(0.0f)));
                                st8(y + at, (v8)((v8i)v & keep));
                            }
                    }
            }
        }
    }
    return fail ? sd_err(SD_EBACKEND, "oneDNN: dnnl_sgemm failed in a Winograd convolution") : 0;
}

/* ---- backward-weights: dW += G^T [sum over tiles of (Bt d B) (.) (A dy At)] G ------------------------------------
 * The same identity read backwards (y = At [(G g Gt) (.) (Bt d B)] A is linear in g): per tile the input's transform
 * as in forward and dy's 4x4 tile (zero past the output's edge) taken to 6x6 by A; the 36 products now sum over the
 * tiles, dU[xi] += V[xi]^T Y[xi] (icp x ocp). Each thread sums its chunks into its own dU (ctx->wino_du); the
 * threads' sums are added and taken back to 3x3 at the end. */
static inline void dy_tf(v8 d[4][4], float *y, size_t xstride) {
    v8 t[6][4];
    for (int j = 0; j < 4; j++) {
        const v8 d0 = d[0][j], d1 = d[1][j], d2 = d[2][j], d3 = d[3][j];
        t[0][j] = d0;
        t[1][j] = d0 + d1 + d2 + d3;
        t[2][j] = d0 - d1 + d2 - d3;
        t[3][j] = d0 + 2 * d1 + 4 * d2 + 8 * d3;
        t[4][j] = d0 - 2 * d1 + 4 * d2 - 8 * d3;
        t[5][j] = d3;
    }
    for (int i = 0; i < 6; i++) {
        const v8 d0 = t[i][0], d1 = t[i][1], d2 = t[i][2], d3 = t[i][3];
        float *o = y + (size_t)i * 6 * xstride;
        st8(o, d0);
        st8(o + xstride, d0 + d1 + d2 + d3);
        st8(o + 2 * xstride, d0 - d1 + d2 - d3);
        st8(o + 3 * xstride, d0 + 2 * d1 + 4 * d2 + 8 * d3);
        st8(o + 4 * xstride, d0 - 2 * d1 + 4 * d2 - 8 * d3);
        st8(o + 5 * xstride, d3);
    }
}

int dn_wino_make_bwd_w(dnnl_ctx *c, dn_wino *k, const nn_op *op) {
    SD_TRY(dn_wino_make(c, k, op, 1));
    const size_t du = (size_t)TILES_XI * k->icp * k->ocp * sizeof(float);
    return dn_grow(&c->wino_du, &c->wino_du_bytes, du * (size_t)c->threads);
}

int dn_wino_bwd_w(dnnl_ctx *c, const dn_wino *k, const nn_op *op, float *dw, const float *dy, const float *x) {
    const int B = k->bo, OH = op->oh, OW = op->ow, icp = k->icp, ocp = k->ocp, tc = k->tc, nt = c->threads;
    const int TH = (OH + 3) / 4, TW = (OW + 3) / 4, OB = ocp / B, C = op->c, O = op->oc;
    const long TI = (long)TH * TW, T = (long)op->n * TI, chunks = (T + tc - 1) / tc;
    const size_t vx = (size_t)tc * icp, mx = (size_t)tc * ocp, ux = (size_t)icp * ocp;
    int fail = 0;
    #pragma omp parallel num_threads(nt) reduction(| : fail)
    {
        const int me = omp_get_thread_num();
        float *V = (float *)((char *)c->wino_tmp + k->per_thread * (size_t)me);
        float *Y = V + (size_t)TILES_XI * vx;
        float *dU = (float *)c->wino_du + (size_t)me * TILES_XI * ux;
        memset(dU, 0, sizeof(float) * TILES_XI * ux);
        #pragma omp for schedule(static)
        for (long ch = 0; ch < chunks; ch++) {
            const long t0 = ch * tc, tn = T - t0 < tc ? T - t0 : tc;
            in_chunk(k, op, x, V, t0, tn);
            for (long t = 0; t < tn; t++) {
                const long tt = t0 + t, n = tt / TI, ty = tt % TI / TW, tx = tt % TW;
                const int rows = OH - (int)ty * 4 < 4 ? OH - (int)ty * 4 : 4, cols = OW - (int)tx * 4 < 4 ? OW - (int)tx * 4 : 4;
                for (int ob = 0; ob < OB; ob++)
                    for (int g = 0; g < B && ob * B + g < O; g += 8) {
                        const float *yp = dy + (size_t)(n * OB + ob) * OH * OW * B + g;
                        v8 d[4][4];
                        for (int r = 0; r < 4; r++)
                            for (int q = 0; q < 4; q++)
                                d[r][q] = r < rows && q < cols
                                              ? ld8(yp + ((size_t)(ty * 4 + r) * OW + (size_t)(tx * 4 + q)) * B) : bc8(0.0f);
                        dy_tf(d, Y + (size_t)t * ocp + (size_t)ob * B + g, mx);
                    }
            }
            for (int xi = 0; xi < TILES_XI && !fail; xi++)
                if (dnnl_sgemm('T', 'N', C, O, tn, 1.0f, V + xi * vx, icp, Y + xi * mx, ocp, 1.0f, dU + xi * ux,
                               ocp) != dnnl_success) fail = 1;
        }
        #pragma omp barrier
        /* the threads' sums, back to 3x3: dW[o][i] += G^T dU[.][i][o] G, 8 output channels at a time */
        #pragma omp for schedule(static)
        for (int i = 0; i < C; i++)
            for (int o0 = 0; o0 < O; o0 += 8) {
                v8 u[6][6], t[3][6];
                for (int xi = 0; xi < TILES_XI; xi++) {
                    v8 a = bc8(0.0f);
                    for (int th = 0; th < nt; th++)
                        a += ld8((const float *)c->wino_du + ((size_t)th * TILES_XI + xi) * ux + (size_t)i * ocp + o0);
                    u[xi / 6][xi % 6] = a;
                }
                for (int a = 0; a < 3; a++)
                    for (int q = 0; q < 6; q++) {
                        v8 v = bc8(0.0f);
                        for (int r = 0; r < 6; r++) v += G[r][a] * u[r][q];
                        t[a][q] = v;
                    }
                for (int a = 0; a < 3; a++)
                    for (int b = 0; b < 3; b++) {
                        v8 v = bc8(0.0f);
                        for (int q = 0; q < 6; q++) v += t[a][q] * G[q][b];
                        for (int l = 0; l < 8 && o0 + l < O; l++) dw[((size_t)(o0 + l) * C + i) * 9 + a * 3 + b] += v[l];
                    }
            }
    }
    return fail ? sd_err(SD_EBACKEND, "oneDNN: dnnl_sgemm failed in a Winograd backward-weights") : 0;
}
