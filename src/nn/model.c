/* model — the shared graph: shape inference, parameter and FLOP counts, the layer table, building a
 * model on a back-end and running forward / backward / optimizer steps through the back-end's table.
 * Knows nothing about any particular back-end. */
#include "nn/model.h"
#include "nn/kernels.h"
#include "core/err.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *nn_op_name(nn_op_kind k) {
    static const char *const names[NN_OP_COUNT] = {"dense", "conv2d", "maxpool", "relu", "dropout", "flatten",
                                                   "softmax_xent", "embedding", "gru", "lstm"};
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

int nn_model_plan(const sd_workload *w, int batch, nn_layer **layers_out, size_t *nparams_out) {
    *layers_out = NULL;
    int L = w->nlayers + 1;   /* + the loss */
    nn_layer *ls = calloc((size_t)L, sizeof *ls);
    SD_ALLOC_CHECK(ls);
    int c = w->in_c, h = w->in_h, wd = w->in_w;
    size_t off = 0;
    int counts[NN_OP_COUNT] = {0};
    for (int i = 0; i < w->nlayers; i++) {
        const nn_layer_spec *s = &w->layers[i];
        nn_layer *l = &ls[i];
        nn_op *op = &l->op;
        op->kind = s->kind;
        op->n = batch;
        op->c = c; op->h = h; op->w = wd;
        l->input = i - 1;
        snprintf(l->name, sizeof l->name, "%s_%d", nn_op_name(s->kind), ++counts[s->kind]);
        double out_elems;
        switch (s->kind) {
        case NN_OP_DENSE:
            if (h != 1 || wd != 1) {
                free(ls);
                return spec_err(w, s, "dense layer after a %dx%dx%d feature map needs a flatten layer first", c, h, wd);
            }
            op->oc = s->units; op->oh = op->ow = 1;
            op->has_bias = s->bias;
            l->w_len = (size_t)op->oc * c;
            l->flops = 2.0 * c * op->oc;
            break;
        case NN_OP_CONV2D:
            op->kh = s->kh; op->kw = s->kw; op->sh = s->sh; op->sw = s->sw; op->ph = s->ph; op->pw = s->pw;
            op->oc = s->units;
            op->oh = (h + 2 * s->ph - s->kh) / s->sh + 1;
            op->ow = (wd + 2 * s->pw - s->kw) / s->sw + 1;
            if (h + 2 * s->ph < s->kh || wd + 2 * s->pw < s->kw) {
                free(ls);
                return spec_err(w, s, "conv2d kernel %dx%d is larger than the padded input %dx%d", s->kh, s->kw,
                                h + 2 * s->ph, wd + 2 * s->pw);
            }
            op->has_bias = s->bias;
            l->w_len = (size_t)op->oc * c * s->kh * s->kw;
            l->flops = 2.0 * c * s->kh * s->kw * op->oc * op->oh * op->ow;
            break;
        case NN_OP_MAXPOOL:
            op->kh = s->kh; op->kw = s->kw; op->sh = s->sh; op->sw = s->sw; op->ph = s->ph; op->pw = s->pw;
            if (h + 2 * s->ph < s->kh || wd + 2 * s->pw < s->kw) {
                free(ls);
                return spec_err(w, s, "maxpool window %dx%d is larger than the padded input %dx%d", s->kh, s->kw,
                                h + 2 * s->ph, wd + 2 * s->pw);
            }
            op->oc = c;
            op->oh = (h + 2 * s->ph - s->kh) / s->sh + 1;
            op->ow = (wd + 2 * s->pw - s->kw) / s->sw + 1;
            l->flops = (double)c * op->oh * op->ow * s->kh * s->kw;
            break;
        case NN_OP_FLATTEN:
            op->oc = c * h * wd; op->oh = op->ow = 1;
            break;
        case NN_OP_DROPOUT:
            op->rate = s->rate;
            /* fall through */
        default: /* relu, dropout: same shape */
            op->oc = c; op->oh = h; op->ow = wd;
            l->flops = (double)c * h * wd;
            break;
        }
        out_elems = (double)op->oc * op->oh * op->ow;
        if (out_elems > 1e9) {
            free(ls);
            return spec_err(w, s, "%s output of %.0f elements per example is too large", nn_op_name(s->kind), out_elems);
        }
        if (l->w_len) { l->w_off = off; off += l->w_len; }
        if (op->has_bias) { l->b_len = (size_t)op->oc; l->b_off = off; off += l->b_len; }
        c = op->oc; h = op->oh; wd = op->ow;
    }
    const nn_layer_spec *last = &w->layers[w->nlayers - 1];
    if (h != 1 || wd != 1 || c != w->classes) {
        free(ls);
        return spec_err(w, last, "the last layer must output one value per class (%d); this %s outputs %ld",
                        w->classes, nn_op_name(last->kind), (long)c * h * wd);
    }
    nn_layer *loss = &ls[L - 1];
    loss->op.kind = NN_OP_SOFTMAX_XENT;
    loss->op.n = batch;
    loss->op.c = loss->op.oc = w->classes;
    loss->op.h = loss->op.w = loss->op.oh = loss->op.ow = 1;
    loss->input = L - 2;
    loss->flops = 4.0 * w->classes;
    snprintf(loss->name, sizeof loss->name, "softmax_xent");
    *layers_out = ls;
    *nparams_out = off;
    return L;
}

void nn_model_flops(const nn_layer *ls, int L, double *fwd, double *train) {
    double f = 0, t = 0;
    for (int i = 0; i < L; i++) {
        const nn_layer *l = &ls[i];
        int weighted = l->op.kind == NN_OP_DENSE || l->op.kind == NN_OP_CONV2D;
        f += l->flops;
        t += l->flops * (weighted ? (l->input < 0 ? 2.0 : 3.0) : 2.0);
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
        if (l->op.oh == 1 && l->op.ow == 1) snprintf(shape, sizeof shape, "%d", l->op.oc);
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

int nn_model_init_params(const nn_layer *ls, int L, size_t nparams, nn_init_kind winit, nn_init_kind binit,
                         uint64_t seed, float *out) {
    memset(out, 0, sizeof(float) * nparams);
    for (int i = 0; i < L; i++) {
        const nn_layer *l = &ls[i];
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

/* A view shares its input's buffers: flatten, and dropout with rate 0. */
static int is_view(const nn_layer *l) {
    return l->op.kind == NN_OP_FLATTEN || (l->op.kind == NN_OP_DROPOUT && l->op.rate == 0.0f);
}

void nn_model_free(nn_model *m) {
    if (!m) return;
    nn_backend *be = m->be;
    for (int i = 0; i < m->nlayers; i++) {
        nn_layer *l = &m->layers[i];
        if (!is_view(l)) {
            nn_dev_free(be, l->y, out_elems(&l->op) * sizeof(float));
            nn_dev_free(be, l->dy, out_elems(&l->op) * sizeof(float));
        }
        nn_dev_free(be, l->ws, l->ws_bytes);
        if (be->ops->release && !is_view(l)) be->ops->release(be, &l->op);
    }
    nn_dev_free(be, m->params, m->nparams * sizeof(float));
    nn_dev_free(be, m->grads, m->nparams * sizeof(float));
    nn_dev_free(be, m->state, m->nstate * sizeof(float));
    nn_dev_free(be, m->x, (size_t)m->batch * m->in_c * m->in_h * m->in_w * sizeof(float));
    nn_dev_free(be, m->labels, (size_t)m->batch * sizeof(int32_t));
    nn_dev_free(be, m->prob, (size_t)m->batch * m->classes * sizeof(float));
    nn_dev_free(be, m->loss, (size_t)m->batch * sizeof(float));
    free(m->layers);
    free(m);
}

static int needs(const nn_backend *be, const void *fn, const nn_layer *l) {
    if (fn) return 0;
    return sd_err(SD_EUNSUPPORTED, "back-end %s does not support %s (layer %s)", be->name, nn_op_name(l->op.kind),
                  l->name);
}

int nn_model_build(nn_model **out, const sd_workload *w, nn_backend *be, int batch, uint64_t seed) {
    *out = NULL;
    nn_model *m = calloc(1, sizeof *m);
    SD_ALLOC_CHECK(m);
    m->be = be;
    m->batch = batch;
    m->in_c = w->in_c; m->in_h = w->in_h; m->in_w = w->in_w; m->classes = w->classes;
    m->optim = w->optim;
    int rc = nn_model_plan(w, batch, &m->layers, &m->nparams);
    if (rc < 0) { free(m); return rc; }
    m->nlayers = rc;
    m->nstate = m->nparams * (size_t)nn_optim_state_per_param(w->optim.kind);
    const nn_backend_ops *o = be->ops;
    float *host = NULL;
    size_t in_bytes = (size_t)batch * w->in_c * w->in_h * w->in_w * sizeof(float);
    SD_TRY_GOTO(rc, nn_dev_alloc(be, (void **)&m->x, in_bytes), fail);
    for (int i = 0; i < m->nlayers && rc == 0; i++) {
        nn_layer *l = &m->layers[i];
        m->flops_fwd += l->flops;
        switch (l->op.kind) {
        case NN_OP_DENSE: rc = needs(be, (void *)o->dense_forward, l); if (!rc) rc = needs(be, (void *)o->dense_backward, l); break;
        case NN_OP_CONV2D: rc = needs(be, (void *)o->conv2d_forward, l); if (!rc) rc = needs(be, (void *)o->conv2d_backward, l); break;
        case NN_OP_MAXPOOL: rc = needs(be, (void *)o->maxpool_forward, l); if (!rc) rc = needs(be, (void *)o->maxpool_backward, l); break;
        case NN_OP_RELU: rc = needs(be, (void *)o->relu_forward, l); if (!rc) rc = needs(be, (void *)o->relu_backward, l); break;
        case NN_OP_DROPOUT: rc = needs(be, (void *)o->dropout_forward, l); if (!rc) rc = needs(be, (void *)o->dropout_backward, l); break;
        case NN_OP_SOFTMAX_XENT: rc = needs(be, (void *)o->softmax_xent_forward, l); if (!rc) rc = needs(be, (void *)o->softmax_xent_backward, l); break;
        default: break;
        }
        if (rc) break;
        if (is_view(l)) {   /* same buffers as the input; no primitive */
            l->y = l->input >= 0 ? m->layers[l->input].y : m->x;
            l->dy = l->input >= 0 ? m->layers[l->input].dy : NULL;
            continue;
        }
        if (o->prepare && (rc = o->prepare(be, &l->op)) != 0) break;
        if (l->op.kind != NN_OP_SOFTMAX_XENT) {
            size_t bytes = out_elems(&l->op) * sizeof(float);
            rc = nn_dev_alloc(be, (void **)&l->y, bytes);
            if (!rc) rc = nn_dev_alloc(be, (void **)&l->dy, bytes);
        }
        if (!rc && o->workspace_size && (l->ws_bytes = o->workspace_size(be, &l->op)) > 0)
            rc = nn_dev_alloc(be, &l->ws, l->ws_bytes);
    }
    if (rc) goto fail;
    SD_TRY_GOTO(rc, nn_dev_alloc(be, (void **)&m->params, m->nparams * sizeof(float)), fail);
    SD_TRY_GOTO(rc, nn_dev_alloc(be, (void **)&m->grads, m->nparams * sizeof(float)), fail);
    SD_TRY_GOTO(rc, nn_dev_alloc(be, (void **)&m->state, m->nstate * sizeof(float)), fail);
    SD_TRY_GOTO(rc, nn_dev_alloc(be, (void **)&m->labels, (size_t)batch * sizeof(int32_t)), fail);
    SD_TRY_GOTO(rc, nn_dev_alloc(be, (void **)&m->prob, (size_t)batch * w->classes * sizeof(float)), fail);
    SD_TRY_GOTO(rc, nn_dev_alloc(be, (void **)&m->loss, (size_t)batch * sizeof(float)), fail);
    SD_TRY_GOTO(rc, o->zero(be, m->grads, m->nparams * sizeof(float)), fail);
    SD_TRY_GOTO(rc, o->zero(be, m->state, m->nstate * sizeof(float)), fail);
    host = malloc(m->nparams * sizeof(float) + 1);
    if (!host) { rc = sd_err(SD_ENOMEM, "out of memory for %zu parameters", m->nparams); goto fail; }
    nn_model_init_params(m->layers, m->nlayers, m->nparams, w->weight_init, w->bias_init, seed, host);
    SD_TRY_GOTO(rc, o->upload(be, m->params, host, m->nparams * sizeof(float)), fail);
    free(host);
    *out = m;
    return 0;
fail:
    free(host);
    nn_model_free(m);
    return rc;
}

/* The buffer consumers of layer i read in this pass (a view for flatten and eval-mode dropout). */
static const float *act(const nn_model *m, int i, const float **outs) {
    return i < 0 ? m->x : outs[i];
}

int nn_model_forward(nn_model *m, int train, uint64_t dropout_seed) {
    nn_backend *be = m->be;
    const nn_backend_ops *o = be->ops;
    const float *outs_stack[256];
    const float **outs = m->nlayers <= 256 ? outs_stack : malloc(sizeof(float *) * (size_t)m->nlayers);
    SD_ALLOC_CHECK(outs);
    int rc = 0;
    for (int i = 0; i < m->nlayers && rc == 0; i++) {
        nn_layer *l = &m->layers[i];
        const float *x = act(m, l->input, outs);
        const float *W = l->w_len ? m->params + l->w_off : NULL;
        const float *B = l->b_len ? m->params + l->b_off : NULL;
        outs[i] = l->y;
        switch (l->op.kind) {
        case NN_OP_DENSE: rc = o->dense_forward(be, &l->op, l->y, x, W, B); break;
        case NN_OP_CONV2D: rc = o->conv2d_forward(be, &l->op, l->y, x, W, B); break;
        case NN_OP_MAXPOOL: rc = o->maxpool_forward(be, &l->op, l->y, l->ws, x); break;
        case NN_OP_RELU: rc = o->relu_forward(be, &l->op, l->y, x); break;
        case NN_OP_DROPOUT:   /* identity at inference (inverted dropout) */
            if (train && l->op.rate > 0)
                rc = o->dropout_forward(be, &l->op, l->y, l->ws, x, nn_hash64(dropout_seed ^ (uint64_t)(i + 1)));
            else
                outs[i] = x;
            break;
        case NN_OP_FLATTEN: outs[i] = x; break;
        case NN_OP_SOFTMAX_XENT: rc = o->softmax_xent_forward(be, &l->op, m->prob, m->loss, x, m->labels); break;
        default: rc = sd_err(SD_ERROR, "internal: op %d in forward", (int)l->op.kind);
        }
    }
    if (outs != outs_stack) free(outs);
    return rc;
}

int nn_model_backward(nn_model *m) {
    nn_backend *be = m->be;
    const nn_backend_ops *o = be->ops;
    int L = m->nlayers;
    /* after a training forward pass every layer's y holds its output (flatten aliases its input) */
    for (int i = L - 1; i >= 0; i--) {
        nn_layer *l = &m->layers[i];
        int in = l->input;
        float *dx = in >= 0 ? m->layers[in].dy : NULL;
        const float *x = in >= 0 ? m->layers[in].y : m->x;
        float *dW = l->w_len ? m->grads + l->w_off : NULL;
        float *dB = l->b_len ? m->grads + l->b_off : NULL;
        const float *W = l->w_len ? m->params + l->w_off : NULL;
        int rc = 0;
        switch (l->op.kind) {
        case NN_OP_SOFTMAX_XENT: rc = o->softmax_xent_backward(be, &l->op, dx, m->prob, m->labels); break;
        case NN_OP_DENSE: rc = o->dense_backward(be, &l->op, dx, dW, dB, l->dy, x, W); break;
        case NN_OP_CONV2D: rc = o->conv2d_backward(be, &l->op, dx, dW, dB, l->dy, x, W); break;
        case NN_OP_MAXPOOL: if (dx) rc = o->maxpool_backward(be, &l->op, dx, l->dy, x, l->y, l->ws); break;
        case NN_OP_RELU: if (dx) rc = o->relu_backward(be, &l->op, dx, l->dy, l->y); break;
        case NN_OP_DROPOUT: if (dx && !is_view(l)) rc = o->dropout_backward(be, &l->op, dx, l->dy, l->ws); break;
        case NN_OP_FLATTEN: break;   /* a view: dy is the input's dy */
        default: rc = sd_err(SD_ERROR, "internal: op %d in backward", (int)l->op.kind);
        }
        if (rc) return rc;
    }
    return 0;
}

int nn_model_step(nn_model *m) {
    nn_backend *be = m->be;
    m->step++;
    SD_TRY(be->ops->optimizer_step(be, &m->optim, m->params, m->grads, m->state, m->nparams, m->step));
    return be->ops->zero(be, m->grads, m->nparams * sizeof(float));
}
