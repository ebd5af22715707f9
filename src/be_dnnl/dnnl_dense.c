/* dnnl_dense — dense layers as oneDNN matmuls on plain row-major buffers. */
#include "be_dnnl/dnnl_be.h"

/* ---- dense (matmul on plain row-major buffers; the transposes are strides) ----------------------------- */

int dn_dense_prepare(dnnl_ctx *c, nn_op *op, dense_priv *p) {
    const dnnl_dim_t N = op->n, C = op->c, O = op->oc;
    dnnl_memory_desc_t x, wt, b, y, dy, w, dx, dyt, dw;
    SD_TRY(dn_md_strides(&x, 2, (dnnl_dims_t){N, C}, (dnnl_dims_t){C, 1}));
    SD_TRY(dn_md_strides(&wt, 2, (dnnl_dims_t){C, O}, (dnnl_dims_t){1, C}));   /* W^T: [C][O] view of [O][C] */
    SD_TRY(dn_md_strides(&b, 2, (dnnl_dims_t){1, O}, (dnnl_dims_t){O, 1}));
    SD_TRY(dn_md_strides(&y, 2, (dnnl_dims_t){N, O}, (dnnl_dims_t){O, 1}));
    dy = y;
    SD_TRY(dn_md_strides(&w, 2, (dnnl_dims_t){O, C}, (dnnl_dims_t){C, 1}));
    dx = x;
    SD_TRY(dn_md_strides(&dyt, 2, (dnnl_dims_t){O, N}, (dnnl_dims_t){1, O}));  /* dy^T */
    dw = w;
    dnnl_matmul_desc_t md;
    dnnl_primitive_desc_t pd;
    /* y = x W^T + b */
    DNNL_CHECK(dnnl_matmul_desc_init(&md, &x, &wt, &b, &y));
    SD_TRY(dn_pd_new(c, &pd, &md, 0, NULL));
    SD_TRY(dn_step_make(c, &p->fwd, pd));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_SRC, &x));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_WEIGHTS, &wt));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_BIAS, &b));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_DST, &y));
    /* dx = dy W */
    DNNL_CHECK(dnnl_matmul_desc_init(&md, &dy, &w, NULL, &dx));
    SD_TRY(dn_pd_new(c, &pd, &md, 0, NULL));
    SD_TRY(dn_step_make(c, &p->bwd_d, pd));
    SD_TRY(dn_step_arg(c, &p->bwd_d, DNNL_ARG_SRC, &dy));
    SD_TRY(dn_step_arg(c, &p->bwd_d, DNNL_ARG_WEIGHTS, &w));
    SD_TRY(dn_step_arg(c, &p->bwd_d, DNNL_ARG_DST, &dx));
    /* dW += dy^T x  (sum post-op: accumulate) */
    DNNL_CHECK(dnnl_matmul_desc_init(&md, &dyt, &x, NULL, &dw));
    SD_TRY(dn_pd_new(c, &pd, &md, 1, NULL));
    SD_TRY(dn_step_make(c, &p->bwd_w, pd));
    SD_TRY(dn_step_arg(c, &p->bwd_w, DNNL_ARG_SRC, &dyt));
    SD_TRY(dn_step_arg(c, &p->bwd_w, DNNL_ARG_WEIGHTS, &x));
    SD_TRY(dn_step_arg(c, &p->bwd_w, DNNL_ARG_DST, &dw));
    size_t top = 0;
    p->off_zero_b = dn_bump(&top, sizeof(float) * op->oc);
    SD_TRY(dn_grow(&c->tmp, &c->tmp_bytes, top));
    return 0;
}

int dn_dense_forward(nn_backend *be, const nn_op *op, float *y, const float *x, const float *w,
                     const float *b) {
    NEED_PRIV(op);
    dnnl_ctx *c = CTX(be);
    dense_priv *p = PRIV(op, dense_priv);
    dn_threads_on(c);
    void *bias = (void *)b;
    if (!b) { bias = (char *)c->tmp + p->off_zero_b; memset(bias, 0, sizeof(float) * op->oc); }
    void *args[4] = {(void *)x, (void *)w, bias, y};
    SD_TRY(dn_step_run(c, &p->fwd, args));
    return dn_strm_wait(c);
}

int dn_dense_backward(nn_backend *be, const nn_op *op, float *dx, float *dw, float *db,
                      const float *dy, const float *x, const float *w) {
    NEED_PRIV(op);
    dnnl_ctx *c = CTX(be);
    dense_priv *p = PRIV(op, dense_priv);
    dn_threads_on(c);
    void *a1[3] = {(void *)dy, (void *)x, dw};
    SD_TRY(dn_step_run(c, &p->bwd_w, a1));
    if (db) {
        const int N = op->n, O = op->oc;
        #pragma omp parallel for num_threads(c->threads) schedule(static)
        for (int o = 0; o < O; o++) {
            float s = 0;
            for (int i = 0; i < N; i++) s += dy[(size_t)i * O + o];
            db[o] += s;
        }
    }
    if (dx) {
        void *a2[3] = {(void *)dy, (void *)w, dx};
        SD_TRY(dn_step_run(c, &p->bwd_d, a2));
    }
    return dn_strm_wait(c);
}
