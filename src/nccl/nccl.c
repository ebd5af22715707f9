/* nccl — the NCCL reduction for data-parallel training: one process drives R GPUs (ncclCommInitAll over
 * devices 0..R-1); gradient buckets are averaged with ncclAllReduce(ncclAvg) inside ncclGroupStart/End,
 * on a stream per device. Ordering is by events, never by the host waiting: each NCCL stream waits for its
 * replica's back-end stream (the backward pass), and the back-end stream waits for the all-reduce before the
 * optimizer step. Compiled only when CUDA and NCCL are found (Makefile); verified by `make gpu-check` on
 * >= 2 GPUs. */
#include "nn/dp.h"
#include "core/err.h"
#include "be_cudnn/cu_dl.h"
#include "be_cudnn/cudnn_be.h"

#include <cuda_runtime.h>
#include <nccl.h>
#include <stdlib.h>

typedef struct nccl_ctx {
    ncclComm_t comms[NN_DP_MAX];
    cudaStream_t streams[NN_DP_MAX];
    cudaEvent_t ready[NN_DP_MAX], done[NN_DP_MAX];   /* backward queued on the back-end; all-reduce queued */
    int ncomms;
} nccl_ctx;

#define CU_TRY(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) \
    return sd_err(SD_EBACKEND, "nccl: %s returned %d (%s)", #call, (int)e_, cudaGetErrorString(e_)); } while (0)
#define NC_TRY(call) do { ncclResult_t e_ = (call); if (e_ != ncclSuccess) \
    return sd_err(SD_EBACKEND, "nccl: %s returned %d (%s)", #call, (int)e_, ncclGetErrorString(e_)); } while (0)

int nn_nccl_compiled(void) { return 1; }

static int nc_select(nn_reducer *red, int rank) {
    (void)red;
    CU_TRY(cudaSetDevice(rank));
    return 0;
}

static int nc_allreduce(nn_reducer *red, float *const *bufs, size_t n, const float *weights) {
    nccl_ctx *c = red->ctx;
    const int R = red->nranks;
    if (weights) {
        for (int r = 1; r < R; r++)
            if (weights[r] != weights[0])
                return sd_err(SD_EUNSUPPORTED, "nccl: replicas with unequal batches (give a batch divisible by %d)", R);
    }
    cudaStream_t be_s[NN_DP_MAX];
    for (int r = 0; r < R; r++) {   /* the all-reduce starts after everything queued on the replica so far */
        be_s[r] = cu_backend_stream(red->bes[r]);
        if (!be_s[r]) return sd_err(SD_EUNSUPPORTED, "nccl: replica %d is not on the cudnn back-end", r);
        CU_TRY(cudaSetDevice(r));
        CU_TRY(cudaEventRecord(c->ready[r], be_s[r]));
        CU_TRY(cudaStreamWaitEvent(c->streams[r], c->ready[r], 0));
    }
    NC_TRY(ncclGroupStart());
    for (int r = 0; r < R; r++) {
        ncclResult_t e = ncclAllReduce(bufs[r], bufs[r], n, ncclFloat, ncclAvg, c->comms[r], c->streams[r]);
        if (e != ncclSuccess) {
            (void)ncclGroupEnd();
            return sd_err(SD_EBACKEND, "nccl: ncclAllReduce on rank %d returned %d (%s)", r, (int)e, ncclGetErrorString(e));
        }
    }
    NC_TRY(ncclGroupEnd());
    for (int r = 0; r < R; r++) {   /* what the replica queues next (the optimizer step) waits for the average */
        CU_TRY(cudaSetDevice(r));
        CU_TRY(cudaEventRecord(c->done[r], c->streams[r]));
        CU_TRY(cudaStreamWaitEvent(be_s[r], c->done[r], 0));
    }
    return 0;
}

static void nc_destroy(nn_reducer *red) {
    nccl_ctx *c = red->ctx;
    if (!c) return;
    for (int r = 0; r < c->ncomms; r++) {
        (void)cudaSetDevice(r);
        if (c->streams[r]) (void)cudaStreamSynchronize(c->streams[r]);
        if (c->ready[r]) (void)cudaEventDestroy(c->ready[r]);
        if (c->done[r]) (void)cudaEventDestroy(c->done[r]);
        if (c->streams[r]) (void)cudaStreamDestroy(c->streams[r]);
        if (c->comms[r]) (void)ncclCommDestroy(c->comms[r]);
    }
    free(c);
}

static const nn_reducer_ops nccl_ops = {.name = "nccl", .select = nc_select, .allreduce = nc_allreduce,
                                        .destroy = nc_destroy};

static int nc_init(nn_reducer *red, int n) {
    nccl_ctx *c = red->ctx;
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count < n)
        return sd_err(SD_ENODEV, "nccl: %d GPUs requested, %d visible%s%s", n, e == cudaSuccess ? count : 0,
                      e == cudaSuccess ? "" : ": ", e == cudaSuccess ? "" : cudaGetErrorString(e));
    SD_TRY(cu_dl_require_all(&cu_lib_nccl, cu_dl_nccl_names));
    int devs[NN_DP_MAX];
    for (int r = 0; r < n; r++) devs[r] = r;
    NC_TRY(ncclCommInitAll(c->comms, n, devs));
    c->ncomms = n;
    for (int r = 0; r < n; r++) {
        CU_TRY(cudaSetDevice(r));
        CU_TRY(cudaStreamCreateWithFlags(&c->streams[r], cudaStreamNonBlocking));
        CU_TRY(cudaEventCreateWithFlags(&c->ready[r], cudaEventDisableTiming));
        CU_TRY(cudaEventCreateWithFlags(&c->done[r], cudaEventDisableTiming));
    }
    return 0;
}

int nn_reducer_nccl_new(nn_reducer **out, nn_backend *const *bes, int n) {
    SD_TRY(nn_reducer_new(out, &nccl_ops, sizeof(nccl_ctx), bes, n, "GPUs"));
    int rc = nc_init(*out, n);
    if (rc) { nn_reducer_free(*out); *out = NULL; }
    return rc;
}
