/* cudnn_be — internals of the cuDNN + cuBLAS back-end shared by its files and its tests: the CHECK
 * macro family, per-op descriptor sets (pure shape logic, usable without a GPU), algorithm choice and
 * the extern "C" launch wrappers of the small CUDA kernels (cudnn_kernels.cu). */
#ifndef SD_BE_CUDNN_H
#define SD_BE_CUDNN_H

#include "core/err.h"
#include "nn/backend_impl.h"

#include <cuda_runtime.h>
#include <cudnn.h>
#include <cublas_v2.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- CHECK family: every CUDA, cuDNN and cuBLAS call goes through one of these. On failure the
 * message names the library, the call, its code and text, file:line and the hint; the function
 * returns SD_EBACKEND. hint: what the user can do ("" for none). */
#define CUDA_CHECK(call, hint) \
    SD_CHECK_GEN("CUDA", cudaError_t, call, r == cudaSuccess, r, cudaGetErrorString(r), hint)
#define CUDNN_CHECK(call, hint) \
    SD_CHECK_GEN("cuDNN", cudnnStatus_t, call, r == CUDNN_STATUS_SUCCESS, r, cudnnGetErrorString(r), hint)
#define CUBLAS_CHECK(call, hint) \
    SD_CHECK_GEN("cuBLAS", cublasStatus_t, call, r == CUBLAS_STATUS_SUCCESS, r, cublasGetStatusString(r), hint)

/* Common hints. */
#define CU_HINT_KERNEL "a kernel failed or was launched with a bad configuration; rerun with CUDA_LAUNCH_BLOCKING=1 " \
                       "and compute-sanitizer to locate it"
#define CU_HINT_MEM    "device memory exhausted: lower the batch size or free the GPU (nvidia-smi)"
#define CU_HINT_DESC   "a tensor shape cuDNN rejects: check the workload's layer sizes"

/* ---- starting: no device, an old driver, a broken cuDNN (cudnn_load.c) ---------------------------------- */

/* Short phrase for a cudaGetDeviceCount failure: "insufficient driver", "no device", else the name. */
const char *cu_count_phrase(cudaError_t e);
/* Sets the SD_ENODEV message for a failed/empty cudaGetDeviceCount(e, count) and returns SD_ENODEV;
 * returns 0 if e == cudaSuccess and count > 0. driver: cudaDriverGetVersion's (12020 for CUDA 12.2; 0 with
 * no driver), so "insufficient driver" says whether the driver is missing or older than the runtime. */
int cu_device_count_status(cudaError_t e, int count, int driver);
/* The oldest Linux driver a CUDA major version runs on (13: 580); 0 if unknown. */
int cu_min_driver(int cuda_major);
/* "9.19.0" from 91900 with major_div 10000, minor_div 100. */
void cu_version3(char *buf, size_t len, int v, int major_div, int minor_div);

/* cuDNN 9 loads its sub-libraries lazily: a missing or mismatched one would fail the first op that needs it
 * (SUBLIBRARY_LOADING_FAILED, 1008). Their version checks load them all when the back-end starts. */
typedef struct cu_sublib { const char *lib; cudnnStatus_t (*check)(void); } cu_sublib;
enum { CU_NSUBLIBS = 4 };
extern const cu_sublib cu_cudnn_sublibs[CU_NSUBLIBS];   /* graph, ops, cnn, adv */
/* 0, or SD_EBACKEND naming the first library whose check fails, its status and a hint. */
int cu_check_sublibs(const cu_sublib *libs, int n);

/* cuDNN 9 status codes are a category (a multiple of 1000) plus a specific code: NOT_SUPPORTED comes back as
 * 3000 or as 3001..3014. Is st in category cat (CUDNN_STATUS_NOT_SUPPORTED, CUDNN_STATUS_BAD_PARAM, ...)? */
static inline int cu_status_is(cudnnStatus_t st, cudnnStatus_t cat) {
    return CUDNN_STATUS_CATEGORY((int)st) == (int)cat;
}

/* The stream a cuDNN back-end queues all its work on (the NCCL reducer orders its all-reduce against it with
 * events); NULL if be is not a cuDNN back-end. */
cudaStream_t cu_backend_stream(nn_backend *be);

/* ---- input errors found on the device ------------------------------------------------------------------ */

/* The loss kernel flags a bad label in slots CU_BAD_LABEL, the embedding kernel a bad token id in CU_BAD_TOKEN,
 * each {flag, value} in one device int[CU_BAD_INTS]; read back at the next sync or download (no per-batch wait). */
enum { CU_BAD_LABEL = 0, CU_BAD_TOKEN = 2, CU_BAD_INTS = 4 };
/* SD_EINPUT naming the bad token id (checked first: the embedding runs before the loss) or label; 0 if none. */
int cu_bad_status(const int bad[CU_BAD_INTS], int classes, int vocab);

/* ---- precision (cudnn_precision.c) --------------------------------------------------------------------
 * fp32: FMA math only (no TF32 on Ampere and later). tf32: TF32 tensor-op math for convolutions, RNNs and cuBLAS.
 * fp16, bf16: mixed precision (docs/precision.md): convolutions on 16-bit copies of x, w and dy (cuDNN's legacy
 * API computes PSEUDO_HALF_CONFIG / PSEUDO_BFLOAT16_CONFIG: 16-bit x, w, y, fp32 compute, so its outputs y, dx and
 * dw are 16-bit and widened to the fp32 buffers), dense layers through cublasGemmEx on 16-bit copies of x, w and
 * dy into fp32 y, dx, dw += (CUBLAS_COMPUTE_32F); everything else fp32, GRU and LSTM included. */
typedef enum cu_prec { CU_PREC_FP32 = 0, CU_PREC_TF32 = 1, CU_PREC_FP16 = 2, CU_PREC_BF16 = 3 } cu_prec;

/* "fp32" (or NULL), "tf32", "fp16", "bf16" -> *out; SD_EUSAGE naming the choices otherwise. */
int cu_prec_parse(const char *name, cu_prec *out);
const char *cu_prec_name(cu_prec p);
static inline int cu_prec_half(cu_prec p) { return p == CU_PREC_FP16 || p == CU_PREC_BF16; }
/* The data type of the convolutions' x, w, y: HALF, BFLOAT16, else FLOAT. */
cudnnDataType_t cu_prec_cudnn_type(cu_prec p);
/* The cublasGemmEx input type of a 16-bit precision: CUDA_R_16F, CUDA_R_16BF (else CUDA_R_32F). */
cudaDataType cu_prec_blas_type(cu_prec p);
/* The math type convolutions are set up with: fp32 FMA, tf32 DEFAULT (TF32 allowed), fp16/bf16 TENSOR_OP. */
cudnnMathType_t cu_prec_conv_math(cu_prec p);
/* What the back-end runs under p, for the results' environment.backend_impl. */
void cu_prec_impl(cu_prec p, char *buf, size_t len);
/* 0, or SD_EUSAGE when the GPU (compute capability major.minor) cannot compute p: bf16 convolutions need 8.0. */
int cu_prec_check_device(cu_prec p, int major, int minor, const char *gpu);

/* The 16-bit copies of one op's operands on the device: a scratch buffer shared by every op of a back-end (one
 * stream), grown at prepare to the largest op's cu_half_bytes, and the handles the calls run on. */
typedef struct cu_half {
    cu_prec prec;                 /* CU_PREC_FP16 or CU_PREC_BF16; anything else: not in use */
    cudnnHandle_t dnn;
    cublasHandle_t blas;
    cudaStream_t stream;
    void *buf;                    /* [x | w | y or dy], each 16-bit and 256-byte aligned */
    size_t size;
} cu_half;

/* Scratch bytes a dense or conv2d op needs (0 for other kinds). */
size_t cu_half_bytes(const nn_op *op);
/* Grows h's scratch to bytes (waits for the stream first), accounted in be's memory. */
int cu_half_reserve(cu_half *h, nn_backend *be, size_t bytes);
void cu_half_fini(cu_half *h, nn_backend *be);

/* ---- per-op descriptors (created and set without touching a device) ------------------------------ */

enum { CU_FWD = 0, CU_BWD_DATA = 1, CU_BWD_FILTER = 2 };

typedef struct cu_descs {
    nn_op_kind kind;
    cudnnTensorDescriptor_t x, y, bias;    /* bias: [1][oc][1][1] (dense, conv) */
    cudnnFilterDescriptor_t w;             /* conv: [oc][c][kh][kw] */
    cudnnConvolutionDescriptor_t conv[3];  /* per direction: their math types may differ */
    cudnnPoolingDescriptor_t pool;
    cudnnActivationDescriptor_t act;
} cu_descs;

/* Creates and sets the descriptors op->kind needs (dense: x [n][c][1][1], y [n][oc][1][1]; conv: NCHW
 * cross-correlation, filter [oc][c][kh][kw]; maxpool: max, deterministic; relu; softmax/dropout: one
 * tensor each), math = the initial convolution math type. On failure everything is destroyed. */
int cu_descs_init(cu_descs *d, const nn_op *op, cudnnMathType_t math);
/* The same with a convolution's x, y and w in dt (HALF, BFLOAT16: cuDNN's pseudo-half configurations, compute
 * FLOAT); its bias and every other op stay FLOAT. */
int cu_descs_init_dt(cu_descs *d, const nn_op *op, cudnnMathType_t math, cudnnDataType_t dt);
void cu_descs_fini(cu_descs *d);
/* Output dims as cuDNN infers them from the descriptors (conv/maxpool; others: the op's shape). */
int cu_descs_output_dims(const cu_descs *d, const nn_op *op, int out[4]);
/* 0 if cuDNN's output dims equal the op's (n, oc, oh, ow); SD_EINPUT naming both otherwise. */
int cu_descs_check(const cu_descs *d, const nn_op *op);

/* ---- algorithm choice ------------------------------------------------------------------------------ */

/* One candidate, converted from any of the three cudnnConvolution*AlgoPerf_t types. */
typedef struct cu_algo_perf {
    int algo;
    cudnnStatus_t status;
    float time_ms;           /* measured (Find*Ex) or -1 (heuristics) */
    size_t memory;
    cudnnMathType_t math;
} cu_algo_perf;

/* Index of the first usable candidate (results come best first): status success, workspace within
 * ws_limit, and with tensor_ops == 0 (fp32) no tensor-op math. -1 if none. */
int cu_algo_pick(const cu_algo_perf *p, int n, size_t ws_limit, int tensor_ops);
/* The math type to run a picked candidate with: its own, except DEFAULT_MATH under fp32 (tensor_ops 0) becomes
 * FMA_MATH so that Ampere+ cannot silently use TF32. */
cudnnMathType_t cu_algo_math(cudnnMathType_t found, int tensor_ops);
/* Algorithm names ("IMPLICIT_PRECOMP_GEMM", "WINOGRAD_NONFUSED", ...); dir is CU_FWD etc. */
const char *cu_algo_name(int dir, int algo);

/* Choice for one convolution shape, cached per shape (the key) in the back-end context. */
typedef struct cu_conv_choice {
    char key[96];            /* "n64 3x32x32 -> 50 k3x3 s1x1 p1x1" (cu_conv_key) */
    cu_algo_perf dir[3];     /* chosen algorithm per direction (CU_FWD, CU_BWD_DATA, CU_BWD_FILTER) */
    int searched;            /* 1: cudnnFind*AlgorithmEx (autotune), 0: _v7 heuristics */
} cu_conv_choice;

void cu_conv_key(const nn_op *op, char *buf, size_t len);
/* The choice this back-end made for op's shape (cached by prepare); -1 if it has not prepared that shape. */
int cu_conv_choice_of(nn_backend *be, const nn_op *op, cu_conv_choice *out);

/* Relative tolerance against the reference for a convolution run with algorithm `algo` in direction dir under
 * precision prec (a cu_prec; 0 fp32, 1 tf32), by family: GEMM-like and direct algorithms sum the same products as
 * the reference (1e-5); Winograd and FFT transform the operands, their fp32 rounding grows with the transform
 * (1e-4); TF32 rounds the inputs to a 10-bit mantissa (5e-3, whatever the algorithm); fp16 and bf16 round x, w, dy
 * and the 16-bit output to 11 and 8 significant bits (unit roundoff u = 2^-11, 2^-8): 4u (2e-3, 1.6e-2, as
 * test_bf16.c holds dnnl's bf16 to), twice that for Winograd and FFT, whose transformed operands are rounded too. */
double cu_algo_tolerance(int dir, int algo, int prec);
/* The tolerance of a dense layer's y, dx, dw under prec (cublasGemmEx: fp32 accumulation and output): 4u for
 * fp16/bf16, 5e-3 for tf32, else 1e-5. */
double cu_prec_tolerance(int prec);
/* "fwd=IMPLICIT_GEMM(0.123 ms, ws 0 B, fma) bwd_data=... bwd_filter=... [find]" */
void cu_conv_choice_str(const cu_conv_choice *c, char *buf, size_t len);

/* ---- kernel launch wrappers (cudnn_kernels.cu). Each launches on stream and returns
 * cudaGetLastError(), so the C side checks it with CUDA_CHECK. ---------------------------------------- */

cudaError_t cu_launch_sgd(float *p, const float *g, float *v, size_t n, float lr, float momentum,
                          cudaStream_t s);
cudaError_t cu_launch_rmsprop(float *p, const float *g, float *a, size_t n, float lr, float rho, float eps,
                              cudaStream_t s);
cudaError_t cu_launch_adadelta(float *p, const float *g, float *a, float *da, size_t n, float lr, float rho,
                               float eps, cudaStream_t s);
cudaError_t cu_launch_adam(float *p, const float *g, float *m, float *v, size_t n, float lr, float beta1,
                           float beta2, float eps, float bc1, float bc2, cudaStream_t s);
/* mask[i] = nn_dropout_keep(seed, i, rate); y[i] = nn_dropout_apply(x[i], mask[i], rate). */
cudaError_t cu_launch_dropout_fwd(float *y, uint8_t *mask, const float *x, size_t n, uint64_t seed, float rate,
                                  cudaStream_t s);
cudaError_t cu_launch_dropout_bwd(float *dx, const float *dy, const uint8_t *mask, size_t n, float rate,
                                  cudaStream_t s);
/* loss[i] = nn_xent_row_loss(logits row i); a label outside [0,C) gives NaN and sets
 * bad[0] = 1, bad[1] = the label (read back at the next sync). */
cudaError_t cu_launch_xent_loss(float *loss, const float *logits, const int32_t *labels, int n, int C,
                                int *bad, cudaStream_t s);
cudaError_t cu_launch_xent_grad(float *dlogits, const float *prob, const int32_t *labels, int n, int C,
                                cudaStream_t s);

/* graph ops: y[i] = a[i] + b[i] (y may be a); sigmoid BCE per nn/kernels.h (one thread per
 * example for the loss: prob[i][k] = nn_sigmoid, loss[i] = mean_k nn_bce_logit); dlogits = (prob - t) / (n C). */
cudaError_t cu_launch_add(float *y, const float *a, const float *b, size_t n, cudaStream_t s);
cudaError_t cu_launch_bce_loss(float *prob, float *loss, const float *logits, const float *targets, int n, int C,
                               cudaStream_t s);
cudaError_t cu_launch_bce_grad(float *dlogits, const float *prob, const float *targets, int n, int C,
                               cudaStream_t s);
/* mixed precision (nn/half.h): dst[i] = the 16-bit (bf16 ? bfloat16 : IEEE half) of src[i]; back to fp32,
 * dst[i] = (or += when accumulate) the widened src[i]. */
cudaError_t cu_launch_to_half(uint16_t *dst, const float *src, size_t n, int bf16, cudaStream_t s);
cudaError_t cu_launch_from_half(float *dst, const uint16_t *src, size_t n, int bf16, int accumulate, cudaStream_t s);
/* loss scaling: x[i] *= scale (nn_scale_elem); an inf or NaN result sets *flag = 1 (flag NULL: not asked). */
cudaError_t cu_launch_scale(float *x, size_t n, float scale, int *flag, cudaStream_t s);

/* ---- the mixed-precision products (cudnn_precision.c): dense and conv2d under fp16/bf16 ------------------
 * The same contracts as the fp32 ops (nn/backend_impl.h) without the bias, which the caller adds and reduces in
 * fp32: forward y = op(x, w); backward dw += (accumulated in fp32), dx overwritten (NULL: skipped). d: the op's
 * descriptors made with cu_descs_init_dt in the 16-bit type; ch: the algorithms chosen on them; ws: the
 * convolution workspace (at least each chosen algorithm's memory). */
int cu_half_dense_forward(cu_half *h, const nn_op *op, float *y, const float *x, const float *w);
int cu_half_dense_backward(cu_half *h, const nn_op *op, float *dx, float *dw, const float *dy, const float *x,
                           const float *w);
int cu_half_conv_forward(cu_half *h, const cu_descs *d, const cu_conv_choice *ch, void *ws, const nn_op *op, float *y,
                         const float *x, const float *w);
int cu_half_conv_backward(cu_half *h, const cu_descs *d, const cu_conv_choice *ch, void *ws, const nn_op *op,
                          float *dx, float *dw, const float *dy, const float *x, const float *w);

/* ---- recurrent ops: cudnn_rnn.c and the embedding kernels ------------------------------------ */

/* y[r][e] = table[id(r)][e] over nt = n*T rows, id(r) = ids[(r / T) * S + r % T] (S: ids per example); an
 * id outside [0, V) gives NaN and sets bad[0] = 1, bad[1] = the id. Backward: dtable[id(r)][e] += dy[r][e]
 * (atomicAdd). */
cudaError_t cu_launch_embedding_fwd(float *y, const int32_t *ids, const float *table, size_t nt, int T, int S, int E,
                                    int V, int *bad, cudaStream_t s);
cudaError_t cu_launch_embedding_bwd(float *dtable, const float *dy, const int32_t *ids, size_t nt, int T, int S, int E,
                                    int V, cudaStream_t s);
/* RepeatVector: y[i][t][k] = x[i][k] over n x T x C; backward dx[i][k] = sum_t dy[i][t][k] (overwrite). */
cudaError_t cu_launch_repeat_fwd(float *y, const float *x, int n, int T, int C, cudaStream_t s);
cudaError_t cu_launch_repeat_bwd(float *dx, const float *dy, int n, int T, int C, cudaStream_t s);

/* GRU / LSTM through cudnnRNNForward / cudnnRNNBackwardData_v8 / cudnnRNNBackwardWeights_v8: one layer,
 * unidirectional, CUDNN_RNN_DOUBLE_BIAS, batch-major unpacked data ([N][T][F], nn/backend.h), zero
 * initial state. cuDNN's linLayerIDs are the canonical gate order (GRU r, z, n; LSTM i, f, g, o), each
 * matrix [H][in] row-major as PyTorch's cuDNN path copies them; the weight space offsets are queried at
 * setup and, unless they are exactly the canonical slice, weights are copied in and gradients added back
 * per matrix. The last-state variant takes h_T from hy and keeps the full output sequence in the op's
 * workspace. */
typedef struct cu_rnn {
    cudnnRNNDescriptor_t rnn;
    cudnnRNNDataDescriptor_t xd, yd;
    cudnnTensorDescriptor_t hd;          /* [1][N][H] */
    cudnnDropoutDescriptor_t drop;       /* rate 0, set by cu_rnn_setup (it needs the handle) */
    cudnnMathType_t math;
    int G, N, T, F, H, ret_seq;
    int32_t *dev_seq;                    /* device [N], every entry T */
    size_t wspace, work, reserve;        /* bytes */
    size_t off_m[8], off_b[8];           /* byte offsets of each linLayerID's matrix and bias in weight space */
    int canonical;                       /* weight space == the canonical slice */
    void *wbuf, *dwbuf;                  /* weight space and its gradient when not canonical */
} cu_rnn;

/* auxFlags of the RNN descriptor: the data descriptors use an unpacked layout, which cuDNN accepts only with
 * padded I/O enabled (cudnnSetRNNDescriptor_v8). */
#define CU_RNN_DATA_LAYOUT CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED
#define CU_RNN_AUX_FLAGS CUDNN_RNN_PADDED_IO_ENABLED
/* Descriptors only (no device needed): shapes and modes as above. */
int cu_rnn_descs_init(cu_rnn *r, const nn_op *op, cudnnMathType_t math);
/* Device part: weight space layout, temp/reserve sizes, sequence lengths. */
int cu_rnn_setup(cu_rnn *r, cudnnHandle_t h, cudaStream_t s);
void cu_rnn_fini(cu_rnn *r);
/* Op workspace bytes: reserve space, then (last state) the output sequence and a zero dy sequence, then a
 * dx sink for backward without dx. */
size_t cu_rnn_ws_bytes(const cu_rnn *r);
/* train = 0: CUDNN_FWD_MODE_INFERENCE, nothing kept for backward. One backward per training forward: cuDNN's
 * backward-data writes the reserve space (non-const in its prototype) that backward-weights then reads. */
int cu_rnn_forward(cu_rnn *r, cudnnHandle_t h, cudaStream_t s, void *work, float *y, void *ws, const float *x,
                   const float *w, int train);
int cu_rnn_backward(cu_rnn *r, cudnnHandle_t h, cublasHandle_t blas, cudaStream_t s, void *work, float *dx,
                    float *dw, const float *dy, const float *x, const float *w, const float *y, const void *ws);

#ifdef __cplusplus
}
#endif

#endif
