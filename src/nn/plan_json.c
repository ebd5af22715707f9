/* plan_json — the expanded layer plan as a "showdown-plan/1" document (nn/model.h): every layer after blocks and
 * repeats, with its inputs, per-example shapes, parameters, FLOPs and the spec's attributes, so that a framework
 * runner (or any reader) builds the same network without expanding the spec again. Shapes only: no weights. */
#include "nn/model.h"
#include "core/err.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#define SD_PLAN_SCHEMA "showdown-plan/1"

static json_t *dims(int c, int h, int w) { return json_pack("[iii]", c, h, w); }
static json_t *pair(int a, int b) { return json_pack("[ii]", a, b); }

/* The per-example shape of layer j's output as the layers reading it see it (j < 0: the model input); a
 * time-distributed recurrent layer's sequences are its channels, as plan.c's shape_of has it. */
static json_t *shape(const sd_workload *w, const nn_layer *ls, int j) {
    if (j < 0) return dims(w->in_c, w->in_h, w->in_w);
    const nn_op *op = &ls[j].op;
    return op->seqs > 1 ? dims(op->seqs, 1, op->oc) : dims(op->oc, op->oh, op->ow);
}

/* A float of the spec as the shortest decimal that reads back as the same float (0.1, not 0.100000001490116). */
static json_t *spec_float(float f) {
    char buf[32];
    for (int p = 6; p <= 9; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, (double)f);
        if ((float)strtod(buf, NULL) == f) break;
    }
    return json_real(strtod(buf, NULL));
}

/* FLOPs are whole numbers: written as integers while exact, else as reals. */
static json_t *count(double v) {
    if (v >= 0 && v < 9e15 && v == (double)(json_int_t)v) return json_integer((json_int_t)v);
    return json_real(v);
}

/* The loss layer the plan appends, named as the spec's "loss" names it. */
static const char *loss_name(nn_loss_kind k) {
    return k == NN_LOSS_SIGMOID_BCE ? "sigmoid_binary_cross_entropy" : "softmax_cross_entropy";
}

/* The attributes of s's op that apply to it (nn/model.h lists them). */
static void attributes(json_t *o, const nn_layer_spec *s) {
    const nn_op_kind k = s->kind;
    const int recurrent = k == NN_OP_GRU || k == NN_OP_LSTM, weighted = k == NN_OP_DENSE || k == NN_OP_CONV2D;
    if (weighted || recurrent || k == NN_OP_EMBEDDING) json_object_set_new(o, "units", json_integer(s->units));
    if (k == NN_OP_CONV2D || k == NN_OP_MAXPOOL || k == NN_OP_AVGPOOL) {
        json_object_set_new(o, "kernel", pair(s->kh, s->kw));
        json_object_set_new(o, "stride", pair(s->sh, s->sw));
        json_object_set_new(o, "padding", pair(s->ph, s->pw));
    }
    if (weighted) json_object_set_new(o, "bias", json_boolean(s->bias));
    if (k == NN_OP_DROPOUT) json_object_set_new(o, "rate", spec_float(s->rate));
    if (k == NN_OP_BATCHNORM) {
        json_object_set_new(o, "eps", spec_float(s->eps));
        json_object_set_new(o, "momentum", spec_float(s->momentum));
    }
    if (k == NN_OP_EMBEDDING) {
        json_object_set_new(o, "vocab", json_integer(s->vocab));
        if (s->range_to > 0) json_object_set_new(o, "range", pair(s->range_from, s->range_to));
    }
    if (k == NN_OP_REPEAT) json_object_set_new(o, "times", json_integer(s->units));
    if (recurrent) {
        json_object_set_new(o, "return_sequences", json_boolean(s->ret_seq));
        json_object_set_new(o, "time_distributed", json_boolean(s->distributed));
    }
}

int nn_model_plan_json(json_t **out, const sd_workload *w, const nn_layer *ls, int L, int batch) {
    *out = NULL;
    json_t *layers = json_array();
    json_t *doc = json_pack("{s:s,s:s,s:o,s:i,s:i,s:o}", "schema", SD_PLAN_SCHEMA, "workload", w->name, "input",
                            dims(w->in_c, w->in_h, w->in_w), "classes", w->classes, "batch", batch, "layers", layers);
    SD_ALLOC_CHECK(doc);
    for (int i = 0; i < L; i++) {
        const nn_layer *l = &ls[i];
        const nn_layer_spec *s = i < w->nlayers ? &w->layers[i] : NULL;   /* NULL: the loss */
        const char *op = s ? sd_spec_op_name(s->kind) : loss_name(w->loss);
        if (!op) op = nn_op_name(l->op.kind);   /* add, concat: made by a block's connection */
        json_t *inputs = json_array();
        for (int k = 0; k < l->ninputs; k++) json_array_append_new(inputs, json_integer(l->inputs[k]));
        json_t *o = json_pack("{s:i,s:s,s:s,s:o,s:o,s:o,s:I,s:o}", "index", i, "name", l->name, "op", op, "inputs",
                              inputs, "in", shape(w, ls, l->input), "out", shape(w, ls, i), "params",
                              (json_int_t)(l->w_len + l->b_len), "flops", count(l->flops));
        if (!o) {
            json_decref(doc);
            return sd_err(SD_ENOMEM, "out of memory");
        }
        if (s) attributes(o, s);
        json_array_append_new(layers, o);
    }
    *out = doc;
    return 0;
}
