/* plan — shape inference without a back-end: a workload spec (nn/spec.h) becomes the layer table of nn/model.h
 * (shapes at a batch size, parameter and statistics slices, FLOPs), with errors that name the spec position of
 * the offending layer; and what is read off a plan: FLOP totals, the layer table --describe prints. */
#include "nn/model_impl.h"
#include "core/err.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int spec_err(const sd_workload *w, const nn_layer_spec *s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int spec_err(const sd_workload *w, const nn_layer_spec *s, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sd_err(SD_EINPUT, "%s:%d:%d: %s", w->path[0] ? w->path : w->name, s->line, s->col, msg);
}

/* Output shape of layer j as seen by a consumer (j < 0: the model input). */
static void shape_of(const sd_workload *w, const nn_layer *ls, int j, int *c, int *h, int *wd) {
    if (j < 0) { *c = w->in_c; *h = w->in_h; *wd = w->in_w; return; }
    if (ls[j].op.seqs > 1) { *c = ls[j].op.seqs; *h = 1; *wd = ls[j].op.oc; return; }
    *c = ls[j].op.oc; *h = ls[j].op.oh; *wd = ls[j].op.ow;
}

/* Window op (pooling, conv) output size with a check that the window fits the padded input. */
static int window_out(const sd_workload *w, const nn_layer_spec *s, nn_op *op, int h, int wd, const char *what) {
    if (h + 2 * s->ph < s->kh || wd + 2 * s->pw < s->kw)
        return spec_err(w, s, "%s %dx%d is larger than the padded input %dx%d", what, s->kh, s->kw, h + 2 * s->ph,
                        wd + 2 * s->pw);
    op->kh = s->kh; op->kw = s->kw; op->sh = s->sh; op->sw = s->sw; op->ph = s->ph; op->pw = s->pw;
    op->oh = (h + 2 * s->ph - s->kh) / s->sh + 1;
    op->ow = (wd + 2 * s->pw - s->kw) / s->sw + 1;
    return 0;
}

/* add, concat: several inputs of the same height and width (and, for add, channels). */
static int plan_join(const sd_workload *w, const nn_layer_spec *s, nn_layer *ls, nn_layer *l, int c, int h, int wd) {
    nn_op *op = &l->op;
    op->ninputs = l->ninputs;
    int sum = 0;
    for (int k = 0; k < l->ninputs; k++) {
        int ck, hk, wk;
        shape_of(w, ls, l->inputs[k], &ck, &hk, &wk);
        if (hk != h || wk != wd || (s->kind == NN_OP_ADD && ck != c))
            return spec_err(w, s, "%s of a %dx%dx%d and a %dx%dx%d tensor: shapes %s", nn_op_name(s->kind), c, h,
                            wd, ck, hk, wk, s->kind == NN_OP_ADD ? "differ (a residual block whose shape "
                            "changes needs \"project\": true)" : "differ in height or width");
        op->in_c[k] = ck;
        sum += ck;
    }
    op->oc = s->kind == NN_OP_ADD ? c : sum; op->oh = h; op->ow = wd;
    l->flops = s->kind == NN_OP_ADD ? (double)(l->ninputs - 1) * c * h * wd : 0;
    return 0;
}

/* The recurrent ops: shapes under "Sequence tensors" in nn/backend.h. */
static int plan_recurrent(const sd_workload *w, const nn_layer_spec *s, nn_layer *l, int c, int h, int wd) {
    nn_op *op = &l->op;
    switch (s->kind) {
    case NN_OP_EMBEDDING:
        if (l->input != -1 || h != 1 || wd != 1)
            return spec_err(w, s, "embedding must be the first layer, on token ids of shape [steps, 1, 1] (got %dx%dx%d)",
                            c, h, wd);
        op->units = s->units; op->vocab = s->vocab;
        if (s->range_to > 0) {   /* a range [from, to) of the input's ids */
            if (s->range_to > c)
                return spec_err(w, s, "embedding range [%d, %d) is outside the %d input ids", s->range_from,
                                s->range_to, c);
            op->ids_stride = c;
            op->ids_off = s->range_from;
            op->c = c = s->range_to - s->range_from;
        }
        op->oc = c; op->oh = 1; op->ow = s->units;
        l->w_len = (size_t)s->vocab * s->units;
        l->flops = 0;
        break;
    case NN_OP_GRU:
    case NN_OP_LSTM: {
        if (s->distributed) {   /* [1][rows][steps]: rows sequences of one feature, folded into the batch */
            if (c != 1 || s->ret_seq)
                return spec_err(w, s, "time_distributed %s needs a [1, rows, steps] input and no return_sequences "
                                "(got %dx%dx%d)", nn_op_name(s->kind), c, h, wd);
            op->seqs = h;
            op->n *= h;
            op->c = c = wd; op->h = h = 1; op->w = wd = 1;
        }
        if (h != 1)
            return spec_err(w, s, "%s needs a sequence of shape [steps, 1, features] (got %dx%dx%d)",
                            nn_op_name(s->kind), c, h, wd);
        const int G = s->kind == NN_OP_LSTM ? NN_LSTM_GATES : NN_GRU_GATES;
        op->units = s->units; op->ret_seq = s->ret_seq;
        op->oc = s->ret_seq ? c : s->units; op->oh = 1; op->ow = s->ret_seq ? s->units : 1;
        l->w_len = (size_t)nn_rnn_params(G, wd, s->units);
        l->flops = (double)c * (2.0 * G * s->units * (wd + s->units) + 8.0 * G * s->units);
        if (op->seqs > 1) l->flops *= op->seqs;
        break;
    }
    default:
        return sd_err(SD_ERROR, "internal: op %d is not recurrent", (int)s->kind);
    }
    return 0;
}

static int plan_layer(const sd_workload *w, nn_layer *ls, int i, size_t *off) {
    const nn_layer_spec *s = &w->layers[i];
    nn_layer *l = &ls[i];
    nn_op *op = &l->op;
    int c, h, wd;
    shape_of(w, ls, l->input, &c, &h, &wd);
    op->kind = s->kind;
    op->c = c; op->h = h; op->w = wd;
    switch (s->kind) {
    case NN_OP_DENSE:
        if (h != 1 || wd != 1)
            return spec_err(w, s, "dense layer after a %dx%dx%d feature map needs a flatten layer first", c, h, wd);
        op->oc = s->units; op->oh = op->ow = 1;
        op->has_bias = s->bias;
        l->w_len = (size_t)op->oc * c;
        l->flops = 2.0 * c * op->oc;
        break;
    case NN_OP_CONV2D:
        SD_TRY(window_out(w, s, op, h, wd, "conv2d kernel"));
        op->oc = s->units;
        op->has_bias = s->bias;
        l->w_len = (size_t)op->oc * c * s->kh * s->kw;
        l->flops = 2.0 * c * s->kh * s->kw * op->oc * op->oh * op->ow;
        break;
    case NN_OP_MAXPOOL:
    case NN_OP_AVGPOOL:
        SD_TRY(window_out(w, s, op, h, wd, s->kind == NN_OP_MAXPOOL ? "maxpool window" : "avgpool window"));
        op->oc = c;
        l->flops = (double)c * op->oh * op->ow * s->kh * s->kw;
        break;
    case NN_OP_GLOBAL_AVGPOOL:
        op->kh = op->sh = h; op->kw = op->sw = wd;
        op->oc = c; op->oh = op->ow = 1;
        l->flops = (double)c * h * wd;
        break;
    case NN_OP_FLATTEN:
        op->oc = c * h * wd; op->oh = op->ow = 1;
        break;
    case NN_OP_ADD:
    case NN_OP_CONCAT:
        SD_TRY(plan_join(w, s, ls, l, c, h, wd));
        break;
    case NN_OP_BATCHNORM:
        op->oc = c; op->oh = h; op->ow = wd;
        op->eps = s->eps; op->momentum = s->momentum;
        op->has_bias = 1;                 /* beta */
        l->w_len = (size_t)c;             /* gamma */
        l->s_len = 2 * (size_t)c;         /* running mean, running variance */
        l->flops = 4.0 * c * h * wd;
        break;
    case NN_OP_EMBEDDING:   /* recurrent ops */
    case NN_OP_GRU:
    case NN_OP_LSTM:
        SD_TRY(plan_recurrent(w, s, l, c, h, wd));
        break;
    case NN_OP_REPEAT:
        if (h != 1 || wd != 1)
            return spec_err(w, s, "repeat_vector needs a vector input (got %dx%dx%d)", c, h, wd);
        op->oc = s->units; op->oh = 1; op->ow = c;
        break;
    case NN_OP_DROPOUT:
        op->rate = s->rate;
        /* fall through */
    default: /* relu, dropout: same shape */
        op->oc = c; op->oh = h; op->ow = wd;
        l->flops = (double)c * h * wd;
        break;
    }
    double out_elems = (double)op->oc * op->oh * op->ow;
    if (out_elems > 1e9)
        return spec_err(w, s, "%s output of %.0f elements per example is too large", nn_op_name(s->kind), out_elems);
    if (l->w_len) { l->w_off = *off; *off += l->w_len; }
    if (op->has_bias) { l->b_len = (size_t)op->oc; l->b_off = *off; *off += l->b_len; }
    return 0;
}

int nn_model_plan(const sd_workload *w, int batch, nn_layer **layers_out, size_t *nparams_out) {
    *layers_out = NULL;
    if (w->nlayers < 1) return sd_err(SD_EINPUT, "%s: the model has no layers", w->path[0] ? w->path : w->name);
    int has_loss = w->loss != NN_LOSS_NONE;
    int L = w->nlayers + has_loss;
    nn_layer *ls = calloc((size_t)L, sizeof *ls);
    SD_ALLOC_CHECK(ls);
    int *used = calloc((size_t)w->nlayers, sizeof *used);
    if (!used) { free(ls); return sd_err(SD_ENOMEM, "out of memory"); }
    size_t off = 0, soff = 0;
    int counts[NN_OP_COUNT] = {0}, rc = 0;
    for (int i = 0; i < w->nlayers && rc == 0; i++) {
        const nn_layer_spec *s = &w->layers[i];
        nn_layer *l = &ls[i];
        l->op.n = batch;
        snprintf(l->name, sizeof l->name, "%s_%d", nn_op_name(s->kind), ++counts[s->kind]);
        if (s->ninputs == 0) { l->ninputs = 1; l->inputs[0] = i - 1; }
        else {
            l->ninputs = s->ninputs;
            for (int k = 0; k < s->ninputs; k++) {
                int j = s->inputs[k];
                if (j < -1 || j >= i) { rc = spec_err(w, s, "input %d of layer %d is not an earlier layer", j, i); break; }
                for (int q = 0; q < k; q++)
                    if (s->inputs[q] == j) rc = spec_err(w, s, "%s reads the same tensor twice", nn_op_name(s->kind));
                l->inputs[k] = j;
            }
            if (rc) break;
        }
        int multi = (nn_op_info_of(s->kind)->flags & NN_OPF_JOIN) != 0;
        if (multi && l->ninputs < 2) { rc = spec_err(w, s, "%s needs at least two inputs", nn_op_name(s->kind)); break; }
        if (!multi && l->ninputs != 1) { rc = spec_err(w, s, "%s takes one input", nn_op_name(s->kind)); break; }
        l->input = l->inputs[0];
        for (int k = 0; k < l->ninputs; k++) if (l->inputs[k] >= 0) used[l->inputs[k]] = 1;
        rc = plan_layer(w, ls, i, &off);
        if (rc == 0 && l->s_len) { l->s_off = soff; soff += l->s_len; }
    }
    for (int i = 0; rc == 0 && i + 1 < w->nlayers; i++)
        if (!used[i]) rc = spec_err(w, &w->layers[i], "the output of this %s is not used by any later layer",
                                    nn_op_name(w->layers[i].kind));
    free(used);
    if (rc) { free(ls); return rc; }
    if (has_loss) {
        const nn_layer_spec *last = &w->layers[w->nlayers - 1];
        const nn_op *lo = &ls[w->nlayers - 1].op;
        if (lo->oh != 1 || lo->ow != 1 || lo->oc != w->classes) {
            long outn = (long)lo->oc * lo->oh * lo->ow;
            free(ls);
            return spec_err(w, last, "the last layer must output one value per class (%d); this %s outputs %ld",
                            w->classes, nn_op_name(last->kind), outn);
        }
        nn_layer *loss = &ls[L - 1];
        int bce = w->loss == NN_LOSS_SIGMOID_BCE;
        loss->op.kind = bce ? NN_OP_SIGMOID_BCE : NN_OP_SOFTMAX_XENT;
        loss->op.n = batch;
        loss->op.c = loss->op.oc = w->classes;
        loss->op.h = loss->op.w = loss->op.oh = loss->op.ow = 1;
        loss->input = loss->inputs[0] = L - 2;
        loss->ninputs = 1;
        loss->flops = 4.0 * w->classes;
        snprintf(loss->name, sizeof loss->name, "%s", bce ? "sigmoid_bce" : "softmax_xent");
    }
    *layers_out = ls;
    *nparams_out = off;
    return L;
}

size_t nn_model_nstats(const nn_layer *ls, int L) {
    size_t n = 0;
    for (int i = 0; i < L; i++) n += ls[i].s_len;
    return n;
}

int nn_owner_of(const nn_layer *ls, int j) {
    while (j >= 0 && nn_is_view(&ls[j])) j = ls[j].input;
    return j;
}

int nn_layer_has_dx(const nn_layer *ls, int i) { return nn_owner_of(ls, ls[i].input) >= 0; }

double nn_layer_bwd_flops(const nn_layer *ls, int i) {
    const nn_layer *l = &ls[i];
    const nn_op *op = &l->op;
    if (!(nn_op_info_of(op->kind)->flags & NN_OPF_PRODUCT)) return l->flops;
    if (nn_layer_has_dx(ls, i)) return 2.0 * l->flops;   /* data and weight gradients */
    double b = l->flops;                                 /* the weight gradients */
    if (op->kind == NN_OP_GRU || op->kind == NN_OP_LSTM) {   /* and dh through W_h at every step but the first */
        const double G = op->kind == NN_OP_LSTM ? NN_LSTM_GATES : NN_GRU_GATES, H = op->units;
        b += (op->c - 1) * 2.0 * G * H * H * (op->seqs > 1 ? op->seqs : 1);
    }
    return b;
}

void nn_model_flops(const nn_layer *ls, int L, double *fwd, double *train) {
    double f = 0, t = 0;
    for (int i = 0; i < L; i++) {
        f += ls[i].flops;
        t += ls[i].flops + nn_layer_bwd_flops(ls, i);
    }
    *fwd = f;
    *train = t;
}

static void fmt_count(char *buf, size_t n, double v) {
    /* 3441592 -> "3,441,592" */
    char raw[64];
    snprintf(raw, sizeof raw, "%.0f", v);
    size_t len = strlen(raw), o = 0;
    for (size_t i = 0; i < len && o + 2 < n; i++) {
        buf[o++] = raw[i];
        if ((len - i - 1) % 3 == 0 && i + 1 < len) buf[o++] = ',';
    }
    buf[o] = 0;
}

void nn_model_describe(FILE *f, const sd_workload *w, const nn_layer *ls, int L, size_t nparams) {
    fprintf(f, "workload %s%s%s\n", w->name, w->title[0] ? ": " : "", w->title);
    fprintf(f, "input %dx%dx%d, %d classes, batch %d\n\n", w->in_c, w->in_h, w->in_w, w->classes, w->batch);
    fprintf(f, "%-3s %-16s %-16s %14s %16s\n", "#", "layer", "output", "parameters", "FLOPs/example");
    double flops = 0;
    for (int i = 0; i < L; i++) {
        const nn_layer *l = &ls[i];
        char shape[48], p[32], fl[32];
        if (l->op.seqs > 1) snprintf(shape, sizeof shape, "%dx1x%d", l->op.seqs, l->op.oc);
        else if (l->op.oh == 1 && l->op.ow == 1) snprintf(shape, sizeof shape, "%d", l->op.oc);
        else snprintf(shape, sizeof shape, "%dx%dx%d", l->op.oc, l->op.oh, l->op.ow);
        fmt_count(p, sizeof p, (double)(l->w_len + l->b_len));
        fmt_count(fl, sizeof fl, l->flops);
        fprintf(f, "%-3d %-16s %-16s %14s %16s\n", i + 1, l->name, shape, p, fl);
        flops += l->flops;
    }
    char p[32], fl[32];
    fmt_count(p, sizeof p, (double)nparams);
    fmt_count(fl, sizeof fl, flops);
    fprintf(f, "%-3s %-16s %-16s %14s %16s\n", "", "total", "", p, fl);
    fprintf(f, "\nparameters: %s", p);
    if (w->expected_params) fprintf(f, " (expected %lld: %s)", w->expected_params,
                                    (long long)nparams == w->expected_params ? "match" : "MISMATCH");
    fprintf(f, "\nforward FLOPs per example: %s (%.3f GFLOP)\n", fl, flops / 1e9);
}
