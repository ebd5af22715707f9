/* dnnl_recurrent — the recurrent ops: embedding and repeat on the host arithmetic, GRU and LSTM on the host
 * (dnnl_rnn.c) or, with SD_DNNL_RNN_PRIMITIVE set, through oneDNN's RNN primitives. */
#include "be_dnnl/dnnl_be.h"

/* ---- recurrent ops: embedding on the host arithmetic; GRU and LSTM on the host (dnnl_rnn.c), or with
 * SD_DNNL_RNN_PRIMITIVE set when the op is prepared, through oneDNN's lbr_gru / vanilla_lstm primitives
 * (kept to compare against; docs/performance.md) ---------------------------------------------------------- */

/* Primitive path: the canonical layout (nn/backend.h: W_x [G][H][F], W_h [G][H][H], b_x, b_h; GRU gates r, z, n)
 * is converted at each call into oneDNN's user layouts (ldigo weights, ldgo bias; lbr_gru gates u=z, r, o=n plus
 * the extra bias b_hn; LSTM one bias b_x + b_h), then reordered into the primitive's chosen layouts. Sequences
 * are batch-major [N][T][F] = oneDNN's ntc. Initial states are zero (no src_iter). The last-state variant
 * keeps the whole dst_layer in the op workspace (backward needs it) and copies the last step out. */

static const int gru_perm[3] = {1, 0, 2};   /* oneDNN gate -> canonical gate: u=z, r, o=n */
static int rnn_gate(const nn_op *op, int gd) { return op->kind == NN_OP_GRU ? gru_perm[gd] : gd; }

int dn_rnn_prepare(dnnl_ctx *c, nn_op *op, rnn_priv *p) {
    const int lstm = op->kind == NN_OP_LSTM;
    p->prim = getenv("SD_DNNL_RNN_PRIMITIVE") != NULL;   /* read once: forward and backward must agree */
    if (!p->prim) return 0;
    const dnnl_dim_t N = op->n, T = op->c, F = op->w, H = op->units;
    p->G = lstm ? 4 : 3;
    p->GB = 4;
    dnnl_memory_desc_t src, dst, wl, wi, b, wla, wia, wlu, wiu;
    SD_TRY(dn_md_tag(&src, 3, (dnnl_dims_t){T, N, F}, dnnl_ntc));
    SD_TRY(dn_md_tag(&dst, 3, (dnnl_dims_t){T, N, H}, dnnl_ntc));
    SD_TRY(dn_md_tag(&wlu, 5, (dnnl_dims_t){1, 1, F, p->G, H}, dnnl_ldigo));
    SD_TRY(dn_md_tag(&wiu, 5, (dnnl_dims_t){1, 1, H, p->G, H}, dnnl_ldigo));
    SD_TRY(dn_md_tag(&wla, 5, (dnnl_dims_t){1, 1, F, p->G, H}, dnnl_format_tag_any));
    SD_TRY(dn_md_tag(&wia, 5, (dnnl_dims_t){1, 1, H, p->G, H}, dnnl_format_tag_any));
    SD_TRY(dn_md_tag(&b, 4, (dnnl_dims_t){1, 1, p->GB, H}, dnnl_ldgo));
    wl = wla; wi = wia;
    dn_desc fd, bd;
    const dnnl_rnn_direction_t dir = dnnl_unidirectional_left2right;
    SD_TRY(dn_rnn_fwd_desc(&fd, lstm, dnnl_forward_training, dir, &src, &wl, &wi, &b, &dst));
    SD_TRY(dn_rnn_bwd_desc(&bd, lstm, dnnl_backward, dir, &src, &wl, &wi, &b, &dst, &src, &wla, &wia, &b, &dst));
    dnnl_primitive_desc_t fpd, bpd;
    SD_TRY(dn_pd_new(c, &fpd, &fd, 0, NULL));
    int rc = dn_pd_new(c, &bpd, &bd, 0, fpd);
    if (rc < 0) { dnnl_primitive_desc_destroy(fpd); return rc; }
    dnnl_memory_desc_t fwl, fwi, wsmd, bwl, bwi, dwl, dwi;
    SD_TRY(dn_md_query(fpd, dnnl_query_weights_md, 0, &fwl));
    SD_TRY(dn_md_query(fpd, dnnl_query_weights_md, 1, &fwi));
    SD_TRY(dn_md_query(fpd, dnnl_query_workspace_md, 0, &wsmd));
    SD_TRY(dn_md_query(bpd, dnnl_query_weights_md, 0, &bwl));
    SD_TRY(dn_md_query(bpd, dnnl_query_weights_md, 1, &bwi));
    SD_TRY(dn_md_query(bpd, dnnl_query_diff_weights_md, 0, &dwl));
    SD_TRY(dn_md_query(bpd, dnnl_query_diff_weights_md, 1, &dwi));
    p->ws_dnnl = (dn_md_size(&wsmd) + ALIGN - 1) / ALIGN * ALIGN;
    p->bytes_dwl = dn_md_size(&dwl);
    p->bytes_dwi = dn_md_size(&dwi);
    rc = dn_step_make(c, &p->fwd, fpd);
    if (rc < 0) { dnnl_primitive_desc_destroy(bpd); return rc; }
    SD_TRY(dn_step_make(c, &p->bwd, bpd));
    /* forward: SRC_LAYER WEIGHTS_LAYER WEIGHTS_ITER BIAS DST_LAYER WORKSPACE */
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_SRC_LAYER, &src));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_WEIGHTS_LAYER, &fwl));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_WEIGHTS_ITER, &fwi));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_BIAS, &b));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_DST_LAYER, &dst));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_WORKSPACE, &wsmd));
    /* backward: + DIFF_DST_LAYER, DIFF_SRC_LAYER, DIFF_WEIGHTS_LAYER, DIFF_WEIGHTS_ITER, DIFF_BIAS */
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_SRC_LAYER, &src));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_WEIGHTS_LAYER, &bwl));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_WEIGHTS_ITER, &bwi));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_BIAS, &b));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_DST_LAYER, &dst));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_DIFF_DST_LAYER, &dst));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_WORKSPACE, &wsmd));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_DIFF_SRC_LAYER, &src));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_DIFF_WEIGHTS_LAYER, &dwl));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_DIFF_WEIGHTS_ITER, &dwi));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_DIFF_BIAS, &b));
    size_t top = 0;
    p->off_wl = dn_bump(&top, dn_md_size(&wlu));
    p->off_wi = dn_bump(&top, dn_md_size(&wiu));
    p->off_b = dn_bump(&top, dn_md_size(&b));
    p->off_dwl = dn_bump(&top, dn_md_size(&wlu));
    p->off_dwi = dn_bump(&top, dn_md_size(&wiu));
    p->off_db = dn_bump(&top, dn_md_size(&b));
    p->off_ddst = dn_bump(&top, sizeof(float) * (size_t)(N * T * H));
    p->off_dsrc = dn_bump(&top, sizeof(float) * (size_t)(N * T * F));
    SD_TRY(dn_stage_make(c, &p->f_wl, &wlu, &fwl, 1, 0, &top));
    SD_TRY(dn_stage_make(c, &p->f_wi, &wiu, &fwi, 1, 0, &top));
    SD_TRY(dn_stage_make(c, &p->b_wl, &wlu, &bwl, 1, 0, &top));
    SD_TRY(dn_stage_make(c, &p->b_wi, &wiu, &bwi, 1, 0, &top));
    SD_TRY(dn_stage_make(c, &p->b_dwl, &wlu, &dwl, 0, 0, &top));
    SD_TRY(dn_stage_make(c, &p->b_dwi, &wiu, &dwi, 0, 0, &top));
    SD_TRY(dn_grow(&c->tmp, &c->tmp_bytes, top));
    return 0;
}

size_t dn_rnn_ws_bytes(const nn_op *op) {
    if (!op->priv) return 0;         /* prepare() first */
    if (!PRIV(op, rnn_priv)->prim) return nn_host_rnn_ws_bytes(op);
    size_t dst = op->ret_seq ? 0 : sizeof(float) * (size_t)op->n * op->c * op->units;
    return PRIV(op, rnn_priv)->ws_dnnl + dst;
}

void dn_rnn_release(rnn_priv *p) {
    dn_step_destroy(&p->fwd); dn_step_destroy(&p->bwd);
    dn_stage_destroy(&p->f_wl); dn_stage_destroy(&p->f_wi); dn_stage_destroy(&p->b_wl); dn_stage_destroy(&p->b_wi);
    dn_stage_destroy(&p->b_dwl); dn_stage_destroy(&p->b_dwi);
}

/* Canonical weights -> oneDNN user layouts in ctx->tmp. */
static void rnn_to_dnnl(dnnl_ctx *c, const nn_op *op, const rnn_priv *p, const float *w) {
    const int F = op->w, H = op->units, G = p->G, GH = G * H;
    const float *Wx = w, *Wh = Wx + (size_t)GH * F, *bx = Wh + (size_t)GH * H, *bh = bx + GH;
    float *wl = (float *)((char *)c->tmp + p->off_wl), *wi = (float *)((char *)c->tmp + p->off_wi);
    float *b = (float *)((char *)c->tmp + p->off_b);
    for (int gd = 0; gd < G; gd++) {
        const int g = rnn_gate(op, gd);
        for (int h = 0; h < H; h++) {
            const float *rx = Wx + ((size_t)g * H + h) * F, *rh = Wh + ((size_t)g * H + h) * H;
            for (int f = 0; f < F; f++) wl[((size_t)f * G + gd) * H + h] = rx[f];
            for (int k = 0; k < H; k++) wi[((size_t)k * G + gd) * H + h] = rh[k];
        }
    }
    if (op->kind == NN_OP_LSTM) {
        for (int k = 0; k < GH; k++) b[k] = bx[k] + bh[k];
    } else {
        for (int gd = 0; gd < 2; gd++) {
            const int g = gru_perm[gd];
            for (int h = 0; h < H; h++) b[gd * H + h] = bx[g * H + h] + bh[g * H + h];
        }
        for (int h = 0; h < H; h++) { b[2 * H + h] = bx[2 * H + h]; b[3 * H + h] = bh[2 * H + h]; }
    }
}

/* dw (canonical) += oneDNN user-layout gradients in ctx->tmp. */
static void rnn_from_dnnl(dnnl_ctx *c, const nn_op *op, const rnn_priv *p, float *dw) {
    const int F = op->w, H = op->units, G = p->G, GH = G * H;
    float *dWx = dw, *dWh = dWx + (size_t)GH * F, *dbx = dWh + (size_t)GH * H, *dbh = dbx + GH;
    const float *wl = (float *)((char *)c->tmp + p->off_dwl), *wi = (float *)((char *)c->tmp + p->off_dwi);
    const float *b = (float *)((char *)c->tmp + p->off_db);
    /* With one time step the recurrent weights only ever see h0 = 0: their gradient is exactly 0. oneDNN
     * 2.6's LSTM backward returns h_1 x da there instead (measured; its GRU is right): skip it. */
    const int skip_wh = op->c == 1;
    for (int gd = 0; gd < G; gd++) {
        const int g = rnn_gate(op, gd);
        for (int h = 0; h < H; h++) {
            float *rx = dWx + ((size_t)g * H + h) * F, *rh = dWh + ((size_t)g * H + h) * H;
            for (int f = 0; f < F; f++) rx[f] += wl[((size_t)f * G + gd) * H + h];
            if (skip_wh) continue;
            for (int k = 0; k < H; k++) rh[k] += wi[((size_t)k * G + gd) * H + h];
        }
    }
    if (op->kind == NN_OP_LSTM) {
        for (int k = 0; k < GH; k++) { dbx[k] += b[k]; dbh[k] += b[k]; }
    } else {
        for (int gd = 0; gd < 2; gd++) {
            const int g = gru_perm[gd];
            for (int h = 0; h < H; h++) { dbx[g * H + h] += b[gd * H + h]; dbh[g * H + h] += b[gd * H + h]; }
        }
        for (int h = 0; h < H; h++) { dbx[2 * H + h] += b[2 * H + h]; dbh[2 * H + h] += b[3 * H + h]; }
    }
}

int dn_rnn_forward(nn_backend *be, const nn_op *op, float *y, void *ws, const float *x, const float *w,
                   int train) {
    NEED_PRIV(op);
    dnnl_ctx *c = CTX(be);
    rnn_priv *p = PRIV(op, rnn_priv);
    dn_threads_on(c);
    if (!p->prim) {
        SD_TRY(dn_grow(&c->tmp, &c->tmp_bytes, dnnl_rnn_host_fwd_tmp_bytes(op, c->threads)));
        return dnnl_rnn_host_forward(c->threads, op, y, train ? ws : NULL, x, w, c->tmp);
    }
    rnn_to_dnnl(c, op, p, w);   /* training: ws also keeps the output sequence for backward */
    void *wl, *wi;
    SD_TRY(dn_stage_in(c, &p->f_wl, (char *)c->tmp + p->off_wl, &wl));
    SD_TRY(dn_stage_in(c, &p->f_wi, (char *)c->tmp + p->off_wi, &wi));
    float *dst = op->ret_seq ? y : (float *)((char *)ws + p->ws_dnnl);
    void *args[6] = {(void *)x, wl, wi, (char *)c->tmp + p->off_b, dst, ws};
    SD_TRY(dn_step_run(c, &p->fwd, args));
    SD_TRY(dn_strm_wait(c));
    if (!op->ret_seq) {
        const int T = op->c, H = op->units;
        for (int i = 0; i < op->n; i++)
            memcpy(y + (size_t)i * H, dst + ((size_t)i * T + T - 1) * H, sizeof(float) * H);
    }
    return 0;
}

int dn_rnn_backward(nn_backend *be, const nn_op *op, float *dx, float *dw, const float *dy, const float *x,
                    const float *w, const float *y, const void *ws) {
    NEED_PRIV(op);
    dnnl_ctx *c = CTX(be);
    rnn_priv *p = PRIV(op, rnn_priv);
    const int T = op->c, H = op->units;
    dn_threads_on(c);
    if (!p->prim) {
        SD_TRY(dn_grow(&c->tmp, &c->tmp_bytes, dnnl_rnn_host_bwd_tmp_bytes(op, c->threads)));
        return dnnl_rnn_host_backward(c->threads, op, dx, dw, dy, x, w, ws, c->tmp);
    }
    rnn_to_dnnl(c, op, p, w);
    void *wl, *wi;
    SD_TRY(dn_stage_in(c, &p->b_wl, (char *)c->tmp + p->off_wl, &wl));
    SD_TRY(dn_stage_in(c, &p->b_wi, (char *)c->tmp + p->off_wi, &wi));
    const float *dst = op->ret_seq ? y : (const float *)((const char *)ws + p->ws_dnnl);
    const float *ddst = dy;
    if (!op->ret_seq) {   /* only the last step has a gradient */
        float *z = (float *)((char *)c->tmp + p->off_ddst);
        memset(z, 0, sizeof(float) * (size_t)op->n * T * H);
        for (int i = 0; i < op->n; i++) memcpy(z + ((size_t)i * T + T - 1) * H, dy + (size_t)i * H, sizeof(float) * H);
        ddst = z;
    }
    void *dwl = dn_stage_out(c, &p->b_dwl, (char *)c->tmp + p->off_dwl);
    void *dwi = dn_stage_out(c, &p->b_dwi, (char *)c->tmp + p->off_dwi);
    void *db = (char *)c->tmp + p->off_db;
    memset(dwl, 0, p->bytes_dwl);
    memset(dwi, 0, p->bytes_dwi);
    memset(db, 0, sizeof(float) * (size_t)p->GB * H);
    void *dsrc = dx ? (void *)dx : (char *)c->tmp + p->off_dsrc;
    void *args[11] = {(void *)x, wl, wi, (char *)c->tmp + p->off_b, (void *)dst, (void *)ddst, (void *)ws, dsrc,
                      dwl, dwi, db};
    SD_TRY(dn_step_run(c, &p->bwd, args));
    SD_TRY(dn_stage_out_done(c, &p->b_dwl, (char *)c->tmp + p->off_dwl));
    SD_TRY(dn_stage_out_done(c, &p->b_dwi, (char *)c->tmp + p->off_dwi));
    SD_TRY(dn_strm_wait(c));
    rnn_from_dnnl(c, op, p, dw);
    return 0;
}

int dn_repeat_forward(nn_backend *be, const nn_op *op, float *y, const float *x) {
    return nn_host_repeat_forward(CTX(be)->threads, op, y, x);
}
int dn_repeat_backward(nn_backend *be, const nn_op *op, float *dx, const float *dy) {
    return nn_host_repeat_backward(CTX(be)->threads, op, dx, dy);
}

int dn_embedding_forward(nn_backend *be, const nn_op *op, float *y, const int32_t *ids, const float *table) {
    return nn_host_embedding_forward(CTX(be)->threads, op, y, ids, table);
}
/* A small table (babi_rnn's 36 x 50) with many rows of dy: each thread sums its own rows into a table of its own,
 * then the tables are added. The host op splits the columns (any vocabulary), so each thread walked every row of
 * dy for its half of it: babi_rnn's 3.5 MB, 0.36 ms of a two-thread step. */
int dn_embedding_backward(nn_backend *be, const nn_op *op, float *dtable, const float *dy,
                          const int32_t *ids) {
    const int nt = CTX(be)->threads;
    const size_t nw = (size_t)op->vocab * op->units;
    const long rows = (long)op->n * op->c;
    if (nt < 2 || nw > 16384 || rows < 1024) return nn_host_embedding_backward(nt, op, dtable, dy, ids);
    float *part = calloc((size_t)nt * nw, sizeof(float));
    if (!part) return sd_err(SD_ENOMEM, "dnnl: cannot allocate an embedding's gradient tables");
    #pragma omp parallel num_threads(nt)
    {
        const int th = omp_get_thread_num(), n = omp_get_num_threads();
        nn_host_embedding_add_rows(op, part + (size_t)th * nw, dy, ids, rows * th / n, rows * (th + 1) / n, 0,
                                   op->units);
        #pragma omp barrier
        #pragma omp for schedule(static)
        for (size_t k = 0; k < nw; k++) {
            float sum = 0.0f;
            for (int t = 0; t < n; t++) sum += part[(size_t)t * nw + k];
            dtable[k] += sum;
        }
    }
    free(part);
    return 0;
}
