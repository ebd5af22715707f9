/* cudnn_precision — the cuDNN back-end's precisions (fp32, tf32, fp16, bf16) and its mixed-precision products:
 * dense layers through cublasGemmEx and convolutions through cuDNN's legacy API on 16-bit copies of their operands,
 * made in one scratch buffer by the conversion kernels (cudnn_kernels.cu, nn/half.h) and widened back into
 * the fp32 buffers the engine keeps. Everything runs on the back-end's one stream, in the order written, so the
 * scratch regions can be reused within an op without waiting. */
#include "be_cudnn/cudnn_be.h"

#include <stdio.h>
#include <string.h>

/* ---- precision names and types ------------------------------------------------------------------------------ */

static const char *const k_names[] = {"fp32", "tf32", "fp16", "bf16"};

int cu_prec_parse(const char *name, cu_prec *out) {
    *out = CU_PREC_FP32;
    if (!name) return 0;
    for (int p = 0; p < 4; p++)
        if (strcmp(name, k_names[p]) == 0) { *out = (cu_prec)p; return 0; }
    return sd_err(SD_EUSAGE, "cudnn: unknown precision '%s' (expected fp32, tf32, fp16 or bf16)", name);
}

const char *cu_prec_name(cu_prec p) { return (unsigned)p < 4 ? k_names[p] : "?"; }

cudnnDataType_t cu_prec_cudnn_type(cu_prec p) {
    return p == CU_PREC_FP16 ? CUDNN_DATA_HALF : p == CU_PREC_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
}

cudaDataType cu_prec_blas_type(cu_prec p) {
    return p == CU_PREC_FP16 ? CUDA_R_16F : p == CU_PREC_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

cudnnMathType_t cu_prec_conv_math(cu_prec p) {
    switch (p) {
    case CU_PREC_TF32: return CUDNN_DEFAULT_MATH;      /* TF32 allowed on Ampere and later */
    case CU_PREC_FP16:
    case CU_PREC_BF16: return CUDNN_TENSOR_OP_MATH;    /* tensor cores, no down-conversion asked for */
    default: return CUDNN_FMA_MATH;                    /* fp32: no TF32 */
    }
}

void cu_prec_impl(cu_prec p, char *buf, size_t len) {
    if (!cu_prec_half(p)) {
        snprintf(buf, len, "cuDNN conv/pool/ReLU/softmax, cuBLAS sgemm dense, CUDA kernels for dropout, loss, optimizer");
        return;
    }
    const char *n = cu_prec_name(p);
    snprintf(buf, len, "cuDNN %s (convolutions and dense matmuls on %s copies of x, w, dy, tensor cores, fp32 "
             "accumulation; fp32 elsewhere, GRU/LSTM fp32%s): cuDNN conv/pool/ReLU/softmax, cuBLAS GemmEx dense, CUDA "
             "kernels for dropout, loss, optimizer, %s conversion", n, n,
             p == CU_PREC_FP16 ? "; the training loop scales the loss" : "", n);
}

int cu_prec_check_device(cu_prec p, int major, int minor, const char *gpu) {
    if (p == CU_PREC_BF16 && major < 8)
        return sd_err(SD_EUSAGE, "cudnn: bf16 is not supported on %s (compute capability %d.%d; cuDNN's bf16 "
                      "convolutions need 8.0, Ampere or newer; --precision fp16 runs here)", gpu, major, minor);
    return 0;
}

/* ---- the scratch buffer: [x | w | y], 16-bit, each part 256-byte aligned ------------------------------------ */

#define ALIGN_UP(b) (((b) + 255) / 256 * 256)

typedef struct half_parts { uint16_t *x, *w, *y; size_t nx, nw, ny; } half_parts;

static int counts(const nn_op *op, size_t *nx, size_t *nw, size_t *ny) {
    *nx = (size_t)op->n * op->c * op->h * op->w;
    *ny = (size_t)op->n * op->oc * op->oh * op->ow;
    if (op->kind == NN_OP_DENSE) *nw = (size_t)op->oc * op->c;
    else if (op->kind == NN_OP_CONV2D) *nw = (size_t)op->oc * op->c * op->kh * op->kw;
    else return 0;
    return 1;
}

size_t cu_half_bytes(const nn_op *op) {
    size_t nx, nw, ny;
    if (!counts(op, &nx, &nw, &ny)) return 0;
    return ALIGN_UP(2 * nx) + ALIGN_UP(2 * nw) + ALIGN_UP(2 * ny);
}

static int parts_of(const cu_half *h, const nn_op *op, half_parts *p) {
    if (!counts(op, &p->nx, &p->nw, &p->ny))
        return sd_err(SD_ERROR, "cudnn: internal: no 16-bit operands for op %d", (int)op->kind);
    if (cu_half_bytes(op) > h->size)
        return sd_err(SD_ERROR, "cudnn: internal: the 16-bit scratch (%zu bytes) is smaller than the op's %zu: not "
                      "prepared", h->size, cu_half_bytes(op));
    char *b = h->buf;
    p->x = (uint16_t *)b;
    p->w = (uint16_t *)(b + ALIGN_UP(2 * p->nx));
    p->y = (uint16_t *)(b + ALIGN_UP(2 * p->nx) + ALIGN_UP(2 * p->nw));
    return 0;
}

int cu_half_reserve(cu_half *h, nn_backend *be, size_t bytes) {
    if (bytes <= h->size) return 0;
    CUDA_CHECK(cudaStreamSynchronize(h->stream), CU_HINT_KERNEL);   /* the old buffer may still be read */
    if (h->buf) {
        CUDA_CHECK(cudaFree(h->buf), "");
        be->bytes_in_use -= h->size;
    }
    h->buf = NULL;
    h->size = 0;
    cudaError_t e = cudaMalloc(&h->buf, bytes);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();   /* not sticky: the next launch check must not report it again */
        h->buf = NULL;
        return sd_err_at(__FILE__, __LINE__, e == cudaErrorMemoryAllocation ? SD_ENOMEM : SD_EBACKEND,
                         "CUDA: cudaMalloc(%zu bytes) for the 16-bit operands returned %d (%s)\nHINT: %s", bytes,
                         (int)e, cudaGetErrorString(e), CU_HINT_MEM);
    }
    h->size = bytes;
    be->bytes_in_use += bytes;
    if (be->bytes_in_use > be->bytes_peak) be->bytes_peak = be->bytes_in_use;
    return 0;
}

void cu_half_fini(cu_half *h, nn_backend *be) {
    if (h->buf) {
        (void)cudaFree(h->buf);
        be->bytes_in_use -= h->size;
    }
    h->buf = NULL;
    h->size = 0;
}

static int to_half(const cu_half *h, uint16_t *dst, const float *src, size_t n) {
    CUDA_CHECK(cu_launch_to_half(dst, src, n, h->prec == CU_PREC_BF16, h->stream), CU_HINT_KERNEL);
    return 0;
}

static int from_half(const cu_half *h, float *dst, const uint16_t *src, size_t n, int accumulate) {
    CUDA_CHECK(cu_launch_from_half(dst, src, n, h->prec == CU_PREC_BF16, accumulate, h->stream), CU_HINT_KERNEL);
    return 0;
}

static const float k_one = 1.0f, k_zero = 0.0f;   /* cuDNN and cuBLAS take float scalars for 16-bit data */

/* ---- dense: cublasGemmEx, 16-bit inputs, fp32 accumulation and output (column-major views as be_cudnn.c) ----- */
/* C (m x n, fp32) = op(A) op(B) + beta C, A and B 16-bit (column-major). */
static int gemm16(cu_half *h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void *a, int lda,
                  const void *b, int ldb, const float *beta, float *c, int ldc) {
    const cudaDataType t = cu_prec_blas_type(h->prec);
    CUBLAS_CHECK(cublasGemmEx(h->blas, ta, tb, m, n, k, &k_one, a, t, lda, b, t, ldb, beta, c, CUDA_R_32F, ldc,
                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT), "");
    return 0;
}


int cu_half_dense_forward(cu_half *h, const nn_op *op, float *y, const float *x, const float *w) {
    half_parts p = {0};
    SD_TRY(parts_of(h, op, &p));
    SD_TRY(to_half(h, p.x, x, p.nx));
    SD_TRY(to_half(h, p.w, w, p.nw));
    /* y[n][oc] = x[n][c] . w[oc][c]^T   (column-major: Y(oc x n) = W^T(oc x c) X(c x n)) */
    return gemm16(h, CUBLAS_OP_T, CUBLAS_OP_N, op->oc, op->n, op->c, p.w, op->c, p.x, op->c, &k_zero, y, op->oc);
}

int cu_half_dense_backward(cu_half *h, const nn_op *op, float *dx, float *dw, const float *dy, const float *x,
                           const float *w) {
    half_parts p = {0};
    SD_TRY(parts_of(h, op, &p));
    SD_TRY(to_half(h, p.y, dy, p.ny));
    SD_TRY(to_half(h, p.x, x, p.nx));
    /* dw[oc][c] += dy^T x   (column-major: dW(c x oc) += X(c x n) DY(oc x n)^T) */
    SD_TRY(gemm16(h, CUBLAS_OP_N, CUBLAS_OP_T, op->c, op->oc, op->n, p.x, op->c, p.y, op->oc, &k_one, dw, op->c));
    if (!dx) return 0;
    SD_TRY(to_half(h, p.w, w, p.nw));
    /* dx[n][c] = dy[n][oc] w[oc][c]   (column-major: DX(c x n) = W(c x oc) DY(oc x n)) */
    return gemm16(h, CUBLAS_OP_N, CUBLAS_OP_N, op->c, op->n, op->oc, p.w, op->c, p.y, op->oc, &k_zero, dx, op->c);
}

/* ---- conv2d: cuDNN's pseudo-half configurations (16-bit x, w, y; fp32 compute) -------------------------------- */

int cu_half_conv_forward(cu_half *h, const cu_descs *d, const cu_conv_choice *ch, void *ws, const nn_op *op, float *y,
                         const float *x, const float *w) {
    half_parts p = {0};
    SD_TRY(parts_of(h, op, &p));
    const cu_algo_perf *a = &ch->dir[CU_FWD];
    SD_TRY(to_half(h, p.x, x, p.nx));
    SD_TRY(to_half(h, p.w, w, p.nw));
    CUDNN_CHECK(cudnnConvolutionForward(h->dnn, &k_one, d->x, p.x, d->w, p.w, d->conv[CU_FWD],
                                        (cudnnConvolutionFwdAlgo_t)a->algo, ws, a->memory, &k_zero, d->y, p.y), "");
    return from_half(h, y, p.y, p.ny, 0);
}

/* dy and x go to 16 bits first; the weight gradient is computed into the w part and added to dw, then w itself is
 * converted there for the data gradient, which lands in the x part (x is no longer needed). */
int cu_half_conv_backward(cu_half *h, const cu_descs *d, const cu_conv_choice *ch, void *ws, const nn_op *op,
                          float *dx, float *dw, const float *dy, const float *x, const float *w) {
    half_parts p = {0};
    SD_TRY(parts_of(h, op, &p));
    const cu_algo_perf *bf = &ch->dir[CU_BWD_FILTER], *bd = &ch->dir[CU_BWD_DATA];
    SD_TRY(to_half(h, p.y, dy, p.ny));
    SD_TRY(to_half(h, p.x, x, p.nx));
    CUDNN_CHECK(cudnnConvolutionBackwardFilter(h->dnn, &k_one, d->x, p.x, d->y, p.y, d->conv[CU_BWD_FILTER],
                                               (cudnnConvolutionBwdFilterAlgo_t)bf->algo, ws, bf->memory, &k_zero,
                                               d->w, p.w), "");
    SD_TRY(from_half(h, dw, p.w, p.nw, 1));
    if (!dx) return 0;
    SD_TRY(to_half(h, p.w, w, p.nw));
    CUDNN_CHECK(cudnnConvolutionBackwardData(h->dnn, &k_one, d->w, p.w, d->y, p.y, d->conv[CU_BWD_DATA],
                                             (cudnnConvolutionBwdDataAlgo_t)bd->algo, ws, bd->memory, &k_zero, d->x,
                                             p.x), "");
    return from_half(h, dx, p.x, p.nx, 0);
}
