/* dnnl-probe: times resnet18_cifar's convolution layers (batch 64) in oneDNN, per pass (forward-training,
 * backward-data, backward-weights), in f32 and in bf16 (bf16 x, w, dy; f32 y, dx, dW, as the engine runs them),
 * and "bf16all" (y, dx, dW in bf16 too, as PyTorch's autocast runs them),
 * every memory format chosen by oneDNN (format_tag any): the best case, no reorders timed. PROBE_ACT=nhwc (or
 * nchw) fixes the activations' layout (x, y, dx, dy), the weights' staying any. PROBE_MM=1 times instead each
 * backward-weights as one matmul (probe_mm). PROBE_F32=1: f32 only (a CPU without bf16 kernels, such as AVX2).
 * Per pass: 2 untimed calls, then the median of 5 timed calls (ms a call), and the implementation's name.
 *
 *   oneDNN 2.6 (Debian):  cc -O2 -std=c11 scripts/dnnl-probe.c -ldnnl -o dnnl-probe26
 *   oneDNN 3.x (wheel):   cc -O2 -std=c11 -DPROBE_V3 -I$INC scripts/dnnl-probe.c -L$LIB -ldnnl -Wl,-rpath,$LIB \
 *                         -o dnnl-probe32
 * Output, one line a layer, pass and type: TSV  layer pass dt ms impl   (scripts/dnnl-probe-table.sh merges). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef PROBE_V3
#include <oneapi/dnnl/dnnl.h>
#else
#include <dnnl.h>
#endif

#define CK(x) do { dnnl_status_t s_ = (x); if (s_ != dnnl_success) { \
    fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__, #x, (int)s_); return -1; } } while (0)

typedef struct { const char *name; int n, ic, ih, oc, k, s; } layer;

static const layer layers[] = {
    {"stem 3->64 3x3 s1 32x32",        64,   3, 32,  64, 3, 1},
    {"64->64 3x3 s1 32x32",            64,  64, 32,  64, 3, 1},
    {"64->128 3x3 s2 32->16",          64,  64, 32, 128, 3, 2},
    {"64->128 1x1 s2 32->16",          64,  64, 32, 128, 1, 2},
    {"128->128 3x3 s1 16x16",          64, 128, 16, 128, 3, 1},
    {"128->256 3x3 s2 16->8",          64, 128, 16, 256, 3, 2},
    {"128->256 1x1 s2 16->8",          64, 128, 16, 256, 1, 2},
    {"256->256 3x3 s1 8x8",            64, 256,  8, 256, 3, 1},
    {"256->512 3x3 s2 8->4",           64, 256,  8, 512, 3, 2},
    {"256->512 1x1 s2 8->4",           64, 256,  8, 512, 1, 2},
    {"512->512 3x3 s1 4x4",            64, 512,  4, 512, 3, 1},
};

static dnnl_engine_t eng;
static dnnl_stream_t strm;

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#ifdef PROBE_V3
typedef dnnl_memory_desc_t md_t;                      /* opaque handle */
typedef const_dnnl_memory_desc_t cmd_t;
static int md_any(md_t *m, const dnnl_dims_t d, dnnl_data_type_t dt, dnnl_format_tag_t tag) {
    CK(dnnl_memory_desc_create_with_tag(m, 4, d, dt, tag));
    return 0;
}
#define MDP(m) (m)
static void md_free(md_t m) { dnnl_memory_desc_destroy(m); }
static size_t md_bytes(cmd_t m) { return dnnl_memory_desc_get_size(m); }
#else
typedef dnnl_memory_desc_t md_t;
typedef const dnnl_memory_desc_t *cmd_t;
static int md_any(md_t *m, const dnnl_dims_t d, dnnl_data_type_t dt, dnnl_format_tag_t tag) {
    CK(dnnl_memory_desc_init_by_tag(m, 4, d, dt, tag));
    return 0;
}
#define MDP(m) (&(m))
static void md_free(md_t m) { (void)m; }
static size_t md_bytes(cmd_t m) { return dnnl_memory_desc_get_size(m); }
#endif

/* a memory for the pd's md q, filled with a small constant (0x3c bytes: ~0.0115 in f32 and in bf16) */
static int mem_for(dnnl_memory_t *m, const_dnnl_primitive_desc_t pd, dnnl_query_t q) {
    cmd_t md = dnnl_primitive_desc_query_md(pd, q, 0);
    CK(dnnl_memory_create(m, md, eng, DNNL_MEMORY_ALLOCATE));
    void *h;
    CK(dnnl_memory_get_data_handle(*m, &h));
    memset(h, 0x3c, md_bytes(md));
    return 0;
}

static int time_prim(const_dnnl_primitive_desc_t pd, int nargs, const dnnl_exec_arg_t *args, double *ms) {
    dnnl_primitive_t p;
    CK(dnnl_primitive_create(&p, pd));
    double t[5];
    for (int i = 0; i < 7; i++) {
        double t0 = now_ms();
        CK(dnnl_primitive_execute(p, strm, nargs, args));
        CK(dnnl_stream_wait(strm));
        if (i >= 2) t[i - 2] = now_ms() - t0;
    }
    qsort(t, 5, sizeof t[0], cmpd);
    *ms = t[2];
    dnnl_primitive_destroy(p);
    return 0;
}

static const char *impl(const_dnnl_primitive_desc_t pd) {
    const char *s = "?";
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &s);
    return s;
}

static int probe(const layer *L, dnnl_data_type_t in, dnnl_data_type_t out) {
    const char *dtn = in == dnnl_f32 ? "f32" : out == dnnl_f32 ? "bf16" : "bf16all";
    int pad = L->k / 2, oh = (L->ih + 2 * pad - L->k) / L->s + 1;
    dnnl_dims_t xd = {L->n, L->ic, L->ih, L->ih}, wd = {L->oc, L->ic, L->k, L->k}, yd = {L->n, L->oc, oh, oh};
    dnnl_dims_t st = {L->s, L->s}, pl = {pad, pad}, pr = {pad, pad};
    md_t x, w, y, dx, dw, dy, yo;
    const char *act = getenv("PROBE_ACT");      /* nhwc or nchw: x, y, dx, dy in that layout, weights any */
    dnnl_format_tag_t a = !act ? dnnl_format_tag_any : strcmp(act, "nhwc") == 0 ? dnnl_nhwc : dnnl_nchw;
    dnnl_format_tag_t t = dnnl_format_tag_any;
    if (md_any(&x, xd, in, a) || md_any(&w, wd, in, t) || md_any(&yo, yd, out, a) || md_any(&dy, yd, in, a)
        || md_any(&dx, xd, out, a) || md_any(&dw, wd, out, t) || md_any(&y, yd, in, a)) return -1;
    dnnl_primitive_desc_t fpd, dpd, wpd;
#ifdef PROBE_V3
    dnnl_dims_t dl = {0, 0};
    CK(dnnl_convolution_forward_primitive_desc_create(&fpd, eng, dnnl_forward_training, dnnl_convolution_direct,
                                                      x, w, NULL, yo, st, dl, pl, pr, NULL));
    CK(dnnl_convolution_backward_data_primitive_desc_create(&dpd, eng, dnnl_convolution_direct, dx, w, dy, st, dl,
                                                            pl, pr, fpd, NULL));
    CK(dnnl_convolution_backward_weights_primitive_desc_create(&wpd, eng, dnnl_convolution_direct, x, dw, NULL, dy,
                                                               st, dl, pl, pr, fpd, NULL));
#else
    dnnl_convolution_desc_t fd, dd, wdsc;
    CK(dnnl_convolution_forward_desc_init(&fd, dnnl_forward_training, dnnl_convolution_direct, &x, &w, NULL, &yo,
                                          st, pl, pr));
    CK(dnnl_primitive_desc_create(&fpd, &fd, NULL, eng, NULL));
    CK(dnnl_convolution_backward_data_desc_init(&dd, dnnl_convolution_direct, &dx, &w, &dy, st, pl, pr));
    CK(dnnl_primitive_desc_create(&dpd, &dd, NULL, eng, fpd));
    CK(dnnl_convolution_backward_weights_desc_init(&wdsc, dnnl_convolution_direct, &x, &dw, NULL, &dy, st, pl, pr));
    CK(dnnl_primitive_desc_create(&wpd, &wdsc, NULL, eng, fpd));
#endif
    (void)MDP(x);
    dnnl_memory_t mx, mw, my, mdx, mdw, mdy, mdy2, mw2, mx2;
    if (mem_for(&mx, fpd, dnnl_query_src_md) || mem_for(&mw, fpd, dnnl_query_weights_md)
        || mem_for(&my, fpd, dnnl_query_dst_md)) return -1;
    double ms;
    dnnl_exec_arg_t fa[] = {{DNNL_ARG_SRC, mx}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_DST, my}};
    if (time_prim(fpd, 3, fa, &ms)) return -1;
    printf("%s\tfwd\t%s\t%.3f\t%s\n", L->name, dtn, ms, impl(fpd));
    fflush(stdout);
    if (mem_for(&mdx, dpd, dnnl_query_diff_src_md) || mem_for(&mw2, dpd, dnnl_query_weights_md)
        || mem_for(&mdy, dpd, dnnl_query_diff_dst_md)) return -1;
    dnnl_exec_arg_t da[] = {{DNNL_ARG_DIFF_SRC, mdx}, {DNNL_ARG_WEIGHTS, mw2}, {DNNL_ARG_DIFF_DST, mdy}};
    if (time_prim(dpd, 3, da, &ms)) return -1;
    printf("%s\tbwd_data\t%s\t%.3f\t%s\n", L->name, dtn, ms, impl(dpd));
    fflush(stdout);
    if (mem_for(&mx2, wpd, dnnl_query_src_md) || mem_for(&mdw, wpd, dnnl_query_diff_weights_md)
        || mem_for(&mdy2, wpd, dnnl_query_diff_dst_md)) return -1;
    dnnl_exec_arg_t wa[] = {{DNNL_ARG_SRC, mx2}, {DNNL_ARG_DIFF_WEIGHTS, mdw}, {DNNL_ARG_DIFF_DST, mdy2}};
    if (time_prim(wpd, 3, wa, &ms)) return -1;
    printf("%s\tbwd_weights\t%s\t%.3f\t%s\n", L->name, dtn, ms, impl(wpd));
    fflush(stdout);
    dnnl_memory_t all[] = {mx, mw, my, mdx, mw2, mdy, mx2, mdw, mdy2};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) dnnl_memory_destroy(all[i]);
    dnnl_primitive_desc_destroy(fpd);
    dnnl_primitive_desc_destroy(dpd);
    dnnl_primitive_desc_destroy(wpd);
    md_free(x); md_free(w); md_free(y); md_free(dx); md_free(dw); md_free(dy); md_free(yo);
    return 0;
}

/* backward-weights as one matmul, dW[oc][ic*k*k] = dy^T[oc][N*oh*ow] . col[N*oh*ow][ic*k*k] (dy nhwc read
 * transposed, col the im2col of x, its making not timed): what an im2col + gemm backward-weights would cost. */
static int probe_mm(const layer *L, dnnl_data_type_t in) {
    int pad = L->k / 2, oh = (L->ih + 2 * pad - L->k) / L->s + 1;
    dnnl_dim_t M = L->oc, K = (dnnl_dim_t)L->n * oh * oh, Nn = (dnnl_dim_t)L->ic * L->k * L->k;
    dnnl_dims_t ad = {M, K}, bd = {K, Nn}, cd = {M, Nn};
    md_t am, bm, cm;
    dnnl_primitive_desc_t pd;
#ifdef PROBE_V3
    CK(dnnl_memory_desc_create_with_tag(&am, 2, ad, in, dnnl_ba));
    CK(dnnl_memory_desc_create_with_tag(&bm, 2, bd, in, dnnl_ab));
    CK(dnnl_memory_desc_create_with_tag(&cm, 2, cd, dnnl_f32, dnnl_ab));
    CK(dnnl_matmul_primitive_desc_create(&pd, eng, am, bm, NULL, cm, NULL));
#else
    dnnl_matmul_desc_t d;
    CK(dnnl_memory_desc_init_by_tag(&am, 2, ad, in, dnnl_ba));
    CK(dnnl_memory_desc_init_by_tag(&bm, 2, bd, in, dnnl_ab));
    CK(dnnl_memory_desc_init_by_tag(&cm, 2, cd, dnnl_f32, dnnl_ab));
    CK(dnnl_matmul_desc_init(&d, &am, &bm, NULL, &cm));
    CK(dnnl_primitive_desc_create(&pd, &d, NULL, eng, NULL));
#endif
    dnnl_memory_t ma, mb, mc;
    if (mem_for(&ma, pd, dnnl_query_src_md) || mem_for(&mb, pd, dnnl_query_weights_md)
        || mem_for(&mc, pd, dnnl_query_dst_md)) return -1;
    dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}};
    double ms;
    if (time_prim(pd, 3, args, &ms)) return -1;
    printf("%s\tbwd_w_matmul\t%s\t%.3f\t%s\n", L->name, in == dnnl_f32 ? "f32" : "bf16", ms, impl(pd));
    fflush(stdout);
    dnnl_memory_destroy(ma); dnnl_memory_destroy(mb); dnnl_memory_destroy(mc);
    dnnl_primitive_desc_destroy(pd);
    md_free(am); md_free(bm); md_free(cm);
    return 0;
}

int main(int argc, char **argv) {
    const dnnl_version_t *v = dnnl_version();
    fprintf(stderr, "oneDNN %d.%d.%d\n", v->major, v->minor, v->patch);
    if (dnnl_engine_create(&eng, dnnl_cpu, 0) != dnnl_success) return 1;
    if (dnnl_stream_create(&strm, eng, dnnl_stream_default_flags) != dnnl_success) return 1;
    int only = argc > 1 ? atoi(argv[1]) : -1;   /* one layer's index, or all */
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) {
        if (only >= 0 && (int)i != only) continue;
        if (getenv("PROBE_MM")) {
            if (probe_mm(&layers[i], dnnl_f32) || probe_mm(&layers[i], dnnl_bf16)) return 1;
            continue;
        }
        if (probe(&layers[i], dnnl_f32, dnnl_f32)) return 1;
        if (getenv("PROBE_F32")) continue;   /* a CPU without bf16 kernels (AVX2): f32 only */
        if (probe(&layers[i], dnnl_bf16, dnnl_f32) || probe(&layers[i], dnnl_bf16, dnnl_bf16)) return 1;
    }
    dnnl_stream_destroy(strm);
    dnnl_engine_destroy(eng);
    return 0;
}
