/* dnnl_eltwise — the element-wise and graph ops: relu (oneDNN eltwise), the residual add (oneDNN binary), and
 * concatenation (host copies between layouts), dropout, the losses and the optimizer on the host. */
#include "be_dnnl/dnnl_be.h"

/* ---- relu (eltwise on a flat view; backward from the output, as ref) ------------------------------------ */

static size_t numel_out(const nn_op *op) { return (size_t)op->n * op->oc * op->oh * op->ow; }

int dn_relu_prepare(dnnl_ctx *c, nn_op *op, relu_priv *p) {
    dnnl_memory_desc_t d;
    if (op->fmt_in != op->fmt_out)
        return sd_err(SD_ERROR, "internal: dnnl relu with input layout %d, output %d", op->fmt_in, op->fmt_out);
    if (op->fmt_out != NN_FMT_NCHW)   /* the graph's blocked layout; padded channels stay 0 */
        SD_TRY(dn_md_tag(&d, 4, (dnnl_dims_t){op->n, op->oc, op->oh, op->ow}, dn_fmt_tag(op->fmt_out)));
    else
        SD_TRY(dn_md_tag(&d, 1, (dnnl_dims_t){(dnnl_dim_t)numel_out(op)}, dnnl_a));
    dn_desc fd, bd;
    dnnl_primitive_desc_t fpd, bpd;
    SD_TRY(dn_eltwise_fwd_desc(&fd, dnnl_forward_training, dnnl_eltwise_relu_use_dst_for_bwd, &d, 0.0f, 0.0f));
    SD_TRY(dn_eltwise_bwd_desc(&bd, dnnl_eltwise_relu_use_dst_for_bwd, &d, &d, 0.0f, 0.0f));
    SD_TRY(dn_pd_new(c, &fpd, &fd, 0, NULL));
    int rc = dn_pd_new(c, &bpd, &bd, 0, fpd);
    if (rc < 0) { dnnl_primitive_desc_destroy(fpd); return rc; }
    SD_TRY(dn_step_make(c, &p->fwd, fpd));
    SD_TRY(dn_step_make(c, &p->bwd, bpd));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_SRC, &d));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_DST, &d));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_DIFF_DST, &d));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_DST, &d));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_DIFF_SRC, &d));
    return 0;
}

int dn_relu_forward(nn_backend *be, const nn_op *op, float *y, const float *x) {
    NEED_PRIV(op);
    dnnl_ctx *c = CTX(be);
    dn_threads_on(c);
    void *args[2] = {(void *)x, y};
    SD_TRY(dn_step_run(c, &PRIV(op, relu_priv)->fwd, args));
    return dn_strm_wait(c);
}

int dn_relu_mask(nn_backend *be, size_t n, float *dy, const float *y) {
    return nn_host_relu_mask(CTX(be)->threads, n, dy, y);
}

int dn_relu_backward(nn_backend *be, const nn_op *op, float *dx, const float *dy, const float *y) {
    NEED_PRIV(op);
    dnnl_ctx *c = CTX(be);
    dn_threads_on(c);
    void *args[3] = {(void *)dy, (void *)y, dx};
    SD_TRY(dn_step_run(c, &PRIV(op, relu_priv)->bwd, args));
    return dn_strm_wait(c);
}

/* ---- dropout, loss, optimizer: no oneDNN primitive; the reference's arithmetic, same threads ---------- */

int dn_dropout_forward(nn_backend *be, const nn_op *op, float *y, void *ws, const float *x,
                       uint64_t seed) {
    return nn_host_dropout_forward(CTX(be)->threads, op, y, ws, x, seed);   /* either layout (nn_fmt) */
}

int dn_dropout_backward(nn_backend *be, const nn_op *op, float *dx, const float *dy, const void *ws) {
    return nn_host_dropout_backward(CTX(be)->threads, op, dx, dy, ws);
}

int dn_softmax_xent_forward(nn_backend *be, const nn_op *op, float *prob, float *loss,
                            const float *logits, const int32_t *labels) {
    return nn_host_softmax_xent_forward(CTX(be)->threads, op, prob, loss, logits, labels);
}

int dn_softmax_xent_backward(nn_backend *be, const nn_op *op, float *dlogits, const float *prob,
                             const int32_t *labels) {
    return nn_host_softmax_xent_backward(CTX(be)->threads, op, dlogits, prob, labels);
}

int dn_optimizer_step(nn_backend *be, const nn_optim *o, float *p, const float *g, float *state,
                      size_t n, long step) {
    dn_touched(CTX(be), p, n * sizeof(float));
    return nn_host_optimizer_step(CTX(be)->threads, o, p, g, state, n, step);
}

/* add: a binary primitive on flat views (in place when y == a) */
int dn_add_prepare(dnnl_ctx *c, nn_op *op, add_priv *p) {
    dnnl_memory_desc_t d;
    SD_TRY(dn_md_tag(&d, 1, (dnnl_dims_t){(dnnl_dim_t)numel_out(op)}, dnnl_a));
    dn_desc bd;
    dnnl_primitive_desc_t pd;
    SD_TRY(dn_binary_desc(&bd, dnnl_binary_add, &d, &d, &d));
    SD_TRY(dn_pd_new(c, &pd, &bd, 0, NULL));
    SD_TRY(dn_step_make(c, &p->fwd, pd));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_SRC_0, &d));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_SRC_1, &d));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_DST, &d));
    return 0;
}

int dn_add_forward(nn_backend *be, const nn_op *op, float *y, const float *a, const float *b) {
    dnnl_ctx *c = CTX(be);
    if (!op->priv || op->kind != NN_OP_ADD)   /* the graph also sums gradients of any layer's shape */
        return nn_host_add(c->threads, numel_out(op), y, a, b);
    dn_threads_on(c);
    void *args[3] = {(void *)a, (void *)b, y};
    SD_TRY(dn_step_run(c, &PRIV(op, add_priv)->fwd, args));
    return dn_strm_wait(c);
}

/* concat: host copies between the graph's layouts (input k in op->in_fmt[k], the output in op->fmt_out; blocked
 * only with every part a whole number of blocks, dnnl_layout_ok; nhwc any), into a concat slab's view (op->out_cs
 * channels), skipping an input already in place (op->cat_inplace). Forward copies the parts into y, backward the
 * slices of dy back out (a NULL dx is skipped); the side only read is passed without its const. */
static void cat_part(const nn_op *op, float *y, float *part, int k, int off, int i, int backward) {
    const size_t hw = (size_t)op->h * op->w, C = (size_t)op->in_c[k];
    const size_t cs = op->out_cs ? (size_t)op->out_cs : (size_t)op->oc;
    const int yf = op->fmt_out, pf = op->in_fmt[k];
    if (yf == NN_FMT_NHWC || pf == NN_FMT_NHWC) {   /* position by position: C channels at a stride of cs */
        for (size_t q = 0; q < hw; q++) {
            float *a = y + nn_fmt_at(yf, cs, hw, (size_t)i, (size_t)off, q);
            float *b = part + nn_fmt_at(pf, C, hw, (size_t)i, 0, q);
            if (yf == pf) { memcpy(backward ? b : a, backward ? a : b, sizeof(float) * C); continue; }
            const size_t sa = yf == NN_FMT_NHWC ? 1 : hw, sb = pf == NN_FMT_NHWC ? 1 : hw;   /* one is nchw */
            for (size_t l = 0; l < C; l++) {
                if (backward) b[l * sb] = a[l * sa];
                else a[l * sa] = b[l * sb];
            }
        }
        return;
    }
    /* the graph uses one blocked layout: B channels a block on whichever side is blocked */
    const int yb = yf != NN_FMT_NCHW, pb = pf != NN_FMT_NCHW;
    const size_t B = nn_fmt_block(yb ? yf : pf, C);
    float *p = part + (size_t)i * C * hw;   /* a whole number of blocks when blocked: no padding */
    float *row = y + nn_fmt_at(op->fmt_out, cs, hw, (size_t)i, (size_t)off, 0);   /* blocked: off is whole blocks */
    if (yb == pb) {   /* the same layout: one run */
        memcpy(backward ? p : row, backward ? row : p, sizeof(float) * C * hw);
        return;
    }
    /* one side blocked, the other nchw: block cb of the blocked side, its B planes on the other */
    float *blk0 = yb ? row : p, *pl0 = yb ? p : row;
    const int to_blk = yb != backward;   /* writing the blocked side */
    for (size_t cb = 0; cb < C / B; cb++) {
        float *blk = blk0 + cb * hw * B, *pl = pl0 + cb * B * hw;
        for (size_t q = 0; q < hw; q++)
            for (size_t l = 0; l < B; l++) {
                if (to_blk) blk[q * B + l] = pl[l * hw + q];
                else pl[l * hw + q] = blk[q * B + l];
            }
    }
}

static void cat_walk(int threads, const nn_op *op, float *y, float *const *parts, int backward) {
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int i = 0; i < op->n; i++)
        for (int k = 0, off = 0; k < op->ninputs; off += op->in_c[k++])
            if (parts[k] && !(k == 0 && op->cat_inplace)) cat_part(op, y, parts[k], k, off, i, backward);
}

int dn_concat_forward(nn_backend *be, const nn_op *op, float *y, const float *const *x) {
    cat_walk(CTX(be)->threads, op, y, (float *const *)x, 0);
    return 0;
}

int dn_concat_backward(nn_backend *be, const nn_op *op, float *const *dx, const float *dy) {
    cat_walk(CTX(be)->threads, op, (float *)dy, dx, 1);
    return 0;
}

int dn_sigmoid_bce_forward(nn_backend *be, const nn_op *op, float *prob, float *loss, const float *logits,
                           const float *targets) {
    return nn_host_sigmoid_bce_forward(CTX(be)->threads, op, prob, loss, logits, targets);
}

int dn_sigmoid_bce_backward(nn_backend *be, const nn_op *op, float *dlogits, const float *prob,
                            const float *targets) {
    return nn_host_sigmoid_bce_backward(CTX(be)->threads, op, dlogits, prob, targets);
}
