/* roofline — FLOPs and minimum bytes per layer and phase, and the time floor Σ max(FLOPs/peak, bytes/bw).
 * Bytes are those a layer-by-layer schedule cannot avoid: each kernel reads its inputs and weights once and
 * writes its outputs once (fp32, 4 bytes; token ids int32). A fused schedule can move fewer, so a measured
 * pass may beat this floor (docs/roofline.md). */
#include "nn/roofline.h"

#include "core/err.h"

#include <math.h>
#include <stdlib.h>

#define F32 4.0   /* bytes of a float or an int32 id */

int nn_roofline_winograd(const nn_op *op) {
    return op->kind == NN_OP_CONV2D && op->kh == 3 && op->kw == 3 && op->sh == 1 && op->sw == 1 && op->c >= 16 &&
           op->oc >= 16 && op->oh >= 4 && op->ow >= 4;
}

/* A layer that runs nothing in phase: flatten always; dropout of rate 0 always and every dropout at inference
 * (identity there). */
static int is_noop(const nn_layer *l, nn_phase phase) {
    if (l->op.kind == NN_OP_FLATTEN) return 1;
    return l->op.kind == NN_OP_DROPOUT && (l->op.rate == 0.0f || phase == NN_PHASE_INFER);
}

/* Elements of the layer's inputs and output for the whole batch (op.n: the batch, or batch × folded sequences). */
static double in_elems(const nn_op *op) {
    if (op->kind == NN_OP_ADD || op->kind == NN_OP_CONCAT) {
        double s = 0;
        for (int k = 0; k < op->ninputs; k++) s += (double)op->in_c[k];
        return s * op->n * op->h * op->w;
    }
    return (double)op->n * op->c * op->h * op->w;
}
static double out_elems(const nn_op *op) { return (double)op->n * op->oc * op->oh * op->ow; }

static void loss_cost(const nn_layer *l, nn_layer_cost *o) {
    const nn_op *op = &l->op;
    double x = in_elems(op), n = op->n;
    /* labels: one id per example; BCE targets: one float per logit */
    double t = op->kind == NN_OP_SIGMOID_BCE ? x : n;
    o->fwd.bytes = F32 * (x + t + n);          /* logits, labels -> per-example loss */
    o->bwd.bytes = F32 * (x + t + x);          /* logits, labels -> dlogits */
}

void nn_roofline_layer(const nn_layer *ls, int L, int i, nn_phase phase, nn_layer_cost *o) {
    const nn_layer *l = &ls[i];
    const nn_op *op = &l->op;
    const int train = phase == NN_PHASE_TRAIN;
    *o = (nn_layer_cost){0};
    (void)L;
    if (is_noop(l, phase)) return;
    o->winograd = nn_roofline_winograd(op);
    const double batch = op->n / (op->seqs > 1 ? op->seqs : 1);
    const int has_dx = nn_layer_has_dx(ls, i);
    o->fwd.flops = l->flops * batch;
    if (train) o->bwd.flops = nn_layer_bwd_flops(ls, i) * batch;   /* as nn_model_flops counts it */
    if (op->kind == NN_OP_SOFTMAX_XENT || op->kind == NN_OP_SIGMOID_BCE) {
        loss_cost(l, o);
        if (!train) o->bwd.bytes = 0;
        return;
    }
    const double x = in_elems(op), y = out_elems(op);
    double p = (double)(l->w_len + l->b_len), s = (double)l->s_len;
    if (op->kind == NN_OP_EMBEDDING) p = fmin(p, y);   /* only the rows the ids pick */
    o->fwd.bytes = F32 * (x + y + p + s);              /* inputs, weights (and batchnorm statistics) -> output */
    if (!train) return;
    if (l->w_len + l->b_len) {
        /* dy and x (for the weight gradient); with dx also W read and dx written; dW (and dB) written */
        o->bwd.bytes = F32 * (y + x + p + (has_dx ? p + x : 0));
        return;
    }
    if (!has_dx) { o->bwd.flops = 0; return; }        /* nothing to compute: no data gradient, no weights */
    /* dy -> dx; relu and max pooling also read the forward tensor they decide by */
    double fwd_read = op->kind == NN_OP_RELU ? y : op->kind == NN_OP_MAXPOOL ? x : 0;
    o->bwd.bytes = F32 * (y + x + fwd_read);
}

nn_cost nn_roofline_optim(size_t nparams, nn_optim_kind kind) {
    double k = nn_optim_state_per_param(kind);
    /* read p, g, state; write p, state; zero g */
    return (nn_cost){.flops = 0, .bytes = F32 * (double)nparams * (3.0 + 2.0 * k)};
}

static int known(double v) { return v > 0 && isfinite(v); }

double nn_roofline_time(const nn_cost *c, const nn_machine *mc, int winograd, int backward, double *compute_s,
                        double *memory_s) {
    double rate = mc->peak, wino = backward ? mc->wino_bwd : mc->wino_fwd;
    if (winograd && known(wino) && (!known(rate) || wino > rate)) rate = wino;
    double bw = mc->bandwidth;
    if (known(mc->cache_bandwidth) && known(mc->cache_bytes) && c->bytes <= mc->cache_bytes &&
        (!known(bw) || mc->cache_bandwidth > bw))
        bw = mc->cache_bandwidth;
    double tc = known(rate) ? c->flops / rate : 0, tm = known(bw) ? c->bytes / bw : 0;
    if (compute_s) *compute_s = tc;
    if (memory_s) *memory_s = tm;
    return tc > tm ? tc : tm;
}

static void add_kernel(nn_roofline *r, const nn_cost *c, const nn_machine *mc, int winograd, int backward) {
    double tc, tm;
    r->floor_s += nn_roofline_time(c, mc, winograd, backward, &tc, &tm);
    r->flops += c->flops;
    r->bytes += c->bytes;
    r->compute_s += tc;
    r->memory_s += tm;
}

void nn_roofline_phase(const nn_layer *ls, int L, size_t nparams, nn_optim_kind optim, nn_phase phase,
                       const nn_machine *mc, nn_roofline *r) {
    *r = (nn_roofline){0};
    for (int i = 0; i < L; i++) {
        nn_layer_cost lc;
        nn_roofline_layer(ls, L, i, phase, &lc);
        add_kernel(r, &lc.fwd, mc, lc.winograd, 0);
        if (phase == NN_PHASE_TRAIN) add_kernel(r, &lc.bwd, mc, lc.winograd, 1);
    }
    if (phase == NN_PHASE_TRAIN) {
        nn_cost oc = nn_roofline_optim(nparams, optim);
        add_kernel(r, &oc, mc, 0, 0);
    }
}

int nn_roofline_workload(const sd_workload *w, int batch, nn_phase phase, const nn_machine *mc, nn_roofline *out) {
    if (phase == NN_PHASE_TRAIN && (w->mode == SD_MODE_INFERENCE || w->loss == NN_LOSS_NONE))
        return sd_err(SD_EINPUT, "%s is an inference workload: it has no training step", w->name);
    nn_layer *ls = NULL;
    size_t np = 0;
    int L = nn_model_plan(w, batch, &ls, &np);
    if (L < 0) return L;
    nn_roofline_phase(ls, L, np, w->optim.kind, phase, mc, out);
    free(ls);
    return 0;
}
