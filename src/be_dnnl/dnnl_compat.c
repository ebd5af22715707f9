/* dnnl_compat — oneDNN 2.x and 3.x behind one interface (dnnl_compat.h says what differs). */
#include "be_dnnl/dnnl_be.h"

#if DN_V3

/* ---- oneDNN 3.x ------------------------------------------------------------------------------------------------ */

/* Memory descriptor handles made since the last dn_md_scope_end (per thread: a back-end is set up by one). */
static _Thread_local struct { dnnl_memory_desc_t *v; int n, cap; } made;

static int md_record(dnnl_memory_desc_t md) {
    if (made.n == made.cap) {
        int cap = made.cap ? 2 * made.cap : 64;
        dnnl_memory_desc_t *v = realloc(made.v, sizeof *v * (size_t)cap);
        if (!v) { dnnl_memory_desc_destroy(md); return sd_err(SD_ENOMEM, "dnnl: out of memory"); }
        made.v = v;
        made.cap = cap;
    }
    made.v[made.n++] = md;
    return 0;
}

void dn_md_scope_end(void) {
    for (int i = 0; i < made.n; i++) dnnl_memory_desc_destroy(made.v[i]);
    free(made.v);
    made.v = NULL;
    made.n = made.cap = 0;
}

void dn_md_free(dnnl_memory_desc_t *md) {
    if (*md) dnnl_memory_desc_destroy(*md);
    *md = NULL;
}

int dn_md_tag_kept(dnnl_memory_desc_t *md, int nd, const dnnl_dims_t dims, dnnl_data_type_t dt,
                   dnnl_format_tag_t tag) {
    *md = NULL;
    DNNL_CHECK(dnnl_memory_desc_create_with_tag(md, nd, dims, dt, tag));
    return 0;
}

int dn_md_tag_dt(dnnl_memory_desc_t *md, int nd, const dnnl_dims_t dims, dnnl_data_type_t dt, dnnl_format_tag_t tag) {
    SD_TRY(dn_md_tag_kept(md, nd, dims, dt, tag));
    return md_record(*md);
}

int dn_md_strides_dt(dnnl_memory_desc_t *md, int nd, const dnnl_dims_t dims, dnnl_data_type_t dt,
                     const dnnl_dims_t strides) {
    *md = NULL;
    DNNL_CHECK(dnnl_memory_desc_create_with_strides(md, nd, dims, dt, strides));
    return md_record(*md);
}

int dn_md_query(const_dnnl_primitive_desc_t pd, dnnl_query_t what, int idx, dnnl_memory_desc_t *out) {
    *out = NULL;
    const_dnnl_memory_desc_t q = dnnl_primitive_desc_query_md(pd, what, idx);
    if (!q) return 0;   /* none: size 0 */
    DNNL_CHECK(dnnl_memory_desc_clone(out, q));
    return md_record(*out);
}

size_t dn_md_size(const dnnl_memory_desc_t *md) { return *md ? dnnl_memory_desc_get_size(*md) : 0; }

int dn_md_equal(const dnnl_memory_desc_t *a, const dnnl_memory_desc_t *b) {
    if (!*a || !*b) return !*a && !*b;
    return dnnl_memory_desc_equal(*a, *b);
}

dnnl_status_t dn_memory_create(dnnl_memory_t *mem, const dnnl_memory_desc_t *md, dnnl_engine_t eng) {
    return dnnl_memory_create(mem, *md, eng, DNNL_MEMORY_NONE);
}

dnnl_status_t dn_memory_set(dnnl_memory_t mem, void *handle, dnnl_stream_t strm) {
    (void)strm;
    return dnnl_memory_set_data_handle(mem, handle);
}

dnnl_status_t dn_post_ops_sum(dnnl_post_ops_t po) { return dnnl_post_ops_append_sum(po, 1.0f, 0, dnnl_data_type_undef); }
dnnl_status_t dn_post_ops_relu(dnnl_post_ops_t po) { return dnnl_post_ops_append_eltwise(po, dnnl_eltwise_relu, 0.0f, 0.0f); }

dnnl_status_t dn_reorder_pd_create(dnnl_primitive_desc_t *pd, const dnnl_memory_desc_t *from,
                                   const dnnl_memory_desc_t *to, dnnl_engine_t eng,
                                   const_dnnl_primitive_attr_t attr) {
    return dnnl_reorder_primitive_desc_create(pd, *from, eng, *to, eng, attr);
}

/* the handle a description records (NULL for an absent tensor) */
static const_dnnl_memory_desc_t H(const dnnl_memory_desc_t *md) { return md ? *md : NULL; }
static void dims2(dnnl_dims_t out, const dnnl_dims_t in) { out[0] = in[0]; out[1] = in[1]; }
static void geo(dn_desc *d, const dnnl_dims_t st, const dnnl_dims_t k, const dnnl_dims_t pl, const dnnl_dims_t pr) {
    dims2(d->st, st);
    if (k) dims2(d->k, k);
    dims2(d->pl, pl);
    dims2(d->pr, pr);
}

static dn_desc *start(dn_desc *d, dn_kind kind) {
    memset(d, 0, sizeof *d);
    d->kind = kind;
    return d;
}

int dn_conv_fwd_desc(dn_desc *d, dnnl_prop_kind_t prop, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *src,
                     const dnnl_memory_desc_t *w, const dnnl_memory_desc_t *b, const dnnl_memory_desc_t *dst,
                     const dnnl_dims_t st, const dnnl_dims_t pl, const dnnl_dims_t pr) {
    start(d, DN_CONV_FWD);
    d->prop = prop; d->alg = alg;
    d->md[0] = H(src); d->md[1] = H(w); d->md[2] = H(b); d->md[3] = H(dst);
    geo(d, st, NULL, pl, pr);
    return 0;
}

int dn_conv_bwd_data_desc(dn_desc *d, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *diff_src,
                          const dnnl_memory_desc_t *w, const dnnl_memory_desc_t *diff_dst, const dnnl_dims_t st,
                          const dnnl_dims_t pl, const dnnl_dims_t pr) {
    start(d, DN_CONV_BWD_D);
    d->alg = alg;
    d->md[0] = H(diff_src); d->md[1] = H(w); d->md[2] = H(diff_dst);
    geo(d, st, NULL, pl, pr);
    return 0;
}

int dn_conv_bwd_weights_desc(dn_desc *d, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *src,
                             const dnnl_memory_desc_t *diff_w, const dnnl_memory_desc_t *diff_b,
                             const dnnl_memory_desc_t *diff_dst, const dnnl_dims_t st, const dnnl_dims_t pl,
                             const dnnl_dims_t pr) {
    start(d, DN_CONV_BWD_W);
    d->alg = alg;
    d->md[0] = H(src); d->md[1] = H(diff_w); d->md[2] = H(diff_b); d->md[3] = H(diff_dst);
    geo(d, st, NULL, pl, pr);
    return 0;
}

int dn_matmul_desc(dn_desc *d, const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *w,
                   const dnnl_memory_desc_t *b, const dnnl_memory_desc_t *dst) {
    start(d, DN_MATMUL);
    d->md[0] = H(src); d->md[1] = H(w); d->md[2] = H(b); d->md[3] = H(dst);
    return 0;
}

int dn_pool_fwd_desc(dn_desc *d, dnnl_prop_kind_t prop, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *src,
                     const dnnl_memory_desc_t *dst, const dnnl_dims_t st, const dnnl_dims_t k, const dnnl_dims_t pl,
                     const dnnl_dims_t pr) {
    start(d, DN_POOL_FWD);
    d->prop = prop; d->alg = alg;
    d->md[0] = H(src); d->md[1] = H(dst);
    geo(d, st, k, pl, pr);
    return 0;
}

int dn_pool_bwd_desc(dn_desc *d, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *diff_src,
                     const dnnl_memory_desc_t *diff_dst, const dnnl_dims_t st, const dnnl_dims_t k,
                     const dnnl_dims_t pl, const dnnl_dims_t pr) {
    start(d, DN_POOL_BWD);
    d->alg = alg;
    d->md[0] = H(diff_src); d->md[1] = H(diff_dst);
    geo(d, st, k, pl, pr);
    return 0;
}

int dn_eltwise_fwd_desc(dn_desc *d, dnnl_prop_kind_t prop, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *data,
                        float alpha, float beta) {
    start(d, DN_ELT_FWD);
    d->prop = prop; d->alg = alg; d->a = alpha; d->b = beta;
    d->md[0] = H(data);
    return 0;
}

int dn_eltwise_bwd_desc(dn_desc *d, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *diff_data,
                        const dnnl_memory_desc_t *data, float alpha, float beta) {
    start(d, DN_ELT_BWD);
    d->alg = alg; d->a = alpha; d->b = beta;
    d->md[0] = H(diff_data); d->md[1] = H(data);
    return 0;
}

int dn_binary_desc(dn_desc *d, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *src0, const dnnl_memory_desc_t *src1,
                   const dnnl_memory_desc_t *dst) {
    start(d, DN_BINARY);
    d->alg = alg;
    d->md[0] = H(src0); d->md[1] = H(src1); d->md[2] = H(dst);
    return 0;
}

int dn_bn_fwd_desc(dn_desc *d, dnnl_prop_kind_t prop, const dnnl_memory_desc_t *data, float eps, unsigned flags) {
    start(d, DN_BN_FWD);
    d->prop = prop; d->a = eps; d->flags = flags;
    d->md[0] = H(data);
    return 0;
}

int dn_bn_bwd_desc(dn_desc *d, dnnl_prop_kind_t prop, const dnnl_memory_desc_t *diff_data,
                   const dnnl_memory_desc_t *data, float eps, unsigned flags) {
    start(d, DN_BN_BWD);
    d->prop = prop; d->a = eps; d->flags = flags;
    d->md[0] = H(diff_data); d->md[1] = H(data);
    return 0;
}

int dn_rnn_fwd_desc(dn_desc *d, int lstm, dnnl_prop_kind_t prop, dnnl_rnn_direction_t dir,
                    const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *wl, const dnnl_memory_desc_t *wi,
                    const dnnl_memory_desc_t *b, const dnnl_memory_desc_t *dst) {
    start(d, lstm ? DN_LSTM_FWD : DN_GRU_FWD);
    d->prop = prop; d->dir = dir;
    d->md[0] = H(src); d->md[1] = H(wl); d->md[2] = H(wi); d->md[3] = H(b); d->md[4] = H(dst);
    return 0;
}

int dn_rnn_bwd_desc(dn_desc *d, int lstm, dnnl_prop_kind_t prop, dnnl_rnn_direction_t dir,
                    const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *wl, const dnnl_memory_desc_t *wi,
                    const dnnl_memory_desc_t *b, const dnnl_memory_desc_t *dst, const dnnl_memory_desc_t *diff_src,
                    const dnnl_memory_desc_t *diff_wl, const dnnl_memory_desc_t *diff_wi,
                    const dnnl_memory_desc_t *diff_b, const dnnl_memory_desc_t *diff_dst) {
    start(d, lstm ? DN_LSTM_BWD : DN_GRU_BWD);
    d->prop = prop; d->dir = dir;
    d->md[0] = H(src); d->md[1] = H(wl); d->md[2] = H(wi); d->md[3] = H(b); d->md[4] = H(dst);
    d->md[5] = H(diff_src); d->md[6] = H(diff_wl); d->md[7] = H(diff_wi); d->md[8] = H(diff_b);
    d->md[9] = H(diff_dst);
    return 0;
}

dnnl_status_t dn_pd_create(dnnl_primitive_desc_t *pd, const dn_desc *d, const_dnnl_primitive_attr_t attr,
                           dnnl_engine_t eng, const_dnnl_primitive_desc_t hint) {
    const const_dnnl_memory_desc_t *m = d->md;
    const dnnl_dims_t no_dil = {0, 0};
    switch (d->kind) {
    case DN_CONV_FWD:
        return dnnl_convolution_forward_primitive_desc_create(pd, eng, d->prop, d->alg, m[0], m[1], m[2], m[3], d->st,
                                                              no_dil, d->pl, d->pr, attr);
    case DN_CONV_BWD_D:
        return dnnl_convolution_backward_data_primitive_desc_create(pd, eng, d->alg, m[0], m[1], m[2], d->st, no_dil,
                                                                    d->pl, d->pr, hint, attr);
    case DN_CONV_BWD_W:
        return dnnl_convolution_backward_weights_primitive_desc_create(pd, eng, d->alg, m[0], m[1], m[2], m[3], d->st,
                                                                       no_dil, d->pl, d->pr, hint, attr);
    case DN_MATMUL:
        return dnnl_matmul_primitive_desc_create(pd, eng, m[0], m[1], m[2], m[3], attr);
    case DN_POOL_FWD:
        return dnnl_pooling_forward_primitive_desc_create(pd, eng, d->prop, d->alg, m[0], m[1], d->st, d->k, no_dil,
                                                          d->pl, d->pr, attr);
    case DN_POOL_BWD:
        return dnnl_pooling_backward_primitive_desc_create(pd, eng, d->alg, m[0], m[1], d->st, d->k, no_dil, d->pl,
                                                           d->pr, hint, attr);
    case DN_ELT_FWD:
        return dnnl_eltwise_forward_primitive_desc_create(pd, eng, d->prop, d->alg, m[0], m[0], d->a, d->b, attr);
    case DN_ELT_BWD:
        return dnnl_eltwise_backward_primitive_desc_create(pd, eng, d->alg, m[0], m[0], m[1], d->a, d->b, hint, attr);
    case DN_BINARY:
        return dnnl_binary_primitive_desc_create(pd, eng, d->alg, m[0], m[1], m[2], attr);
    case DN_BN_FWD:
        return dnnl_batch_normalization_forward_primitive_desc_create(pd, eng, d->prop, m[0], m[0], d->a, d->flags,
                                                                      attr);
    case DN_BN_BWD:
        return dnnl_batch_normalization_backward_primitive_desc_create(pd, eng, d->prop, m[0], m[0], m[1], d->a,
                                                                       d->flags, hint, attr);
    case DN_LSTM_FWD:
        return dnnl_lstm_forward_primitive_desc_create(pd, eng, d->prop, d->dir, m[0], NULL, NULL, m[1], m[2], NULL,
                                                       NULL, m[3], m[4], NULL, NULL, 0, attr);
    case DN_LSTM_BWD:
        return dnnl_lstm_backward_primitive_desc_create(pd, eng, d->prop, d->dir, m[0], NULL, NULL, m[1], m[2], NULL,
                                                        NULL, m[3], m[4], NULL, NULL, m[5], NULL, NULL, m[6], m[7],
                                                        NULL, NULL, m[8], m[9], NULL, NULL, 0, hint, attr);
    case DN_GRU_FWD:
        return dnnl_lbr_gru_forward_primitive_desc_create(pd, eng, d->prop, d->dir, m[0], NULL, m[1], m[2], m[3], m[4],
                                                          NULL, 0, attr);
    case DN_GRU_BWD:
        return dnnl_lbr_gru_backward_primitive_desc_create(pd, eng, d->prop, d->dir, m[0], NULL, m[1], m[2], m[3],
                                                           m[4], NULL, m[5], NULL, m[6], m[7], m[8], m[9], NULL, 0,
                                                           hint, attr);
    }
    return dnnl_invalid_arguments;
}

#else

/* ---- oneDNN 2.x ------------------------------------------------------------------------------------------------ */

void dn_md_scope_end(void) {}
void dn_md_free(dnnl_memory_desc_t *md) { (void)md; }

int dn_md_tag_dt(dnnl_memory_desc_t *md, int nd, const dnnl_dims_t dims, dnnl_data_type_t dt, dnnl_format_tag_t tag) {
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(md, nd, dims, dt, tag));
    return 0;
}

int dn_md_tag_kept(dnnl_memory_desc_t *md, int nd, const dnnl_dims_t dims, dnnl_data_type_t dt,
                   dnnl_format_tag_t tag) {
    return dn_md_tag_dt(md, nd, dims, dt, tag);
}

int dn_md_strides_dt(dnnl_memory_desc_t *md, int nd, const dnnl_dims_t dims, dnnl_data_type_t dt,
                     const dnnl_dims_t strides) {
    DNNL_CHECK(dnnl_memory_desc_init_by_strides(md, nd, dims, dt, strides));
    return 0;
}

int dn_md_query(const_dnnl_primitive_desc_t pd, dnnl_query_t what, int idx, dnnl_memory_desc_t *out) {
    const dnnl_memory_desc_t *q = dnnl_primitive_desc_query_md(pd, what, idx);
    if (q) *out = *q;
    else memset(out, 0, sizeof *out);
    return 0;
}

size_t dn_md_size(const dnnl_memory_desc_t *md) { return dnnl_memory_desc_get_size(md); }
int dn_md_equal(const dnnl_memory_desc_t *a, const dnnl_memory_desc_t *b) { return dnnl_memory_desc_equal(a, b); }

dnnl_status_t dn_memory_create(dnnl_memory_t *mem, const dnnl_memory_desc_t *md, dnnl_engine_t eng) {
    return dnnl_memory_create(mem, md, eng, DNNL_MEMORY_NONE);
}

dnnl_status_t dn_memory_set(dnnl_memory_t mem, void *handle, dnnl_stream_t strm) {
    return dnnl_memory_set_data_handle_v2(mem, handle, strm);
}

dnnl_status_t dn_post_ops_sum(dnnl_post_ops_t po) { return dnnl_post_ops_append_sum(po, 1.0f); }
dnnl_status_t dn_post_ops_relu(dnnl_post_ops_t po) {
    return dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f);
}

dnnl_status_t dn_reorder_pd_create(dnnl_primitive_desc_t *pd, const dnnl_memory_desc_t *from,
                                   const dnnl_memory_desc_t *to, dnnl_engine_t eng,
                                   const_dnnl_primitive_attr_t attr) {
    return dnnl_reorder_primitive_desc_create(pd, from, eng, to, eng, attr);
}

int dn_conv_fwd_desc(dn_desc *d, dnnl_prop_kind_t prop, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *src,
                     const dnnl_memory_desc_t *w, const dnnl_memory_desc_t *b, const dnnl_memory_desc_t *dst,
                     const dnnl_dims_t st, const dnnl_dims_t pl, const dnnl_dims_t pr) {
    d->kind = DN_CONV_FWD;
    DNNL_CHECK(dnnl_convolution_forward_desc_init(&d->op.conv, prop, alg, src, w, b, dst, st, pl, pr));
    return 0;
}

int dn_conv_bwd_data_desc(dn_desc *d, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *diff_src,
                          const dnnl_memory_desc_t *w, const dnnl_memory_desc_t *diff_dst, const dnnl_dims_t st,
                          const dnnl_dims_t pl, const dnnl_dims_t pr) {
    d->kind = DN_CONV_BWD_D;
    DNNL_CHECK(dnnl_convolution_backward_data_desc_init(&d->op.conv, alg, diff_src, w, diff_dst, st, pl, pr));
    return 0;
}

int dn_conv_bwd_weights_desc(dn_desc *d, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *src,
                             const dnnl_memory_desc_t *diff_w, const dnnl_memory_desc_t *diff_b,
                             const dnnl_memory_desc_t *diff_dst, const dnnl_dims_t st, const dnnl_dims_t pl,
                             const dnnl_dims_t pr) {
    d->kind = DN_CONV_BWD_W;
    DNNL_CHECK(dnnl_convolution_backward_weights_desc_init(&d->op.conv, alg, src, diff_w, diff_b, diff_dst, st, pl,
                                                           pr));
    return 0;
}

int dn_matmul_desc(dn_desc *d, const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *w,
                   const dnnl_memory_desc_t *b, const dnnl_memory_desc_t *dst) {
    d->kind = DN_MATMUL;
    DNNL_CHECK(dnnl_matmul_desc_init(&d->op.matmul, src, w, b, dst));
    return 0;
}

int dn_pool_fwd_desc(dn_desc *d, dnnl_prop_kind_t prop, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *src,
                     const dnnl_memory_desc_t *dst, const dnnl_dims_t st, const dnnl_dims_t k, const dnnl_dims_t pl,
                     const dnnl_dims_t pr) {
    d->kind = DN_POOL_FWD;
    DNNL_CHECK(dnnl_pooling_forward_desc_init(&d->op.pool, prop, alg, src, dst, st, k, pl, pr));
    return 0;
}

int dn_pool_bwd_desc(dn_desc *d, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *diff_src,
                     const dnnl_memory_desc_t *diff_dst, const dnnl_dims_t st, const dnnl_dims_t k,
                     const dnnl_dims_t pl, const dnnl_dims_t pr) {
    d->kind = DN_POOL_BWD;
    DNNL_CHECK(dnnl_pooling_backward_desc_init(&d->op.pool, alg, diff_src, diff_dst, st, k, pl, pr));
    return 0;
}

int dn_eltwise_fwd_desc(dn_desc *d, dnnl_prop_kind_t prop, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *data,
                        float alpha, float beta) {
    d->kind = DN_ELT_FWD;
    DNNL_CHECK(dnnl_eltwise_forward_desc_init(&d->op.elt, prop, alg, data, alpha, beta));
    return 0;
}

int dn_eltwise_bwd_desc(dn_desc *d, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *diff_data,
                        const dnnl_memory_desc_t *data, float alpha, float beta) {
    d->kind = DN_ELT_BWD;
    DNNL_CHECK(dnnl_eltwise_backward_desc_init(&d->op.elt, alg, diff_data, data, alpha, beta));
    return 0;
}

int dn_binary_desc(dn_desc *d, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *src0, const dnnl_memory_desc_t *src1,
                   const dnnl_memory_desc_t *dst) {
    d->kind = DN_BINARY;
    DNNL_CHECK(dnnl_binary_desc_init(&d->op.binary, alg, src0, src1, dst));
    return 0;
}

int dn_bn_fwd_desc(dn_desc *d, dnnl_prop_kind_t prop, const dnnl_memory_desc_t *data, float eps, unsigned flags) {
    d->kind = DN_BN_FWD;
    DNNL_CHECK(dnnl_batch_normalization_forward_desc_init(&d->op.bn, prop, data, eps, flags));
    return 0;
}

int dn_bn_bwd_desc(dn_desc *d, dnnl_prop_kind_t prop, const dnnl_memory_desc_t *diff_data,
                   const dnnl_memory_desc_t *data, float eps, unsigned flags) {
    d->kind = DN_BN_BWD;
    DNNL_CHECK(dnnl_batch_normalization_backward_desc_init(&d->op.bn, prop, diff_data, data, eps, flags));
    return 0;
}

int dn_rnn_fwd_desc(dn_desc *d, int lstm, dnnl_prop_kind_t prop, dnnl_rnn_direction_t dir,
                    const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *wl, const dnnl_memory_desc_t *wi,
                    const dnnl_memory_desc_t *b, const dnnl_memory_desc_t *dst) {
    d->kind = lstm ? DN_LSTM_FWD : DN_GRU_FWD;
    if (lstm)
        DNNL_CHECK(dnnl_lstm_forward_desc_init(&d->op.rnn, prop, dir, src, NULL, NULL, wl, wi, b, dst, NULL, NULL, 0));
    else
        DNNL_CHECK(dnnl_lbr_gru_forward_desc_init(&d->op.rnn, prop, dir, src, NULL, wl, wi, b, dst, NULL, 0));
    return 0;
}

int dn_rnn_bwd_desc(dn_desc *d, int lstm, dnnl_prop_kind_t prop, dnnl_rnn_direction_t dir,
                    const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *wl, const dnnl_memory_desc_t *wi,
                    const dnnl_memory_desc_t *b, const dnnl_memory_desc_t *dst, const dnnl_memory_desc_t *diff_src,
                    const dnnl_memory_desc_t *diff_wl, const dnnl_memory_desc_t *diff_wi,
                    const dnnl_memory_desc_t *diff_b, const dnnl_memory_desc_t *diff_dst) {
    d->kind = lstm ? DN_LSTM_BWD : DN_GRU_BWD;
    if (lstm)
        DNNL_CHECK(dnnl_lstm_backward_desc_init(&d->op.rnn, prop, dir, src, NULL, NULL, wl, wi, b, dst, NULL, NULL,
                                                diff_src, NULL, NULL, diff_wl, diff_wi, diff_b, diff_dst, NULL, NULL,
                                                0));
    else
        DNNL_CHECK(dnnl_lbr_gru_backward_desc_init(&d->op.rnn, prop, dir, src, NULL, wl, wi, b, dst, NULL, diff_src,
                                                   NULL, diff_wl, diff_wi, diff_b, diff_dst, NULL, 0));
    return 0;
}

dnnl_status_t dn_pd_create(dnnl_primitive_desc_t *pd, const dn_desc *d, const_dnnl_primitive_attr_t attr,
                           dnnl_engine_t eng, const_dnnl_primitive_desc_t hint) {
    return dnnl_primitive_desc_create(pd, &d->op, attr, eng, hint);
}

#endif
