/* cudnn_algo — which cuDNN algorithm each convolution direction runs: cuDNN's heuristic, or (autotune) its timed
 * search over buffers of the layer's shape, within a workspace limit of half the free device memory; cached per
 * shape, and the shared workspace grown to the largest choice. */
#include "be_cudnn/cudnn_ctx.h"
#include "be_cudnn/cu_dl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CU_TO_PERF(dst, src, n) do {                                                         \
        for (int i_ = 0; i_ < (n); i_++) {                                                   \
            (dst)[i_].algo = (int)(src)[i_].algo; (dst)[i_].status = (src)[i_].status;       \
            (dst)[i_].time_ms = (src)[i_].time; (dst)[i_].memory = (src)[i_].memory;         \
            (dst)[i_].math = (src)[i_].mathType;                                             \
        }                                                                                    \
    } while (0)

static int pick_into(cu_algo_perf *out, const cu_algo_perf *cand, int n, size_t limit, cu_prec prec, int heuristic,
                     const char *dir, const nn_op *op) {
    int i = cu_algo_pick(cand, n, limit, prec != CU_PREC_FP32);
    if (i < 0) {
        char key[96];
        cu_conv_key(op, key, sizeof key);
        return sd_err(SD_EUNSUPPORTED, "cudnn: no usable %s convolution algorithm for %s (%d candidates, "
                      "workspace limit %zu bytes, %s)", dir, key, n, limit, cu_prec_name(prec));
    }
    *out = cand[i];
    if (heuristic) out->time_ms = -1;
    return 0;
}

/* _v7 heuristics: no device work, candidates ranked by cuDNN's model. */
static int choose_heuristic(cu_ctx *c, const nn_op *op, const cu_descs *d, size_t limit, cu_conv_choice *ch) {
    cu_algo_perf cand[CU_MAX_PERF];
    int got = 0;
    {
        cudnnConvolutionFwdAlgoPerf_t p[CU_MAX_PERF];
        CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(c->dnn, d->x, d->w, d->conv[CU_FWD], d->y, CU_MAX_PERF,
                                                           &got, p), CU_HINT_DESC);
        CU_TO_PERF(cand, p, got);
        SD_TRY(pick_into(&ch->dir[CU_FWD], cand, got, limit, c->prec, 1, "forward", op));
    }
    {
        cudnnConvolutionBwdDataAlgoPerf_t p[CU_MAX_PERF];
        CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(c->dnn, d->w, d->y, d->conv[CU_BWD_DATA], d->x,
                                                                CU_MAX_PERF, &got, p), CU_HINT_DESC);
        CU_TO_PERF(cand, p, got);
        SD_TRY(pick_into(&ch->dir[CU_BWD_DATA], cand, got, limit, c->prec, 1, "backward-data", op));
    }
    {
        cudnnConvolutionBwdFilterAlgoPerf_t p[CU_MAX_PERF];
        CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(c->dnn, d->x, d->y, d->conv[CU_BWD_FILTER], d->w,
                                                                  CU_MAX_PERF, &got, p), CU_HINT_DESC);
        CU_TO_PERF(cand, p, got);
        SD_TRY(pick_into(&ch->dir[CU_BWD_FILTER], cand, got, limit, c->prec, 1, "backward-filter", op));
    }
    ch->searched = 0;
    return 0;
}

/* Scratch buffers for the search: x (also used as dx), w (also dw), y (also dy), workspace. */
typedef struct find_bufs { void *x, *w, *y, *ws; size_t ws_size; } find_bufs;

static void find_bufs_free(find_bufs *b) {
    (void)cudaFree(b->x); (void)cudaFree(b->w); (void)cudaFree(b->y); (void)cudaFree(b->ws);
    memset(b, 0, sizeof *b);
}

static int find_bufs_alloc(cu_ctx *c, const nn_op *op, size_t limit, find_bufs *b) {
    size_t xs = sizeof(float) * op->n * op->c * op->h * op->w, ys = sizeof(float) * numel_out(op);
    size_t ws = sizeof(float) * op->oc * op->c * op->kh * op->kw;
    CUDA_CHECK(cudaMalloc(&b->x, xs), CU_HINT_MEM);
    CUDA_CHECK(cudaMalloc(&b->w, ws), CU_HINT_MEM);
    CUDA_CHECK(cudaMalloc(&b->y, ys), CU_HINT_MEM);
    CUDA_CHECK(cudaMemsetAsync(b->x, 0, xs, c->stream), "");
    CUDA_CHECK(cudaMemsetAsync(b->w, 0, ws, c->stream), "");
    CUDA_CHECK(cudaMemsetAsync(b->y, 0, ys, c->stream), "");
    /* as much search workspace as fits, halving from the limit; algorithms needing more are skipped */
    for (size_t s = limit; s >= ((size_t)1 << 20); s /= 2) {
        if (cudaMalloc(&b->ws, s) == cudaSuccess) { b->ws_size = s; break; }
        (void)cudaGetLastError();   /* clear the allocation failure */
        b->ws = NULL;
    }
    CUDA_CHECK(cudaStreamSynchronize(c->stream), CU_HINT_KERNEL);
    return 0;
}

/* cudnnFind*AlgorithmEx: runs every algorithm on scratch buffers and ranks them by measured time. */
static int choose_find(cu_ctx *c, const nn_op *op, const cu_descs *d, const find_bufs *b, cu_conv_choice *ch) {
    cu_algo_perf cand[CU_MAX_PERF];
    int got = 0;
    {
        cudnnConvolutionFwdAlgoPerf_t p[CU_MAX_PERF];
        CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(c->dnn, d->x, b->x, d->w, b->w, d->conv[CU_FWD], d->y,
                                                           b->y, CU_MAX_PERF, &got, p, b->ws, b->ws_size),
                    CU_HINT_MEM);
        CU_TO_PERF(cand, p, got);
        SD_TRY(pick_into(&ch->dir[CU_FWD], cand, got, b->ws_size, c->prec, 0, "forward", op));
    }
    {
        cudnnConvolutionBwdDataAlgoPerf_t p[CU_MAX_PERF];
        CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx(c->dnn, d->w, b->w, d->y, b->y, d->conv[CU_BWD_DATA],
                                                                d->x, b->x, CU_MAX_PERF, &got, p, b->ws, b->ws_size),
                    CU_HINT_MEM);
        CU_TO_PERF(cand, p, got);
        SD_TRY(pick_into(&ch->dir[CU_BWD_DATA], cand, got, b->ws_size, c->prec, 0, "backward-data", op));
    }
    {
        cudnnConvolutionBwdFilterAlgoPerf_t p[CU_MAX_PERF];
        CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithmEx(c->dnn, d->x, b->x, d->y, b->y,
                                                                  d->conv[CU_BWD_FILTER], d->w, b->w, CU_MAX_PERF,
                                                                  &got, p, b->ws, b->ws_size), CU_HINT_MEM);
        CU_TO_PERF(cand, p, got);
        SD_TRY(pick_into(&ch->dir[CU_BWD_FILTER], cand, got, b->ws_size, c->prec, 0, "backward-filter", op));
    }
    ch->searched = 1;
    return 0;
}

/* Workspace limit: half of the free device memory, at most CU_WS_CAP. */
static int ws_limit(size_t *out) {
    size_t fr = 0, total = 0;
    CUDA_CHECK(cudaMemGetInfo(&fr, &total), "");
    *out = fr / 2 < CU_WS_CAP ? fr / 2 : CU_WS_CAP;
    return 0;
}

/* Sets each direction's math type on its descriptor and re-reads the exact workspace it needs. */
static int apply_choice(cu_ctx *c, cu_descs *d, cu_conv_choice *ch) {
    for (int i = 0; i < 3; i++) {
        ch->dir[i].math = cu_algo_math(ch->dir[i].math, tensor_ops(c));
        CUDNN_CHECK(cudnnSetConvolutionMathType(d->conv[i], ch->dir[i].math), "");
    }
    CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(c->dnn, d->x, d->w, d->conv[CU_FWD], d->y,
                                                        (cudnnConvolutionFwdAlgo_t)ch->dir[CU_FWD].algo,
                                                        &ch->dir[CU_FWD].memory), CU_HINT_DESC);
    CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(c->dnn, d->w, d->y, d->conv[CU_BWD_DATA], d->x,
                                                             (cudnnConvolutionBwdDataAlgo_t)ch->dir[CU_BWD_DATA].algo,
                                                             &ch->dir[CU_BWD_DATA].memory), CU_HINT_DESC);
    CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(
                    c->dnn, d->x, d->y, d->conv[CU_BWD_FILTER], d->w,
                    (cudnnConvolutionBwdFilterAlgo_t)ch->dir[CU_BWD_FILTER].algo, &ch->dir[CU_BWD_FILTER].memory),
                CU_HINT_DESC);
    return 0;
}

int cu_grow_workspace(nn_backend *be, size_t need) {
    cu_ctx *c = CTX(be);
    if (need <= c->ws_size) return 0;
    CUDA_CHECK(cudaStreamSynchronize(c->stream), CU_HINT_KERNEL);
    if (c->ws) CUDA_CHECK(cudaFree(c->ws), "");
    be->bytes_in_use -= c->ws_size;
    c->ws = NULL;
    c->ws_size = 0;
    CUDA_CHECK(cudaMalloc(&c->ws, need), CU_HINT_MEM);
    c->ws_size = need;
    be->bytes_in_use += need;
    if (be->bytes_in_use > be->bytes_peak) be->bytes_peak = be->bytes_in_use;
    return 0;
}

int cu_conv_choose(nn_backend *be, const nn_op *op, cu_priv *p) {
    cu_ctx *c = CTX(be);
    cu_descs *d = cu_prec_half(c->prec) ? &p->h : &p->d;   /* the descriptors the convolution runs on */
    char key[96];
    cu_conv_key(op, key, sizeof key);
    for (int i = 0; i < c->nchoices; i++)
        if (strcmp(c->choices[i].key, key) == 0) {
            p->choice = c->choices[i];
            SD_TRY(apply_choice(c, d, &p->choice));
            goto sized;
        }
    cu_conv_choice ch;
    memset(&ch, 0, sizeof ch);
    snprintf(ch.key, sizeof ch.key, "%s", key);
    size_t limit = 0;
    SD_TRY(ws_limit(&limit));
    if (c->autotune) {
        find_bufs b;
        memset(&b, 0, sizeof b);
        int rc = find_bufs_alloc(c, op, limit, &b);
        if (rc == 0) rc = choose_find(c, op, d, &b, &ch);
        find_bufs_free(&b);
        SD_TRY(rc);
    } else {
        SD_TRY(choose_heuristic(c, op, d, limit, &ch));
    }
    SD_TRY(apply_choice(c, d, &ch));
    if (c->nchoices == c->cap) {
        int cap = c->cap ? 2 * c->cap : 8;
        cu_conv_choice *n = realloc(c->choices, sizeof *n * (size_t)cap);
        SD_ALLOC_CHECK(n);
        c->choices = n;
        c->cap = cap;
    }
    c->choices[c->nchoices++] = ch;
    p->choice = ch;
sized:;
    size_t need = 0;
    for (int i = 0; i < 3; i++)
        if (p->choice.dir[i].memory > need) need = p->choice.dir[i].memory;
    return cu_grow_workspace(be, need);
}

