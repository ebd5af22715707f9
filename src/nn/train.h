/* train — the shared training loop and its measurements: shuffled epochs of full batches, training
 * and validation timed apart, loss, and accuracy as trace(confusion) / N. Back-end independent. */
#ifndef SD_NN_TRAIN_H
#define SD_NN_TRAIN_H

#include <signal.h>
#include <stdint.h>

#include "data/data.h"
#include "nn/model.h"

typedef struct nn_epoch_stats {
    int epoch;                 /* 1-based */
    double train_s;            /* wall time of the training batches (data gather + upload included) */
    double val_s;              /* wall time of the validation pass, timed apart */
    double loss;               /* mean training loss over the epoch's batches */
    double val_loss;           /* mean validation loss */
    double accuracy;           /* validation accuracy = trace(confusion) / test_images */
    long train_images, test_images;
} nn_epoch_stats;

typedef struct nn_train_opts {
    int epochs;
    int batch;
    int max_batches;           /* > 0: cap training batches per epoch (and validation batches) */
    uint64_t seed;             /* initialisation, shuffling and dropout */
    int shuffle;
    int progress;              /* 1: progress line on stderr */
    const char *label;         /* progress prefix ("mnist_mlp/ref") */
    volatile sig_atomic_t *stop;   /* set by a signal handler: stop between batches with SD_EINTR */
    int loss_scaling;          /* dynamic loss scaling (nn_loss_scaler): 0 when the back-end computes fp16
                                * (nn_backend_opts.precision "fp16"), 1 always, -1 never */
} nn_train_opts;

typedef struct nn_train_result {
    nn_epoch_stats *epochs;    /* opts.epochs entries */
    int nepochs;
    size_t peak_bytes;         /* back-end memory peak */
    size_t peak_rss_bytes;     /* the process's peak resident memory while it ran (set by bench; 0: unknown) */
    size_t nparams;
    double flops_fwd;          /* per example */
    double flops_train;        /* per example: forward + backward (data and weights) */
    int64_t *confusion;        /* classes x classes of the last epoch, [true][predicted] */
    int classes;
    /* graph */
    const char *metric;        /* what "accuracy" holds: "accuracy" (softmax: trace(confusion) / N) or
                                * "mean_roc_auc" (sigmoid BCE: mean over classes of the ROC AUC) */
    double infer_s;            /* the timed inference figure: forward (inference mode) over infer_images images,
                                * data upload and the copy of the outputs to the host included; the fastest of
                                * infer_passes passes (NN_INFER_* below) */
    long infer_images;
    int infer_passes;
    double cold_s;             /* inference workloads: the untimed first (cold) pass, reported apart */
    float loss_scale;          /* dynamic loss scaling: the scale at the end (0: not used) */
    long skipped_steps;        /* its steps skipped for an inf or NaN gradient */
} nn_train_result;

/* Dynamic loss scaling for fp16 training (PyTorch's GradScaler, with its defaults): the loss gradient is
 * multiplied by scale before the backward pass, so that small gradients survive fp16; the gradients are divided
 * by it before the optimizer; a step with any inf or NaN gradient is skipped (parameters, optimizer state and
 * step count untouched, gradients cleared) and the scale multiplied by backoff; after interval clean steps in a
 * row it is multiplied by growth (if that stays finite). Powers of two keep the scaling exact in fp32: without
 * an overflow, a scaled step computes bit for bit what an unscaled one does. */
typedef struct nn_loss_scaler {
    float scale;               /* 65536 */
    float growth, backoff;     /* 2, 0.5 */
    int interval;              /* 2000 */
    int good;                  /* clean steps since the scale last changed */
    long skipped;              /* steps skipped so far */
} nn_loss_scaler;
void nn_loss_scaler_init(nn_loss_scaler *s);
/* After a backward pass: nonfinite = 1 if a gradient was inf or NaN. Moves the state; returns 1 if the
 * optimizer step is to be taken, 0 if it is skipped. */
int nn_loss_scaler_update(nn_loss_scaler *s, int nonfinite);
/* Whether nn_train scales the loss on be with o (o->loss_scaling, the back-end's precision). */
int nn_train_loss_scaling(const nn_backend *be, const nn_train_opts *o);
/* The backward pass of a loss-scaled step, after a training forward: the loss gradient multiplied by scale before
 * it flows back, every gradient of m->grads divided by it after; *nonfinite (not NULL): 1 if any of them is inf or
 * NaN. The optimizer step is the caller's. */
int nn_train_backward_scaled(nn_model *m, float scale, int *nonfinite);
/* One training step on the batch already uploaded to m: forward (training mode, dropout_seed), backward and the
 * optimizer step. With s (not NULL) the backward is loss-scaled and the step may be skipped: *stepped (may be
 * NULL) says whether it was taken. */
int nn_train_step(nn_model *m, nn_loss_scaler *s, uint64_t dropout_seed, int *stepped);

/* Build the model on be, train and validate. train/test must match the workload's input shape. */
int nn_train(const sd_workload *w, nn_backend *be, const sd_dataset *train, const sd_dataset *test,
             const nn_train_opts *opts, nn_train_result *out);
void nn_train_result_free(nn_train_result *r);

/* Validation of a built model over full batches of test: fills accuracy/val_loss/test_images and the
 * confusion matrix (classes x classes, may be NULL). */
int nn_evaluate(nn_model *m, const sd_dataset *test, int max_batches, float *host_x, int32_t *host_y,
                float *host_prob, float *host_loss, double *accuracy, double *loss, long *images,
                int64_t *confusion);

/* The timed inference figure is the fastest of several passes, as the steady epoch is the fastest of epochs 2..N:
 * a pass of a few milliseconds timed once is at the mercy of the host's slow spells, and a rerun could not check
 * it. Passes go on until NN_INFER_MIN_S seconds are timed and, where NN_INFER_PASSES of them fit in NN_INFER_FIT_S
 * seconds, that many are done; NN_INFER_MAX_PASSES at most. workloads/runners/runner_common.py times the same. */
#define NN_INFER_PASSES 3
#define NN_INFER_MIN_S 1.0
#define NN_INFER_FIT_S 5.0
#define NN_INFER_MAX_PASSES 100
/* Whether a pass more is timed after k passes, the fastest best seconds, total seconds in all. */
int nn_infer_more(int k, double best, double total);

/* An inference-only workload (sd_workload.mode SD_MODE_INFERENCE): w->warmup_passes untimed passes over
 * data (the first one's time is cold_s), then the timed passes (infer_s: the fastest); each pass runs w->infer_images
 * images (capped by opts->max_batches batches) in full batches of opts->batch. No epochs. */
int nn_infer(const sd_workload *w, nn_backend *be, const sd_dataset *data, const nn_train_opts *opts,
             nn_train_result *out);

/* Mean over classes of the ROC AUC of scores[n][C] against binary targets[n][C] (ties count 1/2);
 * classes with no positive or no negative example are skipped. NaN if every class is skipped. */
double nn_mean_roc_auc(const float *scores, const float *targets, long n, int C);

/* The epoch's example order (Fisher–Yates on a counter hash: depends only on seed, epoch and n), and the
 * copy of examples idx[start..start+batch) (idx NULL: in order) into host x / y. Shared with nn/dp.c. */
void nn_train_shuffle(int *idx, int n, uint64_t seed, int epoch);
/* The data fit the workload: the same input shape, labels within its classes (SD_EINPUT naming the data). */
int nn_train_check_data(const sd_workload *w, const sd_dataset *train, const sd_dataset *test);
void nn_train_gather(const sd_dataset *d, const int *idx, int start, int batch, float *x, int32_t *y);
/* One batch of host x [batch][c][h][w] and labels y [batch] into m: the input (token ids for an embedding,
 * nn_model_upload_input), the labels and, for sigmoid BCE, the one-hot targets. Every training and
 * validation loop uploads through it (nn_train, nn_evaluate, nn_dp_step). */
int nn_train_upload_batch(nn_model *m, const float *x, const int32_t *y);

/* What nn_train and nn_dp_train share. The host side of a training loop over batches of B: the epoch's
 * example order and one batch's inputs, labels, losses and probabilities. nn_train_host_new also makes
 * out's per-epoch stats (o->epochs) and confusion matrix and records m's size and FLOPs;
 * nn_train_host_free frees the buffers only (out is the caller's). */
typedef struct nn_train_host { int *idx; float *x; int32_t *y; float *loss, *prob; } nn_train_host;
int nn_train_host_new(nn_train_host *h, const sd_workload *w, const sd_dataset *train, int B,
                      const nn_train_opts *o, const nn_model *m, nn_train_result *out);
void nn_train_host_free(nn_train_host *h);
/* Start epoch e (1-based): its stats entry, and h->idx in the epoch's order (o->shuffle) or in order. */
nn_epoch_stats *nn_train_epoch_begin(nn_train_host *h, int n, const nn_train_opts *o, nn_train_result *out, int e);
/* The epoch's training figures: time since t0, images, mean loss; SD_ERROR when the loss is NaN. */
int nn_train_epoch_trained(nn_epoch_stats *st, double t0, long images, double lsum);

#endif
