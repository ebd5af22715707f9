/* model — the shared graph: infer shapes from a workload spec (nn/spec.h), count parameters and FLOPs, and
 * build a model on a back-end (parameters, gradients and optimizer state in one slab each, activations per
 * layer). Back-end independent. Plan in nn/plan.c, layouts and fusion in nn/fuse.c, activation memory in
 * nn/memory.c, building in nn/build.c, the passes in nn/run.c.
 *
 * The graph is a DAG in topological order: layer i reads the outputs of earlier layers (inputs[], -1 =
 * the model input) and owns one output buffer y and its gradient dy. A tensor read by several layers
 * gets the sum of their gradients (the graph accumulates with the back-end's add). Views (flatten,
 * dropout with rate 0) alias their input's buffers.
 *
 * Shapes: every tensor is [n][c][h][w] float32, n = batch. c/h/w are generic per-example dimensions,
 * not necessarily an image's: a sequence of T steps of F features is c = T, h = 1, w = F, i.e.
 * [n][T][F] with the features contiguous ("Sequence tensors" in nn/backend.h); the graph only needs
 * c*h*w elements per example and, for concat, the channel axis c. Dense layers need h = w = 1. */
#ifndef SD_NN_MODEL_H
#define SD_NN_MODEL_H

#include <stdint.h>
#include <stdio.h>

#include "nn/backend.h"
#include "nn/spec.h"

/* One layer of a built model. */
typedef struct nn_layer {
    nn_op op;                 /* kind and shapes at the model's batch size */
    char name[24];            /* "conv2d_1" ... */
    int input;                /* index of the (first) input layer, -1 = model input */
    int ninputs;              /* >= 1 */
    int inputs[NN_OP_MAX_INPUTS];   /* inputs[0] == input */
    size_t s_off, s_len;      /* slice of the statistics slab (batchnorm running mean, var), not trained */
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
    size_t nstats;            /* non-trained statistics floats (batchnorm running mean/var) */
    float *stats;             /* device slab of nstats */
    nn_loss_kind loss_kind;
    int training;             /* 0: built for inference only (no gradients, optimizer state, loss) */
    float *targets;           /* device float targets [batch][classes] (sigmoid BCE) */
    float *out;               /* the model output: last layer's y (inference) — [batch][out_elems] */
    size_t out_elems;         /* per example */
    float *scratch;           /* gradient scratch for tensors read by several layers (or NULL) */
    size_t scratch_elems;
    int *consumers;           /* per layer: how many non-view layers read it (through views) */
    unsigned char *written;   /* per layer: dy written in this backward pass */
    size_t nstate;            /* optimizer state floats */
    float *params, *grads, *state;   /* device slabs */
    float *x;                 /* device input batch [batch][c][h][w] */
    int32_t *ids;             /* device token ids [batch][c*h*w] when the model starts with an embedding
                               *; nn_model_upload_input fills it from float ids */
    int32_t *labels;          /* device labels [batch] */
    float *prob, *loss;       /* device softmax [batch][classes], per-example loss [batch] */
    nn_optim optim;
    long step;                /* optimizer steps taken */
    double flops_fwd;         /* per example */
    /* Optional per-op profile (showdown perf --layers): when non-NULL, forward and backward sync the back-end
     * around every layer and add its seconds to prof[2*i] (forward) and prof[2*i+1] (backward);
     * prof[2*nlayers] gets the optimizer step (with the gradient zeroing). The caller owns the array. */
    double *prof;
    /* Inference-only models share activation buffers between layers whose outputs are not alive at the same
     * time (nn_model_build "buffer reuse"): the buffers, freed once each by nn_model_free. */
    void **pool;
    size_t *pool_bytes;
    int npool;
    /* Training models share gradient buffers between layers whose gradients are not alive at the same time in
     * the backward pass (nn_mem_grads): per layer, 1 when its dy is one of gpool's (or NULL: none is needed); the
     * buffers, freed once each.
     * NULL with SD_NO_BUFFER_REUSE set (every layer's gradient stays readable after the pass). */
    unsigned char *dy_pooled;
    void **gpool;
    size_t *gpool_bytes;
    int ngpool;
    /* Inference fusion (nn_model_build, when the back-end has conv2d_infer and SD_NO_FUSE is unset): per layer,
     * the chain a convolution runs at inference (last < 0: none). NULL: every layer runs on its own. */
    struct nn_fuse_chain *chains;
    /* The back-end's blocked activation layout (NN_FMT_NCHW16C, NN_FMT_NCHW8C or NN_FMT_NHWC; NN_FMT_NCHW: none),
     * the one the graph's chains use (nn_fuse_layouts). */
    int blk_fmt;
    /* Per layer, 1: its buffer holds blk_fmt, not its op's fmt_out, after an inference pass of a training model
     * (inference_layouts); infer_last: the last forward pass was one. NULL: none. */
    unsigned char *inf_blocked;
    int infer_last;
    /* Per layer, 1: a relu whose backward its only reader does: a max pooling on its output gradient, or a
     * convolution on the gradient it computes (nn/fuse.c). */
    unsigned char *relu_folded;
    /* Training models on a back-end with bn_fused_* (NULL otherwise; nn/fuse.c): per layer, the relu a batchnorm
     * runs with (its own output buffer is then not allocated), else -1; and the last concatenation of the concat
     * slab a layer's output is a channel prefix of, else -1. */
    int *bn_relu;
    int *slab;
} nn_model;

/* Shape inference without a back-end: fills layers' ops (n = batch), parameter slices and FLOPs.
 * Used by --describe and by nn_model_build. Errors name the spec position of the offending layer. */
int nn_model_plan(const sd_workload *w, int batch, nn_layer **layers_out, size_t *nparams_out);
/* Floats of the statistics slab of a plan (sum of s_len). */
size_t nn_model_nstats(const nn_layer *layers, int nlayers);
/* FLOPs per example: forward, and a training step (forward + nn_layer_bwd_flops of every layer). */
void nn_model_flops(const nn_layer *layers, int nlayers, double *fwd, double *train);
/* FLOPs per example of layer i's backward: 2× forward for layers with weights (data and weight gradients), 1×
 * where nn_layer_has_dx says no data gradient is needed, plus for a GRU or LSTM the gradient of the state
 * through W_h at every step but the first, which the recurrence needs all the same; 1× for the rest. */
double nn_layer_bwd_flops(const nn_layer *layers, int i);
/* 1 if backward computes layer i's data gradient: its input is another layer's output, not the model input
 * seen through views (a flatten, a dropout of rate 0). */
int nn_layer_has_dx(const nn_layer *layers, int i);
/* Print the layer table (name, output shape, parameters, FLOPs per example) and totals. */
void nn_model_describe(FILE *f, const sd_workload *w, const nn_layer *layers, int nlayers, size_t nparams);

/* Build on a back-end: plan, prepare ops, allocate all buffers, initialise parameters from seed.
 * A workload in inference mode (or loss none) is built without gradients, optimizer state or loss. */
int nn_model_build(nn_model **out, const sd_workload *w, nn_backend *be, int batch, uint64_t seed);
void nn_model_free(nn_model *m);
/* Host copy of the initial parameters the spec's initialisers give for seed (Glorot-uniform weights
 * with fan_in/fan_out of each layer, zero biases; batchnorm gamma 1, beta 0): what nn_model_build
 * uploads. Running statistics start at mean 0, variance 1. */
int nn_model_init_params(const nn_layer *layers, int nlayers, size_t nparams, nn_init_kind winit,
                         nn_init_kind binit, uint64_t seed, float *out);

/* One batch already uploaded to m->x / m->labels (or m->targets). train: dropout on, batchnorm on batch
 * statistics (running statistics updated), backward and optimizer step. dropout_seed varies per step. */
int nn_model_forward(nn_model *m, int train, uint64_t dropout_seed);
int nn_model_backward(nn_model *m);
int nn_model_step(nn_model *m);   /* optimizer step over the slab, then gradients zeroed */
/* Upload one host batch [batch][c][h][w] as the model input: to m->x, or, for a model that starts with an
 * embedding, converted to int32 ids into m->ids (the floats hold integers; out of range ids are reported
 * by the embedding). */
int nn_model_upload_input(nn_model *m, const float *x);
/* Layer i's output (grad = 0) or its gradient (grad = 1), downloaded into host as NCHW [n][oc][oh][ow]
 * whatever layout the graph keeps it in (nn_fmt). A gradient after the backward pass is layer i's only in a
 * model built with SD_NO_BUFFER_REUSE set: else its buffer may hold a later gradient of the pass (m->dy_pooled). */
int nn_model_download_y(nn_model *m, int i, int grad, float *host);

/* The plan (nn_model_plan at batch) as a "showdown-plan/1" document (nn/plan_json.c): schema, workload, input
 * [C,H,W], classes, batch, and per layer its index, name, op (as the spec writes it; the loss layer: the spec's
 * loss name), inputs (-1 = the model input), in/out per-example shapes [C,H,W], params, forward FLOPs per example
 * and the op's attributes (units, kernel, stride, padding, bias, rate, eps, momentum, vocab, range, times,
 * return_sequences, time_distributed) where they apply. What `bench --describe --json` prints and a framework
 * runner gets as --plan. *out: caller decrefs. */
struct json_t;
int nn_model_plan_json(struct json_t **out, const sd_workload *w, const nn_layer *layers, int nlayers, int batch);

#endif
