/* kernels — per-element arithmetic shared by every back-end: the dropout mask and the optimizer
 * updates. Written once as inline functions that compile for the host and (under nvcc) the device,
 * so the CUDA kernels run exactly the arithmetic the host tests check. */
#ifndef SD_NN_KERNELS_H
#define SD_NN_KERNELS_H

#include <stdint.h>
#include <math.h>
#include <string.h>

#ifdef __CUDACC__
#define SD_HD __host__ __device__ __forceinline__
#else
#define SD_HD static inline
#endif

/* splitmix64 finaliser: a counter-based hash, so mask element i depends only on (seed, i). */
SD_HD uint64_t nn_hash64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Element i's 24 random bits: u = bits 2^-24 is uniform in [0,1). */
SD_HD uint32_t nn_dropout_bits(uint64_t seed, uint64_t i) { return (uint32_t)(nn_hash64(seed ^ nn_hash64(i)) >> 40); }

/* u = bits 2^-24 is exact, so u >= rate exactly when bits >= ceil(rate 2^24): an integer compare, which vectorises
 * where the float conversion did not. A NaN rate keeps nothing, as u >= NaN. */
SD_HD uint32_t nn_dropout_threshold(float rate) {
    if (!(rate > 0.0f)) return rate == rate ? 0u : 16777216u;
    return rate < 1.0f ? (uint32_t)ceil((double)rate * 16777216.0) : 16777216u;
}

/* 1 if element i is kept by dropout with drop probability rate. */
SD_HD int nn_dropout_keep(uint64_t seed, uint64_t i, float rate) {
    return nn_dropout_bits(seed, i) >= nn_dropout_threshold(rate);
}

/* SGD with momentum (PyTorch form; equal to Keras' for a constant lr). state v. */
SD_HD void nn_sgd_update(float *p, float g, float *v, float lr, float momentum) {
    if (momentum != 0.0f) {
        *v = momentum * *v + g;
        g = *v;
    }
    *p -= lr * g;
}

/* RMSprop (Keras): a = rho a + (1-rho) g^2; p -= lr g / (sqrt(a) + eps). */
SD_HD void nn_rmsprop_update(float *p, float g, float *a, float lr, float rho, float eps) {
    *a = rho * *a + (1.0f - rho) * g * g;
    *p -= lr * g / (sqrtf(*a) + eps);
}

/* Adadelta (Keras): a = rho a + (1-rho) g^2; d = g sqrt(da+eps)/sqrt(a+eps); p -= lr d;
 * da = rho da + (1-rho) d^2. */
SD_HD void nn_adadelta_update(float *p, float g, float *a, float *da, float lr, float rho, float eps) {
    *a = rho * *a + (1.0f - rho) * g * g;
    float d = g * sqrtf(*da + eps) / sqrtf(*a + eps);
    *p -= lr * d;
    *da = rho * *da + (1.0f - rho) * d * d;
}

/* Adam with bias correction; bc1 = 1 - beta1^t, bc2 = 1 - beta2^t computed once per step. */
SD_HD void nn_adam_update(float *p, float g, float *m, float *v, float lr, float beta1, float beta2,
                          float eps, float bc1, float bc2) {
    *m = beta1 * *m + (1.0f - beta1) * g;
    *v = beta2 * *v + (1.0f - beta2) * g * g;
    float mh = *m / bc1, vh = *v / bc2;
    *p -= lr * mh / (sqrtf(vh) + eps);
}

/* ReLU and its gradient (the gradient reads the forward output: y > 0 exactly where x > 0). */
SD_HD float nn_relu(float x) { return x > 0.0f ? x : 0.0f; }
SD_HD float nn_relu_grad(float dy, float y) { return y > 0.0f ? dy : 0.0f; }

/* Inverted dropout, one element: kept units are scaled by 1/(1-rate), dropped ones are 0. The same
 * function serves forward (v = x) and backward (v = dy). */
SD_HD float nn_dropout_apply(float v, int keep, float rate) {
    return keep ? v * (1.0f / (1.0f - rate)) : 0.0f;
}

/* Cross-entropy of one row of logits z[0..C) against label lab, as -log softmax(z)[lab] computed from
 * the logits (max-shifted, sum in double): no log of a rounded probability. lab must be in [0,C). */
SD_HD float nn_xent_row_loss(const float *z, int C, int lab) {
    float m = z[0];
    for (int k = 1; k < C; k++) if (z[k] > m) m = z[k];
    double s = 0;
    for (int k = 0; k < C; k++) s += (double)expf(z[k] - m);
    return (float)(log(s) - (double)(z[lab] - m));
}

/* Gradient of the batch-mean softmax cross-entropy w.r.t. one logit: (prob - [k == label]) / n,
 * with inv_n = 1.0f / n computed once. */
SD_HD float nn_xent_grad(float prob, int is_label, float inv_n) {
    return (prob - (is_label ? 1.0f : 0.0f)) * inv_n;
}

/* Sigmoid, and the binary cross-entropy of a logit z against a target t in [0,1], computed from the logit
 * (max(z,0) - z t + log(1 + exp(-|z|))): no log of a rounded probability. */
SD_HD float nn_sigmoid(float z) { return 1.0f / (1.0f + expf(-z)); }
SD_HD double nn_bce_logit(float z, float t) {
    double zd = z;
    return (zd > 0 ? zd : 0) - zd * t + log1p(exp(-fabs(zd)));
}

/* Loss scaling (nn/train.c): *x *= s; returns 1 if the result is inf or NaN. Read from the bits, so no
 * finite-math assumption of a compiler can drop the test. */
SD_HD int nn_scale_elem(float *x, float s) {
    float v = *x * s;
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    *x = v;
    return (u & 0x7f800000u) == 0x7f800000u;
}

#endif
