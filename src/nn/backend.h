/* backend — the thin boundary between the shared engine and a compute back-end.
 * A back-end is a table of primitives plus a private context (as ggml_backend_i). The graph, training
 * loop, data, timing and metrics are shared; a back-end only allocates device memory, moves bytes and
 * runs the primitives below on explicit buffers. An entry left NULL means "not supported here".
 * The reference back-end (be_ref/ref.c) is the specification: every other back-end is tested against it.
 * This is the users' header (commands, results, the report); the ops table and a back-end's fields are in
 * backend_impl.h, for the engine (graph, training) and the back-ends, as ggml keeps ggml-backend-impl.h. */
#ifndef SD_NN_BACKEND_H
#define SD_NN_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#define NN_OP_MAX_INPUTS 4   /* inputs of one op (add, concat) */

typedef struct nn_backend nn_backend;

typedef enum nn_op_kind {
    NN_OP_DENSE = 0,
    NN_OP_CONV2D,
    NN_OP_MAXPOOL,
    NN_OP_RELU,
    NN_OP_DROPOUT,
    NN_OP_FLATTEN,      /* a view: no primitive, the graph aliases the buffer */
    NN_OP_SOFTMAX_XENT, /* softmax + cross-entropy loss against integer labels */
    /* graph ops */
    NN_OP_ADD,          /* elementwise sum of its inputs (residual connections) */
    NN_OP_CONCAT,       /* concatenation of its inputs along the channel axis (dense connections) */
    NN_OP_BATCHNORM,    /* per-channel batch normalisation, learnable gamma/beta, running statistics */
    NN_OP_AVGPOOL,      /* average pooling; padded positions are not counted */
    NN_OP_GLOBAL_AVGPOOL, /* average over the whole plane: CxHxW -> Cx1x1 (an avgpool with window HxW) */
    NN_OP_SIGMOID_BCE,  /* sigmoid + binary cross-entropy against float targets (multi-label loss) */
    /* recurrent ops */
    NN_OP_EMBEDDING,    /* int32 token ids -> vectors (a table lookup) */
    NN_OP_GRU,          /* cuDNN's GRU (= oneDNN lbr_gru, PyTorch nn.GRU, Keras reset_after=True) */
    NN_OP_LSTM,         /* cuDNN's LSTM (= PyTorch nn.LSTM: two bias vectors) */
    NN_OP_REPEAT,       /* Keras RepeatVector: a vector [c] -> the sequence [oc = times][1][c] */
    NN_OP_COUNT
} nn_op_kind;

/* What the engine knows of an op kind: one row per nn_op_kind in nn/op.c (a static_assert keeps the table as
 * long as the enum). Adding an op is one row there plus its code: shapes (nn/plan.c), the passes (nn/run.c),
 * the back-ends' primitives. */
enum {
    NN_OPF_JOIN = 1,      /* reads several inputs (add, concat); every other op reads one */
    NN_OPF_LOSS = 2,      /* the loss appended as the last layer */
    NN_OPF_PRODUCT = 4,   /* a product with weights: backward costs two (data and weight gradients) */
};
typedef struct nn_op_info {
    const char *name;        /* "dense": layer names ("dense_1"), messages, exports */
    const char *spec_name;   /* the layer op a spec writes ("repeat_vector"); NULL: not written as a layer */
    unsigned flags;          /* NN_OPF_* */
    size_t fwd, bwd;         /* offsetof(nn_backend_ops, ...) of the primitives a layer needs forward and, when
                              * training, backward; 0: none (a view) */
} nn_op_info;
/* The row of k; an unknown kind gets a row named "?". */
const nn_op_info *nn_op_info_of(nn_op_kind k);
const char *nn_op_name(nn_op_kind k);

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
    /* recurrent ops: see "Sequence tensors" below */
    int units;                    /* gru/lstm: hidden size H; embedding: vector size E */
    int vocab;                    /* embedding: table rows V (ids in [0, V)) */
    int ret_seq;                  /* gru/lstm: 1 output every step's h, 0 only the last one */
    int ids_stride;               /* embedding: ids per example in the input (0: c) */
    int ids_off;                  /* embedding: first id this op reads; the graph passes ids + ids_off */
    int seqs;                     /* gru/lstm: > 1 when the graph folded that many independent sequences per
                                   * example into n (Keras TimeDistributed); kernels ignore it */
    void *priv;                   /* back-end state made by prepare(), freed by release() */
    int fmt_in, fmt_out;          /* nn_fmt of the input (and dx) and of the output (and dy); set by the graph
                                   * before prepare(), NN_FMT_NCHW unless the back-end's layout_ok agreed */
    /* graph ops */
    int ninputs;                  /* add, concat: number of inputs (each [n][in_c[i]][h][w]) */
    int in_c[NN_OP_MAX_INPUTS];   /* concat: channels of each input (sum = oc) */
    float eps, momentum;          /* batchnorm: variance epsilon; running-statistics momentum (PyTorch's) */
    /* Channel slices (nn/fuse.c "concat slabs"): a tensor may be the first channels of a bigger buffer, the
     * example stride then counting the buffer's channels. Set by the graph before prepare(); 0 everywhere else. */
    int in_cs;                    /* batchnorm (bn_fused_*): x and dx are the first c of in_cs channels (0: c) */
    int out_cs;                   /* concat: y and dy are the first oc of out_cs channels (0: oc) */
    int cat_inplace;              /* concat: input 0 already is y's first in_c[0] channels: not copied either way */
    int in_fmt[NN_OP_MAX_INPUTS]; /* concat: nn_fmt of each input (and its gradient) */
} nn_op;

/* Sequence tensors. A sequence of T vectors of F features is stored per example as [T][F]
 * (time outer, features contiguous, batch outermost: [n][T][F], PyTorch batch_first / Keras). In the
 * NCHW shape fields it is carried as c = T, h = 1, w = F, so element counts and NCHW indexing hold.
 *   embedding: input  n x T int32 ids (c = T, h = w = 1), example i's at ids[i * stride] (stride = ids_stride,
 *              or T when 0); output (oc, oh, ow) = (T, 1, E = units); table [V][E] row-major (row = token id).
 *   repeat:    input (c, 1, 1); output (times, 1, c): y[i][t][k] = x[i][k]; backward dx[i][k] = sum_t dy[i][t][k].
 *   gru/lstm:  input (c, h, w) = (T, 1, F); output (T, 1, H) when ret_seq, else (oc, oh, ow) = (H, 1, 1)
 *              (the last step's h). Initial state h0 = 0 (and c0 = 0); T >= 1.
 * Recurrent weights are one contiguous slice in PyTorch's / cuDNN's per-matrix layout:
 *   W_x [G][H][F]  (input weights, row = output unit: PyTorch weight_ih_l0)
 *   W_h [G][H][H]  (recurrent weights: weight_hh_l0)
 *   b_x [G][H]     (bias_ih_l0)
 *   b_h [G][H]     (bias_hh_l0)      -> G*(H*F + H*H + 2*H) parameters
 * GRU, G = 3, gate order r (reset), z (update), n (new) — cuDNN linLayerID 0,1,2 / 3,4,5:
 *   r = sig(W_xr x + b_xr + W_hr h + b_hr)        z = sig(W_xz x + b_xz + W_hz h + b_hz)
 *   n = tanh(W_xn x + b_xn + r * (W_hn h + b_hn))  h' = (1 - z) * n + z * h
 * LSTM, G = 4, gate order i, f, g, o — cuDNN linLayerID 0..3 / 4..7:
 *   i = sig(a_i)  f = sig(a_f)  g = tanh(a_g)  o = sig(a_o)   with a_k = W_xk x + b_xk + W_hk h + b_hk
 *   c' = f * c + i * g          h' = o * tanh(c')
 * oneDNN orders its lbr_gru gates u(=z), r, o(=n), keeps [F][G][H] (ldigo) weights and one bias per gate
 * plus b_hn; LSTM gates i, f, c(=g), o with one bias (b_x + b_h): be_dnnl converts at each call (the
 * weights change every step; the copies are small next to the recurrence). */
#define NN_GRU_GATES 3
#define NN_LSTM_GATES 4
/* Parameters of a gru/lstm layer with F inputs and H units (the layout above). */
static inline long long nn_rnn_params(int gates, int f, int h) {
    return (long long)gates * ((long long)h * f + (long long)h * h + 2LL * h);
}

/* Activation layouts: memory is kept in the library's preferred layouts between layers and reordered
 * only at the model's edges. Every buffer the engine sees is NN_FMT_NCHW unless the graph and the back-end
 * agreed on another layout for a chain of layers (nn_model_build, "layouts"): then the producer writes it,
 * the element-wise ops between keep it, the consumer reads it, and their gradients use it too.
 * NN_FMT_NCHW16C is oneDNN's nChw16c: channels in blocks of 16, the block innermost, [n][C/16][h][w][16],
 * channels padded with zeros to a multiple of 16; NN_FMT_NCHW8C the same by 8 (nChw8c, what oneDNN's AVX2
 * kernels block by). NN_FMT_NHWC is nhwc, [n][h][w][C]: one block of all C channels, never padded (what
 * oneDNN 2.6's AMX convolutions read and write; SD_DNNL_BLOCK=nhwc). A model uses one of them. The model input, the model output,
 * the loss, flatten and any tensor read by more than one layer stay NCHW. */
typedef enum nn_fmt { NN_FMT_NCHW = 0, NN_FMT_NCHW16C = 1, NN_FMT_NCHW8C = 2, NN_FMT_NHWC = 3 } nn_fmt;
/* Channels in a block of fmt for a tensor of C channels: 16, 8, C (NHWC) or 1 (NCHW). */
static inline size_t nn_fmt_block(int fmt, size_t C) {
    return fmt == NN_FMT_NCHW16C ? 16 : fmt == NN_FMT_NCHW8C ? 8 : fmt == NN_FMT_NHWC ? (C ? C : 1) : 1;
}
/* oneDNN's name of fmt: "nchw", "nChw16c", "nChw8c", "nhwc". */
static inline const char *nn_fmt_name(int fmt) {
    return fmt == NN_FMT_NCHW16C ? "nChw16c" : fmt == NN_FMT_NCHW8C ? "nChw8c" : fmt == NN_FMT_NHWC ? "nhwc" : "nchw";
}
/* Floats of an n x c x h x w tensor in fmt (with padding). */
static inline size_t nn_fmt_elems(int fmt, int n, int c, int h, int w) {
    const size_t B = nn_fmt_block(fmt, (size_t)c);
    return (size_t)n * (((size_t)c + B - 1) / B * B) * (size_t)h * (size_t)w;
}
/* Where element (n, c, hw) of a tensor with C channels and HW = h*w positions sits in fmt. */
static inline size_t nn_fmt_at(int fmt, size_t C, size_t HW, size_t n, size_t c, size_t hw) {
    const size_t B = nn_fmt_block(fmt, C);
    return ((n * ((C + B - 1) / B) + c / B) * HW + hw) * B + c % B;
}

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

typedef struct nn_backend_opts {
    int threads;          /* 0: all cores */
    int autotune;         /* cuDNN algorithm search: 1 on (default), 0 heuristics */
    const char *precision;/* "fp32" (default), "tf32" (cudnn), "bf16" (dnnl and cudnn: bf16 products, fp32 master
                           * weights, optimizer state, accumulation and loss) or "fp16" (cudnn: the same in fp16,
                           * with loss scaling by the training loop, nn/train.h); ref computes fp32 only */
    int quiet;            /* 1: no informational messages on stderr */
    int device;           /* GPU back-ends: the CUDA device index (0 default; data-parallel replica r uses r) */
} nn_backend_opts;

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
/* Whether the back-end of this name runs on a GPU (device memory, GPU clocks): cudnn. NULL is not one. */
int nn_backend_name_gpu(const char *name);

/* What a user of a back-end reads; its ops table and fields are the engine's and the back-ends' business
 * (nn/backend_impl.h). */
const char *nn_backend_name(const nn_backend *be);            /* "ref", "dnnl", "cudnn" */
const char *nn_backend_device(const nn_backend *be);          /* human-readable device description */
const nn_backend_opts *nn_backend_options(const nn_backend *be);
size_t nn_backend_peak_bytes(const nn_backend *be);           /* device memory peak since the last reset */
void nn_backend_reset_peak(nn_backend *be);                   /* peak := what is in use now */
void nn_backend_env(nn_backend *be, nn_env_fn add, void *user);  /* the back-end's own settings, if it has any */

/* Library versions and devices for the environment fingerprint, without creating a back-end: keys
 * "lib.NAME" are library versions (lib.onednn, lib.cuda_runtime, lib.cuda_driver, lib.cudnn, lib.cublas),
 * others describe devices (gpu_count, gpu_name, gpu_memory_bytes, gpu_note). Each compiled back-end
 * contributes its own; the registry calls them. */
void nn_backend_libraries(nn_env_fn add, void *user);

#endif
