/* dnnl_be — internals of the oneDNN back-end shared by its files (dnnl.c: the table, per-op state, memory;
 * one file per op family): the context, primitives with their argument memories, reorders, per-op state.
 * Private to be_dnnl. */
#ifndef SD_BE_DNNL_BE_H
#define SD_BE_DNNL_BE_H

#include "be_dnnl/dnnl_compat.h"
#include "be_dnnl/dnnl_rnn.h"
#include "nn/backend_impl.h"
#include "nn/host_ops.h"
#include "nn/kernels.h"
#include "core/err.h"

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DNNL_CHECK(call) \
    SD_CHECK_GEN("oneDNN", dnnl_status_t, call, r == dnnl_success, r, dnnl_status2str(r), \
                 "run with DNNL_VERBOSE=1 to see the primitive oneDNN rejected")

#define MAX_ARGS 16
#define ALIGN 64

typedef struct dnnl_ctx {
    dnnl_engine_t eng;
    dnnl_stream_t strm;
    int threads;
    void *scratch;                /* shared oneDNN scratchpad (max over primitives) */
    size_t scratch_bytes;
    void *tmp;                    /* shared temporaries of one op call (reordered copies) */
    size_t tmp_bytes;
    char impl[512];               /* convolution implementations chosen, for env() */
    int autotune;                 /* 1: let oneDNN choose Winograd for the convolutions it suits (--autotune) */
    dnnl_data_type_t cdt;         /* what convolutions and matmuls multiply: f32, or bf16 under --precision bf16
                                   * (their outputs, gradients and accumulation stay f32) */
    int amx;                      /* oneDNN's instruction set here includes AMX (bf16 tile products) */
    int blk_fmt;                  /* the graph's blocked layout, the one oneDNN's kernels here use: nChw16c with
                                   * AVX-512, nChw8c with AVX2, none below (nn_fmt; SD_DNNL_BLOCK=8|16|nhwc
                                   * sets it) */
    /* Inference caches (folded, reordered weights) and the memory they were derived from: a write through the
     * table that overlaps a watched range bumps wgen, and every cache older than wgen is refilled. */
    struct watch { const char *lo, *hi; const void *owner; } *watch;
    int nwatch, capwatch;
    uint64_t wgen;
    void *wino_tmp;               /* the host Winograd convolutions' per-thread chunks (dnnl_wino.c) */
    size_t wino_bytes;
    void *wino_u;                 /* a training convolution's transformed weights, made again at each call */
    size_t wino_u_bytes;
    void *wino_du;                /* backward-weights: each thread's sums of the transformed gradient */
    size_t wino_du_bytes;
    /* The host-Winograd-or-oneDNN choices made so far, by shape: a convolution of a shape already timed takes the
     * same kernels (the same results bit for bit, as two builds of one model in a process must give) untimed. */
    struct wino_pick { int key[12]; int pick; } *picks;
    int npicks, cappicks;
} dnnl_ctx;

#define CTX(be) ((dnnl_ctx *)(be)->ctx)

/* One primitive with memory objects for its arguments; data handles are set at each execution. */
typedef struct dstep {
    dnnl_primitive_t prim;
    int nargs;
    int arg[MAX_ARGS];
    dnnl_memory_t mem[MAX_ARGS];
    int scratch_idx;              /* index of DNNL_ARG_SCRATCHPAD in arg[], or -1 */
} dstep;

/* A reorder between the user's plain layout and the primitive's chosen one, into temporaries. */
typedef struct stage {
    int on;                       /* 0: layouts equal, the user buffer is used directly */
    dstep r;
    size_t off;                   /* offset of the reordered copy in ctx->tmp */
} stage;

/* A convolution run as Winograd F(4x4,3x3) on the host (dnnl_wino.c): its transformed weights and bias. */
typedef struct dn_wino {
    int on;                       /* made: the convolution runs here, not in oneDNN */
    int bi, bo, icp, ocp;         /* x's and y's channel blocks (nhwc: all the channels); channels padded to them */
    int tc;                       /* tiles per chunk a thread takes through all three steps */
    size_t vx, mx;                /* floats between the planes of V [36][tc][icp] and of M [36][tc][ocp] */
    size_t per_thread;            /* bytes of ctx->wino_tmp a thread uses (after the shared ones) */
    int split;                    /* the threads split the output channels, V and M of all the tiles shared */
    int blk;                      /* split: the output (and backward-weights' input) channels a block */
    size_t shared;                /* split: bytes of ctx->wino_tmp before the threads' own: V and M (or Y) */
    float *u;                     /* transformed weights [36][icp][ocp]: own_u, else ctx->wino_u, set per call */
    int own_u;
    const float *w;               /* split with shared U: the weights each thread transforms its block of */
    int flip;                     /* ... turned (backward-data's), as dn_wino_weights was told */
    float *bias;                  /* [ocp], zero past oc */
} dn_wino;
/* The inference convolution (conv2d_infer): its own forward_inference primitive with batch norm folded into
 * the weights and bias, the residual sum and relu as post-ops; the folded weights, reordered into the layout
 * the primitive wants, are kept between calls (until ctx->wgen moves). Made at the first call. */
typedef struct conv_inf {
    int made, key;                /* key: the nn_conv_fuse shape it was made for */
    dstep fwd;
    stage x, y;                   /* x: user -> chosen; y: chosen -> user (dst in ctx->tmp when on) */
    dstep res_r;                  /* residual (user layout) -> chosen dst layout; res_on 0: a plain copy */
    int res_on;
    dstep w_r;                    /* folded oihw -> chosen weights (into wbuf) */
    size_t off_wfold;             /* folded oihw weights in ctx->tmp */
    float *wbuf, *bbuf;           /* persistent: chosen-layout folded weights, folded bias [oc] */
    size_t dst_bytes;
    uint64_t gen;                 /* ctx->wgen when wbuf/bbuf were filled (0: never) */
    const float *src[5];          /* w, b, gamma, beta, running they were filled from */
    dn_wino wino;                 /* wino.on: runs as host Winograd (the timed choice), fwd is unused */
} conv_inf;

/* Backward-weights as one bf16 matmul, a third candidate under bf16 on AMX (conv_choose): dy converted to bf16
 * nhwc and read transposed (dy^T [oc][n*oh*ow]), x unfolded into bf16 rows col[n*oh*ow][ic*kh*kw]
 * (dn_im2col_bf16), dW += dy^T col written straight into the user's OIHW weights by a sum post-op. nb images per
 * matmul call keep the column matrix (in ctx->tmp) bounded. */
typedef struct conv_mm {
    int on;                       /* made (conv_choose); in p: backward-weights runs this way */
    dstep mm;                     /* dW[oc][ic*kh*kw] += A[oc][nb*oh*ow] B[nb*oh*ow][ic*kh*kw] */
    stage dy;                     /* user dy (fp32) -> bf16 nhwc */
    size_t off_col;               /* the column matrix of nb images in ctx->tmp */
    int nb;                       /* images per matmul call (divides n) */
} conv_mm;

/* bf16 forward and backward-data of a small output (oh*ow <= 16) as one matmul each over the column matrix
 * col[n*oh*ow][ic*kh*kw] (dnnl_conv.c conv_bm): y rows = col W^T, dcol = dy W folded back into dx. */
typedef struct conv_bm {
    int f, d;                     /* forward, backward-data run this way */
    dstep mf;                     /* rows[M][oc] (f32) = col[M][KC] (bf16) x W^T (bf16 OIHW read as [KC][oc]) */
    dstep md;                     /* dcol[M][KC] (f32) = dy[M][oc] (bf16 nhwc) x W[oc][KC] */
    stage w;                      /* user OIHW f32 -> bf16 OIHW, at ctx->tmp offset 0 in both calls */
    stage dy;                     /* user dy -> bf16 nhwc */
    size_t off_col, off_rows, off_dcol;
} conv_bm;
typedef struct conv_priv {
    dnnl_memory_desc_t x_md, w_md, b_md, y_md;     /* user layouts: nchw, oihw, x, nchw */
    conv_inf inf;
    conv_inf inf_train;   /* conv2d_infer in a training pass: forward_training, whose Winograd takes plain blocked
                           * weights (inference's pre-transformed ones would be redone after every step) */
    dstep fwd, bwd_d, bwd_w;
    stage f_x, f_w, f_y;                           /* forward: x, w in; y out */
    stage d_dy, d_w, d_dx;                         /* backward data: dy, w in; dx out */
    stage w_x, w_dy;                               /* backward weights: x, dy in */
    stage w_dw;                                    /* diff weights: tmp -> user, with sum (+=) */
    int dy_shared;                                 /* backward data reads w_dy's copy of dy */
    size_t off_zero_b, off_db, off_dw;             /* zero bias (no b), diff bias, diff weights */
    dnnl_data_type_t dt_f, dt_d, dt_w;             /* what forward, backward-data, backward-weights multiply */
    conv_mm mm;                                    /* mm.on: backward-weights as im2col + matmul (no bwd_w) */
    dn_wino wf, wd, ww;                            /* on: forward, backward-data, backward-weights as host Winograd */
    int gf, gw, gd;                                /* forward, backward-weights, backward-data as sgemm (small outputs) */
    conv_bm bm;                                    /* bf16: forward, backward-data as matmuls (small outputs) */
} conv_priv;

typedef struct dense_priv {
    dstep fwd, bwd_d, bwd_w;
    stage s_x, s_w, s_dy;         /* bf16: copies of x, w, dy the matmuls read (off under f32) */
    size_t off_zero_b;
} dense_priv;

typedef struct pool_priv {
    dstep fwd, bwd;
    dstep fwd_inf;                /* max pooling at inference: no workspace written */
    size_t ws_bytes;
    stage f_x, f_y, b_dy, b_dx;   /* reorders where the graph's layouts differ from the primitive's */
    int host;                     /* max pooling of a blocked tensor on the host (dn_pool_host): in training, and at
                                   * inference too unless fwd_inf is made (nChw16c, nhwc): none of the rest */
} pool_priv;

typedef struct relu_priv {
    dstep fwd, bwd;
} relu_priv;

/* graph ops */
typedef struct bn_priv {
    dstep fwd_train, fwd_inf, bwd;   /* oneDNN's primitives, under SD_DNNL_BN_PRIMITIVE (prim = 1) */
    int prim;
} bn_priv;

typedef struct add_priv {
    dstep fwd;
} add_priv;



/* Primitive path: the canonical layout (nn/backend.h: W_x [G][H][F], W_h [G][H][H], b_x, b_h; GRU gates r, z, n)
 * is converted at each call into oneDNN's user layouts (ldigo weights, ldgo bias; lbr_gru gates u=z, r, o=n plus
 * the extra bias b_hn; LSTM one bias b_x + b_h), then reordered into the primitive's chosen layouts. Sequences
 * are batch-major [N][T][F] = oneDNN's ntc. Initial states are zero (no src_iter). The last-state variant
 * keeps the whole dst_layer in the op workspace (backward needs it) and copies the last step out. */
typedef struct rnn_priv {
    dstep fwd, bwd;
    stage f_wl, f_wi, b_wl, b_wi;     /* user ldigo -> chosen weights (forward, backward) */
    stage b_dwl, b_dwi;               /* chosen diff weights -> user ldigo */
    size_t off_wl, off_wi, off_b;     /* user-layout weights and bias in ctx->tmp */
    size_t off_dwl, off_dwi, off_db;  /* user-layout diff weights and bias */
    size_t off_ddst, off_dsrc;        /* zero-padded diff_dst_layer (last state), diff_src when dx is NULL */
    size_t bytes_dwl, bytes_dwi;      /* sizes of the chosen diff weights buffers (zeroed before backward) */
    size_t ws_dnnl;                   /* oneDNN workspace bytes (aligned); the dst_layer copy follows */
    int G, GB;                        /* gates, bias rows */
    int prim;                         /* 1: oneDNN's primitives, 0: the host path (the rest is unused) */
} rnn_priv;

#define PRIV(op, type) ((type *)(op)->priv)
#define NEED_PRIV(op) do { if (!(op)->priv) return sd_err(SD_ERROR, "dnnl: op %d used before prepare()", \
                                                        (int)(op)->kind); } while (0)

/* ---- primitive plumbing (dnnl_prim.c) ----------------------------------------------------------------------------- */
void dn_step_destroy(dstep *s);
int dn_step_arg(dnnl_ctx *c, dstep *s, int arg, const dnnl_memory_desc_t *md);
int dn_grow(void **buf, size_t *have, size_t need);
int dn_step_make(dnnl_ctx *c, dstep *s, dnnl_primitive_desc_t pd);
int dn_step_run(dnnl_ctx *c, dstep *s, void *const *ptr);
size_t dn_bump(size_t *top, size_t bytes);
int dn_attr_new(dnnl_primitive_attr_t *attr, int sum);
int dn_pd_new(dnnl_ctx *c, dnnl_primitive_desc_t *pd, const dn_desc *desc, int sum,
              const_dnnl_primitive_desc_t hint);
int dn_reorder_make(dnnl_ctx *c, dstep *s, const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to,
                    int sum);
int dn_stage_make(dnnl_ctx *c, stage *st, const dnnl_memory_desc_t *user, const dnnl_memory_desc_t *chosen,
                  int in, int sum, size_t *top);
int dn_stage_in(dnnl_ctx *c, stage *st, const void *user, void **out);
void *dn_stage_out(dnnl_ctx *c, stage *st, void *user);
int dn_stage_out_done(dnnl_ctx *c, stage *st, void *user);
void dn_stage_destroy(stage *st);
int dn_md_tag(dnnl_memory_desc_t *md, int nd, const dnnl_dims_t dims, dnnl_format_tag_t tag);
int dn_md_strides(dnnl_memory_desc_t *md, int nd, const dnnl_dims_t dims, const dnnl_dims_t strides);
dnnl_format_tag_t dn_fmt_tag(int fmt);
void dn_threads_on(dnnl_ctx *c);
int dn_strm_wait(dnnl_ctx *c);
void dn_note_impl(dnnl_ctx *c, const char *what, const_dnnl_primitive_t prim);
void dn_note_host(dnnl_ctx *c, const char *what, const char *name);   /* a kernel of ours, by name */
/* 1 if oneDNN gave pd its reference implementation (what it falls back to for a layout no kernel takes) */
int dn_pd_is_ref(const_dnnl_primitive_desc_t pd);
int dn_pad_r(int in, int k, int s, int pl, int out, int *pr);

/* ---- convolution (dnnl_conv.c) ------------------------------------------------------------------------------------ */
int dn_conv_prepare(dnnl_ctx *c, nn_op *op, conv_priv *p);
/* Under bf16, the convolution passes' types: timed per pass (the default), or all bf16 or all fp32
 * (SD_DNNL_BF16_PASSES=all|fp32) */
enum { DN_PASSES_TIMED, DN_PASSES_BF16, DN_PASSES_FP32 };
int dn_conv_bf16_passes(const dnnl_ctx *c);
/* 1 if each convolution pass is timed in bf16 and fp32 at prepare and runs in the faster (bf16 on AMX) */
int dn_conv_bf16_choose(const dnnl_ctx *c);
void dn_conv_release(dnnl_ctx *c, conv_priv *p);
int dn_conv2d_forward(nn_backend *be, const nn_op *op, float *y, const float *x, const float *w,
                      const float *b);
int dn_conv2d_backward_relu(nn_backend *be, const nn_op *op, float *dx, float *dw, float *db,
                            const float *dy, const float *x, const float *w);
int dn_conv2d_backward(nn_backend *be, const nn_op *op, float *dx, float *dw, float *db,
                       const float *dy, const float *x, const float *w);
void dn_touched(dnnl_ctx *c, const void *p, size_t bytes);
int dn_conv2d_infer(nn_backend *be, const nn_op *op, const nn_conv_fuse *f, float *y, const float *x,
                    const float *w, const float *b);

/* ---- Winograd F(4x4,3x3) on the host (dnnl_wino.c) ---------------------------------------------------------------- */
/* 1 if op (a 3x3 stride-1 convolution with x and y in one blocked layout) can run there; SD_DNNL_WINO=off: never */
int dn_wino_ok(const nn_op *op, int x_fmt, int y_fmt);
int dn_wino_forced(void);                            /* SD_DNNL_WINO=on: wherever dn_wino_ok, untimed */
/* shared_u: the transformed weights go to ctx->wino_u (grown here) and k->u is set before each use; where the
 * threads split the output channels (k->split) each transforms its own block at the call instead */
int dn_wino_make(dnnl_ctx *c, dn_wino *k, const nn_op *op, int shared_u);
void dn_wino_release(dn_wino *k);
const char *dn_wino_name(const dn_wino *k);          /* "host winograd" or "host winograd split": backend_impl */
void dn_wino_weights(dn_wino *k, const nn_op *op, const float *w, const float *bias, int flip, int threads);
/* y = relu(conv(x) + bias + res) in op->fmt_out, res and relu optional */
/* gate: NULL, or y zero where gate <= 0 (a relu's backward on backward-data: gate its output, in y's layout) */
int dn_wino_run(dnnl_ctx *c, const dn_wino *k, const nn_op *op, float *y, const float *x, const float *res, int relu,
                const float *gate);
int dn_wino_make_bwd_w(dnnl_ctx *c, dn_wino *k, const nn_op *op);
/* dw (OIHW) += the weights' gradient of y = conv(x) for dy; x in op->fmt_in, dy in op->fmt_out */
int dn_wino_bwd_w(dnnl_ctx *c, const dn_wino *k, const nn_op *op, float *dw, const float *dy, const float *x);
/* ---- im2col for backward-weights as a matmul (dnnl_im2col.c) ----------------------------------------------------- */
/* col[r][ic*kh*kw] (bf16 bits) for rows r = (n - n0, oh, ow), n0 <= n < n0 + nb, of x in op->fmt_in */
void dn_im2col_bf16(uint16_t *col, const float *x, const nn_op *op, int n0, int nb, int threads);
/* db[o] += sum of dy (op->fmt_out) over n, oh, ow */
void dn_conv_db_add(float *db, const float *dy, const nn_op *op, int threads);
/* fp32 passes of a convolution with a small output as sgemm calls (dnnl_conv.c, conv_gemm_choose) */
void dn_im2col_f32(float *col, const float *x, const nn_op *op, int threads);
void dn_col2im_f32(float *dx, const float *col, const nn_op *op, int threads);
void dn_rows_of(float *rows, const float *dy, const nn_op *op, int threads);
void dn_rows_to(float *y, const float *rows, const float *b, const nn_op *op, int threads);

/* ---- dense (dnnl_dense.c) ----------------------------------------------------------------------------------------- */
int dn_dense_prepare(dnnl_ctx *c, nn_op *op, dense_priv *p);
void dn_dense_release(dense_priv *p);
int dn_dense_forward(nn_backend *be, const nn_op *op, float *y, const float *x, const float *w,
                     const float *b);
int dn_dense_backward(nn_backend *be, const nn_op *op, float *dx, float *dw, float *db,
                      const float *dy, const float *x, const float *w);

/* ---- pooling (dnnl_pool.c) ---------------------------------------------------------------------------------------- */
int dn_pool_descs(const nn_op *op, dnnl_prop_kind_t prop, dn_desc *fd, dn_desc *bd);
int dn_pool_prepare(dnnl_ctx *c, nn_op *op, pool_priv *p);
int dn_pool_host(const nn_op *op);                   /* max pooling that runs on the host (dnnl_pool.c) */
size_t dn_pool_host_ws_bytes(const nn_op *op);
int dn_maxpool_forward(nn_backend *be, const nn_op *op, float *y, void *ws, const float *x);
int dn_maxpool_backward(nn_backend *be, const nn_op *op, float *dx, const float *dy,
                        const float *x, const float *y, const void *ws);
int dn_avgpool_forward(nn_backend *be, const nn_op *op, float *y, const float *x);
int dn_avgpool_backward(nn_backend *be, const nn_op *op, float *dx, const float *dy);

/* ---- element-wise and graph ops, losses, optimizer (dnnl_eltwise.c) ----------------------------------------------- */
int dn_relu_prepare(dnnl_ctx *c, nn_op *op, relu_priv *p);
int dn_relu_forward(nn_backend *be, const nn_op *op, float *y, const float *x);
int dn_relu_mask(nn_backend *be, size_t n, float *dy, const float *y);
int dn_relu_backward(nn_backend *be, const nn_op *op, float *dx, const float *dy, const float *y);
int dn_dropout_forward(nn_backend *be, const nn_op *op, float *y, void *ws, const float *x,
                       uint64_t seed);
int dn_dropout_backward(nn_backend *be, const nn_op *op, float *dx, const float *dy, const void *ws);
int dn_softmax_xent_forward(nn_backend *be, const nn_op *op, float *prob, float *loss,
                            const float *logits, const int32_t *labels);
int dn_softmax_xent_backward(nn_backend *be, const nn_op *op, float *dlogits, const float *prob,
                             const int32_t *labels);
int dn_optimizer_step(nn_backend *be, const nn_optim *o, float *p, const float *g, float *state,
                      size_t n, long step);
int dn_add_prepare(dnnl_ctx *c, nn_op *op, add_priv *p);
int dn_add_forward(nn_backend *be, const nn_op *op, float *y, const float *a, const float *b);
int dn_concat_forward(nn_backend *be, const nn_op *op, float *y, const float *const *x);
int dn_concat_backward(nn_backend *be, const nn_op *op, float *const *dx, const float *dy);
int dn_sigmoid_bce_forward(nn_backend *be, const nn_op *op, float *prob, float *loss, const float *logits,
                           const float *targets);
int dn_sigmoid_bce_backward(nn_backend *be, const nn_op *op, float *dlogits, const float *prob,
                            const float *targets);

/* ---- batch normalisation (dnnl_bn.c) ------------------------------------------------------------------------------ */
int dn_bn_prepare(dnnl_ctx *c, nn_op *op, bn_priv *p);
int dn_batchnorm_forward(nn_backend *be, const nn_op *op, float *y, void *ws, const float *x,
                         const float *gamma, const float *beta, float *running, int train);
int dn_batchnorm_backward(nn_backend *be, const nn_op *op, float *dx, float *dgamma, float *dbeta,
                          const float *dy, const float *x, const float *gamma, const void *ws);
int dn_bn_fused_forward(nn_backend *be, const nn_op *op, const nn_bn_fuse *f, float *y, void *ws, const float *x,
                        const float *gamma, const float *beta, float *running, int train);
int dn_bn_fused_backward(nn_backend *be, const nn_op *op, const nn_bn_fuse *f, float *dx, float *dgamma,
                         float *dbeta, const float *dy, const float *x, const float *y, const float *gamma,
                         const void *ws);

/* ---- recurrent ops (dnnl_recurrent.c) ----------------------------------------------------------------------------- */
int dn_rnn_prepare(dnnl_ctx *c, nn_op *op, rnn_priv *p);
size_t dn_rnn_ws_bytes(const nn_op *op);
void dn_rnn_release(rnn_priv *p);
int dn_rnn_forward(nn_backend *be, const nn_op *op, float *y, void *ws, const float *x, const float *w,
                   int train);
int dn_rnn_backward(nn_backend *be, const nn_op *op, float *dx, float *dw, const float *dy, const float *x,
                    const float *w, const float *y, const void *ws);
int dn_repeat_forward(nn_backend *be, const nn_op *op, float *y, const float *x);
int dn_repeat_backward(nn_backend *be, const nn_op *op, float *dx, const float *dy);
int dn_embedding_forward(nn_backend *be, const nn_op *op, float *y, const int32_t *ids, const float *table);
int dn_embedding_backward(nn_backend *be, const nn_op *op, float *dtable, const float *dy,
                          const int32_t *ids);

#endif
