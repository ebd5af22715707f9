/* be_cudnn — the cuDNN + cuBLAS GPU back-end, the native floor on NVIDIA GPUs. Same semantics as the
 * reference back-end (be_ref/ref.c): convolution, pooling, ReLU and softmax through cuDNN, dense layers
 * through cuBLAS sgemm, dropout / loss / optimizer through the kernels of cudnn_kernels.cu (the element
 * functions of nn/kernels.h); under fp16/bf16 the convolutions and dense layers compute on 16-bit copies of
 * their operands (cudnn_precision.c). Everything runs on one stream; parameters, gradients and optimizer state
 * stay on the device; every CUDA, cuDNN and cuBLAS call is checked (CUDA_CHECK & co., cudnn_be.h). */
#include "be_cudnn/cudnn_be.h"
#include "be_cudnn/cu_dl.h"
#include "be_cudnn/cudnn_ctx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const float k_one = 1.0f, k_zero = 0.0f;

static int get_priv(const nn_op *op, const char *what, cu_priv **out) {
    *out = op->priv;
    if (!*out) return sd_err(SD_ERROR, "cudnn: %s called on an op that was not prepared", what);
    return 0;
}


/* y += b broadcast over the batch (and the pixels): dense and conv2d share it; no bias, nothing to add. */
static int add_bias(cu_ctx *c, const cu_priv *p, const float *b, float *y) {
    if (b) CUDNN_CHECK(cudnnAddTensor(c->dnn, &k_one, p->d.bias, b, &k_one, p->d.y, y), "");
    return 0;
}

/* ---- memory and transfers ------------------------------------------------------------------------- */

static int cu_alloc(nn_backend *be, void **out, size_t bytes) {
    (void)be;
    *out = NULL;
    cudaError_t e = cudaMalloc(out, bytes);
    if (e == cudaErrorMemoryAllocation) {
        /* not sticky: clear it, or the next launch check (cudaGetLastError) would report it again */
        (void)cudaGetLastError();
        *out = NULL;
        return sd_err_at(__FILE__, __LINE__, SD_ENOMEM, "CUDA: cudaMalloc(%zu bytes) returned %d (%s)\nHINT: %s",
                         bytes, (int)e, cudaGetErrorString(e), CU_HINT_MEM);
    }
    CUDA_CHECK(e, CU_HINT_MEM);
    return 0;
}

static void cu_free(nn_backend *be, void *p) {
    (void)be;
    (void)cudaFree(p);   /* void entry: a failure here leaves nothing to undo */
}

/* Bad labels and token ids flagged by the kernels surface at the next synchronisation point. */
static int check_labels(cu_ctx *c) {
    if (!c->bad_pending) return 0;
    int h[CU_BAD_INTS] = {0};
    CUDA_CHECK(cudaMemcpyAsync(h, c->bad, sizeof h, cudaMemcpyDeviceToHost, c->stream), CU_HINT_KERNEL);
    CUDA_CHECK(cudaStreamSynchronize(c->stream), CU_HINT_KERNEL);
    c->bad_pending = 0;
    if (h[CU_BAD_LABEL] || h[CU_BAD_TOKEN]) {
        CUDA_CHECK(cudaMemsetAsync(c->bad, 0, sizeof h, c->stream), "");
        return cu_bad_status(h, c->bad_C, c->bad_V);
    }
    return 0;
}

/* Host -> device through pinned staging: the host copy into stage i overlaps the device's work on
 * what was queued before; stage i is reused only after its previous copy has completed. */
static int cu_upload(nn_backend *be, void *dst, const void *src, size_t bytes) {
    cu_ctx *c = CTX(be);
    for (size_t off = 0; off < bytes;) {
        size_t len = bytes - off < CU_STAGE_MAX ? bytes - off : CU_STAGE_MAX;
        int i = c->stage_next;
        c->stage_next = (i + 1) % CU_STAGES;
        CUDA_CHECK(cudaEventSynchronize(c->stage_ev[i]), CU_HINT_KERNEL);
        if (c->stage_size[i] < len) {
            if (c->stage[i]) CUDA_CHECK(cudaFreeHost(c->stage[i]), "");
            c->stage[i] = NULL;
            c->stage_size[i] = 0;
            CUDA_CHECK(cudaMallocHost(&c->stage[i], CU_STAGE_MAX), "pinned host memory exhausted");
            c->stage_size[i] = CU_STAGE_MAX;
        }
        memcpy(c->stage[i], (const char *)src + off, len);
        CUDA_CHECK(cudaMemcpyAsync((char *)dst + off, c->stage[i], len, cudaMemcpyHostToDevice, c->stream), "");
        CUDA_CHECK(cudaEventRecord(c->stage_ev[i], c->stream), "");
        off += len;
    }
    return 0;
}

static int cu_download(nn_backend *be, void *dst, const void *src, size_t bytes) {
    cu_ctx *c = CTX(be);
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, c->stream), "");
    CUDA_CHECK(cudaStreamSynchronize(c->stream), CU_HINT_KERNEL);
    return check_labels(c);
}

static int cu_zero(nn_backend *be, void *p, size_t bytes) {
    CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, CTX(be)->stream), "");
    return 0;
}

static int cu_sync(nn_backend *be) {
    cu_ctx *c = CTX(be);
    CUDA_CHECK(cudaStreamSynchronize(c->stream), CU_HINT_KERNEL);
    return check_labels(c);
}

/* ---- recurrent ops: embedding kernels, GRU / LSTM in cudnn_rnn.c ----------------------------------- */

static int cu_embedding_forward(nn_backend *be, const nn_op *op, float *y, const int32_t *ids, const float *table) {
    cu_ctx *c = CTX(be);
    CUDA_CHECK(cu_launch_embedding_fwd(y, ids, table, (size_t)op->n * op->c, op->c, op->ids_stride ? op->ids_stride : op->c,
                                       op->units, op->vocab, c->bad + CU_BAD_TOKEN, c->stream), CU_HINT_KERNEL);
    /* an id out of range is reported by the next sync() or download(): no wait on the device per batch */
    c->bad_pending = 1;
    c->bad_V = op->vocab;
    return 0;
}

static int cu_embedding_backward(nn_backend *be, const nn_op *op, float *dtable, const float *dy, const int32_t *ids) {
    cu_ctx *c = CTX(be);
    CUDA_CHECK(cu_launch_embedding_bwd(dtable, dy, ids, (size_t)op->n * op->c, op->c, op->ids_stride ? op->ids_stride : op->c,
                                       op->units, op->vocab, c->stream), CU_HINT_KERNEL);
    return 0;
}

static int cu_repeat_forward(nn_backend *be, const nn_op *op, float *y, const float *x) {
    CUDA_CHECK(cu_launch_repeat_fwd(y, x, op->n, op->oc, op->c, CTX(be)->stream), CU_HINT_KERNEL);
    return 0;
}
static int cu_repeat_backward(nn_backend *be, const nn_op *op, float *dx, const float *dy) {
    CUDA_CHECK(cu_launch_repeat_bwd(dx, dy, op->n, op->oc, op->c, CTX(be)->stream), CU_HINT_KERNEL);
    return 0;
}

static int cu_rnn_fwd(nn_backend *be, const nn_op *op, float *y, void *ws, const float *x, const float *w, int train) {
    cu_ctx *c = CTX(be);
    cu_priv *p;
    SD_TRY(get_priv(op, "rnn forward", &p));
    return cu_rnn_forward(&p->rnn, c->dnn, c->stream, c->ws, y, ws, x, w, train);
}

static int cu_rnn_bwd(nn_backend *be, const nn_op *op, float *dx, float *dw, const float *dy, const float *x,
                      const float *w, const float *y, const void *ws) {
    cu_ctx *c = CTX(be);
    cu_priv *p;
    SD_TRY(get_priv(op, "rnn backward", &p));
    return cu_rnn_backward(&p->rnn, c->dnn, c->blas, c->stream, c->ws, dx, dw, dy, x, w, y, ws);
}

/* ---- per-op state ---------------------------------------------------------------------------------- */

static void cu_release(nn_backend *be, nn_op *op) {
    (void)be;
    cu_priv *p = op->priv;
    if (!p) return;
    if (p->is_rnn) cu_rnn_fini(&p->rnn);
    else {
        cu_descs_fini(&p->d);
        cu_descs_fini(&p->h);
    }
    free(p);
    op->priv = NULL;
}

static int cu_prepare(nn_backend *be, nn_op *op) {
    cu_ctx *c = CTX(be);
    if (op->priv) return 0;
    cu_priv *p = calloc(1, sizeof *p);
    SD_ALLOC_CHECK(p);
    if (op->kind == NN_OP_GRU || op->kind == NN_OP_LSTM) {   /* recurrent ops */
        /* fp32 under fp16/bf16 too (docs/precision.md): TF32 math only when asked for */
        int rc = cu_rnn_descs_init(&p->rnn, op, c->prec == CU_PREC_TF32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH);
        if (rc < 0) { free(p); return rc; }
        p->is_rnn = 1;
        op->priv = p;
        rc = cu_rnn_setup(&p->rnn, c->dnn, c->stream);
        if (rc == 0) rc = cu_grow_workspace(be, p->rnn.work);
        if (rc < 0) cu_release(be, op);
        return rc;
    }
    if (op->kind == NN_OP_EMBEDDING || op->kind == NN_OP_REPEAT) { op->priv = p; return 0; }
    int rc = cu_descs_init(&p->d, op, cu_prec_conv_math(c->prec));
    if (rc < 0) { free(p); return rc; }
    op->priv = p;
    rc = cu_descs_check(&p->d, op);
    if (rc == 0 && cu_prec_half(c->prec) && op->kind == NN_OP_CONV2D)
        rc = cu_descs_init_dt(&p->h, op, cu_prec_conv_math(c->prec), cu_prec_cudnn_type(c->prec));
    if (rc == 0 && cu_prec_half(c->prec)) rc = cu_half_reserve(&c->half, be, cu_half_bytes(op));
    if (rc == 0 && op->kind == NN_OP_CONV2D) rc = cu_conv_choose(be, op, p);
    if (rc < 0) cu_release(be, op);
    return rc;
}

static size_t cu_workspace_size(nn_backend *be, const nn_op *op) {
    (void)be;
    /* the dropout keep mask; maxpool needs none (cuDNN's backward reads x and y); batchnorm: the saved
     * batch mean and inverse standard deviation */
    if (op->kind == NN_OP_BATCHNORM) return 2 * sizeof(float) * (size_t)op->c;
    if ((op->kind == NN_OP_GRU || op->kind == NN_OP_LSTM) && op->priv) return cu_rnn_ws_bytes(&((cu_priv *)op->priv)->rnn);
    return op->kind == NN_OP_DROPOUT ? numel_out(op) : 0;
}

/* ---- dense (cuBLAS, column-major view of row-major buffers) ------------------------------------------ */

static int cu_dense_forward(nn_backend *be, const nn_op *op, float *y, const float *x, const float *w,
                            const float *b) {
    cu_ctx *c = CTX(be);
    cu_priv *p;
    SD_TRY(get_priv(op, "dense_forward", &p));
    if (cu_prec_half(c->prec)) {
        SD_TRY(cu_half_dense_forward(&c->half, op, y, x, w));
        return add_bias(c, p, b, y);
    }
    /* y[n][oc] = x[n][c] . w[oc][c]^T   (column-major: Y(oc x n) = W^T(oc x c) X(c x n)) */
    CUBLAS_CHECK(cublasSgemm(c->blas, CUBLAS_OP_T, CUBLAS_OP_N, op->oc, op->n, op->c, &k_one, w, op->c, x, op->c,
                             &k_zero, y, op->oc), "");
    return add_bias(c, p, b, y);
}

static int cu_dense_backward(nn_backend *be, const nn_op *op, float *dx, float *dw, float *db, const float *dy,
                             const float *x, const float *w) {
    cu_ctx *c = CTX(be);
    cu_priv *p;
    SD_TRY(get_priv(op, "dense_backward", &p));
    if (cu_prec_half(c->prec)) {
        if (db) CUDNN_CHECK(cudnnConvolutionBackwardBias(c->dnn, &k_one, p->d.y, dy, &k_one, p->d.bias, db), "");
        return cu_half_dense_backward(&c->half, op, dx, dw, dy, x, w);
    }
    /* dw[oc][c] += dy^T x   (column-major: dW(c x oc) += X(c x n) DY(oc x n)^T) */
    CUBLAS_CHECK(cublasSgemm(c->blas, CUBLAS_OP_N, CUBLAS_OP_T, op->c, op->oc, op->n, &k_one, x, op->c, dy, op->oc,
                             &k_one, dw, op->c), "");
    if (db) CUDNN_CHECK(cudnnConvolutionBackwardBias(c->dnn, &k_one, p->d.y, dy, &k_one, p->d.bias, db), "");
    /* dx[n][c] = dy[n][oc] w[oc][c]   (column-major: DX(c x n) = W(c x oc) DY(oc x n)) */
    if (dx)
        CUBLAS_CHECK(cublasSgemm(c->blas, CUBLAS_OP_N, CUBLAS_OP_N, op->c, op->n, op->oc, &k_one, w, op->c, dy,
                                 op->oc, &k_zero, dx, op->c), "");
    return 0;
}

/* ---- conv2d ------------------------------------------------------------------------------------------ */

static int cu_conv2d_forward(nn_backend *be, const nn_op *op, float *y, const float *x, const float *w,
                             const float *b) {
    cu_ctx *c = CTX(be);
    cu_priv *p;
    SD_TRY(get_priv(op, "conv2d_forward", &p));
    if (cu_prec_half(c->prec)) {
        SD_TRY(cu_half_conv_forward(&c->half, &p->h, &p->choice, c->ws, op, y, x, w));
        return add_bias(c, p, b, y);
    }
    const cu_algo_perf *a = &p->choice.dir[CU_FWD];
    CUDNN_CHECK(cudnnConvolutionForward(c->dnn, &k_one, p->d.x, x, p->d.w, w, p->d.conv[CU_FWD],
                                        (cudnnConvolutionFwdAlgo_t)a->algo, c->ws, a->memory, &k_zero, p->d.y, y),
                "");
    return add_bias(c, p, b, y);
}

static int cu_conv2d_backward(nn_backend *be, const nn_op *op, float *dx, float *dw, float *db, const float *dy,
                              const float *x, const float *w) {
    cu_ctx *c = CTX(be);
    cu_priv *p;
    SD_TRY(get_priv(op, "conv2d_backward", &p));
    const cu_algo_perf *bf = &p->choice.dir[CU_BWD_FILTER], *bd = &p->choice.dir[CU_BWD_DATA];
    if (db) CUDNN_CHECK(cudnnConvolutionBackwardBias(c->dnn, &k_one, p->d.y, dy, &k_one, p->d.bias, db), "");
    if (cu_prec_half(c->prec)) return cu_half_conv_backward(&c->half, &p->h, &p->choice, c->ws, op, dx, dw, dy, x, w);
    CUDNN_CHECK(cudnnConvolutionBackwardFilter(c->dnn, &k_one, p->d.x, x, p->d.y, dy, p->d.conv[CU_BWD_FILTER],
                                               (cudnnConvolutionBwdFilterAlgo_t)bf->algo, c->ws, bf->memory, &k_one,
                                               p->d.w, dw), "");
    if (dx)
        CUDNN_CHECK(cudnnConvolutionBackwardData(c->dnn, &k_one, p->d.w, w, p->d.y, dy, p->d.conv[CU_BWD_DATA],
                                                 (cudnnConvolutionBwdDataAlgo_t)bd->algo, c->ws, bd->memory, &k_zero,
                                                 p->d.x, dx), "");
    return 0;
}

/* ---- pooling, activation, dropout ----------------------------------------------------------------------- */

/* Max and average pooling alike: the op's pooling descriptor says which. */
static int pool_forward(nn_backend *be, const nn_op *op, const char *what, float *y, const float *x) {
    cu_ctx *c = CTX(be);
    cu_priv *p;
    SD_TRY(get_priv(op, what, &p));
    CUDNN_CHECK(cudnnPoolingForward(c->dnn, p->d.pool, &k_one, p->d.x, x, &k_zero, p->d.y, y), "");
    return 0;
}

static int pool_backward(nn_backend *be, const nn_op *op, const char *what, float *dx, const float *dy,
                         const float *x, const float *y) {
    cu_ctx *c = CTX(be);
    cu_priv *p;
    SD_TRY(get_priv(op, what, &p));
    CUDNN_CHECK(cudnnPoolingBackward(c->dnn, p->d.pool, &k_one, p->d.y, y, p->d.y, dy, p->d.x, x, &k_zero, p->d.x,
                                     dx), "");
    return 0;
}

static int cu_maxpool_forward(nn_backend *be, const nn_op *op, float *y, void *ws, const float *x) {
    (void)ws;
    return pool_forward(be, op, "maxpool_forward", y, x);
}

static int cu_maxpool_backward(nn_backend *be, const nn_op *op, float *dx, const float *dy, const float *x,
                               const float *y, const void *ws) {
    (void)ws;
    return pool_backward(be, op, "maxpool_backward", dx, dy, x, y);
}

static int cu_relu_forward(nn_backend *be, const nn_op *op, float *y, const float *x) {
    cu_ctx *c = CTX(be);
    cu_priv *p;
    SD_TRY(get_priv(op, "relu_forward", &p));
    CUDNN_CHECK(cudnnActivationForward(c->dnn, p->d.act, &k_one, p->d.y, x, &k_zero, p->d.y, y), "");
    return 0;
}

static int cu_relu_backward(nn_backend *be, const nn_op *op, float *dx, const float *dy, const float *y) {
    cu_ctx *c = CTX(be);
    cu_priv *p;
    SD_TRY(get_priv(op, "relu_backward", &p));
    /* the interface keeps y, not x: for ReLU, x > 0 exactly where y > 0, so y stands in for x */
    CUDNN_CHECK(cudnnActivationBackward(c->dnn, p->d.act, &k_one, p->d.y, y, p->d.y, dy, p->d.y, y, &k_zero, p->d.y,
                                        dx), "");
    return 0;
}

static int cu_dropout_forward(nn_backend *be, const nn_op *op, float *y, void *ws, const float *x,
                              uint64_t seed) {
    CUDA_CHECK(cu_launch_dropout_fwd(y, ws, x, numel_out(op), seed, op->rate, CTX(be)->stream), CU_HINT_KERNEL);
    return 0;
}

static int cu_dropout_backward(nn_backend *be, const nn_op *op, float *dx, const float *dy, const void *ws) {
    CUDA_CHECK(cu_launch_dropout_bwd(dx, dy, ws, numel_out(op), op->rate, CTX(be)->stream), CU_HINT_KERNEL);
    return 0;
}

/* ---- loss ------------------------------------------------------------------------------------------------ */

/* A label outside [0,c) is reported (SD_EINPUT) by the next sync() or download(), not by this call. */
static int cu_softmax_xent_forward(nn_backend *be, const nn_op *op, float *prob, float *loss, const float *logits,
                                   const int32_t *labels) {
    cu_ctx *c = CTX(be);
    cu_priv *p;
    SD_TRY(get_priv(op, "softmax_xent_forward", &p));
    CUDNN_CHECK(cudnnSoftmaxForward(c->dnn, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &k_one, p->d.y,
                                    logits, &k_zero, p->d.y, prob), "");
    CUDA_CHECK(cu_launch_xent_loss(loss, logits, labels, op->n, op->c, c->bad + CU_BAD_LABEL, c->stream),
               CU_HINT_KERNEL);
    c->bad_pending = 1;
    c->bad_C = op->c;
    return 0;
}

static int cu_softmax_xent_backward(nn_backend *be, const nn_op *op, float *dlogits, const float *prob,
                                    const int32_t *labels) {
    CUDA_CHECK(cu_launch_xent_grad(dlogits, prob, labels, op->n, op->c, CTX(be)->stream), CU_HINT_KERNEL);
    return 0;
}

/* ---- graph ops ----------------------------------------------------------------------------- */

static int cu_copy(nn_backend *be, void *dst, const void *src, size_t bytes) {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, CTX(be)->stream), "");
    return 0;
}

/* Also sums gradients for the graph, on ops of any kind (no descriptor needed). */
static int cu_add_forward(nn_backend *be, const nn_op *op, float *y, const float *a, const float *b) {
    CUDA_CHECK(cu_launch_add(y, a, b, numel_out(op), CTX(be)->stream), CU_HINT_KERNEL);
    return 0;
}

/* Channel concatenation as 2-D copies: per input, n rows of in_c*h*w floats into rows of oc*h*w. */
static int cu_concat_forward(nn_backend *be, const nn_op *op, float *y, const float *const *x) {
    const size_t hw = (size_t)op->h * op->w, row = (size_t)op->oc * hw * sizeof(float);
    size_t off = 0;
    for (int k = 0; k < op->ninputs; k++) {
        size_t w = (size_t)op->in_c[k] * hw * sizeof(float);
        CUDA_CHECK(cudaMemcpy2DAsync((char *)y + off, row, x[k], w, w, (size_t)op->n, cudaMemcpyDeviceToDevice,
                                     CTX(be)->stream), "");
        off += w;
    }
    return 0;
}

static int cu_concat_backward(nn_backend *be, const nn_op *op, float *const *dx, const float *dy) {
    const size_t hw = (size_t)op->h * op->w, row = (size_t)op->oc * hw * sizeof(float);
    size_t off = 0;
    for (int k = 0; k < op->ninputs; k++) {
        size_t w = (size_t)op->in_c[k] * hw * sizeof(float);
        if (dx[k])
            CUDA_CHECK(cudaMemcpy2DAsync(dx[k], w, (const char *)dy + off, row, w, (size_t)op->n,
                                         cudaMemcpyDeviceToDevice, CTX(be)->stream), "");
        off += w;
    }
    return 0;
}

/* cuDNN's spatial batch norm: exponentialAverageFactor = momentum (its running variance is the
 * unbiased one, as nn/backend.h says); ws = saved mean and inverse standard deviation. */
static int cu_batchnorm_forward(nn_backend *be, const nn_op *op, float *y, void *ws, const float *x,
                                const float *gamma, const float *beta, float *running, int train) {
    cu_ctx *c = CTX(be);
    cu_priv *p;
    SD_TRY(get_priv(op, "batchnorm_forward", &p));
    float *rmean = running, *rvar = running + op->c;
    if (!train) {
        CUDNN_CHECK(cudnnBatchNormalizationForwardInference(c->dnn, CUDNN_BATCHNORM_SPATIAL, &k_one, &k_zero,
                                                            p->d.x, x, p->d.x, y, p->d.bias, gamma, beta, rmean,
                                                            rvar, (double)op->eps), CU_HINT_DESC);
        return 0;
    }
    float *smean = ws, *sinv = (float *)ws + op->c;
    CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(c->dnn, CUDNN_BATCHNORM_SPATIAL, &k_one, &k_zero, p->d.x, x,
                                                       p->d.x, y, p->d.bias, gamma, beta, (double)op->momentum,
                                                       rmean, rvar, (double)op->eps, smean, sinv), CU_HINT_DESC);
    return 0;
}

static int cu_batchnorm_backward(nn_backend *be, const nn_op *op, float *dx, float *dgamma, float *dbeta,
                                 const float *dy, const float *x, const float *gamma, const void *ws) {
    cu_ctx *c = CTX(be);
    cu_priv *p;
    SD_TRY(get_priv(op, "batchnorm_backward", &p));
    if (!dx) {   /* cuDNN always writes dx: borrow the convolution workspace (one stream, not in use now) */
        SD_TRY(cu_grow_workspace(be, sizeof(float) * (size_t)op->n * op->c * op->h * op->w));
        dx = c->ws;
    }
    const float *smean = ws, *sinv = (const float *)ws + op->c;
    /* data gradient overwritten (beta 0), parameter gradients accumulated (beta 1) */
    CUDNN_CHECK(cudnnBatchNormalizationBackward(c->dnn, CUDNN_BATCHNORM_SPATIAL, &k_one, &k_zero, &k_one, &k_one,
                                                p->d.x, x, p->d.x, dy, p->d.x, dx, p->d.bias, gamma, dgamma, dbeta,
                                                (double)op->eps, smean, sinv), CU_HINT_DESC);
    return 0;
}

static int cu_avgpool_forward(nn_backend *be, const nn_op *op, float *y, const float *x) {
    return pool_forward(be, op, "avgpool_forward", y, x);
}

/* Average pooling's backward reads neither x nor y; cuDNN's signature wants them, dx/dy stand in. */
static int cu_avgpool_backward(nn_backend *be, const nn_op *op, float *dx, const float *dy) {
    return pool_backward(be, op, "avgpool_backward", dx, dy, dx, dy);
}

static int cu_sigmoid_bce_forward(nn_backend *be, const nn_op *op, float *prob, float *loss, const float *logits,
                                  const float *targets) {
    CUDA_CHECK(cu_launch_bce_loss(prob, loss, logits, targets, op->n, op->c, CTX(be)->stream), CU_HINT_KERNEL);
    return 0;
}

static int cu_sigmoid_bce_backward(nn_backend *be, const nn_op *op, float *dlogits, const float *prob,
                                   const float *targets) {
    CUDA_CHECK(cu_launch_bce_grad(dlogits, prob, targets, op->n, op->c, CTX(be)->stream), CU_HINT_KERNEL);
    return 0;
}

/* ---- optimizer ------------------------------------------------------------------------------------------- */

static int cu_optimizer_step(nn_backend *be, const nn_optim *o, float *p, const float *g, float *state, size_t n,
                             long step) {
    cudaStream_t s = CTX(be)->stream;
    float *s0 = state, *s1 = state + n;   /* state layout [k][n] */
    switch (o->kind) {
    case NN_OPTIM_SGD:
        CUDA_CHECK(cu_launch_sgd(p, g, s0, n, o->lr, o->momentum, s), CU_HINT_KERNEL);
        return 0;
    case NN_OPTIM_RMSPROP:
        CUDA_CHECK(cu_launch_rmsprop(p, g, s0, n, o->lr, o->rho, o->eps, s), CU_HINT_KERNEL);
        return 0;
    case NN_OPTIM_ADADELTA:
        CUDA_CHECK(cu_launch_adadelta(p, g, s0, s1, n, o->lr, o->rho, o->eps, s), CU_HINT_KERNEL);
        return 0;
    case NN_OPTIM_ADAM: {
        const float bc1 = 1.0f - powf(o->beta1, (float)step), bc2 = 1.0f - powf(o->beta2, (float)step);
        CUDA_CHECK(cu_launch_adam(p, g, s0, s1, n, o->lr, o->beta1, o->beta2, o->eps, bc1, bc2, s), CU_HINT_KERNEL);
        return 0;
    }
    default:
        return sd_err(SD_EUNSUPPORTED, "cudnn: unknown optimizer %d", (int)o->kind);
    }
}

/* ---- loss scaling (nn/train.c's scaler) -------------------------------------------------------------------- */

/* One kernel; the inf/NaN flag comes back to the host only when asked, with a wait on the stream. */
static int cu_scale(nn_backend *be, float *x, size_t n, float s, int *nonfinite) {
    cu_ctx *c = CTX(be);
    if (!nonfinite) {
        CUDA_CHECK(cu_launch_scale(x, n, s, NULL, c->stream), CU_HINT_KERNEL);
        return 0;
    }
    if (!c->scale_flag) CUDA_CHECK(cudaMalloc((void **)&c->scale_flag, sizeof(int)), CU_HINT_MEM);
    CUDA_CHECK(cudaMemsetAsync(c->scale_flag, 0, sizeof(int), c->stream), "");
    CUDA_CHECK(cu_launch_scale(x, n, s, c->scale_flag, c->stream), CU_HINT_KERNEL);
    int flag = 0;
    CUDA_CHECK(cudaMemcpyAsync(&flag, c->scale_flag, sizeof flag, cudaMemcpyDeviceToHost, c->stream), "");
    CUDA_CHECK(cudaStreamSynchronize(c->stream), CU_HINT_KERNEL);
    *nonfinite = flag != 0;
    return check_labels(c);   /* a bad label's NaN is an input error, not an overflow to skip */
}

/* ---- environment, life cycle ---------------------------------------------------------------------------- */

static void cu_env(nn_backend *be, nn_env_fn add, void *user) {
    cu_ctx *c = CTX(be);
    char buf[512], key[160];
    (void)cudaSetDevice(c->device);   /* the memory query is of the current device: after data parallel, the last */
    add(user, "gpu_name", c->prop.name);
    snprintf(buf, sizeof buf, "%d.%d", c->prop.major, c->prop.minor);
    add(user, "gpu_compute_capability", buf);
    snprintf(buf, sizeof buf, "%zu", c->prop.totalGlobalMem);
    add(user, "gpu_memory_bytes", buf);
    snprintf(buf, sizeof buf, "%d", c->prop.multiProcessorCount);
    add(user, "gpu_sm_count", buf);
    snprintf(buf, sizeof buf, "%d.%d", c->driver / 1000, (c->driver % 1000) / 10);
    add(user, "cuda_driver", buf);
    snprintf(buf, sizeof buf, "%d.%d", c->runtime / 1000, (c->runtime % 1000) / 10);
    add(user, "cuda_runtime", buf);
    cu_version3(buf, sizeof buf, (int)cudnnGetVersion(), 10000, 100);
    add(user, "cudnn_version", buf);
    int bv = 0;
    if (cublasGetVersion(c->blas, &bv) == CUBLAS_STATUS_SUCCESS) {
        cu_version3(buf, sizeof buf, bv, 10000, 100);
        add(user, "cublas_version", buf);
    }
    add(user, "precision", cu_prec_name(c->prec));
    add(user, "cudnn_autotune", c->autotune ? "on (cudnnFind*AlgorithmEx)" : "off (_v7 heuristics)");
    snprintf(buf, sizeof buf, "%zu", c->ws_size);
    add(user, "cudnn_workspace_bytes", buf);
    snprintf(buf, sizeof buf, "%zu", be->bytes_peak);
    add(user, "device_mem_peak_bytes", buf);
    size_t fr = 0, total = 0;
    if (cudaMemGetInfo(&fr, &total) == cudaSuccess) {
        snprintf(buf, sizeof buf, "%zu", total - fr);
        add(user, "device_mem_used_bytes", buf);
    }
    cu_prec_impl(c->prec, buf, sizeof buf);
    add(user, "backend_impl", buf);
    for (int i = 0; i < c->nchoices; i++) {
        snprintf(key, sizeof key, "cudnn_algo[%s]", c->choices[i].key);
        cu_conv_choice_str(&c->choices[i], buf, sizeof buf);
        add(user, key, buf);
    }
}

static void cu_destroy(nn_backend *be) {
    if (!be) return;
    cu_ctx *c = CTX(be);
    if (c) {
        (void)cudaSetDevice(c->device);   /* frees must run on the device that allocated (data parallel moves it) */
        if (c->stream) (void)cudaStreamSynchronize(c->stream);
        if (c->ws) (void)cudaFree(c->ws);
        for (int i = 0; i < CU_STAGES; i++) {
            if (c->stage[i]) (void)cudaFreeHost(c->stage[i]);
            if (c->stage_ev[i]) (void)cudaEventDestroy(c->stage_ev[i]);
        }
        if (c->bad) (void)cudaFree(c->bad);
        if (c->scale_flag) (void)cudaFree(c->scale_flag);
        cu_half_fini(&c->half, be);
        if (c->blas) (void)cublasDestroy(c->blas);
        if (c->dnn) (void)cudnnDestroy(c->dnn);
        if (c->stream) (void)cudaStreamDestroy(c->stream);
        free(c->choices);
        free(c);
    }
    free(be);
}

static const nn_backend_ops cu_ops = {
    .name = "cudnn",
    .destroy = cu_destroy,
    .env = cu_env,
    .alloc = cu_alloc,
    .free = cu_free,
    .upload = cu_upload,
    .download = cu_download,
    .zero = cu_zero,
    .sync = cu_sync,
    .prepare = cu_prepare,
    .release = cu_release,
    .workspace_size = cu_workspace_size,
    .dense_forward = cu_dense_forward,
    .dense_backward = cu_dense_backward,
    .conv2d_forward = cu_conv2d_forward,
    .conv2d_backward = cu_conv2d_backward,
    .maxpool_forward = cu_maxpool_forward,
    .maxpool_backward = cu_maxpool_backward,
    .relu_forward = cu_relu_forward,
    .relu_backward = cu_relu_backward,
    .dropout_forward = cu_dropout_forward,
    .dropout_backward = cu_dropout_backward,
    .softmax_xent_forward = cu_softmax_xent_forward,
    .softmax_xent_backward = cu_softmax_xent_backward,
    .optimizer_step = cu_optimizer_step,
    .scale = cu_scale,
    /* graph ops */
    .copy = cu_copy,
    .add_forward = cu_add_forward,
    .concat_forward = cu_concat_forward,
    .concat_backward = cu_concat_backward,
    .batchnorm_forward = cu_batchnorm_forward,
    .batchnorm_backward = cu_batchnorm_backward,
    .avgpool_forward = cu_avgpool_forward,
    .avgpool_backward = cu_avgpool_backward,
    .sigmoid_bce_forward = cu_sigmoid_bce_forward,
    .sigmoid_bce_backward = cu_sigmoid_bce_backward,
    /* recurrent ops */
    .embedding_forward = cu_embedding_forward,
    .embedding_backward = cu_embedding_backward,
    .gru_forward = cu_rnn_fwd,
    .gru_backward = cu_rnn_bwd,
    .lstm_forward = cu_rnn_fwd,
    .lstm_backward = cu_rnn_bwd,
    .repeat_forward = cu_repeat_forward,
    .repeat_backward = cu_repeat_backward,
};

int cu_conv_choice_of(nn_backend *be, const nn_op *op, cu_conv_choice *out) {
    if (!be || be->ops != &cu_ops) return -1;
    char key[96];
    cu_conv_key(op, key, sizeof key);
    const cu_ctx *c = CTX(be);
    for (int i = 0; i < c->nchoices; i++)
        if (strcmp(c->choices[i].key, key) == 0) { *out = c->choices[i]; return 0; }
    return -1;
}

cudaStream_t cu_backend_stream(nn_backend *be) {
    return be && be->ops == &cu_ops ? CTX(be)->stream : NULL;
}

static int cu_init(nn_backend *be) {
    cu_ctx *c = CTX(be);
    CUDA_CHECK(cudaSetDevice(c->device), "select another GPU with CUDA_VISIBLE_DEVICES");
    CUDA_CHECK(cudaGetDeviceProperties(&c->prop, c->device), "");
    CUDA_CHECK(cudaDriverGetVersion(&c->driver), "");
    CUDA_CHECK(cudaRuntimeGetVersion(&c->runtime), "");
    CUDA_CHECK(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking), "");
    for (int i = 0; i < CU_STAGES; i++)
        CUDA_CHECK(cudaEventCreateWithFlags(&c->stage_ev[i], cudaEventDisableTiming), "");
    CUDA_CHECK(cudaMalloc((void **)&c->bad, CU_BAD_INTS * sizeof(int)), CU_HINT_MEM);
    CUDA_CHECK(cudaMemsetAsync(c->bad, 0, CU_BAD_INTS * sizeof(int), c->stream), "");
    CUDNN_CHECK(cudnnCreate(&c->dnn), "cuDNN could not start: check that libcudnn matches the driver and GPU");
    CUDNN_CHECK(cudnnSetStream(c->dnn, c->stream), "");
    CUBLAS_CHECK(cublasCreate(&c->blas), "cuBLAS could not start: check that libcublas matches the driver");
    CUBLAS_CHECK(cublasSetStream(c->blas, c->stream), "");
    /* default math: fp32 sgemm stays fp32, cublasGemmEx on 16-bit inputs uses the tensor cores */
    CUBLAS_CHECK(cublasSetMathMode(c->blas, c->prec == CU_PREC_TF32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH),
                 "");
    c->half = (cu_half){.prec = c->prec, .dnn = c->dnn, .blas = c->blas, .stream = c->stream};
    snprintf(be->device, sizeof be->device, "%s (sm_%d%d, %.1f GiB, %d SMs)", c->prop.name, c->prop.major,
             c->prop.minor, (double)c->prop.totalGlobalMem / (1 << 30), c->prop.multiProcessorCount);
    return 0;
}

int nn_cudnn_new(nn_backend **out, const nn_backend_opts *opts) {
    *out = NULL;
    nn_backend_opts o = {0};
    o.autotune = 1;
    if (opts) o = *opts;
    cu_prec prec;
    SD_TRY(cu_prec_parse(o.precision, &prec));

    int count = 0, driver = 0;   /* cudaGetDeviceCount leaves count untouched when it fails */
    cudaError_t ce = cudaGetDeviceCount(&count);
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    SD_TRY(cu_device_count_status(ce, count, driver));
    if (o.device < 0 || o.device >= count)
        return sd_err(SD_ENODEV, "cudnn: no CUDA device %d (this machine has %d)", o.device, count);

    /* a device but no loadable cuDNN/cuBLAS is a broken install, not "no device" (SD_EBACKEND) */
    SD_TRY(cu_dl_require_all(&cu_lib_cudnn, cu_dl_cudnn_names));
    SD_TRY(cu_check_sublibs(cu_cudnn_sublibs, CU_NSUBLIBS));
    SD_TRY(cu_dl_require_all(&cu_lib_cublas, cu_dl_cublas_names));

    nn_backend *be = calloc(1, sizeof *be);
    cu_ctx *c = calloc(1, sizeof *c);
    if (!be || !c) { free(be); free(c); return sd_err(SD_ENOMEM, "cudnn: out of memory"); }
    be->ops = &cu_ops;
    be->ctx = c;
    be->opts = o;
    snprintf(be->name, sizeof be->name, "cudnn");
    c->prec = prec;
    c->autotune = o.autotune;
    c->device = o.device;
    int rc = cu_init(be);
    if (rc == 0) rc = cu_prec_check_device(prec, c->prop.major, c->prop.minor, c->prop.name);
    if (rc < 0) { cu_destroy(be); return rc; }
    *out = be;
    return 0;
}
