/* run — a built model's passes through the back-end's table: forward (fused chains where nn/fuse.c found
 * them), backward with gradients summed where a tensor has several readers, the optimizer step, and moving
 * the input and a layer's output between host and device. */
#include "nn/model_impl.h"
#include "nn/kernels.h"
#include "core/clock.h"
#include "core/err.h"

#include <stdlib.h>
#include <string.h>

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
    const nn_fuse_chain *chains = m->chains;
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
        if (chains && chains[i].last >= 0 && (!train || nn_fuse_train_ok(m, i))) {
            const nn_fuse_chain fc = chains[i];
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
        if (l->op.kind == NN_OP_BATCHNORM && nn_bn_fused(m, i)) {   /* with its relu, or on a slab view */
            const int r = m->bn_relu ? m->bn_relu[i] : -1;
            const nn_bn_fuse f = {.relu = r >= 0};
            float *y = r >= 0 ? m->layers[r].y : l->y;
            rc = o->bn_fused_forward(be, &l->op, &f, y, l->ws, x, W, B, m->stats + l->s_off, train);
            if (r >= 0) { outs[r] = outs[i] = y; done[r] = 1; }
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
    *ow = nn_owner_of(m->layers, l->inputs[k]);
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
        if (nn_is_view(l)) continue;   /* flatten, dropout 0: dy is the input's dy */
        double t0 = m->prof ? prof_clock(be) : 0;
        int in = l->input, ow;
        const float *x = in >= 0 ? m->layers[in].y : m->x;
        float *dW = l->w_len ? m->grads + l->w_off : NULL;
        float *dB = l->b_len ? m->grads + l->b_off : NULL;
        const float *W = l->w_len ? m->params + l->w_off : NULL;
        int rc = 0;
        if (l->op.kind == NN_OP_ADD) {   /* dy to every input */
            for (int k = 0; k < l->ninputs && rc == 0; k++) {
                ow = nn_owner_of(m->layers, l->inputs[k]);
                if (ow < 0) continue;
                nn_layer *t = &m->layers[ow];
                rc = m->written[ow] ? o->add_forward(be, &t->op, t->dy, t->dy, l->dy)
                                    : o->copy(be, t->dy, l->dy, nn_out_elems(&t->op) * sizeof(float));
                m->written[ow] = 1;
            }
            if (rc) return rc;
            if (m->prof) m->prof[2 * i + 1] += prof_clock(be) - t0;
            continue;
        }
        if (l->op.kind == NN_OP_CONCAT) {   /* one slice at a time (each may need the scratch) */
            if (m->slab && m->slab[i] >= 0 && !m->written[m->slab[i]])   /* its readers wrote all of the slab's */
                return sd_err(SD_ERROR, "internal: concat slab of %s without a gradient", l->name);
            for (int k = l->op.cat_inplace ? 1 : 0; k < l->ninputs && rc == 0; k++) {   /* in place: nothing */
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
        if (l->op.kind == NN_OP_BATCHNORM && nn_bn_fused(m, i)) {   /* adds into its input's gradient, no scratch */
            const int r = m->bn_relu ? m->bn_relu[i] : -1;
            ow = nn_owner_of(m->layers, in);
            if (ow >= 0 && m->slab && m->slab[ow] >= 0) ow = m->slab[ow];   /* a slab view: the slab's gradient */
            const nn_bn_fuse f = {.relu = r >= 0, .dx_acc = ow >= 0 && m->written[ow]};
            const nn_layer *yl = r >= 0 ? &m->layers[r] : l;
            rc = o->bn_fused_backward(be, &l->op, &f, ow >= 0 ? m->layers[ow].dy : NULL, dW, dB, yl->dy, x, yl->y, W,
                                      l->ws);
            if (rc) return rc;
            if (ow >= 0) m->written[ow] = 1;
            if (m->prof) m->prof[2 * i + 1] += prof_clock(be) - t0;
            continue;
        }
        float *dx = grad_dest(m, l, 0, &ow);
        switch (l->op.kind) {
        case NN_OP_SOFTMAX_XENT: rc = o->softmax_xent_backward(be, &l->op, dx, m->prob, m->labels); break;
        case NN_OP_SIGMOID_BCE: rc = o->sigmoid_bce_backward(be, &l->op, dx, m->prob, m->targets); break;
        case NN_OP_DENSE: rc = o->dense_backward(be, &l->op, dx, dW, dB, l->dy, x, W); break;
        case NN_OP_CONV2D:
            if (in >= 0 && m->relu_folded && m->relu_folded[in]) {   /* relu under a convolution (nn/fuse.c) */
                dx = grad_dest(m, &m->layers[in], 0, &ow);
                rc = o->conv2d_backward_relu(be, &l->op, dx, dW, dB, l->dy, x, W);
                break;
            }
            rc = o->conv2d_backward(be, &l->op, dx, dW, dB, l->dy, x, W);
            break;
        case NN_OP_MAXPOOL:
            if (in >= 0 && m->relu_folded && m->relu_folded[in]) {   /* relu under max pooling (build) */
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
            if (m->relu_folded && m->relu_folded[i]) { dx = NULL; break; }   /* done by its reader */
            if (in >= 0 && m->bn_relu && m->bn_relu[in] == i) { dx = NULL; break; }   /* by its batchnorm */
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
    const int fmt = !grad && m->infer_last && m->inf_blocked && m->inf_blocked[i] ? m->blk_fmt : op->fmt_out;
    if (fmt == NN_FMT_NCHW) return m->be->ops->download(m->be, host, src, nn_out_elems(op) * sizeof(float));
    const size_t CS = op->out_cs ? (size_t)op->out_cs : (size_t)op->oc;   /* a slab view: its first oc channels */
    const size_t all = nn_fmt_elems(fmt, op->n, (int)CS, op->oh, op->ow);
    float *b = malloc(all * sizeof(float) + 1);
    SD_ALLOC_CHECK(b);
    int rc = m->be->ops->download(m->be, b, src, all * sizeof(float));
    if (rc == 0) {   /* blocked -> nchw */
        const size_t C = (size_t)op->oc, HW = (size_t)op->oh * op->ow;
        for (size_t n = 0; n < (size_t)op->n; n++)
            for (size_t ch = 0; ch < C; ch++)
                for (size_t hw = 0; hw < HW; hw++) host[(n * C + ch) * HW + hw] = b[nn_fmt_at(fmt, CS, HW, n, ch, hw)];
    }
    free(b);
    return rc;
}
