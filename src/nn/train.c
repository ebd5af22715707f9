/* train — the shared training loop: seeded shuffles, full batches, training and validation timed
 * apart, per-epoch loss and accuracy, progress on stderr. The same loop drives every back-end. */
#include "nn/train.h"
#include "nn/backend_impl.h"
#include "nn/kernels.h"
#include "core/clock.h"
#include "core/err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Fisher–Yates with the counter-based hash: the order depends only on (seed, epoch, n). */
void nn_train_shuffle(int *idx, int n, uint64_t seed, int epoch) {
    for (int i = 0; i < n; i++) idx[i] = i;
    uint64_t s = nn_hash64(seed ^ nn_hash64(0xE90C0000ULL + (uint64_t)epoch));
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(nn_hash64(s ^ (uint64_t)i) % (uint64_t)(i + 1));
        int t = idx[i]; idx[i] = idx[j]; idx[j] = t;
    }
}

int nn_train_check_data(const sd_workload *w, const sd_dataset *train, const sd_dataset *test) {
    if (train->c != w->in_c || train->h != w->in_h || train->w != w->in_w)
        return sd_err(SD_EINPUT, "%s: data shape %dx%dx%d does not match the workload's input %dx%dx%d",
                      train->source, train->c, train->h, train->w, w->in_c, w->in_h, w->in_w);
    if (train->classes > w->classes || test->classes > w->classes)
        return sd_err(SD_EINPUT, "%s: labels go up to %d but the workload has %d classes", train->source,
                      train->classes - 1, w->classes);
    return 0;
}

void nn_train_gather(const sd_dataset *d, const int *idx, int start, int batch, float *x, int32_t *y) {
    size_t per = (size_t)d->c * d->h * d->w;
    for (int b = 0; b < batch; b++) {
        int k = idx ? idx[start + b] : start + b;
        memcpy(x + (size_t)b * per, d->x + (size_t)k * per, per * sizeof(float));
        y[b] = d->y[k];
    }
}

/* Targets of a multi-label (sigmoid BCE) model from integer labels: one-hot rows (the data sets here carry
 * one label per example). */
static void targets_of(const int32_t *y, int batch, int C, float *t) {
    for (int b = 0; b < batch; b++)
        for (int k = 0; k < C; k++) t[(size_t)b * C + k] = y[b] == k ? 1.0f : 0.0f;
}

int nn_train_upload_batch(nn_model *m, const float *x, const int32_t *y) {
    nn_backend *be = m->be;
    SD_TRY(nn_model_upload_input(m, x));
    if (!m->labels) return 0;   /* inference-only model */
    if (m->targets) {
        size_t n = (size_t)m->batch * m->classes;
        float *t = malloc(sizeof(float) * n);
        SD_ALLOC_CHECK(t);
        targets_of(y, m->batch, m->classes, t);
        int rc = be->ops->upload(be, m->targets, t, n * sizeof(float));
        free(t);
        SD_TRY(rc);
    }
    return be->ops->upload(be, m->labels, y, (size_t)m->batch * sizeof(int32_t));
}

static int cmp_score(const void *a, const void *b) {
    float x = ((const float *)a)[0], y = ((const float *)b)[0];
    return (x > y) - (x < y);
}

double nn_mean_roc_auc(const float *scores, const float *targets, long n, int C) {
    float *pairs = malloc(sizeof(float) * 2 * (size_t)(n > 0 ? n : 1));
    if (!pairs) return NAN;
    double sum = 0;
    int used = 0;
    for (int k = 0; k < C; k++) {
        long pos = 0;
        for (long i = 0; i < n; i++) {
            pairs[2 * i] = scores[i * C + k];
            pairs[2 * i + 1] = targets[i * C + k] > 0.5f ? 1.0f : 0.0f;
            pos += pairs[2 * i + 1] > 0;
        }
        long neg = n - pos;
        if (pos == 0 || neg == 0) continue;
        qsort(pairs, (size_t)n, 2 * sizeof(float), cmp_score);
        /* Mann-Whitney: sum of the positives' ranks (ties share the mean rank) */
        double rank_sum = 0;
        for (long i = 0; i < n;) {
            long j = i;
            while (j < n && pairs[2 * j] == pairs[2 * i]) j++;
            double mean_rank = 0.5 * (double)(i + 1 + j);   /* ranks i+1 .. j */
            for (long q = i; q < j; q++) if (pairs[2 * q + 1] > 0) rank_sum += mean_rank;
            i = j;
        }
        sum += (rank_sum - 0.5 * (double)pos * (pos + 1)) / ((double)pos * neg);
        used++;
    }
    free(pairs);
    return used ? sum / used : NAN;
}

int nn_evaluate(nn_model *m, const sd_dataset *test, int max_batches, float *hx, int32_t *hy, float *hp,
                float *hl, double *accuracy, double *loss, long *images, int64_t *confusion) {
    nn_backend *be = m->be;
    int nb = test->n / m->batch;
    if (max_batches > 0 && nb > max_batches) nb = max_batches;
    if (nb == 0) return sd_err(SD_EINPUT, "test set of %d examples holds no full batch of %d", test->n, m->batch);
    long correct = 0;
    double lsum = 0;
    const int C = m->classes;
    if (confusion) memset(confusion, 0, sizeof(int64_t) * C * C);
    float *all_p = NULL, *all_t = NULL;   /* multi-label: every score and target, for the ROC AUC */
    if (m->targets) {
        all_p = malloc(sizeof(float) * (size_t)nb * m->batch * C);
        all_t = malloc(sizeof(float) * (size_t)nb * m->batch * C);
        if (!all_p || !all_t) { free(all_p); free(all_t); return sd_err(SD_ENOMEM, "out of memory for scores"); }
    }
    for (int b = 0; b < nb; b++) {
        nn_train_gather(test, NULL, b * m->batch, m->batch, hx, hy);
        SD_TRY(nn_train_upload_batch(m, hx, hy));
        SD_TRY(nn_model_forward(m, 0, 0));
        SD_TRY(be->ops->download(be, hp, m->prob, (size_t)m->batch * C * sizeof(float)));
        SD_TRY(be->ops->download(be, hl, m->loss, (size_t)m->batch * sizeof(float)));
        if (all_p) {
            memcpy(all_p + (size_t)b * m->batch * C, hp, sizeof(float) * (size_t)m->batch * C);
            targets_of(hy, m->batch, C, all_t + (size_t)b * m->batch * C);
        }
        for (int i = 0; i < m->batch; i++) {
            const float *p = hp + (size_t)i * C;
            int best = 0;
            for (int k = 1; k < C; k++) if (p[k] > p[best]) best = k;
            if (best == hy[i]) correct++;
            if (confusion) confusion[(size_t)hy[i] * C + best]++;
            lsum += hl[i];
        }
    }
    *images = (long)nb * m->batch;
    *accuracy = (double)correct / (double)*images;
    *loss = lsum / (double)*images;
    if (all_p) *accuracy = nn_mean_roc_auc(all_p, all_t, *images, C);
    free(all_p);
    free(all_t);
    return 0;
}

/* One pass of forward (inference mode) over nb full batches of d, the outputs copied to the host. */
static int infer_pass(nn_model *m, const sd_dataset *d, int nb, float *hx, int32_t *hy, float *hout) {
    nn_backend *be = m->be;
    float *out = m->out ? m->out : m->prob;
    size_t per = m->out ? m->out_elems : (size_t)m->classes;
    for (int b = 0; b < nb; b++) {
        nn_train_gather(d, NULL, b * m->batch, m->batch, hx, hy);
        SD_TRY(nn_train_upload_batch(m, hx, hy));
        SD_TRY(nn_model_forward(m, 0, 0));
        SD_TRY(be->ops->download(be, hout, out, (size_t)m->batch * per * sizeof(float)));
    }
    return be->ops->sync(be);
}

int nn_infer_more(int k, double best, double total) {
    if (k >= NN_INFER_MAX_PASSES) return 0;
    return total < NN_INFER_MIN_S || (k < NN_INFER_PASSES && best * NN_INFER_PASSES <= NN_INFER_FIT_S);
}

/* The timed inference passes (nn_infer_more): out->infer_s the fastest, out->infer_passes how many. */
static int infer_timed(nn_model *m, const sd_dataset *d, int nb, float *hx, int32_t *hy, float *hout,
                       const nn_train_opts *o, nn_train_result *out) {
    double best = INFINITY, total = 0;
    int k = 0;
    if (nb <= 0) return 0;   /* no full batch: no figure */
    do {
        if (k > 0 && o->stop && *o->stop) return sd_err(SD_EINTR, "interrupted");
        double t0 = sd_now();
        SD_TRY(infer_pass(m, d, nb, hx, hy, hout));
        double dt = sd_now() - t0;
        best = fmin(best, dt);
        total += dt;
        k++;
    } while (nn_infer_more(k, best, total));
    out->infer_s = best;
    out->infer_passes = k;
    out->infer_images = (long)nb * m->batch;
    return 0;
}

int nn_infer(const sd_workload *w, nn_backend *be, const sd_dataset *data, const nn_train_opts *o,
             nn_train_result *out) {
    memset(out, 0, sizeof *out);
    const int B = o->batch;
    if (data->c != w->in_c || data->h != w->in_h || data->w != w->in_w)
        return sd_err(SD_EINPUT, "%s: data shape %dx%dx%d does not match the workload's input %dx%dx%d",
                      data->source, data->c, data->h, data->w, w->in_c, w->in_h, w->in_w);
    int n = w->infer_images < data->n ? w->infer_images : data->n;
    int nb = n / B;
    if (o->max_batches > 0 && nb > o->max_batches) nb = o->max_batches;
    if (nb == 0) return sd_err(SD_EINPUT, "%s: %d images hold no full batch of %d", data->source, n, B);
    nn_model *m = NULL;
    SD_TRY(nn_model_build(&m, w, be, B, o->seed));
    size_t per_out = m->out ? m->out_elems : (size_t)m->classes;
    float *hx = malloc(sizeof(float) * (size_t)w->in_c * w->in_h * w->in_w * B);
    int32_t *hy = malloc(sizeof(int32_t) * B);
    float *hout = malloc(sizeof(float) * per_out * B);
    int rc = 0;
    if (!hx || !hy || !hout) { rc = sd_err(SD_ENOMEM, "out of memory for inference buffers"); goto done; }
    out->nparams = m->nparams;
    out->metric = "none";
    nn_model_flops(m->layers, m->nlayers, &out->flops_fwd, &out->flops_train);
    for (int p = 0; p < w->warmup_passes; p++) {
        if (o->stop && *o->stop) { rc = sd_err(SD_EINTR, "interrupted"); goto done; }
        double t0 = sd_now();
        SD_TRY_GOTO(rc, infer_pass(m, data, nb, hx, hy, hout), done);
        if (p == 0) out->cold_s = sd_now() - t0;
        if (o->progress) fprintf(stderr, "%s: untimed pass %d: %.2fs\n", o->label ? o->label : "infer", p + 1, sd_now() - t0);
    }
    if (o->stop && *o->stop) { rc = sd_err(SD_EINTR, "interrupted"); goto done; }
    SD_TRY_GOTO(rc, infer_timed(m, data, nb, hx, hy, hout, o, out), done);
    if (o->progress)
        fprintf(stderr, "%s: timed passes: %d, the fastest %ld images in %.2fs = %.3f s per 1,000 images\n",
                o->label ? o->label : "infer", out->infer_passes, out->infer_images, out->infer_s,
                1000.0 * out->infer_s / out->infer_images);
    out->peak_bytes = be->bytes_peak;
done:
    free(hx); free(hy); free(hout);
    nn_model_free(m);
    return rc;
}

int nn_train_host_new(nn_train_host *h, const sd_workload *w, const sd_dataset *train, int B,
                      const nn_train_opts *o, const nn_model *m, nn_train_result *out) {
    const size_t per = (size_t)w->in_c * w->in_h * w->in_w;
    h->idx = malloc(sizeof(int) * (size_t)train->n);
    h->x = malloc(sizeof(float) * per * (size_t)B);
    h->y = malloc(sizeof(int32_t) * (size_t)B);
    h->loss = malloc(sizeof(float) * (size_t)B);
    h->prob = malloc(sizeof(float) * (size_t)B * w->classes);
    out->epochs = calloc((size_t)o->epochs, sizeof *out->epochs);
    out->confusion = calloc((size_t)w->classes * w->classes, sizeof(int64_t));
    if (!h->idx || !h->x || !h->y || !h->loss || !h->prob || !out->epochs || !out->confusion)
        return sd_err(SD_ENOMEM, "out of memory for training buffers");
    out->classes = w->classes;
    out->nparams = m->nparams;
    nn_model_flops(m->layers, m->nlayers, &out->flops_fwd, &out->flops_train);
    return 0;
}

void nn_train_host_free(nn_train_host *h) {
    free(h->idx); free(h->x); free(h->y); free(h->loss); free(h->prob);
    memset(h, 0, sizeof *h);
}

nn_epoch_stats *nn_train_epoch_begin(nn_train_host *h, int n, const nn_train_opts *o, nn_train_result *out, int e) {
    nn_epoch_stats *st = &out->epochs[e - 1];
    st->epoch = e;
    if (o->shuffle) nn_train_shuffle(h->idx, n, o->seed, e);
    else for (int i = 0; i < n; i++) h->idx[i] = i;
    return st;
}

int nn_train_epoch_trained(nn_epoch_stats *st, double t0, long images, double lsum) {
    st->train_s = sd_now() - t0;
    st->train_images = images;
    st->loss = lsum / (double)images;
    if (lsum != lsum) return sd_err(SD_ERROR, "training diverged: loss is NaN in epoch %d", st->epoch);
    return 0;
}

void nn_train_result_free(nn_train_result *r) {
    if (!r) return;
    free(r->epochs);
    free(r->confusion);
    memset(r, 0, sizeof *r);
}

/* ---- dynamic loss scaling -------------------------------------------------------------------------- */

void nn_loss_scaler_init(nn_loss_scaler *s) {
    *s = (nn_loss_scaler){.scale = 65536.0f, .growth = 2.0f, .backoff = 0.5f, .interval = 2000};
}

/* torch.amp's _amp_update_scale_: back off on an overflow, grow after interval clean steps in a row. */
int nn_loss_scaler_update(nn_loss_scaler *s, int nonfinite) {
    if (nonfinite) {
        s->scale *= s->backoff;
        s->good = 0;
        s->skipped++;
        return 0;
    }
    if (++s->good >= s->interval) {
        float next = s->scale * s->growth;
        if (isfinite(next)) s->scale = next;
        s->good = 0;
    }
    return 1;
}

int nn_train_loss_scaling(const nn_backend *be, const nn_train_opts *o) {
    if (o->loss_scaling) return o->loss_scaling > 0;
    const char *p = be->opts.precision;
    return p && strcmp(p, "fp16") == 0;
}

/* x *= s over n floats of be's memory, through the back-end's scale, else through the host in chunks;
 * *nonfinite (not NULL): any result inf or NaN. */
static int scale_buf(nn_backend *be, const nn_backend_ops *o, float *x, size_t n, float s, int *nonfinite) {
    if (o->scale) return o->scale(be, x, n, s, nonfinite);
    enum { CHUNK = 1 << 20 };
    float *h = malloc(sizeof(float) * (n < CHUNK ? (n ? n : 1) : CHUNK));
    SD_ALLOC_CHECK(h);
    int bad = 0, rc = 0;
    for (size_t off = 0; off < n && rc == 0; off += CHUNK) {
        size_t len = n - off < CHUNK ? n - off : CHUNK;
        rc = o->download(be, h, x + off, len * sizeof(float));
        for (size_t i = 0; rc == 0 && i < len; i++) bad |= nn_scale_elem(&h[i], s);
        if (rc == 0) rc = o->upload(be, x + off, h, len * sizeof(float));
    }
    free(h);
    if (nonfinite) *nonfinite = bad;
    return rc;
}

/* The loss layer's backward with its output multiplied by the scale: during the backward pass be->ops points
 * at .ops, a copy of the back-end's table with the two loss backwards replaced (the engine's run.c calls them
 * through the table); inner is the back-end's own table. A back-end that recognises itself by its table's
 * address sees the copy during the pass (cudnn does only outside it: cu_conv_choice_of, cu_backend_stream). */
typedef struct scaled_ops {
    nn_backend_ops ops;                  /* first member: be->ops == &ops leads back to the whole struct */
    const nn_backend_ops *inner;
    float scale;
} scaled_ops;

static const scaled_ops *scaled_of(const nn_backend *be) { return (const scaled_ops *)(const void *)be->ops; }

static int scaled_xent_backward(nn_backend *be, const nn_op *op, float *dlogits, const float *prob,
                                const int32_t *labels) {
    const scaled_ops *so = scaled_of(be);
    SD_TRY(so->inner->softmax_xent_backward(be, op, dlogits, prob, labels));
    return scale_buf(be, so->inner, dlogits, (size_t)op->n * op->c, so->scale, NULL);
}

static int scaled_bce_backward(nn_backend *be, const nn_op *op, float *dlogits, const float *prob,
                               const float *targets) {
    const scaled_ops *so = scaled_of(be);
    SD_TRY(so->inner->sigmoid_bce_backward(be, op, dlogits, prob, targets));
    return scale_buf(be, so->inner, dlogits, (size_t)op->n * op->c, so->scale, NULL);
}

int nn_train_backward_scaled(nn_model *m, float scale, int *nonfinite) {
    nn_backend *be = m->be;
    scaled_ops so = {.ops = *be->ops, .inner = be->ops, .scale = scale};
    if (so.ops.softmax_xent_backward) so.ops.softmax_xent_backward = scaled_xent_backward;
    if (so.ops.sigmoid_bce_backward) so.ops.sigmoid_bce_backward = scaled_bce_backward;
    be->ops = &so.ops;
    int rc = nn_model_backward(m);
    be->ops = so.inner;
    SD_TRY(rc);
    return scale_buf(be, be->ops, m->grads, m->nparams, 1.0f / scale, nonfinite);
}

int nn_train_step(nn_model *m, nn_loss_scaler *s, uint64_t dropout_seed, int *stepped) {
    if (stepped) *stepped = 1;
    SD_TRY(nn_model_forward(m, 1, dropout_seed));
    if (!s) {
        SD_TRY(nn_model_backward(m));
        return nn_model_step(m);
    }
    int nonfinite = 0;
    SD_TRY(nn_train_backward_scaled(m, s->scale, &nonfinite));
    if (nn_loss_scaler_update(s, nonfinite)) return nn_model_step(m);
    if (stepped) *stepped = 0;   /* skipped: the gradients cleared as a step would leave them */
    return m->be->ops->zero(m->be, m->grads, m->nparams * sizeof(float));
}

static void progress(const nn_train_opts *o, int epoch, int b, int nb, double ips) {
    if (!o->progress) return;
    fprintf(stderr, "\r%s: epoch %d/%d batch %d/%d %.0f img/s   ", o->label ? o->label : "train", epoch, o->epochs,
            b, nb, ips);
    fflush(stderr);
}

int nn_train(const sd_workload *w, nn_backend *be, const sd_dataset *train, const sd_dataset *test,
             const nn_train_opts *o, nn_train_result *out) {
    memset(out, 0, sizeof *out);
    const int B = o->batch;
    SD_TRY(nn_train_check_data(w, train, test));
    int nb = train->n / B;
    if (o->max_batches > 0 && nb > o->max_batches) nb = o->max_batches;
    if (nb == 0) return sd_err(SD_EINPUT, "%s: %d examples hold no full batch of %d", train->source, train->n, B);

    nn_model *m = NULL;
    SD_TRY(nn_model_build(&m, w, be, B, o->seed));
    nn_train_host h = {0};
    int rc = nn_train_host_new(&h, w, train, B, o, m, out);
    if (rc) goto done;

    /* Test-only: SHOWDOWN_TEST_SLOWDOWN=MS sleeps MS milliseconds after every training batch (the nightly
     * regression test uses it; never set it for real measurements). */
    const char *slow = getenv("SHOWDOWN_TEST_SLOWDOWN");
    long slow_ms = slow ? strtol(slow, NULL, 10) : 0;
    if (slow_ms < 0 || slow_ms > 10000) slow_ms = 0;
    nn_loss_scaler scaler, *sc = NULL;
    if (nn_train_loss_scaling(be, o)) {
        nn_loss_scaler_init(&scaler);
        sc = &scaler;
    }
    for (int e = 1; e <= o->epochs; e++) {
        nn_epoch_stats *st = nn_train_epoch_begin(&h, train->n, o, out, e);
        double lsum = 0, t0 = sd_now(), last = t0;
        for (int b = 0; b < nb; b++) {
            if (o->stop && *o->stop) { rc = sd_err(SD_EINTR, "interrupted"); goto done; }
            nn_train_gather(train, h.idx, b * B, B, h.x, h.y);
            SD_TRY_GOTO(rc, nn_train_upload_batch(m, h.x, h.y), done);
            /* a skipped step (loss scaling) does not count in m->step: batches are counted for the dropout seed */
            const uint64_t batches = (uint64_t)m->step + (uint64_t)(sc ? sc->skipped : 0);
            SD_TRY_GOTO(rc, nn_train_step(m, sc, nn_hash64(o->seed ^ batches * 0x9E37ULL), NULL), done);
            SD_TRY_GOTO(rc, be->ops->download(be, h.loss, m->loss, sizeof(float) * B), done);
            for (int i = 0; i < B; i++) lsum += h.loss[i];
            if (slow_ms > 0) {   /* test hook only (SHOWDOWN_TEST_SLOWDOWN): makes a run measurably slower */
                struct timespec ts = {slow_ms / 1000, (slow_ms % 1000) * 1000000L};
                nanosleep(&ts, NULL);
            }
            double now = sd_now();
            if (o->progress && (now - last > 0.5 || b + 1 == nb)) {
                progress(o, e, b + 1, nb, (double)(b + 1) * B / (now - t0));
                last = now;
            }
        }
        SD_TRY_GOTO(rc, be->ops->sync(be), done);
        SD_TRY_GOTO(rc, nn_train_epoch_trained(st, t0, (long)nb * B, lsum), done);
        double t1 = sd_now();
        SD_TRY_GOTO(rc, nn_evaluate(m, test, o->max_batches, h.x, h.y, h.prob, h.loss, &st->accuracy, &st->val_loss,
                                    &st->test_images, out->confusion), done);
        SD_TRY_GOTO(rc, be->ops->sync(be), done);
        st->val_s = sd_now() - t1;
        out->nepochs = e;
        if (o->progress) {
            fprintf(stderr, "\r%s: epoch %d/%d train %.2fs (%.0f img/s) loss %.4f | val %.2fs accuracy %.4f",
                    o->label ? o->label : "train", e, o->epochs, st->train_s, st->train_images / st->train_s,
                    st->loss, st->val_s, st->accuracy);
            if (sc) fprintf(stderr, " | loss scale %g, %ld steps skipped", (double)sc->scale, sc->skipped);
            fputc('\n', stderr);
        }
    }
    /* inference timed apart: the test set through the trained model, outputs copied to the host */
    {
        int nbt = test->n / B;
        if (o->max_batches > 0 && nbt > o->max_batches) nbt = o->max_batches;
        SD_TRY_GOTO(rc, infer_timed(m, test, nbt, h.x, h.y, h.prob, o, out), done);
    }
    out->metric = w->loss == NN_LOSS_SIGMOID_BCE ? "mean_roc_auc" : "accuracy";
    out->peak_bytes = be->bytes_peak;
    if (sc) {
        out->loss_scale = sc->scale;
        out->skipped_steps = sc->skipped;
    }
done:
    nn_train_host_free(&h);
    nn_model_free(m);
    if (rc) nn_train_result_free(out);
    return rc;
}
