/* be_dnnl — the oneDNN CPU back-end: every oneDNN call of showdown lives in be_dnnl/, built against oneDNN 2.x
 * (Debian 12's 2.6, the default) or 3.x (make DNNL_PREFIX=...; the calls whose API differs go through
 * dnnl_compat.c). It computes what the reference back-end (be_ref/ref.c) computes on the same
 * canonical NCHW buffers: primitives are created once per op shape in prepare() (the inference convolution at its
 * first call) and reused, inputs are reordered into the layouts oneDNN prefers and outputs back, scratchpads are
 * user-managed and shared. Batch norm, concatenation, GRU and LSTM run their arithmetic on the host
 * (dnnl_bn.c, dnnl_eltwise.c, dnnl_rnn.c; docs/performance.md says why). This file: the table, per-op state, memory, the
 * environment; the ops in one file per family behind be_dnnl/dnnl_be.h. */
#include "be_dnnl/dnnl_be.h"

static size_t dnnl_workspace_size(nn_backend *be, const nn_op *op) {
    size_t out = (size_t)op->n * op->oc * op->oh * op->ow;
    switch (op->kind) {
    case NN_OP_MAXPOOL: {
        if (op->priv) return PRIV(op, pool_priv)->ws_bytes;
        if (dn_pool_host(op)) return dn_pool_host_ws_bytes(op);
        /* asked before prepare(): ask oneDNN, else the largest it uses (s32 per output) */
        dn_desc fd;
        dnnl_primitive_desc_t pd;
        dnnl_memory_desc_t ws;
        size_t bytes = out * sizeof(int32_t);
        if (dn_pool_descs(op, dnnl_forward_training, &fd, NULL) == 0 && dn_pd_new(CTX(be), &pd, &fd, 0, NULL) == 0) {
            if (dn_md_query(pd, dnnl_query_workspace_md, 0, &ws) == 0) bytes = dn_md_size(&ws);
            dnnl_primitive_desc_destroy(pd);
        }
        dn_md_scope_end();
        return bytes;
    }
    case NN_OP_DROPOUT: return nn_fmt_elems(op->fmt_out, op->n, op->oc, op->oh, op->ow);   /* mask, in y's layout */
    case NN_OP_BATCHNORM: return 4 * sizeof(float) * (size_t)op->c;   /* batch mean, variance, scale, shift */
    case NN_OP_GRU: case NN_OP_LSTM: {   /* oneDNN's workspace, then dst_layer for the last-state variant */
        return dn_rnn_ws_bytes(op);
    }
    default: return 0;
    }
}

/* The graph's layout negotiation (nn/backend.h nn_fmt): convolution and pooling read and write the blocked
 * layout (and reorder where one side is nchw); relu, dropout and batch normalisation keep it; an add keeps it when
 * no channel is padded (the graph asks only in inference-only models); a concatenation copies between the layouts
 * of its inputs and output when every input is whole blocks (a concat slab's parts). */
static int dnnl_layout_ok(nn_backend *be, const nn_op *op, int fmt) {
    if (fmt == NN_FMT_NCHW) return 1;
    /* only the block oneDNN's kernels use here: given another, it runs its reference convolution and pooling
     * (mnist_cnn on a Zen 3, AVX2, in nChw16c: 22 img/s training against 884 in nchw) */
    if (fmt != CTX(be)->blk_fmt) return 0;
    const size_t B = nn_fmt_block(fmt, (size_t)op->oc);   /* nhwc: never padded */
    switch (op->kind) {
    case NN_OP_CONV2D: case NN_OP_MAXPOOL: case NN_OP_AVGPOOL: case NN_OP_GLOBAL_AVGPOOL: case NN_OP_RELU:
    case NN_OP_DROPOUT: return 1;
    /* the host kernels take 16 channels a thread: nhwc only in whole groups of 16 */
    case NN_OP_BATCHNORM: return fmt != NN_FMT_NHWC || op->c % 16 == 0;
    case NN_OP_ADD: return (size_t)op->oc % B == 0;   /* flat add: no padded channels (inference-only models) */
    case NN_OP_CONCAT:
        for (int k = 0; k < op->ninputs && fmt != NN_FMT_NHWC; k++) if ((size_t)op->in_c[k] % B) return 0;
        return 1;
    default: return 0;
    }
}

/* ---- per-op state ------------------------------------------------------------------------------------ */

static void dnnl_release(nn_backend *be, nn_op *op) {
    if (!op->priv) return;
    switch (op->kind) {
    case NN_OP_CONV2D: dn_conv_release(CTX(be), op->priv); break;
    case NN_OP_DENSE: dn_dense_release(op->priv); break;
    case NN_OP_MAXPOOL: case NN_OP_AVGPOOL: case NN_OP_GLOBAL_AVGPOOL: {
        pool_priv *p = op->priv;
        dn_step_destroy(&p->fwd); dn_step_destroy(&p->bwd); dn_step_destroy(&p->fwd_inf);
        dn_stage_destroy(&p->f_x); dn_stage_destroy(&p->f_y); dn_stage_destroy(&p->b_dy); dn_stage_destroy(&p->b_dx);
        break;
    }
    case NN_OP_BATCHNORM: {
        bn_priv *p = op->priv;
        dn_step_destroy(&p->fwd_train); dn_step_destroy(&p->fwd_inf); dn_step_destroy(&p->bwd);
        break;
    }
    case NN_OP_ADD: dn_step_destroy(&PRIV(op, add_priv)->fwd); break;
    case NN_OP_RELU: dn_step_destroy(&PRIV(op, relu_priv)->fwd); dn_step_destroy(&PRIV(op, relu_priv)->bwd); break;
    case NN_OP_GRU: case NN_OP_LSTM: dn_rnn_release(op->priv); break;
    default: break;
    }
    free(op->priv);
    op->priv = NULL;
}

static int dnnl_prepare(nn_backend *be, nn_op *op) {
    dnnl_ctx *c = CTX(be);
    size_t sz;
    switch (op->kind) {
    case NN_OP_CONV2D: sz = sizeof(conv_priv); break;
    case NN_OP_DENSE: sz = sizeof(dense_priv); break;
    case NN_OP_MAXPOOL: case NN_OP_AVGPOOL: case NN_OP_GLOBAL_AVGPOOL: sz = sizeof(pool_priv); break;
    case NN_OP_RELU: sz = sizeof(relu_priv); break;
    case NN_OP_BATCHNORM: sz = sizeof(bn_priv); break;
    case NN_OP_ADD: sz = sizeof(add_priv); break;
    case NN_OP_GRU: case NN_OP_LSTM: sz = sizeof(rnn_priv); break;
    default: return 0;                     /* dropout, flatten, loss: no state */
    }
    if (op->priv) dnnl_release(be, op);
    dn_threads_on(c);                         /* jit kernels are specialised for the thread count */
    op->priv = calloc(1, sz);
    SD_ALLOC_CHECK(op->priv);
    int rc;
    switch (op->kind) {
    case NN_OP_CONV2D: rc = dn_conv_prepare(c, op, op->priv); break;
    case NN_OP_DENSE: rc = dn_dense_prepare(c, op, op->priv); break;
    case NN_OP_MAXPOOL: case NN_OP_AVGPOOL: case NN_OP_GLOBAL_AVGPOOL: rc = dn_pool_prepare(c, op, op->priv); break;
    case NN_OP_BATCHNORM: rc = dn_bn_prepare(c, op, op->priv); break;
    case NN_OP_ADD: rc = dn_add_prepare(c, op, op->priv); break;
    case NN_OP_GRU: case NN_OP_LSTM: rc = dn_rnn_prepare(c, op, op->priv); break;
    default: rc = dn_relu_prepare(c, op, op->priv); break;
    }
    dn_md_scope_end();   /* the memory descriptors made on the way (oneDNN 3.x: handles) */
    if (rc < 0) dnnl_release(be, op);
    return rc;
}

/* ---- memory, environment, table ------------------------------------------------------------------------ */

static int dnnl_alloc_(nn_backend *be, void **out, size_t bytes) {
    (void)be;
    *out = aligned_alloc(ALIGN, (bytes + ALIGN - 1) / ALIGN * ALIGN);
    if (!*out) return sd_err(SD_ENOMEM, "dnnl: cannot allocate %zu bytes", bytes);
    return 0;
}
static void dnnl_free_(nn_backend *be, void *p) { (void)be; free(p); }
/* Large copies (the graph's gradient copies: babi_rnn's 3.5 MB add backward, twice a step) in one slice a thread:
 * one thread's memcpy did not reach the memory's bandwidth. */
static int dnnl_copy(nn_backend *be, void *dst, const void *src, size_t bytes) {
    const int nt = CTX(be)->threads;
    dn_touched(CTX(be), dst, bytes);
    if (nt < 2 || bytes < ((size_t)1 << 20)) {
        memcpy(dst, src, bytes);
        return 0;
    }
    const size_t per = (bytes / (size_t)nt + 63) / 64 * 64;
    #pragma omp parallel for num_threads(nt) schedule(static)
    for (int t = 0; t < nt; t++) {
        const size_t o = (size_t)t * per;
        if (o < bytes) memcpy((char *)dst + o, (const char *)src + o, bytes - o < per ? bytes - o : per);
    }
    return 0;
}
static int dnnl_zero(nn_backend *be, void *p, size_t bytes) {
    dn_touched(CTX(be), p, bytes);
    memset(p, 0, bytes);
    return 0;
}
static int dnnl_sync(nn_backend *be) { return dn_strm_wait(CTX(be)); }

static void dnnl_env(nn_backend *be, nn_env_fn add, void *user) {
    dnnl_ctx *c = CTX(be);
    const dnnl_version_t *v = dnnl_version();
    char buf[200];
    snprintf(buf, sizeof buf, "%d.%d.%d (%s, %s runtime)", v->major, v->minor, v->patch, v->hash,
             v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other");
    add(user, "onednn_version", buf);
    snprintf(buf, sizeof buf, "%d", c->threads);
    add(user, "backend_threads", buf);
    char impl[800];
    const char *what = c->cdt != dnnl_bf16 ? "fp32"
                     : dn_conv_bf16_choose(c) ? "bf16 (convolutions and matmuls, each convolution pass in bf16 or fp32 "
                                                "(backward-weights also as im2col + bf16 matmul), whichever timed "
                                                "faster at set-up; fp32 elsewhere, GRU/LSTM fp32 on the host)"
                     : dn_conv_bf16_passes(c) == DN_PASSES_FP32
                         ? "bf16 (matmuls; convolutions fp32 (SD_DNNL_BF16_PASSES=fp32) and elsewhere, GRU/LSTM "
                           "fp32 on the host)"
                         : "bf16 (convolutions and matmuls; fp32 elsewhere, GRU/LSTM fp32 on the host)";
    snprintf(impl, sizeof impl, "oneDNN %s%s%s", what, c->impl[0] ? ": " : "", c->impl);
    add(user, "backend_impl", impl);
    add(user, "denormals", NN_HOST_DENORMALS);
}

void nn_dnnl_libraries(nn_env_fn add, void *user) {
    const dnnl_version_t *v = dnnl_version();
    char buf[200];
    snprintf(buf, sizeof buf, "%d.%d.%d (%s)", v->major, v->minor, v->patch, v->hash);
    add(user, "lib.onednn", buf);
}

static void dnnl_destroy(nn_backend *be) {
    dnnl_ctx *c = CTX(be);
    if (c) {
        if (c->strm) dnnl_stream_destroy(c->strm);
        if (c->eng) dnnl_engine_destroy(c->eng);
        free(c->scratch);
        free(c->tmp);
        free(c->wino_tmp);
        free(c->wino_u);
        free(c->wino_du);
        free(c->picks);
        free(c->watch);
        free(c);
    }
    free(be);
}

static const nn_backend_ops dnnl_ops = {
    .name = "dnnl",
    .destroy = dnnl_destroy,
    .env = dnnl_env,
    .alloc = dnnl_alloc_,
    .free = dnnl_free_,
    .upload = dnnl_copy,
    .download = dnnl_copy,
    .zero = dnnl_zero,
    .sync = dnnl_sync,
    .prepare = dnnl_prepare,
    .release = dnnl_release,
    .workspace_size = dnnl_workspace_size,
    .layout_ok = dnnl_layout_ok,
    .dense_forward = dn_dense_forward,
    .dense_backward = dn_dense_backward,
    .conv2d_forward = dn_conv2d_forward,
    .conv2d_backward = dn_conv2d_backward,
    .conv2d_backward_relu = dn_conv2d_backward_relu,
    .conv2d_infer = dn_conv2d_infer,
    .maxpool_forward = dn_maxpool_forward,
    .maxpool_backward = dn_maxpool_backward,
    .relu_forward = dn_relu_forward,
    .relu_backward = dn_relu_backward,
    .relu_mask = dn_relu_mask,
    .dropout_forward = dn_dropout_forward,
    .dropout_backward = dn_dropout_backward,
    .softmax_xent_forward = dn_softmax_xent_forward,
    .softmax_xent_backward = dn_softmax_xent_backward,
    .optimizer_step = dn_optimizer_step,
    /* graph ops */
    .copy = dnnl_copy,
    .add_forward = dn_add_forward,
    .concat_forward = dn_concat_forward,
    .concat_backward = dn_concat_backward,
    .batchnorm_forward = dn_batchnorm_forward,
    .batchnorm_backward = dn_batchnorm_backward,
    .bn_fused_forward = dn_bn_fused_forward,
    .bn_fused_backward = dn_bn_fused_backward,
    .avgpool_forward = dn_avgpool_forward,
    .avgpool_backward = dn_avgpool_backward,
    .sigmoid_bce_forward = dn_sigmoid_bce_forward,
    .sigmoid_bce_backward = dn_sigmoid_bce_backward,
    /* recurrent ops */
    .embedding_forward = dn_embedding_forward,
    .embedding_backward = dn_embedding_backward,
    .gru_forward = dn_rnn_forward,
    .gru_backward = dn_rnn_backward,
    .lstm_forward = dn_rnn_forward,
    .lstm_backward = dn_rnn_backward,
    .repeat_forward = dn_repeat_forward,
    .repeat_backward = dn_repeat_backward,
};

/* The compute type of a precision: bf16 only where the CPU multiplies bf16 natively (AVX512_BF16 or AMX; oneDNN
 * would otherwise emulate it, slower than fp32). ONEDNN_MAX_CPU_ISA lowers what oneDNN sees. */
static int compute_type(const char *precision, dnnl_data_type_t *dt) {
    *dt = dnnl_f32;
    if (precision && strcmp(precision, "fp16") == 0)   /* no fp16 CPU kernels worth running (no loss scaling here) */
        return sd_err(SD_EUSAGE, "dnnl: --precision fp16 runs on cudnn; on the CPU: fp32 or bf16");
    if (!precision || strcmp(precision, "bf16") != 0) return 0;
    dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    if ((isa & dnnl_cpu_isa_avx512_core_bf16) != dnnl_cpu_isa_avx512_core_bf16)
        return sd_err(SD_EUSAGE, "dnnl: bf16 is not supported on this CPU (oneDNN's instruction set here: %s; bf16 "
                      "needs AVX512_BF16 or AMX; --precision fp32 runs here)", dnnl_cpu_isa2str(isa));
    *dt = dnnl_bf16;
    return 0;
}

int nn_dnnl_new(nn_backend **out, const nn_backend_opts *opts) {
    *out = NULL;
    dnnl_data_type_t cdt;
    SD_TRY(compute_type(opts ? opts->precision : NULL, &cdt));
    nn_backend *be = calloc(1, sizeof *be);
    dnnl_ctx *c = calloc(1, sizeof *c);
    if (!be || !c) { free(be); free(c); return sd_err(SD_ENOMEM, "dnnl: out of memory"); }
    be->ops = &dnnl_ops;
    be->ctx = c;
    if (opts) be->opts = *opts;
    c->threads = be->opts.threads > 0 ? be->opts.threads : omp_get_num_procs();
    c->autotune = opts ? opts->autotune : 1;
    c->cdt = cdt;
    const dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    c->amx = (isa & dnnl_cpu_isa_avx512_core_amx) == dnnl_cpu_isa_avx512_core_amx;
    /* SD_DNNL_BLOCK=16|8|nhwc: that layout on any CPU (tests of the layouts; slow where oneDNN's kernels block
     * otherwise). Under bf16 on AMX the graph is nhwc, the only layout oneDNN 2.6's AMX convolutions read and write:
     * level with nChw16c or up to 1.5x faster on every workload there (docs/precision.md, "On AMX"). */
    const char *blk = getenv("SD_DNNL_BLOCK");
    if (blk && *blk)
        c->blk_fmt = strcmp(blk, "nhwc") == 0 ? NN_FMT_NHWC : atoi(blk) == 16 ? NN_FMT_NCHW16C
                     : atoi(blk) == 8 ? NN_FMT_NCHW8C : NN_FMT_NCHW;
    else if (cdt == dnnl_bf16 && c->amx) c->blk_fmt = NN_FMT_NHWC;
    else if ((isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core) c->blk_fmt = NN_FMT_NCHW16C;
    else if ((isa & dnnl_cpu_isa_avx2) == dnnl_cpu_isa_avx2) c->blk_fmt = NN_FMT_NCHW8C;
    c->wgen = 1;
    dn_threads_on(c);
    nn_host_flush_denormals(c->threads);
    dnnl_status_t r = dnnl_engine_create(&c->eng, dnnl_cpu, 0);
    if (r == dnnl_success) r = dnnl_stream_create(&c->strm, c->eng, dnnl_stream_default_flags);
    if (r != dnnl_success) {
        dnnl_destroy(be);
        return sd_err(SD_ENODEV, "dnnl: cannot create the CPU engine/stream: %s", dnnl_status2str(r));
    }
    const dnnl_version_t *v = dnnl_version();
    snprintf(be->name, sizeof be->name, "dnnl");
    snprintf(be->device, sizeof be->device, "CPU (oneDNN %d.%d.%d, %d threads)", v->major, v->minor, v->patch,
             c->threads);
    *out = be;
    return 0;
}
