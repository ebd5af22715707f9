/* dnnl_conv — convolution on oneDNN: training forward and backward through reorders into the chosen layouts,
 * and the inference convolution (conv2d_infer) with batch norm folded into its weights and the residual add and
 * relu as post-ops, its folded weights cached until the memory they came from is written. */
#include "be_dnnl/dnnl_be.h"

/* ---- convolution ----------------------------------------------------------------------------------- */

/* Algorithm: Winograd F(4x4,3x3) for 3x3 stride-1 convolutions over 16+ channels when --autotune is on (as
 * cuDNN's search picks it): 2.25x fewer multiplications, errors within the parity tolerance (tests/test_parity.c
 * runs the workloads' layers at their batch sizes through it). Not on outputs smaller than its 4x4 tile: there
 * most of each tile is padding and direct is faster (docs/performance.md). Direct otherwise, and whenever oneDNN
 * has no Winograd implementation for the shape (nor for bf16, in oneDNN 2.6). oneDNN 3.x has no CPU Winograd at all:
 * direct there (DN_CPU_WINOGRAD), unless SD_DNNL_CONV_ALG=winograd asks (which then falls back to direct). */
static dnnl_alg_kind_t conv_alg(const dnnl_ctx *c, const nn_op *op, dnnl_data_type_t dt) {
    const char *force = getenv("SD_DNNL_CONV_ALG");   /* direct|winograd: for experiments */
    if ((force && strcmp(force, "direct") == 0) || dt != dnnl_f32) return dnnl_convolution_direct;
    int wino = op->kh == 3 && op->kw == 3 && op->sh == 1 && op->sw == 1 && op->c >= 16 && op->oc >= 16;
    if (force && strcmp(force, "winograd") == 0) return wino ? dnnl_convolution_winograd : dnnl_convolution_direct;
    return DN_CPU_WINOGRAD && c->autotune && wino && op->oh >= 4 && op->ow >= 4 ? dnnl_convolution_winograd
                                                                               : dnnl_convolution_direct;
}

/* Name the kernels of a convolution's training primitives in the environment (backend_impl). */
static void conv_note(dnnl_ctx *c, const conv_priv *p) {
    dn_note_impl(c, "conv fwd", p->fwd.prim);
    dn_note_impl(c, "bwd-data", p->bwd_d.prim);
    if (p->mm.on) dn_note_impl(c, "bwd-weights im2col+matmul", p->mm.mm.prim);
    else dn_note_impl(c, "bwd-weights", p->bwd_w.prim);
}

static void conv_md_free(conv_priv *p) {
    dn_md_free(&p->x_md); dn_md_free(&p->y_md); dn_md_free(&p->w_md); dn_md_free(&p->b_md);
}

/* The training primitives of one convolution, each pass (forward, backward-data, backward-weights) multiplying
 * in its own type (p->dt_f, dt_d, dt_w: f32, or bf16 on bf16 copies of its inputs); outputs stay f32. note: name
 * the kernels in the environment (not for a trial made only to be timed). With p->mm.on backward-weights is
 * im2col + matmul (p->mm), and no backward-weights convolution is made. */
static int conv_make(dnnl_ctx *c, nn_op *op, conv_priv *p, int note) {
    const dnnl_dims_t xd = {op->n, op->c, op->h, op->w}, yd = {op->n, op->oc, op->oh, op->ow};
    const dnnl_dims_t wd = {op->oc, op->c, op->kh, op->kw}, bd = {op->oc};
    dnnl_dims_t st = {op->sh, op->sw}, pl = {op->ph, op->pw}, pr;
    int prh = 0, prw = 0;
    SD_TRY(dn_pad_r(op->h, op->kh, op->sh, op->ph, op->oh, &prh));
    SD_TRY(dn_pad_r(op->w, op->kw, op->sw, op->pw, op->ow, &prw));
    pr[0] = prh; pr[1] = prw;
    conv_md_free(p);   /* the graph's layouts (nn_fmt), kept with p (the inference convolution reads w_md, b_md) */
    SD_TRY(dn_md_tag_kept(&p->x_md, 4, xd, dnnl_f32, dn_fmt_tag(op->fmt_in)));
    SD_TRY(dn_md_tag_kept(&p->y_md, 4, yd, dnnl_f32, dn_fmt_tag(op->fmt_out)));
    SD_TRY(dn_md_tag_kept(&p->w_md, 4, wd, dnnl_f32, dnnl_oihw));
    SD_TRY(dn_md_tag_kept(&p->b_md, 1, bd, dnnl_f32, dnnl_x));
    dnnl_memory_desc_t xa, ya, wa;
    /* SD_DNNL_ACT=nhwc|nchw forces the activation layout convolutions run in (default: oneDNN's choice,
     * nChw16c here); for layout experiments on other CPUs. */
    const char *lay = getenv("SD_DNNL_ACT");
    dnnl_format_tag_t act = dnnl_format_tag_any;
    if (lay && strcmp(lay, "nhwc") == 0) act = dnnl_nhwc;
    if (lay && strcmp(lay, "nchw") == 0) act = dnnl_nchw;
    SD_TRY(dn_md_tag(&xa, 4, xd, act));
    SD_TRY(dn_md_tag(&ya, 4, yd, act));
    SD_TRY(dn_md_tag(&wa, 4, wd, dnnl_format_tag_any));
    /* what each pass's products read: x, w and dy in its type (bf16 copies made by the stages below) */
    dnnl_memory_desc_t xf, wf, wdd, ydd, xw, yw;
    SD_TRY(dn_md_tag_dt(&xf, 4, xd, p->dt_f, act));
    SD_TRY(dn_md_tag_dt(&wf, 4, wd, p->dt_f, dnnl_format_tag_any));
    SD_TRY(dn_md_tag_dt(&wdd, 4, wd, p->dt_d, dnnl_format_tag_any));
    SD_TRY(dn_md_tag_dt(&ydd, 4, yd, p->dt_d, act));
    SD_TRY(dn_md_tag_dt(&xw, 4, xd, p->dt_w, act));
    SD_TRY(dn_md_tag_dt(&yw, 4, yd, p->dt_w, act));
    /* Winograd or direct per pass, falling back to direct below */
    dnnl_alg_kind_t af = conv_alg(c, op, p->dt_f), ad = conv_alg(c, op, p->dt_d), aw = conv_alg(c, op, p->dt_w);

    /* forward (training: the same primitive serves inference); a backward pass is made against a forward of its
     * own type and algorithm (oneDNN's hint), which is the training forward where they agree */
    dn_desc fd, dd, bwd, hd;
    dnnl_primitive_desc_t fpd = NULL, dpd = NULL, wpd = NULL, hpd = NULL;
    const int want_w = !p->mm.on;                  /* a backward-weights convolution */
    dnnl_memory_desc_t dxa = xa;
    /* backward data: a diff_src blocked by 16 on a few channels pads them (3 -> 16) and runs slower than plain
     * nchw (docs/performance.md), so force nchw there. Its weights layout is its own (reordered from the user
     * copy). */
    if (op->c < 16) dxa = p->x_md;
    for (;;) {
        int rc = 0;
        SD_TRY(dn_conv_fwd_desc(&fd, dnnl_forward_training, af, &xf, &wf, &p->b_md, &ya, st, pl, pr));
        SD_TRY(dn_conv_bwd_data_desc(&dd, ad, &dxa, &wdd, &ydd, st, pl, pr));
        SD_TRY(dn_conv_bwd_weights_desc(&bwd, aw, &xw, &wa, &p->b_md, &yw, st, pl, pr));
        rc = dn_pd_new(c, &fpd, &fd, 0, NULL);
        for (int pass = 0; pass < (want_w ? 2 : 1) && rc == 0; pass++) {   /* backward-data, backward-weights */
            dnnl_data_type_t dt = pass == 0 ? p->dt_d : p->dt_w;
            dnnl_alg_kind_t alg = pass == 0 ? ad : aw;
            if (dt != p->dt_f || alg != af) {
                dnnl_memory_desc_t hx, hw;
                SD_TRY(dn_md_tag_dt(&hx, 4, xd, dt, act));
                SD_TRY(dn_md_tag_dt(&hw, 4, wd, dt, dnnl_format_tag_any));
                SD_TRY(dn_conv_fwd_desc(&hd, dnnl_forward_training, alg, &hx, &hw, &p->b_md, &ya, st, pl, pr));
                rc = dn_pd_new(c, &hpd, &hd, 0, NULL);
            }
            if (rc == 0) rc = dn_pd_new(c, pass == 0 ? &dpd : &wpd, pass == 0 ? &dd : &bwd, 0, hpd ? hpd : fpd);
            if (hpd) dnnl_primitive_desc_destroy(hpd);
            hpd = NULL;
        }
        if (rc == 0) break;
        if (fpd) dnnl_primitive_desc_destroy(fpd);
        if (dpd) dnnl_primitive_desc_destroy(dpd);
        if (wpd) dnnl_primitive_desc_destroy(wpd);
        fpd = dpd = wpd = NULL;
        if (af == dnnl_convolution_direct && ad == af && aw == af) return rc;
        af = ad = aw = dnnl_convolution_direct;   /* no Winograd kernel for this shape here */
    }
    dnnl_memory_desc_t fx, fw, fy, ddx, dw_, ddy, wx, wdw, wdy, wdb;
    SD_TRY(dn_md_query(fpd, dnnl_query_src_md, 0, &fx));
    SD_TRY(dn_md_query(fpd, dnnl_query_weights_md, 0, &fw));
    SD_TRY(dn_md_query(fpd, dnnl_query_dst_md, 0, &fy));

    SD_TRY(dn_md_query(dpd, dnnl_query_diff_src_md, 0, &ddx));
    SD_TRY(dn_md_query(dpd, dnnl_query_weights_md, 0, &dw_));
    SD_TRY(dn_md_query(dpd, dnnl_query_diff_dst_md, 0, &ddy));

    if (want_w) {
        SD_TRY(dn_md_query(wpd, dnnl_query_src_md, 0, &wx));
        SD_TRY(dn_md_query(wpd, dnnl_query_diff_weights_md, 0, &wdw));
        SD_TRY(dn_md_query(wpd, dnnl_query_diff_dst_md, 0, &wdy));
        SD_TRY(dn_md_query(wpd, dnnl_query_diff_weights_md, 1, &wdb));
    }

    /* primitives (dn_step_make takes the pds) */
    SD_TRY(dn_step_make(c, &p->fwd, fpd));
    SD_TRY(dn_step_make(c, &p->bwd_d, dpd));
    if (want_w) SD_TRY(dn_step_make(c, &p->bwd_w, wpd));
    if (note) conv_note(c, p);
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_SRC, &fx));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_WEIGHTS, &fw));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_BIAS, &p->b_md));
    SD_TRY(dn_step_arg(c, &p->fwd, DNNL_ARG_DST, &fy));
    SD_TRY(dn_step_arg(c, &p->bwd_d, DNNL_ARG_DIFF_DST, &ddy));
    SD_TRY(dn_step_arg(c, &p->bwd_d, DNNL_ARG_WEIGHTS, &dw_));
    SD_TRY(dn_step_arg(c, &p->bwd_d, DNNL_ARG_DIFF_SRC, &ddx));
    if (want_w) {
        SD_TRY(dn_step_arg(c, &p->bwd_w, DNNL_ARG_SRC, &wx));
        SD_TRY(dn_step_arg(c, &p->bwd_w, DNNL_ARG_DIFF_DST, &wdy));
        SD_TRY(dn_step_arg(c, &p->bwd_w, DNNL_ARG_DIFF_WEIGHTS, &wdw));
        SD_TRY(dn_step_arg(c, &p->bwd_w, DNNL_ARG_DIFF_BIAS, &wdb));
    }

    /* temporaries: forward and backward are separate calls, each from offset 0 */
    size_t ftop = 0, btop = 0;
    SD_TRY(dn_stage_make(c, &p->f_x, &p->x_md, &fx, 1, 0, &ftop));
    SD_TRY(dn_stage_make(c, &p->f_w, &p->w_md, &fw, 1, 0, &ftop));
    SD_TRY(dn_stage_make(c, &p->f_y, &p->y_md, &fy, 0, 0, &ftop));
    p->off_zero_b = dn_bump(&ftop, sizeof(float) * op->oc);
    if (want_w) {
        SD_TRY(dn_stage_make(c, &p->w_x, &p->x_md, &wx, 1, 0, &btop));
        SD_TRY(dn_stage_make(c, &p->w_dy, &p->y_md, &wdy, 1, 0, &btop));
        SD_TRY(dn_stage_make(c, &p->w_dw, &p->w_md, &wdw, 0, 1, &btop));  /* dw += reorder(diff weights) */
        p->off_dw = p->w_dw.off;
        p->off_db = dn_bump(&btop, dn_md_size(&wdb));
    } else {   /* the matmul path stages its own dy (from offset 0 of the temporaries) */
        memset(&p->w_x, 0, sizeof p->w_x); memset(&p->w_dy, 0, sizeof p->w_dy); memset(&p->w_dw, 0, sizeof p->w_dw);
    }
    p->dy_shared = want_w && dn_md_equal(&ddy, &wdy);
    if (!p->dy_shared) SD_TRY(dn_stage_make(c, &p->d_dy, &p->y_md, &ddy, 1, 0, &btop));
    SD_TRY(dn_stage_make(c, &p->d_w, &p->w_md, &dw_, 1, 0, &btop));
    SD_TRY(dn_stage_make(c, &p->d_dx, &p->x_md, &ddx, 0, 0, &btop));
    SD_TRY(dn_grow(&c->tmp, &c->tmp_bytes, ftop > btop ? ftop : btop));
    return 0;
}

static void conv_train_release(conv_priv *p) {
    dn_step_destroy(&p->fwd); dn_step_destroy(&p->bwd_d); dn_step_destroy(&p->bwd_w);
    dn_stage_destroy(&p->f_x); dn_stage_destroy(&p->f_w); dn_stage_destroy(&p->f_y);
    dn_stage_destroy(&p->d_dy);
    dn_stage_destroy(&p->d_w); dn_stage_destroy(&p->d_dx);
    dn_stage_destroy(&p->w_x); dn_stage_destroy(&p->w_dy); dn_stage_destroy(&p->w_dw);
    conv_md_free(p);
}

static int conv_fwd(dnnl_ctx *c, const nn_op *op, conv_priv *p, float *y, const float *x, const float *w,
                    const float *b);
static int conv_bwd_w(dnnl_ctx *c, const nn_op *op, conv_priv *p, float *dw, float *db, const float *dy,
                      const float *x);
static int conv_bwd_d(dnnl_ctx *c, const nn_op *op, conv_priv *p, float *dx, const float *dy, const float *w);

/* ---- backward-weights as im2col + one bf16 matmul (conv_mm) ---------------------------------------------------- */

/* Above this the column matrix is made a few images at a time (each chunk one matmul call, summing into dW). */
#define MM_COL_MAX ((size_t)32 << 20)

static void conv_mm_release(conv_mm *m) {
    dn_step_destroy(&m->mm);
    dn_stage_destroy(&m->dy);
    memset(m, 0, sizeof *m);
}

/* The matmul, the bf16 nhwc dy stage and the column matrix's room in ctx->tmp, from offset 0 (backward-weights
 * is a call of its own: what conv_make places there is not live across it, dy_shared being off). */
static int conv_mm_make(dnnl_ctx *c, const nn_op *op, const conv_priv *p, conv_mm *m, int max_nb) {
    conv_mm_release(m);
    const dnnl_dim_t S = (dnnl_dim_t)op->oh * op->ow, O = op->oc, KC = (dnnl_dim_t)op->c * op->kh * op->kw;
    int nb = op->n;
    while (nb > 1 && (nb > max_nb || (size_t)nb * S * KC * 2 > MM_COL_MAX)) {   /* the largest divisor of n that fits */
        nb--;
        while (op->n % nb) nb--;
    }
    m->nb = nb;
    const dnnl_dim_t K = nb * S;
    const dnnl_dims_t yd = {op->n, op->oc, op->oh, op->ow};
    dnnl_memory_desc_t dyb, a, b, d;
    SD_TRY(dn_md_tag_dt(&dyb, 4, yd, dnnl_bf16, dnnl_nhwc));
    /* dy nhwc is [n*oh*ow][oc] rows: its transpose [oc][n*oh*ow] is a strided view, no copy */
    SD_TRY(dn_md_strides_dt(&a, 2, (dnnl_dims_t){O, K}, dnnl_bf16, (dnnl_dims_t){1, O}));
    SD_TRY(dn_md_strides_dt(&b, 2, (dnnl_dims_t){K, KC}, dnnl_bf16, (dnnl_dims_t){KC, 1}));
    SD_TRY(dn_md_strides(&d, 2, (dnnl_dims_t){O, KC}, (dnnl_dims_t){KC, 1}));   /* the user's OIHW dW */
    dn_desc md;
    dnnl_primitive_desc_t pd;
    SD_TRY(dn_matmul_desc(&md, &a, &b, NULL, &d));
    SD_TRY(dn_pd_new(c, &pd, &md, 1, NULL));                                    /* dW += (sum post-op) */
    SD_TRY(dn_step_make(c, &m->mm, pd));
    SD_TRY(dn_step_arg(c, &m->mm, DNNL_ARG_SRC, &a));
    SD_TRY(dn_step_arg(c, &m->mm, DNNL_ARG_WEIGHTS, &b));
    SD_TRY(dn_step_arg(c, &m->mm, DNNL_ARG_DST, &d));
    size_t top = 0;
    SD_TRY(dn_stage_make(c, &m->dy, &p->y_md, &dyb, 1, 0, &top));
    m->off_col = dn_bump(&top, (size_t)K * KC * 2);
    return dn_grow(&c->tmp, &c->tmp_bytes, top);
}

/* dw += dy^T col(x) and db += sum(dy) (conv_bwd_w's contract), nb images per matmul call */
static int conv_mm_run(dnnl_ctx *c, const nn_op *op, conv_mm *m, float *dw, float *db, const float *dy,
                       const float *x) {
    void *dys;
    SD_TRY(dn_stage_in(c, &m->dy, dy, &dys));
    uint16_t *col = (uint16_t *)((char *)c->tmp + m->off_col);
    const size_t a_bytes = (size_t)m->nb * op->oh * op->ow * op->oc * 2;   /* dy rows of nb images */
    for (int n0 = 0, j = 0; n0 < op->n; n0 += m->nb, j++) {
        if (j > 0) SD_TRY(dn_strm_wait(c));   /* the last matmul has read col */
        dn_im2col_bf16(col, x, op, n0, m->nb, c->threads);
        void *a[3] = {(char *)dys + (size_t)j * a_bytes, col, dw};
        SD_TRY(dn_step_run(c, &m->mm, a));
    }
    if (db) dn_conv_db_add(db, dy, op, c->threads);   /* from fp32 dy, as oneDNN's diff_bias accumulates */
    return dn_strm_wait(c);
}

/* ---- bf16 forward and backward-data of a small output as matmuls (conv_bm) ------------------------------------
 * On AMX, oneDNN 2.6's bf16 convolutions at 4x4 and 2x2 outputs ran at 300-700 GFLOP/s against 1,100-2,500 at 8x8
 * and larger (resnet18_cifar, vgg16_cifar; docs/precision.md): there the column matrix is small and each pass is
 * one bf16 matmul, as the fp32 passes are one sgemm (conv_gemm_choose) and backward-weights one matmul (conv_mm). */
#define BM_MAX_S 16                           /* output positions (oh*ow) up to which the matmuls compete */
#define BM_BYTES_MAX ((size_t)96 << 20)       /* ctx->tmp bytes they need */

/* SD_DNNL_GEMM=on: the small-output passes as sgemm (fp32, gemm_ok) or as bf16 matmuls (bf16, bm_ok) wherever they
 * can run, untimed; =off: never */
static int gemm_mode(void) {
    const char *e = getenv("SD_DNNL_GEMM");
    return !e ? 0 : !strcmp(e, "on") ? 1 : !strcmp(e, "off") ? -1 : 0;
}
static void conv_bm_release(conv_bm *m) {
    dn_step_destroy(&m->mf); dn_step_destroy(&m->md);
    dn_stage_destroy(&m->w); dn_stage_destroy(&m->dy);
    memset(m, 0, sizeof *m);
}
static size_t bm_bytes(const nn_op *op) {
    const size_t M = (size_t)op->n * op->oh * op->ow, KC = (size_t)op->c * op->kh * op->kw, O = (size_t)op->oc;
    const size_t f = M * KC * 2 + M * O * 4, d = M * O * 2 + M * KC * 4;
    return O * KC * 2 + (f > d ? f : d) + 4 * 4096;
}
static int bm_ok(const dnnl_ctx *c, const nn_op *op) {
    return c->cdt == dnnl_bf16 && op->oh * op->ow <= BM_MAX_S && bm_bytes(op) <= BM_BYTES_MAX;
}
/* Both matmuls and the stages; ctx->tmp: the bf16 weights from offset 0, then (forward) the bf16 column matrix and
 * y's f32 rows, or (backward-data) dy's bf16 rows and the f32 dcol. */
static int conv_bm_make(dnnl_ctx *c, const nn_op *op, const conv_priv *p, conv_bm *m) {
    conv_bm_release(m);
    const dnnl_dim_t M = (dnnl_dim_t)op->n * op->oh * op->ow, O = op->oc, KC = (dnnl_dim_t)op->c * op->kh * op->kw;
    const dnnl_dims_t wd = {op->oc, op->c, op->kh, op->kw}, yd = {op->n, op->oc, op->oh, op->ow};
    dnnl_memory_desc_t wb, dyb, a, b, d;
    dn_desc desc;
    dnnl_primitive_desc_t pd;
    /* forward: A = col [M][KC], B = W^T, a strided view [KC][O] of OIHW, C = rows [M][O] */
    SD_TRY(dn_md_strides_dt(&a, 2, (dnnl_dims_t){M, KC}, dnnl_bf16, (dnnl_dims_t){KC, 1}));
    SD_TRY(dn_md_strides_dt(&b, 2, (dnnl_dims_t){KC, O}, dnnl_bf16, (dnnl_dims_t){1, KC}));
    SD_TRY(dn_md_strides(&d, 2, (dnnl_dims_t){M, O}, (dnnl_dims_t){O, 1}));
    SD_TRY(dn_matmul_desc(&desc, &a, &b, NULL, &d));
    SD_TRY(dn_pd_new(c, &pd, &desc, 0, NULL));
    SD_TRY(dn_step_make(c, &m->mf, pd));
    SD_TRY(dn_step_arg(c, &m->mf, DNNL_ARG_SRC, &a));
    SD_TRY(dn_step_arg(c, &m->mf, DNNL_ARG_WEIGHTS, &b));
    SD_TRY(dn_step_arg(c, &m->mf, DNNL_ARG_DST, &d));
    /* backward-data: A = dy [M][O] (nhwc rows), B = W [O][KC], C = dcol [M][KC] */
    SD_TRY(dn_md_strides_dt(&a, 2, (dnnl_dims_t){M, O}, dnnl_bf16, (dnnl_dims_t){O, 1}));
    SD_TRY(dn_md_strides_dt(&b, 2, (dnnl_dims_t){O, KC}, dnnl_bf16, (dnnl_dims_t){KC, 1}));
    SD_TRY(dn_md_strides(&d, 2, (dnnl_dims_t){M, KC}, (dnnl_dims_t){KC, 1}));
    SD_TRY(dn_matmul_desc(&desc, &a, &b, NULL, &d));
    SD_TRY(dn_pd_new(c, &pd, &desc, 0, NULL));
    SD_TRY(dn_step_make(c, &m->md, pd));
    SD_TRY(dn_step_arg(c, &m->md, DNNL_ARG_SRC, &a));
    SD_TRY(dn_step_arg(c, &m->md, DNNL_ARG_WEIGHTS, &b));
    SD_TRY(dn_step_arg(c, &m->md, DNNL_ARG_DST, &d));
    size_t top = 0;
    SD_TRY(dn_md_tag_dt(&wb, 4, wd, dnnl_bf16, dnnl_oihw));
    SD_TRY(dn_stage_make(c, &m->w, &p->w_md, &wb, 1, 0, &top));
    const size_t wtop = top;
    m->off_col = dn_bump(&top, (size_t)M * KC * 2);
    m->off_rows = dn_bump(&top, (size_t)M * O * 4);
    size_t btop = wtop;
    SD_TRY(dn_md_tag_dt(&dyb, 4, yd, dnnl_bf16, dnnl_nhwc));
    SD_TRY(dn_stage_make(c, &m->dy, &p->y_md, &dyb, 1, 0, &btop));
    m->off_dcol = dn_bump(&btop, (size_t)M * KC * 4);
    return dn_grow(&c->tmp, &c->tmp_bytes, top > btop ? top : btop);
}
static int bm_fwd(dnnl_ctx *c, const nn_op *op, conv_bm *m, float *y, const float *x, const float *w,
                  const float *b) {
    void *ws;
    SD_TRY(dn_stage_in(c, &m->w, w, &ws));
    uint16_t *col = (uint16_t *)((char *)c->tmp + m->off_col);
    float *rows = (float *)((char *)c->tmp + m->off_rows);
    dn_im2col_bf16(col, x, op, 0, op->n, c->threads);
    void *a[3] = {col, ws, rows};
    SD_TRY(dn_step_run(c, &m->mf, a));
    SD_TRY(dn_strm_wait(c));
    dn_rows_to(y, rows, b, op, c->threads);
    return 0;
}
static int bm_bwd_d(dnnl_ctx *c, const nn_op *op, conv_bm *m, float *dx, const float *dy, const float *w) {
    void *ws, *dys;
    SD_TRY(dn_stage_in(c, &m->w, w, &ws));
    SD_TRY(dn_stage_in(c, &m->dy, dy, &dys));
    float *dcol = (float *)((char *)c->tmp + m->off_dcol);
    void *a[3] = {dys, ws, dcol};
    SD_TRY(dn_step_run(c, &m->md, a));
    SD_TRY(dn_strm_wait(c));
    dn_col2im_f32(dx, dcol, op, c->threads);
    return 0;
}
static double bm_pass_s(dnnl_ctx *c, const nn_op *op, conv_bm *m, int pass, float *t[6]) {
    double t0 = omp_get_wtime();
    int rc = pass == 0 ? bm_fwd(c, op, m, t[1], t[0], t[2], NULL) : bm_bwd_d(c, op, m, t[4], t[3], t[2]);
    return rc ? -1 : omp_get_wtime() - t0;
}
static void bm_note(dnnl_ctx *c, const conv_bm *m) {
    if (m->f) dn_note_impl(c, "conv fwd im2col+matmul", m->mf.prim);
    if (m->d) dn_note_impl(c, "bwd-data matmul+col2im", m->md.prim);
}

/* Seconds of one call of a pass on the scratch tensors t (x, y, w, dy, dx, dw), or -1 on an error. */
/* Zeroed x, y, w, dy, dx, dw of op's shapes (t[0..5], NULL where not made), for the timed choices. */
static int conv_timing_bufs(const nn_op *op, float *t[6]) {
    const size_t nx = nn_fmt_elems(op->fmt_in, op->n, op->c, op->h, op->w);
    const size_t ny = nn_fmt_elems(op->fmt_out, op->n, op->oc, op->oh, op->ow);
    const size_t nw = (size_t)op->oc * op->c * op->kh * op->kw;
    const size_t n[6] = {nx, ny, nw, ny, nx, nw};
    for (int i = 0; i < 6; i++) {
        t[i] = aligned_alloc(ALIGN, (n[i] * sizeof(float) + ALIGN - 1) / ALIGN * ALIGN);
        if (!t[i]) return sd_err(SD_ENOMEM, "dnnl: cannot allocate %zu bytes to time a convolution", n[i] * 4);
        memset(t[i], 0, n[i] * sizeof(float));
    }
    return 0;
}

static double conv_pass_s(dnnl_ctx *c, const nn_op *op, conv_priv *p, int pass, float *t[6]) {
    double t0 = omp_get_wtime();
    int rc = pass == 0 ? conv_fwd(c, op, p, t[1], t[0], t[2], NULL)
           : pass == 1 ? conv_bwd_w(c, op, p, t[5], NULL, t[3], t[0])
                       : conv_bwd_d(c, op, p, t[4], t[3], t[2]);
    return rc ? -1 : omp_get_wtime() - t0;
}
static double conv_mm_s(dnnl_ctx *c, const nn_op *op, conv_mm *m, float *t[6]) {
    double t0 = omp_get_wtime();
    return conv_mm_run(c, op, m, t[5], NULL, t[3], t[0]) ? -1 : omp_get_wtime() - t0;
}

/* A pass as it is (v 0) against an alternative (v 1) that set(p, pass, v) switches, for the passes ok[] names:
 * alternating call by call, so that a slow spell of the host slows both, each keeping its fastest of 3 after an
 * untimed call; best[pass][v] in seconds, set back to 0 after. */
typedef void (*pass_set)(conv_priv *p, int pass, int v);
static int time_alternative(dnnl_ctx *c, const nn_op *op, conv_priv *p, const int ok[3], pass_set set,
                            double best[3][2]) {
    float *t[6] = {0};
    int rc = conv_timing_bufs(op, t);
    for (int pass = 0; pass < 3; pass++) best[pass][0] = best[pass][1] = 1e30;
    for (int r = 0; r < 4 && rc == 0; r++)
        for (int pass = 0; pass < 3 && rc == 0; pass++)
            for (int v = 0; v < 2 && rc == 0 && ok[pass]; v++) {
                set(p, pass, v);
                const double sec = conv_pass_s(c, op, p, pass, t);
                if (sec < 0) rc = SD_EBACKEND;
                else if (r > 0 && sec < best[pass][v]) best[pass][v] = sec;
            }
    for (int pass = 0; pass < 3; pass++) if (ok[pass]) set(p, pass, 0);
    for (int i = 0; i < 6; i++) free(t[i]);
    return rc;
}

/* SD_DNNL_BWDW: off, matmul (always the im2col + matmul backward-weights), matmul1 (one image per matmul call);
 * unset or anything else: the matmul is a candidate the timing may choose */
enum { BWDW_TRY, BWDW_OFF, BWDW_MATMUL, BWDW_MATMUL1 };
static int bwdw_mode(void) {
    const char *bw = getenv("SD_DNNL_BWDW");
    return !bw ? BWDW_TRY : !strcmp(bw, "off") ? BWDW_OFF : !strcmp(bw, "matmul") ? BWDW_MATMUL
           : !strcmp(bw, "matmul1") ? BWDW_MATMUL1 : BWDW_TRY;
}

/* p's primitives made again with m as its backward-weights: no backward-weights convolution is made; dt_w = dt_f
 * asks no forward hint of its own */
static int conv_take_mm(dnnl_ctx *c, nn_op *op, conv_priv *p, const conv_mm *m) {
    conv_train_release(p);
    p->mm = *m;
    p->mm.on = 1;
    p->dt_w = p->dt_f;
    return conv_make(c, op, p, 1);
}

/* Under bf16 on AMX, oneDNN 2.6's bf16 kernels are 2x fp32's on large images and up to 3x slower on small ones
 * (backward-weights at 4x4, 512 channels: 47 ms against 18 ms; resnet18_cifar trained slower in bf16 than in
 * fp32); on AVX512_BF16 alone fp32 Winograd beats bf16 direct on many 3x3 layers (mnist_cnn trained at 0.89x
 * fp32's speed all in bf16). So each pass of each convolution is timed both ways here, as cuDNN's search times
 * its algorithms, and runs in the faster type. The two alternate call by call, so a slow spell of the host slows both; each keeps its
 * fastest of 3 calls after a first untimed one. SD_DNNL_BF16_PASSES=all keeps every pass bf16.
 * Backward-weights has a third candidate, im2col + one bf16 matmul (conv_mm): both versions' bf16 kernels are
 * slowest there on small images (512->512 3x3 at 4x4: 50 ms a call), where the same product as a matmul took
 * 4-10 ms (docs/roofline.md). SD_DNNL_BWDW=matmul always takes it, =off never, =matmul1 always with one image
 * per matmul call (for tests and comparisons). */
static int conv_choose(dnnl_ctx *c, nn_op *op, conv_priv *p) {
    const int mode = bwdw_mode(), mm_one = mode == BWDW_MATMUL1;
    const int mm_force = mode == BWDW_MATMUL || mm_one, mm_try = mode != BWDW_OFF;
    float *t[6] = {0};
    conv_priv q;                                    /* the f32 primitives, beside p's bf16 ones */
    memset(&q, 0, sizeof q);
    q.dt_f = q.dt_d = q.dt_w = dnnl_f32;
    int rc = conv_make(c, op, &q, 0);
    if (rc == 0) rc = conv_timing_bufs(op, t);
    conv_mm m;                                      /* the im2col + matmul backward-weights */
    memset(&m, 0, sizeof m);
    int have_mm = 0;
    if (rc == 0 && mm_try) {
        const int r = conv_mm_make(c, op, p, &m, mm_one ? 1 : op->n);
        if (r == 0) have_mm = 1;
        else if (mm_force) rc = r;
        else conv_mm_release(&m);                   /* no such matmul here: the two convolutions compete */
    }
    const int gm = gemm_mode();                     /* forward and backward-data as bf16 matmuls (conv_bm) */
    int have_bm = 0;
    if (rc == 0 && gm >= 0 && bm_ok(c, op)) {
        const int r = conv_bm_make(c, op, p, &p->bm);
        if (r == 0) have_bm = 1;
        else if (gm > 0) rc = r;
        else conv_bm_release(&p->bm);
    }
    double best[4][3] = {{1e30, 1e30, 1e30}, {1e30, 1e30, 1e30}, {1e30, 1e30, 1e30},
                         {1e30, 1e30, 1e30}};   /* [bf16, f32, mm, bm][pass] */
    for (int k = 0; k < 4 && rc == 0; k++)
        for (int pass = 0; pass < 3 && rc == 0; pass++)
            for (int v = 0; v < 4 && rc == 0; v++) {
                if (v == 2 && (pass != 1 || !have_mm)) continue;
                if (v == 3 && (pass == 1 || !have_bm || gm > 0)) continue;
                double sec = v == 2 ? conv_mm_s(c, op, &m, t)
                           : v == 3 ? bm_pass_s(c, op, &p->bm, pass, t) : conv_pass_s(c, op, v ? &q : p, pass, t);
                if (sec < 0) rc = SD_EBACKEND;
                else if (k > 0 && sec < best[v][pass]) best[v][pass] = sec;
            }
    for (int i = 0; i < 6; i++) free(t[i]);
    conv_train_release(&q);
    const int use_mm = rc == 0 && have_mm && (mm_force || (best[2][1] < best[0][1] && best[2][1] < best[1][1]));
    if (!use_mm) conv_mm_release(&m);
    if (have_bm && rc == 0) {
        p->bm.f = gm > 0 || (best[3][0] < best[0][0] && best[3][0] < best[1][0]);
        p->bm.d = gm > 0 || (best[3][2] < best[0][2] && best[3][2] < best[1][2]);
    }
    if (!p->bm.f && !p->bm.d) conv_bm_release(&p->bm);
    if (rc) return rc;
    p->dt_f = best[1][0] < best[0][0] ? dnnl_f32 : dnnl_bf16;
    p->dt_w = best[1][1] < best[0][1] ? dnnl_f32 : dnnl_bf16;
    p->dt_d = best[1][2] < best[0][2] ? dnnl_f32 : dnnl_bf16;
    if (getenv("SD_DNNL_CHOOSE_LOG"))   /* which pass ran in which type, and by what margin: docs/precision.md */
        fprintf(stderr, "choose: %dx%dx%dx%d->%d k%d s%d | fwd bf16 %.3f f32 %.3f mm %.3f -> %s | bwd-w bf16 %.3f f32 "
                "%.3f mm %.3f -> %s | bwd-d bf16 %.3f f32 %.3f mm %.3f -> %s (ms)\n", op->n, op->c, op->h, op->w,
                op->oc, op->kh, op->sh, 1e3 * best[0][0], 1e3 * best[1][0], have_bm ? 1e3 * best[3][0] : -1.0,
                p->bm.f ? "mm" : p->dt_f == dnnl_f32 ? "f32" : "bf16", 1e3 * best[0][1], 1e3 * best[1][1],
                have_mm ? 1e3 * best[2][1] : -1.0, use_mm ? "mm" : p->dt_w == dnnl_f32 ? "f32" : "bf16",
                1e3 * best[0][2], 1e3 * best[1][2], have_bm ? 1e3 * best[3][2] : -1.0,
                p->bm.d ? "mm" : p->dt_d == dnnl_f32 ? "f32" : "bf16");
    bm_note(c, &p->bm);
    if (!use_mm && p->dt_f == dnnl_bf16 && p->dt_w == dnnl_bf16 && p->dt_d == dnnl_bf16) {   /* p's as they are */
        conv_note(c, p);
        return 0;
    }
    if (use_mm) return conv_take_mm(c, op, p, &m);
    conv_train_release(p);
    return conv_make(c, op, p, 1);
}

/* ---- the choices by shape (dnnl_ctx.picks) ---------------------------------------------------------------------- */
static void pick_key(const nn_op *op, int what, int key[12]) {
    const int k[12] = {what, op->n, op->c, op->h, op->w, op->oc, op->ph, op->pw, op->fmt_in, op->fmt_out, op->has_bias,
                       0};
    memcpy(key, k, sizeof k);
}
static int pick_find(const dnnl_ctx *c, const int key[12]) {
    for (int i = 0; i < c->npicks; i++)
        if (memcmp(c->picks[i].key, key, sizeof c->picks[i].key) == 0) return c->picks[i].pick;
    return -1;
}
static int pick_add(dnnl_ctx *c, const int key[12], int pick) {
    if (c->npicks == c->cappicks) {
        const int cap = c->cappicks ? 2 * c->cappicks : 32;
        void *n = realloc(c->picks, sizeof *c->picks * (size_t)cap);
        if (!n) return sd_err(SD_ENOMEM, "dnnl: out of memory");
        c->picks = n;
        c->cappicks = cap;
    }
    memcpy(c->picks[c->npicks].key, key, sizeof c->picks[c->npicks].key);
    c->picks[c->npicks++].pick = pick;
    return 0;
}

/* ---- forward and backward-data of a training step as host Winograd (dnnl_wino.c) ------------------------------- */

/* Backward-data of a 3x3 stride-1 convolution is a 3x3 stride-1 convolution of dy with the weights turned by 180
 * degrees and their channels swapped, padded by 2 - pad: d describes it. */
static void wino_bwd_op(const nn_op *op, nn_op *d) {
    *d = *op;
    d->c = op->oc; d->oc = op->c; d->h = op->oh; d->w = op->ow; d->oh = op->h; d->ow = op->w;
    d->ph = 2 - op->ph; d->pw = 2 - op->pw;
    d->fmt_in = op->fmt_out; d->fmt_out = op->fmt_in;
}

/* The weights change at every step, so each call transforms them first (into ctx->wino_u). */
static int wino_fwd(dnnl_ctx *c, const nn_op *op, conv_priv *p, float *y, const float *x, const float *w,
                    const float *b) {
    p->wf.u = c->wino_u;
    dn_wino_weights(&p->wf, op, w, b, 0, c->threads);
    return dn_wino_run(c, &p->wf, op, y, x, NULL, 0, NULL);
}
static int wino_bwd_d(dnnl_ctx *c, const nn_op *op, conv_priv *p, float *dx, const float *dy, const float *w,
                      const float *gate) {
    nn_op d;
    wino_bwd_op(op, &d);
    p->wd.u = c->wino_u;
    dn_wino_weights(&p->wd, &d, w, NULL, 1, c->threads);
    return dn_wino_run(c, &p->wd, &d, dx, dy, NULL, 0, gate);
}

static void wino_set(conv_priv *p, int pass, int v) { (pass == 0 ? &p->wf : pass == 1 ? &p->ww : &p->wd)->on = v; }

/* fp32 forward, backward-weights and backward-data, where the host Winograd can run them, timed against oneDNN's
 * primitives as conv_choose times bf16 against fp32 (alternating, fastest of 3 after an untimed call, the weights'
 * transform included), each pass then running in the faster. Under bf16 every pass conv_choose timed competes so
 * too, in whichever type conv_choose left it: in an nhwc graph oneDNN's own Winograd reorders to and from its
 * blocked layout. SD_DNNL_WINO=on takes it untimed, =off never. */
static int conv_wino_choose(dnnl_ctx *c, nn_op *op, conv_priv *p) {
    /* the passes oneDNN's convolution runs: in fp32, or in bf16 where conv_choose timed it against fp32 (without
     * AMX the host's fp32 Winograd can beat a bf16 direct convolution: 2.25x fewer multiplications, in fp32) */
    const int t = dn_conv_bf16_choose(c);
    const int ef = (p->dt_f == dnnl_f32 || t) && !p->bm.f && !p->gf,
              ew = (p->dt_w == dnnl_f32 || t) && !p->mm.on && !p->gw,
              ed = (p->dt_d == dnnl_f32 || t) && !p->bm.d && !p->gd;
    if (!ef && !ew && !ed) return 0;
    const int forced = dn_wino_forced();
    if (!forced && !c->autotune) return 0;
    nn_op d;
    wino_bwd_op(op, &d);
    const int okf = dn_wino_ok(op, op->fmt_in, op->fmt_out), okd = dn_wino_ok(&d, d.fmt_in, d.fmt_out);
    const int ok[3] = {okf && ef, okf && ew, okd && ed};
    if (ok[0]) SD_TRY(dn_wino_make(c, &p->wf, op, 1));
    if (ok[1]) SD_TRY(dn_wino_make_bwd_w(c, &p->ww, op));
    if (ok[2]) SD_TRY(dn_wino_make(c, &p->wd, &d, 1));
    if (!ok[0] && !ok[1] && !ok[2]) return 0;
    static const char *const what[3] = {"conv fwd", "bwd-weights", "bwd-data"};
    dn_wino *k[3] = {&p->wf, &p->ww, &p->wd};
    if (forced) {
        for (int pass = 0; pass < 3; pass++)
            if (ok[pass]) dn_note_host(c, what[pass], dn_wino_name(k[pass]));
        return 0;
    }
    int key[12];
    const int elig = ef | ew << 1 | ed << 2;   /* which passes competed: all three but those on a matmul or sgemm */
    pick_key(op, elig == 7 ? -1 : -8 - elig, key);
    const int known = pick_find(c, key);
    if (known >= 0) {
        for (int pass = 0; pass < 3; pass++) {
            k[pass]->on = ok[pass] && (known >> pass & 1);
            if (!k[pass]->on) dn_wino_release(k[pass]);
        }
        return 0;
    }
    double best[3][2];   /* [pass: fwd, bwd-w, bwd-d][oneDNN, host] */
    int rc = time_alternative(c, op, p, ok, wino_set, best);
    int pick = 0;
    for (int pass = 0; pass < 3; pass++) {
        k[pass]->on = ok[pass] && best[pass][1] < best[pass][0];
        if (!k[pass]->on) dn_wino_release(k[pass]);
        else dn_note_host(c, what[pass], dn_wino_name(k[pass]));
        pick |= k[pass]->on << pass;
    }
    if (rc == 0) rc = pick_add(c, key, pick);
    if (getenv("SD_DNNL_CHOOSE_LOG"))
        fprintf(stderr, "choose: %dx%dx%dx%d->%d k3 s1 train | fwd oneDNN %.3f host winograd %.3f | bwd-w oneDNN %.3f "
                "host winograd %.3f | bwd-d oneDNN %.3f host winograd %.3f (ms)\n", op->n, op->c, op->h, op->w, op->oc,
                1e3 * best[0][0], 1e3 * best[0][1], 1e3 * best[1][0], 1e3 * best[1][1], 1e3 * best[2][0],
                1e3 * best[2][1]);
    return rc;
}

/* ---- fp32 passes of a small output as sgemm (conv_gemm_choose) -------------------------------------------------
 * At VGG-16's 2x2 and 4x4 outputs on CIFAR, oneDNN 2.6's kernels ran at 19-35% (backward) and 54-90% of the sgemm
 * peak (docs/performance.md): with the image positions few, the column matrix col[n*oh*ow][ic*kh*kw] is small and
 * each pass is one sgemm on the user's OIHW weights: y = col W^T + b, dW += dy^T col, and dcol = dy W folded back
 * into dx. */
#define GEMM_MAX_S 16                        /* output positions (oh*ow) up to which the sgemm passes compete */
#define GEMM_COL_MAX ((size_t)64 << 20)      /* bytes of the column matrix and dy's rows */

static size_t gemm_bytes(const nn_op *op) {
    const size_t M = (size_t)op->n * op->oh * op->ow;
    return M * ((size_t)op->c * op->kh * op->kw + (size_t)op->oc) * sizeof(float);
}
static int gemm_ok(const dnnl_ctx *c, const nn_op *op) {
    return c->cdt == dnnl_f32 && op->oh * op->ow <= GEMM_MAX_S && gemm_bytes(op) <= GEMM_COL_MAX;
}

/* ctx->tmp from offset 0: y's or dy's rows [n*oh*ow][oc], then the column matrix (room made by conv_gemm_choose) */
static int gemm_fwd(dnnl_ctx *c, const nn_op *op, float *y, const float *x, const float *w, const float *b) {
    const int M = op->n * op->oh * op->ow, KC = op->c * op->kh * op->kw, O = op->oc;
    float *rows = c->tmp, *col = rows + (size_t)M * O;
    dn_im2col_f32(col, x, op, c->threads);
    if (dnnl_sgemm('N', 'T', M, O, KC, 1.0f, col, KC, w, KC, 0.0f, rows, O) != dnnl_success)
        return sd_err(SD_EBACKEND, "oneDNN: dnnl_sgemm failed in a convolution's forward");
    dn_rows_to(y, rows, b, op, c->threads);
    return 0;
}
static int gemm_bwd_w(dnnl_ctx *c, const nn_op *op, float *dw, float *db, const float *dy, const float *x) {
    const int M = op->n * op->oh * op->ow, KC = op->c * op->kh * op->kw, O = op->oc;
    float *rows = c->tmp, *col = rows + (size_t)M * O;
    dn_rows_of(rows, dy, op, c->threads);
    dn_im2col_f32(col, x, op, c->threads);
    if (dnnl_sgemm('T', 'N', O, KC, M, 1.0f, rows, O, col, KC, 1.0f, dw, KC) != dnnl_success)
        return sd_err(SD_EBACKEND, "oneDNN: dnnl_sgemm failed in a convolution's backward-weights");
    if (db) dn_conv_db_add(db, dy, op, c->threads);
    return 0;
}
static int gemm_bwd_d(dnnl_ctx *c, const nn_op *op, float *dx, const float *dy, const float *w) {
    const int M = op->n * op->oh * op->ow, KC = op->c * op->kh * op->kw, O = op->oc;
    float *rows = c->tmp, *col = rows + (size_t)M * O;
    dn_rows_of(rows, dy, op, c->threads);
    if (dnnl_sgemm('N', 'N', M, KC, O, 1.0f, rows, O, w, KC, 0.0f, col, KC) != dnnl_success)
        return sd_err(SD_EBACKEND, "oneDNN: dnnl_sgemm failed in a convolution's backward-data");
    dn_col2im_f32(dx, col, op, c->threads);
    return 0;
}

static void gemm_set(conv_priv *p, int pass, int v) { *(pass == 0 ? &p->gf : pass == 1 ? &p->gw : &p->gd) = v; }

/* Forward, backward-weights and backward-data of a small fp32 output as sgemm, each timed against the pass as it is
 * (oneDNN's, or the host Winograd conv_wino_choose took), as conv_wino_choose times: alternating, fastest of 3
 * after an untimed call; the choice kept by shape. */
static int conv_gemm_choose(dnnl_ctx *c, nn_op *op, conv_priv *p) {
    p->gf = p->gw = p->gd = 0;
    const int mode = gemm_mode();
    if (mode < 0 || !gemm_ok(c, op) || (!mode && !c->autotune)) return 0;
    SD_TRY(dn_grow(&c->tmp, &c->tmp_bytes, gemm_bytes(op)));
    if (mode > 0) {
        p->gf = p->gw = p->gd = 1;
        dn_note_host(c, "conv fwd", "sgemm");
        dn_note_host(c, "bwd-weights", "sgemm");
        dn_note_host(c, "bwd-data", "sgemm");
        return 0;
    }
    int key[12];
    pick_key(op, -2, key);
    int pick = pick_find(c, key);
    if (pick < 0) {
        static const int all[3] = {1, 1, 1};
        double best[3][2];   /* [fwd, bwd-w, bwd-d][as it is, sgemm] */
        SD_TRY(time_alternative(c, op, p, all, gemm_set, best));
        pick = (best[1][1] < best[1][0]) | (best[2][1] < best[2][0]) << 1 | (best[0][1] < best[0][0]) << 2;
        SD_TRY(pick_add(c, key, pick));
        if (getenv("SD_DNNL_CHOOSE_LOG"))
            fprintf(stderr, "choose: %dx%dx%dx%d->%d k%d s%d train | fwd as is %.3f sgemm %.3f | bwd-w as is %.3f "
                    "sgemm %.3f | bwd-d as is %.3f sgemm %.3f (ms)\n", op->n, op->c, op->h, op->w, op->oc, op->kh,
                    op->sh, 1e3 * best[0][0], 1e3 * best[0][1], 1e3 * best[1][0], 1e3 * best[1][1], 1e3 * best[2][0],
                    1e3 * best[2][1]);
    }
    p->gw = pick & 1;
    p->gd = pick >> 1 & 1;
    p->gf = pick >> 2 & 1;
    if (p->gf) dn_note_host(c, "conv fwd", "sgemm");
    if (p->gw) dn_note_host(c, "bwd-weights", "sgemm");
    if (p->gd) dn_note_host(c, "bwd-data", "sgemm");
    return 0;
}

/* SD_DNNL_BF16_PASSES under bf16: all (every convolution pass bf16), fp32 (every one fp32, the matmuls still bf16),
 * untimed either way, for tests and comparisons; unset: each pass timed (conv_choose) */
int dn_conv_bf16_passes(const dnnl_ctx *c) {
    const char *keep = getenv("SD_DNNL_BF16_PASSES");
    if (c->cdt != dnnl_bf16 || !keep) return DN_PASSES_TIMED;
    return !strcmp(keep, "all") ? DN_PASSES_BF16 : !strcmp(keep, "fp32") ? DN_PASSES_FP32 : DN_PASSES_TIMED;
}
int dn_conv_bf16_choose(const dnnl_ctx *c) {
    return c->cdt == dnnl_bf16 && c->autotune && dn_conv_bf16_passes(c) == DN_PASSES_TIMED;
}

int dn_conv_prepare(dnnl_ctx *c, nn_op *op, conv_priv *p) {
    conv_mm_release(&p->mm);
    conv_bm_release(&p->bm);
    p->gf = p->gw = p->gd = 0;
    p->dt_f = p->dt_d = p->dt_w = dn_conv_bf16_passes(c) == DN_PASSES_FP32 ? dnnl_f32 : c->cdt;
    const int choose = dn_conv_bf16_choose(c);
    /* SD_DNNL_BWDW=matmul forces the matmul backward-weights in bf16 also where nothing is timed (--autotune off,
     * SD_DNNL_BF16_PASSES=all): tests and comparisons run it so */
    const int mode = bwdw_mode();
    const int mm_force = !choose && c->cdt == dnnl_bf16 && (mode == BWDW_MATMUL || mode == BWDW_MATMUL1);
    dn_wino_release(&p->wf);
    dn_wino_release(&p->wd);
    dn_wino_release(&p->ww);
    SD_TRY(conv_make(c, op, p, !choose && !mm_force));
    if (choose) {
        SD_TRY(conv_choose(c, op, p));
        return conv_wino_choose(c, op, p);
    }
    if (c->cdt == dnnl_bf16 && gemm_mode() > 0 && bm_ok(c, op)) {   /* bf16 untimed: the matmuls only if forced */
        SD_TRY(conv_bm_make(c, op, p, &p->bm));
        p->bm.f = p->bm.d = 1;
        bm_note(c, &p->bm);
    }
    if (!mm_force) {
        SD_TRY(conv_wino_choose(c, op, p));
        return conv_gemm_choose(c, op, p);
    }
    conv_mm m;
    memset(&m, 0, sizeof m);
    const int rc = conv_mm_make(c, op, p, &m, mode == BWDW_MATMUL1 ? 1 : op->n);
    if (rc) { conv_mm_release(&m); return rc; }
    return conv_take_mm(c, op, p, &m);
}

static void watch_drop(dnnl_ctx *c, const void *owner);

static void conv_inf_release(dnnl_ctx *c, conv_inf *q) {
    watch_drop(c, q);
    dn_step_destroy(&q->fwd);
    dn_stage_destroy(&q->x); dn_stage_destroy(&q->y);
    if (q->res_on) dn_step_destroy(&q->res_r);
    dn_step_destroy(&q->w_r);
    free(q->wbuf);
    free(q->bbuf);
    dn_wino_release(&q->wino);
    memset(q, 0, sizeof *q);
}

void dn_conv_release(dnnl_ctx *c, conv_priv *p) {
    conv_inf_release(c, &p->inf);
    conv_inf_release(c, &p->inf_train);
    conv_train_release(p);
    conv_mm_release(&p->mm);
    conv_bm_release(&p->bm);
    dn_wino_release(&p->wf);
    dn_wino_release(&p->wd);
    dn_wino_release(&p->ww);
}


static int conv_fwd(dnnl_ctx *c, const nn_op *op, conv_priv *p, float *y, const float *x, const float *w,
                    const float *b) {
    if (p->bm.f) return bm_fwd(c, op, &p->bm, y, x, w, b);
    if (p->gf) return gemm_fwd(c, op, y, x, w, b);
    if (p->wf.on) return wino_fwd(c, op, p, y, x, w, b);
    void *xs, *ws, *ys = dn_stage_out(c, &p->f_y, y);
    SD_TRY(dn_stage_in(c, &p->f_x, x, &xs));
    SD_TRY(dn_stage_in(c, &p->f_w, w, &ws));
    void *bias = (void *)b;
    if (!b) { bias = (char *)c->tmp + p->off_zero_b; memset(bias, 0, sizeof(float) * op->oc); }
    void *args[4] = {xs, ws, bias, ys};
    SD_TRY(dn_step_run(c, &p->fwd, args));
    SD_TRY(dn_stage_out_done(c, &p->f_y, y));
    return dn_strm_wait(c);
}

/* Backward-weights, run before conv_bwd_d: its staged copy of dy stays in the temporaries for conv_bwd_d when
 * they share it. */
static int conv_bwd_w(dnnl_ctx *c, const nn_op *op, conv_priv *p, float *dw, float *db, const float *dy,
                      const float *x) {
    if (p->mm.on) return conv_mm_run(c, op, &p->mm, dw, db, dy, x);
    if (p->gw) return gemm_bwd_w(c, op, dw, db, dy, x);
    if (p->ww.on) {
        SD_TRY(dn_wino_bwd_w(c, &p->ww, op, dw, dy, x));
        if (db) dn_conv_db_add(db, dy, op, c->threads);
        return 0;
    }
    void *xs, *dys;
    SD_TRY(dn_stage_in(c, &p->w_x, x, &xs));
    SD_TRY(dn_stage_in(c, &p->w_dy, dy, &dys));
    void *dwt = (char *)c->tmp + p->off_dw, *dbt = (char *)c->tmp + p->off_db;
    void *a1[4] = {xs, dys, dwt, dbt};
    SD_TRY(dn_step_run(c, &p->bwd_w, a1));
    SD_TRY(dn_stage_out_done(c, &p->w_dw, dw));                   /* dw += diff weights */
    if (db) {
        const float *t = dbt;
        for (int o = 0; o < op->oc; o++) db[o] += t[o];
    }
    return dn_strm_wait(c);
}

static int conv_bwd_d(dnnl_ctx *c, const nn_op *op, conv_priv *p, float *dx, const float *dy, const float *w) {
    if (p->wd.on) return wino_bwd_d(c, op, p, dx, dy, w, NULL);
    if (p->bm.d) return bm_bwd_d(c, op, &p->bm, dx, dy, w);
    if (p->gd) return gemm_bwd_d(c, op, dx, dy, w);
    void *dyd, *wd, *dxs = dn_stage_out(c, &p->d_dx, dx);
    if (p->dy_shared && (p->ww.on || p->gw)) SD_TRY(dn_stage_in(c, &p->w_dy, dy, &dyd));   /* bwd_w made no copy */
    else if (p->dy_shared) dyd = p->w_dy.on ? (char *)c->tmp + p->w_dy.off : (void *)dy;   /* conv_bwd_w's copy */
    else SD_TRY(dn_stage_in(c, &p->d_dy, dy, &dyd));
    SD_TRY(dn_stage_in(c, &p->d_w, w, &wd));
    void *a2[3] = {dyd, wd, dxs};
    SD_TRY(dn_step_run(c, &p->bwd_d, a2));
    SD_TRY(dn_stage_out_done(c, &p->d_dx, dx));
    return dn_strm_wait(c);
}

int dn_conv2d_forward(nn_backend *be, const nn_op *op, float *y, const float *x, const float *w,
                      const float *b) {
    NEED_PRIV(op);
    dnnl_ctx *c = CTX(be);
    dn_threads_on(c);
    return conv_fwd(c, op, PRIV(op, conv_priv), y, x, w, b);
}

/* relu: the relu before the convolution folded in, dx zero where x (its output) <= 0. On the host Winograd the mask
 * is applied as its output transform writes dx; else after, in place. */
static int conv_backward(nn_backend *be, const nn_op *op, float *dx, float *dw, float *db, const float *dy,
                         const float *x, const float *w, int relu) {
    NEED_PRIV(op);
    dnnl_ctx *c = CTX(be);
    conv_priv *p = PRIV(op, conv_priv);
    dn_threads_on(c);
    SD_TRY(conv_bwd_w(c, op, p, dw, db, dy, x));
    if (!dx) return 0;
    if (relu && p->wd.on) return wino_bwd_d(c, op, p, dx, dy, w, x);
    SD_TRY(conv_bwd_d(c, op, p, dx, dy, w));
    return relu ? nn_host_relu_mask(c->threads, nn_fmt_elems(op->fmt_in, op->n, op->c, op->h, op->w), dx, x) : 0;
}

int dn_conv2d_backward_relu(nn_backend *be, const nn_op *op, float *dx, float *dw, float *db,
                            const float *dy, const float *x, const float *w) {
    return conv_backward(be, op, dx, dw, db, dy, x, w, 1);
}

int dn_conv2d_backward(nn_backend *be, const nn_op *op, float *dx, float *dw, float *db,
                       const float *dy, const float *x, const float *w) {
    return conv_backward(be, op, dx, dw, db, dy, x, w, 0);
}

/* ---- inference convolution (conv2d_infer) ------------------------------------------------------------- */

/* Watched memory: what an inference cache was derived from (owner: the cache). */
static int watch_add(dnnl_ctx *c, const void *owner, const void *p, size_t bytes) {
    if (!p || !bytes) return 0;
    if (c->nwatch == c->capwatch) {
        int cap = c->capwatch ? 2 * c->capwatch : 64;
        void *n = realloc(c->watch, sizeof *c->watch * (size_t)cap);
        if (!n) return sd_err(SD_ENOMEM, "dnnl: out of memory");
        c->watch = n;
        c->capwatch = cap;
    }
    c->watch[c->nwatch++] = (struct watch){(const char *)p, (const char *)p + bytes, owner};
    return 0;
}
static void watch_drop(dnnl_ctx *c, const void *owner) {
    int k = 0;
    for (int i = 0; i < c->nwatch; i++)
        if (c->watch[i].owner != owner) c->watch[k++] = c->watch[i];
    c->nwatch = k;
}
/* A write through the table to [p, p + bytes): caches derived from it are stale. */
void dn_touched(dnnl_ctx *c, const void *p, size_t bytes) {
    const char *lo = p, *hi = lo + bytes;
    for (int i = 0; i < c->nwatch; i++)
        if (lo < c->watch[i].hi && c->watch[i].lo < hi) { c->wgen++; return; }
}

static int fuse_key(const nn_conv_fuse *f) {
    return (f->bn ? 1 : 0) | (f->res ? 2 : 0) | (f->relu ? 4 : 0) | (f->y_fmt ? 8 : 0) | (f->res_fmt ? 16 : 0) |
           (f->x_fmt ? 32 : 0);
}

static int conv_inf_make(dnnl_ctx *c, const nn_op *op, conv_priv *p, const nn_conv_fuse *f) {
    conv_inf *q = f->train ? &p->inf_train : &p->inf;
    conv_inf_release(c, q);
    const dnnl_dims_t xd = {op->n, op->c, op->h, op->w}, yd = {op->n, op->oc, op->oh, op->ow};
    const dnnl_dims_t wd = {op->oc, op->c, op->kh, op->kw};
    dnnl_dims_t st = {op->sh, op->sw}, pl = {op->ph, op->pw}, pr;
    int prh = 0, prw = 0;
    SD_TRY(dn_pad_r(op->h, op->kh, op->sh, op->ph, op->oh, &prh));
    SD_TRY(dn_pad_r(op->w, op->kw, op->sw, op->pw, op->ow, &prw));
    pr[0] = prh; pr[1] = prw;
    dnnl_memory_desc_t xa, ya, wa, xu, yu, ru;
    SD_TRY(dn_md_tag_dt(&xa, 4, xd, p->dt_f, dnnl_format_tag_any));   /* bf16 copies of x and w under bf16 */
    SD_TRY(dn_md_tag(&xu, 4, xd, dn_fmt_tag(f->x_fmt)));
    SD_TRY(dn_md_tag(&ya, 4, yd, dnnl_format_tag_any));
    SD_TRY(dn_md_tag_dt(&wa, 4, wd, p->dt_f, dnnl_format_tag_any));
    SD_TRY(dn_md_tag(&yu, 4, yd, dn_fmt_tag(f->y_fmt)));
    SD_TRY(dn_md_tag(&ru, 4, yd, dn_fmt_tag(f->res_fmt)));
    dnnl_alg_kind_t alg = conv_alg(c, op, p->dt_f);
    dnnl_primitive_desc_t pd = NULL;
    /* Ask for the graph's blocked dst first: left to choose, a 1-channel input's inference convolution writes
     * nhwc, and the reorder to the blocked layout after it took longer than the convolution (mnist_cnn conv2d_1). Not under
     * bf16 on AMX: there oneDNN 2.6's AMX kernels write only nhwc, and a blocked dst fell back to the AVX512_BF16
     * kernel, 15x slower on mnist_cnn's conv2d_2 (26 ms against 1.8 ms; the reorder after it costs 1.5 ms): there
     * only the graph's nhwc (the default there) is asked for. */
    const int user_dst = f->y_fmt != NN_FMT_NCHW && (f->y_fmt == NN_FMT_NHWC || !(p->dt_f == dnnl_bf16 && c->amx));
    /* An fp32 convolution of a small output (oh*ow <= 16: VGG's last stage on CIFAR) into an nhwc graph asks for
     * nChw16c: oneDNN's fp32 kernel for an nhwc dst was 2.6x slower there (vgg16_cifar's 512->512 at 2x2, batch 32:
     * 4.8 against 1.8 ms a call), and the reorders around it move a few hundred KB. */
    const int blk_dst = p->dt_f == dnnl_f32 && op->oh * op->ow <= BM_MAX_S && f->y_fmt == NN_FMT_NHWC;
    dnnl_memory_desc_t yk;
    SD_TRY(dn_md_tag(&yk, 4, yd, dnnl_nChw16c));
    const dnnl_memory_desc_t *dst[3];   /* the dst layouts asked for in turn, the kernel's own choice last */
    int nd = 0;
    if (blk_dst) dst[nd++] = &yk;
    if (user_dst) dst[nd++] = &yu;
    dst[nd++] = &ya;
    for (int k = 0;;) {
        dn_desc fd;
        SD_TRY(dn_conv_fwd_desc(&fd, f->train ? dnnl_forward_training : dnnl_forward_inference, alg, &xa, &wa, &p->b_md,
                                dst[k], st, pl, pr));
        dnnl_primitive_attr_t attr;
        dnnl_post_ops_t po = NULL;
        SD_TRY(dn_attr_new(&attr, 0));
        dnnl_status_t r = dnnl_post_ops_create(&po);
        if (r == dnnl_success && f->res) r = dn_post_ops_sum(po);
        if (r == dnnl_success && f->relu) r = dn_post_ops_relu(po);
        if (r == dnnl_success) r = dnnl_primitive_attr_set_post_ops(attr, po);
        if (r == dnnl_success) r = dn_pd_create(&pd, &fd, attr, c->eng, NULL);
        if (po) dnnl_post_ops_destroy(po);
        dnnl_primitive_attr_destroy(attr);
        /* a dst layout no kernel writes gets the reference convolution: then the next one */
        if (r == dnnl_success && k < nd - 1 && dn_pd_is_ref(pd)) {
            dnnl_primitive_desc_destroy(pd);
            pd = NULL;
            r = dnnl_unimplemented;
        }
        if (r == dnnl_success) break;
        if (++k < nd) continue;
        if (alg == dnnl_convolution_direct)
            return sd_err(SD_EBACKEND, "oneDNN: inference convolution: primitive_desc_create returned %d (%s)\nHINT: "
                          "run with DNNL_VERBOSE=1 to see the primitive oneDNN rejected", (int)r, dnnl_status2str(r));
        alg = dnnl_convolution_direct;   /* no Winograd for this shape: direct, the graph's dst first */
        nd = k = 0;
        if (f->y_fmt != NN_FMT_NCHW) dst[nd++] = &yu;
        dst[nd++] = &ya;
    }
    dnnl_memory_desc_t fx, fw, fy;
    SD_TRY(dn_md_query(pd, dnnl_query_src_md, 0, &fx));
    SD_TRY(dn_md_query(pd, dnnl_query_weights_md, 0, &fw));
    SD_TRY(dn_md_query(pd, dnnl_query_dst_md, 0, &fy));
    SD_TRY(dn_step_make(c, &q->fwd, pd));
    dn_note_impl(c, "conv infer", q->fwd.prim);
    SD_TRY(dn_step_arg(c, &q->fwd, DNNL_ARG_SRC, &fx));
    SD_TRY(dn_step_arg(c, &q->fwd, DNNL_ARG_WEIGHTS, &fw));
    SD_TRY(dn_step_arg(c, &q->fwd, DNNL_ARG_BIAS, &p->b_md));
    SD_TRY(dn_step_arg(c, &q->fwd, DNNL_ARG_DST, &fy));
    size_t top = 0;
    SD_TRY(dn_stage_make(c, &q->x, &xu, &fx, 1, 0, &top));
    SD_TRY(dn_stage_make(c, &q->y, &yu, &fy, 0, 0, &top));
    q->off_wfold = dn_bump(&top, sizeof(float) * (size_t)op->oc * op->c * op->kh * op->kw);
    SD_TRY(dn_grow(&c->tmp, &c->tmp_bytes, top));
    q->dst_bytes = dn_md_size(&fy);
    if (f->res && !dn_md_equal(&ru, &fy)) {
        q->res_on = 1;
        SD_TRY(dn_reorder_make(c, &q->res_r, &ru, &fy, 0));
    }
    SD_TRY(dn_reorder_make(c, &q->w_r, &p->w_md, &fw, 0));
    size_t wb = dn_md_size(&fw);
    q->wbuf = aligned_alloc(ALIGN, (wb + ALIGN - 1) / ALIGN * ALIGN);
    q->bbuf = aligned_alloc(ALIGN, (sizeof(float) * op->oc + ALIGN - 1) / ALIGN * ALIGN);
    if (!q->wbuf || !q->bbuf) return sd_err(SD_ENOMEM, "dnnl: cannot allocate %zu bytes of inference weights", wb);
    q->key = fuse_key(f);
    q->made = 1;
    return 0;
}

/* Fold batch norm into the weights and bias (w' = w s, b' = (b - mean) s + beta, s = gamma / sqrt(var + eps))
 * and reorder them into the primitive's layout, unless what is kept is still current. */
static int conv_inf_weights(dnnl_ctx *c, const nn_op *op, conv_inf *q, const nn_conv_fuse *f, const float *w,
                            const float *b) {
    const float *src[5] = {w, b, f->gamma, f->beta, f->running};
    if (q->gen == c->wgen && memcmp(src, q->src, sizeof src) == 0) return 0;
    const int O = op->oc;
    const size_t K = (size_t)op->c * op->kh * op->kw;
    const float *wsrc = w;
    if (f->bn) {
        float *wf = (float *)((char *)c->tmp + q->off_wfold);
        const float *mean = f->running, *var = f->running + O;
        #pragma omp parallel for num_threads(c->threads) schedule(static)
        for (int o = 0; o < O; o++) {
            const float s = (float)(f->gamma[o] / sqrt((double)var[o] + f->bn->eps));
            for (size_t k = 0; k < K; k++) wf[(size_t)o * K + k] = w[(size_t)o * K + k] * s;
            q->bbuf[o] = ((b ? b[o] : 0.0f) - mean[o]) * s + f->beta[o];
        }
        wsrc = wf;
    } else {
        for (int o = 0; o < O; o++) q->bbuf[o] = b ? b[o] : 0.0f;
    }
    if (q->wino.on) {
        dn_wino_weights(&q->wino, op, wsrc, q->bbuf, 0, c->threads);
    } else {
        void *a[2] = {(void *)wsrc, q->wbuf};
        SD_TRY(dn_step_run(c, &q->w_r, a));
    }
    watch_drop(c, q);
    SD_TRY(watch_add(c, q, w, sizeof(float) * (size_t)O * K));
    SD_TRY(watch_add(c, q, b, b ? sizeof(float) * O : 0));
    if (f->bn) {
        SD_TRY(watch_add(c, q, f->gamma, sizeof(float) * O));
        SD_TRY(watch_add(c, q, f->beta, sizeof(float) * O));
        SD_TRY(watch_add(c, q, f->running, 2 * sizeof(float) * O));
    }
    memcpy(q->src, src, sizeof src);
    q->gen = c->wgen;
    return 0;
}

/* One inference call with q's kernel: oneDNN's primitive or the host Winograd. */
static int conv_inf_run(dnnl_ctx *c, const nn_op *op, conv_inf *q, const nn_conv_fuse *f, float *y, const float *x,
                        const float *res) {
    if (q->wino.on) return dn_wino_run(c, &q->wino, op, y, x, res, f->relu, NULL);
    void *xs, *ys = dn_stage_out(c, &q->y, y);
    SD_TRY(dn_stage_in(c, &q->x, x, &xs));
    if (res) {   /* the sum post-op adds to what dst holds */
        if (q->res_on) {
            void *a[2] = {(void *)res, ys};
            SD_TRY(dn_step_run(c, &q->res_r, a));
        } else if (ys != (void *)res) {
            memcpy(ys, res, q->dst_bytes);
        }
    }
    void *args[4] = {xs, q->wbuf, q->bbuf, ys};
    SD_TRY(dn_step_run(c, &q->fwd, args));
    SD_TRY(dn_stage_out_done(c, &q->y, y));
    return dn_strm_wait(c);
}

/* Where the host Winograd can run this convolution (fp32, 3x3 stride 1, one blocked layout in and out), time it
 * against oneDNN's primitive at the first call, as conv_choose times bf16 against fp32: the two alternate call by
 * call on the call's own x and residual into a scratch y, each keeping its fastest of 3 after an untimed one, and
 * the faster runs from then on. oneDNN's direct kernels win on small planes and few channels, where most of a 6x6
 * tile is padding or the 36 products are too small to run at the sgemm's pace. SD_DNNL_WINO=on takes it untimed,
 * =off never. */
static int conv_inf_choose(dnnl_ctx *c, const nn_op *op, conv_priv *p, conv_inf *q, const nn_conv_fuse *f,
                           const float *x, const float *w, const float *b) {
    if ((p->dt_f != dnnl_f32 && !dn_conv_bf16_choose(c)) || !dn_wino_ok(op, f->x_fmt, f->y_fmt) ||
        (f->res && f->res_fmt != f->y_fmt))
        return 0;
    const int forced = dn_wino_forced();
    if (!forced && !c->autotune) return 0;
    nn_op io = *op;   /* the layouts of this call, which need not be training's (an nhwc x the graph kept at inference) */
    io.fmt_in = f->x_fmt;
    io.fmt_out = f->y_fmt;
    SD_TRY(dn_wino_make(c, &q->wino, &io, 0));
    if (forced) return 0;
    int key[12];
    pick_key(op, fuse_key(f) | (f->train ? 64 : 0), key);
    const int known = pick_find(c, key);
    if (known >= 0) {
        if (!known) dn_wino_release(&q->wino);
        return 0;
    }
    const size_t ny = nn_fmt_elems(f->y_fmt, op->n, op->oc, op->oh, op->ow);
    float *ty = aligned_alloc(ALIGN, (ny * sizeof(float) + ALIGN - 1) / ALIGN * ALIGN);
    if (!ty) return sd_err(SD_ENOMEM, "dnnl: cannot allocate %zu bytes to time a convolution", ny * 4);
    memset(ty, 0, ny * sizeof(float));
    /* both kernels get the unfolded weights: only the time counts, and conv_inf_weights fills them after */
    dn_wino_weights(&q->wino, op, w, b, 0, c->threads);
    void *a[2] = {(void *)w, q->wbuf};
    int rc = dn_step_run(c, &q->w_r, a);
    for (int o = 0; o < op->oc; o++) q->bbuf[o] = b ? b[o] : 0.0f;
    double best[2] = {1e30, 1e30};
    dn_wino keep = q->wino;
    for (int k = 0; k < 4 && rc == 0; k++)
        for (int v = 0; v < 2 && rc == 0; v++) {
            q->wino.on = v;
            const double t0 = omp_get_wtime();
            rc = conv_inf_run(c, op, q, f, ty, x, f->res);
            const double s = omp_get_wtime() - t0;
            if (k > 0 && s < best[v]) best[v] = s;
        }
    free(ty);
    q->wino = keep;
    if (getenv("SD_DNNL_CHOOSE_LOG"))
        fprintf(stderr, "choose: %dx%dx%dx%d->%d k3 s1 %s | oneDNN %.3f host winograd %.3f (ms)\n", op->n, op->c,
                op->h, op->w, op->oc, f->train ? "train-fwd" : "infer", 1e3 * best[0], 1e3 * best[1]);
    if (rc == 0 && best[1] >= best[0]) dn_wino_release(&q->wino);
    return rc ? rc : pick_add(c, key, q->wino.on);
}

int dn_conv2d_infer(nn_backend *be, const nn_op *op, const nn_conv_fuse *f, float *y, const float *x,
                    const float *w, const float *b) {
    NEED_PRIV(op);
    dnnl_ctx *c = CTX(be);
    conv_priv *p = PRIV(op, conv_priv);
    conv_inf *q = f->train ? &p->inf_train : &p->inf;
    dn_threads_on(c);
    if (!q->made || q->key != fuse_key(f)) {
        const int rc = conv_inf_make(c, op, p, f);
        dn_md_scope_end();   /* the memory descriptors made on the way (oneDNN 3.x: handles) */
        SD_TRY(rc);
        SD_TRY(conv_inf_choose(c, op, p, q, f, x, w, b));
        if (q->wino.on) dn_note_host(c, f->train ? "conv train-fwd" : "conv infer", dn_wino_name(&q->wino));
    }
    SD_TRY(conv_inf_weights(c, op, q, f, w, b));
    return conv_inf_run(c, op, q, f, y, x, f->res);
}
