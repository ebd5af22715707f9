/* host_ops — the reference arithmetic of the operations that have no library primitive on the CPU:
 * dropout (with the shared mask function), softmax cross-entropy and the optimizer updates, over host
 * memory. The reference back-end is made of these; the oneDNN back-end calls the same code, so the two
 * drop the same units and update parameters bit for bit alike. */
#include "nn/host_ops.h"
#include "nn/kernels.h"
#include "core/err.h"

#include <math.h>

static size_t numel_out(const nn_op *op) { return (size_t)op->n * op->oc * op->oh * op->ow; }

int nn_host_dropout_forward(int threads, const nn_op *op, float *y, void *ws, const float *x,
                               uint64_t seed) {
    uint8_t *mask = ws;
    const long n = (long)numel_out(op);
    const float scale = 1.0f / (1.0f - op->rate);
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (long i = 0; i < n; i++) {
        mask[i] = (uint8_t)nn_dropout_keep(seed, (uint64_t)i, op->rate);
        y[i] = mask[i] ? x[i] * scale : 0.0f;
    }
    return 0;
}

int nn_host_dropout_backward(int threads, const nn_op *op, float *dx, const float *dy, const void *ws) {
    const uint8_t *mask = ws;
    const long n = (long)numel_out(op);
    const float scale = 1.0f / (1.0f - op->rate);
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (long i = 0; i < n; i++) dx[i] = mask[i] ? dy[i] * scale : 0.0f;
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

