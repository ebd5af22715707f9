/* backend — the thin boundary between the shared engine and a compute back-end.
 * A back-end is a table of primitives plus a private context (as ggml_backend_i). The graph, training
 * loop, data, timing and metrics are shared; a back-end only allocates device memory, moves bytes and
 * runs the primitives below on explicit buffers. An entry left NULL means "not supported here".
 * The reference back-end (ref.c) is the specification: every other back-end is tested against it. */
#ifndef SD_NN_BACKEND_H
#define SD_NN_BACKEND_H

#include <stddef.h>
#include <stdint.h>

typedef struct nn_backend nn_backend;

typedef enum nn_op_kind {
    NN_OP_DENSE = 0,
    NN_OP_CONV2D,
    NN_OP_MAXPOOL,
    NN_OP_RELU,
    NN_OP_DROPOUT,
    NN_OP_FLATTEN,      /* a view: no primitive, the graph aliases the buffer */
    NN_OP_SOFTMAX_XENT, /* softmax + cross-entropy loss against integer labels */
    NN_OP_COUNT
} nn_op_kind;

/* One operation instance at a fixed batch size. Shapes are per example, NCHW, float32.
 * dense: c = input features (h = w = 1), oc = units (oh = ow = 1). */
typedef struct nn_op {
    nn_op_kind kind;
    int n;                        /* batch */
    int c, h, w;                  /* input shape */
    int oc, oh, ow;               /* output shape */
    int kh, kw, sh, sw, ph, pw;   /* conv / pool window, stride, padding (top/left = bottom/right) */
    int has_bias;
    float rate;                   /* dropout: probability of dropping */
    void *priv;                   /* back-end state made by prepare(), freed by release() */
} nn_op;

typedef enum nn_optim_kind {
    NN_OPTIM_SGD = 0,   /* v = momentum*v + g; p -= lr*v  (momentum 0: plain SGD) */
    NN_OPTIM_RMSPROP,   /* a = rho*a + (1-rho) g^2; p -= lr*g/(sqrt(a)+eps)  (Keras) */
    NN_OPTIM_ADADELTA,  /* Keras: a, d accumulators, lr scales the update */
    NN_OPTIM_ADAM,      /* bias-corrected, eps added after sqrt */
    NN_OPTIM_COUNT
} nn_optim_kind;

typedef struct nn_optim {
    nn_optim_kind kind;
    float lr, momentum, rho, beta1, beta2, eps;
} nn_optim;

/* Floats of optimizer state per parameter. */
int nn_optim_state_per_param(nn_optim_kind k);

/* Key/value sink for a back-end's environment (device, library versions) in the results. */
typedef void (*nn_env_fn)(void *user, const char *key, const char *value);

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
    int (*maxpool_forward)(nn_backend *be, const nn_op *op, float *y, void *ws, const float *x);
    int (*maxpool_backward)(nn_backend *be, const nn_op *op, float *dx, const float *dy,
                            const float *x, const float *y, const void *ws);
    int (*relu_forward)(nn_backend *be, const nn_op *op, float *y, const float *x);
    int (*relu_backward)(nn_backend *be, const nn_op *op, float *dx, const float *dy, const float *y);
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
} nn_backend_ops;

typedef struct nn_backend_opts {
    int threads;          /* 0: all cores */
    int autotune;         /* cuDNN algorithm search: 1 on (default), 0 heuristics */
    const char *precision;/* "fp32" (default) or "tf32" */
    int quiet;            /* 1: no informational messages on stderr */
    int device;           /* GPU back-ends: the CUDA device index (0 default; data-parallel replica r uses r) */
} nn_backend_opts;

struct nn_backend {
    const nn_backend_ops *ops;
    void *ctx;                    /* back-end private */
    char name[16];                /* "ref", "dnnl", "cudnn" */
    char device[160];             /* human-readable device description */
    nn_backend_opts opts;
    size_t bytes_in_use, bytes_peak;  /* maintained by nn_dev_alloc / nn_dev_free */
};

/* Registry (backend.c is the one place that knows which back-ends were built).
 * name: "ref", "dnnl", "cudnn" or "auto" (cudnn if a device is present, then dnnl, then ref).
 * On failure returns SD_ENODEV/SD_EUNSUPPORTED with a message saying why. *fallback_note (may be NULL)
 * receives why auto skipped a back-end ("cudnn: no CUDA device: ..."), or "" if none was skipped. */
int nn_backend_new(nn_backend **out, const char *name, const nn_backend_opts *opts,
                   char *fallback_note, size_t note_len);
void nn_backend_free(nn_backend *be);
/* Names of the back-ends compiled into this binary, comma-separated ("ref,dnnl,cudnn"). */
const char *nn_backend_list(void);
int nn_backend_compiled(const char *name);

/* Memory through the table, with peak accounting. */
int nn_dev_alloc(nn_backend *be, void **out, size_t bytes);
void nn_dev_free(nn_backend *be, void *p, size_t bytes);

/* Constructors, one per back-end. */
int nn_ref_new(nn_backend **out, const nn_backend_opts *opts);
int nn_dnnl_new(nn_backend **out, const nn_backend_opts *opts);
int nn_cudnn_new(nn_backend **out, const nn_backend_opts *opts);
/* Library versions and devices for the environment fingerprint, without creating a back-end: keys
 * "lib.NAME" are library versions (lib.onednn, lib.cuda_runtime, lib.cuda_driver, lib.cudnn, lib.cublas),
 * others describe devices (gpu_count, gpu_name, gpu_memory_bytes, gpu_note). Each compiled back-end
 * contributes its own; the registry calls them. */
void nn_backend_libraries(nn_env_fn add, void *user);
void nn_dnnl_libraries(nn_env_fn add, void *user);
void nn_cudnn_libraries(nn_env_fn add, void *user);

#endif
