/* model — the shared graph: shape inference, parameter and FLOP counts, the layer table, building a
 * model on a back-end and running forward / backward / optimizer steps through the back-end's table.
 * Knows nothing about any particular back-end. */
#include "nn/model.h"
#include "nn/backend_impl.h"
#include "nn/kernels.h"
#include "core/clock.h"
#include "core/err.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *nn_op_name(nn_op_kind k) {
    static const char *const names[NN_OP_COUNT] = {"dense", "conv2d", "maxpool", "relu", "dropout", "flatten",
                                                   "softmax_xent", "add", "concat", "batchnorm", "avgpool",
                                                   "global_avgpool", "sigmoid_bce", "embedding", "gru", "lstm", "repeat"};
    return k < NN_OP_COUNT ? names[k] : "?";
}

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
    case NN_OP_CONCAT: {
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
        break;
    }
    case NN_OP_BATCHNORM:
        op->oc = c; op->oh = h; op->ow = wd;
        op->eps = s->eps; op->momentum = s->momentum;
        op->has_bias = 1;                 /* beta */
        l->w_len = (size_t)c;             /* gamma */
        l->s_len = 2 * (size_t)c;         /* running mean, running variance */
        l->flops = 4.0 * c * h * wd;
        break;
    /* recurrent ops: shapes under "Sequence tensors" in nn/backend.h */
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
        int multi = s->kind == NN_OP_ADD || s->kind == NN_OP_CONCAT;
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

/* A view shares its input's buffers: flatten, and dropout with rate 0. */
static int is_view(const nn_layer *l) {
    return l->op.kind == NN_OP_FLATTEN || (l->op.kind == NN_OP_DROPOUT && l->op.rate == 0.0f);
}

/* The layer whose buffer layer j's output lives in, seen through views; -1 for the model input. */
static int owner_of(const nn_layer *ls, int j) {
    while (j >= 0 && is_view(&ls[j])) j = ls[j].input;
    return j;
}

int nn_layer_has_dx(const nn_layer *ls, int i) { return owner_of(ls, ls[i].input) >= 0; }

void nn_model_flops(const nn_layer *ls, int L, double *fwd, double *train) {
    double f = 0, t = 0;
    for (int i = 0; i < L; i++) {
        const nn_layer *l = &ls[i];
        int weighted = l->op.kind == NN_OP_DENSE || l->op.kind == NN_OP_CONV2D || l->op.kind == NN_OP_GRU ||
                       l->op.kind == NN_OP_LSTM;
        f += l->flops;
        t += l->flops * (weighted ? (nn_layer_has_dx(ls, i) ? 3.0 : 2.0) : 2.0);
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

/* uniform in [-limit, limit) from a counter-based stream */
static void fill_uniform(float *p, size_t n, uint64_t key, float limit) {
    for (size_t j = 0; j < n; j++) {
        float u = (float)(nn_hash64(key ^ nn_hash64(j)) >> 40) * (1.0f / 16777216.0f);
        p[j] = (2.0f * u - 1.0f) * limit;
    }
}

/* Keras' initialisers for the recurrent ops: embedding uniform(-0.05, 0.05); gru/lstm kernels
 * Glorot-uniform on (F, G*H) and (H, G*H) (Keras' recurrent kernel is orthogonal: Glorot here), biases 0
 * except the LSTM forget gate's input bias 1 (Keras unit_forget_bias; b_h stays 0). */
static void init_recurrent(const nn_layer *l, uint64_t key, nn_init_kind winit, float *out) {
    float *p = out + l->w_off;
    if (winit != NN_INIT_GLOROT_UNIFORM) return;
    if (l->op.kind == NN_OP_EMBEDDING) { fill_uniform(p, l->w_len, key, 0.05f); return; }
    const int G = l->op.kind == NN_OP_LSTM ? NN_LSTM_GATES : NN_GRU_GATES, F = l->op.w, H = l->op.units;
    const size_t nx = (size_t)G * H * F, nh = (size_t)G * H * H;
    fill_uniform(p, nx, key, (float)sqrt(6.0 / (F + (double)G * H)));
    fill_uniform(p + nx, nh, nn_hash64(key + 1), (float)sqrt(6.0 / (H + (double)G * H)));
    if (l->op.kind == NN_OP_LSTM)
        for (int k = 0; k < H; k++) p[nx + nh + H + k] = 1.0f;   /* b_x of gate f */
}

int nn_model_init_params(const nn_layer *ls, int L, size_t nparams, nn_init_kind winit, nn_init_kind binit,
                         uint64_t seed, float *out) {
    memset(out, 0, sizeof(float) * nparams);
    for (int i = 0; i < L; i++) {
        const nn_layer *l = &ls[i];
        if (l->op.kind == NN_OP_BATCHNORM) {   /* gamma 1 (beta 0) */
            for (size_t j = 0; j < l->w_len; j++) out[l->w_off + j] = 1.0f;
            continue;
        }
        if (l->op.kind == NN_OP_EMBEDDING || l->op.kind == NN_OP_GRU || l->op.kind == NN_OP_LSTM) {
            init_recurrent(l, nn_hash64(seed ^ nn_hash64(0x5eedULL + (uint64_t)i)), winit, out);
            continue;
        }
        if (l->w_len && winit == NN_INIT_GLOROT_UNIFORM) {
            double rf = l->op.kind == NN_OP_CONV2D ? (double)l->op.kh * l->op.kw : 1.0;
            double fan_in = l->op.c * rf, fan_out = l->op.oc * rf;
            float limit = (float)sqrt(6.0 / (fan_in + fan_out));
            uint64_t lseed = nn_hash64(seed ^ nn_hash64(0x5eedULL + (uint64_t)i));
            for (size_t j = 0; j < l->w_len; j++) {
                float u = (float)(nn_hash64(lseed ^ nn_hash64(j)) >> 40) * (1.0f / 16777216.0f);
                out[l->w_off + j] = (2.0f * u - 1.0f) * limit;
            }
        }
        (void)binit; /* zeros: already */
    }
    return 0;
}

static size_t out_elems(const nn_op *op) { return (size_t)op->n * op->oc * op->oh * op->ow; }
/* Bytes of a layer's y (and dy) in its output layout (padding included). */
static size_t y_bytes(const nn_layer *l) {
    return nn_fmt_elems(l->op.fmt_out, l->op.n, l->op.oc, l->op.oh, l->op.ow) * sizeof(float);
}

static int is_loss(const nn_layer *l) {
    return l->op.kind == NN_OP_SOFTMAX_XENT || l->op.kind == NN_OP_SIGMOID_BCE;
}

/* The layer whose buffers layer j's output lives in (through views), -1 for the model input. */
static int owner(const nn_model *m, int j) { return owner_of(m->layers, j); }

/* ---- buffer reuse (inference-only models) ------------------------------------------------------------------
 * Without a backward pass a layer's output is dead once its last reader has run, so its buffer can hold a
 * later layer's output. Layers take buffers in order from a pool (the smallest free one that is large
 * enough, else a new one) and give their inputs' buffers back after their last reader; the model output is
 * never given back. SD_NO_BUFFER_REUSE=1 gives every layer its own (for comparisons). */
static int pool_take(nn_model *m, size_t bytes, unsigned char *busy, float **out) {
    int best = -1;
    for (int k = 0; k < m->npool; k++)
        if (!busy[k] && m->pool_bytes[k] >= bytes && (best < 0 || m->pool_bytes[k] < m->pool_bytes[best])) best = k;
    if (best < 0) {
        best = m->npool;
        SD_TRY(nn_dev_alloc(m->be, &m->pool[best], bytes));
        m->pool_bytes[best] = bytes;
        m->npool++;
    }
    busy[best] = 1;
    *out = m->pool[best];
    return 0;
}
/* The layer whose buffer layer j's output is, at inference: through views and through dropout, which is the
 * identity there (nn_model_forward hands its input on). */
static int live_owner(const nn_model *m, int j) {
    while (j >= 0 && (is_view(&m->layers[j]) || (!m->training && m->layers[j].op.kind == NN_OP_DROPOUT)))
        j = m->layers[j].input;
    return j;
}
static void pool_give(nn_model *m, const float *p, unsigned char *busy) {
    for (int k = 0; k < m->npool; k++)
        if (m->pool[k] == p) busy[k] = 0;
}

void nn_model_free(nn_model *m) {
    if (!m) return;
    nn_backend *be = m->be;
    for (int k = 0; k < m->npool; k++) nn_dev_free(be, m->pool[k], m->pool_bytes[k]);
    free(m->pool);
    free(m->pool_bytes);
    free(m->chains);
    free(m->inf_blocked);
    free(m->relu_pooled);
    for (int i = 0; i < m->nlayers; i++) {
        nn_layer *l = &m->layers[i];
        if (!is_view(l) && !m->pool) {
            nn_dev_free(be, l->y, y_bytes(l));
            nn_dev_free(be, l->dy, y_bytes(l));
        }
        nn_dev_free(be, l->ws, l->ws_bytes);
        if (be->ops->release && !is_view(l)) be->ops->release(be, &l->op);
    }
    nn_dev_free(be, m->params, m->nparams * sizeof(float));
    nn_dev_free(be, m->grads, m->nparams * sizeof(float));
    nn_dev_free(be, m->state, m->nstate * sizeof(float));
    nn_dev_free(be, m->stats, m->nstats * sizeof(float));
    nn_dev_free(be, m->scratch, m->scratch_elems * sizeof(float));
    nn_dev_free(be, m->x, (size_t)m->batch * m->in_c * m->in_h * m->in_w * sizeof(float));
    nn_dev_free(be, m->ids, (size_t)m->batch * m->in_c * m->in_h * m->in_w * sizeof(int32_t));
    nn_dev_free(be, m->labels, (size_t)m->batch * sizeof(int32_t));
    nn_dev_free(be, m->targets, (size_t)m->batch * m->classes * sizeof(float));
    nn_dev_free(be, m->prob, (size_t)m->batch * m->classes * sizeof(float));
    nn_dev_free(be, m->loss, (size_t)m->batch * sizeof(float));
    free(m->consumers);
    free(m->written);
    free(m->layers);
    free(m);
}

static int needs(const nn_backend *be, const void *fn, const nn_layer *l) {
    if (fn) return 0;
    return sd_err(SD_EUNSUPPORTED, "back-end %s does not support %s (layer %s)", be->name, nn_op_name(l->op.kind),
                  l->name);
}

/* The primitives a layer needs on this back-end (backward ones only when training). */
static int check_support(const nn_backend *be, const nn_layer *l, int training) {
    const nn_backend_ops *o = be->ops;
    const void *f = NULL, *b = NULL;
    switch (l->op.kind) {
    case NN_OP_DENSE: f = (void *)o->dense_forward; b = (void *)o->dense_backward; break;
    case NN_OP_CONV2D: f = (void *)o->conv2d_forward; b = (void *)o->conv2d_backward; break;
    case NN_OP_MAXPOOL: f = (void *)o->maxpool_forward; b = (void *)o->maxpool_backward; break;
    case NN_OP_RELU: f = (void *)o->relu_forward; b = (void *)o->relu_backward; break;
    case NN_OP_DROPOUT: f = (void *)o->dropout_forward; b = (void *)o->dropout_backward; break;
    case NN_OP_SOFTMAX_XENT: f = (void *)o->softmax_xent_forward; b = (void *)o->softmax_xent_backward; break;
    case NN_OP_ADD: f = (void *)o->add_forward; b = (void *)o->copy; break;
    case NN_OP_CONCAT: f = (void *)o->concat_forward; b = (void *)o->concat_backward; break;
    case NN_OP_BATCHNORM: f = (void *)o->batchnorm_forward; b = (void *)o->batchnorm_backward; break;
    case NN_OP_AVGPOOL: case NN_OP_GLOBAL_AVGPOOL: f = (void *)o->avgpool_forward; b = (void *)o->avgpool_backward; break;
    case NN_OP_SIGMOID_BCE: f = (void *)o->sigmoid_bce_forward; b = (void *)o->sigmoid_bce_backward; break;
    case NN_OP_EMBEDDING: f = (void *)o->embedding_forward; b = (void *)o->embedding_backward; break;
    case NN_OP_GRU: f = (void *)o->gru_forward; b = (void *)o->gru_backward; break;
    case NN_OP_LSTM: f = (void *)o->lstm_forward; b = (void *)o->lstm_backward; break;
    case NN_OP_REPEAT: f = (void *)o->repeat_forward; b = (void *)o->repeat_backward; break;
    default: return 0;   /* flatten: a view */
    }
    SD_TRY(needs(be, f, l));
    return training ? needs(be, b, l) : 0;
}

/* ---- layouts (nn/backend.h, nn_fmt) ----------------------------------------------------------------------
 * A layer writes NN_FMT_NCHW16C when the back-end can run it so, and so can the chain of layout-keeping
 * layers after it (relu, dropout, batchnorm: the same layout in and out) and the layer that finally reads
 * it; and nothing else reads the tensors on the way (one consumer each, no view, no loss, not the model
 * output). Everything else stays NCHW. The back-end reorders where a layer's input and output layouts
 * differ: at the chain's ends. */
static int elementwise(const nn_layer *l) {   /* here: per element or per channel, the same layout in and out */
    return l->op.kind == NN_OP_RELU || l->op.kind == NN_OP_BATCHNORM ||
           (l->op.kind == NN_OP_DROPOUT && l->op.rate > 0.0f);
}
static int only_consumer(const nn_model *m, int i) {   /* the one layer reading layer i's output, else -1 */
    int who = -1, n = 0;
    for (int j = i + 1; j < m->nlayers; j++)
        for (int k = 0; k < m->layers[j].ninputs; k++)
            if (m->layers[j].inputs[k] == i) { who = j; n++; }
    return n == 1 ? who : -1;
}
/* ---- inference fusion ------------------------------------------------------------------------------------
 * At inference a convolution runs with what follows it (the back-end's conv2d_infer): batch norm on its
 * running statistics, a residual add whose other input is computed before the convolution, relu, each the
 * only reader of the one before. The result goes straight into the chain's last layer's buffer; the layers in
 * between are not run, so at inference their own buffers are not written (nn_model_download_y of them is
 * stale). A training pass fuses only a convolution and its relu (train_fusable). The chains are found once,
 * by nn_model_build; SD_NO_FUSE=1 set before it runs every layer apart (comparisons). */
typedef struct nn_fuse_chain {
    int bn, add, relu, last, other;
    int x_fmt, y_fmt, res_fmt;   /* the layouts at inference (inference_layouts) */
} fuse_chain;

/* The chain that starts at layer i: 1 and *fc if i is a convolution, else 0 (fc->last = -1). */
static int fuse_chain_at(const nn_model *m, int i, fuse_chain *fc) {
    *fc = (fuse_chain){.bn = -1, .add = -1, .relu = -1, .last = -1, .other = -1};
    if (m->layers[i].op.kind != NN_OP_CONV2D) return 0;
    fc->last = i;
    int cur = i, j = only_consumer(m, cur);
    if (j >= 0 && m->layers[j].op.kind == NN_OP_BATCHNORM) { fc->bn = cur = j; j = only_consumer(m, cur); }
    if (j >= 0 && m->layers[j].op.kind == NN_OP_ADD && m->layers[j].ninputs == 2) {
        const nn_layer *a = &m->layers[j];
        int other = a->inputs[0] == cur ? a->inputs[1] : a->inputs[0];
        if (other < i) { fc->add = cur = j; fc->other = other; j = only_consumer(m, cur); }   /* ready by then */
    }
    if (j >= 0 && m->layers[j].op.kind == NN_OP_RELU) fc->relu = cur = j;
    fc->last = cur;
    fc->x_fmt = m->layers[i].op.fmt_in;
    fc->y_fmt = m->layers[cur].op.fmt_out;
    fc->res_fmt = fc->other >= 0 ? m->layers[fc->other].op.fmt_out : NN_FMT_NCHW;
    return 1;
}

/* In a training pass only a convolution and the relu after it run fused (the relu's backward reads its output,
 * which the fused call writes; the convolution's backward does not read its own), in the training layouts. */
static int train_fusable(const nn_model *m, int i) {
    const fuse_chain *fc = &m->chains[i];
    return fc->bn < 0 && fc->add < 0 && fc->relu >= 0 && fc->x_fmt == m->layers[i].op.fmt_in &&
           fc->y_fmt == m->layers[fc->last].op.fmt_out;
}

/* A training model's layouts serve its backward pass too: a tensor read by several layers (a residual block's
 * output) stays NCHW, and at inference each fused convolution reading it reordered it in, after the one
 * writing it had reordered it out. At inference such a chain's output is written in NCHW16C instead when
 * every reader is a fused convolution (its input) or a fused residual add (its other input): those take
 * either layout. m->inf_blocked marks the layers whose buffer holds NCHW16C after an inference pass. */
static int inference_layouts(nn_model *m) {
    nn_backend *be = m->be;
    const int L = m->nlayers, F = NN_FMT_NCHW16C;
    if (!m->chains || !m->training || !be->ops->layout_ok || getenv("SD_LAYOUT_NCHW")) return 0;
    m->inf_blocked = calloc((size_t)L, 1);
    SD_ALLOC_CHECK(m->inf_blocked);
    for (int i = 0; i < L; i++) {
        fuse_chain *fc = &m->chains[i];
        if (fc->last < 0 || fc->y_fmt == F || fc->last == L - 1) continue;
        const nn_layer *e = &m->layers[fc->last];
        if (e->op.oc % 16 || !be->ops->layout_ok(be, &m->layers[i].op, F)) continue;   /* no padded channels */
        int ok = 1, readers = 0;
        for (int j = fc->last + 1; j < L && ok; j++) {
            const nn_layer *r = &m->layers[j];
            for (int k = 0; k < r->ninputs && ok; k++) {
                if (r->inputs[k] != fc->last) continue;
                readers++;
                if (m->chains[j].last >= 0) continue;   /* a fused convolution */
                int res = 0;
                for (int c = 0; c < j && !res; c++) res = m->chains[c].add == j && m->chains[c].other == fc->last;
                ok = res;
            }
        }
        if (ok && readers) { fc->y_fmt = F; m->inf_blocked[fc->last] = 1; }
    }
    for (int i = 0; i < L; i++) {   /* the readers take what is written now */
        fuse_chain *fc = &m->chains[i];
        if (fc->last < 0) continue;
        const int in = m->layers[i].inputs[0];
        if (in >= 0 && m->inf_blocked[in]) fc->x_fmt = F;
        if (fc->other >= 0 && m->inf_blocked[fc->other]) fc->res_fmt = F;
    }
    return 0;
}

/* Inference-only models (no gradients to keep in step): a tensor read by several layers (a residual block's
 * input) and the adds are kept in NN_FMT_NCHW16C too, when the tensor's writer and all of its readers can take
 * it; an element-wise layer and an add have their inputs' layout (the back-end adds flat buffers). Found as a
 * fixpoint: every candidate first, then what breaks a rule is dropped until nothing changes. */
static int choose_layouts_shared(nn_model *m) {
    nn_backend *be = m->be;
    const int L = m->nlayers, F = NN_FMT_NCHW16C;
    unsigned char *b = malloc((size_t)L);
    SD_ALLOC_CHECK(b);
    for (int t = 0; t < L; t++) {
        const nn_layer *l = &m->layers[t];
        b[t] = t < L - 1 && !is_view(l) && !is_loss(l) && be->ops->layout_ok(be, &l->op, F);
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (int t = 0; t < L; t++) {
            if (!b[t]) continue;
            const nn_layer *l = &m->layers[t];
            int ok = 1;
            if (elementwise(l) || l->op.kind == NN_OP_ADD)   /* the same layout as its inputs */
                for (int k = 0; k < l->ninputs; k++) ok &= l->inputs[k] >= 0 && b[l->inputs[k]];
            for (int j = t + 1; j < L && ok; j++) {
                const nn_layer *c = &m->layers[j];
                for (int k = 0; k < c->ninputs; k++) {
                    if (c->inputs[k] != t) continue;
                    if (is_view(c) || is_loss(c) || !be->ops->layout_ok(be, &c->op, F)) ok = 0;
                    if (!b[j] && (elementwise(c) || c->op.kind == NN_OP_ADD)) ok = 0;
                }
            }
            if (!ok) { b[t] = 0; changed = 1; }
        }
    }
    for (int t = 0; t < L; t++) {
        nn_layer *l = &m->layers[t];
        if (b[t]) l->op.fmt_out = F;
        if (l->inputs[0] >= 0 && b[l->inputs[0]]) l->op.fmt_in = F;
    }
    free(b);
    return 0;
}

static int choose_layouts(nn_model *m) {
    nn_backend *be = m->be;
    const int F = NN_FMT_NCHW16C;
    if (!be->ops->layout_ok || getenv("SD_LAYOUT_NCHW")) return 0;   /* SD_LAYOUT_NCHW: for comparisons */
    if (!m->training) return choose_layouts_shared(m);
    for (int i = 0; i < m->nlayers; i++) {
        nn_layer *p = &m->layers[i];
        if (is_view(p) || is_loss(p) || elementwise(p) || !be->ops->layout_ok(be, &p->op, F)) continue;
        if (p->op.kind == NN_OP_ADD) continue;   /* adds: inference-only models (choose_layouts_shared) */
        int cur = i, j, ok = 0;
        while ((j = only_consumer(m, cur)) >= 0) {
            const nn_layer *c = &m->layers[j];
            if (is_view(c) || is_loss(c) || c->op.kind == NN_OP_ADD || !be->ops->layout_ok(be, &c->op, F)) break;
            if (!elementwise(c)) { ok = 1; break; }
            cur = j;
        }
        if (!ok) continue;
        p->op.fmt_out = F;
        for (int t = only_consumer(m, i);; t = only_consumer(m, t)) {
            nn_layer *c = &m->layers[t];
            c->op.fmt_in = F;
            if (!elementwise(c)) break;
            c->op.fmt_out = F;
        }
    }
    return 0;
}

int nn_model_build(nn_model **out, const sd_workload *w, nn_backend *be, int batch, uint64_t seed) {
    *out = NULL;
    nn_model *m = calloc(1, sizeof *m);
    SD_ALLOC_CHECK(m);
    m->be = be;
    m->batch = batch;
    m->in_c = w->in_c; m->in_h = w->in_h; m->in_w = w->in_w; m->classes = w->classes;
    m->optim = w->optim;
    m->loss_kind = w->loss;
    m->training = w->mode == SD_MODE_TRAIN && w->loss != NN_LOSS_NONE;
    int rc = nn_model_plan(w, batch, &m->layers, &m->nparams);
    if (rc < 0) { free(m); return rc; }
    m->nlayers = rc;
    rc = 0;
    m->nstats = nn_model_nstats(m->layers, m->nlayers);
    m->nstate = m->training ? m->nparams * (size_t)nn_optim_state_per_param(w->optim.kind) : 0;
    const nn_backend_ops *o = be->ops;
    float *host = NULL;
    m->consumers = calloc((size_t)m->nlayers, sizeof *m->consumers);
    m->written = calloc((size_t)m->nlayers, 1);
    if (!m->consumers || !m->written) { rc = sd_err(SD_ENOMEM, "out of memory"); goto fail; }
    size_t in_bytes = (size_t)batch * w->in_c * w->in_h * w->in_w * sizeof(float);
    SD_TRY_GOTO(rc, nn_dev_alloc(be, (void **)&m->x, in_bytes), fail);
    for (int i = 0; i < m->nlayers; i++)
        if (m->layers[i].op.kind == NN_OP_EMBEDDING && m->layers[i].input == -1 && !m->ids)
            SD_TRY_GOTO(rc, nn_dev_alloc(be, (void **)&m->ids, in_bytes / sizeof(float) * sizeof(int32_t)), fail);
    SD_TRY_GOTO(rc, choose_layouts(m), fail);
    if (be->ops->conv2d_infer && !getenv("SD_NO_FUSE")) {
        m->chains = malloc(sizeof *m->chains * (size_t)m->nlayers);
        if (!m->chains) { rc = sd_err(SD_ENOMEM, "out of memory"); goto fail; }
        for (int i = 0; i < m->nlayers; i++) fuse_chain_at(m, i, &m->chains[i]);
        SD_TRY_GOTO(rc, inference_layouts(m), fail);
    }
    int fan_out = 0;
    size_t max_elems = 0;
    /* buffer reuse: last[j] = the last layer reading layer j's buffer (inference-only models) */
    int *last = NULL, *head = NULL;   /* head[t]: the convolution whose fused chain layer t is in, or -1 */
    unsigned char *busy = NULL;
    if (!m->training && !getenv("SD_NO_BUFFER_REUSE")) {
        const int L = m->nlayers;
        last = malloc(sizeof *last * (size_t)L);
        head = malloc(sizeof *head * (size_t)L);
        busy = calloc((size_t)L, 1);
        m->pool = calloc((size_t)L, sizeof *m->pool);
        m->pool_bytes = calloc((size_t)L, sizeof *m->pool_bytes);
        if (!last || !head || !busy || !m->pool || !m->pool_bytes) {
            free(last);
            free(head);
            free(busy);
            rc = sd_err(SD_ENOMEM, "out of memory");
            goto fail;
        }
        /* fused chains write the last layer's buffer when the convolution runs: it is taken then (before the
         * convolution's inputs are given back, so it never is one of them) and shared by the chain */
        for (int i = 0; i < L; i++) head[i] = -1;
        for (int i = 0; m->chains && i < L; i++)
            if (m->chains[i].last >= 0) {
                const fuse_chain *fc = &m->chains[i];
                const int mem[4] = {i, fc->bn, fc->add, fc->relu};
                for (int k = 0; k < 4; k++) if (mem[k] >= 0) head[mem[k]] = i;
            }
        for (int i = 0; i < L; i++) last[i] = -1;
        for (int i = 0; i < L; i++)
            if (live_owner(m, i) == i)   /* a layer that computes (not a view, not inference dropout) */
                for (int k = 0; k < m->layers[i].ninputs; k++) {
                    int ow = live_owner(m, m->layers[i].inputs[k]);
                    if (ow >= 0) last[ow] = i;
                }
        int out = live_owner(m, L - 1);
        if (out >= 0) last[out] = L;   /* the model output stays */
    }
    for (int i = 0; i < m->nlayers && rc == 0; i++) {
        nn_layer *l = &m->layers[i];
        m->flops_fwd += l->flops;
        if ((rc = check_support(be, l, m->training)) != 0) break;
        if (!is_view(l))
            for (int k = 0; k < l->ninputs; k++) {
                int ow = owner(m, l->inputs[k]);
                if (ow >= 0 && ++m->consumers[ow] > 1) fan_out = 1;
            }
        if (is_view(l)) {   /* same buffers as the input; no primitive */
            l->y = l->input >= 0 ? m->layers[l->input].y : m->x;
            l->dy = l->input >= 0 ? m->layers[l->input].dy : NULL;
            continue;
        }
        if (last && live_owner(m, i) != i) {   /* inference dropout: its input's buffer, handed on */
            int ow = live_owner(m, i);
            l->y = ow >= 0 ? m->layers[ow].y : m->x;
            continue;
        }
        if (o->prepare && (rc = o->prepare(be, &l->op)) != 0) break;
        if (!is_loss(l)) {
            size_t bytes = y_bytes(l);
            if (out_elems(&l->op) > max_elems) max_elems = out_elems(&l->op);
            if (last && head[i] == i) {   /* a fused chain's convolution: the chain's output buffer, shared */
                const fuse_chain *fc = &m->chains[i];
                int ro = fc->add >= 0 ? live_owner(m, fc->other) : -1;
                const nn_layer *end = &m->layers[fc->last];
                for (int j = i + 1; ro >= 0 && j < fc->add; j++)   /* read by no layer running after the chain */
                    for (int k = 0; k < m->layers[j].ninputs; k++)
                        if (live_owner(m, m->layers[j].inputs[k]) == ro) ro = -1;
                if (ro >= 0 && last[ro] == fc->add && m->layers[ro].op.fmt_out == end->op.fmt_out &&
                    y_bytes(&m->layers[ro]) == y_bytes(end))
                    l->y = m->layers[ro].y;   /* the add reads the residual last: sum into it in place */
                else
                    rc = pool_take(m, y_bytes(end), busy, &l->y);
                for (int t = i + 1; t <= fc->last && !rc; t++) if (head[t] == i) m->layers[t].y = l->y;
            } else if (last && head[i] >= 0) {
                /* in a chain: the buffer is the chain's */
            } else if (last) rc = pool_take(m, bytes, busy, &l->y);
            else rc = nn_dev_alloc(be, (void **)&l->y, bytes);
            if (!rc && m->training) rc = nn_dev_alloc(be, (void **)&l->dy, bytes);
        }
        if (!rc && last)   /* inputs read for the last time: their buffers are free for later layers */
            for (int k = 0; k < l->ninputs; k++) {
                int ow = live_owner(m, l->inputs[k]);
                /* within a chain only its last layer's buffer is real (given back after its last reader) */
                if (ow >= 0 && head[ow] >= 0 && head[ow] == head[i]) continue;
                if (ow >= 0 && m->layers[ow].y == l->y) continue;   /* became this chain's output (in place) */
                if (ow >= 0 && last[ow] == i) pool_give(m, m->layers[ow].y, busy);
            }
        if (!rc && o->workspace_size && (l->ws_bytes = o->workspace_size(be, &l->op)) > 0)
            rc = nn_dev_alloc(be, &l->ws, l->ws_bytes);
    }
    free(last);
    free(head);
    free(busy);
    if (rc) goto fail;
    /* relu under max pooling (training, when the back-end has relu_mask; SD_NO_FUSE=1 turns it off): a relu
     * whose only reader is a max pooling has its backward done on the pooling's output gradient, a quarter of
     * the size, before the pooling scatters it (the pooled value is the relu output at the argmax, so the mask
     * is the same there); the pooling's dx goes to the relu's input and the relu's backward does not run. */
    if (m->training && o->relu_mask && !getenv("SD_NO_FUSE")) {
        m->relu_pooled = calloc((size_t)m->nlayers, 1);
        if (!m->relu_pooled) { rc = sd_err(SD_ENOMEM, "out of memory"); goto fail; }
        for (int p = 0; p < m->nlayers; p++) {
            const nn_layer *pl = &m->layers[p];
            if (pl->op.kind != NN_OP_MAXPOOL || pl->inputs[0] < 0) continue;
            const int r = pl->inputs[0];
            const nn_layer *rl = &m->layers[r];
            if (rl->op.kind == NN_OP_RELU && m->consumers[r] == 1 &&   /* p, which reads it directly */
                rl->op.fmt_in == rl->op.fmt_out && pl->op.fmt_in == rl->op.fmt_out)
                m->relu_pooled[r] = 1;
        }
    }
    nn_layer *lastl = &m->layers[m->nlayers - 1];
    if (!is_loss(lastl)) { m->out = lastl->y; m->out_elems = out_elems(&lastl->op) / (size_t)batch; }
    if (fan_out && m->training) {
        m->scratch_elems = max_elems;
        SD_TRY_GOTO(rc, nn_dev_alloc(be, (void **)&m->scratch, m->scratch_elems * sizeof(float)), fail);
    }
    SD_TRY_GOTO(rc, nn_dev_alloc(be, (void **)&m->params, m->nparams * sizeof(float)), fail);
    if (m->training) {
        SD_TRY_GOTO(rc, nn_dev_alloc(be, (void **)&m->grads, m->nparams * sizeof(float)), fail);
        SD_TRY_GOTO(rc, nn_dev_alloc(be, (void **)&m->state, m->nstate * sizeof(float)), fail);
        SD_TRY_GOTO(rc, o->zero(be, m->grads, m->nparams * sizeof(float)), fail);
        SD_TRY_GOTO(rc, o->zero(be, m->state, m->nstate * sizeof(float)), fail);
    }
    if (m->loss_kind != NN_LOSS_NONE) {
        SD_TRY_GOTO(rc, nn_dev_alloc(be, (void **)&m->labels, (size_t)batch * sizeof(int32_t)), fail);
        SD_TRY_GOTO(rc, nn_dev_alloc(be, (void **)&m->prob, (size_t)batch * w->classes * sizeof(float)), fail);
        SD_TRY_GOTO(rc, nn_dev_alloc(be, (void **)&m->loss, (size_t)batch * sizeof(float)), fail);
        if (m->loss_kind == NN_LOSS_SIGMOID_BCE)
            SD_TRY_GOTO(rc, nn_dev_alloc(be, (void **)&m->targets, (size_t)batch * w->classes * sizeof(float)), fail);
    }
    host = malloc((m->nparams > m->nstats ? m->nparams : m->nstats) * sizeof(float) + 1);
    if (!host) { rc = sd_err(SD_ENOMEM, "out of memory for %zu parameters", m->nparams); goto fail; }
    nn_model_init_params(m->layers, m->nlayers, m->nparams, w->weight_init, w->bias_init, seed, host);
    SD_TRY_GOTO(rc, o->upload(be, m->params, host, m->nparams * sizeof(float)), fail);
    if (m->nstats) {
        SD_TRY_GOTO(rc, nn_dev_alloc(be, (void **)&m->stats, m->nstats * sizeof(float)), fail);
        for (int i = 0; i < m->nlayers; i++) {   /* running mean 0, running variance 1 */
            const nn_layer *l = &m->layers[i];
            for (size_t j = 0; j < l->s_len; j++) host[l->s_off + j] = j < l->s_len / 2 ? 0.0f : 1.0f;
        }
        SD_TRY_GOTO(rc, o->upload(be, m->stats, host, m->nstats * sizeof(float)), fail);
    }
    free(host);
    *out = m;
    return 0;
fail:
    free(host);
    nn_model_free(m);
    return rc;
}

/* The profile's clock: the back-end's queued work done, then monotonic seconds. */
static double prof_clock(nn_backend *be) {
    if (be->ops->sync) be->ops->sync(be);
    return sd_now();
}

int nn_model_forward(nn_model *m, int train, uint64_t dropout_seed) {
    nn_backend *be = m->be;
    const nn_backend_ops *o = be->ops;
    const float *outs_stack[256];
    unsigned char done_stack[256];
    const float **outs = m->nlayers <= 256 ? outs_stack : malloc(sizeof(float *) * (size_t)m->nlayers);
    unsigned char *done = m->nlayers <= 256 ? done_stack : malloc((size_t)m->nlayers);
    if (!outs || !done) {
        if (outs != outs_stack) free(outs);
        if (done != done_stack) free(done);
        return sd_err(SD_ENOMEM, "out of memory");
    }
    memset(done, 0, (size_t)m->nlayers);
    if (!m->training) train = 0;
    m->infer_last = !train;
    const fuse_chain *chains = m->chains;
    int rc = 0;
    for (int i = 0; i < m->nlayers && rc == 0; i++) {
        nn_layer *l = &m->layers[i];
        if (done[i]) continue;   /* ran inside a fused convolution; outs[i] is set */
        double t0 = m->prof ? prof_clock(be) : 0;
        const float *xs[NN_OP_MAX_INPUTS];
        for (int k = 0; k < l->ninputs; k++) xs[k] = l->inputs[k] < 0 ? m->x : outs[l->inputs[k]];
        const float *x = xs[0];
        const float *W = l->w_len ? m->params + l->w_off : NULL;
        const float *B = l->b_len ? m->params + l->b_off : NULL;
        outs[i] = l->y;
        if (chains && chains[i].last >= 0 && (!train || train_fusable(m, i))) {
            const fuse_chain fc = chains[i];
            const nn_layer *end = &m->layers[fc.last];
            nn_conv_fuse f = {.relu = fc.relu >= 0, .y_fmt = fc.y_fmt, .x_fmt = fc.x_fmt, .train = train};
            if (fc.bn >= 0) {
                const nn_layer *bl = &m->layers[fc.bn];
                f.bn = &bl->op;
                f.gamma = m->params + bl->w_off;
                f.beta = m->params + bl->b_off;
                f.running = m->stats + bl->s_off;
            }
            if (fc.add >= 0) {
                f.res = fc.other < 0 ? m->x : outs[fc.other];
                f.res_fmt = fc.res_fmt;
            }
            rc = o->conv2d_infer(be, &l->op, &f, end->y, x, W, B);
            const int mem[4] = {i, fc.bn, fc.add, fc.relu};
            for (int k = 0; k < 4; k++) if (mem[k] >= 0) { outs[mem[k]] = end->y; done[mem[k]] = 1; }
            if (m->prof) m->prof[2 * i] += prof_clock(be) - t0;
            continue;
        }
        switch (l->op.kind) {
        case NN_OP_DENSE: rc = o->dense_forward(be, &l->op, l->y, x, W, B); break;
        case NN_OP_CONV2D: rc = o->conv2d_forward(be, &l->op, l->y, x, W, B); break;
        case NN_OP_MAXPOOL: rc = o->maxpool_forward(be, &l->op, l->y, train ? l->ws : NULL, x); break;
        case NN_OP_RELU: rc = o->relu_forward(be, &l->op, l->y, x); break;
        case NN_OP_DROPOUT:   /* identity at inference (inverted dropout) */
            if (train && l->op.rate > 0)
                rc = o->dropout_forward(be, &l->op, l->y, l->ws, x, nn_hash64(dropout_seed ^ (uint64_t)(i + 1)));
            else
                outs[i] = x;
            break;
        case NN_OP_FLATTEN: outs[i] = x; break;
        case NN_OP_SOFTMAX_XENT: rc = o->softmax_xent_forward(be, &l->op, m->prob, m->loss, x, m->labels); break;
        case NN_OP_SIGMOID_BCE: rc = o->sigmoid_bce_forward(be, &l->op, m->prob, m->loss, x, m->targets); break;
        case NN_OP_ADD:
            rc = o->add_forward(be, &l->op, l->y, xs[0], xs[1]);
            for (int k = 2; k < l->ninputs && rc == 0; k++) rc = o->add_forward(be, &l->op, l->y, l->y, xs[k]);
            break;
        case NN_OP_CONCAT: rc = o->concat_forward(be, &l->op, l->y, xs); break;
        case NN_OP_BATCHNORM:
            rc = o->batchnorm_forward(be, &l->op, l->y, l->ws, x, W, B, m->stats + l->s_off, train);
            break;
        case NN_OP_AVGPOOL: case NN_OP_GLOBAL_AVGPOOL: rc = o->avgpool_forward(be, &l->op, l->y, x); break;
        case NN_OP_EMBEDDING:
            rc = o->embedding_forward(be, &l->op, l->y, m->ids + l->op.ids_off, W);
            break;
        case NN_OP_REPEAT: rc = o->repeat_forward(be, &l->op, l->y, x); break;
        case NN_OP_GRU: rc = o->gru_forward(be, &l->op, l->y, l->ws, x, W, train); break;
        case NN_OP_LSTM: rc = o->lstm_forward(be, &l->op, l->y, l->ws, x, W, train); break;
        default: rc = sd_err(SD_ERROR, "internal: op %d in forward", (int)l->op.kind);
        }
        if (m->prof) m->prof[2 * i] += prof_clock(be) - t0;
    }
    if (outs != outs_stack) free(outs);
    if (done != done_stack) free(done);
    return rc;
}

/* Where the gradient for input k of layer l goes: the owner's dy if no other layer wrote it yet in this
 * pass, else the scratch buffer (then added in by grad_done). NULL for the model input. */
static float *grad_dest(nn_model *m, const nn_layer *l, int k, int *ow) {
    *ow = owner(m, l->inputs[k]);
    if (*ow < 0) return NULL;
    return m->written[*ow] ? m->scratch : m->layers[*ow].dy;
}
static int grad_done(nn_model *m, const nn_layer *l, int ow) {
    if (ow < 0) return 0;
    int rc = 0;
    if (m->written[ow]) {
        nn_layer *t = &m->layers[ow];
        rc = m->be->ops->add_forward(m->be, &t->op, t->dy, t->dy, m->scratch);
    }
    m->written[ow] = 1;
    (void)l;
    return rc;
}

int nn_model_backward(nn_model *m) {
    nn_backend *be = m->be;
    const nn_backend_ops *o = be->ops;
    int L = m->nlayers;
    if (!m->training) return sd_err(SD_ERROR, "internal: backward on a model built for inference");
    memset(m->written, 0, (size_t)L);
    /* after a training forward pass every layer's y holds its output (flatten aliases its input) */
    for (int i = L - 1; i >= 0; i--) {
        nn_layer *l = &m->layers[i];
        if (is_view(l)) continue;   /* flatten, dropout 0: dy is the input's dy */
        double t0 = m->prof ? prof_clock(be) : 0;
        int in = l->input, ow;
        const float *x = in >= 0 ? m->layers[in].y : m->x;
        float *dW = l->w_len ? m->grads + l->w_off : NULL;
        float *dB = l->b_len ? m->grads + l->b_off : NULL;
        const float *W = l->w_len ? m->params + l->w_off : NULL;
        int rc = 0;
        if (l->op.kind == NN_OP_ADD) {   /* dy to every input */
            for (int k = 0; k < l->ninputs && rc == 0; k++) {
                ow = owner(m, l->inputs[k]);
                if (ow < 0) continue;
                nn_layer *t = &m->layers[ow];
                rc = m->written[ow] ? o->add_forward(be, &t->op, t->dy, t->dy, l->dy)
                                    : o->copy(be, t->dy, l->dy, out_elems(&t->op) * sizeof(float));
                m->written[ow] = 1;
            }
            if (rc) return rc;
            if (m->prof) m->prof[2 * i + 1] += prof_clock(be) - t0;
            continue;
        }
        if (l->op.kind == NN_OP_CONCAT) {   /* one slice at a time (each may need the scratch) */
            for (int k = 0; k < l->ninputs && rc == 0; k++) {
                float *dxs[NN_OP_MAX_INPUTS] = {0};
                dxs[k] = grad_dest(m, l, k, &ow);
                if (!dxs[k]) continue;
                rc = o->concat_backward(be, &l->op, dxs, l->dy);
                if (!rc) rc = grad_done(m, l, ow);
            }
            if (rc) return rc;
            if (m->prof) m->prof[2 * i + 1] += prof_clock(be) - t0;
            continue;
        }
        float *dx = grad_dest(m, l, 0, &ow);
        switch (l->op.kind) {
        case NN_OP_SOFTMAX_XENT: rc = o->softmax_xent_backward(be, &l->op, dx, m->prob, m->labels); break;
        case NN_OP_SIGMOID_BCE: rc = o->sigmoid_bce_backward(be, &l->op, dx, m->prob, m->targets); break;
        case NN_OP_DENSE: rc = o->dense_backward(be, &l->op, dx, dW, dB, l->dy, x, W); break;
        case NN_OP_CONV2D: rc = o->conv2d_backward(be, &l->op, dx, dW, dB, l->dy, x, W); break;
        case NN_OP_MAXPOOL:
            if (in >= 0 && m->relu_pooled && m->relu_pooled[in]) {   /* relu under max pooling (build) */
                const nn_layer *r = &m->layers[in];
                dx = grad_dest(m, r, 0, &ow);
                if (!dx) break;
                rc = o->relu_mask(be, nn_fmt_elems(l->op.fmt_out, l->op.n, l->op.oc, l->op.oh, l->op.ow), l->dy,
                                  l->y);
                if (!rc) rc = o->maxpool_backward(be, &l->op, dx, l->dy, x, l->y, l->ws);
                break;
            }
            if (dx) rc = o->maxpool_backward(be, &l->op, dx, l->dy, x, l->y, l->ws);
            break;
        case NN_OP_RELU:
            if (m->relu_pooled && m->relu_pooled[i]) { dx = NULL; break; }   /* done by the pooling */
            if (dx) rc = o->relu_backward(be, &l->op, dx, l->dy, l->y);
            break;
        case NN_OP_DROPOUT: if (dx) rc = o->dropout_backward(be, &l->op, dx, l->dy, l->ws); break;
        case NN_OP_BATCHNORM: rc = o->batchnorm_backward(be, &l->op, dx, dW, dB, l->dy, x, W, l->ws); break;
        case NN_OP_AVGPOOL: case NN_OP_GLOBAL_AVGPOOL: if (dx) rc = o->avgpool_backward(be, &l->op, dx, l->dy); break;
        case NN_OP_EMBEDDING: rc = o->embedding_backward(be, &l->op, dW, l->dy, m->ids + l->op.ids_off); break;
        case NN_OP_REPEAT: if (dx) rc = o->repeat_backward(be, &l->op, dx, l->dy); break;
        case NN_OP_GRU: rc = o->gru_backward(be, &l->op, dx, dW, l->dy, x, W, l->y, l->ws); break;
        case NN_OP_LSTM: rc = o->lstm_backward(be, &l->op, dx, dW, l->dy, x, W, l->y, l->ws); break;
        default: rc = sd_err(SD_ERROR, "internal: op %d in backward", (int)l->op.kind);
        }
        if (!rc && dx) rc = grad_done(m, l, ow);
        if (rc) return rc;
        if (m->prof) m->prof[2 * i + 1] += prof_clock(be) - t0;
    }
    return 0;
}

int nn_model_step(nn_model *m) {
    nn_backend *be = m->be;
    if (!m->training) return sd_err(SD_ERROR, "internal: optimizer step on a model built for inference");
    m->step++;
    double t0 = m->prof ? prof_clock(be) : 0;
    SD_TRY(be->ops->optimizer_step(be, &m->optim, m->params, m->grads, m->state, m->nparams, m->step));
    SD_TRY(be->ops->zero(be, m->grads, m->nparams * sizeof(float)));
    if (m->prof) m->prof[2 * m->nlayers] += prof_clock(be) - t0;
    return 0;
}

int nn_model_upload_input(nn_model *m, const float *x) {
    nn_backend *be = m->be;
    const size_t n = (size_t)m->batch * m->in_c * m->in_h * m->in_w;
    if (!m->ids) return be->ops->upload(be, m->x, x, n * sizeof(float));
    int32_t *ids = malloc(n * sizeof *ids + 1);
    SD_ALLOC_CHECK(ids);
    for (size_t i = 0; i < n; i++) ids[i] = x[i] >= 0.0f && x[i] < 2147483647.0f ? (int32_t)x[i] : -1;
    int rc = be->ops->upload(be, m->ids, ids, n * sizeof *ids);
    free(ids);
    return rc;
}

int nn_model_download_y(nn_model *m, int i, int grad, float *host) {
    if (i < 0 || i >= m->nlayers) return sd_err(SD_ERROR, "internal: no layer %d", i);
    const nn_layer *l = &m->layers[i];
    const float *src = grad ? l->dy : l->y;
    if (!src) return sd_err(SD_ERROR, "internal: layer %s has no %s buffer", l->name, grad ? "gradient" : "output");
    const nn_op *op = &l->op;
    const int fmt = !grad && m->infer_last && m->inf_blocked && m->inf_blocked[i] ? NN_FMT_NCHW16C : op->fmt_out;
    if (fmt == NN_FMT_NCHW) return m->be->ops->download(m->be, host, src, out_elems(op) * sizeof(float));
    const size_t all = nn_fmt_elems(fmt, op->n, op->oc, op->oh, op->ow);
    float *b = malloc(all * sizeof(float) + 1);
    SD_ALLOC_CHECK(b);
    int rc = m->be->ops->download(m->be, b, src, all * sizeof(float));
    if (rc == 0) {   /* nChw16c -> nchw */
        const size_t C = (size_t)op->oc, HW = (size_t)op->oh * op->ow;
        for (size_t n = 0; n < (size_t)op->n; n++)
            for (size_t ch = 0; ch < C; ch++)
                for (size_t hw = 0; hw < HW; hw++) host[(n * C + ch) * HW + hw] = b[nn_fmt16_at(C, HW, n, ch, hw)];
    }
    free(b);
    return rc;
}
