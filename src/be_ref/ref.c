/* ref — the plain-C reference back-end: the specification every other back-end is tested against.
 * Readable loops over NCHW float32 buffers in host memory; gemm-shaped loops are ordered so that the
 * inner loop is contiguous (the compiler vectorises it) and batches are split across OpenMP threads.
 * Results depend only on the inputs and the thread count. */
#include "nn/backend_impl.h"
#include "nn/host_ops.h"
#include "nn/kernels.h"
#include "core/err.h"

#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

typedef struct ref_ctx {
    int threads;
} ref_ctx;

#define T(be) (((ref_ctx *)(be)->ctx)->threads)

/* ---- gemm building blocks (row-major) ---------------------------------------------------------- */

/* Rows [i0, i1) of a gemm_nn, for splitting M across threads. */
static void gemm_nn_rows(int i0, int i1, int N, int K, const float *A, const float *B, float *C, int accumulate) {
    if (i1 > i0) nn_host_gemm_nn(i1 - i0, N, K, A + (size_t)i0 * K, B, C + (size_t)i0 * N, accumulate);
}

/* This thread's rows [i0, i1) of M, inside a parallel region: one contiguous chunk per thread
 * (multiples of 4 where possible). */
static void thread_rows(int M, int *i0, int *i1) {
    const int nt = omp_get_num_threads(), t = omp_get_thread_num();
    int per = ((M + nt - 1) / nt + 3) / 4 * 4;
    *i0 = t * per < M ? t * per : M;
    *i1 = (t + 1) * per < M ? (t + 1) * per : M;
}

/* A transposed copy of m[rows][cols], which the caller frees; NULL when out of memory. */
static float *transposed(int rows, int cols, const float *m) {
    float *t = malloc(sizeof(float) * (size_t)rows * cols);
    if (t) nn_host_transpose(rows, cols, m, t);
    return t;
}

/* C[M][N] (+)= A[K][M]^T · B[K][N] */
static void gemm_tn(int M, int N, int K, const float *restrict A, const float *restrict B,
                    float *restrict C, int accumulate) {
    for (int i = 0; i < M; i++) {
        float *restrict c = C + (size_t)i * N;
        if (!accumulate) memset(c, 0, sizeof(float) * N);
        for (int k = 0; k < K; k++) {
            const float a = A[(size_t)k * M + i];
            const float *restrict b = B + (size_t)k * N;
            #pragma omp simd
            for (int j = 0; j < N; j++) c[j] += a * b[j];
        }
    }
}

/* ---- memory ------------------------------------------------------------------------------------ */

static int ref_alloc(nn_backend *be, void **out, size_t bytes) {
    (void)be;
    *out = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!*out) return sd_err(SD_ENOMEM, "ref: cannot allocate %zu bytes", bytes);
    return 0;
}
static void ref_free(nn_backend *be, void *p) { (void)be; free(p); }
static int ref_copy(nn_backend *be, void *dst, const void *src, size_t bytes) {
    (void)be;
    memcpy(dst, src, bytes);
    return 0;
}
static int ref_zero(nn_backend *be, void *p, size_t bytes) { (void)be; memset(p, 0, bytes); return 0; }
static int ref_sync(nn_backend *be) { (void)be; return 0; }

static size_t ref_workspace_size(nn_backend *be, const nn_op *op) {
    (void)be;
    size_t out = (size_t)op->n * op->oc * op->oh * op->ow;
    switch (op->kind) {
    case NN_OP_MAXPOOL: return out * sizeof(int32_t);   /* argmax per output */
    case NN_OP_DROPOUT: return out;                      /* keep mask, one byte per element */
    case NN_OP_BATCHNORM: return 2 * sizeof(float) * (size_t)op->c;   /* batch mean, variance */
    case NN_OP_GRU: case NN_OP_LSTM: return nn_host_rnn_ws_bytes(op);
    default: return 0;
    }
}

/* ---- dense ---------------------------------------------------------------------------------------- */

static int ref_dense_forward(nn_backend *be, const nn_op *op, float *y, const float *x, const float *w,
                             const float *b) {
    const int N = op->n, C = op->c, O = op->oc;
    float *wt = transposed(O, C, w);                     /* wt: [C][O] */
    SD_ALLOC_CHECK(wt);
    for (int i = 0; i < N; i++)
        for (int o = 0; o < O; o++) y[(size_t)i * O + o] = b ? b[o] : 0.0f;
    #pragma omp parallel num_threads(T(be))
    {
        int i0, i1;
        thread_rows(N, &i0, &i1);
        gemm_nn_rows(i0, i1, O, C, x, wt, y, 1);         /* y[N][O] += x[N][C] · wt[C][O] */
    }
    free(wt);
    return 0;
}

static int ref_dense_backward(nn_backend *be, const nn_op *op, float *dx, float *dw, float *db,
                              const float *dy, const float *x, const float *w) {
    const int N = op->n, C = op->c, O = op->oc;
    float *dyt = transposed(N, O, dy);                   /* dyt: [O][N] */
    SD_ALLOC_CHECK(dyt);
    #pragma omp parallel num_threads(T(be))
    {
        int o0, o1;
        thread_rows(O, &o0, &o1);
        gemm_nn_rows(o0, o1, C, N, dyt, x, dw, 1);       /* dW[O][C] += dy^T[O][N] · x[N][C] */
        if (db)
            for (int o = o0; o < o1; o++) {
                float s = 0;
                for (int i = 0; i < N; i++) s += dyt[(size_t)o * N + i];
                db[o] += s;
            }
        if (dx) {
            #pragma omp barrier
            int i0, i1;
            thread_rows(N, &i0, &i1);
            gemm_nn_rows(i0, i1, C, O, dy, w, dx, 0);    /* dx[N][C] = dy[N][O] · W[O][C] */
        }
    }
    free(dyt);
    return 0;
}

/* ---- conv2d (im2col per example) ----------------------------------------------------------------- */

/* col[(c*kh+r)*kw+s][p*ow+q] = x[c][p*sh-ph+r][q*sw-pw+s] (0 outside). */
static void im2col(const nn_op *op, const float *x, float *col) {
    const int OH = op->oh, OW = op->ow;
    for (int c = 0; c < op->c; c++)
        for (int r = 0; r < op->kh; r++)
            for (int s = 0; s < op->kw; s++) {
                float *row = col + ((size_t)(c * op->kh + r) * op->kw + s) * OH * OW;
                for (int p = 0; p < OH; p++) {
                    int ih = p * op->sh - op->ph + r;
                    for (int q = 0; q < OW; q++) {
                        int iw = q * op->sw - op->pw + s;
                        row[p * OW + q] = (ih >= 0 && ih < op->h && iw >= 0 && iw < op->w)
                                              ? x[((size_t)c * op->h + ih) * op->w + iw] : 0.0f;
                    }
                }
            }
}

/* dx[c][ih][iw] += col[...] — the adjoint of im2col. */
static void col2im(const nn_op *op, const float *col, float *dx) {
    const int OH = op->oh, OW = op->ow;
    for (int c = 0; c < op->c; c++)
        for (int r = 0; r < op->kh; r++)
            for (int s = 0; s < op->kw; s++) {
                const float *row = col + ((size_t)(c * op->kh + r) * op->kw + s) * OH * OW;
                for (int p = 0; p < OH; p++) {
                    int ih = p * op->sh - op->ph + r;
                    if (ih < 0 || ih >= op->h) continue;
                    for (int q = 0; q < OW; q++) {
                        int iw = q * op->sw - op->pw + s;
                        if (iw >= 0 && iw < op->w) dx[((size_t)c * op->h + ih) * op->w + iw] += row[p * OW + q];
                    }
                }
            }
}

static int ref_conv2d_forward(nn_backend *be, const nn_op *op, float *y, const float *x, const float *w,
                              const float *b) {
    const int K = op->c * op->kh * op->kw, P = op->oh * op->ow;
    const size_t in_sz = (size_t)op->c * op->h * op->w, out_sz = (size_t)op->oc * P;
    int fail = 0;
    #pragma omp parallel num_threads(T(be))
    {
        float *col = malloc(sizeof(float) * (size_t)K * P);
        if (!col) {
            #pragma omp atomic write
            fail = 1;
        }
        #pragma omp for schedule(static)
        for (int i = 0; i < op->n; i++) {
            if (!col) continue;
            float *yi = y + i * out_sz;
            im2col(op, x + i * in_sz, col);
            nn_host_gemm_nn(op->oc, P, K, w, col, yi, 0);
            if (b)
                for (int o = 0; o < op->oc; o++)
                    for (int p = 0; p < P; p++) yi[(size_t)o * P + p] += b[o];
        }
        free(col);
    }
    return fail ? sd_err(SD_ENOMEM, "ref: conv2d: out of memory") : 0;
}

static int ref_conv2d_backward(nn_backend *be, const nn_op *op, float *dx, float *dw, float *db,
                               const float *dy, const float *x, const float *w) {
    const int K = op->c * op->kh * op->kw, P = op->oh * op->ow, O = op->oc;
    const size_t in_sz = (size_t)op->c * op->h * op->w, out_sz = (size_t)O * P;
    const int nt = T(be);
    float *dw_part = calloc((size_t)nt * O * K, sizeof(float));
    float *db_part = calloc((size_t)nt * O, sizeof(float));
    int fail = !dw_part || !db_part;
    if (!fail) {
        #pragma omp parallel num_threads(nt)
        {
            int t = omp_get_thread_num();
            float *col = malloc(sizeof(float) * (size_t)K * P);
            float *colt = malloc(sizeof(float) * (size_t)K * P);
            if (!col || !colt) {
                #pragma omp atomic write
                fail = 1;
            }
            float *mydw = dw_part + (size_t)t * O * K, *mydb = db_part + (size_t)t * O;
            #pragma omp for schedule(static)
            for (int i = 0; i < op->n; i++) {
                if (!col || !colt) continue;
                const float *dyi = dy + i * out_sz;
                im2col(op, x + i * in_sz, col);
                nn_host_transpose(K, P, col, colt);             /* colt: [P][K] */
                nn_host_gemm_nn(O, K, P, dyi, colt, mydw, 1);   /* dW[O][K] += dy[O][P]·colt[P][K] */
                for (int o = 0; o < O; o++) {
                    float s = 0;
                    for (int p = 0; p < P; p++) s += dyi[(size_t)o * P + p];
                    mydb[o] += s;
                }
                if (dx) {
                    gemm_tn(K, P, O, w, dyi, col, 0);           /* dcol[K][P] = W^T · dy */
                    float *dxi = dx + i * in_sz;
                    memset(dxi, 0, sizeof(float) * in_sz);
                    col2im(op, col, dxi);
                }
            }
            free(col);
            free(colt);
        }
    }
    if (!fail) {
        for (int t = 0; t < nt; t++) {
            for (size_t j = 0; j < (size_t)O * K; j++) dw[j] += dw_part[(size_t)t * O * K + j];
            if (db) for (int o = 0; o < O; o++) db[o] += db_part[(size_t)t * O + o];
        }
    }
    free(dw_part);
    free(db_part);
    return fail ? sd_err(SD_ENOMEM, "ref: conv2d backward: out of memory") : 0;
}

/* ---- pooling, activation, dropout ----------------------------------------------------------------- */

static int ref_maxpool_forward(nn_backend *be, const nn_op *op, float *y, void *ws, const float *x) {
    int32_t *arg = ws;
    const int planes = op->n * op->c;
    #pragma omp parallel for num_threads(T(be)) schedule(static)
    for (int pl = 0; pl < planes; pl++) {
        const float *xp = x + (size_t)pl * op->h * op->w;
        for (int p = 0; p < op->oh; p++)
            for (int q = 0; q < op->ow; q++) {
                float best = -FLT_MAX;
                int besti = -1;
                for (int r = 0; r < op->kh; r++) {
                    int ih = p * op->sh - op->ph + r;
                    if (ih < 0 || ih >= op->h) continue;
                    for (int s = 0; s < op->kw; s++) {
                        int iw = q * op->sw - op->pw + s;
                        if (iw < 0 || iw >= op->w) continue;
                        float v = xp[ih * op->w + iw];
                        if (besti < 0 || v > best) { best = v; besti = ih * op->w + iw; }
                    }
                }
                size_t o = ((size_t)pl * op->oh + p) * op->ow + q;
                y[o] = besti < 0 ? 0.0f : best;
                if (arg) arg[o] = besti;
            }
    }
    return 0;
}

static int ref_maxpool_backward(nn_backend *be, const nn_op *op, float *dx, const float *dy,
                                const float *x, const float *y, const void *ws) {
    (void)x; (void)y;
    const int32_t *arg = ws;
    const int planes = op->n * op->c;
    #pragma omp parallel for num_threads(T(be)) schedule(static)
    for (int pl = 0; pl < planes; pl++) {
        float *dxp = dx + (size_t)pl * op->h * op->w;
        memset(dxp, 0, sizeof(float) * op->h * op->w);
        for (int o = 0; o < op->oh * op->ow; o++) {
            size_t oi = (size_t)pl * op->oh * op->ow + o;
            if (arg[oi] >= 0) dxp[arg[oi]] += dy[oi];
        }
    }
    return 0;
}

static size_t numel_out(const nn_op *op) { return (size_t)op->n * op->oc * op->oh * op->ow; }

static int ref_relu_forward(nn_backend *be, const nn_op *op, float *y, const float *x) {
    const long n = (long)numel_out(op);
    #pragma omp parallel for simd num_threads(T(be)) schedule(static)
    for (long i = 0; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    return 0;
}

static int ref_relu_backward(nn_backend *be, const nn_op *op, float *dx, const float *dy, const float *y) {
    const long n = (long)numel_out(op);
    #pragma omp parallel for simd num_threads(T(be)) schedule(static)
    for (long i = 0; i < n; i++) dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
    return 0;
}

static int ref_relu_mask(nn_backend *be, size_t n, float *dy, const float *y) {
    return nn_host_relu_mask(T(be), n, dy, y);
}

static int ref_dropout_forward(nn_backend *be, const nn_op *op, float *y, void *ws, const float *x,
                               uint64_t seed) {
    return nn_host_dropout_forward(T(be), op, y, ws, x, seed);
}

static int ref_dropout_backward(nn_backend *be, const nn_op *op, float *dx, const float *dy, const void *ws) {
    return nn_host_dropout_backward(T(be), op, dx, dy, ws);
}

static int ref_softmax_xent_forward(nn_backend *be, const nn_op *op, float *prob, float *loss,
                                    const float *logits, const int32_t *labels) {
    return nn_host_softmax_xent_forward(T(be), op, prob, loss, logits, labels);
}

static int ref_softmax_xent_backward(nn_backend *be, const nn_op *op, float *dlogits, const float *prob,
                                     const int32_t *labels) {
    return nn_host_softmax_xent_backward(T(be), op, dlogits, prob, labels);
}

static int ref_optimizer_step(nn_backend *be, const nn_optim *o, float *p, const float *g, float *state,
                              size_t n, long step) {
    return nn_host_optimizer_step(T(be), o, p, g, state, n, step);
}

/* ---- graph ops: the arithmetic is host_ops' --------------------------------------------- */

static int ref_add_forward(nn_backend *be, const nn_op *op, float *y, const float *a, const float *b) {
    return nn_host_add(T(be), numel_out(op), y, a, b);
}
static int ref_concat_forward(nn_backend *be, const nn_op *op, float *y, const float *const *x) {
    return nn_host_concat_forward(T(be), op, y, x);
}
static int ref_concat_backward(nn_backend *be, const nn_op *op, float *const *dx, const float *dy) {
    return nn_host_concat_backward(T(be), op, dx, dy);
}
static int ref_batchnorm_forward(nn_backend *be, const nn_op *op, float *y, void *ws, const float *x,
                                 const float *gamma, const float *beta, float *running, int train) {
    return nn_host_batchnorm_forward(T(be), op, y, ws, x, gamma, beta, running, train);
}
static int ref_batchnorm_backward(nn_backend *be, const nn_op *op, float *dx, float *dgamma, float *dbeta,
                                  const float *dy, const float *x, const float *gamma, const void *ws) {
    return nn_host_batchnorm_backward(T(be), op, dx, dgamma, dbeta, dy, x, gamma, ws);
}
static int ref_avgpool_forward(nn_backend *be, const nn_op *op, float *y, const float *x) {
    return nn_host_avgpool_forward(T(be), op, y, x);
}
static int ref_avgpool_backward(nn_backend *be, const nn_op *op, float *dx, const float *dy) {
    return nn_host_avgpool_backward(T(be), op, dx, dy);
}
static int ref_sigmoid_bce_forward(nn_backend *be, const nn_op *op, float *prob, float *loss, const float *logits,
                                   const float *targets) {
    return nn_host_sigmoid_bce_forward(T(be), op, prob, loss, logits, targets);
}
static int ref_sigmoid_bce_backward(nn_backend *be, const nn_op *op, float *dlogits, const float *prob,
                                    const float *targets) {
    return nn_host_sigmoid_bce_backward(T(be), op, dlogits, prob, targets);
}

/* ---- recurrent ops: host_rnn.c is their reference arithmetic -------------------------------- */

static int ref_embedding_forward(nn_backend *be, const nn_op *op, float *y, const int32_t *ids, const float *table) {
    return nn_host_embedding_forward(T(be), op, y, ids, table);
}
static int ref_embedding_backward(nn_backend *be, const nn_op *op, float *dtable, const float *dy,
                                  const int32_t *ids) {
    return nn_host_embedding_backward(T(be), op, dtable, dy, ids);
}
static int ref_rnn_forward(nn_backend *be, const nn_op *op, float *y, void *ws, const float *x, const float *w,
                           int train) {
    /* evaluation keeps no gates for a backward pass (the host kernel skips them when ws is NULL) */
    return nn_host_rnn_forward(T(be), op, y, train ? ws : NULL, x, w);
}
static int ref_rnn_backward(nn_backend *be, const nn_op *op, float *dx, float *dw, const float *dy, const float *x,
                            const float *w, const float *y, const void *ws) {
    return nn_host_rnn_backward(T(be), op, dx, dw, dy, x, w, y, ws);
}

static int ref_repeat_forward(nn_backend *be, const nn_op *op, float *y, const float *x) {
    return nn_host_repeat_forward(T(be), op, y, x);
}
static int ref_repeat_backward(nn_backend *be, const nn_op *op, float *dx, const float *dy) {
    return nn_host_repeat_backward(T(be), op, dx, dy);
}

/* ---- table ----------------------------------------------------------------------------------------- */

static void ref_env(nn_backend *be, nn_env_fn add, void *user) {
    char buf[32];
    snprintf(buf, sizeof buf, "%d", T(be));
    add(user, "backend_threads", buf);
    add(user, "backend_impl", "plain C (im2col + loop gemm, OpenMP)");
    add(user, "denormals", NN_HOST_DENORMALS);
}

static void ref_destroy(nn_backend *be) {
    free(be->ctx);
    free(be);
}

static const nn_backend_ops ref_ops = {
    .name = "ref",
    .destroy = ref_destroy,
    .env = ref_env,
    .alloc = ref_alloc,
    .free = ref_free,
    .upload = ref_copy,
    .download = ref_copy,
    .zero = ref_zero,
    .sync = ref_sync,
    .workspace_size = ref_workspace_size,
    .dense_forward = ref_dense_forward,
    .dense_backward = ref_dense_backward,
    .conv2d_forward = ref_conv2d_forward,
    .conv2d_backward = ref_conv2d_backward,
    .maxpool_forward = ref_maxpool_forward,
    .maxpool_backward = ref_maxpool_backward,
    .relu_forward = ref_relu_forward,
    .relu_backward = ref_relu_backward,
    .relu_mask = ref_relu_mask,
    .dropout_forward = ref_dropout_forward,
    .dropout_backward = ref_dropout_backward,
    .softmax_xent_forward = ref_softmax_xent_forward,
    .softmax_xent_backward = ref_softmax_xent_backward,
    .optimizer_step = ref_optimizer_step,
    /* graph ops */
    .copy = ref_copy,
    .add_forward = ref_add_forward,
    .concat_forward = ref_concat_forward,
    .concat_backward = ref_concat_backward,
    .batchnorm_forward = ref_batchnorm_forward,
    .batchnorm_backward = ref_batchnorm_backward,
    .avgpool_forward = ref_avgpool_forward,
    .avgpool_backward = ref_avgpool_backward,
    .sigmoid_bce_forward = ref_sigmoid_bce_forward,
    .sigmoid_bce_backward = ref_sigmoid_bce_backward,
    /* recurrent ops */
    .embedding_forward = ref_embedding_forward,
    .embedding_backward = ref_embedding_backward,
    .gru_forward = ref_rnn_forward,
    .gru_backward = ref_rnn_backward,
    .lstm_forward = ref_rnn_forward,
    .lstm_backward = ref_rnn_backward,
    .repeat_forward = ref_repeat_forward,
    .repeat_backward = ref_repeat_backward,
};

int nn_ref_new(nn_backend **out, const nn_backend_opts *opts) {
    nn_backend *be = calloc(1, sizeof *be);
    ref_ctx *ctx = calloc(1, sizeof *ctx);
    if (!be || !ctx) { free(be); free(ctx); return sd_err(SD_ENOMEM, "ref: out of memory"); }
    const char *prec = opts && opts->precision ? opts->precision : "fp32";
    if (strcmp(prec, "bf16") == 0 || strcmp(prec, "fp16") == 0) {   /* the yardstick stays fp32 */
        free(be); free(ctx);
        return sd_err(SD_EUSAGE, "ref: the reference back-end computes fp32 only; --precision %s runs on %s", prec,
                      strcmp(prec, "bf16") == 0 ? "dnnl (or cudnn)" : "cudnn");
    }
    if (opts) be->opts = *opts;
    ctx->threads = be->opts.threads > 0 ? be->opts.threads : omp_get_num_procs();
    nn_host_flush_denormals(ctx->threads);
    be->ops = &ref_ops;
    be->ctx = ctx;
    snprintf(be->name, sizeof be->name, "ref");
    snprintf(be->device, sizeof be->device, "CPU (reference, %d threads)", ctx->threads);
    *out = be;
    return 0;
}
