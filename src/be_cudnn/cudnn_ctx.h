/* cudnn_ctx.h — be_cudnn's private state, shared by its files (be_cudnn.c: the ops; cudnn_algo.c: which
 * convolution algorithm each shape runs). Not for callers of the back-end: they see nn/backend.h only. */
#ifndef SD_CUDNN_CTX_H
#define SD_CUDNN_CTX_H

#include "be_cudnn/cudnn_be.h"

#define CU_STAGES 2
#define CU_STAGE_MAX ((size_t)16 << 20)      /* pinned staging buffer: uploads go through it in chunks */
#define CU_WS_CAP ((size_t)1 << 30)          /* never more than 1 GiB of convolution workspace */
#define CU_MAX_PERF 16

typedef struct cu_ctx {
    int device;
    struct cudaDeviceProp prop;
    int driver, runtime;
    cu_prec prec;                             /* fp32, tf32, fp16, bf16 (cudnn_be.h) */
    int autotune;
    cudaStream_t stream;
    cudnnHandle_t dnn;
    cublasHandle_t blas;
    void *ws;                                 /* convolution workspace shared by all ops (one stream) */
    size_t ws_size;
    void *stage[CU_STAGES];                   /* pinned host staging for uploads, used alternately */
    size_t stage_size[CU_STAGES];
    cudaEvent_t stage_ev[CU_STAGES];          /* recorded after the copy out of stage[i] */
    int stage_next;
    int *bad;                                 /* device int[CU_BAD_INTS]: bad label, bad token (cudnn_be.h) */
    int bad_pending, bad_C, bad_V;            /* a kernel that may flag ran since the last read; classes, vocab */
    cu_conv_choice *choices;                  /* algorithm cache, one entry per convolution shape */
    int nchoices, cap;
    cu_half half;                             /* fp16/bf16: the 16-bit operand scratch (cudnn_precision.c) */
    int *scale_flag;                          /* device int: loss scaling met an inf or NaN */
} cu_ctx;

typedef struct cu_priv {
    cu_descs d;
    cu_conv_choice choice;                    /* conv only */
    cu_rnn rnn;                               /* gru/lstm */
    int is_rnn;
    cu_descs h;                               /* conv under fp16/bf16: x, w, y in the 16-bit type */
} cu_priv;

#define CTX(be) ((cu_ctx *)(be)->ctx)

/* Tensor-op math may be picked (tf32, fp16, bf16): under fp32 only FMA. */
static inline int tensor_ops(const cu_ctx *c) { return c->prec != CU_PREC_FP32; }
static inline size_t numel_out(const nn_op *op) { return (size_t)op->n * op->oc * op->oh * op->ow; }

/* cudnn_algo.c: a convolution's algorithms for the three directions (cached per shape), and the shared workspace
 * grown to what they need. */
int cu_conv_choose(nn_backend *be, const nn_op *op, cu_priv *p);
int cu_grow_workspace(nn_backend *be, size_t need);

#endif
