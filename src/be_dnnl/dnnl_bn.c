/* dnnl_bn — batch normalisation: oneDNN's primitives, and the host path for training on nChw16c. */
#include "be_dnnl/dnnl_be.h"

int dn_bn_prepare(dnnl_ctx *c, nn_op *op, bn_priv *p) {
    dnnl_memory_desc_t d, v;
    if (op->fmt_in != op->fmt_out)
        return sd_err(SD_ERROR, "internal: dnnl batchnorm with input layout %d, output %d", op->fmt_in, op->fmt_out);
    SD_TRY(dn_md_tag(&d, 4, (dnnl_dims_t){op->n, op->c, op->h, op->w}, dn_fmt_tag(op->fmt_out)));
    SD_TRY(dn_md_tag(&v, 1, (dnnl_dims_t){op->c}, dnnl_a));
    const unsigned ss = dnnl_use_scale | dnnl_use_shift;
    dnnl_batch_normalization_desc_t ft, fi, bd;
    dnnl_primitive_desc_t ftp, fip, bp;
    DNNL_CHECK(dnnl_batch_normalization_forward_desc_init(&ft, dnnl_forward_training, &d, op->eps, ss));
    DNNL_CHECK(dnnl_batch_normalization_forward_desc_init(&fi, dnnl_forward_inference, &d, op->eps,
                                                          ss | dnnl_use_global_stats));
    DNNL_CHECK(dnnl_batch_normalization_backward_desc_init(&bd, dnnl_backward, &d, &d, op->eps, ss));
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
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_SHIFT, &v));   /* oneDNN 2.6 requires it; backward does not read it */
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_DIFF_SRC, &d));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_DIFF_SCALE, &v));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_DIFF_SHIFT, &v));
    return dn_grow(&c->tmp, &c->tmp_bytes, 2 * ((sizeof(float) * op->c + ALIGN - 1) / ALIGN * ALIGN));
}

/* Training batch norm on nChw16c runs on the host: oneDNN 2.6's blocked-layout training batch norm is far
 * slower than its plain nchw one (docs/performance.md), and the 16-channel block is exactly one vector here.
 * Same arithmetic as the reference (nn/host_ops.c): two passes, per-channel sums in double. Padded channels
 * (C not a multiple of 16) are written 0. */
static void bn16_forward_train(int threads, const nn_op *op, float *y, float *mean_out, float *var_out,
                               const float *x, const float *gamma, const float *beta) {
    const int C = op->c, N = op->n, CB = (C + 15) / 16;
    const size_t HW = (size_t)op->h * op->w;
    const double M = (double)N * HW;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int cb = 0; cb < CB; cb++) {
        double s[16] = {0}, q[16] = {0};
        float mean[16], sc[16], sh[16];
        for (int i = 0; i < N; i++) {
            const float *p = x + ((size_t)i * CB + cb) * HW * 16;
            float a[16] = {0};
            for (size_t k = 0; k < HW; k++)
                #pragma omp simd
                for (int l = 0; l < 16; l++) a[l] += p[k * 16 + l];
            for (int l = 0; l < 16; l++) s[l] += a[l];
        }
        for (int l = 0; l < 16; l++) mean[l] = (float)(s[l] / M);
        for (int i = 0; i < N; i++) {
            const float *p = x + ((size_t)i * CB + cb) * HW * 16;
            float a[16] = {0};
            for (size_t k = 0; k < HW; k++)
                #pragma omp simd
                for (int l = 0; l < 16; l++) { const float d = p[k * 16 + l] - mean[l]; a[l] += d * d; }
            for (int l = 0; l < 16; l++) q[l] += a[l];
        }
        for (int l = 0; l < 16; l++) {
            const int ch = cb * 16 + l;
            if (ch >= C) { sc[l] = sh[l] = mean[l] = 0; continue; }
            const double var = q[l] / M, invstd = 1.0 / sqrt(var + op->eps);
            mean_out[ch] = mean[l];
            var_out[ch] = (float)var;
            sc[l] = (float)(gamma[ch] * invstd);
            sh[l] = (float)(beta[ch] - mean[l] * gamma[ch] * invstd);
        }
        for (int i = 0; i < N; i++) {
            const float *p = x + ((size_t)i * CB + cb) * HW * 16;
            float *o = y + ((size_t)i * CB + cb) * HW * 16;
            for (size_t k = 0; k < HW; k++)
                #pragma omp simd
                for (int l = 0; l < 16; l++) o[k * 16 + l] = p[k * 16 + l] * sc[l] + sh[l];
        }
    }
}

static void bn16_backward(int threads, const nn_op *op, float *dx, float *dgamma, float *dbeta, const float *dy,
                          const float *x, const float *gamma, const float *saved) {
    const int C = op->c, N = op->n, CB = (C + 15) / 16;
    const size_t HW = (size_t)op->h * op->w;
    const double M = (double)N * HW;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int cb = 0; cb < CB; cb++) {
        float mean[16], invstd[16], a[16], b[16], cc[16];
        double sdy[16] = {0}, sdyx[16] = {0};
        for (int l = 0; l < 16; l++) {
            const int ch = cb * 16 + l;
            mean[l] = ch < C ? saved[ch] : 0.0f;
            invstd[l] = ch < C ? (float)(1.0 / sqrt((double)saved[C + ch] + op->eps)) : 0.0f;
        }
        for (int i = 0; i < N; i++) {
            const float *p = x + ((size_t)i * CB + cb) * HW * 16, *g = dy + ((size_t)i * CB + cb) * HW * 16;
            float u[16] = {0}, v[16] = {0};
            for (size_t k = 0; k < HW; k++)
                #pragma omp simd
                for (int l = 0; l < 16; l++) {
                    u[l] += g[k * 16 + l];
                    v[l] += g[k * 16 + l] * ((p[k * 16 + l] - mean[l]) * invstd[l]);
                }
            for (int l = 0; l < 16; l++) { sdy[l] += u[l]; sdyx[l] += v[l]; }
        }
        for (int l = 0; l < 16; l++) {
            const int ch = cb * 16 + l;
            if (ch >= C) { a[l] = b[l] = cc[l] = 0; continue; }
            dbeta[ch] += (float)sdy[l];
            dgamma[ch] += (float)sdyx[l];
            /* dx = g * invstd / M * (M dy - sum dy - xhat * sum dy xhat) = a dy - b - c xhat */
            const double k0 = gamma[ch] * invstd[l] / M;
            a[l] = (float)(k0 * M);
            b[l] = (float)(k0 * sdy[l]);
            cc[l] = (float)(k0 * sdyx[l]);
        }
        if (!dx) continue;
        for (int i = 0; i < N; i++) {
            const float *p = x + ((size_t)i * CB + cb) * HW * 16, *g = dy + ((size_t)i * CB + cb) * HW * 16;
            float *d = dx + ((size_t)i * CB + cb) * HW * 16;
            for (size_t k = 0; k < HW; k++)
                #pragma omp simd
                for (int l = 0; l < 16; l++)
                    d[k * 16 + l] = a[l] * g[k * 16 + l] - b[l] - cc[l] * ((p[k * 16 + l] - mean[l]) * invstd[l]);
        }
    }
}

int dn_batchnorm_forward(nn_backend *be, const nn_op *op, float *y, void *ws, const float *x,
                         const float *gamma, const float *beta, float *running, int train) {
    NEED_PRIV(op);
    dnnl_ctx *c = CTX(be);
    bn_priv *p = PRIV(op, bn_priv);
    const int C = op->c;
    dn_threads_on(c);
    if (!train) {
        void *args[6] = {(void *)x, y, (void *)gamma, (void *)beta, running, running + C};
        SD_TRY(dn_step_run(c, &p->fwd_inf, args));
        return dn_strm_wait(c);
    }
    float *mean = ws, *var = (float *)ws + C;
    dn_touched(c, running, 2 * sizeof(float) * C);
    if (op->fmt_in == NN_FMT_NCHW16C && !getenv("SD_DNNL_BN16")) {   /* env: oneDNN's, for comparisons */
        bn16_forward_train(c->threads, op, y, mean, var, x, gamma, beta);
    } else {
        void *args[6] = {(void *)x, y, (void *)gamma, (void *)beta, mean, var};
        SD_TRY(dn_step_run(c, &p->fwd_train, args));
        SD_TRY(dn_strm_wait(c));
    }
    const double M = (double)op->n * op->h * op->w, mom = op->momentum;
    for (int k = 0; k < C; k++) {
        double unbiased = M > 1 ? (double)var[k] * M / (M - 1) : var[k];
        running[k] = (float)((1.0 - mom) * running[k] + mom * mean[k]);
        running[C + k] = (float)((1.0 - mom) * running[C + k] + mom * unbiased);
    }
    return 0;
}

int dn_batchnorm_backward(nn_backend *be, const nn_op *op, float *dx, float *dgamma, float *dbeta,
                          const float *dy, const float *x, const float *gamma, const void *ws) {
    NEED_PRIV(op);
    dnnl_ctx *c = CTX(be);
    const int C = op->c;
    if (op->fmt_in == NN_FMT_NCHW16C && !getenv("SD_DNNL_BN16")) {
        bn16_backward(c->threads, op, dx, dgamma, dbeta, dy, x, gamma, ws);
        return 0;
    }
    const size_t vb = (sizeof(float) * C + ALIGN - 1) / ALIGN * ALIGN;
    if (!dx)
        SD_TRY(dn_grow(&c->tmp, &c->tmp_bytes, 2 * vb + sizeof(float) * nn_fmt_elems(op->fmt_in, op->n, C, op->h, op->w)));
    dn_threads_on(c);
    float *dsc = c->tmp, *dsh = (float *)((char *)c->tmp + vb);
    void *dxs = dx ? (void *)dx : (char *)c->tmp + 2 * vb;
    const float *mean = ws, *var = (const float *)ws + C;
    void *args[9] = {(void *)x, (void *)mean, (void *)var, (void *)dy, (void *)gamma, (void *)gamma, dxs, dsc, dsh};
    SD_TRY(dn_step_run(c, &PRIV(op, bn_priv)->bwd, args));
    SD_TRY(dn_strm_wait(c));
    for (int k = 0; k < C; k++) { dgamma[k] += dsc[k]; dbeta[k] += dsh[k]; }
    return 0;
}
