/* spec — a workload spec (workloads/<name>.json, format in workloads/README.md) as the engine reads it: the
 * data it trains on, the layers as written (shape-free, each with its position in the file), initialisers,
 * optimizer, loss and mode. nn/spec.c parses and checks it; nn/plan.c turns it into shapes (nn/model.h). */
#ifndef SD_NN_SPEC_H
#define SD_NN_SPEC_H

#include <stddef.h>

#include "nn/backend.h"

#define SD_SPEC_MAX_LAYERS 4096

typedef enum nn_init_kind { NN_INIT_GLOROT_UNIFORM = 0, NN_INIT_ZEROS } nn_init_kind;

/* The model's loss, appended as the last layer (NN_LOSS_NONE: an inference-only model whose output is
 * its last layer's, e.g. features). */
typedef enum nn_loss_kind { NN_LOSS_SOFTMAX_XENT = 0, NN_LOSS_SIGMOID_BCE, NN_LOSS_NONE } nn_loss_kind;

/* What bench does with a workload: train and validate, or time inference passes only. */
typedef enum sd_mode { SD_MODE_TRAIN = 0, SD_MODE_INFERENCE } sd_mode;

/* One layer as the spec gives it (shape-free), with where it was written. */
typedef struct nn_layer_spec {
    nn_op_kind kind;
    int units;              /* dense: output units; conv2d: filters */
    int kh, kw, sh, sw, ph, pw;
    float rate;             /* dropout */
    int bias;               /* 1 unless "bias": false */
    int line, col;          /* position in the spec file */
    /* graph */
    int ninputs;            /* 0: the previous layer (a chain); else inputs[] */
    int inputs[NN_OP_MAX_INPUTS];   /* indices of earlier layers in this list, -1 = model input */
    float eps, momentum;    /* batchnorm */
    /* recurrent */
    int vocab;              /* embedding: table rows */
    int range_from, range_to;   /* embedding: "range" [from, to) of the input ids it reads (to 0: all) */
    int ret_seq;            /* gru/lstm: "return_sequences" */
    int distributed;        /* gru/lstm: "time_distributed" — every row of a [1, rows, steps] input is its own
                             * sequence of one feature (Keras TimeDistributed(LSTM) over image rows) */
} nn_layer_spec;

typedef struct sd_workload {
    char name[64];
    char title[160];
    char source[256];
    char path[512];                 /* file it was read from */
    /* data */
    char dataset[32];               /* "mnist", "cifar10", "synthetic" */
    int in_c, in_h, in_w, classes;
    int train_n, test_n;            /* published sizes; synthetic data uses these counts */
    /* model */
    nn_layer_spec *layers;
    int nlayers;
    nn_init_kind weight_init, bias_init;
    /* training */
    nn_optim optim;
    int batch, epochs;
    int shuffle;
    long long expected_params;      /* 0: not given */
    double target_accuracy;         /* validation accuracy time to accuracy is measured to (0: not given) */
    /* graph */
    nn_loss_kind loss;
    sd_mode mode;
    int infer_images;               /* inference mode: images per timed pass (published method) */
    int warmup_passes;              /* inference mode: untimed passes before the timed one */
    /* token data: dataset "imdb" — shape [maxlen, 1, 1] of token ids (data/data.h) */
    int num_words;                  /* ids >= num_words -> out of vocabulary (0: no cap) */
    int pad_post, trunc_post;       /* "padding" / "truncating": 0 "pre" (Keras default), 1 "post" */
} sd_workload;

/* Read and check a workload spec. name_or_path: a name looked up as <dir>/<name>.json, or a path.
 * Errors are "FILE:LINE:COL: what was expected" (SD_EINPUT) or SD_EIO. */
int sd_workload_load(sd_workload *w, const char *dir, const char *name_or_path);
/* The same from memory (the fuzzers' entry point); name is used in messages and as w->path. */
int sd_workload_parse(sd_workload *w, const char *name, const char *text, size_t len);
void sd_workload_free(sd_workload *w);

/* A layer op's name as a spec writes it ("repeat_vector"; nn_op_info's spec_name), or NULL for the ops a spec does not
 * name as layers (add and concat come from block connections, the loss from "loss"). */
const char *sd_spec_op_name(nn_op_kind k);

#endif
