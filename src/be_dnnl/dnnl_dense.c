/* dnnl_dense — dense layers as oneDNN matmuls on plain row-major buffers. Under bf16 the matmuls read bf16
 * copies of x, W and dy (converted at each call) and write fp32 y, dx and dW. */
#include "be_dnnl/dnnl_be.h"

/* ---- dense (matmul on plain row-major buffers; the transposes are strides) ----------------------------- */

int dn_dense_prepare(dnnl_ctx *c, nn_op *op, dense_priv *p) {
    const dnnl_dim_t N = op->n, C = op->c, O = op->oc;
    const dnnl_data_type_t t = c->cdt;
    dnnl_memory_desc_t x, wt, b, y, dy, w, dx, dyt, dw, xu, wu, dyu;
    SD_TRY(dn_md_strides_dt(&x, 2, (dnnl_dims_t){N, C}, t, (dnnl_dims_t){C, 1}));
    SD_TRY(dn_md_strides_dt(&wt, 2, (dnnl_dims_t){C, O}, t, (dnnl_dims_t){1, C}));   /* W^T: [C][O] view of [O][C] */
    SD_TRY(dn_md_strides(&b, 2, (dnnl_dims_t){1, O}, (dnnl_dims_t){O, 1}));
    SD_TRY(dn_md_strides(&y, 2, (dnnl_dims_t){N, O}, (dnnl_dims_t){O, 1}));
    SD_TRY(dn_md_strides_dt(&dy, 2, (dnnl_dims_t){N, O}, t, (dnnl_dims_t){O, 1}));
    SD_TRY(dn_md_strides_dt(&w, 2, (dnnl_dims_t){O, C}, t, (dnnl_dims_t){C, 1}));
    SD_TRY(dn_md_strides(&dx, 2, (dnnl_dims_t){N, C}, (dnnl_dims_t){C, 1}));
    SD_TRY(dn_md_strides_dt(&dyt, 2, (dnnl_dims_t){O, N}, t, (dnnl_dims_t){1, O}));  /* dy^T */
    SD_TRY(dn_md_strides(&dw, 2, (dnnl_dims_t){O, C}, (dnnl_dims_t){C, 1}));
    xu = dx; wu = dw; dyu = y;                                                        /* the caller's fp32 */
    dn_desc md;
    dnnl_primitive_desc_t pd;
    /* y = x W^T + b */
    SD_TRY(dn_matmul_desc(&md, &x, &wt, &b, &y));
    SD_TRY(dn_pd_new(c, &pd, &md, 0, NULL));
    SD_TRY(dn_step_make(c, &p->fwd, pd));
    dn_note_impl(c, "matmul", p->fwd.prim);
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_SRC, &x));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_WEIGHTS, &wt));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_BIAS, &b));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_DST, &y));
    if (t != dnnl_f32) {   /* fp32's backward calls dnnl_sgemm (dn_dense_backward) */
        /* dx = dy W */
        SD_TRY(dn_matmul_desc(&md, &dy, &w, NULL, &dx));
        SD_TRY(dn_pd_new(c, &pd, &md, 0, NULL));
        SD_TRY(dn_step_make(c, &p->bwd_d, pd));
        SD_TRY(dn_step_arg(c, &p->bwd_d, DNNL_ARG_SRC, &dy));
        SD_TRY(dn_step_arg(c, &p->bwd_d, DNNL_ARG_WEIGHTS, &w));
        SD_TRY(dn_step_arg(c, &p->bwd_d, DNNL_ARG_DST, &dx));
        /* dW += dy^T x  (sum post-op: accumulate) */
        SD_TRY(dn_matmul_desc(&md, &dyt, &x, NULL, &dw));
        SD_TRY(dn_pd_new(c, &pd, &md, 1, NULL));
        SD_TRY(dn_step_make(c, &p->bwd_w, pd));
        SD_TRY(dn_step_arg(c, &p->bwd_w, DNNL_ARG_SRC, &dyt));
        SD_TRY(dn_step_arg(c, &p->bwd_w, DNNL_ARG_WEIGHTS, &x));
        SD_TRY(dn_step_arg(c, &p->bwd_w, DNNL_ARG_DST, &dw));
    }
    /* temporaries, one layout for forward and backward: the zero bias, then the bf16 copies (none under f32,
     * where the stages are off and the matmuls read the caller's buffers) */
    size_t top = 0;
    p->off_zero_b = dn_bump(&top, sizeof(float) * op->oc);
    SD_TRY(dn_stage_make(c, &p->s_x, &xu, &x, 1, 0, &top));
    SD_TRY(dn_stage_make(c, &p->s_w, &wu, &w, 1, 0, &top));
    SD_TRY(dn_stage_make(c, &p->s_dy, &dyu, &dy, 1, 0, &top));
    SD_TRY(dn_grow(&c->tmp, &c->tmp_bytes, top));
    return 0;
}

void dn_dense_release(dense_priv *p) {
    dn_step_destroy(&p->fwd); dn_step_destroy(&p->bwd_d); dn_step_destroy(&p->bwd_w);
    dn_stage_destroy(&p->s_x); dn_stage_destroy(&p->s_w); dn_stage_destroy(&p->s_dy);
}

int dn_dense_forward(nn_backend *be, const nn_op *op, float *y, const float *x, const float *w,
                     const float *b) {
    NEED_PRIV(op);
    dnnl_ctx *c = CTX(be);
    dense_priv *p = PRIV(op, dense_priv);
    dn_threads_on(c);
    void *bias = (void *)b, *xs, *ws;
    if (!b) { bias = (char *)c->tmp + p->off_zero_b; memset(bias, 0, sizeof(float) * op->oc); }
    SD_TRY(dn_stage_in(c, &p->s_x, x, &xs));
    SD_TRY(dn_stage_in(c, &p->s_w, w, &ws));
    void *args[4] = {xs, ws, bias, y};
    SD_TRY(dn_step_run(c, &p->fwd, args));
    return dn_strm_wait(c);
}

int dn_dense_backward(nn_backend *be, const nn_op *op, float *dx, float *dw, float *db,
                      const float *dy, const float *x, const float *w) {
    NEED_PRIV(op);
    dnnl_ctx *c = CTX(be);
    dense_priv *p = PRIV(op, dense_priv);
    dn_threads_on(c);
    const int N = op->n, C = op->c, O = op->oc;
    /* fp32: the two products by dnnl_sgemm on the caller's buffers (dy^T read in place); with the row-wise db below,
     * mnist_mlp's dense backward took 12-16% less time than through the matmul primitives */
    const int f32 = c->cdt == dnnl_f32;
    void *dys = (void *)dy, *xs = (void *)x;
    if (f32) {
        if (dnnl_sgemm('T', 'N', O, C, N, 1.0f, dy, O, x, C, 1.0f, dw, C) != dnnl_success)   /* dW += dy^T x */
            return sd_err(SD_EBACKEND, "oneDNN: dnnl_sgemm failed in a dense backward");
    } else {
        SD_TRY(dn_stage_in(c, &p->s_dy, dy, &dys));
        SD_TRY(dn_stage_in(c, &p->s_x, x, &xs));
        void *a1[3] = {dys, xs, dw};
        SD_TRY(dn_step_run(c, &p->bwd_w, a1));
    }
    if (db) {   /* from the fp32 dy: column sums over runs of 64 columns, row by row (a strided walk down each
                 * column was 10x slower), each sum in the same order as a column's */
        const int T = (O + 63) / 64;
        #pragma omp parallel for num_threads(c->threads) schedule(static)
        for (int t = 0; t < T; t++) {
            const int o0 = 64 * t, m = O - o0 < 64 ? O - o0 : 64;
            float s[64] = {0};
            for (int i = 0; i < N; i++) {
                const float *r = dy + (size_t)i * O + o0;
                for (int k = 0; k < m; k++) s[k] += r[k];
            }
            for (int k = 0; k < m; k++) db[o0 + k] += s[k];
        }
    }
    if (dx && f32) {   /* dx = dy W */
        if (dnnl_sgemm('N', 'N', N, C, O, 1.0f, dy, O, w, C, 0.0f, dx, C) != dnnl_success)
            return sd_err(SD_EBACKEND, "oneDNN: dnnl_sgemm failed in a dense backward");
    } else if (dx) {
        void *ws;
        SD_TRY(dn_stage_in(c, &p->s_w, w, &ws));
        void *a2[3] = {dys, ws, dx};
        SD_TRY(dn_step_run(c, &p->bwd_d, a2));
    }
    return dn_strm_wait(c);
}
