/* dnnl_compat — the dnnl back-end's oneDNN calls whose API differs between oneDNN 2.x (Debian 12's 2.6, the
 * default) and 3.x (`make DNNL_PREFIX=...`), with one interface for both. The rest of be_dnnl calls oneDNN
 * directly where the two agree (engines, streams, primitives, attributes, execution, queries of strings).
 *
 * What differs and how it is met here:
 * - 2.x describes an operation (*_desc_init) and then makes its primitive descriptor; 3.x makes the primitive
 *   descriptor from the shapes directly (*_primitive_desc_create). Here a dn_desc records the operation (2.x: the
 *   oneDNN op descriptor; 3.x: its arguments) and dn_pd_create makes the primitive descriptor in either.
 * - 2.x's dnnl_memory_desc_t is a value; 3.x's is a handle, created and destroyed. be_dnnl keeps passing
 *   `const dnnl_memory_desc_t *` around (a pointer to the value, or to the handle). Under 3.x the handles made by
 *   dn_md_* (and the copies of a primitive descriptor's, dn_md_query) are recorded and destroyed together by
 *   dn_md_scope_end(), which each entry point that makes primitives calls when done (prepare, the first
 *   inference call, the workspace query); a descriptor kept longer is made with dn_md_*_kept and freed with
 *   dn_md_free. Under 2.x all of these are plain struct copies and dn_md_free and dn_md_scope_end do nothing.
 * - Post-ops: 3.x's sum takes a zero point and a data type, its eltwise no scale.
 * - 3.x sets a memory's handle without a stream; it has no Winograd convolution on CPUs (DN_CPU_WINOGRAD 0). */
#ifndef SD_BE_DNNL_COMPAT_H
#define SD_BE_DNNL_COMPAT_H

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_version.h>

#if DNNL_VERSION_MAJOR >= 3
#define DN_V3 1
#define DN_CPU_WINOGRAD 0   /* the API keeps dnnl_convolution_winograd; no CPU implementation */
#else
#define DN_V3 0
#define DN_CPU_WINOGRAD 1
#endif

/* An operation to make a primitive descriptor for. */
typedef enum {
    DN_CONV_FWD, DN_CONV_BWD_D, DN_CONV_BWD_W, DN_MATMUL, DN_POOL_FWD, DN_POOL_BWD, DN_ELT_FWD, DN_ELT_BWD,
    DN_BINARY, DN_BN_FWD, DN_BN_BWD, DN_LSTM_FWD, DN_LSTM_BWD, DN_GRU_FWD, DN_GRU_BWD
} dn_kind;

typedef struct dn_desc {
    dn_kind kind;
#if DN_V3
    /* the arguments of dnnl_<kind>_primitive_desc_create (md: per kind, in the order of dn_*_desc's) */
    dnnl_prop_kind_t prop;
    dnnl_alg_kind_t alg;
    dnnl_rnn_direction_t dir;
    const_dnnl_memory_desc_t md[10];
    dnnl_dims_t st, k, pl, pr;
    float a, b;           /* eltwise alpha, beta; batch norm: a = epsilon */
    unsigned flags;
#else
    union {
        dnnl_convolution_desc_t conv;
        dnnl_matmul_desc_t matmul;
        dnnl_pooling_desc_t pool;
        dnnl_eltwise_desc_t elt;
        dnnl_binary_desc_t binary;
        dnnl_batch_normalization_desc_t bn;
        dnnl_rnn_desc_t rnn;
    } op;
#endif
} dn_desc;

/* Descriptions (the arguments of 2.x's *_desc_init; NULL for an absent optional tensor). 0 or an sd_err. */
int dn_conv_fwd_desc(dn_desc *d, dnnl_prop_kind_t prop, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *src,
                     const dnnl_memory_desc_t *w, const dnnl_memory_desc_t *b, const dnnl_memory_desc_t *dst,
                     const dnnl_dims_t st, const dnnl_dims_t pl, const dnnl_dims_t pr);
int dn_conv_bwd_data_desc(dn_desc *d, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *diff_src,
                          const dnnl_memory_desc_t *w, const dnnl_memory_desc_t *diff_dst, const dnnl_dims_t st,
                          const dnnl_dims_t pl, const dnnl_dims_t pr);
int dn_conv_bwd_weights_desc(dn_desc *d, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *src,
                             const dnnl_memory_desc_t *diff_w, const dnnl_memory_desc_t *diff_b,
                             const dnnl_memory_desc_t *diff_dst, const dnnl_dims_t st, const dnnl_dims_t pl,
                             const dnnl_dims_t pr);
int dn_matmul_desc(dn_desc *d, const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *w,
                   const dnnl_memory_desc_t *b, const dnnl_memory_desc_t *dst);
int dn_pool_fwd_desc(dn_desc *d, dnnl_prop_kind_t prop, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *src,
                     const dnnl_memory_desc_t *dst, const dnnl_dims_t st, const dnnl_dims_t k, const dnnl_dims_t pl,
                     const dnnl_dims_t pr);
int dn_pool_bwd_desc(dn_desc *d, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *diff_src,
                     const dnnl_memory_desc_t *diff_dst, const dnnl_dims_t st, const dnnl_dims_t k,
                     const dnnl_dims_t pl, const dnnl_dims_t pr);
/* eltwise on one layout: src and dst (diff_src and diff_dst) alike */
int dn_eltwise_fwd_desc(dn_desc *d, dnnl_prop_kind_t prop, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *data,
                        float alpha, float beta);
int dn_eltwise_bwd_desc(dn_desc *d, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *diff_data,
                        const dnnl_memory_desc_t *data, float alpha, float beta);
int dn_binary_desc(dn_desc *d, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *src0, const dnnl_memory_desc_t *src1,
                   const dnnl_memory_desc_t *dst);
/* batch normalisation on one layout (src and dst alike) */
int dn_bn_fwd_desc(dn_desc *d, dnnl_prop_kind_t prop, const dnnl_memory_desc_t *data, float eps, unsigned flags);
int dn_bn_bwd_desc(dn_desc *d, dnnl_prop_kind_t prop, const dnnl_memory_desc_t *diff_data,
                   const dnnl_memory_desc_t *data, float eps, unsigned flags);
/* LSTM (no peepholes, no projection) and linear-before-reset GRU without initial or final states */
int dn_rnn_fwd_desc(dn_desc *d, int lstm, dnnl_prop_kind_t prop, dnnl_rnn_direction_t dir,
                    const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *wl, const dnnl_memory_desc_t *wi,
                    const dnnl_memory_desc_t *b, const dnnl_memory_desc_t *dst);
int dn_rnn_bwd_desc(dn_desc *d, int lstm, dnnl_prop_kind_t prop, dnnl_rnn_direction_t dir,
                    const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *wl, const dnnl_memory_desc_t *wi,
                    const dnnl_memory_desc_t *b, const dnnl_memory_desc_t *dst, const dnnl_memory_desc_t *diff_src,
                    const dnnl_memory_desc_t *diff_wl, const dnnl_memory_desc_t *diff_wi,
                    const dnnl_memory_desc_t *diff_b, const dnnl_memory_desc_t *diff_dst);

/* The primitive descriptor of d (oneDNN's status: the caller says what failed). */
dnnl_status_t dn_pd_create(dnnl_primitive_desc_t *pd, const dn_desc *d, const_dnnl_primitive_attr_t attr,
                           dnnl_engine_t eng, const_dnnl_primitive_desc_t hint);
dnnl_status_t dn_reorder_pd_create(dnnl_primitive_desc_t *pd, const dnnl_memory_desc_t *from,
                                   const dnnl_memory_desc_t *to, dnnl_engine_t eng,
                                   const_dnnl_primitive_attr_t attr);

/* Memory descriptors (see above for their lifetime under 3.x). 0 or an sd_err. */
int dn_md_tag_dt(dnnl_memory_desc_t *md, int nd, const dnnl_dims_t dims, dnnl_data_type_t dt, dnnl_format_tag_t tag);
int dn_md_strides_dt(dnnl_memory_desc_t *md, int nd, const dnnl_dims_t dims, dnnl_data_type_t dt,
                     const dnnl_dims_t strides);
int dn_md_tag_kept(dnnl_memory_desc_t *md, int nd, const dnnl_dims_t dims, dnnl_data_type_t dt,
                   dnnl_format_tag_t tag);   /* not freed by dn_md_scope_end: dn_md_free it */
void dn_md_free(dnnl_memory_desc_t *md);
void dn_md_scope_end(void);
/* A copy of what pd chose for what (index idx); a zero descriptor (size 0) if it has none. */
int dn_md_query(const_dnnl_primitive_desc_t pd, dnnl_query_t what, int idx, dnnl_memory_desc_t *out);
size_t dn_md_size(const dnnl_memory_desc_t *md);
int dn_md_equal(const dnnl_memory_desc_t *a, const dnnl_memory_desc_t *b);

dnnl_status_t dn_memory_create(dnnl_memory_t *mem, const dnnl_memory_desc_t *md, dnnl_engine_t eng);
dnnl_status_t dn_memory_set(dnnl_memory_t mem, void *handle, dnnl_stream_t strm);

/* Post-ops: dst += the result (sum, scale 1), relu (alpha 0). */
dnnl_status_t dn_post_ops_sum(dnnl_post_ops_t po);
dnnl_status_t dn_post_ops_relu(dnnl_post_ops_t po);

#endif
