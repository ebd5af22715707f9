/* memory — a built model's activation buffers. Training models give every layer an output buffer of its own
 * (views share their input's, a batchnorm run with its relu has none, the concatenations of a concat slab share
 * its last one's: nn/fuse.c) and share gradient buffers between layers whose gradients are not alive at the same
 * time in the backward pass; inference-only models reuse buffers between layers whose outputs are not alive at
 * the same time. */
#include "nn/model_impl.h"
#include "core/err.h"

#include <limits.h>
#include <stdlib.h>

/* ---- buffer reuse (inference-only models) ------------------------------------------------------------------
 * Without a backward pass a layer's output is dead once its last reader has run, so its buffer can hold a
 * later layer's output. Layers take buffers in order from a pool (the smallest free one that is large
 * enough, else a new one) and give their inputs' buffers back after their last reader; the model output is
 * never given back. SD_NO_BUFFER_REUSE=1 gives every layer its own (for comparisons). */
/* A pool is *n buffers buf[k] of size[k] bytes, busy[k] while they hold something alive (the activations'
 * m->pool, the gradients' m->gpool). */
static int pool_take(nn_backend *be, void **buf, size_t *size, int *n, unsigned char *busy, size_t bytes,
                     float **out) {
    int best = -1;
    for (int k = 0; k < *n; k++)
        if (!busy[k] && size[k] >= bytes && (best < 0 || size[k] < size[best])) best = k;
    if (best < 0) {
        best = *n;
        SD_TRY(nn_dev_alloc(be, &buf[best], bytes));
        size[best] = bytes;
        (*n)++;
    }
    busy[best] = 1;
    *out = buf[best];
    return 0;
}
/* The layer whose buffer layer j's output is, at inference: through views and through dropout, which is the
 * identity there (nn_model_forward hands its input on). */
static int live_owner(const nn_model *m, int j) {
    while (j >= 0 && (nn_is_view(&m->layers[j]) || (!m->training && m->layers[j].op.kind == NN_OP_DROPOUT)))
        j = m->layers[j].input;
    return j;
}
static void pool_give(void *const *buf, int n, unsigned char *busy, const float *p) {
    for (int k = 0; k < n; k++)
        if (buf[k] == p) busy[k] = 0;
}

/* The reuse plan: last[j] = the last layer reading layer j's buffer, head[t] = the convolution whose fused
 * chain layer t is in (or -1). None for a training model (its gradients: m->dy_pooled, nn_mem_grads) or with
 * SD_NO_BUFFER_REUSE set. */
int nn_mem_begin(nn_model *m, nn_mem *r) {
    *r = (nn_mem){0};
    if (getenv("SD_NO_BUFFER_REUSE")) return 0;
    if (m->training) {
        m->dy_pooled = calloc((size_t)m->nlayers, 1);
        return m->dy_pooled ? 0 : sd_err(SD_ENOMEM, "out of memory");
    }
    const int L = m->nlayers;
    r->last = malloc(sizeof *r->last * (size_t)L);
    r->head = malloc(sizeof *r->head * (size_t)L);
    r->busy = calloc((size_t)L, 1);
    m->pool = calloc((size_t)L, sizeof *m->pool);
    m->pool_bytes = calloc((size_t)L, sizeof *m->pool_bytes);
    if (!r->last || !r->head || !r->busy || !m->pool || !m->pool_bytes) {
        nn_mem_end(r);
        return sd_err(SD_ENOMEM, "out of memory");
    }
    int *last = r->last, *head = r->head;
    /* fused chains write the last layer's buffer when the convolution runs: it is taken then (before the
     * convolution's inputs are given back, so it never is one of them) and shared by the chain */
    for (int i = 0; i < L; i++) head[i] = -1;
    for (int i = 0; m->chains && i < L; i++)
        if (m->chains[i].last >= 0) {
            const nn_fuse_chain *fc = &m->chains[i];
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
    return 0;
}

void nn_mem_end(nn_mem *r) {
    free(r->last);
    free(r->head);
    free(r->busy);
    r->last = r->head = NULL;
    r->busy = NULL;
}

int nn_mem_alias(nn_model *m, const nn_mem *r, int i) {
    nn_layer *l = &m->layers[i];
    if (nn_is_view(l)) {   /* same buffers as the input; no primitive */
        l->y = l->input >= 0 ? m->layers[l->input].y : m->x;
        l->dy = l->input >= 0 ? m->layers[l->input].dy : NULL;
        return 1;
    }
    if (r->last && live_owner(m, i) != i) {   /* inference dropout: its input's buffer, handed on */
        int ow = live_owner(m, i);
        l->y = ow >= 0 ? m->layers[ow].y : m->x;
        return 1;
    }
    return 0;
}

int nn_mem_output(nn_model *m, nn_mem *r, int i) {
    nn_backend *be = m->be;
    nn_layer *l = &m->layers[i];
    int *last = r->last, *head = r->head;
    unsigned char *busy = r->busy;
    int rc = 0;
    if (m->bn_relu && m->bn_relu[i] >= 0) return 0;   /* runs into its relu's buffer: no buffers of its own */
    if (m->slab && m->slab[i] >= 0) {   /* a concat slab: its first concatenation allocates its last one's buffers */
        if (l->op.cat_inplace) {
            l->y = m->layers[l->inputs[0]].y;
            l->dy = m->layers[l->inputs[0]].dy;
            return 0;
        }
        const size_t bytes = nn_y_bytes(&m->layers[m->slab[i]]);
        if (nn_out_elems(&l->op) > r->max_elems) r->max_elems = nn_out_elems(&l->op);
        SD_TRY(nn_dev_alloc(be, (void **)&l->y, bytes));
        return nn_dev_alloc(be, (void **)&l->dy, bytes);
    }
    if (!nn_is_loss(l)) {
        size_t bytes = nn_y_bytes(l);
        if (nn_out_elems(&l->op) > r->max_elems) r->max_elems = nn_out_elems(&l->op);
        if (last && head[i] == i) {   /* a fused chain's convolution: the chain's output buffer, shared */
            const nn_fuse_chain *fc = &m->chains[i];
            int ro = fc->add >= 0 ? live_owner(m, fc->other) : -1;
            const nn_layer *end = &m->layers[fc->last];
            for (int j = i + 1; ro >= 0 && j < fc->add; j++)   /* read by no layer running after the chain */
                for (int k = 0; k < m->layers[j].ninputs; k++)
                    if (live_owner(m, m->layers[j].inputs[k]) == ro) ro = -1;
            if (ro >= 0 && last[ro] == fc->add && m->layers[ro].op.fmt_out == end->op.fmt_out &&
                nn_y_bytes(&m->layers[ro]) == nn_y_bytes(end))
                l->y = m->layers[ro].y;   /* the add reads the residual last: sum into it in place */
            else
                rc = pool_take(be, m->pool, m->pool_bytes, &m->npool, busy, nn_y_bytes(end), &l->y);
            for (int t = i + 1; t <= fc->last && !rc; t++) if (head[t] == i) m->layers[t].y = l->y;
        } else if (last && head[i] >= 0) {
            /* in a chain: the buffer is the chain's */
        } else if (last) rc = pool_take(be, m->pool, m->pool_bytes, &m->npool, busy, bytes, &l->y);
        else rc = nn_dev_alloc(be, (void **)&l->y, bytes);
        if (!rc && m->training && m->dy_pooled) m->dy_pooled[i] = 1;   /* nn_mem_grads, after the fusions */
        else if (!rc && m->training) rc = nn_dev_alloc(be, (void **)&l->dy, bytes);
    }
    if (!rc && last)   /* inputs read for the last time: their buffers are free for later layers */
        for (int k = 0; k < l->ninputs; k++) {
            int ow = live_owner(m, l->inputs[k]);
            /* within a chain only its last layer's buffer is real (given back after its last reader) */
            if (ow >= 0 && head[ow] >= 0 && head[ow] == head[i]) continue;
            if (ow >= 0 && m->layers[ow].y == l->y) continue;   /* became this chain's output (in place) */
            if (ow >= 0 && last[ow] == i) pool_give(m->pool, m->npool, busy, m->layers[ow].y);
        }
    return rc;
}

/* ---- gradient buffers (training models) ---------------------------------------------------------------------
 * The backward pass runs layers L-1 .. 0. Layer b's gradient is first written by the last of its readers (in
 * forward order) and last read by b's own backward, or by the batchnorm that runs with b when b is its relu; in
 * between it must keep its buffer, outside it any other gradient may use it. Every write and read of the pass
 * (nn/run.c: nn_model_backward) is one of: a layer's own dy; its inputs' owners' (the first writer overwrites,
 * later ones add); a fused batchnorm's relu's dy; a max pooling's that does its relu's backward, into the relu's
 * input's (that relu's own dy is never used: it has none). A concat slab's gradient stays the slab's own. */
static void touch(int *lo, int *hi, const unsigned char *pooled, int b, int t) {
    if (b < 0 || !pooled[b]) return;
    if (t < lo[b]) lo[b] = t;
    if (t > hi[b]) hi[b] = t;
}

int nn_mem_grads(nn_model *m) {
    if (!m->dy_pooled) return 0;
    const int L = m->nlayers;
    int *lo = malloc(sizeof *lo * (size_t)L), *hi = malloc(sizeof *hi * (size_t)L);
    unsigned char *busy = calloc((size_t)L, 1);
    m->gpool = calloc((size_t)L, sizeof *m->gpool);
    m->gpool_bytes = calloc((size_t)L, sizeof *m->gpool_bytes);
    int rc = lo && hi && busy && m->gpool && m->gpool_bytes ? 0 : sd_err(SD_ENOMEM, "out of memory");
    for (int i = 0; !rc && i < L; i++) { lo[i] = INT_MAX; hi[i] = -1; }
    for (int r = 0; !rc && m->relu_folded && r < L; r++)   /* its reader does its backward: no gradient */
        if (m->relu_folded[r]) m->dy_pooled[r] = 0;
    for (int c = 0; !rc && c < L; c++) {
        const nn_layer *l = &m->layers[c];
        if (nn_is_view(l)) continue;   /* no backward of its own: its readers write its owner's */
        touch(lo, hi, m->dy_pooled, c, c);
        for (int k = 0; k < l->ninputs; k++) touch(lo, hi, m->dy_pooled, nn_owner_of(m->layers, l->inputs[k]), c);
        if (m->bn_relu && m->bn_relu[c] >= 0) touch(lo, hi, m->dy_pooled, m->bn_relu[c], c);
        if (l->inputs[0] >= 0 && m->relu_folded && m->relu_folded[l->inputs[0]])   /* writes the relu's input's */
            touch(lo, hi, m->dy_pooled, nn_owner_of(m->layers, m->layers[l->inputs[0]].input), c);
    }
    for (int t = L - 1; !rc && t >= 0; t--) {
        for (int b = 0; !rc && b < L; b++)   /* first touched at t: the smallest free buffer that holds it */
            if (hi[b] == t)
                rc = pool_take(m->be, m->gpool, m->gpool_bytes, &m->ngpool, busy, nn_y_bytes(&m->layers[b]),
                               &m->layers[b].dy);
        for (int b = 0; !rc && b < L; b++)   /* read for the last time at t */
            if (lo[b] == t) pool_give(m->gpool, m->ngpool, busy, m->layers[b].dy);
    }
    for (int i = 0; !rc && i < L; i++) {   /* views take their input's, as nn_mem_alias gave them before */
        nn_layer *l = &m->layers[i];
        if (nn_is_view(l)) l->dy = l->input >= 0 ? m->layers[l->input].dy : NULL;
    }
    free(lo);
    free(hi);
    free(busy);
    return rc;
}
