/* dp — data-parallel replicas, batch split, gradient buckets, the in-process (host) reduction and the
 * data-parallel training loop. Replicas are driven one after another from this thread; on GPUs their work
 * overlaps because each device runs its own stream. */
#include "nn/dp.h"
#include "nn/backend_impl.h"
#include "core/clock.h"
#include "core/err.h"
#include "nn/kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- split and buckets --------------------------------------------------------------------------- */

int nn_dp_split(int B, int R, int *sizes, int *offs) {
    if (R < 1 || R > NN_DP_MAX) return sd_err(SD_EUSAGE, "%d replicas (1..%d)", R, NN_DP_MAX);
    if (B < R) return sd_err(SD_EUSAGE, "a batch of %d cannot be split over %d replicas (each needs an example)", B, R);
    int off = 0;
    for (int r = 0; r < R; r++) {
        sizes[r] = B / R + (r < B % R);
        offs[r] = off;
        off += sizes[r];
    }
    return 0;
}

int nn_dp_buckets(size_t n, size_t bucket_floats, nn_bucket **out) {
    *out = NULL;
    if (bucket_floats == 0) return sd_err(SD_EUSAGE, "bucket size 0");
    size_t nb = n / bucket_floats + (n % bucket_floats != 0);
    if (nb == 0) return 0;
    if (nb > (size_t)1 << 30) return sd_err(SD_ELIMIT, "%zu gradient buckets", nb);
    nn_bucket *b = malloc(nb * sizeof *b);
    SD_ALLOC_CHECK(b);
    for (size_t i = 0; i < nb; i++) {
        b[i].off = i * bucket_floats;
        b[i].len = i + 1 < nb ? bucket_floats : n - b[i].off;
    }
    *out = b;
    return (int)nb;
}

/* ---- the host reduction -------------------------------------------------------------------------- */

typedef struct host_ctx { float *acc, *tmp; size_t cap; } host_ctx;

static int host_allreduce(nn_reducer *red, float *const *bufs, size_t n, const float *weights) {
    host_ctx *h = red->ctx;
    if (n > h->cap) {
        float *a = realloc(h->acc, n * sizeof(float)), *t = a ? realloc(h->tmp, n * sizeof(float)) : NULL;
        if (a) h->acc = a;
        if (t) h->tmp = t;
        if (!a || !t) return sd_err(SD_ENOMEM, "out of memory for a gradient bucket of %zu floats", n);
        h->cap = n;
    }
    const int R = red->nranks;
    for (int r = 0; r < R; r++) {   /* rank order: the same sum on every run */
        nn_backend *be = red->bes[r];
        SD_TRY(be->ops->download(be, r ? h->tmp : h->acc, bufs[r], n * sizeof(float)));
        if (weights) {
            float wr = weights[r];
            if (r == 0) for (size_t i = 0; i < n; i++) h->acc[i] *= wr;
            else for (size_t i = 0; i < n; i++) h->acc[i] += wr * h->tmp[i];
        } else if (r) {
            for (size_t i = 0; i < n; i++) h->acc[i] += h->tmp[i];
        }
    }
    if (!weights) {   /* sum, then average */
        float inv = 1.0f / (float)R;
        for (size_t i = 0; i < n; i++) h->acc[i] *= inv;
    }
    for (int r = 0; r < R; r++) SD_TRY(red->bes[r]->ops->upload(red->bes[r], bufs[r], h->acc, n * sizeof(float)));
    return 0;
}

static void host_destroy(nn_reducer *red) {
    host_ctx *h = red->ctx;
    if (h) { free(h->acc); free(h->tmp); free(h); }
}

static const nn_reducer_ops host_ops = {.name = "host", .select = NULL, .allreduce = host_allreduce,
                                        .destroy = host_destroy};

int nn_reducer_new(nn_reducer **out, const nn_reducer_ops *ops, size_t ctx_size, nn_backend *const *bes, int n,
                   const char *ranks) {
    *out = NULL;
    if (n < 1 || n > NN_DP_MAX) return sd_err(SD_EUSAGE, "%d %s (1..%d)", n, ranks, NN_DP_MAX);
    nn_reducer *red = calloc(1, sizeof *red);
    void *ctx = calloc(1, ctx_size);
    if (!red || !ctx) { free(red); free(ctx); return sd_err(SD_ENOMEM, "out of memory"); }
    red->ops = ops;
    red->nranks = n;
    red->ctx = ctx;
    for (int r = 0; r < n; r++) red->bes[r] = bes[r];
    *out = red;
    return 0;
}

int nn_reducer_host_new(nn_reducer **out, nn_backend *const *bes, int n) {
    return nn_reducer_new(out, &host_ops, sizeof(host_ctx), bes, n, "replicas");
}

void nn_reducer_free(nn_reducer *red) {
    if (!red) return;
    if (red->ops->destroy) red->ops->destroy(red);
    free(red);
}

static int select_rank(nn_reducer *red, int r) { return red && red->ops->select ? red->ops->select(red, r) : 0; }

/* ---- replicas ------------------------------------------------------------------------------------ */

void nn_dp_free(nn_dp *dp) {
    if (!dp) return;
    for (int r = 0; r < dp->R; r++) {
        if (!dp->m[r]) continue;
        select_rank(dp->red, r);
        nn_model_free(dp->m[r]);
    }
    free(dp->buckets);
    free(dp);
}

int nn_dp_new(nn_dp **out, const sd_workload *w, nn_backend *const *bes, int R, int global_batch, uint64_t seed,
              nn_reducer *red, size_t bucket_floats) {
    *out = NULL;
    if (!red || red->nranks != R) return sd_err(SD_EUSAGE, "the reducer has %d ranks for %d replicas", red ? red->nranks : 0, R);
    nn_dp *dp = calloc(1, sizeof *dp);
    SD_ALLOC_CHECK(dp);
    dp->R = R;
    dp->global_batch = global_batch;
    dp->red = red;
    int rc = nn_dp_split(global_batch, R, dp->sizes, dp->offs);
    if (rc) { free(dp); return rc; }
    dp->equal = 1;
    for (int r = 0; r < R; r++) {
        dp->weights[r] = (float)dp->sizes[r] / (float)global_batch;
        if (dp->sizes[r] != dp->sizes[0]) dp->equal = 0;
    }
    for (int r = 0; r < R && rc == 0; r++) {
        SD_TRY_GOTO(rc, select_rank(red, r), fail);
        SD_TRY_GOTO(rc, nn_model_build(&dp->m[r], w, bes[r], dp->sizes[r], seed), fail);
    }
    rc = nn_dp_buckets(dp->m[0]->nparams, bucket_floats ? bucket_floats : NN_DP_BUCKET_FLOATS, &dp->buckets);
    if (rc < 0) goto fail;
    dp->nbuckets = rc;
    *out = dp;
    return 0;
fail:
    nn_dp_free(dp);
    return rc;
}

int nn_dp_step(nn_dp *dp, const float *x, const int32_t *y, uint64_t dropout_seed, float *loss) {
    const int R = dp->R;
    nn_model *m0 = dp->m[0];
    const size_t per = (size_t)m0->in_c * m0->in_h * m0->in_w;
    for (int r = 0; r < R; r++) {
        nn_model *m = dp->m[r];
        SD_TRY(select_rank(dp->red, r));
        /* nn_train's upload: token ids for an embedding, one-hot targets for sigmoid BCE, the labels */
        SD_TRY(nn_train_upload_batch(m, x + (size_t)dp->offs[r] * per, y + dp->offs[r]));
        /* replica 0 drops what a single model would; the others draw their own masks */
        SD_TRY(nn_model_forward(m, 1, r ? nn_hash64(dropout_seed + (uint64_t)r) : dropout_seed));
        SD_TRY(nn_model_backward(m));
    }
    float *bufs[NN_DP_MAX];
    for (int b = 0; b < dp->nbuckets; b++) {
        for (int r = 0; r < R; r++) bufs[r] = dp->m[r]->grads + dp->buckets[b].off;
        SD_TRY(dp->red->ops->allreduce(dp->red, bufs, dp->buckets[b].len, dp->equal ? NULL : dp->weights));
    }
    for (int r = 0; r < R; r++) {
        SD_TRY(select_rank(dp->red, r));
        SD_TRY(nn_model_step(dp->m[r]));
        if (loss) SD_TRY(dp->m[r]->be->ops->download(dp->m[r]->be, loss + dp->offs[r], dp->m[r]->loss,
                                                     (size_t)dp->m[r]->batch * sizeof(float)));
    }
    return 0;
}

/* ---- the training loop --------------------------------------------------------------------------- */

int nn_dp_train(const sd_workload *w, nn_backend *const *bes, int R, nn_reducer *red, const sd_dataset *train,
                const sd_dataset *test, const nn_train_opts *o, nn_train_result *out) {
    memset(out, 0, sizeof *out);
    if (R < 1 || R > NN_DP_MAX) return sd_err(SD_EUSAGE, "--gpus %d (1..%d)", R, NN_DP_MAX);
    const int B = o->batch * R;   /* global batch: the per-replica batch on every replica */
    SD_TRY(nn_train_check_data(w, train, test));
    int nb = train->n / B;
    if (o->max_batches > 0 && nb > o->max_batches) nb = o->max_batches;
    if (nb == 0)
        return sd_err(SD_EINPUT, "%s: %d examples hold no full global batch of %d (%d replicas x %d)", train->source,
                      train->n, B, R, o->batch);
    nn_dp *dp = NULL;
    SD_TRY(nn_dp_new(&dp, w, bes, R, B, o->seed, red, 0));
    nn_model *m0 = dp->m[0];
    nn_train_host h = {0};
    int rc = nn_train_host_new(&h, w, train, B, o, m0, out);
    if (rc) goto done;
    for (int e = 1; e <= o->epochs; e++) {
        nn_epoch_stats *st = nn_train_epoch_begin(&h, train->n, o, out, e);
        double lsum = 0, t0 = sd_now();
        for (int b = 0; b < nb; b++) {
            if (o->stop && *o->stop) { rc = sd_err(SD_EINTR, "interrupted"); goto done; }
            nn_train_gather(train, h.idx, b * B, B, h.x, h.y);
            SD_TRY_GOTO(rc, nn_dp_step(dp, h.x, h.y, nn_hash64(o->seed ^ (uint64_t)m0->step * 0x9E37ULL), h.loss), done);
            for (int i = 0; i < B; i++) lsum += h.loss[i];
        }
        for (int r = 0; r < R; r++) {
            SD_TRY_GOTO(rc, select_rank(red, r), done);
            SD_TRY_GOTO(rc, bes[r]->ops->sync(bes[r]), done);
        }
        SD_TRY_GOTO(rc, nn_train_epoch_trained(st, t0, (long)nb * B, lsum), done);
        double t1 = sd_now();
        SD_TRY_GOTO(rc, select_rank(red, 0), done);
        SD_TRY_GOTO(rc, nn_evaluate(m0, test, o->max_batches, h.x, h.y, h.prob, h.loss, &st->accuracy, &st->val_loss,
                                    &st->test_images, out->confusion), done);
        SD_TRY_GOTO(rc, bes[0]->ops->sync(bes[0]), done);
        st->val_s = sd_now() - t1;
        out->nepochs = e;
        if (o->progress)
            fprintf(stderr, "%s: epoch %d/%d train %.2fs (%.0f img/s over %d replicas) loss %.4f | val %.2fs accuracy %.4f\n",
                    o->label ? o->label : "train", e, o->epochs, st->train_s, st->train_images / st->train_s, R,
                    st->loss, st->val_s, st->accuracy);
    }
    for (int r = 0; r < R; r++)
        if (bes[r]->bytes_peak > out->peak_bytes) out->peak_bytes = bes[r]->bytes_peak;
done:
    nn_train_host_free(&h);
    nn_dp_free(dp);
    if (rc) nn_train_result_free(out);
    return rc;
}

int nn_dp_train_replicas(nn_backend *be0, int R, const sd_workload *w, const sd_dataset *train,
                         const sd_dataset *test, const nn_train_opts *o, nn_train_result *out, char *how,
                         size_t how_len) {
    if (R < 1 || R > NN_DP_MAX) return sd_err(SD_EUSAGE, "--gpus %d (1..%d)", R, NN_DP_MAX);
    nn_backend *bes[NN_DP_MAX] = {be0};
    nn_reducer *red = NULL;
    int rc = 0, gpu = nn_backend_name_gpu(be0->name);
    for (int r = 1; r < R && rc == 0; r++) {
        nn_backend_opts bo = be0->opts;
        bo.device = gpu ? r : 0;
        bo.quiet = 1;
        rc = nn_backend_new(&bes[r], be0->name, &bo, NULL, 0);
    }
    if (rc == 0) rc = gpu ? nn_reducer_nccl_new(&red, bes, R) : nn_reducer_host_new(&red, bes, R);
    if (rc == 0) {
        if (how) snprintf(how, how_len, "%s", red->ops->name);
        rc = nn_dp_train(w, bes, R, red, train, test, o, out);
    }
    nn_reducer_free(red);
    for (int r = 1; r < R; r++) nn_backend_free(bes[r]);
    return rc;
}
