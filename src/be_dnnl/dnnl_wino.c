/* dnnl_wino — Winograd F(4x4,3x3) convolution on the host, for 3x3 stride-1 convolutions between blocked tensors
 * (nChw8c, nChw16c) or nhwc ones (one block of all the channels). oneDNN 2.6 has a Winograd kernel only for AVX-512
 * and oneDNN 3.x none on CPUs: on AVX2 every 3x3 layer ran oneDNN's direct jit:avx2 kernel at about half the sgemm
 * ceiling (docs/roofline.md). Here each 6x6 input tile is transformed (V = Bt d B), multiplied over channels with the
 * transformed weights (U = G g Gt) as 36 matrix products M[xi] = V[xi] U[xi] (dnnl_sgemm), and transformed back
 * (Y = At M A), with bias, residual and relu on the way out: 4x fewer multiplications than direct (Lavin and Gray,
 * "Fast Algorithms for Convolutional Neural Networks", 2016; the matrices are theirs). A thread takes a chunk of tiles
 * through all three steps, so V and M stay in its cache; its products then run on one thread (oneDNN's sgemm does not
 * thread inside a parallel region). The products run over the real channels only: a blocked layer of 50 channels
 * pads them to 64, and products over the padding did (64/50)^2 the work.
 * Where U outweighs V and M of all the tiles (many channels on a small plane: VGG-16's 512 at 4x4 on CIFAR, 38 MB of
 * U that every chunk read through), the threads split the output channels instead (run_split, bwd_w_split). */
#include "be_dnnl/dnnl_be.h"

#define TILES_XI 36                      /* 6x6 transformed positions */
#define SPLIT_T 8                        /* split: the tiles a thread transforms at a time */
#define SPLIT_C 64                       /* split: the channels of a block, at most */

/* the weights' transform, U = G g Gt (and backward-weights' way back, dW = Gt dU G) */
static const float G[6][3] = {{1.0f / 4, 0, 0},
                              {-1.0f / 6, -1.0f / 6, -1.0f / 6},
                              {-1.0f / 6, 1.0f / 6, -1.0f / 6},
                              {1.0f / 24, 1.0f / 12, 1.0f / 6},
                              {1.0f / 24, -1.0f / 12, 1.0f / 6},
                              {0, 0, 1}};

#define WV 8
#include "be_dnnl/dnnl_wino_tf.inc"
#undef WV
#ifdef __AVX512F__
#define WV 16
#include "be_dnnl/dnnl_wino_tf.inc"
#undef WV
#include <immintrin.h>
/* 16 channels at a time where they come in blocks of 16 (nChw16c, nhwc with a multiple of 16) */
#define WIDE(B) ((B) % 16 == 0)

/* The 36 products on AVX-512 where the output channels come in blocks of 16: C (+)= A B over R rows of A (A[r][k]
 * at A + r ars + k aks: the tiles' transforms, or their transpose) and CV vectors of B's columns (B's rows ldb
 * apart, zero past its real columns, so every lane computed is a real product or 0). oneDNN's sgemm packed both
 * sides at each of its 36 calls a chunk (50 x 50 products of 56 rows); here B is read in place and the K loop runs
 * whole with the accumulators in registers (6 x 4 of them, 4 vectors of B and a broadcast: 29 of the 32). */
static inline __attribute__((always_inline)) void mm_tile(const int R, const int CV, long K, const float *A,
                                                          size_t ars, size_t aks, const float *B, size_t ldb,
                                                          float *C, size_t ldc, int acc) {
    __m512 c[6][4];
    for (int r = 0; r < R; r++)
        for (int v = 0; v < CV; v++) c[r][v] = acc ? _mm512_loadu_ps(C + r * ldc + 16 * v) : _mm512_setzero_ps();
    for (long k = 0; k < K; k++) {
        const float *b = B + k * ldb, *a = A + k * aks;
        __m512 bv[4];
        for (int v = 0; v < CV; v++) bv[v] = _mm512_loadu_ps(b + 16 * v);
        for (int r = 0; r < R; r++) {
            const __m512 ar = _mm512_set1_ps(a[r * ars]);
            for (int v = 0; v < CV; v++) c[r][v] = _mm512_fmadd_ps(ar, bv[v], c[r][v]);
        }
    }
    for (int r = 0; r < R; r++)
        for (int v = 0; v < CV; v++) _mm512_storeu_ps(C + r * ldc + 16 * v, c[r][v]);
}

#define MM_ROWS(CV)                                                                                                   \
    switch (R) {                                                                                                      \
    case 6: mm_tile(6, CV, K, a, ars, aks, b, ldb, c, ldc, acc); break;                                               \
    case 5: mm_tile(5, CV, K, a, ars, aks, b, ldb, c, ldc, acc); break;                                               \
    case 4: mm_tile(4, CV, K, a, ars, aks, b, ldb, c, ldc, acc); break;                                               \
    case 3: mm_tile(3, CV, K, a, ars, aks, b, ldb, c, ldc, acc); break;                                               \
    case 2: mm_tile(2, CV, K, a, ars, aks, b, ldb, c, ldc, acc); break;                                               \
    default: mm_tile(1, CV, K, a, ars, aks, b, ldb, c, ldc, acc); break;                                              \
    }

/* C[M][ceil(N/16) 16] (+)= A[M][K] B[K][...]: rows in sixes, columns in blocks of up to 4 vectors */
static void wino_mm(long M, int N, long K, const float *A, size_t ars, size_t aks, const float *B, size_t ldb,
                    float *C, size_t ldc, int acc) {
    const int NV = (N + 15) / 16;
    for (int v0 = 0; v0 < NV; v0 += 4) {
        const int CV = NV - v0 < 4 ? NV - v0 : 4;
        for (long r0 = 0; r0 < M; r0 += 6) {
            const int R = M - r0 < 6 ? (int)(M - r0) : 6;
            const float *a = A + r0 * ars, *b = B + 16 * v0;
            float *c = C + r0 * ldc + 16 * v0;
            switch (CV) {
            case 4: MM_ROWS(4) break;
            case 3: MM_ROWS(3) break;
            case 2: MM_ROWS(2) break;
            default: MM_ROWS(1) break;
            }
        }
    }
}
#undef MM_ROWS
#else
#define WIDE(B) 0
#endif

/* One of the 36 products, as dnnl_sgemm would take it (row-major; ta 'T': A is stored K x M): on the kernel above
 * where B's rows are whole vectors of 16, else through oneDNN. */
static int xi_product(char ta, long M, int N, long K, const float *A, size_t lda, const float *B, size_t ldb,
                      float beta, float *C, size_t ldc) {
#ifdef __AVX512F__
    if (WIDE(ldb)) {
        wino_mm(M, N, K, A, ta == 'T' ? 1 : lda, ta == 'T' ? lda : 1, B, ldb, C, ldc, beta != 0.0f);
        return 0;
    }
#endif
    return dnnl_sgemm(ta, 'N', M, N, K, 1.0f, A, (long)lda, B, (long)ldb, beta, C, (long)ldc) == dnnl_success ? 0 : 1;
}

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

/* the tiles of op's output: 4x4 each */
static long tiles_of(const nn_op *op) { return (long)op->n * ((op->oh + 3) / 4) * ((op->ow + 3) / 4); }

/* Whether the threads split the output channels rather than the tiles: where U (36 icp x ocp) is larger than V and M
 * of all the tiles (36 T (icp + ocp)), each chunk of tiles read all of U from memory (at 4x4, 32 tiles a thread, 38 MB
 * for 512 channels) and the backward-weights summed a 38 MB dU a thread. Blocks of output channels are whole vectors
 * of 16 (ocp a multiple of 16). SD_DNNL_WINO_SPLIT=on|off forces it either way (tests, comparisons). */
static int split_of(const dn_wino *k, long tiles) {
    if (k->ocp % 16) return 0;
    const char *e = getenv("SD_DNNL_WINO_SPLIT");
    if (e && (!strcmp(e, "on") || !strcmp(e, "off"))) return e[1] == 'n';
    return (double)k->icp * k->ocp > (double)tiles * (k->icp + k->ocp);
}

/* SPLIT_C channels a block, fewer where that leaves a thread fewer than two blocks */
static int split_block(int ocp, int threads) {
    int b = SPLIT_C;
    while (b > 16 && (ocp + b - 1) / b < 2 * threads) b /= 2;
    return b;
}

const char *dn_wino_name(const dn_wino *k) { return k->split ? "host winograd split" : "host winograd"; }

/* The floats between one transformed position's plane of V (or M) and the next: the 36 planes a tile's transform
 * writes (or reads) lie a cache line apart modulo 4 KiB, not on the few sets of the L1 cache that a stride of a
 * multiple of 2 KiB maps them to (each of their stores then evicted another's line). */
static size_t plane(size_t floats) { return (floats + 1023) / 1024 * 1024 + 16; }

int dn_wino_make(dnnl_ctx *c, dn_wino *k, const nn_op *op, int shared_u) {
    dn_wino_release(k);
    k->bi = (int)nn_fmt_block(op->fmt_in, (size_t)op->c);
    k->bo = (int)nn_fmt_block(op->fmt_out, (size_t)op->oc);
    k->icp = (op->c + k->bi - 1) / k->bi * k->bi;
    k->ocp = (op->oc + k->bo - 1) / k->bo * k->bo;
    const size_t nu = (size_t)TILES_XI * k->icp * k->ocp;
    const long tiles = tiles_of(op);
    k->split = split_of(k, tiles);
    if (shared_u && !k->split) SD_TRY(dn_grow(&c->wino_u, &c->wino_u_bytes, nu * sizeof(float)));
    k->own_u = !shared_u;
    k->u = shared_u ? NULL : aligned_alloc(ALIGN, (nu * sizeof(float) + ALIGN - 1) / ALIGN * ALIGN);
    k->bias = aligned_alloc(ALIGN, ((size_t)k->ocp * sizeof(float) + ALIGN - 1) / ALIGN * ALIGN);
    if ((!shared_u && !k->u) || !k->bias) {
        dn_wino_release(k);
        return sd_err(SD_ENOMEM, "dnnl: cannot allocate %zu bytes of Winograd weights", nu * sizeof(float));
    }
    if (k->u) memset(k->u, 0, nu * sizeof(float));
    memset(k->bias, 0, (size_t)k->ocp * sizeof(float));
    if (k->split) {   /* V and M of all the tiles; a thread's block of U where the call transforms it */
        k->blk = split_block(k->ocp, c->threads);
        k->vx = plane((size_t)tiles * k->icp);
        k->mx = plane((size_t)tiles * k->ocp);
        k->shared = (size_t)TILES_XI * (k->vx + k->mx) * sizeof(float);
        k->per_thread = shared_u ? (size_t)TILES_XI * k->icp * k->blk * sizeof(float) : 0;
        SD_TRY(dn_grow(&c->wino_tmp, &c->wino_bytes, k->shared + k->per_thread * (size_t)c->threads));
        k->on = 1;
        return 0;
    }
    /* A chunk of tiles per thread: V [36][tc][icp] and M [36][tc][ocp], about 1 MiB together, but at least 32 tiles:
     * every chunk reads all of U (36 icp x ocp), which for 512 channels is 38 MB, and at 8 tiles a chunk (what 1 MiB
     * holds there) the products waited on memory (512->512 at 4x4 ran 2x slower than oneDNN's direct kernel); never
     * more than a thread's share of the tiles. */
    const size_t per_tile = (size_t)TILES_XI * (k->icp + k->ocp) * sizeof(float);
    const char *kb = getenv("SD_DNNL_WINO_KB");   /* the chunk's size, for experiments */
    size_t budget = (kb && atol(kb) > 0 ? (size_t)atol(kb) : 1024) * 1024;
    const long share = (tiles + c->threads - 1) / c->threads;
    long tc = (long)(budget / per_tile);
    if (tc < 32) tc = 32;
    if (tc > share) tc = share;
    k->tc = (int)(tc < 1 ? 1 : tc);
    k->vx = plane((size_t)k->tc * k->icp);
    k->mx = plane((size_t)k->tc * k->ocp);
    k->per_thread = (size_t)TILES_XI * (k->vx + k->mx) * sizeof(float);
    SD_TRY(dn_grow(&c->wino_tmp, &c->wino_bytes, k->per_thread * (size_t)c->threads));
    k->on = 1;
    return 0;
}

/* (G g Gt)[xi] for input channel i and output channels o0 .. o0 + 7 (zero from O on) into dst + xi xs: 8 at a time,
 * so the transform runs in vectors and U's rows are written 8 floats at a time */
static void weights_tf(const float *w, int C, int O, int i, int o0, int flip, float *dst, size_t xs) {
    wv_8 g[3][3], t[6][3];
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
            st_8(dst + (size_t)(r * 6 + q) * xs, t[r][0] * G[q][0] + t[r][1] * G[q][1] + t[r][2] * G[q][2]);
}

/* U[xi][i][o] = (G g Gt)[xi] for the 3x3 kernel g joining input channel i to output channel o, zero past the real
 * channels. flip: the convolution is the backward-data of w [op->c][op->oc][3][3] (its output channels are w's
 * input ones): g is w[i][o] turned by 180 degrees. */
void dn_wino_weights(dn_wino *k, const nn_op *op, const float *w, const float *bias, int flip, int threads) {
    const int C = op->c, O = op->oc, icp = k->icp, ocp = k->ocp;
    const size_t xs = (size_t)icp * ocp;
    for (int o = 0; o < ocp; o++) k->bias[o] = bias && o < O ? bias[o] : 0.0f;
    if (k->split && !k->own_u) {   /* each thread transforms its block of output channels at the call */
        k->w = w;
        k->flip = flip;
        return;
    }
    /* in training this is redone at every call, 4x the weights' size */
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int i = 0; i < C; i++)
        for (int o0 = 0; o0 < ocp; o0 += 8) weights_tf(w, C, O, i, o0, flip, k->u + (size_t)i * ocp + o0, xs);
    for (int xi = 0; xi < TILES_XI; xi++)   /* padded input channels: a shared U holds another layer's there */
        memset(k->u + (size_t)xi * xs + (size_t)C * ocp, 0, sizeof(float) * (size_t)(icp - C) * ocp);
}

static void in_chunk(const dn_wino *k, const nn_op *op, const float *x, float *V, long t0, long tn) {
#ifdef __AVX512F__
    if (WIDE(k->bi)) { in_chunk_16(k, op, x, V, t0, tn); return; }
#endif
    in_chunk_8(k, op, x, V, t0, tn);
}

static void out_chunk(const dn_wino *k, const nn_op *op, float *y, const float *M, const float *res, int relu,
                      const float *gate, long t0, long tn) {
#ifdef __AVX512F__
    if (WIDE(k->bo)) { out_chunk_16(k, op, y, M, res, relu, gate, t0, tn); return; }
#endif
    out_chunk_8(k, op, y, M, res, relu, gate, t0, tn);
}

static void dy_chunk(const dn_wino *k, const nn_op *op, const float *dy, float *Y, long t0, long tn) {
#ifdef __AVX512F__
    if (WIDE(k->bo)) { dy_chunk_16(k, op, dy, Y, t0, tn); return; }
#endif
    dy_chunk_8(k, op, dy, Y, t0, tn);
}

/* The split schedule: V of all the tiles (SPLIT_T at a time across the threads), then the products by blocks of
 * output channels, M[xi][.][block] = V[xi] U[xi][.][block] (the block of U transformed just before where the weights
 * are the call's: 36 icp x blk in the thread's cache, not all of U through memory), then the output transform. */
static int run_split(dnnl_ctx *c, const dn_wino *k, const nn_op *op, float *y, const float *x, const float *res,
                     int relu, const float *gate) {
    const int icp = k->icp, ocp = k->ocp, blk = k->blk, C = op->c, O = op->oc, nb = (O + blk - 1) / blk;
    const long T = tiles_of(op), chunks = (T + SPLIT_T - 1) / SPLIT_T;
    const size_t vx = k->vx, mx = k->mx, ux = (size_t)icp * ocp, bx = (size_t)icp * blk;
    float *V = c->wino_tmp, *M = V + (size_t)TILES_XI * vx;
    int fail = 0;
    #pragma omp parallel num_threads(c->threads) reduction(| : fail)
    {
        float *Ub = (float *)((char *)c->wino_tmp + k->shared + k->per_thread * (size_t)omp_get_thread_num());
        #pragma omp for schedule(static)
        for (long ch = 0; ch < chunks; ch++) {
            const long t0 = ch * SPLIT_T, tn = T - t0 < SPLIT_T ? T - t0 : SPLIT_T;
            in_chunk(k, op, x, V + (size_t)t0 * icp, t0, tn);
        }
        #pragma omp for schedule(static)
        for (int b = 0; b < nb; b++) {
            const int o0 = b * blk, n = O - o0 < blk ? O - o0 : blk;
            if (!k->own_u)   /* whole vectors of 16 columns, zero past O: the products read them so */
                for (int i = 0; i < C; i++)
                    for (int j = 0; j < (n + 15) / 16 * 16; j += 8)
                        weights_tf(k->w, C, O, i, o0 + j, k->flip, Ub + (size_t)i * blk + j, bx);
            /* k->u is NULL where the call's weights are transformed here: no offset taken from it then */
            const float *u = k->own_u ? k->u + o0 : Ub;
            const size_t ldb = k->own_u ? (size_t)ocp : (size_t)blk, xs = k->own_u ? ux : bx;
            for (int xi = 0; xi < TILES_XI && !fail; xi++)
                fail = xi_product('N', T, n, C, V + xi * vx, icp, u + xi * xs, ldb, 0.0f, M + xi * mx + o0, ocp);
        }
        #pragma omp for schedule(static)
        for (long ch = 0; ch < chunks; ch++) {
            const long t0 = ch * SPLIT_T, tn = T - t0 < SPLIT_T ? T - t0 : SPLIT_T;
            if (!fail) out_chunk(k, op, y, M + (size_t)t0 * ocp, res, relu, gate, t0, tn);
        }
    }
    return fail ? sd_err(SD_EBACKEND, "oneDNN: dnnl_sgemm failed in a Winograd convolution") : 0;
}

int dn_wino_run(dnnl_ctx *c, const dn_wino *k, const nn_op *op, float *y, const float *x, const float *res,
                int relu, const float *gate) {
    if (k->split) return run_split(c, k, op, y, x, res, relu, gate);
    const int icp = k->icp, ocp = k->ocp, tc = k->tc;
    const long T = tiles_of(op), chunks = (T + tc - 1) / tc;
    const size_t vx = k->vx, mx = k->mx, ux = (size_t)icp * ocp;   /* strides between xi */
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
                fail = xi_product('N', tn, op->oc, op->c, V + xi * vx, icp, k->u + xi * ux, ocp, 0.0f, M + xi * mx,
                                  ocp);
            if (!fail) out_chunk(k, op, y, M, res, relu, gate, t0, tn);
        }
    }
    return fail ? sd_err(SD_EBACKEND, "oneDNN: dnnl_sgemm failed in a Winograd convolution") : 0;
}

/* ---- backward-weights: dW += G^T [sum over tiles of (Bt d B) (.) (A dy At)] G ------------------------------------
 * The same identity read backwards (y = At [(G g Gt) (.) (Bt d B)] A is linear in g): per tile the input's transform
 * as in forward and dy's 4x4 tile (zero past the output's edge) taken to 6x6 by A; the 36 products now sum over the
 * tiles, dU[xi] += V[xi]^T Y[xi] (icp x ocp). Each thread sums its chunks into its own dU (ctx->wino_du); the
 * threads' sums are added and taken back to 3x3 at the end. */
int dn_wino_make_bwd_w(dnnl_ctx *c, dn_wino *k, const nn_op *op) {
    SD_TRY(dn_wino_make(c, k, op, 1));
    if (k->split) {   /* one blk x blk block of dU a thread at a time, taken back to 3x3 at once */
        k->per_thread = (size_t)TILES_XI * k->blk * k->blk * sizeof(float);
        return dn_grow(&c->wino_tmp, &c->wino_bytes, k->shared + k->per_thread * (size_t)c->threads);
    }
    const size_t du = (size_t)TILES_XI * k->icp * k->ocp * sizeof(float);
    return dn_grow(&c->wino_du, &c->wino_du_bytes, du * (size_t)c->threads);
}

/* dW[o][i] += G^T u G for input channel i and output channels o0 .. o0 + 7 below O, u the 36 positions' sums */
static void dw_add_8(float *dw, const wv_8 u[TILES_XI], int C, int O, int i, int o0) {
    wv_8 t[3][6];
    for (int a = 0; a < 3; a++)
        for (int q = 0; q < 6; q++) {
            wv_8 v = bc_8(0.0f);
            for (int r = 0; r < 6; r++) v += G[r][a] * u[r * 6 + q];
            t[a][q] = v;
        }
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            wv_8 v = bc_8(0.0f);
            for (int q = 0; q < 6; q++) v += t[a][q] * G[q][b];
            for (int l = 0; l < 8 && o0 + l < O; l++) dw[((size_t)(o0 + l) * C + i) * 9 + a * 3 + b] += v[l];
        }
}

/* The split schedule: V and Y of all the tiles, then blocks of dU (input x output channels, blk x blk) over all the
 * tiles, each taken back to 3x3 by the thread that summed it: no thread's whole dU, no reduction over threads. */
static int bwd_w_split(dnnl_ctx *c, const dn_wino *k, const nn_op *op, float *dw, const float *dy, const float *x) {
    const int icp = k->icp, ocp = k->ocp, blk = k->blk, C = op->c, O = op->oc;
    const int ni = (C + blk - 1) / blk, no = (O + blk - 1) / blk;
    const long T = tiles_of(op), chunks = (T + SPLIT_T - 1) / SPLIT_T;
    const size_t vx = k->vx, mx = k->mx, bb = (size_t)blk * blk;
    float *V = c->wino_tmp, *Y = V + (size_t)TILES_XI * vx;
    int fail = 0;
    #pragma omp parallel num_threads(c->threads) reduction(| : fail)
    {
        float *dU = (float *)((char *)c->wino_tmp + k->shared + k->per_thread * (size_t)omp_get_thread_num());
        memset(dU, 0, k->per_thread);   /* columns past a block's real ones are read (whole vectors), never used */
        #pragma omp for schedule(static)
        for (long ch = 0; ch < chunks; ch++) {
            const long t0 = ch * SPLIT_T, tn = T - t0 < SPLIT_T ? T - t0 : SPLIT_T;
            in_chunk(k, op, x, V + (size_t)t0 * icp, t0, tn);
            dy_chunk(k, op, dy, Y + (size_t)t0 * ocp, t0, tn);
        }
        #pragma omp for schedule(static)
        for (int b = 0; b < ni * no; b++) {
            const int i0 = b / no * blk, o0 = b % no * blk;
            const int m = C - i0 < blk ? C - i0 : blk, n = O - o0 < blk ? O - o0 : blk;
            for (int xi = 0; xi < TILES_XI && !fail; xi++)
                fail = xi_product('T', m, n, T, V + xi * vx + i0, icp, Y + xi * mx + o0, ocp, 0.0f, dU + xi * bb,
                                  (size_t)blk);
            for (int i = 0; i < m && !fail; i++)
                for (int o = 0; o < n; o += 8) {
                    wv_8 u[TILES_XI];
                    for (int xi = 0; xi < TILES_XI; xi++) u[xi] = ld_8(dU + xi * bb + (size_t)i * blk + o);
                    dw_add_8(dw, u, C, O, i0 + i, o0 + o);
                }
        }
    }
    return fail ? sd_err(SD_EBACKEND, "oneDNN: dnnl_sgemm failed in a Winograd backward-weights") : 0;
}

int dn_wino_bwd_w(dnnl_ctx *c, const dn_wino *k, const nn_op *op, float *dw, const float *dy, const float *x) {
    if (k->split) return bwd_w_split(c, k, op, dw, dy, x);
    const int icp = k->icp, ocp = k->ocp, tc = k->tc, nt = c->threads, C = op->c, O = op->oc;
    const long T = tiles_of(op), chunks = (T + tc - 1) / tc;
    const size_t vx = k->vx, mx = k->mx, ux = (size_t)icp * ocp;
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
            dy_chunk(k, op, dy, Y, t0, tn);
            for (int xi = 0; xi < TILES_XI && !fail; xi++)
                fail = xi_product('T', C, O, tn, V + xi * vx, icp, Y + xi * mx, ocp, 1.0f, dU + xi * ux, ocp);
        }
        #pragma omp barrier
        /* the threads' sums, back to 3x3: dW[o][i] += G^T dU[.][i][o] G, 8 output channels at a time */
        #pragma omp for schedule(static)
        for (int i = 0; i < C; i++)
            for (int o0 = 0; o0 < O; o0 += 8) {
                wv_8 u[TILES_XI];
                for (int xi = 0; xi < TILES_XI; xi++) {
                    wv_8 a = bc_8(0.0f);
                    for (int th = 0; th < nt; th++)
                        a += ld_8((const float *)c->wino_du + ((size_t)th * TILES_XI + xi) * ux + (size_t)i * ocp + o0);
                    u[xi] = a;
                }
                dw_add_8(dw, u, C, O, i, o0);
            }
    }
    return fail ? sd_err(SD_EBACKEND, "oneDNN: dnnl_sgemm failed in a Winograd backward-weights") : 0;
}
