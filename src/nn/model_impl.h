/* model_impl — what the graph's files share: plan.c (shapes), fuse.c (layouts, fused chains), memory.c
 * (activation buffers), build.c (building) and run.c (the passes). Not for users: they include nn/model.h. */
#ifndef SD_NN_MODEL_IMPL_H
#define SD_NN_MODEL_IMPL_H

#include "nn/backend_impl.h"
#include "nn/model.h"

/* A view shares its input's buffers: flatten, and dropout with rate 0. */
static inline int nn_is_view(const nn_layer *l) {
    return l->op.kind == NN_OP_FLATTEN || (l->op.kind == NN_OP_DROPOUT && l->op.rate == 0.0f);
}
static inline int nn_is_loss(const nn_layer *l) { return (nn_op_info_of(l->op.kind)->flags & NN_OPF_LOSS) != 0; }
static inline size_t nn_out_elems(const nn_op *op) { return (size_t)op->n * op->oc * op->oh * op->ow; }
/* Bytes of a layer's y (and dy) in its output layout (padding included). */
static inline size_t nn_y_bytes(const nn_layer *l) {
    return nn_fmt_elems(l->op.fmt_out, l->op.n, l->op.oc, l->op.oh, l->op.ow) * sizeof(float);
}

/* The layer whose buffer layer j's output lives in, seen through views; -1 for the model input (plan.c). */
int nn_owner_of(const nn_layer *ls, int j);

/* ---- fuse.c ---------------------------------------------------------------------------------------------- */
/* A fused chain at inference: a convolution (the chain's index) with the batch norm, residual add and relu
 * after it (-1: absent), last = the chain's last layer (-1: no chain at this layer), other = the add's other
 * input; and the layouts it runs in. */
typedef struct nn_fuse_chain {
    int bn, add, relu, last, other;
    int x_fmt, y_fmt, res_fmt;   /* the layouts at inference (inference_layouts) */
} nn_fuse_chain;

/* Activation layouts (op.fmt_in / fmt_out) where the back-end takes its blocked layout; SD_LAYOUT_NCHW: all NCHW. */
int nn_fuse_layouts(nn_model *m);
/* m->chains (and, for a training model, m->inf_blocked) when the back-end has conv2d_infer and SD_NO_FUSE
 * is unset; else m->chains stays NULL. */
int nn_fuse_chains(nn_model *m);
/* 1 if the chain at layer i runs fused in a training pass too (a convolution and its relu). */
int nn_fuse_train_ok(const nn_model *m, int i);
/* m->relu_folded for a training model when the back-end has relu_mask or conv2d_backward_relu and SD_NO_FUSE is
 * unset (reads m->consumers). */
int nn_fuse_relu_fold(nn_model *m);
/* m->slab and the layouts and strides of the slabs' views and readers (training models, when the back-end has
 * bn_fused_* and takes concatenations blocked, SD_NO_FUSE and SD_LAYOUT_NCHW unset); after nn_fuse_layouts. */
int nn_fuse_slabs(nn_model *m);
/* m->bn_relu (training models, when the back-end has bn_fused_* and SD_NO_FUSE is unset); after nn_fuse_slabs. */
int nn_fuse_bn_relu(nn_model *m);
/* op.in_fmt of every concatenation, from its inputs' layouts; once every layout is decided. */
void nn_fuse_join_layouts(nn_model *m);
/* 1 if batchnorm layer i runs through bn_fused_* (with its relu, or reading a slab view). */
static inline int nn_bn_fused(const nn_model *m, int i) {
    return (m->bn_relu && m->bn_relu[i] >= 0) || (m->slab && m->layers[i].op.kind == NN_OP_BATCHNORM &&
                                                  m->layers[i].input >= 0 && m->slab[m->layers[i].input] >= 0);
}

/* ---- memory.c -------------------------------------------------------------------------------------------- */
/* Activation memory while nn_model_build walks the layers: with buffer reuse (inference-only models) the
 * last reader of each buffer and the fused chain each layer is in. */
typedef struct nn_mem {
    int *last, *head;        /* NULL: every layer gets buffers of its own */
    unsigned char *busy;     /* per pool buffer: holds a live output */
    size_t max_elems;        /* largest layer output (elements): the gradient scratch's size */
} nn_mem;

int nn_mem_begin(nn_model *m, nn_mem *r);
void nn_mem_end(nn_mem *r);
/* Layer i (a view, or dropout at inference) takes its input's buffers and runs no primitive: 1; else 0. */
int nn_mem_alias(nn_model *m, const nn_mem *r, int i);
/* Layer i's output (and, training, gradient) buffers; then its inputs' buffers read for the last time go
 * back to the pool. */
int nn_mem_output(nn_model *m, nn_mem *r, int i);
/* A training model's gradient buffers (m->dy_pooled set by nn_mem_begin): each layer's taken from a pool when the
 * backward pass first touches it and given back after its last reader; views then take their input's. After
 * every fusion (nn_fuse_relu_fold included), which decides who writes and reads which gradient. */
int nn_mem_grads(nn_model *m);

#endif
