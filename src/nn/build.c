/* build — building a model on a back-end: plan the spec (nn/plan.c), check the back-end has every primitive
 * the layers need (the op table, nn/op.c), choose layouts and fused chains (nn/fuse.c), allocate activations
 * (nn/memory.c), parameters, gradients and optimizer state, and initialise the parameters from a seed.
 * The passes are in nn/run.c. Knows nothing about any particular back-end. */
#include "nn/model_impl.h"
#include "nn/kernels.h"
#include "core/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

void nn_model_free(nn_model *m) {
    if (!m) return;
    nn_backend *be = m->be;
    for (int k = 0; k < m->npool; k++) nn_dev_free(be, m->pool[k], m->pool_bytes[k]);
    free(m->pool);
    free(m->pool_bytes);
    for (int k = 0; k < m->ngpool; k++) nn_dev_free(be, m->gpool[k], m->gpool_bytes[k]);
    free(m->gpool);
    free(m->gpool_bytes);
    free(m->chains);
    free(m->inf_blocked);
    free(m->relu_folded);
    for (int i = 0; i < m->nlayers; i++) {
        nn_layer *l = &m->layers[i];
        const int slab_view = m->slab && m->slab[i] >= 0 && m->slab[i] != i;   /* the slab is its last layer's */
        if (!nn_is_view(l) && !m->pool && !slab_view) {
            nn_dev_free(be, l->y, nn_y_bytes(l));
            if (!(m->dy_pooled && m->dy_pooled[i])) nn_dev_free(be, l->dy, nn_y_bytes(l));
        }
        nn_dev_free(be, l->ws, l->ws_bytes);
        if (be->ops->release && !nn_is_view(l)) be->ops->release(be, &l->op);
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
    free(m->bn_relu);
    free(m->slab);
    free(m->dy_pooled);
    free(m->consumers);
    free(m->written);
    free(m->layers);
    free(m);
}

static int needs(const nn_backend *be, int have, const nn_layer *l) {
    if (have) return 0;
    return sd_err(SD_EUNSUPPORTED, "back-end %s does not support %s (layer %s)", be->name, nn_op_name(l->op.kind),
                  l->name);
}

/* The primitives a layer needs on this back-end (backward ones only when training): the op table's. */
static int check_support(const nn_backend *be, const nn_layer *l, int training) {
    const nn_op_info *in = nn_op_info_of(l->op.kind);
    if (!in->fwd) return 0;   /* flatten: a view */
    void (*f)(void), (*b)(void);
    memcpy(&f, (const char *)be->ops + in->fwd, sizeof f);
    memcpy(&b, (const char *)be->ops + in->bwd, sizeof b);
    SD_TRY(needs(be, f != NULL, l));
    return training ? needs(be, b != NULL, l) : 0;
}

/* The model's fields from the spec, and its plan. */
static int model_new(nn_model **out, const sd_workload *w, nn_backend *be, int batch) {
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
    m->nstats = nn_model_nstats(m->layers, m->nlayers);
    m->nstate = m->training ? m->nparams * (size_t)nn_optim_state_per_param(w->optim.kind) : 0;
    *out = m;
    return 0;
}

/* Every layer's primitives prepared and its buffers allocated, in order (buffer reuse hands a layer's
 * buffers on once their last reader has run); the gradient scratch when a tensor has several readers. */
static int alloc_layers(nn_model *m) {
    nn_backend *be = m->be;
    const nn_backend_ops *o = be->ops;
    int fan_out = 0, rc = 0;
    nn_mem mem;
    SD_TRY(nn_mem_begin(m, &mem));
    for (int i = 0; i < m->nlayers; i++) {
        nn_layer *l = &m->layers[i];
        m->flops_fwd += l->flops;
        if ((rc = check_support(be, l, m->training)) != 0) break;
        if (!nn_is_view(l))
            for (int k = 0; k < l->ninputs; k++) {
                int ow = nn_owner_of(m->layers, l->inputs[k]);
                if (ow >= 0 && ++m->consumers[ow] > 1) fan_out = 1;
            }
        if (nn_mem_alias(m, &mem, i)) continue;
        if (o->prepare && (rc = o->prepare(be, &l->op)) != 0) break;
        if ((rc = nn_mem_output(m, &mem, i)) != 0) break;
        if (o->workspace_size && (l->ws_bytes = o->workspace_size(be, &l->op)) > 0 &&
            (rc = nn_dev_alloc(be, &l->ws, l->ws_bytes)) != 0)
            break;
    }
    nn_mem_end(&mem);
    if (rc) return rc;
    if (fan_out && m->training) {
        m->scratch_elems = mem.max_elems;
        SD_TRY(nn_dev_alloc(be, (void **)&m->scratch, m->scratch_elems * sizeof(float)));
    }
    return 0;
}

/* Parameters (initialised from seed, uploaded), running statistics, and for training the gradients and the
 * optimizer state (zeroed); labels, probabilities and losses when the model has a loss. */
static int alloc_slabs(nn_model *m, const sd_workload *w, uint64_t seed) {
    nn_backend *be = m->be;
    const nn_backend_ops *o = be->ops;
    const size_t batch = (size_t)m->batch;
    SD_TRY(nn_dev_alloc(be, (void **)&m->params, m->nparams * sizeof(float)));
    if (m->training) {
        SD_TRY(nn_dev_alloc(be, (void **)&m->grads, m->nparams * sizeof(float)));
        SD_TRY(nn_dev_alloc(be, (void **)&m->state, m->nstate * sizeof(float)));
        SD_TRY(o->zero(be, m->grads, m->nparams * sizeof(float)));
        SD_TRY(o->zero(be, m->state, m->nstate * sizeof(float)));
    }
    if (m->loss_kind != NN_LOSS_NONE) {
        SD_TRY(nn_dev_alloc(be, (void **)&m->labels, batch * sizeof(int32_t)));
        SD_TRY(nn_dev_alloc(be, (void **)&m->prob, batch * w->classes * sizeof(float)));
        SD_TRY(nn_dev_alloc(be, (void **)&m->loss, batch * sizeof(float)));
        if (m->loss_kind == NN_LOSS_SIGMOID_BCE)
            SD_TRY(nn_dev_alloc(be, (void **)&m->targets, batch * w->classes * sizeof(float)));
    }
    float *host = malloc((m->nparams > m->nstats ? m->nparams : m->nstats) * sizeof(float) + 1);
    if (!host) return sd_err(SD_ENOMEM, "out of memory for %zu parameters", m->nparams);
    nn_model_init_params(m->layers, m->nlayers, m->nparams, w->weight_init, w->bias_init, seed, host);
    int rc = o->upload(be, m->params, host, m->nparams * sizeof(float));
    if (rc == 0 && m->nstats) {
        rc = nn_dev_alloc(be, (void **)&m->stats, m->nstats * sizeof(float));
        for (int i = 0; rc == 0 && i < m->nlayers; i++) {   /* running mean 0, running variance 1 */
            const nn_layer *l = &m->layers[i];
            for (size_t j = 0; j < l->s_len; j++) host[l->s_off + j] = j < l->s_len / 2 ? 0.0f : 1.0f;
        }
        if (rc == 0) rc = o->upload(be, m->stats, host, m->nstats * sizeof(float));
    }
    free(host);
    return rc;
}

int nn_model_build(nn_model **out, const sd_workload *w, nn_backend *be, int batch, uint64_t seed) {
    *out = NULL;
    nn_model *m = NULL;
    SD_TRY(model_new(&m, w, be, batch));
    int rc = 0;
    m->consumers = calloc((size_t)m->nlayers, sizeof *m->consumers);
    m->written = calloc((size_t)m->nlayers, 1);
    if (!m->consumers || !m->written) { rc = sd_err(SD_ENOMEM, "out of memory"); goto fail; }
    size_t in_bytes = (size_t)batch * w->in_c * w->in_h * w->in_w * sizeof(float);
    SD_TRY_GOTO(rc, nn_dev_alloc(be, (void **)&m->x, in_bytes), fail);
    for (int i = 0; i < m->nlayers; i++)
        if (m->layers[i].op.kind == NN_OP_EMBEDDING && m->layers[i].input == -1 && !m->ids)
            SD_TRY_GOTO(rc, nn_dev_alloc(be, (void **)&m->ids, in_bytes / sizeof(float) * sizeof(int32_t)), fail);
    SD_TRY_GOTO(rc, nn_fuse_layouts(m), fail);
    SD_TRY_GOTO(rc, nn_fuse_slabs(m), fail);
    SD_TRY_GOTO(rc, nn_fuse_bn_relu(m), fail);
    nn_fuse_join_layouts(m);
    SD_TRY_GOTO(rc, nn_fuse_chains(m), fail);
    SD_TRY_GOTO(rc, alloc_layers(m), fail);
    SD_TRY_GOTO(rc, nn_fuse_relu_fold(m), fail);
    SD_TRY_GOTO(rc, nn_mem_grads(m), fail);
    nn_layer *lastl = &m->layers[m->nlayers - 1];
    if (!nn_is_loss(lastl)) { m->out = lastl->y; m->out_elems = nn_out_elems(&lastl->op) / (size_t)batch; }
    SD_TRY_GOTO(rc, alloc_slabs(m, w, seed), fail);
    *out = m;
    return 0;
fail:
    nn_model_free(m);
    return rc;
}
