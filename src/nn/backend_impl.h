/* backend_impl — what implementing a back-end, or driving one as the engine does, takes: the table of
 * primitives (an entry left NULL means "not supported here"), the back-end's fields and its constructor.
 * Commands and the report use nn/backend.h only. */
#ifndef SD_NN_BACKEND_IMPL_H
#define SD_NN_BACKEND_IMPL_H

#include "nn/backend.h"

/* What follows a convolution at inference and can run inside it (conv2d_infer):
 * y = relu(bn(conv(x, w) + b) + res), each part optional. */
typedef struct nn_conv_fuse {
    const nn_op *bn;                       /* the batchnorm after the conv (its eps), or NULL */
    const float *gamma, *beta, *running;   /* its parameters and running statistics ([2][C]: mean, variance) */
    const float *res;                      /* a tensor added after bn (residual connection), or NULL */
    int res_fmt, y_fmt, x_fmt;             /* nn_fmt of res, of y and of x */
    int relu;                              /* 1: relu last */
    int train;                             /* 1: in a training pass (no batch norm, no add then) */
} nn_conv_fuse;

/* How a batch norm runs fused (bn_fused_forward/backward; nn/fuse.c "batch norm and relu", "concat slabs"). */
typedef struct nn_bn_fuse {
    int relu;                              /* 1: y = relu(bn(x)); backward masks dy by y > 0 first */
    int dx_acc;                            /* backward: dx += the gradient (others' are in dx already), else dx = */
} nn_bn_fuse;

typedef struct nn_backend_ops {
    const char *name;
    void (*destroy)(nn_backend *be);
    void (*env)(nn_backend *be, nn_env_fn add, void *user);

    /* Device memory. Pointers returned by alloc are opaque to the host (they may be GPU memory). */
    int (*alloc)(nn_backend *be, void **out, size_t bytes);
    void (*free)(nn_backend *be, void *p);
    int (*upload)(nn_backend *be, void *dst, const void *src, size_t bytes);
    int (*download)(nn_backend *be, void *dst, const void *src, size_t bytes);
    int (*zero)(nn_backend *be, void *p, size_t bytes);
    int (*sync)(nn_backend *be);      /* wait for queued work; timing calls it before reading clocks */

    /* Per-op state (descriptors, primitives, algorithm choice). Optional. */
    int (*prepare)(nn_backend *be, nn_op *op);
    void (*release)(nn_backend *be, nn_op *op);
    /* Workspace bytes one op instance needs between its forward and backward (pool argmax, dropout
     * mask, cuDNN reserve space). The graph allocates it and passes it to both. Optional (0). */
    size_t (*workspace_size)(nn_backend *be, const nn_op *op);
    /* 1 if the op can read its input and write its output in fmt (each of them, in any combination with
     * NN_FMT_NCHW); layout-keeping ops (relu, dropout, batchnorm) are asked for fmt on both sides at once.
     * Optional: without it everything is NCHW. Asked before prepare(). */
    int (*layout_ok)(nn_backend *be, const nn_op *op, int fmt);

    /* Layers: forward/backward pairs over explicit device buffers. Outputs first, then inputs.
     * Backward overwrites dx and ACCUMULATES into dw/db (+=): the graph zeroes gradients once a step.
     * dx may be NULL (first layer): skip computing it. */
    int (*dense_forward)(nn_backend *be, const nn_op *op, float *y, const float *x, const float *w,
                         const float *b);   /* w: [oc][c] (row = output unit), b: [oc] */
    int (*dense_backward)(nn_backend *be, const nn_op *op, float *dx, float *dw, float *db,
                          const float *dy, const float *x, const float *w);
    int (*conv2d_forward)(nn_backend *be, const nn_op *op, float *y, const float *x, const float *w,
                          const float *b);  /* w: [oc][c][kh][kw] */
    int (*conv2d_backward)(nn_backend *be, const nn_op *op, float *dx, float *dw, float *db,
                           const float *dy, const float *x, const float *w);
    /* Optional, training: conv2d_backward with dx then zero where x <= 0, x being the output of the relu before
     * it, whose backward this does (nn_model_backward, "relu under a convolution"). */
    int (*conv2d_backward_relu)(nn_backend *be, const nn_op *op, float *dx, float *dw, float *db,
                                const float *dy, const float *x, const float *w);
    /* Inference only (optional: the graph then runs the layers one by one): the convolution with what f says
     * follows it, into y (f->y_fmt), reading x in op->fmt_in. A back-end may keep what it derives from w, b and
     * the batch-norm parameters and statistics (folded, reordered weights) until they are written through this
     * table: upload, copy, zero, optimizer_step, a training batchnorm_forward. */
    int (*conv2d_infer)(nn_backend *be, const nn_op *op, const nn_conv_fuse *f, float *y, const float *x,
                        const float *w, const float *b);
    /* ws NULL: an inference pass, no argmax is kept for a backward */
    int (*maxpool_forward)(nn_backend *be, const nn_op *op, float *y, void *ws, const float *x);
    int (*maxpool_backward)(nn_backend *be, const nn_op *op, float *dx, const float *dy,
                            const float *x, const float *y, const void *ws);
    int (*relu_forward)(nn_backend *be, const nn_op *op, float *y, const float *x);
    int (*relu_backward)(nn_backend *be, const nn_op *op, float *dx, const float *dy, const float *y);
    /* Optional: dy[i] = y[i] > 0 ? dy[i] : 0 over n floats, in place (relu's backward on a max pooling's
     * output gradient: nn_model_backward, "relu under max pooling") */
    int (*relu_mask)(nn_backend *be, size_t n, float *dy, const float *y);
    /* Inverted dropout with the shared mask function nn_dropout_keep (nn/kernels.h), so every
     * back-end drops the same units for the same seed. */
    int (*dropout_forward)(nn_backend *be, const nn_op *op, float *y, void *ws, const float *x,
                           uint64_t seed);
    int (*dropout_backward)(nn_backend *be, const nn_op *op, float *dx, const float *dy,
                            const void *ws);
    /* prob: [n][c] softmax of logits; loss: [n] -log prob[label]. */
    int (*softmax_xent_forward)(nn_backend *be, const nn_op *op, float *prob, float *loss,
                                const float *logits, const int32_t *labels);
    /* dlogits = (prob - onehot(label)) / n  (gradient of the batch-mean loss). */
    int (*softmax_xent_backward)(nn_backend *be, const nn_op *op, float *dlogits, const float *prob,
                                 const int32_t *labels);

    /* One optimizer step over a slab of n parameters; state holds nn_optim_state_per_param floats per
     * parameter, laid out [k][n]. step counts from 1. */
    int (*optimizer_step)(nn_backend *be, const nn_optim *opt, float *params, const float *grads,
                          float *state, size_t n, long step);

    /* Loss scaling (the training loop's scaler, nn/train.c): x[i] *= s over n floats, nn_scale_elem
     * (nn/kernels.h); nonfinite not NULL: *nonfinite = 1 if any result is inf or NaN, else 0 (a device
     * back-end waits for its stream to say). Optional: without it the loop scales through download and upload. */
    int (*scale)(nn_backend *be, float *x, size_t n, float s, int *nonfinite);

    /* graph ops */
    /* Device-to-device copy (the graph uses it for the gradient of an add). */
    int (*copy)(nn_backend *be, void *dst, const void *src, size_t bytes);
    /* y = a + b over n*oc*oh*ow elements; y may be a (the graph accumulates gradients with it). Its
     * backward is dy to each input: the graph does it with copy/add. */
    int (*add_forward)(nn_backend *be, const nn_op *op, float *y, const float *a, const float *b);
    /* Channel concatenation of op->ninputs inputs x[i] ([n][in_c[i]][h][w]) into y ([n][oc][h][w]).
     * Backward writes the slices of dy into dx[i] (overwrite); dx[i] NULL: skipped. A back-end whose layout_ok
     * takes a concat blocked also honours op->in_fmt, op->out_cs and op->cat_inplace (a concat slab). */
    int (*concat_forward)(nn_backend *be, const nn_op *op, float *y, const float *const *x);
    int (*concat_backward)(nn_backend *be, const nn_op *op, float *const *dx, const float *dy);
    /* Batch normalisation per channel c: y = gamma[c] * (x - mean[c]) / sqrt(var[c] + eps) + beta[c].
     * running: [2][C], running mean then running variance. train = 1: mean/var are the batch's (biased
     * variance), saved in ws for backward, and running = (1 - momentum) * running + momentum * batch
     * (the unbiased variance, as PyTorch). train = 0: mean/var are the running ones, nothing is updated. */
    int (*batchnorm_forward)(nn_backend *be, const nn_op *op, float *y, void *ws, const float *x,
                             const float *gamma, const float *beta, float *running, int train);
    /* Backward of a training forward: dx overwritten (may be NULL), dgamma/dbeta accumulate (+=). */
    int (*batchnorm_backward)(nn_backend *be, const nn_op *op, float *dx, float *dgamma, float *dbeta,
                              const float *dy, const float *x, const float *gamma, const void *ws);
    /* Optional (NULL: the graph runs batchnorm and relu apart, and keeps concatenations whole): batchnorm_forward
     * and _backward with the relu after it when f->relu (y is then the relu's output; backward reads that y and
     * the relu's dy), x and dx the first op->c channels of op->in_cs when it is set (a concat slab, read in
     * op->fmt_in), and dx accumulated when f->dx_acc. */
    int (*bn_fused_forward)(nn_backend *be, const nn_op *op, const nn_bn_fuse *f, float *y, void *ws, const float *x,
                            const float *gamma, const float *beta, float *running, int train);
    int (*bn_fused_backward)(nn_backend *be, const nn_op *op, const nn_bn_fuse *f, float *dx, float *dgamma,
                             float *dbeta, const float *dy, const float *x, const float *y, const float *gamma,
                             const void *ws);
    /* Average pooling (NN_OP_AVGPOOL and NN_OP_GLOBAL_AVGPOOL): the mean over the window positions
     * inside the input (padding excluded from the count). Backward: dx overwritten. */
    int (*avgpool_forward)(nn_backend *be, const nn_op *op, float *y, const float *x);
    int (*avgpool_backward)(nn_backend *be, const nn_op *op, float *dx, const float *dy);
    /* prob = sigmoid(logits) [n][c]; loss[i] = mean over k of the binary cross-entropy against
     * targets[i][k] in [0,1], computed from the logits. Backward: dlogits = (prob - t) / (n * c), the
     * gradient of the mean over the batch and the classes (PyTorch BCEWithLogitsLoss, Keras). */
    int (*sigmoid_bce_forward)(nn_backend *be, const nn_op *op, float *prob, float *loss,
                               const float *logits, const float *targets);
    int (*sigmoid_bce_backward)(nn_backend *be, const nn_op *op, float *dlogits, const float *prob,
                                const float *targets);
    /* recurrent ops: shapes and weight layout under "Sequence tensors" above.
     * embedding: y[i][t] = table[ids[i][t]]; an id outside [0, vocab) is SD_EINPUT naming it (a device
     * back-end may report it at the next sync() or download() instead, as a bad label of the loss).
     * embedding_backward ACCUMULATES dtable[ids[i][t]] += dy[i][t] (ids have no gradient). */
    int (*embedding_forward)(nn_backend *be, const nn_op *op, float *y, const int32_t *ids, const float *table);
    int (*embedding_backward)(nn_backend *be, const nn_op *op, float *dtable, const float *dy,
                              const int32_t *ids);
    /* gru/lstm: w is the op's whole parameter slice; ws (workspace_size bytes) keeps what backward needs
     * from the training forward (train = 1); train = 0 is evaluation, no backward follows. Backward overwrites
     * dx (NULL: skip) and ACCUMULATES into dw (the slice, biases included); y is the forward output.
     * Exactly one backward per training forward: a back-end may consume ws in backward (cuDNN's
     * backward-data rewrites its reserve space), so a second backward needs a new forward first. */
    int (*gru_forward)(nn_backend *be, const nn_op *op, float *y, void *ws, const float *x, const float *w,
                       int train);
    int (*gru_backward)(nn_backend *be, const nn_op *op, float *dx, float *dw, const float *dy, const float *x,
                        const float *w, const float *y, const void *ws);
    int (*lstm_forward)(nn_backend *be, const nn_op *op, float *y, void *ws, const float *x, const float *w,
                        int train);
    int (*lstm_backward)(nn_backend *be, const nn_op *op, float *dx, float *dw, const float *dy, const float *x,
                         const float *w, const float *y, const void *ws);
    /* repeat (RepeatVector): forward broadcast over op->oc steps; backward overwrites dx with the sum. */
    int (*repeat_forward)(nn_backend *be, const nn_op *op, float *y, const float *x);
    int (*repeat_backward)(nn_backend *be, const nn_op *op, float *dx, const float *dy);
} nn_backend_ops;

struct nn_backend {
    const nn_backend_ops *ops;
    void *ctx;                    /* back-end private */
    char name[16];                /* "ref", "dnnl", "cudnn" */
    char device[160];             /* human-readable device description */
    nn_backend_opts opts;
    size_t bytes_in_use, bytes_peak;  /* maintained by nn_dev_alloc / nn_dev_free */
};

/* Memory through the table, with peak accounting. */
int nn_dev_alloc(nn_backend *be, void **out, size_t bytes);
void nn_dev_free(nn_backend *be, void *p, size_t bytes);

/* The blocked layout the graph gives op's tensors on be where the op alone decides (NN_FMT_NCHW16C before
 * NN_FMT_NCHW8C before NN_FMT_NHWC, as nn_fuse_layouts prefers them; NN_FMT_NCHW: none, or SD_LAYOUT_NCHW set).
 * nn/fuse.c. */
int nn_layout_blocked(nn_backend *be, const nn_op *op);

/* Constructors, one per back-end. */
int nn_ref_new(nn_backend **out, const nn_backend_opts *opts);
int nn_dnnl_new(nn_backend **out, const nn_backend_opts *opts);
int nn_cudnn_new(nn_backend **out, const nn_backend_opts *opts);
void nn_dnnl_libraries(nn_env_fn add, void *user);
void nn_cudnn_libraries(nn_env_fn add, void *user);

#endif
