/* dnnl_pool — max and average pooling (global average pooling is an average pooling over the whole plane). */
#include "be_dnnl/dnnl_be.h"

/* ---- pooling: in nChw16c when the graph hands either side over so (nchw otherwise); the workspace is
 * oneDNN's, opaque to the graph ------------------------------------------------------------------------ */

int dn_pool_descs(const nn_op *op, dnnl_prop_kind_t prop, dn_desc *fd, dn_desc *bd) {
    const dnnl_alg_kind_t alg = op->kind == NN_OP_MAXPOOL ? dnnl_pooling_max : dnnl_pooling_avg_exclude_padding;
    const dnnl_dims_t xd = {op->n, op->c, op->h, op->w}, yd = {op->n, op->oc, op->oh, op->ow};
    dnnl_dims_t st = {op->sh, op->sw}, k = {op->kh, op->kw}, pl = {op->ph, op->pw}, pr;
    int prh = 0, prw = 0;
    SD_TRY(dn_pad_r(op->h, op->kh, op->sh, op->ph, op->oh, &prh));
    SD_TRY(dn_pad_r(op->w, op->kw, op->sw, op->pw, op->ow, &prw));
    pr[0] = prh; pr[1] = prw;
    dnnl_memory_desc_t x, y;
    const int fmt = op->fmt_in != NN_FMT_NCHW ? op->fmt_in : op->fmt_out;   /* the blocked one if either is */
    SD_TRY(dn_md_tag(&x, 4, xd, dn_fmt_tag(fmt)));
    SD_TRY(dn_md_tag(&y, 4, yd, dn_fmt_tag(fmt)));
    SD_TRY(dn_pool_fwd_desc(fd, prop, alg, &x, &y, st, k, pl, pr));
    if (bd) SD_TRY(dn_pool_bwd_desc(bd, alg, &x, &y, st, k, pl, pr));
    return 0;
}

int dn_pool_prepare(dnnl_ctx *c, nn_op *op, pool_priv *p) {
    dn_desc fd, bd;
    dnnl_primitive_desc_t fpd, bpd;
    SD_TRY(dn_pool_descs(op, dnnl_forward_training, &fd, &bd));
    SD_TRY(dn_pd_new(c, &fpd, &fd, 0, NULL));
    int rc = dn_pd_new(c, &bpd, &bd, 0, fpd);
    if (rc < 0) { dnnl_primitive_desc_destroy(fpd); return rc; }
    dnnl_memory_desc_t xm, ym, xu, yu;
    SD_TRY(dn_md_query(fpd, dnnl_query_src_md, 0, &xm));
    SD_TRY(dn_md_query(fpd, dnnl_query_dst_md, 0, &ym));
    SD_TRY(dn_md_tag(&xu, 4, (dnnl_dims_t){op->n, op->c, op->h, op->w}, dn_fmt_tag(op->fmt_in)));
    SD_TRY(dn_md_tag(&yu, 4, (dnnl_dims_t){op->n, op->oc, op->oh, op->ow}, dn_fmt_tag(op->fmt_out)));
    size_t ftop = 0, btop = 0;
    SD_TRY(dn_stage_make(c, &p->f_x, &xu, &xm, 1, 0, &ftop));
    SD_TRY(dn_stage_make(c, &p->f_y, &yu, &ym, 0, 0, &ftop));
    SD_TRY(dn_stage_make(c, &p->b_dy, &yu, &ym, 1, 0, &btop));
    SD_TRY(dn_stage_make(c, &p->b_dx, &xu, &xm, 0, 0, &btop));
    SD_TRY(dn_grow(&c->tmp, &c->tmp_bytes, ftop > btop ? ftop : btop));
    if (op->kind != NN_OP_MAXPOOL) {   /* average pooling: no workspace */
        SD_TRY(dn_step_make(c, &p->fwd, fpd));
        SD_TRY(dn_step_make(c, &p->bwd, bpd));
        SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_SRC, &xm));
        SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_DST, &ym));
        SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_DIFF_DST, &ym));
        SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_DIFF_SRC, &xm));
        return 0;
    }
    dnnl_memory_desc_t wsmd;
    SD_TRY(dn_md_query(fpd, dnnl_query_workspace_md, 0, &wsmd));
    p->ws_bytes = dn_md_size(&wsmd);
    SD_TRY(dn_step_make(c, &p->fwd, fpd));
    SD_TRY(dn_step_make(c, &p->bwd, bpd));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_SRC, &xm));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_DST, &ym));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_WORKSPACE, &wsmd));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_DIFF_DST, &ym));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_WORKSPACE, &wsmd));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_DIFF_SRC, &xm));
    dn_desc id;
    dnnl_primitive_desc_t ipd;
    SD_TRY(dn_pool_descs(op, dnnl_forward_inference, &id, NULL));
    SD_TRY(dn_pd_new(c, &ipd, &id, 0, NULL));
    SD_TRY(dn_step_make(c, &p->fwd_inf, ipd));
    SD_TRY(dn_step_arg(c, &p->fwd_inf, DNNL_ARG_SRC, &xm));
    SD_TRY(dn_step_arg(c, &p->fwd_inf, DNNL_ARG_DST, &ym));
    return 0;
}

int dn_maxpool_forward(nn_backend *be, const nn_op *op, float *y, void *ws, const float *x) {
    NEED_PRIV(op);
    dnnl_ctx *c = CTX(be);
    pool_priv *p = PRIV(op, pool_priv);
    dn_threads_on(c);
    void *xs, *ys = dn_stage_out(c, &p->f_y, y);
    SD_TRY(dn_stage_in(c, &p->f_x, x, &xs));
    void *args[3] = {xs, ys, ws};
    SD_TRY(dn_step_run(c, ws ? &p->fwd : &p->fwd_inf, args));
    SD_TRY(dn_stage_out_done(c, &p->f_y, y));
    return dn_strm_wait(c);
}

int dn_maxpool_backward(nn_backend *be, const nn_op *op, float *dx, const float *dy,
                        const float *x, const float *y, const void *ws) {
    (void)x; (void)y;
    NEED_PRIV(op);
    dnnl_ctx *c = CTX(be);
    pool_priv *p = PRIV(op, pool_priv);
    dn_threads_on(c);
    void *dys, *dxs = dn_stage_out(c, &p->b_dx, dx);
    SD_TRY(dn_stage_in(c, &p->b_dy, dy, &dys));
    void *args[3] = {dys, (void *)ws, dxs};
    SD_TRY(dn_step_run(c, &p->bwd, args));
    SD_TRY(dn_stage_out_done(c, &p->b_dx, dx));
    return dn_strm_wait(c);
}

int dn_avgpool_forward(nn_backend *be, const nn_op *op, float *y, const float *x) {
    NEED_PRIV(op);
    dnnl_ctx *c = CTX(be);
    pool_priv *p = PRIV(op, pool_priv);
    dn_threads_on(c);
    void *xs, *ys = dn_stage_out(c, &p->f_y, y);
    SD_TRY(dn_stage_in(c, &p->f_x, x, &xs));
    void *args[2] = {xs, ys};
    SD_TRY(dn_step_run(c, &p->fwd, args));
    SD_TRY(dn_stage_out_done(c, &p->f_y, y));
    return dn_strm_wait(c);
}

int dn_avgpool_backward(nn_backend *be, const nn_op *op, float *dx, const float *dy) {
    NEED_PRIV(op);
    dnnl_ctx *c = CTX(be);
    pool_priv *p = PRIV(op, pool_priv);
    dn_threads_on(c);
    void *dys, *dxs = dn_stage_out(c, &p->b_dx, dx);
    SD_TRY(dn_stage_in(c, &p->b_dy, dy, &dys));
    void *args[2] = {dys, dxs};
    SD_TRY(dn_step_run(c, &p->bwd, args));
    SD_TRY(dn_stage_out_done(c, &p->b_dx, dx));
    return dn_strm_wait(c);
}
