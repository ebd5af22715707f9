/* host_ops — the reference arithmetic of the operations that have no library primitive on the CPU:
 * dropout (with the shared mask function), softmax cross-entropy and the optimizer updates, over host
 * memory. The reference back-end is made of these; the oneDNN back-end calls the same code, so the two
 * drop the same units and update parameters bit for bit alike. */
#include "nn/host_ops.h"
#include "nn/kernels.h"
#include "core/err.h"

#include <math.h>
#include <string.h>
#if defined(__SSE__) || defined(__x86_64__)
#include <pmmintrin.h>
#include <xmmintrin.h>
#define HAVE_MXCSR 1
#endif

static void flush_this_thread(void) {
#ifdef HAVE_MXCSR
    _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
    _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
#endif
}

void nn_host_flush_denormals(int threads) {
    flush_this_thread();
    /* libgomp keeps its workers between regions: set theirs once here (new workers inherit the creator's) */
    #pragma omp parallel num_threads(threads)
    flush_this_thread();
}


/* ---- gemm building blocks (row-major), shared by ref.c and host_rnn.c ----------------------------------- */

/* C[M][N] (+)= A[M][K] · B[K][N]. Four rows of C share each row of B (one load of b[j] feeds four
 * FMAs) and columns go in blocks that keep the four C rows in L1. */
void nn_host_gemm_nn(int M, int N, int K, const float *restrict A, const float *restrict B, float *restrict C,
                     int accumulate) {
    enum { JB = 512 };
    if (!accumulate)
        for (int i = 0; i < M; i++) memset(C + (size_t)i * N, 0, sizeof(float) * N);
    for (int j0 = 0; j0 < N; j0 += JB) {
        const int jn = N - j0 < JB ? N - j0 : JB;
        int i = 0;
        for (; i + 4 <= M; i += 4) {
            float *restrict c0 = C + (size_t)i * N + j0, *restrict c1 = c0 + N, *restrict c2 = c1 + N,
                  *restrict c3 = c2 + N;
            for (int k = 0; k < K; k++) {
                const float a0 = A[(size_t)i * K + k], a1 = A[(size_t)(i + 1) * K + k],
                            a2 = A[(size_t)(i + 2) * K + k], a3 = A[(size_t)(i + 3) * K + k];
                const float *restrict b = B + (size_t)k * N + j0;
                #pragma omp simd
                for (int j = 0; j < jn; j++) {
                    c0[j] += a0 * b[j];
                    c1[j] += a1 * b[j];
                    c2[j] += a2 * b[j];
                    c3[j] += a3 * b[j];
                }
            }
        }
        for (; i < M; i++) {
            float *restrict c = C + (size_t)i * N + j0;
            for (int k = 0; k < K; k++) {
                const float a = A[(size_t)i * K + k];
                const float *restrict b = B + (size_t)k * N + j0;
                #pragma omp simd
                for (int j = 0; j < jn; j++) c[j] += a * b[j];
            }
        }
    }
}

void nn_host_transpose(int R, int C, const float *restrict in, float *restrict out) {
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++) out[(size_t)c * R + r] = in[(size_t)r * C + c];
}

/* Dropout over NCHW, or over the graph's nChw16c, nChw8c or nhwc (nn/backend.h nn_fmt; op->fmt_in == op->fmt_out).
 * Element (n, c, hw) is kept by nn_dropout_keep(seed, its NCHW index) in either layout, so every back-end and
 * layout drops the same units. The mask (the workspace) is stored in the op's layout, element for element
 * with y, so the apply pass and backward are one contiguous loop; padded channels are never kept (y = 0).
 * backward: y = dx, x = dy, the mask is only read. */
static void dropout_run(int threads, const nn_op *op, float *y, uint8_t *mask, const float *x, uint64_t seed,
                        int backward) {
    const float scale = 1.0f / (1.0f - op->rate);
    const long total = (long)nn_fmt_elems(op->fmt_out, op->n, op->oc, op->oh, op->ow);
    if (!backward && op->fmt_out != NN_FMT_NCHW) {
        const long B = (long)nn_fmt_block(op->fmt_out, (size_t)op->oc), C = op->oc, CB = (C + B - 1) / B,
                   HW = (long)op->oh * op->ow, N = op->n;
        const uint32_t thr = nn_dropout_threshold(op->rate);
        #pragma omp parallel for collapse(2) num_threads(threads) schedule(static)
        for (long n = 0; n < N; n++)
            for (long cb = 0; cb < CB; cb++) {
                const size_t at = nn_fmt_at(op->fmt_out, (size_t)C, (size_t)HW, (size_t)n, (size_t)(cb * B), 0);
                const size_t i0 = ((size_t)n * C + (size_t)(cb * B)) * (size_t)HW;   /* NCHW index of (n, B cb, 0) */
                for (long h0 = 0; h0 < HW; h0 += 256) {   /* the hashes over contiguous NCHW indices */
                    const long hn = HW - h0 < 256 ? HW - h0 : 256;
                    uint8_t keep[256];
                    for (long k = 0; k < B; k++) {
                        const size_t ik = i0 + (size_t)k * HW + (size_t)h0;
                        if (cb * B + k < C)
                            for (long j = 0; j < hn; j++)
                                keep[j] = (uint8_t)(nn_dropout_bits(seed, (uint64_t)(ik + j)) >= thr);
                        else   /* a padded channel is never kept */
                            memset(keep, 0, (size_t)hn);
                        for (long j = 0; j < hn; j++) mask[at + (size_t)((h0 + j) * B + k)] = keep[j];
                    }
                }
            }
    } else if (!backward) {   /* NCHW: the mask in a pass of integer arithmetic, which vectorises */
        const uint32_t thr = nn_dropout_threshold(op->rate);
        #pragma omp parallel for simd num_threads(threads) schedule(static)
        for (long i = 0; i < total; i++) mask[i] = (uint8_t)(nn_dropout_bits(seed, (uint64_t)i) >= thr);
    }
    #pragma omp parallel for simd num_threads(threads) schedule(static)
    for (long i = 0; i < total; i++) {   /* dropped: +0 by a bit mask, a select GCC vectorises (a ?: it did not) */
        const float v = x[i] * scale;
        uint32_t b;
        memcpy(&b, &v, sizeof b);
        b &= 0u - (uint32_t)(mask[i] != 0);
        memcpy(&y[i], &b, sizeof b);
    }
}

int nn_host_dropout_forward(int threads, const nn_op *op, float *y, void *ws, const float *x,
                               uint64_t seed) {
    if (op->fmt_in != op->fmt_out)
        return sd_err(SD_ERROR, "internal: dropout with input layout %d, output %d", op->fmt_in, op->fmt_out);
    dropout_run(threads, op, y, ws, x, seed, 0);
    return 0;
}

int nn_host_dropout_backward(int threads, const nn_op *op, float *dx, const float *dy, const void *ws) {
    dropout_run(threads, op, dx, (uint8_t *)ws, dy, 0, 1);
    return 0;
}

int nn_host_relu_mask(int threads, size_t n, float *dy, const float *y) {
    #pragma omp parallel for simd num_threads(threads) schedule(static)
    for (long i = 0; i < (long)n; i++) dy[i] = y[i] > 0.0f ? dy[i] : 0.0f;
    return 0;
}

/* ---- loss ------------------------------------------------------------------------------------------ */

int nn_host_softmax_xent_forward(int threads, const nn_op *op, float *prob, float *loss,
                                    const float *logits, const int32_t *labels) {
    (void)threads;
    const int C = op->c;
    for (int i = 0; i < op->n; i++) {
        const float *z = logits + (size_t)i * C;
        float *p = prob + (size_t)i * C;
        float m = z[0];
        for (int k = 1; k < C; k++) if (z[k] > m) m = z[k];
        double s = 0;
        for (int k = 0; k < C; k++) { p[k] = expf(z[k] - m); s += p[k]; }
        for (int k = 0; k < C; k++) p[k] = (float)(p[k] / s);
        int lab = labels[i];
        if (lab < 0 || lab >= C) return sd_err(SD_EINPUT, "label %d out of range [0,%d)", lab, C);
        /* -log softmax computed from the logits directly (no log of a rounded probability) */
        loss[i] = (float)(log(s) - (double)(z[lab] - m));
    }
    return 0;
}

int nn_host_softmax_xent_backward(int threads, const nn_op *op, float *dlogits, const float *prob,
                                     const int32_t *labels) {
    (void)threads;
    const int C = op->c;
    const float inv = 1.0f / (float)op->n;
    for (int i = 0; i < op->n; i++)
        for (int k = 0; k < C; k++)
            dlogits[(size_t)i * C + k] = (prob[(size_t)i * C + k] - (k == labels[i] ? 1.0f : 0.0f)) * inv;
    return 0;
}

/* ---- optimizer --------------------------------------------------------------------------------- */

int nn_host_optimizer_step(int threads, const nn_optim *o, float *p, const float *g, float *state,
                              size_t n, long step) {
    const long N = (long)n;
    float *s0 = state, *s1 = state + n;
    switch (o->kind) {
    case NN_OPTIM_SGD:
        #pragma omp parallel for simd num_threads(threads) schedule(static)
        for (long i = 0; i < N; i++) nn_sgd_update(&p[i], g[i], &s0[i], o->lr, o->momentum);
        return 0;
    case NN_OPTIM_RMSPROP:
        #pragma omp parallel for simd num_threads(threads) schedule(static)
        for (long i = 0; i < N; i++) nn_rmsprop_update(&p[i], g[i], &s0[i], o->lr, o->rho, o->eps);
        return 0;
    case NN_OPTIM_ADADELTA:
        #pragma omp parallel for simd num_threads(threads) schedule(static)
        for (long i = 0; i < N; i++) nn_adadelta_update(&p[i], g[i], &s0[i], &s1[i], o->lr, o->rho, o->eps);
        return 0;
    case NN_OPTIM_ADAM: {
        const float bc1 = 1.0f - powf(o->beta1, (float)step), bc2 = 1.0f - powf(o->beta2, (float)step);
        #pragma omp parallel for simd num_threads(threads) schedule(static)
        for (long i = 0; i < N; i++)
            nn_adam_update(&p[i], g[i], &s0[i], &s1[i], o->lr, o->beta1, o->beta2, o->eps, bc1, bc2);
        return 0;
    }
    default:
        return sd_err(SD_EUNSUPPORTED, "unknown optimizer %d", (int)o->kind);
    }
}


/* ---- graph ops ------------------------------------------------------------------------- */

int nn_host_add(int threads, size_t n, float *y, const float *a, const float *b) {
    const long N = (long)n;
    #pragma omp parallel for simd num_threads(threads) schedule(static)
    for (long i = 0; i < N; i++) y[i] = a[i] + b[i];
    return 0;
}

/* Concat's one walk: example i's part k is in_c[k] channels of its output row, after the parts before it.
 * Forward copies the parts into y, backward copies y's slices back out (dy to dx; a NULL dx is skipped);
 * the side that is only read is passed without its const. */
static void concat_copy(int threads, const nn_op *op, float *y, float *const *parts, int backward) {
    const size_t hw = (size_t)op->h * op->w;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int i = 0; i < op->n; i++) {
        float *row = y + (size_t)i * op->oc * hw;
        for (int k = 0; k < op->ninputs; k++) {
            size_t len = (size_t)op->in_c[k] * hw;
            float *part = parts[k] ? parts[k] + (size_t)i * len : NULL;
            if (part) memcpy(backward ? part : row, backward ? row : part, sizeof(float) * len);
            row += len;
        }
    }
}

int nn_host_concat_forward(int threads, const nn_op *op, float *y, const float *const *x) {
    concat_copy(threads, op, y, (float *const *)x, 0);
    return 0;
}

int nn_host_concat_backward(int threads, const nn_op *op, float *const *dx, const float *dy) {
    concat_copy(threads, op, (float *)dy, dx, 1);
    return 0;
}

/* ws: [2][C] floats, the batch mean and biased variance of the training forward. Sums in double. */
int nn_host_batchnorm_forward(int threads, const nn_op *op, float *y, void *ws, const float *x, const float *gamma,
                              const float *beta, float *running, int train) {
    const int C = op->c, N = op->n;
    const size_t hw = (size_t)op->h * op->w;
    const double M = (double)N * hw;
    float *saved = ws;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int c = 0; c < C; c++) {
        double mean, var;
        if (train) {
            double s = 0;
            for (int i = 0; i < N; i++) {
                const float *p = x + ((size_t)i * C + c) * hw;
                for (size_t k = 0; k < hw; k++) s += p[k];
            }
            mean = s / M;
            double q = 0;
            for (int i = 0; i < N; i++) {
                const float *p = x + ((size_t)i * C + c) * hw;
                for (size_t k = 0; k < hw; k++) { double d = p[k] - mean; q += d * d; }
            }
            var = q / M;
            saved[c] = (float)mean;
            saved[C + c] = (float)var;
            double unbiased = M > 1 ? var * M / (M - 1) : var;
            running[c] = (float)((1.0 - op->momentum) * running[c] + op->momentum * mean);
            running[C + c] = (float)((1.0 - op->momentum) * running[C + c] + op->momentum * unbiased);
        } else {
            mean = running[c];
            var = running[C + c];
        }
        const float m = (float)mean, sc = (float)(gamma[c] / sqrt(var + op->eps)), b = beta[c];
        for (int i = 0; i < N; i++) {
            const float *p = x + ((size_t)i * C + c) * hw;
            float *q = y + ((size_t)i * C + c) * hw;
            for (size_t k = 0; k < hw; k++) q[k] = (p[k] - m) * sc + b;
        }
    }
    return 0;
}

int nn_host_batchnorm_backward(int threads, const nn_op *op, float *dx, float *dgamma, float *dbeta,
                               const float *dy, const float *x, const float *gamma, const void *ws) {
    const int C = op->c, N = op->n;
    const size_t hw = (size_t)op->h * op->w;
    const double M = (double)N * hw;
    const float *saved = ws;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int c = 0; c < C; c++) {
        const double mean = saved[c], invstd = 1.0 / sqrt((double)saved[C + c] + op->eps);
        double sdy = 0, sdyx = 0;
        for (int i = 0; i < N; i++) {
            const float *p = x + ((size_t)i * C + c) * hw, *g = dy + ((size_t)i * C + c) * hw;
            for (size_t k = 0; k < hw; k++) { sdy += g[k]; sdyx += g[k] * ((p[k] - mean) * invstd); }
        }
        dbeta[c] += (float)sdy;
        dgamma[c] += (float)sdyx;
        if (!dx) continue;
        const double a = gamma[c] * invstd / M;
        for (int i = 0; i < N; i++) {
            const float *p = x + ((size_t)i * C + c) * hw, *g = dy + ((size_t)i * C + c) * hw;
            float *d = dx + ((size_t)i * C + c) * hw;
            for (size_t k = 0; k < hw; k++)
                d[k] = (float)(a * (M * g[k] - sdy - (p[k] - mean) * invstd * sdyx));
        }
    }
    return 0;
}

/* Window rows [h0, h1) x cols [w0, w1) of output (p, q), clipped to the input. */
static void pool_window(const nn_op *op, int p, int q, int *h0, int *h1, int *w0, int *w1) {
    *h0 = p * op->sh - op->ph; *h1 = *h0 + op->kh;
    *w0 = q * op->sw - op->pw; *w1 = *w0 + op->kw;
    if (*h0 < 0) *h0 = 0;
    if (*w0 < 0) *w0 = 0;
    if (*h1 > op->h) *h1 = op->h;
    if (*w1 > op->w) *w1 = op->w;
}

int nn_host_avgpool_forward(int threads, const nn_op *op, float *y, const float *x) {
    const int planes = op->n * op->c;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int pl = 0; pl < planes; pl++) {
        const float *xp = x + (size_t)pl * op->h * op->w;
        for (int p = 0; p < op->oh; p++)
            for (int q = 0; q < op->ow; q++) {
                int h0, h1, w0, w1;
                pool_window(op, p, q, &h0, &h1, &w0, &w1);
                double s = 0;
                for (int r = h0; r < h1; r++)
                    for (int t = w0; t < w1; t++) s += xp[r * op->w + t];
                int cnt = (h1 - h0) * (w1 - w0);
                y[((size_t)pl * op->oh + p) * op->ow + q] = cnt > 0 ? (float)(s / cnt) : 0.0f;
            }
    }
    return 0;
}

int nn_host_avgpool_backward(int threads, const nn_op *op, float *dx, const float *dy) {
    const int planes = op->n * op->c;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int pl = 0; pl < planes; pl++) {
        float *dxp = dx + (size_t)pl * op->h * op->w;
        memset(dxp, 0, sizeof(float) * op->h * op->w);
        for (int p = 0; p < op->oh; p++)
            for (int q = 0; q < op->ow; q++) {
                int h0, h1, w0, w1;
                pool_window(op, p, q, &h0, &h1, &w0, &w1);
                int cnt = (h1 - h0) * (w1 - w0);
                if (cnt <= 0) continue;
                float g = dy[((size_t)pl * op->oh + p) * op->ow + q] / (float)cnt;
                for (int r = h0; r < h1; r++)
                    for (int t = w0; t < w1; t++) dxp[r * op->w + t] += g;
            }
    }
    return 0;
}

int nn_host_sigmoid_bce_forward(int threads, const nn_op *op, float *prob, float *loss, const float *logits,
                                const float *targets) {
    const int C = op->c;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int i = 0; i < op->n; i++) {
        double s = 0;
        for (int k = 0; k < C; k++) {
            size_t j = (size_t)i * C + k;
            prob[j] = nn_sigmoid(logits[j]);
            s += nn_bce_logit(logits[j], targets[j]);
        }
        loss[i] = (float)(s / C);
    }
    return 0;
}

int nn_host_sigmoid_bce_backward(int threads, const nn_op *op, float *dlogits, const float *prob,
                                 const float *targets) {
    const long n = (long)op->n * op->c;
    const float inv = 1.0f / (float)n;
    #pragma omp parallel for simd num_threads(threads) schedule(static)
    for (long j = 0; j < n; j++) dlogits[j] = (prob[j] - targets[j]) * inv;
    return 0;
}
