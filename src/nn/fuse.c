/* fuse — how a built model runs beyond one primitive per layer: the activation layouts (blocked chains where
 * the back-end takes them), the convolutions fused with what follows them at inference, a relu whose backward
 * its max pooling does, a batchnorm and its relu as one call, and chains of concatenations sharing one buffer.
 * Decided once, by nn_model_build; nn/memory.c and nn/run.c follow the decisions. */
#include "nn/model_impl.h"
#include "core/err.h"

#include <stdlib.h>

/* ---- layouts (nn/backend.h, nn_fmt) ----------------------------------------------------------------------
 * The model's blocked layout (m->blk_fmt) is the first of NCHW16C, NCHW8C and NHWC the back-end takes for any of
 * its layers. A layer writes it when the back-end can run it so and so can every layer reading its output; an
 * element-wise layer (relu, dropout, batchnorm) and an add have their inputs' layout (the back-end adds flat
 * buffers). No view, loss or model output is blocked. In a training model a tensor read by several layers has
 * its readers' gradients summed into its own with flat adds, so it is blocked only with no padded channels.
 * Found as a fixpoint: every candidate first, then what breaks a rule is dropped until nothing changes. The
 * back-end reorders where a layer's input and output layouts differ. */
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

static const int blk_cand[] = {NN_FMT_NCHW16C, NN_FMT_NCHW8C, NN_FMT_NHWC};   /* the preferred first */
#define N_BLK_CAND (sizeof blk_cand / sizeof blk_cand[0])

static int blocked_allowed(nn_backend *be) {   /* SD_LAYOUT_NCHW: for comparisons */
    return be->ops->layout_ok && !getenv("SD_LAYOUT_NCHW");
}

int nn_layout_blocked(nn_backend *be, const nn_op *op) {
    for (size_t f = 0; f < N_BLK_CAND && blocked_allowed(be); f++)
        if (be->ops->layout_ok(be, op, blk_cand[f])) return blk_cand[f];
    return NN_FMT_NCHW;
}

static int blocked_fmt(const nn_model *m) {
    for (size_t f = 0; f < N_BLK_CAND; f++)
        for (int t = 0; t < m->nlayers; t++)
            if (!nn_is_view(&m->layers[t]) && !nn_is_loss(&m->layers[t]) &&
                m->be->ops->layout_ok(m->be, &m->layers[t].op, blk_cand[f]))
                return blk_cand[f];
    return NN_FMT_NCHW;
}

int nn_fuse_layouts(nn_model *m) {
    nn_backend *be = m->be;
    m->blk_fmt = NN_FMT_NCHW;
    if (!blocked_allowed(be)) return 0;
    const int L = m->nlayers, F = m->blk_fmt = blocked_fmt(m);
    if (F == NN_FMT_NCHW) return 0;
    unsigned char *b = malloc((size_t)L);
    SD_ALLOC_CHECK(b);
    for (int t = 0; t < L; t++) {
        const nn_layer *l = &m->layers[t];
        b[t] = t < L - 1 && !nn_is_view(l) && !nn_is_loss(l) && be->ops->layout_ok(be, &l->op, F);
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (int t = 0; t < L; t++) {
            if (!b[t]) continue;
            const nn_layer *l = &m->layers[t];
            int ok = 1, readers = 0;
            if (elementwise(l) || l->op.kind == NN_OP_ADD)   /* the same layout as its inputs */
                for (int k = 0; k < l->ninputs; k++) ok &= l->inputs[k] >= 0 && b[l->inputs[k]];
            for (int j = t + 1; j < L && ok; j++) {
                const nn_layer *c = &m->layers[j];
                for (int k = 0; k < c->ninputs; k++) {
                    if (c->inputs[k] != t) continue;
                    readers++;
                    if (nn_is_view(c) || nn_is_loss(c) || !be->ops->layout_ok(be, &c->op, F)) ok = 0;
                    if (!b[j] && (elementwise(c) || c->op.kind == NN_OP_ADD)) ok = 0;
                }
            }
            /* its gradient is summed flat: no padded channels */
            if (m->training && readers > 1 && (size_t)l->op.oc % nn_fmt_block(F, (size_t)l->op.oc)) ok = 0;
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

/* ---- inference fusion ------------------------------------------------------------------------------------
 * At inference a convolution runs with what follows it (the back-end's conv2d_infer): batch norm on its
 * running statistics, a residual add whose other input is computed before the convolution, relu, each the
 * only reader of the one before. The result goes straight into the chain's last layer's buffer; the layers in
 * between are not run, so at inference their own buffers are not written (nn_model_download_y of them is
 * stale). A training pass fuses only a convolution and its relu (train_fusable). The chains are found once,
 * by nn_model_build; SD_NO_FUSE=1 set before it runs every layer apart (comparisons). */
/* The chain that starts at layer i: 1 and *fc if i is a convolution, else 0 (fc->last = -1). */
static int fuse_chain_at(const nn_model *m, int i, nn_fuse_chain *fc) {
    *fc = (nn_fuse_chain){.bn = -1, .add = -1, .relu = -1, .last = -1, .other = -1};
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
int nn_fuse_train_ok(const nn_model *m, int i) {
    const nn_fuse_chain *fc = &m->chains[i];
    return fc->bn < 0 && fc->add < 0 && fc->relu >= 0 && fc->x_fmt == m->layers[i].op.fmt_in &&
           fc->y_fmt == m->layers[fc->last].op.fmt_out;
}

/* A training model's layouts serve its backward pass too: a tensor read by several layers (a residual block's
 * output) stays NCHW, and at inference each fused convolution reading it reordered it in, after the one
 * writing it had reordered it out. At inference such a chain's output is written in m->blk_fmt instead when
 * every reader is a fused convolution (its input) or a fused residual add (its other input): those take
 * either layout. m->inf_blocked marks the layers whose buffer holds m->blk_fmt after an inference pass. */
static int inference_layouts(nn_model *m) {
    nn_backend *be = m->be;
    const int L = m->nlayers, F = m->blk_fmt;
    if (!m->chains || !m->training || F == NN_FMT_NCHW) return 0;   /* blocked: the back-end has layout_ok */
    m->inf_blocked = calloc((size_t)L, 1);
    SD_ALLOC_CHECK(m->inf_blocked);
    for (int i = 0; i < L; i++) {
        nn_fuse_chain *fc = &m->chains[i];
        if (fc->last < 0 || fc->y_fmt == F || fc->last == L - 1) continue;
        const nn_layer *e = &m->layers[fc->last];
        if ((size_t)e->op.oc % nn_fmt_block(F, (size_t)e->op.oc) || !be->ops->layout_ok(be, &m->layers[i].op, F))
            continue;   /* no padded channels */
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
        nn_fuse_chain *fc = &m->chains[i];
        if (fc->last < 0) continue;
        const int in = m->layers[i].inputs[0];
        if (in >= 0 && m->inf_blocked[in]) fc->x_fmt = F;
        if (fc->other >= 0 && m->inf_blocked[fc->other]) fc->res_fmt = F;
    }
    return 0;
}

int nn_fuse_chains(nn_model *m) {
    if (!m->be->ops->conv2d_infer || getenv("SD_NO_FUSE")) return 0;
    m->chains = malloc(sizeof *m->chains * (size_t)m->nlayers);
    SD_ALLOC_CHECK(m->chains);
    for (int i = 0; i < m->nlayers; i++) fuse_chain_at(m, i, &m->chains[i]);
    return inference_layouts(m);
}

/* A relu whose only reader does its backward (training; SD_NO_FUSE=1 turns it off). Under max pooling (when the
 * back-end has relu_mask): on the pooling's output gradient, a quarter of the size, before the pooling scatters it
 * (the pooled value is the relu output at the argmax, so the mask is the same there). Under a convolution (when
 * it has conv2d_backward_relu): on the gradient the convolution's backward-data writes, as it writes it (the
 * convolution's input is the relu's output, the mask). Either way the reader's dx goes to the relu's input and the
 * relu's backward does not run. */
int nn_fuse_relu_fold(nn_model *m) {
    const nn_backend_ops *o = m->be->ops;
    if (!m->training || (!o->relu_mask && !o->conv2d_backward_relu) || getenv("SD_NO_FUSE")) return 0;
    m->relu_folded = calloc((size_t)m->nlayers, 1);
    SD_ALLOC_CHECK(m->relu_folded);
    for (int p = 0; p < m->nlayers; p++) {
        const nn_layer *pl = &m->layers[p];
        const int pool = pl->op.kind == NN_OP_MAXPOOL && o->relu_mask,
                  conv = pl->op.kind == NN_OP_CONV2D && o->conv2d_backward_relu;
        if ((!pool && !conv) || pl->inputs[0] < 0) continue;
        const int r = pl->inputs[0];
        const nn_layer *rl = &m->layers[r];
        const int bn_fused = m->bn_relu && rl->input >= 0 && m->bn_relu[rl->input] == r;
        if (rl->op.kind == NN_OP_RELU && m->consumers[r] == 1 && !bn_fused &&   /* p, which reads it directly */
            rl->op.fmt_in == rl->op.fmt_out && pl->op.fmt_in == rl->op.fmt_out)
            m->relu_folded[r] = 1;
    }
    return 0;
}

/* ---- batch norm and relu (training models, when the back-end has bn_fused_*; SD_NO_FUSE=1 turns it off) -------
 * A batchnorm whose only reader is a relu runs with it as one call: y = relu(bn(x)) straight into the relu's
 * buffer, and one backward from the relu's dy and y (masked first). The batchnorm's own output and gradient are
 * never written, so they are not allocated. It takes precedence over "relu under max pooling". At inference a
 * convolution's fused chain (above) still takes both when it starts before them. */
int nn_fuse_bn_relu(nn_model *m) {
    const nn_backend_ops *o = m->be->ops;
    if (!m->training || !o->bn_fused_forward || !o->bn_fused_backward || getenv("SD_NO_FUSE")) return 0;
    m->bn_relu = malloc(sizeof *m->bn_relu * (size_t)m->nlayers);
    SD_ALLOC_CHECK(m->bn_relu);
    for (int b = 0; b < m->nlayers; b++) {
        m->bn_relu[b] = -1;
        const nn_layer *bl = &m->layers[b];
        const int r = bl->op.kind == NN_OP_BATCHNORM ? only_consumer(m, b) : -1;
        if (r < 0) continue;
        const nn_layer *rl = &m->layers[r];
        if (rl->op.kind == NN_OP_RELU && bl->op.fmt_out == rl->op.fmt_in && rl->op.fmt_in == rl->op.fmt_out)
            m->bn_relu[b] = r;
    }
    return 0;
}

/* ---- concat slabs (training models, when the back-end has bn_fused_* and takes concatenations blocked) ------
 * A dense block concatenates each layer's output onto the tensor before it, concat_k = concat(concat_k-1, y_k);
 * kept for the backward pass, those outputs grow with the square of the block's depth. A chain of such
 * concatenations shares one buffer instead, the last one's (its slab; Pleiss et al. 2017, "Memory-efficient
 * implementation of DenseNets"): concat_k is its first channels, each concatenation copies in only its new
 * inputs and its backward copies out only their gradients. A view's readers read it with the slab's example
 * stride and add their data gradient into the slab's gradient (bn_fused_*, dx_acc), so each reader other than
 * the next concatenation must be a batchnorm whose layer chain (element-wise layers, then one that reads the
 * result) takes m->blk_fmt, the slab's layout. SD_NO_FUSE=1 keeps every concatenation whole. */

/* 1 if layer r, a reader of a slab view, can read it: a batchnorm whose chain to its next non-element-wise layer
 * takes m->blk_fmt throughout (one reader at each step). */
static int slab_reader_ok(const nn_model *m, int r) {
    nn_backend *be = m->be;
    const int F = m->blk_fmt;
    if (m->layers[r].op.kind != NN_OP_BATCHNORM) return 0;
    for (int t = r;;) {
        const nn_layer *l = &m->layers[t];
        if (nn_is_view(l) || nn_is_loss(l) || l->op.kind == NN_OP_ADD || !be->ops->layout_ok(be, &l->op, F)) return 0;
        if (!elementwise(l)) return 1;
        if ((t = only_consumer(m, t)) < 0) return 0;
    }
}

/* The concatenation reading concat layer t as its first input, if it is the only one; else -1. */
static int next_in_chain(const nn_model *m, int t) {
    int next = -1, n = 0;
    for (int j = t + 1; j < m->nlayers; j++)
        if (m->layers[j].op.kind == NN_OP_CONCAT && m->layers[j].inputs[0] == t) { next = j; n++; }
    return n == 1 ? next : -1;
}

/* 1 if the chain of concatenations from `first` to `last` (next_in_chain links) can share a slab. */
static int slab_ok(const nn_model *m, int first, int last) {
    nn_backend *be = m->be;
    if (last == m->nlayers - 1) return 0;
    for (int t = first;; t = next_in_chain(m, t)) {
        if (!be->ops->layout_ok(be, &m->layers[t].op, m->blk_fmt)) return 0;
        const int next = t == last ? -1 : next_in_chain(m, t);
        int readers = 0;
        for (int j = t + 1; j < m->nlayers; j++)
            for (int k = 0; k < m->layers[j].ninputs; k++) {
                if (m->layers[j].inputs[k] != t) continue;
                readers++;
                if (!(j == next && k == 0) && !slab_reader_ok(m, j)) return 0;
            }
        if (!readers) return 0;
        if (t == last) return 1;
    }
}

/* The layouts a slab's views and their readers' chains run in, their strides, and m->slab. */
static void slab_apply(nn_model *m, int first, int last) {
    const int F = m->blk_fmt, cs = m->layers[last].op.oc;
    for (int t = first;; t = next_in_chain(m, t)) {
        nn_layer *c = &m->layers[t];
        c->op.fmt_out = F;
        c->op.out_cs = cs;
        c->op.cat_inplace = t != first;
        m->slab[t] = last;
        for (int j = t + 1; j < m->nlayers; j++) {
            nn_layer *r = &m->layers[j];
            if (r->op.kind != NN_OP_BATCHNORM || r->inputs[0] != t) continue;
            r->op.in_cs = cs;
            for (int u = j;; u = only_consumer(m, u)) {   /* slab_reader_ok walked it */
                nn_layer *l = &m->layers[u];
                l->op.fmt_in = F;
                if (!elementwise(l)) break;
                l->op.fmt_out = F;
            }
        }
        if (t == last) return;
    }
}

int nn_fuse_slabs(nn_model *m) {
    const nn_backend_ops *o = m->be->ops;
    if (!m->training || !o->bn_fused_forward || !o->bn_fused_backward || getenv("SD_NO_FUSE") ||
        m->blk_fmt == NN_FMT_NCHW)
        return 0;
    m->slab = malloc(sizeof *m->slab * (size_t)m->nlayers);
    SD_ALLOC_CHECK(m->slab);
    for (int i = 0; i < m->nlayers; i++) m->slab[i] = -1;
    for (int first = 0; first < m->nlayers; first++) {
        const nn_layer *l = &m->layers[first];
        if (l->op.kind != NN_OP_CONCAT || m->slab[first] >= 0) continue;
        const int in = l->inputs[0];
        if (in >= 0 && m->layers[in].op.kind == NN_OP_CONCAT && next_in_chain(m, in) == first) continue;   /* not a start */
        int last = first;
        for (int n; (n = next_in_chain(m, last)) >= 0;) last = n;
        if (slab_ok(m, first, last)) slab_apply(m, first, last);
    }
    return 0;
}

/* Each concatenation's input layouts (op.in_fmt), once every layout is decided. */
void nn_fuse_join_layouts(nn_model *m) {
    for (int i = 0; i < m->nlayers; i++) {
        nn_layer *l = &m->layers[i];
        if (l->op.kind != NN_OP_CONCAT) continue;
        for (int k = 0; k < l->ninputs; k++) {
            const int ow = nn_owner_of(m->layers, l->inputs[k]);   /* a view's owner is NCHW: views end chains */
            l->op.in_fmt[k] = ow >= 0 ? m->layers[ow].op.fmt_out : NN_FMT_NCHW;
        }
        l->op.fmt_in = l->op.in_fmt[0];   /* as for every op: its (first) input's */
    }
}
