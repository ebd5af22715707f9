/* cudnn_kernels — the small CUDA kernels of the cuDNN back-end: optimizer updates, dropout, loss, the 16-bit
 * conversions of mixed precision and loss scaling.
 * Each kernel is a grid-stride loop around a per-element function of nn/kernels.h, the same function
 * the reference back-end and the host tests run; the launch wrappers only size the grid and return
 * cudaGetLastError() for the caller's CUDA_CHECK. Built with -fmad=false: no FMA contraction, so the
 * element arithmetic rounds as on the host. */
#include "be_cudnn/cudnn_be.h"
#include "nn/half.h"
#include "nn/kernels.h"

#define CU_BLOCK 256

/* Enough blocks to cover n, capped (the loops stride over the rest). */
static unsigned cu_grid(size_t n) {
    size_t b = (n + CU_BLOCK - 1) / CU_BLOCK;
    return (unsigned)(b > 8192 ? 8192 : (b ? b : 1));
}

#define CU_FOR(i, n) for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
                          i += (size_t)gridDim.x * blockDim.x)

__global__ void k_sgd(float *p, const float *g, float *v, size_t n, float lr, float mom) {
    CU_FOR(i, n) nn_sgd_update(&p[i], g[i], &v[i], lr, mom);
}
__global__ void k_rmsprop(float *p, const float *g, float *a, size_t n, float lr, float rho, float eps) {
    CU_FOR(i, n) nn_rmsprop_update(&p[i], g[i], &a[i], lr, rho, eps);
}
__global__ void k_adadelta(float *p, const float *g, float *a, float *da, size_t n, float lr, float rho,
                           float eps) {
    CU_FOR(i, n) nn_adadelta_update(&p[i], g[i], &a[i], &da[i], lr, rho, eps);
}
__global__ void k_adam(float *p, const float *g, float *m, float *v, size_t n, float lr, float b1, float b2,
                       float eps, float bc1, float bc2) {
    CU_FOR(i, n) nn_adam_update(&p[i], g[i], &m[i], &v[i], lr, b1, b2, eps, bc1, bc2);
}
__global__ void k_dropout_fwd(float *y, uint8_t *mask, const float *x, size_t n, uint64_t seed, float rate) {
    CU_FOR(i, n) {
        int keep = nn_dropout_keep(seed, (uint64_t)i, rate);
        mask[i] = (uint8_t)keep;
        y[i] = nn_dropout_apply(x[i], keep, rate);
    }
}
__global__ void k_dropout_bwd(float *dx, const float *dy, const uint8_t *mask, size_t n, float rate) {
    CU_FOR(i, n) dx[i] = nn_dropout_apply(dy[i], mask[i], rate);
}
/* One thread per example: C (classes) is small. */
__global__ void k_xent_loss(float *loss, const float *logits, const int32_t *labels, int n, int C, int *bad) {
    CU_FOR(i, (size_t)n) {
        int lab = labels[i];
        if (lab < 0 || lab >= C) {
            loss[i] = __int_as_float(0x7fc00000);   /* NaN */
            bad[1] = lab;
            bad[0] = 1;
        } else {
            loss[i] = nn_xent_row_loss(logits + i * (size_t)C, C, lab);
        }
    }
}
__global__ void k_xent_grad(float *dz, const float *prob, const int32_t *labels, int n, int C, float inv_n) {
    CU_FOR(j, (size_t)n * C) {
        size_t i = j / C;
        int k = (int)(j % C);
        dz[j] = nn_xent_grad(prob[j], k == labels[i], inv_n);
    }
}

/* graph ops */
__global__ void k_add(float *y, const float *a, const float *b, size_t n) {
    CU_FOR(i, n) y[i] = a[i] + b[i];
}
__global__ void k_bce_loss(float *prob, float *loss, const float *z, const float *t, int n, int C) {
    CU_FOR(i, (size_t)n) {
        double s = 0;
        for (int k = 0; k < C; k++) {
            size_t j = i * (size_t)C + k;
            prob[j] = nn_sigmoid(z[j]);
            s += nn_bce_logit(z[j], t[j]);
        }
        loss[i] = (float)(s / C);
    }
}
__global__ void k_bce_grad(float *dz, const float *prob, const float *t, size_t total, float inv) {
    CU_FOR(j, total) dz[j] = (prob[j] - t[j]) * inv;
}

extern "C" {

cudaError_t cu_launch_add(float *y, const float *a, const float *b, size_t n, cudaStream_t s) {
    if (n) k_add<<<cu_grid(n), CU_BLOCK, 0, s>>>(y, a, b, n);
    return cudaGetLastError();
}
cudaError_t cu_launch_bce_loss(float *prob, float *loss, const float *logits, const float *targets, int n, int C,
                               cudaStream_t s) {
    if (n > 0) k_bce_loss<<<cu_grid((size_t)n), CU_BLOCK, 0, s>>>(prob, loss, logits, targets, n, C);
    return cudaGetLastError();
}
cudaError_t cu_launch_bce_grad(float *dlogits, const float *prob, const float *targets, int n, int C,
                               cudaStream_t s) {
    size_t total = (size_t)n * (size_t)C;
    if (total) k_bce_grad<<<cu_grid(total), CU_BLOCK, 0, s>>>(dlogits, prob, targets, total, 1.0f / (float)total);
    return cudaGetLastError();
}

cudaError_t cu_launch_sgd(float *p, const float *g, float *v, size_t n, float lr, float momentum,
                          cudaStream_t s) {
    if (n) k_sgd<<<cu_grid(n), CU_BLOCK, 0, s>>>(p, g, v, n, lr, momentum);
    return cudaGetLastError();
}
cudaError_t cu_launch_rmsprop(float *p, const float *g, float *a, size_t n, float lr, float rho, float eps,
                              cudaStream_t s) {
    if (n) k_rmsprop<<<cu_grid(n), CU_BLOCK, 0, s>>>(p, g, a, n, lr, rho, eps);
    return cudaGetLastError();
}
cudaError_t cu_launch_adadelta(float *p, const float *g, float *a, float *da, size_t n, float lr, float rho,
                               float eps, cudaStream_t s) {
    if (n) k_adadelta<<<cu_grid(n), CU_BLOCK, 0, s>>>(p, g, a, da, n, lr, rho, eps);
    return cudaGetLastError();
}
cudaError_t cu_launch_adam(float *p, const float *g, float *m, float *v, size_t n, float lr, float beta1,
                           float beta2, float eps, float bc1, float bc2, cudaStream_t s) {
    if (n) k_adam<<<cu_grid(n), CU_BLOCK, 0, s>>>(p, g, m, v, n, lr, beta1, beta2, eps, bc1, bc2);
    return cudaGetLastError();
}
cudaError_t cu_launch_dropout_fwd(float *y, uint8_t *mask, const float *x, size_t n, uint64_t seed, float rate,
                                  cudaStream_t s) {
    if (n) k_dropout_fwd<<<cu_grid(n), CU_BLOCK, 0, s>>>(y, mask, x, n, seed, rate);
    return cudaGetLastError();
}
cudaError_t cu_launch_dropout_bwd(float *dx, const float *dy, const uint8_t *mask, size_t n, float rate,
                                  cudaStream_t s) {
    if (n) k_dropout_bwd<<<cu_grid(n), CU_BLOCK, 0, s>>>(dx, dy, mask, n, rate);
    return cudaGetLastError();
}
cudaError_t cu_launch_xent_loss(float *loss, const float *logits, const int32_t *labels, int n, int C,
                                int *bad, cudaStream_t s) {
    if (n > 0) k_xent_loss<<<cu_grid((size_t)n), CU_BLOCK, 0, s>>>(loss, logits, labels, n, C, bad);
    return cudaGetLastError();
}
cudaError_t cu_launch_xent_grad(float *dlogits, const float *prob, const int32_t *labels, int n, int C,
                                cudaStream_t s) {
    size_t total = (size_t)n * (size_t)C;
    if (total) k_xent_grad<<<cu_grid(total), CU_BLOCK, 0, s>>>(dlogits, prob, labels, n, C, 1.0f / (float)n);
    return cudaGetLastError();
}

/* ---- mixed precision: fp32 <-> fp16 / bf16 (nn/half.h), loss scaling (nn_scale_elem) ------------------ */

__global__ void k_to_half(uint16_t *dst, const float *src, size_t n, int bf16) {
    CU_FOR(i, n) dst[i] = bf16 ? nn_f32_to_bf16(src[i]) : nn_f32_to_f16(src[i]);
}
__global__ void k_from_half(float *dst, const uint16_t *src, size_t n, int bf16, int accumulate) {
    CU_FOR(i, n) {
        float v = bf16 ? nn_bf16_to_f32(src[i]) : nn_f16_to_f32(src[i]);
        dst[i] = accumulate ? dst[i] + v : v;
    }
}
/* Every thread that sees an inf or NaN writes 1: the same value, so the races are benign. */
__global__ void k_scale(float *x, size_t n, float scale, int *flag) {
    CU_FOR(i, n) if (nn_scale_elem(&x[i], scale) && flag) *flag = 1;
}

extern "C" {

cudaError_t cu_launch_to_half(uint16_t *dst, const float *src, size_t n, int bf16, cudaStream_t s) {
    if (n) k_to_half<<<cu_grid(n), CU_BLOCK, 0, s>>>(dst, src, n, bf16);
    return cudaGetLastError();
}
cudaError_t cu_launch_from_half(float *dst, const uint16_t *src, size_t n, int bf16, int accumulate, cudaStream_t s) {
    if (n) k_from_half<<<cu_grid(n), CU_BLOCK, 0, s>>>(dst, src, n, bf16, accumulate);
    return cudaGetLastError();
}
cudaError_t cu_launch_scale(float *x, size_t n, float scale, int *flag, cudaStream_t s) {
    if (n) k_scale<<<cu_grid(n), CU_BLOCK, 0, s>>>(x, n, scale, flag);
    return cudaGetLastError();
}

}

/* ---- recurrent ops: embedding gather / scatter-add ----------------------------------------- */

__global__ void k_embedding_fwd(float *y, const int32_t *ids, const float *table, size_t nt, int T, int S, int E,
                                int V, int *bad) {
    CU_FOR(i, nt * (size_t)E) {
        size_t r = i / (size_t)E;
        int e = (int)(i % (size_t)E), id = ids[(r / (size_t)T) * (size_t)S + r % (size_t)T];
        if (id < 0 || id >= V) { y[i] = nanf(""); bad[0] = 1; bad[1] = id; continue; }
        y[i] = table[(size_t)id * E + e];
    }
}
__global__ void k_embedding_bwd(float *dtable, const float *dy, const int32_t *ids, size_t nt, int T, int S, int E,
                                int V) {
    CU_FOR(i, nt * (size_t)E) {
        size_t r = i / (size_t)E;
        int e = (int)(i % (size_t)E), id = ids[(r / (size_t)T) * (size_t)S + r % (size_t)T];
        if (id >= 0 && id < V) atomicAdd(&dtable[(size_t)id * E + e], dy[i]);
    }
}

cudaError_t cu_launch_embedding_fwd(float *y, const int32_t *ids, const float *table, size_t nt, int T, int S, int E,
                                    int V, int *bad, cudaStream_t s) {
    if (nt && E) k_embedding_fwd<<<cu_grid(nt * (size_t)E), CU_BLOCK, 0, s>>>(y, ids, table, nt, T, S, E, V, bad);
    return cudaGetLastError();
}
cudaError_t cu_launch_embedding_bwd(float *dtable, const float *dy, const int32_t *ids, size_t nt, int T, int S, int E,
                                    int V, cudaStream_t s) {
    if (nt && E) k_embedding_bwd<<<cu_grid(nt * (size_t)E), CU_BLOCK, 0, s>>>(dtable, dy, ids, nt, T, S, E, V);
    return cudaGetLastError();
}

/* repeat (RepeatVector): y[i][t][k] = x[i][k]; dx[i][k] = sum_t dy[i][t][k] (one thread per (i, k)) */
__global__ void k_repeat_fwd(float *y, const float *x, int n, int T, int C) {
    CU_FOR(j, (size_t)n * T * C) {
        size_t i = j / ((size_t)T * C), k = j % (size_t)C;
        y[j] = x[i * C + k];
    }
}
__global__ void k_repeat_bwd(float *dx, const float *dy, int n, int T, int C) {
    CU_FOR(j, (size_t)n * C) {
        size_t i = j / (size_t)C, k = j % (size_t)C;
        float s = 0.0f;
        for (int t = 0; t < T; t++) s += dy[(i * T + t) * C + k];
        dx[j] = s;
    }
}
cudaError_t cu_launch_repeat_fwd(float *y, const float *x, int n, int T, int C, cudaStream_t s) {
    if (n && T && C) k_repeat_fwd<<<cu_grid((size_t)n * T * C), CU_BLOCK, 0, s>>>(y, x, n, T, C);
    return cudaGetLastError();
}
cudaError_t cu_launch_repeat_bwd(float *dx, const float *dy, int n, int T, int C, cudaStream_t s) {
    if (n && C) k_repeat_bwd<<<cu_grid((size_t)n * C), CU_BLOCK, 0, s>>>(dx, dy, n, T, C);
    return cudaGetLastError();
}

}
