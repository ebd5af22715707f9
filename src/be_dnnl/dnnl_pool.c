/* dnnl_pool — max and average pooling (global average pooling is an average pooling over the whole plane). */
#include "be_dnnl/dnnl_be.h"

/* ---- pooling: in nChw16c when the graph hands either side over so (nchw otherwise); the workspace is
 * oneDNN's, opaque to the graph ------------------------------------------------------------------------ */

int dn_pool_descs(const nn_op *op, dnnl_prop_kind_t prop, dn_desc *fd, dn_desc *bd) {
    const dnnl_alg_kind_t alg = op->kind == NN_OP_MAXPOOL ? dnnl_pooling_max : dnnl_pooling_avg_exclude_padding;
    const dnnl_dims_t xd = {op->n, op->c, op->h, op->w}, yd = {op->n, op->oc, op->oh, op->ow};
    dnnl_dims_t st = {op->sh, op->sw}, k = {op->kh, op->kw}, pl = {op->ph, op->pw}, pr;
    int prh = 0, prw = 0;
    SD_TRY(dn_pad_r(op->h, op->kh, op->sh, op->ph, op->oh, &prh));
    SD_TRY(dn_pad_r(op->w, op->kw, op->sw, op->pw, op->ow, &prw));
    pr[0] = prh; pr[1] = prw;
    dnnl_memory_desc_t x, y;
    const int fmt = op->fmt_in != NN_FMT_NCHW ? op->fmt_in : op->fmt_out;   /* the blocked one if either is */
    SD_TRY(dn_md_tag(&x, 4, xd, dn_fmt_tag(fmt)));
    SD_TRY(dn_md_tag(&y, 4, yd, dn_fmt_tag(fmt)));
    SD_TRY(dn_pool_fwd_desc(fd, prop, alg, &x, &y, st, k, pl, pr));
    if (bd) SD_TRY(dn_pool_bwd_desc(bd, alg, &x, &y, st, k, pl, pr));
    return 0;
}

/* ---- max pooling over blocked or nhwc tensors on the host, with AVX2 ---------------------------------------------
 * oneDNN 2.6's jit:avx2 max pooling over nChw8c ran far below the memory's pace (cifar10_vgg's first pooling, batch 64:
 * 6.8-7.2 ms forward in training, 6.1 ms backward, where its bytes take under 1 ms), and its AVX-512 one over nChw16c
 * and nhwc wrote its workspace slowly (mnist_cnn's, batch 128, in a harness: 2.0 ms forward in training against 1.0
 * here). A plane of one channel block is
 * contiguous with its channels side by side (nhwc: one block of all the channels), so 8 channels at a window position
 * are one vector: a running max and the window index of the first maximum (the reference's rule: only a greater value
 * replaces it; compares with NaN are false), kept as u8 per output element for backward. Backward writes each dx
 * vector once where the windows tile the plane (stride = kernel, no padding: dx = dy where the index is this
 * position, else 0), else zeroes dx and adds lane by lane. y (and dy) may be NCHW instead, as before a dense layer;
 * the workspace stays in the input's blocks. SD_DNNL_POOL_ONEDNN set when the op is prepared keeps oneDNN's, for
 * comparison; SD_DNNL_POOL_HOST keeps the host kernel at inference too (pool_inf_make). */
#ifdef __AVX2__
#include <immintrin.h>

int dn_pool_host(const nn_op *op) {
    const int in = op->fmt_in;
    const int lanes = in == NN_FMT_NCHW8C || in == NN_FMT_NCHW16C || (in == NN_FMT_NHWC && op->c % 8 == 0);
    return op->kind == NN_OP_MAXPOOL && lanes && (op->fmt_out == in || op->fmt_out == NN_FMT_NCHW)
           && op->kh * op->kw <= 255 && !getenv("SD_DNNL_POOL_ONEDNN");
}
/* the workspace in the input's blocks, whatever y's layout */
size_t dn_pool_host_ws_bytes(const nn_op *op) { return nn_fmt_elems(op->fmt_in, op->n, op->oc, op->oh, op->ow); }

static inline void store_idx8(uint8_t *dst, __m256 idx) {   /* 8 window indices (0..255, as floats) as bytes */
    const __m128i i32lo = _mm256_castsi256_si128(_mm256_cvtps_epi32(idx)), i32hi = _mm256_extracti128_si256(_mm256_cvtps_epi32(idx), 1);
    const __m128i i16 = _mm_packus_epi32(i32lo, i32hi);
    _mm_storel_epi64((__m128i *)dst, _mm_packus_epi16(i16, i16));
}

/* y in NCHW (the pooling before a dense layer): a block's outputs go to a thread's buffer in the block's layout,
 * then out a channel at a time, each a contiguous row of y (lane by lane, 16 scattered stores an output position
 * took a third of mnist_cnn's pooling); dy comes in so too. */
static void block_to_nchw(float *y, const float *t, const nn_op *op, long n, long cb, int B, int L) {
    const size_t ohw = (size_t)op->oh * op->ow;
    for (int l = 0; l < L; l++) {
        float *row = y + nn_fmt_at(NN_FMT_NCHW, (size_t)op->oc, ohw, (size_t)n, (size_t)(cb * B + l), 0);
        for (size_t q = 0; q < ohw; q++) row[q] = t[q * B + l];
    }
}
static void nchw_to_block(float *t, const float *dy, const nn_op *op, long n, long cb, int B, int L) {
    const size_t ohw = (size_t)op->oh * op->ow;
    if (L < B) memset(t, 0, sizeof(float) * ohw * B);   /* padded lanes: no gradient */
    for (int l = 0; l < L; l++) {
        const float *row = dy + nn_fmt_at(NN_FMT_NCHW, (size_t)op->oc, ohw, (size_t)n, (size_t)(cb * B + l), 0);
        for (size_t q = 0; q < ohw; q++) t[q * B + l] = row[q];
    }
}

static int host_maxpool_fwd(int threads, const nn_op *op, float *restrict y, uint8_t *restrict ws,
                            const float *restrict x) {
    const int B = (int)nn_fmt_block(op->fmt_in, (size_t)op->c), H = op->h, W = op->w, OH = op->oh, OW = op->ow;
    const int C = op->c, nchw = op->fmt_out == NN_FMT_NCHW;
    const long CB = (C + B - 1) / B, planes = (long)op->n * CB;
    const size_t blk = (size_t)OH * OW * B;
    float *tb = nchw ? malloc(sizeof(float) * blk * (size_t)threads) : NULL;
    if (nchw && !tb) return sd_err(SD_ENOMEM, "dnnl: cannot allocate %zu bytes for a max pooling", blk * 4 * threads);
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (long pl = 0; pl < planes; pl++) {
        const long n = pl / CB, cb = pl % CB;
        const int L = C - cb * B < B ? (int)(C - cb * B) : B;   /* the block's real channels */
        const float *xp = x + (size_t)pl * H * W * B;
        float *yp = nchw ? tb + blk * (size_t)omp_get_thread_num() : y + (size_t)pl * blk;
        for (int oh = 0; oh < OH; oh++) {
            const int h0 = oh * op->sh - op->ph;
            const int r0 = h0 < 0 ? -h0 : 0, r1 = h0 + op->kh > H ? H - h0 : op->kh;
            for (int ow = 0; ow < OW; ow++) {
                const int w0 = ow * op->sw - op->pw;
                const int q0 = w0 < 0 ? -w0 : 0, q1 = w0 + op->kw > W ? W - w0 : op->kw;
                const size_t o = ((size_t)oh * OW + ow) * B;
                for (int g = 0; g < B; g += 8) {   /* 8 channels of the block at a time */
                    __m256 best = _mm256_setzero_ps(), idx = _mm256_set1_ps(255.0f);   /* no value in bounds: 0 */
                    int first = 1;
                    for (int r = r0; r < r1; r++)
                        for (int q = q0; q < q1; q++) {
                            const __m256 a = _mm256_loadu_ps(xp + ((size_t)(h0 + r) * W + w0 + q) * B + g);
                            if (first) { best = a; idx = _mm256_set1_ps((float)(r * op->kw + q)); first = 0; continue; }
                            if (!ws) { best = _mm256_max_ps(a, best); continue; }   /* a > best ? a : best, as below */
                            const __m256 gt = _mm256_cmp_ps(a, best, _CMP_GT_OQ);
                            best = _mm256_blendv_ps(best, a, gt);
                            idx = _mm256_blendv_ps(idx, _mm256_set1_ps((float)(r * op->kw + q)), gt);
                        }
                    _mm256_storeu_ps(yp + o + g, best);
                    if (ws) store_idx8(ws + (size_t)pl * blk + o + g, idx);
                }
            }
        }
        if (nchw) block_to_nchw(y, yp, op, n, cb, B, L);
    }
    free(tb);
    return 0;
}

static int host_maxpool_bwd(int threads, const nn_op *op, float *restrict dx, const float *restrict dy,
                            const uint8_t *restrict ws) {
    const int B = (int)nn_fmt_block(op->fmt_in, (size_t)op->c), H = op->h, W = op->w, OH = op->oh, OW = op->ow;
    const int C = op->c, nchw = op->fmt_out == NN_FMT_NCHW;
    const long CB = (C + B - 1) / B, planes = (long)op->n * CB;
    const int tiles = op->sh == op->kh && op->sw == op->kw && op->ph == 0 && op->pw == 0;
    const size_t blk = (size_t)OH * OW * B;
    float *tb = nchw ? malloc(sizeof(float) * blk * (size_t)threads) : NULL;
    if (nchw && !tb) return sd_err(SD_ENOMEM, "dnnl: cannot allocate %zu bytes for a max pooling", blk * 4 * threads);
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (long pl = 0; pl < planes; pl++) {   /* windows overlap only within a plane: no two threads add to one dx */
        float *dxp = dx + (size_t)pl * H * W * B;
        const long n = pl / CB, cb = pl % CB;
        const int L = C - cb * B < B ? (int)(C - cb * B) : B;
        float *t = nchw ? tb + blk * (size_t)omp_get_thread_num() : NULL;
        if (t) nchw_to_block(t, dy, op, n, cb, B, L);
        const float *dyp = t ? t : dy + (size_t)pl * blk;
        const uint8_t *wp = ws + (size_t)pl * blk;
        if (!tiles || OH * op->kh != H || OW * op->kw != W) memset(dxp, 0, sizeof(float) * (size_t)H * W * B);
        for (int oh = 0; oh < OH; oh++)
            for (int ow = 0; ow < OW; ow++)
                for (int g = 0; g < B; g += 8) {
                    const size_t o = ((size_t)oh * OW + ow) * B + g;
                    if (tiles) {
                        const __m256 gv = _mm256_loadu_ps(dyp + o);
                        const __m256i at = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(wp + o)));
                        for (int r = 0; r < op->kh; r++)
                            for (int q = 0; q < op->kw; q++) {
                                const __m256 m = _mm256_castsi256_ps(_mm256_cmpeq_epi32(at, _mm256_set1_epi32(r * op->kw + q)));
                                _mm256_storeu_ps(dxp + ((size_t)(oh * op->kh + r) * W + ow * op->kw + q) * B + g,
                                                 _mm256_and_ps(gv, m));
                            }
                        continue;
                    }
                    for (int l = 0; l < 8; l++) {
                        const int k = wp[o + l];
                        if (k == 255) continue;
                        const int ih = oh * op->sh - op->ph + k / op->kw, iw = ow * op->sw - op->pw + k % op->kw;
                        dxp[((size_t)ih * W + iw) * B + g + l] += dyp[o + l];
                    }
                }
    }
    free(tb);
    return 0;
}
#else
int dn_pool_host(const nn_op *op) { (void)op; return 0; }
size_t dn_pool_host_ws_bytes(const nn_op *op) { (void)op; return 0; }
static int host_maxpool_fwd(int threads, const nn_op *op, float *y, uint8_t *ws, const float *x) {
    (void)threads; (void)op; (void)y; (void)ws; (void)x;
    return sd_err(SD_ERROR, "internal: the host max pooling needs AVX2");
}
static int host_maxpool_bwd(int threads, const nn_op *op, float *dx, const float *dy, const uint8_t *ws) {
    (void)threads; (void)op; (void)dx; (void)dy; (void)ws;
    return sd_err(SD_ERROR, "internal: the host max pooling needs AVX2");
}
#endif

/* oneDNN's inference max pooling beside the host kernel (dn_maxpool_forward without a workspace): over nChw16c and
 * nhwc its AVX-512 kernel ran faster than the host's without the window indices to keep (mnist_cnn's pooling in
 * training 3-6% faster on the host, inference up to 15% slower; docs/performance.md), over nChw8c not. */
static int pool_inf_step(dnnl_ctx *c, const nn_op *op, pool_priv *p, dnnl_memory_desc_t *xm, dnnl_memory_desc_t *ym) {
    dn_desc id;
    dnnl_primitive_desc_t ipd;
    SD_TRY(dn_pool_descs(op, dnnl_forward_inference, &id, NULL));
    SD_TRY(dn_pd_new(c, &ipd, &id, 0, NULL));
    SD_TRY(dn_md_query(ipd, dnnl_query_src_md, 0, xm));
    SD_TRY(dn_md_query(ipd, dnnl_query_dst_md, 0, ym));
    SD_TRY(dn_step_make(c, &p->fwd_inf, ipd));
    SD_TRY(dn_step_arg(c, &p->fwd_inf, DNNL_ARG_SRC, xm));
    return dn_step_arg(c, &p->fwd_inf, DNNL_ARG_DST, ym);
}
/* ... with the host kernel in training: the stages between the graph's layouts and the primitive's */
static int pool_inf_make(dnnl_ctx *c, const nn_op *op, pool_priv *p) {
    dnnl_memory_desc_t xm, ym, xu, yu;
    SD_TRY(pool_inf_step(c, op, p, &xm, &ym));
    SD_TRY(dn_md_tag(&xu, 4, (dnnl_dims_t){op->n, op->c, op->h, op->w}, dn_fmt_tag(op->fmt_in)));
    SD_TRY(dn_md_tag(&yu, 4, (dnnl_dims_t){op->n, op->oc, op->oh, op->ow}, dn_fmt_tag(op->fmt_out)));
    size_t top = 0;
    SD_TRY(dn_stage_make(c, &p->f_x, &xu, &xm, 1, 0, &top));
    SD_TRY(dn_stage_make(c, &p->f_y, &yu, &ym, 0, 0, &top));
    return dn_grow(&c->tmp, &c->tmp_bytes, top);
}

int dn_pool_prepare(dnnl_ctx *c, nn_op *op, pool_priv *p) {
    if ((p->host = dn_pool_host(op))) {
        p->ws_bytes = dn_pool_host_ws_bytes(op);
        dn_note_host(c, "maxpool", "host");
        return op->fmt_in == NN_FMT_NCHW8C || getenv("SD_DNNL_POOL_HOST") ? 0 : pool_inf_make(c, op, p);
    }
    dn_desc fd, bd;
    dnnl_primitive_desc_t fpd, bpd;
    SD_TRY(dn_pool_descs(op, dnnl_forward_training, &fd, &bd));
    SD_TRY(dn_pd_new(c, &fpd, &fd, 0, NULL));
    int rc = dn_pd_new(c, &bpd, &bd, 0, fpd);
    if (rc < 0) { dnnl_primitive_desc_destroy(fpd); return rc; }
    dnnl_memory_desc_t xm, ym, xu, yu;
    SD_TRY(dn_md_query(fpd, dnnl_query_src_md, 0, &xm));
    SD_TRY(dn_md_query(fpd, dnnl_query_dst_md, 0, &ym));
    SD_TRY(dn_md_tag(&xu, 4, (dnnl_dims_t){op->n, op->c, op->h, op->w}, dn_fmt_tag(op->fmt_in)));
    SD_TRY(dn_md_tag(&yu, 4, (dnnl_dims_t){op->n, op->oc, op->oh, op->ow}, dn_fmt_tag(op->fmt_out)));
    size_t ftop = 0, btop = 0;
    SD_TRY(dn_stage_make(c, &p->f_x, &xu, &xm, 1, 0, &ftop));
    SD_TRY(dn_stage_make(c, &p->f_y, &yu, &ym, 0, 0, &ftop));
    SD_TRY(dn_stage_make(c, &p->b_dy, &yu, &ym, 1, 0, &btop));
    SD_TRY(dn_stage_make(c, &p->b_dx, &xu, &xm, 0, 0, &btop));
    SD_TRY(dn_grow(&c->tmp, &c->tmp_bytes, ftop > btop ? ftop : btop));
    if (op->kind != NN_OP_MAXPOOL) {   /* average pooling: no workspace */
        SD_TRY(dn_step_make(c, &p->fwd, fpd));
        SD_TRY(dn_step_make(c, &p->bwd, bpd));
        SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_SRC, &xm));
        SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_DST, &ym));
        SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_DIFF_DST, &ym));
        SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_DIFF_SRC, &xm));
        return 0;
    }
    dnnl_memory_desc_t wsmd;
    SD_TRY(dn_md_query(fpd, dnnl_query_workspace_md, 0, &wsmd));
    p->ws_bytes = dn_md_size(&wsmd);
    SD_TRY(dn_step_make(c, &p->fwd, fpd));
    SD_TRY(dn_step_make(c, &p->bwd, bpd));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_SRC, &xm));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_DST, &ym));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_WORKSPACE, &wsmd));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_DIFF_DST, &ym));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_WORKSPACE, &wsmd));
    SD_TRY(dn_step_arg(c, &p->bwd, DNNL_ARG_DIFF_SRC, &xm));
    dnnl_memory_desc_t ixm, iym;   /* the training primitive's layouts: both take the graph's tags */
    return pool_inf_step(c, op, p, &ixm, &iym);
}

int dn_maxpool_forward(nn_backend *be, const nn_op *op, float *y, void *ws, const float *x) {
    NEED_PRIV(op);
    dnnl_ctx *c = CTX(be);
    pool_priv *p = PRIV(op, pool_priv);
    if (p->host && (ws || !p->fwd_inf.prim)) {
        return host_maxpool_fwd(c->threads, op, y, ws, x);
    }
    dn_threads_on(c);
    void *xs, *ys = dn_stage_out(c, &p->f_y, y);
    SD_TRY(dn_stage_in(c, &p->f_x, x, &xs));
    void *args[3] = {xs, ys, ws};
    SD_TRY(dn_step_run(c, ws ? &p->fwd : &p->fwd_inf, args));
    SD_TRY(dn_stage_out_done(c, &p->f_y, y));
    return dn_strm_wait(c);
}

int dn_maxpool_backward(nn_backend *be, const nn_op *op, float *dx, const float *dy,
                        const float *x, const float *y, const void *ws) {
    (void)x; (void)y;
    NEED_PRIV(op);
    dnnl_ctx *c = CTX(be);
    pool_priv *p = PRIV(op, pool_priv);
    if (p->host) {
        return host_maxpool_bwd(c->threads, op, dx, dy, ws);
    }
    dn_threads_on(c);
    void *dys, *dxs = dn_stage_out(c, &p->b_dx, dx);
    SD_TRY(dn_stage_in(c, &p->b_dy, dy, &dys));
    void *args[3] = {dys, (void *)ws, dxs};
    SD_TRY(dn_step_run(c, &p->bwd, args));
    SD_TRY(dn_stage_out_done(c, &p->b_dx, dx));
    return dn_strm_wait(c);
}

int dn_avgpool_forward(nn_backend *be, const nn_op *op, float *y, const float *x) {
    NEED_PRIV(op);
    dnnl_ctx *c = CTX(be);
    pool_priv *p = PRIV(op, pool_priv);
    dn_threads_on(c);
    void *xs, *ys = dn_stage_out(c, &p->f_y, y);
    SD_TRY(dn_stage_in(c, &p->f_x, x, &xs));
    void *args[2] = {xs, ys};
    SD_TRY(dn_step_run(c, &p->fwd, args));
    SD_TRY(dn_stage_out_done(c, &p->f_y, y));
    return dn_strm_wait(c);
}

int dn_avgpool_backward(nn_backend *be, const nn_op *op, float *dx, const float *dy) {
    NEED_PRIV(op);
    dnnl_ctx *c = CTX(be);
    pool_priv *p = PRIV(op, pool_priv);
    dn_threads_on(c);
    void *dys, *dxs = dn_stage_out(c, &p->b_dx, dx);
    SD_TRY(dn_stage_in(c, &p->b_dy, dy, &dys));
    void *args[2] = {dys, dxs};
    SD_TRY(dn_step_run(c, &p->bwd, args));
    SD_TRY(dn_stage_out_done(c, &p->b_dx, dx));
    return dn_strm_wait(c);
}
