/* cudnn_rnn — GRU and LSTM on cuDNN's RNN API (v8 entry points, cuDNN 9) for the cuDNN back-end:
 * descriptors that can be built and checked without a GPU, the weight-space mapping from showdown's
 * canonical slice (nn/backend.h), and the forward / backward-data / backward-weights calls. Everything
 * runs on the back-end's one stream. Compiled and linked here; run only where a GPU is. */
#include "be_cudnn/cudnn_be.h"

#include <stdlib.h>
#include <string.h>

#define ALIGN_UP(x) (((x) + 255) / 256 * 256)

/* auxFlags: cuDNN permits the unpacked layouts (ours, BATCH_MAJOR_UNPACKED) in RNN data descriptors only
 * with padded I/O enabled. Set again once the dropout descriptor is (cu_rnn_setup). */
static int set_rnn_desc(cu_rnn *rn) {
    CUDNN_CHECK(cudnnSetRNNDescriptor_v8(rn->rnn, CUDNN_RNN_ALGO_STANDARD, rn->G == 4 ? CUDNN_LSTM : CUDNN_GRU,
                                         CUDNN_RNN_DOUBLE_BIAS, CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT,
                                         CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, rn->math, rn->F, rn->H, rn->H, 1,
                                         rn->drop, CU_RNN_AUX_FLAGS), CU_HINT_DESC);
    return 0;
}

int cu_rnn_descs_init(cu_rnn *rn, const nn_op *op, cudnnMathType_t math) {
    memset(rn, 0, sizeof *rn);
    if (op->kind != NN_OP_GRU && op->kind != NN_OP_LSTM)
        return sd_err(SD_ERROR, "cudnn: internal: rnn descriptors for op %d", (int)op->kind);
    rn->G = op->kind == NN_OP_LSTM ? NN_LSTM_GATES : NN_GRU_GATES;
    rn->N = op->n; rn->T = op->c; rn->F = op->w; rn->H = op->units; rn->ret_seq = op->ret_seq;
    int rc = 0;
    int *lens = malloc(sizeof(int) * (size_t)rn->N);
    if (!lens) return sd_err(SD_ENOMEM, "cudnn: out of memory");
    for (int i = 0; i < rn->N; i++) lens[i] = rn->T;
#define RNN_TRY(call) do { if (rc == 0) { cudnnStatus_t s_ = (call); if (s_ != CUDNN_STATUS_SUCCESS) \
        rc = sd_err(SD_EBACKEND, "cuDNN: %s returned %d (%s)\\nHINT: %s", #call, (int)s_, cudnnGetErrorString(s_), \
                    CU_HINT_DESC); } } while (0)
    RNN_TRY(cudnnCreateRNNDescriptor(&rn->rnn));
    RNN_TRY(cudnnCreateDropoutDescriptor(&rn->drop));
    RNN_TRY(cudnnCreateRNNDataDescriptor(&rn->xd));
    RNN_TRY(cudnnCreateRNNDataDescriptor(&rn->yd));
    RNN_TRY(cudnnCreateTensorDescriptor(&rn->hd));
    rn->math = math;
    if (rc == 0) rc = set_rnn_desc(rn);
    RNN_TRY(cudnnSetRNNDataDescriptor(rn->xd, CUDNN_DATA_FLOAT, CU_RNN_DATA_LAYOUT, rn->T, rn->N,
                                      rn->F, lens, NULL));
    RNN_TRY(cudnnSetRNNDataDescriptor(rn->yd, CUDNN_DATA_FLOAT, CU_RNN_DATA_LAYOUT, rn->T, rn->N,
                                      rn->H, lens, NULL));
    int dims[3] = {1, rn->N, rn->H}, strides[3] = {rn->N * rn->H, rn->H, 1};
    RNN_TRY(cudnnSetTensorNdDescriptor(rn->hd, CUDNN_DATA_FLOAT, 3, dims, strides));
#undef RNN_TRY
    free(lens);
    if (rc) cu_rnn_fini(rn);
    return rc;
}

void cu_rnn_fini(cu_rnn *rn) {
    if (rn->rnn) (void)cudnnDestroyRNNDescriptor(rn->rnn);
    if (rn->drop) (void)cudnnDestroyDropoutDescriptor(rn->drop);
    if (rn->xd) (void)cudnnDestroyRNNDataDescriptor(rn->xd);
    if (rn->yd) (void)cudnnDestroyRNNDataDescriptor(rn->yd);
    if (rn->hd) (void)cudnnDestroyTensorDescriptor(rn->hd);
    if (rn->dev_seq) (void)cudaFree(rn->dev_seq);
    if (rn->wbuf) (void)cudaFree(rn->wbuf);
    if (rn->dwbuf) (void)cudaFree(rn->dwbuf);
    memset(rn, 0, sizeof *rn);
}

/* Byte offset of linLayerID k's matrix / bias in the canonical slice. */
static size_t canon_m(const cu_rnn *rn, int k) {
    const size_t GH = (size_t)rn->G * rn->H;
    return sizeof(float) * (k < rn->G ? (size_t)k * rn->H * rn->F : GH * rn->F + (size_t)(k - rn->G) * rn->H * rn->H);
}
static size_t canon_b(const cu_rnn *rn, int k) {
    const size_t GH = (size_t)rn->G * rn->H;
    return sizeof(float) * (GH * (rn->F + rn->H) + (size_t)k * rn->H);
}
static size_t mat_bytes(const cu_rnn *rn, int k) { return sizeof(float) * (size_t)rn->H * (k < rn->G ? rn->F : rn->H); }

int cu_rnn_setup(cu_rnn *rn, cudnnHandle_t h, cudaStream_t s) {
    /* no dropout between layers (one layer), said explicitly as PyTorch does: rate 0 needs no RNG states */
    CUDNN_CHECK(cudnnSetDropoutDescriptor(rn->drop, h, 0.0f, NULL, 0, 0), CU_HINT_DESC);
    SD_TRY(set_rnn_desc(rn));
    CUDNN_CHECK(cudnnGetRNNWeightSpaceSize(h, rn->rnn, &rn->wspace), CU_HINT_DESC);
    CUDNN_CHECK(cudnnGetRNNTempSpaceSizes(h, rn->rnn, CUDNN_FWD_MODE_TRAINING, rn->xd, &rn->work, &rn->reserve), CU_HINT_DESC);
    const size_t canon_bytes = sizeof(float) * (size_t)nn_rnn_params(rn->G, rn->F, rn->H);
    CUDA_CHECK(cudaMalloc(&rn->wbuf, rn->wspace), CU_HINT_MEM);
    cudnnTensorDescriptor_t md = NULL, bd = NULL;
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&md), "");
    int rc = 0;
    if (cudnnCreateTensorDescriptor(&bd) != CUDNN_STATUS_SUCCESS) rc = sd_err(SD_EBACKEND, "cuDNN: cannot create a descriptor");
    rn->canonical = rn->wspace == canon_bytes;
    for (int k = 0; k < 2 * rn->G && rc == 0; k++) {
        void *ma = NULL, *ba = NULL;
        cudnnStatus_t st = cudnnGetRNNWeightParams(h, rn->rnn, 0, rn->wspace, rn->wbuf, k, md, &ma, bd, &ba);
        if (st != CUDNN_STATUS_SUCCESS) {
            rc = sd_err(SD_EBACKEND, "cuDNN: cudnnGetRNNWeightParams(linLayerID %d) returned %d (%s)", k, (int)st,
                        cudnnGetErrorString(st));
            break;
        }
        rn->off_m[k] = (size_t)((char *)ma - (char *)rn->wbuf);
        rn->off_b[k] = (size_t)((char *)ba - (char *)rn->wbuf);
        if (rn->off_m[k] != canon_m(rn, k) || rn->off_b[k] != canon_b(rn, k)) rn->canonical = 0;
    }
    (void)cudnnDestroyTensorDescriptor(md);
    if (bd) (void)cudnnDestroyTensorDescriptor(bd);
    SD_TRY(rc);
    if (rn->canonical) { CUDA_CHECK(cudaFree(rn->wbuf), ""); rn->wbuf = NULL; }
    else CUDA_CHECK(cudaMalloc(&rn->dwbuf, rn->wspace), CU_HINT_MEM);
    int32_t *lens = malloc(sizeof(int32_t) * (size_t)rn->N);
    SD_ALLOC_CHECK(lens);
    for (int i = 0; i < rn->N; i++) lens[i] = rn->T;
    cudaError_t e = cudaMalloc((void **)&rn->dev_seq, sizeof(int32_t) * (size_t)rn->N);
    if (e == cudaSuccess) e = cudaMemcpyAsync(rn->dev_seq, lens, sizeof(int32_t) * (size_t)rn->N, cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    free(lens);
    CUDA_CHECK(e, CU_HINT_MEM);
    return 0;
}

static size_t seq_bytes(const cu_rnn *rn, int f) { return ALIGN_UP(sizeof(float) * (size_t)rn->N * rn->T * f); }

size_t cu_rnn_ws_bytes(const cu_rnn *rn) {
    size_t b = ALIGN_UP(rn->reserve) + seq_bytes(rn, rn->F);          /* reserve, dx sink */
    if (!rn->ret_seq) b += 2 * seq_bytes(rn, rn->H);                  /* output sequence, zero dy sequence */
    return b;
}

static void ws_parts(const cu_rnn *rn, const void *ws, void **reserve, float **dxs, float **yseq, float **dyz) {
    char *p = (char *)ws;
    *reserve = p;
    *dxs = (float *)(p + ALIGN_UP(rn->reserve));
    *yseq = rn->ret_seq ? NULL : (float *)(p + ALIGN_UP(rn->reserve) + seq_bytes(rn, rn->F));
    *dyz = rn->ret_seq ? NULL : (float *)((char *)*yseq + seq_bytes(rn, rn->H));
}

int cu_rnn_forward(cu_rnn *rn, cudnnHandle_t h, cudaStream_t s, void *work, float *y, void *ws, const float *x,
                   const float *w, int train) {
    void *reserve;
    float *dxs, *yseq, *dyz;
    ws_parts(rn, ws, &reserve, &dxs, &yseq, &dyz);
    const void *wsp = w;
    if (!rn->canonical) {
        for (int k = 0; k < 2 * rn->G; k++) {
            CUDA_CHECK(cudaMemcpyAsync((char *)rn->wbuf + rn->off_m[k], (const char *)w + canon_m(rn, k), mat_bytes(rn, k),
                                       cudaMemcpyDeviceToDevice, s), "");
            CUDA_CHECK(cudaMemcpyAsync((char *)rn->wbuf + rn->off_b[k], (const char *)w + canon_b(rn, k),
                                       sizeof(float) * (size_t)rn->H, cudaMemcpyDeviceToDevice, s), "");
        }
        wsp = rn->wbuf;
    }
    float *yout = rn->ret_seq ? y : yseq;
    /* inference keeps nothing for a backward pass: no reserve space, and cuDNN may pick faster kernels */
    CUDNN_CHECK(cudnnRNNForward(h, rn->rnn, train ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE, rn->dev_seq,
                                rn->xd, x, rn->yd, yout, rn->hd, NULL, rn->ret_seq ? NULL : y, rn->hd, NULL, NULL,
                                rn->wspace, wsp, rn->work, work, train ? rn->reserve : 0, train ? reserve : NULL),
                CU_HINT_DESC);
    return 0;
}

int cu_rnn_backward(cu_rnn *rn, cudnnHandle_t h, cublasHandle_t blas, cudaStream_t s, void *work, float *dx,
                    float *dw, const float *dy, const float *x, const float *w, const float *y, const void *ws) {
    void *reserve;
    float *dxs, *yseq, *dyz;
    ws_parts(rn, ws, &reserve, &dxs, &yseq, &dyz);
    /* not canonical: wbuf still holds the weights the forward copied in (the graph does not change w between
     * a forward and its backward) */
    const void *wsp = rn->canonical ? (const void *)w : rn->wbuf;
    const float *yfull = rn->ret_seq ? y : yseq;
    const float *dyseq = dy, *dhy = NULL;
    if (!rn->ret_seq) {   /* only h_T has a gradient: a zero sequence, and dhy */
        CUDA_CHECK(cudaMemsetAsync(dyz, 0, sizeof(float) * (size_t)rn->N * rn->T * rn->H, s), "");
        dyseq = dyz;
        dhy = dy;
    }
    CUDNN_CHECK(cudnnRNNBackwardData_v8(h, rn->rnn, rn->dev_seq, rn->yd, yfull, dyseq, rn->xd, dx ? dx : dxs, rn->hd, NULL,
                                        dhy, NULL, rn->hd, NULL, NULL, NULL, rn->wspace, wsp, rn->work, work, rn->reserve,
                                        reserve), CU_HINT_DESC);
    if (rn->canonical) {   /* accumulate straight into the slice: cuDNN's ADD mode is the contract (dw +=) */
        CUDNN_CHECK(cudnnRNNBackwardWeights_v8(h, rn->rnn, CUDNN_WGRAD_MODE_ADD, rn->dev_seq, rn->xd, x, rn->hd, NULL, rn->yd,
                                               yfull, rn->wspace, dw, rn->work, work, rn->reserve, reserve), CU_HINT_DESC);
        return 0;
    }
    CUDA_CHECK(cudaMemsetAsync(rn->dwbuf, 0, rn->wspace, s), "");
    CUDNN_CHECK(cudnnRNNBackwardWeights_v8(h, rn->rnn, CUDNN_WGRAD_MODE_ADD, rn->dev_seq, rn->xd, x, rn->hd, NULL, rn->yd,
                                           yfull, rn->wspace, rn->dwbuf, rn->work, work, rn->reserve, reserve), CU_HINT_DESC);
    static const float one = 1.0f;
    for (int k = 0; k < 2 * rn->G; k++) {
        CUBLAS_CHECK(cublasSaxpy(blas, (int)(mat_bytes(rn, k) / sizeof(float)), &one,
                                 (const float *)((const char *)rn->dwbuf + rn->off_m[k]), 1,
                                 (float *)((char *)dw + canon_m(rn, k)), 1), "");
        CUBLAS_CHECK(cublasSaxpy(blas, rn->H, &one, (const float *)((const char *)rn->dwbuf + rn->off_b[k]), 1,
                                 (float *)((char *)dw + canon_b(rn, k)), 1), "");
    }
    return 0;
}
