/* dnnl_rnn — GRU and LSTM of the dnnl back-end on the host (see dnnl_rnn.h). Examples are independent in the
 * recurrence, so each thread runs the whole sequence of its slice of the batch with no synchronisation per step;
 * oneDNN 2.6's RNN primitive splits each step's small gemm between the threads and joins them at every step, which
 * is slower (docs/performance.md). With AVX-512 or AVX2 a forward step is one fused kernel (products and gates,
 * `tile`); without, sgemms a step and the gate rows. The backward multiplies each step's gradients into the thread's weight
 * gradients while they are in cache. What backward reads (the workspace, the pre-activation gradients) is
 * time-major, [T][N][...], so that each step's rows are contiguous: batch-major, a step's rows of one example lay a
 * whole sequence apart and the backward's gate loop waited on their cache misses (docs/performance.md). */
#include "be_dnnl/dnnl_rnn.h"
#include "nn/host_ops.h"
#include "core/err.h"

#include <oneapi/dnnl/dnnl.h>

#include <omp.h>
#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif
#include <stdlib.h>
#include <string.h>

/* e^x within ~2 ulp: 2^n e^r, r in [-ln2/2, ln2/2], e^r by its degree-6 Taylor polynomial (error < 1.2e-7);
 * plain arithmetic, so that the gate loops vectorise. Its selects' comparisons go into vector code only without
 * trapping math: this file builds with -fno-trapping-math (Makefile); under GCC's default its loops stay scalar. */
static inline float exp_v(float x0) {
    /* Selects, not fmaxf/fminf: GCC calls those through the PLT without -ffinite-math-only, and the calls kept the
     * gate loops scalar (58% of an LSTM forward). A NaN compares false and clamps to -87, so the exponent is
     * always an int; a NaN input returns NaN below. */
    const float x = x0 > -87.0f ? (x0 < 88.0f ? x0 : 88.0f) : -87.0f;
    const float n = __builtin_rintf(x * 1.44269504f);
    const float r = (x - n * 0.693145752f) - n * 1.42860677e-6f;
    float p = 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    const int32_t e = ((int32_t)n + 127) << 23;
    float s;
    memcpy(&s, &e, sizeof s);
    return x0 == x0 ? p * s : x0;
}
static inline float sigm_v(float x) { return 1.0f / (1.0f + exp_v(-x)); }
static inline float tanh_v(float x) { return 1.0f - 2.0f / (1.0f + exp_v(2.0f * x)); }

typedef struct dims {
    int N, T, F, H, G, GH, lstm, nt;
    size_t per;                     /* examples per thread */
} dims;

static dims dims_of(const nn_op *op, int threads) {
    dims d;
    d.N = op->n; d.T = op->c; d.F = op->w; d.H = op->units;
    d.lstm = op->kind == NN_OP_LSTM;
    d.G = d.lstm ? NN_LSTM_GATES : NN_GRU_GATES;
    d.GH = d.G * d.H;
    d.nt = threads < d.N ? threads : d.N;
    if (d.nt < 1) d.nt = 1;
    d.per = ((size_t)d.N + d.nt - 1) / d.nt;
    return d;
}

static void slice(const dims *d, int th, int *i0, int *i1) {
    const size_t a = th * d->per, b = (th + 1) * d->per;
    *i0 = a < (size_t)d->N ? (int)a : d->N;
    *i1 = b < (size_t)d->N ? (int)b : d->N;
}

static size_t round16(size_t n) { return (n + 15) / 16 * 16; }
/* Rows of G H pre-activation gradients (and of the transposed weight gradients) lie a multiple of 64 bytes apart:
 * at babi_rnn's 200 floats, every other row's vectors straddled two cache lines. */
static size_t ldg(const dims *d) { return round16((size_t)d->GH); }


/* Steps whose weight gradients are one product in the backward. Where a step's dW += ax^T [x h] is small (under
 * 2^20 multiply-adds: babi_rnn's 200 x 100 x 16 rows a thread) it ran far below the sgemm rate, half of that
 * backward: S steps' rows (about 256) make one product of the same sum (backward 1.12-1.20x). Larger ones (imdb_gru
 * 300 x 225 x 32, mnist_hrnn's second LSTM 512 x 256 x 16) measured no faster chunked: one step each. */
static int chunk_steps(const dims *d) {
    if ((size_t)d->GH * (d->F + d->H) * d->per >= (size_t)1 << 20) return 1;
    const size_t s = 256 / (d->per ? d->per : 1);
    return s < 2 ? 1 : s > (size_t)d->T ? d->T : (int)s;
}
/* Floats a thread of backward: dh, dc, two double column sums (4 GH floats), the chunk's pre-activation gradients
 * ax (and the GRU's ah), with more than one step a chunk the copies of its x and h_prev rows, and its partial
 * weight gradients (pw, last). */
static size_t bwd_chunk(const dims *d) {
    const size_t S = (size_t)chunk_steps(d);
    return S * d->per * ((d->lstm ? 1 : 2) * ldg(d) + (S > 1 ? (size_t)d->F + d->H : 0));
}
static size_t bwd_ax(const dims *d) { return round16(2 * d->per * d->H + 4 * (size_t)d->GH); }
static size_t bwd_pw(const dims *d) { return round16(bwd_ax(d) + bwd_chunk(d)); }
static size_t bwd_each(const dims *d) { return round16(bwd_pw(d) + ldg(d) * (d->F + d->H)); }
static int gemm(char ta, char tb, size_t M, size_t N, size_t K, const float *A, size_t lda, const float *B,
                size_t ldb, float beta, float *C, size_t ldc) {
    return dnnl_sgemm(ta, tb, (dnnl_dim_t)M, (dnnl_dim_t)N, (dnnl_dim_t)K, 1.0f, A, (dnnl_dim_t)lda, B,
                      (dnnl_dim_t)ldb, beta, C, (dnnl_dim_t)ldc) == dnnl_success ? 0 : -1;
}

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
/* The forward in vectors of VL units (AVX-512: 16, AVX2: 8): a step's recurrent and input products and its gates in
 * one pass over registers. The weights are packed once a call, per block of VL units, gates side by side, so that a
 * tile of ROWS rows holds all the gate pre-activations of VL units and the gates run on it there: no gemm call a step
 * (oneDNN's sgemm repacked W_h at every step, as large as the step's product at babi_rnn's 16 rows a thread), and no
 * pre-activation buffer. Reciprocals by the approximate reciprocal and one Newton step, not a division. */
#ifdef __AVX512F__
#define VL 16
#define ROWS 4   /* rows of a tile: 4 x 4 accumulators of the 32 registers */
typedef __m512 vf;
typedef __mmask16 vm;
static inline vf vset1(float a) { return _mm512_set1_ps(a); }
static inline vf vzero(void) { return _mm512_setzero_ps(); }
static inline vf vload(const float *p) { return _mm512_load_ps(p); }
static inline vf vadd(vf a, vf b) { return _mm512_add_ps(a, b); }
static inline vf vsub(vf a, vf b) { return _mm512_sub_ps(a, b); }
static inline vf vmul(vf a, vf b) { return _mm512_mul_ps(a, b); }
static inline vf vfmadd(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }    /* a b + c */
static inline vf vfnmadd(vf a, vf b, vf c) { return _mm512_fnmadd_ps(a, b, c); }  /* c - a b */
static inline vf vmin(vf a, vf b) { return _mm512_min_ps(a, b); }
static inline vf vmax(vf a, vf b) { return _mm512_max_ps(a, b); }
static inline vm vmask(int n) { return n >= 16 ? (vm)0xFFFF : (vm)((1u << n) - 1); }
static inline vf vloadm(vm k, const float *p) { return _mm512_maskz_loadu_ps(k, p); }
static inline float vsum(vf v) { return _mm512_reduce_add_ps(v); }
static inline void vstorem(float *p, vm k, vf v) { _mm512_mask_storeu_ps(p, k, v); }
static inline vf vround(vf x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
static inline vf vscale(vf p, vf n) { return _mm512_scalef_ps(p, n); }   /* p 2^n */
static inline vf vkeep_nan(vf r, vf x) { return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x); }
static inline vf vrcp(vf d) {   /* d >= 1 here: no zero, no infinity; rcp14 and a Newton step, ~1 ulp */
    const vf r = _mm512_rcp14_ps(d);
    return vmul(r, vfnmadd(d, r, vset1(2.0f)));
}
#else
#define VL 8
#define ROWS 2   /* 2 x 4 accumulators, 4 weights and a broadcast of the 16 registers */
typedef __m256 vf;
typedef struct { __m256i k; int full; } vm;   /* AVX2's masked moves are slow: whole vectors move plainly */
static inline vf vset1(float a) { return _mm256_set1_ps(a); }
static inline vf vzero(void) { return _mm256_setzero_ps(); }
static inline vf vload(const float *p) { return _mm256_load_ps(p); }
static inline vf vadd(vf a, vf b) { return _mm256_add_ps(a, b); }
static inline vf vsub(vf a, vf b) { return _mm256_sub_ps(a, b); }
static inline vf vmul(vf a, vf b) { return _mm256_mul_ps(a, b); }
static inline vf vfmadd(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
static inline vf vfnmadd(vf a, vf b, vf c) { return _mm256_fnmadd_ps(a, b, c); }
static inline vf vmin(vf a, vf b) { return _mm256_min_ps(a, b); }
static inline vf vmax(vf a, vf b) { return _mm256_max_ps(a, b); }
static inline vm vmask(int n) {
    return (vm){_mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)), n >= 8};
}
static inline vf vloadm(vm k, const float *p) {   /* masked lanes 0, not read */
    return k.full ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, k.k);
}
static inline void vstorem(float *p, vm k, vf v) {
    if (k.full) _mm256_storeu_ps(p, v);
    else _mm256_maskstore_ps(p, k.k, v);
}
static inline float vsum(vf v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}
static inline vf vround(vf x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
static inline vf vscale(vf p, vf n) {   /* p 2^n for integral n in [-126, 127]: the exponent bits built directly */
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return vmul(p, _mm256_castsi256_ps(e));
}
static inline vf vkeep_nan(vf r, vf x) { return _mm256_blendv_ps(r, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q)); }
static inline vf vrcp(vf d) {   /* d >= 1 here; rcp's 12 bits and a Newton step: ~2 ulp */
    const vf r = _mm256_rcp_ps(d);
    return vmul(r, vfnmadd(d, r, vset1(2.0f)));
}
#endif

static inline vf vexp(vf x0) {
    /* max with NaN returns the constant: a NaN clamps to -87 (so n is an int in [-126, 127]) and is put back at the
     * end, as in exp_v */
    const vf x = vmin(vmax(x0, vset1(-87.0f)), vset1(88.0f));
    const vf n = vround(vmul(x, vset1(1.44269504f)));
    const vf r = vfnmadd(n, vset1(1.42860677e-6f), vfnmadd(n, vset1(0.693145752f), x));
    vf p = vset1(1.0f / 720.0f);
    p = vfmadd(p, r, vset1(1.0f / 120.0f));
    p = vfmadd(p, r, vset1(1.0f / 24.0f));
    p = vfmadd(p, r, vset1(1.0f / 6.0f));
    p = vfmadd(p, r, vset1(0.5f));
    p = vfmadd(p, r, vset1(1.0f));
    p = vfmadd(p, r, vset1(1.0f));
    return vkeep_nan(vscale(p, n), x0);
}
static inline vf vsigm(vf x) { return vrcp(vadd(vset1(1.0f), vexp(vsub(vzero(), x)))); }
static inline vf vtanh(vf x) { return vfnmadd(vset1(2.0f), vrcp(vadd(vset1(1.0f), vexp(vadd(x, x)))), vset1(1.0f)); }

/* The LSTM cell on VL units from the four gates' pre-activations a (biases added): c and h out, and with g the gates
 * and the new c into the workspace (gc). */
static inline __attribute__((always_inline)) void lstm_cell(const vf a[4], vm mk, int H, float *c, float *ho, float *g,
                                                            float *gc) {
    const vf ig = vsigm(a[0]), fg = vsigm(a[1]), gg = vtanh(a[2]), og = vsigm(a[3]);
    const vf cn = vfmadd(fg, vloadm(mk, c), vmul(ig, gg));
    vstorem(c, mk, cn);
    vstorem(ho, mk, vmul(og, vtanh(cn)));
    if (g) {
        vstorem(g, mk, ig);
        vstorem(g + H, mk, fg);
        vstorem(g + 2 * (size_t)H, mk, gg);
        vstorem(g + 3 * (size_t)H, mk, og);
        vstorem(gc, mk, cn);
    }
}

/* An LSTM whose units are not a multiple of VL (babi_rnn's 50) runs "flat" on AVX-512: per unit block the four
 * gates' last vectors held 2 of 16 units, and 22% of the tile's multiply-adds were on padding. Flat, the columns
 * are the 4H pre-activations end to end (200: 13 vectors, 4% padding); a tile writes them to a row buffer, from
 * which the gates are read per VL units. The GRU keeps its blocks (its n gate's two sides apart). */
#if defined(__AVX512F__)
#define FLAT_CV 6   /* column vectors of a flat tile: 4 rows x 6 accumulators, 6 weights and a broadcast */
static int flat(const dims *d) { return d->lstm && d->H % VL != 0; }
#else
static int flat(const dims *d) { (void)d; return 0; }
#endif
static int flat_vecs(const dims *d) { return (d->GH + VL - 1) / VL; }
/* Floats of the packed weights: per block of VL units, per k of [h_prev, x_t] (H + F), the G gates' VL weights;
 * flat, per block of columns, per k, its column vectors. */
static size_t packed(const dims *d) {
    const size_t blocked = (size_t)(d->H + VL - 1) / VL * (d->H + d->F) * d->G * VL;
    const size_t flat_n = (size_t)flat_vecs(d) * VL * (d->H + d->F);
    return round16(blocked > flat_n ? blocked : flat_n);
}
/* a thread: h in, h out, c, and a flat tile's pre-activation rows */
static size_t fwd_each(const dims *d) { return round16(3 * d->per * d->H + (size_t)ROWS * flat_vecs(d) * VL); }

size_t dnnl_rnn_host_fwd_tmp_bytes(const nn_op *op, int threads) {
    const dims d = dims_of(op, threads);
    return sizeof(float) * (packed(&d) + fwd_each(&d) * d.nt);
}

static void pack(const dims *d, const float *Wx, const float *Wh, float *wp) {
    const int H = d->H, F = d->F, G = d->G, K = H + F;
    #pragma omp parallel for num_threads(d->nt) schedule(static)
    for (int ub = 0; ub < (H + VL - 1) / VL; ub++)
        for (int k = 0; k < K; k++)
            for (int q = 0; q < G; q++)
                for (int l = 0; l < VL; l++) {
                    const int u = ub * VL + l;
                    wp[(((size_t)ub * K + k) * G + q) * VL + l] =
                        u >= H ? 0.0f : k < H ? Wh[((size_t)q * H + u) * H + k] : Wx[((size_t)q * H + u) * F + k - H];
                }
}

/* A weight vector stays in a register for the tile's rows: GCC otherwise reloads it in every row's FMA, and the
 * loads, not the FMAs, set the pace. */
#define KEEP(v) __asm__("" : "+v"(v))

/* acc[r][q] = the pre-activation of gate q, units of the block wp, row r: h[r] . W_h (when t > 0) + x[r] . W_x.
 * The GRU's new gate keeps its input side apart, in acc[r][3] (nn = tanh(x W_xn + r (h W_hn + b_hn))). */
static inline __attribute__((always_inline)) void tile(const int G, const int gru, int t, int H, int F,
                                                       const float *wp, const float *const *h, const float *const *x,
                                                       vf acc[ROWS][4]) {
    for (int r = 0; r < ROWS; r++)
        for (int q = 0; q < 4; q++) acc[r][q] = vzero();
    if (t)
        for (int k = 0; k < H; k++) {
            vf w[4];
            for (int q = 0; q < G; q++) w[q] = vload(wp + ((size_t)k * G + q) * VL);
            for (int q = 0; q < G; q++) KEEP(w[q]);
            for (int r = 0; r < ROWS; r++) {
                const vf b = vset1(h[r][k]);
                for (int q = 0; q < G; q++) acc[r][q] = vfmadd(b, w[q], acc[r][q]);
            }
        }
    for (int f = 0; f < F; f++) {
        vf w[4];
        for (int q = 0; q < G; q++) w[q] = vload(wp + ((size_t)(H + f) * G + q) * VL);
        for (int q = 0; q < G; q++) KEEP(w[q]);
        for (int r = 0; r < ROWS; r++) {
            const vf b = vset1(x[r][f]);
            for (int q = 0; q < G; q++) {
                const int a = gru && q == 2 ? 3 : q;
                acc[r][a] = vfmadd(b, w[q], acc[r][a]);
            }
        }
    }
}

#if defined(__AVX512F__)
/* Block b of nb over nv column vectors, as even as they come: its first vector and its count. */
static void flat_block(int nv, int nb, int b, int *v0, int *cv) {
    const int base = nv / nb, rem = nv % nb;
    *cv = base + (b < rem);
    *v0 = b * base + (b < rem ? b : rem);
}
static int flat_blocks(int nv) { return (nv + FLAT_CV - 1) / FLAT_CV; }

/* Flat: column j = gate * H + unit, as W_h's and W_x's rows; zero past 4H. */
static void flat_pack(const dims *d, const float *Wx, const float *Wh, float *wp) {
    const int H = d->H, F = d->F, K = H + F, GH = d->GH, nv = flat_vecs(d), nb = flat_blocks(nv);
    #pragma omp parallel for num_threads(d->nt) schedule(static)
    for (int b = 0; b < nb; b++) {
        int v0, cv;
        flat_block(nv, nb, b, &v0, &cv);
        float *p = wp + (size_t)v0 * VL * K;
        for (int k = 0; k < K; k++)
            for (int q = 0; q < cv; q++)
                for (int l = 0; l < VL; l++) {
                    const int j = (v0 + q) * VL + l;
                    p[((size_t)k * cv + q) * VL + l] =
                        j >= GH ? 0.0f : k < H ? Wh[(size_t)j * H + k] : Wx[(size_t)j * F + k - H];
                }
    }
}

/* pre[r][0 .. CV VL) = h[r] . W_h (when t > 0) + x[r] . W_x over one block of columns */
static inline __attribute__((always_inline)) void flat_tile(const int CV, int t, int H, int F, const float *wp,
                                                            const float *const *h, const float *const *x,
                                                            float *const *pre) {
    vf acc[ROWS][FLAT_CV];
    for (int r = 0; r < ROWS; r++)
        for (int q = 0; q < CV; q++) acc[r][q] = vzero();
    if (t)
        for (int k = 0; k < H; k++) {
            vf w[FLAT_CV];
            for (int q = 0; q < CV; q++) w[q] = vload(wp + ((size_t)k * CV + q) * VL);
            for (int q = 0; q < CV; q++) KEEP(w[q]);
            for (int r = 0; r < ROWS; r++) {
                const vf b = vset1(h[r][k]);
                for (int q = 0; q < CV; q++) acc[r][q] = vfmadd(b, w[q], acc[r][q]);
            }
        }
    for (int f = 0; f < F; f++) {
        vf w[FLAT_CV];
        for (int q = 0; q < CV; q++) w[q] = vload(wp + ((size_t)(H + f) * CV + q) * VL);
        for (int q = 0; q < CV; q++) KEEP(w[q]);
        for (int r = 0; r < ROWS; r++) {
            const vf b = vset1(x[r][f]);
            for (int q = 0; q < CV; q++) acc[r][q] = vfmadd(b, w[q], acc[r][q]);
        }
    }
    for (int r = 0; r < ROWS; r++)
        for (int q = 0; q < CV; q++) _mm512_storeu_ps(pre[r] + q * VL, acc[r][q]);
}

/* One step of rows [r0, r0 + nr) of a thread's slice, flat: the tiles, then the gates per VL units. */
static void flat_step(const dims *d, int t, int i0, int r0, int nr, const float *wp, const float *const *hr,
                      const float *const *xr, float *pre, const float *bx, const float *bh, float *cs, float *hout,
                      float *wsg, float *wsc) {
    const int H = d->H, F = d->F, K = H + F, nv = flat_vecs(d), nb = flat_blocks(nv);
    for (int b = 0; b < nb; b++) {
        int v0, cv;
        flat_block(nv, nb, b, &v0, &cv);
        const float *wb = wp + (size_t)v0 * VL * K;
        float *pb[ROWS];
        for (int r = 0; r < ROWS; r++) pb[r] = pre + ((size_t)r * nv + v0) * VL;
        switch (cv) {
        case 1: flat_tile(1, t, H, F, wb, hr, xr, pb); break;
        case 2: flat_tile(2, t, H, F, wb, hr, xr, pb); break;
        case 3: flat_tile(3, t, H, F, wb, hr, xr, pb); break;
        case 4: flat_tile(4, t, H, F, wb, hr, xr, pb); break;
        case 5: flat_tile(5, t, H, F, wb, hr, xr, pb); break;
        default: flat_tile(6, t, H, F, wb, hr, xr, pb); break;
        }
    }
    for (int u = 0; u < H; u += VL) {
        const vm mk = vmask(H - u);
        vf bias[4];
        for (int q = 0; q < 4; q++)
            bias[q] = vadd(vloadm(mk, bx + (size_t)q * H + u), vloadm(mk, bh + (size_t)q * H + u));
        for (int r = 0; r < nr; r++) {
            const int j = r0 + r;
            const size_t wrow = (size_t)t * d->N + i0 + j;
            const float *p = pre + (size_t)r * nv * VL + u;
            vf a[4];
            for (int q = 0; q < 4; q++) a[q] = vadd(vloadm(mk, p + (size_t)q * H), bias[q]);
            lstm_cell(a, mk, H, cs + (size_t)j * H + u, hout + (size_t)j * H + u,
                      wsg ? wsg + wrow * 4 * H + u : NULL, wsg ? wsc + wrow * H + u : NULL);
        }
    }
}
#endif

int dnnl_rnn_host_forward(int threads, const nn_op *op, float *y, void *ws, const float *x, const float *w,
                          float *tmp) {
    const dims d = dims_of(op, threads);
    const int T = d.T, F = d.F, H = d.H, G = d.G, K = H + F, lstm = d.lstm;
    const float *Wx = w, *Wh = Wx + (size_t)d.GH * F, *bx = Wh + (size_t)d.GH * H, *bh = bx + d.GH;
    const size_t rows = (size_t)d.N * T;
    float *wp = tmp, *wsg = ws, *wsh = ws ? wsg + rows * 4 * H : NULL, *wsc = ws ? wsh + rows * H : NULL;
    const int is_flat = flat(&d);
    (void)is_flat;   /* AVX-512 only */
#if defined(__AVX512F__)
    if (is_flat) flat_pack(&d, Wx, Wh, wp);
    else
#endif
        pack(&d, Wx, Wh, wp);
    #pragma omp parallel num_threads(d.nt)
    for (int sl = omp_get_thread_num(); sl < d.nt; sl += omp_get_num_threads()) {   /* fewer threads than asked: */
        int i0, i1;                                                                    /* each takes more slices */
        slice(&d, sl, &i0, &i1);
        const int m = i1 - i0;
        float *hb[2], *cs;
        hb[0] = tmp + packed(&d) + fwd_each(&d) * omp_get_thread_num();
        hb[1] = hb[0] + d.per * H;
        cs = hb[1] + d.per * H;
        if (m <= 0) continue;
        memset(hb[0], 0, sizeof(float) * (size_t)m * H);   /* h0 = 0, c0 = 0 */
        memset(cs, 0, sizeof(float) * (size_t)m * H);
        for (int t = 0; t < T; t++) {
            const float *hin = hb[t & 1];
            float *hout = hb[~t & 1];
            if (ws)
                for (int j = 0; j < m; j++)
                    memcpy(wsh + ((size_t)t * d.N + i0 + j) * H, hin + (size_t)j * H, sizeof(float) * H);
#if defined(__AVX512F__)
            if (is_flat) {
                for (int r0 = 0; r0 < m; r0 += ROWS) {
                    const int nr = m - r0 < ROWS ? m - r0 : ROWS;
                    const float *hr[ROWS], *xr[ROWS];
                    for (int r = 0; r < ROWS; r++) {   /* past the last row: the last row again, not stored */
                        const int j = r0 + (r < nr ? r : nr - 1);
                        hr[r] = hin + (size_t)j * H;
                        xr[r] = x + ((size_t)(i0 + j) * T + t) * F;
                    }
                    flat_step(&d, t, i0, r0, nr, wp, hr, xr, cs + (size_t)d.per * H, bx, bh, cs, hout,
                              ws ? wsg : NULL, wsc);
                }
                if (op->ret_seq)
                    for (int j = 0; j < m; j++)
                        memcpy(y + ((size_t)(i0 + j) * T + t) * H, hout + (size_t)j * H, sizeof(float) * H);
                continue;
            }
#endif
            for (int ub = 0; ub < (H + VL - 1) / VL; ub++) {
                const int u = ub * VL;
                const vm mk = vmask(H - u);
                const float *wb = wp + (size_t)ub * K * G * VL;
                /* a gate's b_x + b_h; the GRU's n gate keeps them apart (r scales only the recurrent side's):
                 * its b_hn in slot 2, b_xn in slot 3 */
                vf bias[4];
                for (int q = 0; q < 4; q++) {
                    const vf bxq = vloadm(mk, bx + (size_t)(q < G ? q : 2) * H + u);
                    const vf bhq = vloadm(mk, bh + (size_t)(q < G ? q : 2) * H + u);
                    bias[q] = lstm || q < 2 ? vadd(bxq, bhq) : q == 2 ? bhq : bxq;
                }
                for (int r0 = 0; r0 < m; r0 += ROWS) {
                    const int nr = m - r0 < ROWS ? m - r0 : ROWS;
                    const float *hr[ROWS], *xr[ROWS];
                    for (int r = 0; r < ROWS; r++) {   /* past the last row: the last row again, not stored */
                        const int j = r0 + (r < nr ? r : nr - 1);
                        hr[r] = hin + (size_t)j * H;
                        xr[r] = x + ((size_t)(i0 + j) * T + t) * F;
                    }
                    vf acc[ROWS][4];
                    if (lstm) tile(4, 0, t, H, F, wb, hr, xr, acc);
                    else tile(3, 1, t, H, F, wb, hr, xr, acc);
                    for (int r = 0; r < nr; r++) {
                        const int j = r0 + r;
                        const size_t wrow = (size_t)t * d.N + i0 + j;
                        float *c = cs + (size_t)j * H + u, *ho = hout + (size_t)j * H + u;
                        float *g = ws ? wsg + wrow * 4 * H + u : NULL;
                        if (lstm) {
                            vf a[4];
                            for (int q = 0; q < 4; q++) a[q] = vadd(acc[r][q], bias[q]);
                            lstm_cell(a, mk, H, c, ho, g, g ? wsc + wrow * H + u : NULL);
                        } else {
                            const vf rg = vsigm(vadd(acc[r][0], bias[0]));
                            const vf zg = vsigm(vadd(acc[r][1], bias[1]));
                            const vf hn = vadd(acc[r][2], bias[2]);   /* the recurrent n term */
                            const vf nn = vtanh(vfmadd(rg, hn, vadd(acc[r][3], bias[3])));
                            const vf hp = vloadm(mk, hr[r] + u);
                            vstorem(ho, mk, vfmadd(zg, vsub(hp, nn), nn));
                            if (g) {
                                vstorem(g, mk, rg);
                                vstorem(g + H, mk, zg);
                                vstorem(g + 2 * (size_t)H, mk, nn);
                                vstorem(g + 3 * (size_t)H, mk, hn);
                            }
                        }
                    }
                }
            }
            if (op->ret_seq)
                for (int j = 0; j < m; j++)
                    memcpy(y + ((size_t)(i0 + j) * T + t) * H, hout + (size_t)j * H, sizeof(float) * H);
        }
        if (!op->ret_seq) memcpy(y + (size_t)i0 * H, hb[T & 1], sizeof(float) * (size_t)m * H);
    }
    return 0;
}

/* The backward's per-step products dh_prev += ah W_h and dx_t = ax W_x where a thread's step has few rows
 * (babi_rnn's and imdb_gru's 16): an sgemm call repacks the whole weight matrix for a product of the same size,
 * twice a step. Here W_h and W_x are packed once a call, in blocks of VL columns, and a tile of MR rows x NV
 * vectors of columns stays in registers over k of G H. */
#if VL == 16
#define MR 4
#define NV 4   /* 16 accumulators, 4 weights and a broadcast of the 32 registers */
#else
#define MR 4
#define NV 2   /* 8 accumulators, 2 weights and a broadcast of the 16: 8 FMAs in flight cover their latency */
#endif
#define MM_ROWS 64   /* rows a thread at most: above, sgemm's packing is paid back within the call */

static int bwd_mm(const dims *d) { return d->per <= MM_ROWS; }
/* Columns past the last whole block of VL: with few of them (n % VL <= VL / 4: babi_rnn's 50 = 3 x 16 + 2) a padded
 * block spends a vector a row and k on them (22% of babi's products); they are dot products along k instead, over
 * B's tail columns packed as rows. Otherwise the last block is padded. */
static int tail(int n) { const int r = n % VL; return r <= VL / 4 ? r : 0; }
static int blocks(int n) { return (n - tail(n) + VL - 1) / VL; }
static int pack_units(int n) { return blocks(n) + (tail(n) != 0); }
/* Floats of B [K][n] packed: per block of VL columns, per k, VL values (zero past n); then the tail's columns, K
 * values each. */
static size_t panel(size_t K, size_t n) { return round16(((size_t)blocks((int)n) * VL + tail((int)n)) * K); }
static size_t bwd_panels(const dims *d) {
    return bwd_mm(d) ? panel(d->GH, d->H) + panel(d->GH, d->F) : 0;
}
static void pack_block(size_t K, size_t n, const float *B, size_t ldb, size_t nb, float *bp) {
    if (nb == (size_t)blocks((int)n)) {   /* the tail */
        const size_t c0 = nb * VL;
        for (size_t c = 0; c < (size_t)tail((int)n); c++)
            for (size_t k = 0; k < K; k++) bp[c0 * K + c * K + k] = B[k * ldb + c0 + c];
        return;
    }
    float *o = bp + nb * K * VL;
    for (size_t k = 0; k < K; k++)
        for (size_t l = 0; l < VL; l++) {
            const size_t c = nb * VL + l;
            o[k * VL + l] = c < n ? B[k * ldb + c] : 0.0f;
        }
}

static inline __attribute__((always_inline)) void mm_tile(const int nv, int K, const float *const *a,
                                                          const float *bp, vf acc[MR][NV]) {
    for (int r = 0; r < MR; r++)
        for (int v = 0; v < NV; v++) acc[r][v] = vzero();
    for (int k = 0; k < K; k++) {
        vf w[NV];
        for (int v = 0; v < nv; v++) w[v] = vload(bp + ((size_t)v * K + k) * VL);
        for (int v = 0; v < nv; v++) KEEP(w[v]);
        for (int r = 0; r < MR; r++) {
            const vf b = vset1(a[r][k]);
            for (int v = 0; v < nv; v++) acc[r][v] = vfmadd(b, w[v], acc[r][v]);
        }
    }
}

/* MR rows' dot products with nc tail columns (bt: nc rows of K), along k in vectors. */
static inline __attribute__((always_inline)) void dot_tile(const int nc, int K, const float *const *a,
                                                           const float *bt, float out[MR][VL / 4]) {
    vf acc[MR][VL / 4];
    for (int r = 0; r < MR; r++)
        for (int c = 0; c < nc; c++) acc[r][c] = vzero();
    for (int k = 0; k < K; k += VL) {
        const vm mk = vmask(K - k);
        vf b[VL / 4];
        for (int c = 0; c < nc; c++) b[c] = vloadm(mk, bt + (size_t)c * K + k);
        for (int r = 0; r < MR; r++) {
            const vf x = vloadm(mk, a[r] + k);
            for (int c = 0; c < nc; c++) acc[r][c] = vfmadd(x, b[c], acc[r][c]);
        }
    }
    for (int r = 0; r < MR; r++)
        for (int c = 0; c < nc; c++) out[r][c] = vsum(acc[r][c]);
}

/* C = A B, or C += A B with add: A [m][K] with rows lda apart, B packed (K x n), C's rows ldc apart. Rows past
 * m in the last tile repeat the last row and are not stored. */
static void mm_packed(int m, int K, int n, const float *A, size_t lda, const float *bp, int add, float *C,
                      size_t ldc) {
    const int nb = blocks(n), nt = tail(n);
    for (int r0 = 0; r0 < m; r0 += MR) {
        const int nr = m - r0 < MR ? m - r0 : MR;
        const float *a[MR];
        for (int r = 0; r < MR; r++) a[r] = A + (size_t)(r0 + (r < nr ? r : nr - 1)) * lda;
        for (int b0 = 0; b0 < nb; b0 += NV) {
            const int nv = nb - b0 < NV ? nb - b0 : NV;
            const float *p = bp + (size_t)b0 * K * VL;
            vf acc[MR][NV];
            if (nv == NV) mm_tile(NV, K, a, p, acc);
            else if (nv == 1) mm_tile(1, K, a, p, acc);
#if NV > 2
            else if (nv == 2) mm_tile(2, K, a, p, acc);
            else mm_tile(3, K, a, p, acc);
#endif
            for (int r = 0; r < nr; r++)
                for (int v = 0; v < nv; v++) {
                    const int c0 = (b0 + v) * VL;
                    float *cp = C + (size_t)(r0 + r) * ldc + c0;
                    const vm mk = vmask(n - c0);
                    vstorem(cp, mk, add ? vadd(vloadm(mk, cp), acc[r][v]) : acc[r][v]);
                }
        }
        if (nt) {
            const float *bt = bp + (size_t)nb * K * VL;
            float out[MR][VL / 4];
            if (nt == 1) dot_tile(1, K, a, bt, out);
            else if (nt == 2) dot_tile(2, K, a, bt, out);
#if VL == 16
            else if (nt == 3) dot_tile(3, K, a, bt, out);
            else dot_tile(4, K, a, bt, out);
#endif
            for (int r = 0; r < nr; r++)
                for (int c = 0; c < nt; c++) {
                    float *cp = C + (size_t)(r0 + r) * ldc + nb * VL + c;
                    *cp = add ? *cp + out[r][c] : out[r][c];
                }
        }
    }
}

/* The chunk's weight gradients, transposed: C [n][GH] (rows ldc apart) += B^T A, A the chunk's K pre-activation
 * gradient rows (lda apart), B's row k at brow[k] (x_t or h_prev of one example, where it lies: no copies).
 * Vectors run along the G H pre-activations (babi_rnn's 200: 13 vectors, 4% padding; along its 50 units 22%); a
 * tile is WR columns of B broadcast x up to WV vectors, over all K rows (K <= 256: blocks of 32 rows, to keep A's
 * block in L1, measured 10% slower than loading and storing C once). */
#if VL == 16
#define WR 5
#define WV 4   /* 20 accumulators, 4 of A and a broadcast */
#else
#define WR 2
#define WV 4   /* 8 accumulators, 4 of A and a broadcast of the 16 */
#endif
static inline __attribute__((always_inline)) void wg_tile(const int nv, int K, const float *const *brow,
                                                          const int *col, const float *A, size_t lda, int g0,
                                                          int GH, int nr, float *C, size_t ldc) {
    vf acc[WR][WV];
    vm mk[WV];
    for (int v = 0; v < nv; v++) mk[v] = vmask(GH - g0 - v * VL);
    for (int r = 0; r < WR; r++)
        for (int v = 0; v < nv; v++) acc[r][v] = vloadm(mk[v], C + (size_t)col[r] * ldc + g0 + v * VL);
    for (int k = 0; k < K; k++) {
        const float *ak = A + (size_t)k * lda + g0, *bk = brow[k];
        vf w[WV];
        for (int v = 0; v < nv; v++) w[v] = vloadm(mk[v], ak + v * VL);
        for (int v = 0; v < nv; v++) KEEP(w[v]);
        for (int r = 0; r < WR; r++) {
            const vf b = vset1(bk[col[r]]);
            for (int v = 0; v < nv; v++) acc[r][v] = vfmadd(b, w[v], acc[r][v]);
        }
    }
    for (int r = 0; r < WR; r++)   /* constant bounds: an index the compiler cannot unroll puts acc in memory */
        for (int v = 0; v < nv; v++)
            if (r < nr) vstorem(C + (size_t)col[r] * ldc + g0 + v * VL, mk[v], acc[r][v]);
}
static void wgrad(int K, const float *const *brow, int n, const float *A, size_t lda, int GH, float *C, size_t ldc) {
    const int nb = (GH + VL - 1) / VL, ng = (nb + WV - 1) / WV;   /* vectors in ng groups, as even as they go */
    for (int c0 = 0; c0 < n; c0 += WR) {
        const int nr = n - c0 < WR ? n - c0 : WR;
        int col[WR];
        for (int r = 0; r < WR; r++) col[r] = c0 + (r < nr ? r : nr - 1);
        for (int q = 0, b0 = 0; q < ng; q++) {
            const int nv = nb / ng + (q < nb % ng);
            const int g0 = b0 * VL;
            switch (nv) {
            case WV: wg_tile(WV, K, brow, col, A, lda, g0, GH, nr, C, ldc); break;
            case 3: wg_tile(3, K, brow, col, A, lda, g0, GH, nr, C, ldc); break;
            case 2: wg_tile(2, K, brow, col, A, lda, g0, GH, nr, C, ldc); break;
            default: wg_tile(1, K, brow, col, A, lda, g0, GH, nr, C, ldc); break;
            }
            b0 += nv;
        }
    }
}
#undef WR
#undef WV
/* One row of the LSTM backward's gate loop: the pre-activation gradients ax, dc and dh of the step before; dy (a
 * sequence's output gradient) and c_prev (none at t = 0) compile-time choices. In vectors of units, the last one
 * masked, and tanh by the reciprocal as in the forward: GCC's vectorised loop divided, and ran babi_rnn's 50 units'
 * last 2 in scalar code (30% of that backward's own time, perf annotate). */
static inline __attribute__((always_inline)) void lstm_bwd_row(const int has_dy, const int has_cp, int H,
                                                               const float *g, const float *cr, const float *cpr,
                                                               const float *dyr, float *axj, float *dcj, float *dhj) {
    const vf one = vset1(1.0f);
    for (int k = 0; k < H; k += VL) {
        const vm mk = vmask(H - k);
        vf dd = vloadm(mk, dhj + k);
        if (has_dy) dd = vadd(dd, vloadm(mk, dyr + k));
        const vf ig = vloadm(mk, g + k), fg = vloadm(mk, g + H + k), gg = vloadm(mk, g + 2 * H + k);
        const vf og = vloadm(mk, g + 3 * H + k), tc = vtanh(vloadm(mk, cr + k));
        const vf dcc = vfmadd(vmul(dd, og), vfnmadd(tc, tc, one), vloadm(mk, dcj + k));
        const vf cp = has_cp ? vloadm(mk, cpr + k) : vzero();
        vstorem(axj + k, mk, vmul(vmul(dcc, gg), vmul(ig, vsub(one, ig))));
        vstorem(axj + H + k, mk, vmul(vmul(dcc, cp), vmul(fg, vsub(one, fg))));
        vstorem(axj + 2 * H + k, mk, vmul(vmul(dcc, ig), vfnmadd(gg, gg, one)));
        vstorem(axj + 3 * H + k, mk, vmul(vmul(dd, tc), vmul(og, vsub(one, og))));
        vstorem(dcj + k, mk, vmul(dcc, fg));
        vstorem(dhj + k, mk, vzero());
    }
}
#define HAVE_MM_PACKED
#undef MR
#undef NV
#undef MM_ROWS
#undef ROWS
#undef KEEP
#undef VL
#else
/* One step of one row: the gates of units [0, n), gate k of unit u at [k * S + u] (S = H in the buffers), the
 * pre-activations' input side a and recurrent side b, biases bx and bh. LSTM: c updated, h written, and with a
 * workspace the gates (g) and c (cw) kept for backward. GRU: h updated; g keeps r, z, n and the recurrent n term. */
static inline void lstm_gates(int n, int S, const float *a, const float *b, const float *bx, const float *bh,
                              float *c, float *h, float *g, float *cw) {
    #pragma omp simd
    for (int k = 0; k < n; k++) {
        const float ig = sigm_v(a[k] + b[k] + bx[k] + bh[k]);
        const float fg = sigm_v(a[S + k] + b[S + k] + bx[S + k] + bh[S + k]);
        const float gg = tanh_v(a[2 * S + k] + b[2 * S + k] + bx[2 * S + k] + bh[2 * S + k]);
        const float og = sigm_v(a[3 * S + k] + b[3 * S + k] + bx[3 * S + k] + bh[3 * S + k]);
        const float cn = fg * c[k] + ig * gg;
        c[k] = cn;
        h[k] = og * tanh_v(cn);
        if (g) { g[k] = ig; g[S + k] = fg; g[2 * S + k] = gg; g[3 * S + k] = og; cw[k] = cn; }
    }
}
static inline void gru_gates(int n, int S, const float *a, const float *b, const float *bx, const float *bh,
                             float *h, float *g) {
    #pragma omp simd
    for (int k = 0; k < n; k++) {
        const float bhn = b[2 * S + k] + bh[2 * S + k];
        const float r = sigm_v(a[k] + bx[k] + b[k] + bh[k]);
        const float z = sigm_v(a[S + k] + bx[S + k] + b[S + k] + bh[S + k]);
        const float nn = tanh_v(a[2 * S + k] + bx[2 * S + k] + r * bhn);
        h[k] = (1.0f - z) * nn + z * h[k];
        if (g) { g[k] = r; g[S + k] = z; g[2 * S + k] = nn; g[3 * S + k] = bhn; }
    }
}

/* The units past the last multiple of 16 would run scalar after the vector loop (30% of babi_rnn's forward): they
 * run as one vector of 16 on copies, gate stride 16, and are copied back. */
#define TAIL 16
static void tail_in(float *dst, const float *src, int H, int u0, int r, int gates) {
    for (int q = 0; q < gates; q++) {
        memcpy(dst + q * TAIL, src + (size_t)q * H + u0, sizeof(float) * r);
        memset(dst + q * TAIL + r, 0, sizeof(float) * (TAIL - r));
    }
}
static void tail_out(float *dst, const float *src, int H, int u0, int r, int gates) {
    for (int q = 0; q < gates; q++) memcpy(dst + (size_t)q * H + u0, src + q * TAIL, sizeof(float) * r);
}
static void lstm_row(int H, const float *a, const float *b, const float *bx, const float *bh, float *c, float *h,
                     float *g, float *cw) {
    const int u0 = H / TAIL * TAIL, r = H - u0;
    lstm_gates(u0, H, a, b, bx, bh, c, h, g, cw);
    if (!r) return;
    float A[4 * TAIL], B[4 * TAIL], X[4 * TAIL], Y[4 * TAIL], C[TAIL], O[TAIL], G[4 * TAIL], W[TAIL];   /* in: whole */
    tail_in(A, a, H, u0, r, 4);
    tail_in(B, b, H, u0, r, 4);
    tail_in(X, bx, H, u0, r, 4);
    tail_in(Y, bh, H, u0, r, 4);
    tail_in(C, c, H, u0, r, 1);
    lstm_gates(TAIL, TAIL, A, B, X, Y, C, O, g ? G : NULL, W);
    tail_out(c, C, H, u0, r, 1);
    tail_out(h, O, H, u0, r, 1);
    if (g) { tail_out(g, G, H, u0, r, 4); tail_out(cw, W, H, u0, r, 1); }
}

static void gru_row(int H, const float *a, const float *b, const float *bx, const float *bh, float *h, float *g) {
    const int u0 = H / TAIL * TAIL, r = H - u0;
    gru_gates(u0, H, a, b, bx, bh, h, g);
    if (!r) return;
    float A[3 * TAIL], B[3 * TAIL], X[3 * TAIL], Y[3 * TAIL], O[TAIL], G[4 * TAIL];   /* tail_in fills whole lanes */
    tail_in(A, a, H, u0, r, 3);
    tail_in(B, b, H, u0, r, 3);
    tail_in(X, bx, H, u0, r, 3);
    tail_in(Y, bh, H, u0, r, 3);
    tail_in(O, h, H, u0, r, 1);
    gru_gates(TAIL, TAIL, A, B, X, Y, O, g ? G : NULL);
    tail_out(h, O, H, u0, r, 1);
    if (g) tail_out(g, G, H, u0, r, 4);
}

typedef struct sub {
    size_t mb;                      /* examples per sub-batch of a thread (bounds the input projections kept) */
    int batched;                    /* input projections of all steps in one gemm (else one gemm a step) */
} sub;

/* Batched input projections of a sub-batch are kept for all its steps: ~8 MB a thread, but at least 64
 * examples so that the per-step recurrent gemm keeps enough rows. */
#define XG_BUDGET ((size_t)1 << 21)

static sub sub_of(const dims *d) {
    sub b;
    /* Batching pays where the input side is as wide as the recurrent side; with a narrow input its product is
     * store-bound and the batched result leaves the cache before its step reads it (docs/performance.md). */
    b.batched = d->F >= d->H;
    size_t mb = b.batched ? XG_BUDGET / ((size_t)d->T * d->GH) : d->per;
    if (mb < 64) mb = 64;
    b.mb = mb < d->per ? mb : d->per;
    return b;
}
static size_t fwd_each(const dims *d, const sub *b) {   /* floats a thread: xg, hg, h, c */
    return round16(b->mb * ((size_t)(b->batched ? d->T : 1) * d->GH + d->GH + 2 * (size_t)d->H));
}
size_t dnnl_rnn_host_fwd_tmp_bytes(const nn_op *op, int threads) {
    const dims d = dims_of(op, threads);
    const sub sb = sub_of(&d);
    return sizeof(float) * fwd_each(&d, &sb) * d.nt;
}

int dnnl_rnn_host_forward(int threads, const nn_op *op, float *y, void *ws, const float *x, const float *w,
                          float *tmp) {
    const dims d = dims_of(op, threads);
    const sub sb = sub_of(&d);
    const int T = d.T, F = d.F, H = d.H, GH = d.GH, lstm = d.lstm;
    const float *Wx = w, *Wh = Wx + (size_t)GH * F, *bx = Wh + (size_t)GH * H, *bh = bx + GH;
    const size_t rows = (size_t)d.N * T, each = fwd_each(&d, &sb);
    float *wsg = ws, *wsh = ws ? wsg + rows * 4 * H : NULL, *wsc = ws ? wsh + rows * H : NULL;
    int fail = 0;
    #pragma omp parallel num_threads(d.nt)
    for (int sl = omp_get_thread_num(); sl < d.nt; sl += omp_get_num_threads()) {   /* fewer threads than asked: */
        int i0, i1;                                                                    /* each takes more slices */
        slice(&d, sl, &i0, &i1);
        float *xg = tmp + each * omp_get_thread_num(), *hg = xg + sb.mb * (sb.batched ? T : 1) * GH, *h = hg + sb.mb * GH,
              *cs = h + sb.mb * H;
        for (int s = i0; s < i1 && !fail; s += (int)sb.mb) {
            const int ms = i1 - s < (int)sb.mb ? i1 - s : (int)sb.mb;
            /* xg[j*T + t] = W_x x_(s+j, t): the input side of every step in one product */
            int rc = sb.batched ? gemm('N', 'T', (size_t)ms * T, GH, F, x + (size_t)s * T * F, F, Wx, F, 0.0f, xg, GH)
                               : 0;
            memset(h, 0, sizeof(float) * (size_t)ms * H);
            memset(cs, 0, sizeof(float) * (size_t)ms * H);
            memset(hg, 0, sizeof(float) * (size_t)ms * GH);   /* h0 = 0: no recurrent term at t = 0 */
            for (int t = 0; t < T && rc == 0; t++) {
                if (t) rc = gemm('N', 'T', ms, GH, H, h, H, Wh, H, 0.0f, hg, GH);
                if (!sb.batched && rc == 0)
                    rc = gemm('N', 'T', ms, GH, F, x + ((size_t)s * T + t) * F, (size_t)T * F, Wx, F, 0.0f, xg, GH);
                for (int j = 0; j < ms && rc == 0; j++) {
                    const size_t row = (size_t)(s + j) * T + t, wrow = (size_t)t * d.N + s + j;
                    const float *a = xg + ((size_t)j * (sb.batched ? T : 1) + (sb.batched ? t : 0)) * GH;
                    const float *b = hg + (size_t)j * GH;
                    float *hj = h + (size_t)j * H, *cj = cs + (size_t)j * H;
                    float *g = ws ? wsg + wrow * 4 * H : NULL, *hp = ws ? wsh + wrow * H : NULL;
                    if (hp) memcpy(hp, hj, sizeof(float) * H);
                    if (lstm) lstm_row(H, a, b, bx, bh, cj, hj, g, ws ? wsc + wrow * H : NULL);
                    else gru_row(H, a, b, bx, bh, hj, g);
                    if (op->ret_seq) memcpy(y + row * H, hj, sizeof(float) * H);
                }
            }
            if (rc == 0 && !op->ret_seq) memcpy(y + (size_t)s * H, h, sizeof(float) * (size_t)ms * H);
            if (rc) {
                #pragma omp atomic write
                fail = 1;
            }
        }
    }
    return fail ? sd_err(SD_EBACKEND, "oneDNN: dnnl_sgemm failed in a %s forward", lstm ? "lstm" : "gru") : 0;
}

#endif
#ifndef HAVE_MM_PACKED
static size_t bwd_panels(const dims *d) { (void)d; return 0; }
/* One row of the LSTM backward's gate loop: the pre-activation gradients ax, dc and dh of the step before. dy (a
 * sequence's output gradient) and c_prev (none at t = 0) are compile-time choices of each call: a pointer tested in
 * the loop kept GCC from vectorising it, and the scalar loop was 38% of babi_rnn's backward (perf record). */
static inline __attribute__((always_inline)) void lstm_bwd_row(const int has_dy, const int has_cp, int H,
                                                               const float *g, const float *cr, const float *cpr,
                                                               const float *dyr, float *axj, float *dcj, float *dhj) {
    #pragma omp simd
    for (int k = 0; k < H; k++) {
        const float dd = dhj[k] + (has_dy ? dyr[k] : 0.0f);
        const float ig = g[k], fg = g[H + k], gg = g[2 * H + k], og = g[3 * H + k];
        const float cp = has_cp ? cpr[k] : 0.0f, tc = tanh_v(cr[k]);
        const float dcc = dcj[k] + dd * og * (1.0f - tc * tc);
        const float ai = dcc * gg * ig * (1.0f - ig), af = dcc * cp * fg * (1.0f - fg);
        const float ag = dcc * ig * (1.0f - gg * gg), ao = dd * tc * og * (1.0f - og);
        axj[k] = ai; axj[H + k] = af; axj[2 * H + k] = ag; axj[3 * H + k] = ao;
        dcj[k] = dcc * fg;
        dhj[k] = 0.0f;
    }
}
#endif

/* s += the column sums of A's rows (rows lda apart, n columns): a float sum over a chunk's rows (at most 256 with
 * chunks), then double. */
static void colsum(int rows, size_t lda, int n, const float *A, double *s) {
    float part[256];
    for (int c0 = 0; c0 < n; c0 += 256) {
        const int nc = n - c0 < 256 ? n - c0 : 256;
        memset(part, 0, sizeof(float) * nc);
        for (int r = 0; r < rows; r++) {
            const float *a = A + (size_t)r * lda + c0;
            #pragma omp simd
            for (int c = 0; c < nc; c++) part[c] += a[c];
        }
        for (int c = 0; c < nc; c++) s[c0 + c] += part[c];
    }
}

size_t dnnl_rnn_host_bwd_tmp_bytes(const nn_op *op, int threads) {
    const dims d = dims_of(op, threads);
    return sizeof(float) * (d.nt * bwd_each(&d) + bwd_panels(&d));
}

int dnnl_rnn_host_backward(int threads, const nn_op *op, float *dx, float *dw, const float *dy, const float *x,
                           const float *w, const void *ws, float *tmp) {
    const dims d = dims_of(op, threads);
    const int T = d.T, F = d.F, H = d.H, GH = d.GH, lstm = d.lstm;
    const float *Wx = w, *Wh = Wx + (size_t)GH * F;
    float *dWx = dw, *dWh = dWx + (size_t)GH * F, *dbx = dWh + (size_t)GH * H, *dbh = dbx + GH;
    const size_t rows = (size_t)d.N * T, each = bwd_each(&d), nw = (size_t)GH * (F + H), LG = ldg(&d);
    const float *wsg = ws, *wsh = wsg + rows * 4 * H, *wsc = wsh + rows * H;
    int fail = 0;
    #pragma omp parallel num_threads(d.nt)
    {
        const int th = omp_get_thread_num();
        float *dh = tmp + each * th, *dc = dh + d.per * H;
        double *sx = (double *)(dc + d.per * H), *sh = sx + GH;
        /* gradients of the chunk's pre-activations, a step's rows after the other's: ax for the input side, ah
         * for the recurrent side (they differ in the GRU's new gate, whose recurrent part is scaled by r); with
         * more than one step a chunk, copies of their x and h_prev rows; the weight gradients of this thread */
        const int S = chunk_steps(&d);
        float *ax0 = tmp + each * th + bwd_ax(&d), *ah0 = lstm ? ax0 : ax0 + (size_t)S * d.per * LG;
        float *xc = ax0 + (size_t)(lstm ? 1 : 2) * S * d.per * LG, *hc = xc + (size_t)S * d.per * F;
        float *pw = tmp + each * th + bwd_pw(&d);
        int rc = 0;
        memset(sx, 0, sizeof(double) * 2 * GH);
        memset(pw, 0, sizeof(float) * LG * (F + H));
#ifdef HAVE_MM_PACKED
        const int mm = bwd_mm(&d);
        float *ph = tmp + each * d.nt, *px = ph + panel(GH, H);   /* W_h and W_x packed, shared */
        const float *xrow[256], *hrow[256];   /* a chunk's x and h_prev rows: S m <= 256 (chunk_steps) */
        if (mm) {
            const int nbh = pack_units(H), nbx = pack_units(F);
            #pragma omp for schedule(static)
            for (int b = 0; b < nbh + nbx; b++) {
                if (b < nbh) pack_block(GH, H, Wh, H, b, ph);
                else pack_block(GH, F, Wx, F, b - nbh, px);
            }
        }
#endif
        for (int sl = th; sl < d.nt && rc == 0; sl += omp_get_num_threads()) {
            int i0, i1;
            slice(&d, sl, &i0, &i1);
            const int m = i1 - i0;
            if (m > 0) {
                if (op->ret_seq) memset(dh, 0, sizeof(float) * (size_t)m * H);
                else memcpy(dh, dy + (size_t)i0 * H, sizeof(float) * (size_t)m * H);
                memset(dc, 0, sizeof(float) * (size_t)m * H);
            }
            for (int t = T - 1; t >= 0 && m > 0 && rc == 0; t--) {
                const size_t w0 = (size_t)t * d.N + i0;   /* the workspace's first row of this step and slice */
                const int slot = (T - 1 - t) % S;          /* the step's place in its chunk */
                const int chunk_end = slot == S - 1 || t == 0, krows = (slot + 1) * m;   /* the chunk's rows so far */
                float *ax = ax0 + (size_t)slot * m * LG, *ah = lstm ? ax : ah0 + (size_t)slot * m * LG;
                for (int j = 0; j < m; j++) {
                    const size_t wrow = w0 + j;
                    const float *g = wsg + wrow * 4 * H, *hp = wsh + wrow * H;
                    const float *dyr = op->ret_seq ? dy + ((size_t)(i0 + j) * T + t) * H : NULL;
                    float *axj = ax + (size_t)j * LG, *ahj = ah + (size_t)j * LG;
                    float *dhj = dh + (size_t)j * H, *dcj = dc + (size_t)j * H;
                    if (!lstm) {
                        #pragma omp simd
                        for (int k = 0; k < H; k++) {
                            const float dd = dhj[k] + (dyr ? dyr[k] : 0.0f);
                            const float r = g[k], z = g[H + k], nn = g[2 * H + k], bhn = g[3 * H + k];
                            const float dz = dd * (hp[k] - nn), dn = dd * (1.0f - z);
                            const float dan = dn * (1.0f - nn * nn);
                            const float dar = dan * bhn * r * (1.0f - r), daz = dz * z * (1.0f - z);
                            axj[k] = dar; axj[H + k] = daz; axj[2 * H + k] = dan;
                            ahj[k] = dar; ahj[H + k] = daz; ahj[2 * H + k] = dan * r;
                            dhj[k] = dd * z;                 /* direct path h' = ... + z h */
                        }
                    } else {
                        const float *cr = wsc + wrow * H, *cpr = t > 0 ? wsc + (wrow - d.N) * H : NULL;
                        if (dyr && cpr) lstm_bwd_row(1, 1, H, g, cr, cpr, dyr, axj, dcj, dhj);
                        else if (dyr) lstm_bwd_row(1, 0, H, g, cr, cpr, dyr, axj, dcj, dhj);
                        else if (cpr) lstm_bwd_row(0, 1, H, g, cr, cpr, dyr, axj, dcj, dhj);
                        else lstm_bwd_row(0, 0, H, g, cr, cpr, dyr, axj, dcj, dhj);
                    }
                }
                if (chunk_end) {   /* the bias gradients: the chunk's column sums */
                    colsum(krows, LG, GH, ax0, sx);
                    if (!lstm) colsum(krows, LG, H, ah0 + 2 * H, sh);
                }
                /* while the step's gradients are in cache: dh_prev += ah W_h (nothing flows before t = 0),
                 * dx_t = ax W_x (rows T*F apart); then, a chunk at a time, dW_x += ax^T x_t, dW_h += ah^T h_prev */
                const float *xs = x + ((size_t)i0 * T + t) * F;
#ifdef HAVE_MM_PACKED
                if (mm) {
                    if (t) mm_packed(m, GH, H, ah, LG, ph, 1, dh, H);
                    if (dx) mm_packed(m, GH, F, ax, LG, px, 0, dx + ((size_t)i0 * T + t) * F, (size_t)T * F);
                } else
#endif
                {
                    if (t) rc = gemm('N', 'N', m, H, GH, ah, LG, Wh, H, 1.0f, dh, H);
                    if (rc == 0 && dx)
                        rc = gemm('N', 'N', m, F, GH, ax, LG, Wx, F, 0.0f, dx + ((size_t)i0 * T + t) * F,
                                  (size_t)T * F);
                }
                /* pw holds the weight gradients transposed: [F + H][GH], rows LG apart */
                if (S == 1) {
                    if (rc == 0) rc = gemm('T', 'N', F, GH, m, xs, (size_t)T * F, ax, LG, 1.0f, pw, LG);
                    if (rc == 0) rc = gemm('T', 'N', H, GH, m, wsh + w0 * H, H, ah, LG, 1.0f, pw + (size_t)F * LG, LG);
                    continue;
                }
#ifdef HAVE_MM_PACKED
                if (mm) {
                    for (int j = 0; j < m; j++) {
                        xrow[slot * m + j] = xs + (size_t)j * T * F;
                        hrow[slot * m + j] = wsh + (w0 + j) * H;
                    }
                    if (chunk_end) {
                        wgrad(krows, xrow, F, ax0, LG, GH, pw, LG);
                        wgrad(krows, hrow, H, ah0, LG, GH, pw + (size_t)F * LG, LG);
                    }
                    continue;
                }
#endif
                for (int j = 0; j < m; j++)
                    memcpy(xc + ((size_t)slot * m + j) * F, xs + (size_t)j * T * F, sizeof(float) * F);
                memcpy(hc + (size_t)slot * m * H, wsh + w0 * H, sizeof(float) * (size_t)m * H);
                if (chunk_end) {
                    if (rc == 0) rc = gemm('T', 'N', F, GH, krows, xc, F, ax0, LG, 1.0f, pw, LG);
                    if (rc == 0) rc = gemm('T', 'N', H, GH, krows, hc, H, ah0, LG, 1.0f, pw + (size_t)F * LG, LG);
                }
            }
        }
        if (rc) {
            #pragma omp atomic write
            fail = 1;
        }
        #pragma omp barrier
        /* the threads' weight gradients summed into dw (dW_x [GH][F], then dW_h [GH][H]; pw transposed), and the
         * bias gradients (b_h's: b_x's but in the GRU's n gate) */
        #pragma omp for schedule(static)
        for (size_t k = 0; k < nw; k++) {
            const size_t xk = (size_t)GH * F, g = k < xk ? k / F : (k - xk) / H;
            const size_t c = k < xk ? k % F : F + (k - xk) % H;
            float sum = 0.0f;
            for (int t2 = 0; t2 < omp_get_num_threads(); t2++) sum += (tmp + each * t2 + bwd_pw(&d))[c * LG + g];
            dWx[k] += sum;   /* dW_h follows dW_x in dw */
        }
        #pragma omp single
        for (int t2 = 0; t2 < omp_get_num_threads(); t2++) {
            const double *px = (const double *)(tmp + each * t2 + 2 * d.per * H), *ph = px + GH;
            for (int k = 0; k < GH; k++) {
                dbx[k] += (float)px[k];
                dbh[k] += (float)(!lstm && k >= 2 * H ? ph[k - 2 * H] : px[k]);
            }
        }
    }
    return fail ? sd_err(SD_EBACKEND, "oneDNN: dnnl_sgemm failed in a %s backward", lstm ? "lstm" : "gru") : 0;
}
