/* model — workload specs and the shared graph: parse workloads/<name>.json into an sd_workload, infer
 * shapes, count parameters and FLOPs, and build a model on a back-end (parameters, gradients and
 * optimizer state in one slab each, activations per layer). Back-end independent. */
#ifndef SD_NN_MODEL_H
#define SD_NN_MODEL_H

#include <stdint.h>
#include <stdio.h>

#include "nn/backend.h"

#define SD_SPEC_MAX_LAYERS 4096

typedef enum nn_init_kind { NN_INIT_GLOROT_UNIFORM = 0, NN_INIT_ZEROS } nn_init_kind;

/* One layer as the spec gives it (shape-free), with where it was written. */
typedef struct nn_layer_spec {
    nn_op_kind kind;
    int units;              /* dense: output units; conv2d: filters */
    int kh, kw, sh, sw, ph, pw;
    float rate;             /* dropout */
    int bias;               /* 1 unless "bias": false */
    int line, col;          /* position in the spec file */
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
} sd_workload;

/* Read and check a workload spec. name_or_path: a name looked up as <dir>/<name>.json, or a path.
 * Errors are "FILE:LINE:COL: what was expected" (SD_EINPUT) or SD_EIO. */
int sd_workload_load(sd_workload *w, const char *dir, const char *name_or_path);
/* The same from memory (the fuzzers' entry point); name is used in messages and as w->path. */
int sd_workload_parse(sd_workload *w, const char *name, const char *text, size_t len);
void sd_workload_free(sd_workload *w);

/* One layer of a built model. */
typedef struct nn_layer {
    nn_op op;                 /* kind and shapes at the model's batch size */
    char name[24];            /* "conv2d_1" ... */
    int input;                /* index of the input layer, -1 = model input */
    size_t w_off, w_len;      /* slice of the parameter slab (len 0: none) */
    size_t b_off, b_len;
    double flops;             /* forward FLOPs per example (multiply-add = 2) */
    float *y, *dy;            /* device activations and gradients (flatten aliases its input) */
    void *ws;                 /* back-end workspace between forward and backward */
    size_t ws_bytes;
} nn_layer;

typedef struct nn_model {
    nn_backend *be;
    int batch;
    int in_c, in_h, in_w, classes;
    nn_layer *layers;
    int nlayers;
    size_t nparams;
    size_t nstate;            /* optimizer state floats */
    float *params, *grads, *state;   /* device slabs */
    float *x;                 /* device input batch [batch][c][h][w] */
    int32_t *labels;          /* device labels [batch] */
    float *prob, *loss;       /* device softmax [batch][classes], per-example loss [batch] */
    nn_optim optim;
    long step;                /* optimizer steps taken */
    double flops_fwd;         /* per example */
} nn_model;

/* Shape inference without a back-end: fills layers' ops (n = batch), parameter slices and FLOPs.
 * Used by --describe and by nn_model_build. Errors name the spec position of the offending layer. */
int nn_model_plan(const sd_workload *w, int batch, nn_layer **layers_out, size_t *nparams_out);
/* FLOPs per example: forward, and a training step (backward ≈ 2× forward for layers with weights — data
 * and weight gradients, the data gradient skipped for the first layer — and 1× for the rest). */
void nn_model_flops(const nn_layer *layers, int nlayers, double *fwd, double *train);
/* Print the layer table (name, output shape, parameters, FLOPs per example) and totals. */
void nn_model_describe(FILE *f, const sd_workload *w, const nn_layer *layers, int nlayers, size_t nparams);

/* Build on a back-end: plan, prepare ops, allocate all buffers, initialise parameters from seed. */
int nn_model_build(nn_model **out, const sd_workload *w, nn_backend *be, int batch, uint64_t seed);
void nn_model_free(nn_model *m);
/* Host copy of the initial parameters the spec's initialisers give for seed (Glorot-uniform weights
 * with fan_in/fan_out of each layer, zero biases): what nn_model_build uploads. */
int nn_model_init_params(const nn_layer *layers, int nlayers, size_t nparams, nn_init_kind winit,
                         nn_init_kind binit, uint64_t seed, float *out);

/* One batch already uploaded to m->x / m->labels. train: dropout on, backward and optimizer step.
 * dropout_seed varies per step. */
int nn_model_forward(nn_model *m, int train, uint64_t dropout_seed);
int nn_model_backward(nn_model *m);
int nn_model_step(nn_model *m);   /* optimizer step over the slab, then gradients zeroed */

const char *nn_op_name(nn_op_kind k);

#endif
