/* dp — data-parallel training: R replicas of one model (one per GPU, or several on a CPU back-end), each
 * on its share of the global batch; after each backward pass the gradients are all-reduced bucket by
 * bucket (contiguous slices of the parameter slab) and every replica takes the same optimizer step, so the
 * parameters stay identical. Reductions go through nn_reducer: in-process on the host (any back-end;
 * the tests' reference) or NCCL (nccl/, one process driving R GPUs). */
#ifndef SD_NN_DP_H
#define SD_NN_DP_H

#include "nn/train.h"

#define NN_DP_MAX 64
#define NN_DP_BUCKET_FLOATS ((size_t)25 * 1024 * 1024 / sizeof(float))   /* 25 MB, as PyTorch DDP */

typedef struct nn_reducer nn_reducer;

typedef struct nn_reducer_ops {
    const char *name;
    /* Make replica `rank`'s device current before it is driven (NCCL: cudaSetDevice). May be NULL. */
    int (*select)(nn_reducer *red, int rank);
    /* bufs[r]: n floats in replica r's device memory. Afterwards every buffer holds the weighted sum
     * sum_r weights[r] * bufs[r]; weights NULL: the mean (sum, then divided by R). */
    int (*allreduce)(nn_reducer *red, float *const *bufs, size_t n, const float *weights);
    void (*destroy)(nn_reducer *red);
} nn_reducer_ops;

struct nn_reducer {
    const nn_reducer_ops *ops;
    int nranks;
    nn_backend *bes[NN_DP_MAX];
    void *ctx;
};

/* The reducer shell every reduction starts from: ops over bes[0..n), a zeroed context of ctx_size bytes (ops->destroy
 * frees it; free the reducer with nn_reducer_free). ranks names them in the range error ("replicas", "GPUs"). */
int nn_reducer_new(nn_reducer **out, const nn_reducer_ops *ops, size_t ctx_size, nn_backend *const *bes, int n,
                   const char *ranks);
/* In-process reduction through host memory (download, sum in rank order, upload): deterministic. */
int nn_reducer_host_new(nn_reducer **out, nn_backend *const *bes, int n);
/* NCCL over the GPUs 0..n-1 of this process (ncclCommInitAll); SD_ENODEV with why where NCCL or the
 * devices are missing, SD_EUNSUPPORTED in builds without NCCL. */
int nn_reducer_nccl_new(nn_reducer **out, nn_backend *const *bes, int n);
/* Is NCCL compiled in? */
int nn_nccl_compiled(void);
void nn_reducer_free(nn_reducer *red);

/* A contiguous slice [off, off + len) of the parameter slab. */
typedef struct nn_bucket { size_t off, len; } nn_bucket;

/* Split n parameters into buckets of at most bucket_floats (the last one shorter): every parameter in
 * exactly one bucket, in slab order. Returns the count (0 for n = 0) or SD_E*; *out is malloc'd. */
int nn_dp_buckets(size_t n, size_t bucket_floats, nn_bucket **out);

/* Split a global batch of B examples over R replicas: the first B % R replicas take B / R + 1 examples,
 * the others B / R (replica r starts at offs[r]); every replica needs at least one (SD_EUSAGE if B < R).
 * Gradients are then weighted sizes[r] / B, so the step equals one model's on the whole batch. */
int nn_dp_split(int B, int R, int *sizes, int *offs);

typedef struct nn_dp {
    int R, global_batch;
    int sizes[NN_DP_MAX], offs[NN_DP_MAX];
    float weights[NN_DP_MAX];
    int equal;                 /* all sizes equal: the reduction is a plain mean */
    nn_model *m[NN_DP_MAX];    /* replica r on bes[r] */
    nn_reducer *red;
    nn_bucket *buckets;
    int nbuckets;
} nn_dp;

/* R replicas of w for a global batch, built from the same seed (identical parameters). bucket_floats 0:
 * NN_DP_BUCKET_FLOATS. The reducer is borrowed. */
int nn_dp_new(nn_dp **out, const sd_workload *w, nn_backend *const *bes, int R, int global_batch, uint64_t seed,
              nn_reducer *red, size_t bucket_floats);
void nn_dp_free(nn_dp *dp);
/* One training step on a global batch (host x [B][c][h][w], y [B]): per replica upload, forward and
 * backward; bucketed all-reduce; the optimizer step on every replica. loss (may be NULL) gets the per-example
 * losses [B]. */
int nn_dp_step(nn_dp *dp, const float *x, const int32_t *y, uint64_t dropout_seed, float *loss);

/* nn_train with R replicas: opts->batch is the batch PER REPLICA (as the published multi-GPU runs), the
 * global batch R × batch; validation on replica 0. R = 1 trains exactly as nn_train. */
int nn_dp_train(const sd_workload *w, nn_backend *const *bes, int R, nn_reducer *red, const sd_dataset *train,
                const sd_dataset *test, const nn_train_opts *o, nn_train_result *out);

/* --gpus R in bench: be0 is replica 0; replicas 1..R-1 are made like it (GPU back-ends on devices 1..R-1),
 * reduced with NCCL on GPUs and in-process on CPU back-ends. how (may be NULL) gets the reduction's name. */
int nn_dp_train_replicas(nn_backend *be0, int R, const sd_workload *w, const sd_dataset *train,
                         const sd_dataset *test, const nn_train_opts *o, nn_train_result *out, char *how,
                         size_t how_len);

#endif
