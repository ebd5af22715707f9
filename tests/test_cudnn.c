/* test_cudnn — the cuDNN back-end, tested as far as a machine without a GPU allows: the no-device path
 * and its message, descriptor set-up and cuDNN's output-shape inference for every conv/pool layer of
 * the workloads, algorithm choice, and the element functions the CUDA kernels share with the reference.
 * Then the back-end parity suite, one suite parameterised over ref, dnnl and cudnn, each against the
 * reference: a back-end not built or without a device reports "skipped: <why>". */
#include "testutil.h"

#include <criterion/parameterized.h>

#include "core/err.h"
#include "nn/backend_impl.h"
#include "nn/kernels.h"
#include "nn/model.h"
#if SD_HAVE_CUDNN
#include "be_cudnn/cudnn_be.h"
#include "be_cudnn/cu_dl.h"
#endif
#include "nn/half.h"           /* no CUDA header: the conversions are tested on every build */
#include "nn/train.h"

#include <dirent.h>
#include <math.h>
#include <stdint.h>

/* ---- helpers ---------------------------------------------------------------------------------------- */

static uint64_t rng_state = 0x12345678u;
static float frand(void) {   /* uniform [-1, 1) */
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((rng_state >> 40) * (1.0 / 16777216.0)) * 2.0f - 1.0f;
}
static float *rand_vec(size_t n) {
    float *v = malloc(sizeof(float) * (n ? n : 1));
    cr_assert_not_null(v);
    for (size_t i = 0; i < n; i++) v[i] = frand();
    return v;
}

static nn_backend *open_ref(void) {
    nn_backend_opts o = {.threads = 2, .autotune = 1, .precision = "fp32", .quiet = 1};
    nn_backend *be = NULL;
    cr_assert_eq(nn_backend_new(&be, "ref", &o, NULL, 0), 0, "%s", sd_errmsg());
    return be;
}

/* Output dims of conv/pool as the graph computes them: floor((in + 2p - k) / s) + 1. */
static void set_out(nn_op *op) {
    op->oh = (op->h + 2 * op->ph - op->kh) / op->sh + 1;
    op->ow = (op->w + 2 * op->pw - op->kw) / op->sw + 1;
    if (op->kind == NN_OP_MAXPOOL) op->oc = op->c;
}

static nn_op conv_op(int n, int c, int h, int w, int oc, int k, int s, int p) {
    nn_op op = {.kind = NN_OP_CONV2D, .n = n, .c = c, .h = h, .w = w, .oc = oc, .kh = k, .kw = k, .sh = s, .sw = s,
                .ph = p, .pw = p, .has_bias = 1};
    set_out(&op);
    return op;
}
static nn_op pool_op(int n, int c, int h, int w, int k, int s, int p) {
    nn_op op = {.kind = NN_OP_MAXPOOL, .n = n, .c = c, .h = h, .w = w, .kh = k, .kw = k, .sh = s, .sw = s,
                .ph = p, .pw = p};
    set_out(&op);
    return op;
}
static nn_op eltwise_op(nn_op_kind kind, int n, int c, int h, int w) {
    nn_op op = {.kind = kind, .n = n, .c = c, .h = h, .w = w, .oc = c, .oh = h, .ow = w};
    return op;
}
static nn_op dense_op(int n, int c, int oc) {
    nn_op op = {.kind = NN_OP_DENSE, .n = n, .c = c, .h = 1, .w = 1, .oc = oc, .oh = 1, .ow = 1, .has_bias = 1};
    return op;
}

/* ---- (a) the no-device path ----------------------------------------------------------------------------- */

#if SD_HAVE_CUDNN
static int device_count(cudaError_t *e) {
    int n = 0;
    *e = cudaGetDeviceCount(&n);
    return *e == cudaSuccess ? n : 0;
}
#endif

Test(cudnn_nodev, backend_new_fails_with_reason) {
#if !SD_HAVE_CUDNN
    nn_backend *be = NULL;
    cr_assert_eq(nn_backend_new(&be, "cudnn", NULL, NULL, 0), SD_ENODEV);
    cr_assert_not_null(strstr(sd_errmsg(), "was not built into this binary"), "%s", sd_errmsg());
#else
    cudaError_t e;
    if (device_count(&e) > 0) TU_SKIP("a CUDA device is present: the no-device path cannot run here");
    nn_backend_opts o = {.autotune = 1, .precision = "fp32"};
    nn_backend *be = NULL;
    int rc = nn_backend_new(&be, "cudnn", &o, NULL, 0);
    cr_assert_eq(rc, SD_ENODEV, "rc %d: %s", rc, sd_errmsg());
    cr_assert_null(be);
    cr_assert_eq(sd_exit_code(rc), SD_EXIT_NODEV);
    const char *m = sd_errmsg();
    cr_assert(strncmp(m, "no CUDA device: cudaGetDeviceCount returned ", 44) == 0 ||
              strncmp(m, "no CUDA device: cudaGetDeviceCount found 0", 42) == 0, "message: %s", m);
    if (e == cudaErrorInsufficientDriver)
        cr_assert_not_null(strstr(m, "returned insufficient driver (35)"), "message: %s", m);
#endif
}

#if SD_HAVE_CUDNN
static void lib_sink(void *user, const char *k, const char *v) {
    if (strcmp(k, "lib.cudnn") == 0) snprintf(user, 256, "%s", v);
}

/* Without a device, neither the environment fingerprint nor an attempt at the back-end loads cuDNN or cuBLAS
 * (a CPU run must not map libcublasLt's 540 MB); the fingerprint names the version built against. */
Test(cudnn_nodev, libraries_stay_unloaded) {
    cudaError_t e;
    if (device_count(&e) > 0) TU_SKIP("a CUDA device is present: the libraries load");
    char cudnn[256] = "";
    nn_backend_libraries(lib_sink, cudnn);
    cr_assert_not_null(strstr(cudnn, "not loaded: no CUDA device"), "lib.cudnn: %s", cudnn);
    nn_backend *be = NULL;
    nn_backend_opts o = {.autotune = 1, .precision = "fp32"};
    cr_assert_eq(nn_backend_new(&be, "cudnn", &o, NULL, 0), SD_ENODEV);
    cr_assert(!cu_dl_loaded(&cu_lib_cudnn) && !cu_dl_loaded(&cu_lib_cublas) && !cu_dl_loaded(&cu_lib_nccl),
              "loaded: cudnn %d cublas %d nccl %d", cu_dl_loaded(&cu_lib_cudnn), cu_dl_loaded(&cu_lib_cublas),
              cu_dl_loaded(&cu_lib_nccl));
    /* a descriptor call does load cuDNN (descriptors need no device), and only cuDNN */
    cudnnTensorDescriptor_t t;
    cr_assert_eq(cudnnCreateTensorDescriptor(&t), CUDNN_STATUS_SUCCESS);
    cudnnDestroyTensorDescriptor(t);
    cr_assert(cu_dl_loaded(&cu_lib_cudnn) && !cu_dl_loaded(&cu_lib_cublas));
}
#endif

Test(cudnn_nodev, auto_falls_back_and_says_why) {
#if SD_HAVE_CUDNN
    cudaError_t e;
    if (device_count(&e) > 0) TU_SKIP("a CUDA device is present: auto picks it");
#endif
    nn_backend *be = NULL;
    char note[512];
    cr_assert_eq(nn_backend_new(&be, "auto", NULL, note, sizeof note), 0, "%s", sd_errmsg());
    cr_assert_str_neq(be->name, "cudnn");
#if SD_HAVE_CUDNN
    cr_assert_not_null(strstr(note, "cudnn unavailable: no CUDA device: cudaGetDeviceCount"), "note: %s", note);
#endif
    nn_backend_free(be);
}

#if SD_HAVE_CUDNN
Test(cudnn_nodev, message_per_count_status) {
    cr_assert_eq(cu_device_count_status(cudaSuccess, 1, 13000), 0);
    cr_assert_eq(cu_device_count_status(cudaErrorInsufficientDriver, 0, 0), SD_ENODEV);
    cr_assert_not_null(strstr(sd_errmsg(), "no CUDA device: cudaGetDeviceCount returned insufficient driver (35)"),
                       "%s", sd_errmsg());
    cr_assert_not_null(strstr(sd_errmsg(), "no NVIDIA driver is loaded"), "%s", sd_errmsg());
    cr_assert_eq(cu_device_count_status(cudaErrorNoDevice, 0, 13000), SD_ENODEV);
    cr_assert_not_null(strstr(sd_errmsg(), "returned no device (100)"), "%s", sd_errmsg());
    cr_assert_eq(cu_device_count_status(cudaSuccess, 0, 13000), SD_ENODEV);
    cr_assert_not_null(strstr(sd_errmsg(), "found 0 devices"), "%s", sd_errmsg());
}

/* A driver older than the runtime also gives 35: the message names both versions and the driver needed, not
 * "no driver" (a CUDA 12.2 driver, 535, under this binary's CUDA 13 runtime). */
Test(cudnn_nodev, old_driver_named) {
    cr_assert_eq(cu_device_count_status(cudaErrorInsufficientDriver, 0, 12020), SD_ENODEV);
    const char *m = sd_errmsg();
    char want[96];
    snprintf(want, sizeof want, "the NVIDIA driver supports CUDA 12.2, this binary's runtime is CUDA %d.%d",
             CUDART_VERSION / 1000, (CUDART_VERSION % 1000) / 10);
    cr_assert_not_null(strstr(m, want), "%s", m);
    cr_assert_null(strstr(m, "no NVIDIA driver"), "%s", m);
    cr_assert_not_null(strstr(m, "HINT: update the NVIDIA driver"), "%s", m);
    if (CUDART_VERSION / 1000 == 13) cr_assert_not_null(strstr(m, "needs a driver 580 or newer"), "%s", m);
    cr_assert_eq(cu_min_driver(13), 580);
    cr_assert_eq(cu_min_driver(99), 0);
}

/* cuDNN's sub-library version checks, with stand-ins for the library's: all succeed, or the first failing
 * one (SUBLIBRARY_LOADING_FAILED, a mismatched version) is named with its status; later ones are not run. */
static int g_checks_run;
static cudnnStatus_t check_ok(void) { g_checks_run++; return CUDNN_STATUS_SUCCESS; }
static cudnnStatus_t check_not_loaded(void) { g_checks_run++; return CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED; }
static cudnnStatus_t check_mismatch(void) { g_checks_run++; return CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH; }
Test(cudnn_nodev, sublibrary_checks) {
    const cu_sublib ok[2] = {{"libcudnn_graph.so.9", check_ok}, {"libcudnn_ops.so.9", check_ok}};
    g_checks_run = 0;
    cr_assert_eq(cu_check_sublibs(ok, 2), 0);
    cr_assert_eq(g_checks_run, 2);
    const cu_sublib bad[3] = {{"libcudnn_graph.so.9", check_ok}, {"libcudnn_cnn.so.9", check_not_loaded},
                              {"libcudnn_adv.so.9", check_mismatch}};
    g_checks_run = 0;
    cr_assert_eq(cu_check_sublibs(bad, 3), SD_EBACKEND);
    cr_assert_eq(g_checks_run, 2);
    char want[64];
    snprintf(want, sizeof want, "(%d)", (int)CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED);
    cr_assert_not_null(strstr(sd_errmsg(), "cuDNN: libcudnn_cnn.so.9 does not load"), "%s", sd_errmsg());
    cr_assert_not_null(strstr(sd_errmsg(), want), "%s", sd_errmsg());
    cr_assert_not_null(strstr(sd_errmsg(), "HINT: reinstall cuDNN"), "%s", sd_errmsg());
    cr_assert_eq(cu_check_sublibs(bad + 2, 1), SD_EBACKEND);
    cr_assert_not_null(strstr(sd_errmsg(), "libcudnn_adv.so.9"), "%s", sd_errmsg());
    /* the back-end runs the four real ones, named after the headers' major version */
    char lib[40];
    snprintf(lib, sizeof lib, "libcudnn_adv.so.%d", CUDNN_MAJOR);
    cr_assert_str_eq(cu_cudnn_sublibs[CU_NSUBLIBS - 1].lib, lib);
    cr_assert(cu_cudnn_sublibs[1].check == cudnnOpsVersionCheck);
}

/* cuDNN 9's statuses are categories with sub-codes: a NOT_SUPPORTED_SHAPE (3002) is "not supported". */
static int algo_declined(cudnnStatus_t st) { return cu_status_is(st, CUDNN_STATUS_NOT_SUPPORTED); }
Test(cudnn_nodev, status_categories) {
    cr_assert(algo_declined(CUDNN_STATUS_NOT_SUPPORTED));
    cr_assert(algo_declined(CUDNN_STATUS_NOT_SUPPORTED_SHAPE));
    cr_assert(algo_declined(CUDNN_STATUS_NOT_SUPPORTED_INVALID_DYNAMIC_SHAPE));
    cr_assert(!algo_declined(CUDNN_STATUS_SUCCESS));
    cr_assert(!algo_declined(CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH));
    cr_assert(!algo_declined(CUDNN_STATUS_INTERNAL_ERROR));
    cr_assert(cu_status_is(CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH, CUDNN_STATUS_BAD_PARAM));
}

Test(cudnn_nodev, bad_precision_is_a_usage_error) {
    nn_backend_opts o = {.autotune = 1, .precision = "fp8"};
    nn_backend *be = NULL;
    cr_assert_eq(nn_cudnn_new(&be, &o), SD_EUSAGE);
    cr_assert_eq(sd_exit_code(SD_EUSAGE), 2);
    cr_assert_not_null(strstr(sd_errmsg(), "unknown precision 'fp8' (expected fp32, tf32, fp16 or bf16)"), "%s",
                       sd_errmsg());
}

/* fp16 and bf16 are cudnn precisions: accepted, so without a device they fail as every cudnn run does (exit 4). */
Test(cudnn_nodev, half_precisions_fail_for_want_of_a_device) {
    cudaError_t e;
    if (device_count(&e) > 0) TU_SKIP("a CUDA device is present: the no-device path cannot run here");
    const char *prec[] = {"fp16", "bf16", "tf32", "fp32"};
    for (int i = 0; i < 4; i++) {
        nn_backend_opts o = {.autotune = 1, .precision = prec[i]};
        nn_backend *be = NULL;
        int rc = nn_backend_new(&be, "cudnn", &o, NULL, 0);
        cr_expect_eq(rc, SD_ENODEV, "%s: rc %d: %s", prec[i], rc, sd_errmsg());
        cr_expect_eq(sd_exit_code(rc), SD_EXIT_NODEV);
        cr_expect_not_null(strstr(sd_errmsg(), "no CUDA device"), "%s: %s", prec[i], sd_errmsg());
        cr_assert_null(be);
    }
}

Test(cudnn_nodev, precision_names_types_and_math) {
    static const char *const names[] = {"fp32", "tf32", "fp16", "bf16"};
    for (int i = 0; i < 4; i++) {
        cu_prec p;
        cr_assert_eq(cu_prec_parse(names[i], &p), 0, "%s", sd_errmsg());
        cr_assert_eq((int)p, i);
        cr_assert_str_eq(cu_prec_name(p), names[i]);
        cr_assert_eq(cu_prec_half(p), i >= 2);
    }
    cu_prec p = CU_PREC_BF16;
    cr_assert_eq(cu_prec_parse(NULL, &p), 0);
    cr_assert_eq(p, CU_PREC_FP32, "no precision is fp32");
    cr_assert_eq(cu_prec_parse("FP16", &p), SD_EUSAGE);
    cr_assert_eq(cu_prec_cudnn_type(CU_PREC_FP16), CUDNN_DATA_HALF);
    cr_assert_eq(cu_prec_cudnn_type(CU_PREC_BF16), CUDNN_DATA_BFLOAT16);
    cr_assert_eq(cu_prec_cudnn_type(CU_PREC_TF32), CUDNN_DATA_FLOAT);
    cr_assert_eq(cu_prec_blas_type(CU_PREC_FP16), CUDA_R_16F);
    cr_assert_eq(cu_prec_blas_type(CU_PREC_BF16), CUDA_R_16BF);
    cr_assert_eq(cu_prec_blas_type(CU_PREC_FP32), CUDA_R_32F);
    cr_assert_eq(cu_prec_conv_math(CU_PREC_FP32), CUDNN_FMA_MATH, "fp32 must not allow TF32");
    cr_assert_eq(cu_prec_conv_math(CU_PREC_TF32), CUDNN_DEFAULT_MATH);
    cr_assert_eq(cu_prec_conv_math(CU_PREC_FP16), CUDNN_TENSOR_OP_MATH);
    cr_assert_eq(cu_prec_conv_math(CU_PREC_BF16), CUDNN_TENSOR_OP_MATH);
}

/* cuDNN's bf16 convolutions (PSEUDO_BFLOAT16_CONFIG) need compute capability 8.0: a T4 is refused as dnnl refuses a
 * CPU without bf16, a usage error naming the GPU; fp16 runs on every GPU CUDA 13 supports. */
Test(cudnn_nodev, bf16_needs_ampere) {
    cr_assert_eq(cu_prec_check_device(CU_PREC_BF16, 7, 5, "Tesla T4"), SD_EUSAGE);
    cr_assert_not_null(strstr(sd_errmsg(), "bf16 is not supported on Tesla T4 (compute capability 7.5"), "%s",
                       sd_errmsg());
    cr_assert_not_null(strstr(sd_errmsg(), "--precision fp16 runs here"), "%s", sd_errmsg());
    cr_assert_eq(cu_prec_check_device(CU_PREC_BF16, 8, 0, "A100"), 0);
    cr_assert_eq(cu_prec_check_device(CU_PREC_FP16, 7, 5, "Tesla T4"), 0);
    cr_assert_eq(cu_prec_check_device(CU_PREC_FP32, 7, 5, "Tesla T4"), 0);
}

/* environment.backend_impl names what ran, as dnnl's does ("oneDNN bf16 (convolutions and matmuls; ...)"). */
Test(cudnn_nodev, backend_impl_names_the_precision) {
    char buf[512];
    cu_prec_impl(CU_PREC_FP32, buf, sizeof buf);
    cr_assert_str_eq(buf, "cuDNN conv/pool/ReLU/softmax, cuBLAS sgemm dense, CUDA kernels for dropout, loss, optimizer");
    cu_prec_impl(CU_PREC_FP16, buf, sizeof buf);
    cr_assert(strncmp(buf, "cuDNN fp16 (convolutions and dense matmuls on fp16 copies", 57) == 0, "%s", buf);
    cr_assert(strstr(buf, "GRU/LSTM fp32") && strstr(buf, "cuBLAS GemmEx") && strstr(buf, "scales the loss"), "%s",
              buf);
    cu_prec_impl(CU_PREC_BF16, buf, sizeof buf);
    cr_assert(strncmp(buf, "cuDNN bf16 (", 12) == 0 && !strstr(buf, "scales the loss"), "%s", buf);
    cr_assert(strlen(buf) < sizeof buf - 1, "truncated: %s", buf);
}

static int set_bad_desc(cudnnTensorDescriptor_t d) {
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, -3, 2, 2), "the test's hint");
    return 0;
}

Test(cudnn_nodev, check_macro_names_call_file_line_hint) {
    cudnnTensorDescriptor_t t;
    cr_assert_eq(cudnnCreateTensorDescriptor(&t), CUDNN_STATUS_SUCCESS);
    cr_assert_eq(set_bad_desc(t), SD_EBACKEND);
    const char *m = sd_errmsg();
    cr_assert_not_null(strstr(m, "test_cudnn.c:"), "%s", m);
    cr_assert_not_null(strstr(m, "cuDNN: cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW"), "%s", m);
    cr_assert_not_null(strstr(m, "CUDNN_STATUS_BAD_PARAM"), "%s", m);
    cr_assert_not_null(strstr(m, "\nHINT: the test's hint"), "%s", m);
    cudnnDestroyTensorDescriptor(t);
}
#endif

/* ---- (b) descriptors and output shapes for every conv/pool layer of the workloads --------------------- */

/* The shapes the published models imply, written out by hand for mnist_cnn (batch 128) and cifar10_vgg
 * (batch 64): a cross-check of the shape planner (nn_model_plan) as well as of cuDNN. */
typedef struct layer_case { const char *name; nn_op op; int oc, oh, ow; } layer_case;

__attribute__((unused))   /* without CUDA no test here calls it */
static int workload_layers(layer_case *L) {
    int k = 0;
    L[k++] = (layer_case){"mnist_cnn conv1", conv_op(128, 1, 28, 28, 32, 3, 1, 0), 32, 26, 26};
    L[k++] = (layer_case){"mnist_cnn conv2", conv_op(128, 32, 26, 26, 64, 3, 1, 0), 64, 24, 24};
    L[k++] = (layer_case){"mnist_cnn pool", pool_op(128, 64, 24, 24, 2, 2, 0), 64, 12, 12};
    L[k++] = (layer_case){"mnist_cnn dense1", dense_op(128, 9216, 128), 128, 1, 1};
    L[k++] = (layer_case){"mnist_cnn dense2", dense_op(128, 128, 10), 10, 1, 1};
    L[k++] = (layer_case){"cifar10_vgg conv1", conv_op(64, 3, 32, 32, 50, 3, 1, 1), 50, 32, 32};
    L[k++] = (layer_case){"cifar10_vgg conv2", conv_op(64, 50, 32, 32, 50, 3, 1, 1), 50, 32, 32};
    L[k++] = (layer_case){"cifar10_vgg pool1", pool_op(64, 50, 32, 32, 2, 2, 0), 50, 16, 16};
    L[k++] = (layer_case){"cifar10_vgg conv3", conv_op(64, 50, 16, 16, 100, 3, 1, 1), 100, 16, 16};
    L[k++] = (layer_case){"cifar10_vgg conv4", conv_op(64, 100, 16, 16, 100, 3, 1, 1), 100, 16, 16};
    L[k++] = (layer_case){"cifar10_vgg pool2", pool_op(64, 100, 16, 16, 2, 2, 0), 100, 8, 8};
    L[k++] = (layer_case){"cifar10_vgg dense1", dense_op(64, 6400, 512), 512, 1, 1};
    L[k++] = (layer_case){"cifar10_vgg dense2", dense_op(64, 512, 10), 10, 1, 1};
    return k;
}

#if SD_HAVE_CUDNN
Test(cudnn_shapes, workload_layers_agree_with_cudnn) {
    layer_case L[32];
    int n = workload_layers(L);
    for (int i = 0; i < n; i++) {
        nn_op *op = &L[i].op;
        cr_assert_eq(op->oc, L[i].oc, "%s: oc", L[i].name);
        cr_assert_eq(op->oh, L[i].oh, "%s: oh %d", L[i].name, op->oh);
        cr_assert_eq(op->ow, L[i].ow, "%s: ow %d", L[i].name, op->ow);
        for (int tf32 = 0; tf32 < 2; tf32++) {
            cu_descs d;
            cr_assert_eq(cu_descs_init(&d, op, tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH), 0, "%s: %s", L[i].name,
                         sd_errmsg());
            int o[4];
            cr_assert_eq(cu_descs_output_dims(&d, op, o), 0, "%s", sd_errmsg());
            cr_assert(o[0] == op->n && o[1] == L[i].oc && o[2] == L[i].oh && o[3] == L[i].ow,
                      "%s: cuDNN infers %dx%dx%dx%d", L[i].name, o[0], o[1], o[2], o[3]);
            cr_assert_eq(cu_descs_check(&d, op), 0, "%s: %s", L[i].name, sd_errmsg());
            if (op->kind == NN_OP_CONV2D) {
                cudnnMathType_t m;
                cr_assert_eq(cudnnGetConvolutionMathType(d.conv[CU_FWD], &m), CUDNN_STATUS_SUCCESS);
                cr_assert_eq(m, tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH);
                int fn, fc, fh, fw;
                cudnnDataType_t dt;
                cudnnTensorFormat_t fmt;
                cr_assert_eq(cudnnGetFilter4dDescriptor(d.w, &dt, &fmt, &fn, &fc, &fh, &fw), CUDNN_STATUS_SUCCESS);
                cr_assert(fn == op->oc && fc == op->c && fh == op->kh && fw == op->kw && fmt == CUDNN_TENSOR_NCHW,
                          "%s: filter %dx%dx%dx%d", L[i].name, fn, fc, fh, fw);
            }
            cu_descs_fini(&d);
            cr_assert_null(d.x);
        }
    }
}

/* Every layer of every shipped workload (each workloads/NAME.json through the spec parser and planner): the
 * descriptors set up and cuDNN's inferred output shape equals the planner's. The hand-written list above
 * must appear in it. */
Test(cudnn_shapes, every_layer_of_every_workload) {
    DIR *d = opendir("workloads");
    cr_assert_not_null(d, "run from the repository root (workloads/)");
    layer_case L[32];
    int nhand = workload_layers(L), found = 0, nworkloads = 0, nconvpool = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0) continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(len - 5), e->d_name);
        sd_workload w;
        cr_assert_eq(sd_workload_load(&w, "workloads", name), 0, "%s", sd_errmsg());
        nn_layer *ls = NULL;
        size_t np = 0;
        int nl = nn_model_plan(&w, w.batch, &ls, &np);
        cr_assert_gt(nl, 0, "%s: %s", name, sd_errmsg());
        nworkloads++;
        for (int i = 0; i < nl; i++) {
            nn_op *op = &ls[i].op;
            if (op->kind == NN_OP_EMBEDDING || op->kind == NN_OP_REPEAT) continue;   /* kernels */
            if (op->kind == NN_OP_GRU || op->kind == NN_OP_LSTM) {  /* cuDNN RNN descriptors */
                cu_rnn rn;
                cr_assert_eq(cu_rnn_descs_init(&rn, op, CUDNN_FMA_MATH), 0, "%s %s: %s", name, ls[i].name, sd_errmsg());
                cu_rnn_fini(&rn);
                continue;
            }
            cu_descs cd;
            cr_assert_eq(cu_descs_init(&cd, op, CUDNN_FMA_MATH), 0, "%s %s: %s", name, ls[i].name, sd_errmsg());
            cr_assert_eq(cu_descs_check(&cd, op), 0, "%s %s: %s", name, ls[i].name, sd_errmsg());
            cu_descs_fini(&cd);
            if (op->kind == NN_OP_CONV2D || op->kind == NN_OP_MAXPOOL) nconvpool++;
            for (int h = 0; h < nhand; h++) {
                const nn_op *ho = &L[h].op;
                if (strncmp(L[h].name, name, strlen(name)) != 0 || L[h].name[strlen(name)] != ' ') continue;
                if (ho->kind == op->kind && ho->n == op->n && ho->c == op->c && ho->h == op->h && ho->w == op->w &&
                    L[h].oc == op->oc && L[h].oh == op->oh && L[h].ow == op->ow && ho->kh == op->kh &&
                    ho->sh == op->sh && ho->ph == op->ph)
                    found++;
            }
        }
        free(ls);
        sd_workload_free(&w);
    }
    closedir(d);
    cr_assert_geq(nworkloads, 3, "workloads read: %d", nworkloads);
    cr_assert_geq(nconvpool, 9, "conv/pool layers checked: %d", nconvpool);
    cr_assert_eq(found, nhand, "%d of the %d hand-written layers match a planned layer", found, nhand);
}

/* GRU / LSTM descriptors: batch 1, one step, odd sizes, both variants; cuDNN accepts the data and
 * RNN descriptors without a device. */
Test(cudnn_shapes, rnn_descriptors) {
    const int shapes[5][4] = {{1, 1, 1, 1}, {3, 7, 5, 3}, {64, 150, 125, 100}, {2, 28, 1, 128}, {5, 13, 33, 17}};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 5; i++) {
            nn_op op = {.kind = k ? NN_OP_LSTM : NN_OP_GRU, .n = shapes[i][0], .c = shapes[i][1], .h = 1,
                        .w = shapes[i][2], .units = shapes[i][3], .ret_seq = i % 2};
            cu_rnn rn;
            cr_assert_eq(cu_rnn_descs_init(&rn, &op, CUDNN_FMA_MATH), 0, "%s %d: %s", k ? "lstm" : "gru", i, sd_errmsg());
            cr_assert_eq(rn.G, k ? 4 : 3);
            cr_assert_eq(rn.T, shapes[i][1]);
            cr_assert_eq(cu_rnn_ws_bytes(&rn) % 256, 0);
            cu_rnn_fini(&rn);
        }
    nn_op bad = {.kind = NN_OP_DENSE, .n = 1, .c = 1, .h = 1, .w = 1, .units = 1};
    cu_rnn rn;
    cr_assert_neq(cu_rnn_descs_init(&rn, &bad, CUDNN_FMA_MATH), 0);
}

/* The flags of the RNN descriptors against the rules of cudnnSetRNNDescriptor_v8 / cudnnSetRNNDataDescriptor
 * (cuDNN 9 API reference), read back from cuDNN: "When padded I/O is enabled, layouts
 * CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED and CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED are permitted in RNN
 * data descriptors" (so an unpacked layout needs PADDED_IO_ENABLED); FLOAT data computes in FLOAT; projSize equal
 * to hiddenSize means no projection (GRU has none); one layer; a dropout descriptor given. */
static void check_rnn_rules(nn_op_kind kind, int N, int T, int F, int H, cudnnMathType_t math) {
    nn_op op = {.kind = kind, .n = N, .c = T, .h = 1, .w = F, .units = H, .ret_seq = 1};
    cu_rnn rn;
    cr_assert_eq(cu_rnn_descs_init(&rn, &op, math), 0, "%s", sd_errmsg());
    cudnnRNNAlgo_t algo;
    cudnnRNNMode_t cell;
    cudnnRNNBiasMode_t bias;
    cudnnDirectionMode_t dir;
    cudnnRNNInputMode_t in;
    cudnnDataType_t dt, prec;
    cudnnMathType_t mt;
    int isz, hsz, psz, layers;
    cudnnDropoutDescriptor_t drop;
    uint32_t aux = 0;
    cr_assert_eq(cudnnGetRNNDescriptor_v8(rn.rnn, &algo, &cell, &bias, &dir, &in, &dt, &prec, &mt, &isz, &hsz, &psz,
                                          &layers, &drop, &aux), CUDNN_STATUS_SUCCESS);
    cr_assert_eq(cell, kind == NN_OP_LSTM ? CUDNN_LSTM : CUDNN_GRU);
    cr_assert_eq(bias, CUDNN_RNN_DOUBLE_BIAS, "PyTorch's two bias vectors");
    cr_assert_eq(dir, CUDNN_UNIDIRECTIONAL);
    cr_assert_eq(in, CUDNN_LINEAR_INPUT);
    cr_assert(dt == CUDNN_DATA_FLOAT && prec == CUDNN_DATA_FLOAT, "FLOAT data computes in FLOAT");
    cr_assert_eq(mt, math);
    cr_assert(isz == F && hsz == H && psz == H && layers == 1, "in %d hidden %d proj %d layers %d", isz, hsz, psz,
              layers);
    cr_assert(drop != NULL && drop == rn.drop, "the dropout descriptor is given (and set in cu_rnn_setup)");
    cudnnRNNDataDescriptor_t dd[2] = {rn.xd, rn.yd};
    for (int k = 0; k < 2; k++) {
        cudnnDataType_t ddt;
        cudnnRNNDataLayout_t layout;
        int maxT = 0, batch = 0, vec = 0;
        int *lens = calloc((size_t)N, sizeof(int));
        float fill = 0;
        cr_assert_eq(cudnnGetRNNDataDescriptor(dd[k], &ddt, &layout, &maxT, &batch, &vec, N, lens, &fill),
                     CUDNN_STATUS_SUCCESS);
        cr_assert(maxT == T && batch == N && vec == (k ? H : F), "T %d N %d vec %d", maxT, batch, vec);
        for (int i = 0; i < N; i++) cr_assert_eq(lens[i], T);
        free(lens);
        cr_assert_eq(layout, CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED, "[N][T][F], nn/backend.h");
        if (layout != CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED)
            cr_assert(aux & CUDNN_RNN_PADDED_IO_ENABLED, "%s: an unpacked layout (%d) with auxFlags %u: cuDNN "
                      "permits it only with CUDNN_RNN_PADDED_IO_ENABLED", k ? "y" : "x", (int)layout, aux);
    }
    cu_rnn_fini(&rn);
}

Test(cudnn_rules, rnn_descriptor_flags) {
    const int shapes[4][4] = {{1, 1, 1, 1}, {3, 7, 5, 3}, {64, 150, 125, 100}, {5, 13, 33, 17}};
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 2; k++)
            check_rnn_rules(k ? NN_OP_LSTM : NN_OP_GRU, shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3],
                            i % 2 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH);
}

/* Convolution and pooling: cross-correlation (as the reference), FLOAT compute, no dilation, the math type asked
 * for on all three directions; max pooling deterministic (cuDNN's plain MAX may pick any tied element), average
 * pooling excluding padding (nn/backend.h). */
Test(cudnn_rules, conv_and_pool_descriptor_flags) {
    nn_op op = conv_op(8, 3, 32, 32, 16, 5, 2, 1);
    cu_descs d;
    cr_assert_eq(cu_descs_init(&d, &op, CUDNN_FMA_MATH), 0, "%s", sd_errmsg());
    for (int i = 0; i < 3; i++) {
        int ph, pw, sh, sw, dh, dw;
        cudnnConvolutionMode_t mode;
        cudnnDataType_t ct;
        cudnnMathType_t mt;
        cr_assert_eq(cudnnGetConvolution2dDescriptor(d.conv[i], &ph, &pw, &sh, &sw, &dh, &dw, &mode, &ct),
                     CUDNN_STATUS_SUCCESS);
        cr_assert(ph == 1 && pw == 1 && sh == 2 && sw == 2 && dh == 1 && dw == 1);
        cr_assert_eq(mode, CUDNN_CROSS_CORRELATION);
        cr_assert_eq(ct, CUDNN_DATA_FLOAT);
        cr_assert_eq(cudnnGetConvolutionMathType(d.conv[i], &mt), CUDNN_STATUS_SUCCESS);
        cr_assert_eq(mt, CUDNN_FMA_MATH, "direction %d: fp32 must not allow TF32", i);
    }
    cu_descs_fini(&d);
    const nn_op_kind kinds[2] = {NN_OP_MAXPOOL, NN_OP_AVGPOOL};
    const cudnnPoolingMode_t want[2] = {CUDNN_POOLING_MAX_DETERMINISTIC, CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING};
    for (int k = 0; k < 2; k++) {
        nn_op p = pool_op(4, 6, 9, 9, 3, 2, 1);
        p.kind = kinds[k];
        cr_assert_eq(cu_descs_init(&d, &p, CUDNN_FMA_MATH), 0, "%s", sd_errmsg());
        cudnnPoolingMode_t mode;
        cudnnNanPropagation_t nan;
        int wh, ww, ph, pw, sh, sw;
        cr_assert_eq(cudnnGetPooling2dDescriptor(d.pool, &mode, &nan, &wh, &ww, &ph, &pw, &sh, &sw),
                     CUDNN_STATUS_SUCCESS);
        cr_assert_eq(mode, want[k]);
        cr_assert(wh == 3 && ww == 3 && ph == 1 && pw == 1 && sh == 2 && sw == 2);
        cu_descs_fini(&d);
    }
}

/* Under fp16/bf16 a convolution runs on descriptors in the 16-bit type: x, y and w HALF or BFLOAT16, compute FLOAT
 * (cuDNN's PSEUDO_HALF_CONFIG / PSEUDO_BFLOAT16_CONFIG: the legacy API has no 16-bit-in, fp32-out configuration),
 * tensor-op math; the bias stays FLOAT (added to the fp32 y). cuDNN infers the same output shape for every
 * convolution of every workload. */
Test(cudnn_rules, half_conv_descriptors) {
    const cu_prec precs[2] = {CU_PREC_FP16, CU_PREC_BF16};
    DIR *dir = opendir("workloads");
    cr_assert_not_null(dir, "run from the repository root (workloads/)");
    int nconv = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0) continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(len - 5), e->d_name);
        sd_workload w;
        cr_assert_eq(sd_workload_load(&w, "workloads", name), 0, "%s", sd_errmsg());
        nn_layer *ls = NULL;
        size_t np = 0;
        int nl = nn_model_plan(&w, w.batch, &ls, &np);
        cr_assert_gt(nl, 0, "%s: %s", name, sd_errmsg());
        for (int i = 0; i < nl; i++) {
            nn_op *op = &ls[i].op;
            if (op->kind != NN_OP_CONV2D) continue;
            nconv++;
            for (int k = 0; k < 2; k++) {
                const cudnnDataType_t want = cu_prec_cudnn_type(precs[k]);
                cu_descs d;
                cr_assert_eq(cu_descs_init_dt(&d, op, cu_prec_conv_math(precs[k]), want), 0, "%s %s: %s", name,
                             ls[i].name, sd_errmsg());
                cr_assert_eq(cu_descs_check(&d, op), 0, "%s %s: %s", name, ls[i].name, sd_errmsg());
                int n, c, h, ww, st[4], fk, fc, fh, fw;
                cudnnDataType_t dt;
                cudnnTensorFormat_t fmt;
                cr_assert_eq(cudnnGetTensor4dDescriptor(d.x, &dt, &n, &c, &h, &ww, &st[0], &st[1], &st[2], &st[3]),
                             CUDNN_STATUS_SUCCESS);
                cr_assert_eq(dt, want, "x");
                cr_assert_eq(cudnnGetTensor4dDescriptor(d.y, &dt, &n, &c, &h, &ww, &st[0], &st[1], &st[2], &st[3]),
                             CUDNN_STATUS_SUCCESS);
                cr_assert(dt == want && n == op->n && c == op->oc && h == op->oh && ww == op->ow, "y");
                cr_assert_eq(cudnnGetFilter4dDescriptor(d.w, &dt, &fmt, &fk, &fc, &fh, &fw), CUDNN_STATUS_SUCCESS);
                cr_assert_eq(dt, want, "w");
                cr_assert_eq(cudnnGetTensor4dDescriptor(d.bias, &dt, &n, &c, &h, &ww, &st[0], &st[1], &st[2], &st[3]),
                             CUDNN_STATUS_SUCCESS);
                cr_assert_eq(dt, CUDNN_DATA_FLOAT, "the bias stays fp32");
                for (int dir_ = 0; dir_ < 3; dir_++) {
                    int ph, pw, sh, sw, dh, dw;
                    cudnnConvolutionMode_t mode;
                    cudnnDataType_t ct;
                    cudnnMathType_t mt;
                    cr_assert_eq(cudnnGetConvolution2dDescriptor(d.conv[dir_], &ph, &pw, &sh, &sw, &dh, &dw, &mode, &ct),
                                 CUDNN_STATUS_SUCCESS);
                    cr_assert_eq(ct, CUDNN_DATA_FLOAT, "%s: the compute type is FLOAT (pseudo-half)", name);
                    cr_assert_eq(cudnnGetConvolutionMathType(d.conv[dir_], &mt), CUDNN_STATUS_SUCCESS);
                    cr_assert_eq(mt, CUDNN_TENSOR_OP_MATH);
                }
                cu_descs_fini(&d);
            }
        }
        free(ls);
        sd_workload_free(&w);
    }
    closedir(dir);
    cr_assert_geq(nconv, 10, "convolutions checked: %d", nconv);
}

/* The 16-bit scratch of an op: its x, w and y, two bytes each, every part 256-byte aligned; none for other ops. */
Test(cudnn_rules, half_scratch_sizes) {
    nn_op d = dense_op(3, 33, 65), c = conv_op(2, 3, 7, 9, 5, 3, 1, 1);
    cr_assert_eq(cu_half_bytes(&d), 256 + 4352 + 512, "dense: x 198 B, w 4290 B, y 390 B, each rounded up");
    cr_assert_eq(cu_half_bytes(&c), 768 + 512 + 1280, "conv: x 756 B, w 270 B, y 1260 B");
    nn_op r = eltwise_op(NN_OP_RELU, 2, 3, 4, 5);
    cr_assert_eq(cu_half_bytes(&r), 0);
}

Test(cudnn_shapes, eltwise_and_loss_descriptors) {
    nn_op ops[] = {eltwise_op(NN_OP_RELU, 64, 50, 32, 32), eltwise_op(NN_OP_DROPOUT, 128, 64, 12, 12),
                   eltwise_op(NN_OP_SOFTMAX_XENT, 64, 10, 1, 1), eltwise_op(NN_OP_FLATTEN, 64, 100, 8, 8)};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        cu_descs d;
        cr_assert_eq(cu_descs_init(&d, &ops[i], CUDNN_FMA_MATH), 0, "kind %d: %s", ops[i].kind, sd_errmsg());
        cr_assert_eq(cu_descs_check(&d, &ops[i]), 0);
        if (ops[i].kind == NN_OP_SOFTMAX_XENT || ops[i].kind == NN_OP_RELU) {
            int n, c, h, w, s[4];
            cudnnDataType_t dt;
            cr_assert_eq(cudnnGetTensor4dDescriptor(d.y, &dt, &n, &c, &h, &w, &s[0], &s[1], &s[2], &s[3]),
                         CUDNN_STATUS_SUCCESS);
            cr_assert(n == ops[i].n && c == ops[i].oc && h == ops[i].oh && w == ops[i].ow && s[3] == 1);
        }
        cu_descs_fini(&d);
    }
}

Test(cudnn_shapes, mismatch_is_reported_with_both_shapes) {
    nn_op op = conv_op(8, 3, 32, 32, 16, 3, 1, 1);
    op.oh = 30;   /* as if the graph had forgotten the padding */
    cu_descs d;
    cr_assert_eq(cu_descs_init(&d, &op, CUDNN_FMA_MATH), 0, "%s", sd_errmsg());
    cr_assert_eq(cu_descs_check(&d, &op), SD_EINPUT);
    cr_assert_not_null(strstr(sd_errmsg(), "cuDNN infers 8x16x32x32, the layer says 8x16x30x32"), "%s", sd_errmsg());
    cu_descs_fini(&d);
    nn_op bad = conv_op(8, 3, 32, 32, 16, 3, 1, 1);
    bad.c = 0;   /* cuDNN rejects it: the CHECK message names the call */
    cr_assert_eq(cu_descs_init(&d, &bad, CUDNN_FMA_MATH), SD_EBACKEND);
    cr_assert_not_null(strstr(sd_errmsg(), "cuDNN: cudnnSet"), "%s", sd_errmsg());
    cr_assert_null(d.x);
}

/* ---- algorithm choice ------------------------------------------------------------------------------------ */

Test(cudnn_algo, pick_respects_status_workspace_and_precision) {
    cu_algo_perf p[] = {
        {.algo = 6, .status = CUDNN_STATUS_NOT_SUPPORTED, .time_ms = 0.01f, .memory = 0, .math = CUDNN_FMA_MATH},
        {.algo = 1, .status = CUDNN_STATUS_SUCCESS, .time_ms = 0.02f, .memory = 0, .math = CUDNN_TENSOR_OP_MATH},
        {.algo = 7, .status = CUDNN_STATUS_SUCCESS, .time_ms = 0.03f, .memory = 1 << 30, .math = CUDNN_FMA_MATH},
        {.algo = 0, .status = CUDNN_STATUS_SUCCESS, .time_ms = 0.04f, .memory = 4096, .math = CUDNN_DEFAULT_MATH},
    };
    cr_assert_eq(cu_algo_pick(p, 4, (size_t)1 << 20, 0), 3);        /* fp32: no tensor ops, ws fits */
    cr_assert_eq(cu_algo_pick(p, 4, (size_t)1 << 20, 1), 1);        /* tf32 allows tensor-op math */
    cr_assert_eq(cu_algo_pick(p, 4, (size_t)1 << 31, 0), 2);        /* enough workspace for algo 7 */
    cr_assert_eq(cu_algo_pick(p, 1, (size_t)1 << 31, 1), -1);
    cr_assert_eq(cu_algo_math(CUDNN_DEFAULT_MATH, 0), CUDNN_FMA_MATH); /* Ampere+ would use TF32 */
    cr_assert_eq(cu_algo_math(CUDNN_DEFAULT_MATH, 1), CUDNN_DEFAULT_MATH);
    cr_assert_eq(cu_algo_math(CUDNN_TENSOR_OP_MATH, 1), CUDNN_TENSOR_OP_MATH);
    /* fp16 and bf16 allow tensor ops as tf32 does (the flag is "not fp32") */
    cr_assert_eq(cu_algo_pick(p, 4, (size_t)1 << 20, CU_PREC_FP16 != CU_PREC_FP32), 1);
}

Test(cudnn_algo, names_keys_and_record) {
    cr_assert_str_eq(cu_algo_name(CU_FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM), "IMPLICIT_PRECOMP_GEMM");
    cr_assert_str_eq(cu_algo_name(CU_BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED),
                     "WINOGRAD_NONFUSED");
    cr_assert_str_eq(cu_algo_name(CU_BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING), "FFT_TILING");
    cr_assert_str_eq(cu_algo_name(CU_FWD, 99), "UNKNOWN");
    nn_op op = conv_op(64, 3, 32, 32, 50, 3, 1, 1);
    cu_conv_choice c = {.searched = 1};
    cu_conv_key(&op, c.key, sizeof c.key);
    cr_assert_str_eq(c.key, "n64 3x32x32 -> 50 k3x3 s1x1 p1x1");
    c.dir[CU_FWD] = (cu_algo_perf){.algo = 1, .time_ms = 0.125f, .memory = 2048, .math = CUDNN_FMA_MATH};
    c.dir[CU_BWD_DATA] = (cu_algo_perf){.algo = 1, .time_ms = 0.25f, .memory = 0, .math = CUDNN_FMA_MATH};
    c.dir[CU_BWD_FILTER] = (cu_algo_perf){.algo = 3, .time_ms = -1, .memory = 0, .math = CUDNN_TENSOR_OP_MATH};
    char buf[512];
    cu_conv_choice_str(&c, buf, sizeof buf);
    cr_assert_str_eq(buf, "fwd=IMPLICIT_PRECOMP_GEMM(0.125 ms, ws 2048 B, fma) bwd_data=ALGO_1(0.250 ms, ws 0 B, fma) "
                          "bwd_filter=ALGO_3(ws 0 B, tensor-op) [find]");
    char small[40];
    cu_conv_choice_str(&c, small, sizeof small);   /* truncates, stays terminated */
    cr_assert_eq(strlen(small), sizeof small - 1);
}
#endif

/* ---- (c) the element functions of nn/kernels.h against the reference back-end -------------------------- */

Test(kernels, relu_and_dropout_match_reference) {
    nn_backend *ref = open_ref();
    nn_op op = eltwise_op(NN_OP_RELU, 3, 4, 5, 7);
    const size_t n = 3 * 4 * 5 * 7;
    float *x = rand_vec(n), *dy = rand_vec(n), *y = calloc(n, 4), *dx = calloc(n, 4);
    cr_assert_eq(ref->ops->relu_forward(ref, &op, y, x), 0);
    cr_assert_eq(ref->ops->relu_backward(ref, &op, dx, dy, y), 0);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(y[i], nn_relu(x[i]), "relu %zu", i);
        cr_assert_eq(dx[i], nn_relu_grad(dy[i], y[i]), "relu grad %zu", i);
    }
    op.kind = NN_OP_DROPOUT;
    op.rate = 0.3f;
    uint8_t *mask = calloc(ref->ops->workspace_size(ref, &op), 1);
    cr_assert_eq(ref->ops->dropout_forward(ref, &op, y, mask, x, 42), 0);
    cr_assert_eq(ref->ops->dropout_backward(ref, &op, dx, dy, mask), 0);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        int keep = nn_dropout_keep(42, i, op.rate);
        kept += (size_t)keep;
        cr_assert_eq(mask[i], keep, "mask %zu", i);
        cr_assert_eq(y[i], nn_dropout_apply(x[i], keep, op.rate), "dropout %zu", i);
        cr_assert_eq(dx[i], nn_dropout_apply(dy[i], keep, op.rate), "dropout grad %zu", i);
        if (keep) cr_assert_float_eq(y[i], x[i] / 0.7f, 1e-6f);
        else cr_assert_eq(y[i], 0.0f);
    }
    cr_assert(kept > n / 2 && kept < n * 9 / 10, "kept %zu of %zu at rate 0.3", kept, n);
    free(x); free(dy); free(y); free(dx); free(mask);
    nn_backend_free(ref);
}

/* The 16-bit conversions of mixed precision (nn/half.h, what the conversion kernels run): fp32 -> IEEE half
 * against the compiler's _Float16 (round to nearest even) and fp32 -> bfloat16 against a rounding computed apart,
 * on a sweep of bit patterns through every exponent and on the edges (the largest half, 65520 rounding to inf,
 * the subnormal range and its ties, NaN, inf); half -> fp32 on all 65536 values; bf16 -> fp32 is exact. (An
 * exhaustive run over all 2^32 fp32 patterns agreed too, in 12 s: too slow for the suite under ASan.) */
static uint16_t bf16_apart(float f) {   /* the nearer of the two bf16 neighbours, ties to the even one */
    const uint32_t x = nn_f32_bits(f), lo = x & 0xffff0000u;
    if (isinf(f)) return (uint16_t)(x >> 16);
    const double d = f, vlo = nn_bits_f32(lo);
    const double vhi = (lo & 0x7fffffffu) == 0x7f7f0000u ? copysign(ldexp(1.0, 128), d)   /* past FLT_MAX */
                                                          : (double)nn_bits_f32(lo + 0x10000u);
    const double elo = fabs(d - vlo), ehi = fabs(vhi - d);
    if (elo != ehi) return (uint16_t)((elo < ehi ? lo : lo + 0x10000u) >> 16);
    return (uint16_t)(((lo >> 16) & 1u) ? (lo + 0x10000u) >> 16 : lo >> 16);
}
static void check_conversion(uint32_t bits, long *bad) {
    const float f = nn_bits_f32(bits);
    const uint16_t h = nn_f32_to_f16(f), b = nn_f32_to_bf16(f);
    if (isnan(f)) {   /* a NaN stays a NaN (quiet) */
        if (!isnan(nn_f16_to_f32(h)) || !isnan(nn_bf16_to_f32(b))) (*bad)++;
        return;
    }
#ifdef __FLT16_MAX__
    const _Float16 r = (_Float16)f;
    uint16_t rb;
    memcpy(&rb, &r, sizeof rb);
    if (h != rb && (*bad)++ < 5) printf("fp16 of %08x (%.9g): %04x, the compiler says %04x\n", bits, f, h, rb);
#endif
    const uint16_t want = bf16_apart(f);
    if (b != want && (*bad)++ < 5) printf("bf16 of %08x (%.9g): %04x, expected %04x\n", bits, f, b, want);
}
Test(kernels, half_conversions) {
    long bad = 0;
    for (uint64_t u = 0; u < 0x100000000ULL; u += 4093) check_conversion((uint32_t)u, &bad);
    const uint32_t edges[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x007fffffu, 0x33000000u, 0x33000001u,
                              0x337fffffu, 0x33800000u, 0x38800000u, 0x387fffffu, 0x38800001u, 0x477fe000u,
                              0x477fefffu, 0x477ff000u, 0x477ff001u, 0xc77ff000u, 0x7f7fffffu, 0x7f7f8000u,
                              0x7f7f7fffu, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u, 0x3f800000u,
                              0x3f808000u, 0x3f818000u, 0x3f801000u, 0x3f803000u, 0x3f802000u};
    for (size_t i = 0; i < sizeof edges / sizeof *edges; i++) {
        check_conversion(edges[i], &bad);
        for (int k = 1; k < 64; k++) { check_conversion(edges[i] + (uint32_t)k, &bad); check_conversion(edges[i] - (uint32_t)k, &bad); }
    }
    cr_expect_eq(bad, 0, "%ld conversions differ", bad);
    /* spot values: 65504 is the largest half, 65520 rounds to inf, 2^-24 the smallest subnormal, 2^-25 ties to 0 */
    cr_expect_eq(nn_f32_to_f16(65504.0f), 0x7bff);
    cr_expect_eq(nn_f32_to_f16(65519.99f), 0x7bff);
    cr_expect_eq(nn_f32_to_f16(65520.0f), 0x7c00);
    cr_expect_eq(nn_f32_to_f16(0x1p-24f), 0x0001);
    cr_expect_eq(nn_f32_to_f16(0x1p-25f), 0x0000);
    cr_expect_eq(nn_f32_to_f16(0x1.8p-25f), 0x0001);
    cr_expect_eq(nn_f32_to_f16(-1.0f), 0xbc00);
    cr_expect_eq(nn_f32_to_bf16(1.0f), 0x3f80);
    cr_expect_eq(nn_f32_to_bf16(3.4e38f), 0x7f80, "rounds to inf");
    /* half -> fp32 on every value, and back unchanged */
    long bad16 = 0;
    for (uint32_t v = 0; v < 65536; v++) {
        const float f = nn_f16_to_f32((uint16_t)v);
#ifdef __FLT16_MAX__
        _Float16 r;
        const uint16_t vv = (uint16_t)v;
        memcpy(&r, &vv, sizeof r);
        const float rf = (float)r;
        if (!(isnan(f) && isnan(rf)) && memcmp(&f, &rf, sizeof f) != 0) bad16++;
#endif
        if (!isnan(f) && nn_f32_to_f16(f) != v) bad16++;
        if (!isnan(nn_bf16_to_f32((uint16_t)v)) && nn_f32_to_bf16(nn_bf16_to_f32((uint16_t)v)) != v) bad16++;
    }
    cr_expect_eq(bad16, 0, "%ld 16-bit values do not widen exactly or do not round-trip", bad16);
    cr_expect_eq(nn_f16_to_f32(0x0001), 0x1p-24f);
    cr_expect_eq(nn_f16_to_f32(0x7bff), 65504.0f);
    cr_expect(isinf(nn_f16_to_f32(0xfc00)) && nn_f16_to_f32(0xfc00) < 0);
}

Test(kernels, dropout_mask_rate) {
    size_t kept = 0, n = 200000;
    for (size_t i = 0; i < n; i++) kept += (size_t)nn_dropout_keep(7, i, 0.25f);
    cr_assert(fabs((double)kept / n - 0.75) < 0.005, "kept fraction %f", (double)kept / n);
    cr_assert_eq(nn_dropout_keep(7, 0, 0.0f), 1);
    cr_assert_eq(nn_dropout_keep(7, 0, 1.0f), 0);
}

Test(kernels, softmax_xent_matches_reference) {
    nn_backend *ref = open_ref();
    const int N = 9, C = 10;
    nn_op op = eltwise_op(NN_OP_SOFTMAX_XENT, N, C, 1, 1);
    float *z = rand_vec((size_t)N * C), prob[90], loss[9], dz[90];
    for (int i = 0; i < N * C; i++) z[i] *= 8.0f;
    int32_t lab[9];
    for (int i = 0; i < N; i++) lab[i] = (i * 7) % C;
    cr_assert_eq(ref->ops->softmax_xent_forward(ref, &op, prob, loss, z, lab), 0, "%s", sd_errmsg());
    cr_assert_eq(ref->ops->softmax_xent_backward(ref, &op, dz, prob, lab), 0);
    const float inv = 1.0f / (float)N;
    for (int i = 0; i < N; i++) {
        cr_assert_eq(loss[i], nn_xent_row_loss(z + i * C, C, lab[i]), "loss %d", i);
        cr_assert_float_eq(loss[i], -logf(prob[i * C + lab[i]]), 1e-4f);
        float sum = 0;
        for (int k = 0; k < C; k++) {
            cr_assert_eq(dz[i * C + k], nn_xent_grad(prob[i * C + k], k == lab[i], inv), "grad %d,%d", i, k);
            sum += dz[i * C + k];
        }
        cr_assert_float_eq(sum, 0.0f, 1e-6f);   /* probabilities sum to 1 */
    }
    /* large logits: no overflow, loss from the logits not from a rounded probability */
    float big[3] = {1000.0f, 0.0f, -1000.0f};
    cr_assert_float_eq(nn_xent_row_loss(big, 3, 0), 0.0f, 1e-6f);
    cr_assert_float_eq(nn_xent_row_loss(big, 3, 1), 1000.0f, 1e-3f);
    free(z);
    nn_backend_free(ref);
}

Test(kernels, optimizers_match_reference) {
    nn_backend *ref = open_ref();
    const size_t n = 1000;
    const nn_optim opts[] = {
        {.kind = NN_OPTIM_SGD, .lr = 0.01f, .momentum = 0.9f},
        {.kind = NN_OPTIM_SGD, .lr = 0.1f, .momentum = 0.0f},
        {.kind = NN_OPTIM_RMSPROP, .lr = 0.001f, .rho = 0.9f, .eps = 1e-7f},
        {.kind = NN_OPTIM_ADADELTA, .lr = 1.0f, .rho = 0.95f, .eps = 1e-7f},
        {.kind = NN_OPTIM_ADAM, .lr = 0.001f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f},
    };
    for (size_t t = 0; t < sizeof opts / sizeof *opts; t++) {
        const nn_optim *o = &opts[t];
        const int k = nn_optim_state_per_param(o->kind);
        float *p = rand_vec(n), *p2 = malloc(n * 4), *st = calloc(k * n, 4), *st2 = calloc(k * n, 4);
        memcpy(p2, p, n * 4);
        for (long step = 1; step <= 3; step++) {
            float *g = rand_vec(n);
            cr_assert_eq(ref->ops->optimizer_step(ref, o, p, g, st, n, step), 0);
            const float bc1 = 1.0f - powf(o->beta1, (float)step), bc2 = 1.0f - powf(o->beta2, (float)step);
            for (size_t i = 0; i < n; i++) {
                switch (o->kind) {
                case NN_OPTIM_SGD: nn_sgd_update(&p2[i], g[i], &st2[i], o->lr, o->momentum); break;
                case NN_OPTIM_RMSPROP: nn_rmsprop_update(&p2[i], g[i], &st2[i], o->lr, o->rho, o->eps); break;
                case NN_OPTIM_ADADELTA:
                    nn_adadelta_update(&p2[i], g[i], &st2[i], &st2[n + i], o->lr, o->rho, o->eps);
                    break;
                case NN_OPTIM_ADAM:
                    nn_adam_update(&p2[i], g[i], &st2[i], &st2[n + i], o->lr, o->beta1, o->beta2, o->eps, bc1, bc2);
                    break;
                default: cr_assert_fail();
                }
            }
            free(g);
        }
        for (size_t i = 0; i < n; i++) cr_assert_eq(p[i], p2[i], "optimizer %zu param %zu", t, i);
        for (size_t i = 0; i < k * n; i++) cr_assert_eq(st[i], st2[i], "optimizer %zu state %zu", t, i);
        free(p); free(p2); free(st); free(st2);
    }
    /* one hand-computed Adam step: m = 0.1 g, v = 0.001 g^2, mh = g, vh = g^2, p -= lr g/(|g|+eps) */
    float p = 1.0f, m = 0, v = 0;
    nn_adam_update(&p, 0.5f, &m, &v, 0.1f, 0.9f, 0.999f, 1e-8f, 1.0f - 0.9f, 1.0f - 0.999f);
    cr_assert_float_eq(p, 0.9f, 1e-6f);
    nn_backend_free(ref);
}

/* ---- (d) the loss contract on every back-end ------------------------------------------------------------- */

/* The op-by-op parity suite for all back-ends is tests/test_parity.c (cudnn/dnnl vs ref). This adds the
 * one contract that differs by design: a label outside [0,C) is SD_EINPUT from softmax_xent_forward on a
 * host back-end, and from the next sync() on a device (the kernel flags it; no per-step sync). Run over
 * ref, dnnl and cudnn, with the same loss parity; unavailable back-ends skip with the reason. */
typedef struct pctx { nn_backend *be, *ref; } pctx;

/* 0 with why[] filled if the back-end is not built or has no device. */
static int open_pair(const char *name, pctx *p, char *why, size_t len) {
    if (!nn_backend_compiled(name)) {
        snprintf(why, len, "%s: not built into this binary (built: %s)", name, nn_backend_list());
        return 0;
    }
    nn_backend_opts o = {.threads = 2, .autotune = 1, .precision = "fp32", .quiet = 1};
    int rc = nn_backend_new(&p->be, name, &o, NULL, 0);
    if (rc == SD_ENODEV) {
        snprintf(why, len, "%s: %s", name, sd_errmsg());
        return 0;
    }
    cr_assert_eq(rc, 0, "%s: %s", name, sd_errmsg());
    p->ref = open_ref();
    return 1;
}

static void close_pair(pctx *p) {
    nn_backend_free(p->be);
    nn_backend_free(p->ref);
}

/* A buffer in a back-end's memory holding a copy of host data (or zeros). */
static void *dev(nn_backend *be, const void *host, size_t bytes) {
    void *d = NULL;
    cr_assert_eq(nn_dev_alloc(be, &d, bytes), 0, "%s: alloc %zu: %s", be->name, bytes, sd_errmsg());
    if (host) cr_assert_eq(be->ops->upload(be, d, host, bytes), 0, "%s: %s", be->name, sd_errmsg());
    else cr_assert_eq(be->ops->zero(be, d, bytes), 0, "%s: %s", be->name, sd_errmsg());
    return d;
}
static float *host_of(nn_backend *be, const void *d, size_t n) {
    float *h = malloc(sizeof(float) * (n ? n : 1));
    cr_assert_eq(be->ops->download(be, h, d, sizeof(float) * n), 0, "%s: %s", be->name, sd_errmsg());
    return h;
}

static void expect_close(const char *be, const char *what, const float *got, const float *want, size_t n,
                         float atol, float rtol) {
    size_t worst = 0;
    double worst_r = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]);
        double r = d == 0 ? 0 : d / (atol + rtol * fabs((double)want[i]));
        if (!(r <= worst_r)) { worst_r = r; worst = i; }   /* NaN counts as worst */
    }
    cr_assert(worst_r <= 1.0, "%s: %s: element %zu of %zu: %.9g, reference %.9g", be, what, worst, n, got[worst],
              want[worst]);
}

static void prep(nn_backend *be, nn_op *op) {
    if (be->ops->prepare) cr_assert_eq(be->ops->prepare(be, op), 0, "%s: prepare: %s", be->name, sd_errmsg());
}
static void unprep(nn_backend *be, nn_op *op) {
    if (be->ops->release) be->ops->release(be, op);
}

static void check_xent(pctx *p, int N, int C) {
    float *z = rand_vec((size_t)N * C), *out[2][3];
    for (int i = 0; i < N * C; i++) z[i] *= 6.0f;
    int32_t *lab = malloc(sizeof(int32_t) * N);
    for (int i = 0; i < N; i++) lab[i] = (i * 3 + 1) % C;
    nn_backend *bes[2] = {p->be, p->ref};
    const size_t nz = (size_t)N * C;
    for (int k = 0; k < 2; k++) {
        nn_backend *be = bes[k];
        nn_op o = eltwise_op(NN_OP_SOFTMAX_XENT, N, C, 1, 1);
        prep(be, &o);
        float *z_ = dev(be, z, nz * 4), *prob = dev(be, NULL, nz * 4), *loss = dev(be, NULL, N * 4);
        float *dz = dev(be, NULL, nz * 4);
        int32_t *lab_ = dev(be, lab, N * 4);
        cr_assert_eq(be->ops->softmax_xent_forward(be, &o, prob, loss, z_, lab_), 0, "%s: %s", be->name, sd_errmsg());
        cr_assert_eq(be->ops->softmax_xent_backward(be, &o, dz, prob, lab_), 0, "%s: %s", be->name, sd_errmsg());
        out[k][0] = host_of(be, prob, nz);
        out[k][1] = host_of(be, loss, N);
        out[k][2] = host_of(be, dz, nz);
        /* a label outside [0,C): SD_EINPUT from the call or, on a device, from the next sync */
        int32_t bad = C;
        cr_assert_eq(be->ops->upload(be, lab_, &bad, 4), 0);
        int rc = be->ops->softmax_xent_forward(be, &o, prob, loss, z_, lab_);
        if (rc == 0) rc = be->ops->sync(be);
        cr_assert_eq(rc, SD_EINPUT, "%s: bad label: rc %d", be->name, rc);
        cr_assert_not_null(strstr(sd_errmsg(), "out of range"), "%s: %s", be->name, sd_errmsg());
        cr_assert_eq(be->ops->sync(be), 0, "%s: the error is reported once: %s", be->name, sd_errmsg());
        nn_dev_free(be, z_, nz * 4); nn_dev_free(be, prob, nz * 4); nn_dev_free(be, loss, N * 4);
        nn_dev_free(be, dz, nz * 4); nn_dev_free(be, lab_, N * 4);
        unprep(be, &o);
    }
    expect_close(p->be->name, "softmax prob", out[0][0], out[1][0], nz, 1e-6f, 1e-5f);
    expect_close(p->be->name, "xent loss", out[0][1], out[1][1], N, 1e-6f, 1e-5f);
    expect_close(p->be->name, "xent dlogits", out[0][2], out[1][2], nz, 1e-7f, 1e-5f);
    for (int k = 0; k < 2; k++) for (int i = 0; i < 3; i++) free(out[k][i]);
    free(z); free(lab);
}

/* by value: Criterion runs each case in a fresh process, where pointers into ours mean nothing */
typedef struct be_param { char name[16]; } be_param;

ParameterizedTestParameters(contract, softmax_xent_labels) {
    static be_param names[] = {{"ref"}, {"dnnl"}, {"cudnn"}};
    return cr_make_param_array(be_param, names, sizeof names / sizeof *names);
}

ParameterizedTest(be_param *param, contract, softmax_xent_labels) {
    pctx p = {0};
    char why[600];
    if (!open_pair(param->name, &p, why, sizeof why)) TU_SKIP("%s", why);
    check_xent(&p, 7, 10);
    check_xent(&p, 130, 3);
    close_pair(&p);
}

#if SD_HAVE_CUDNN   /* the cuDNN back-end's own code: built only with it */
/* A bad token id and a bad label are told apart (separate device flags): each names itself and its range. */
Test(cudnn_rules, bad_token_and_label_reported_apart) {
    int none[CU_BAD_INTS] = {0}, lab[CU_BAD_INTS] = {0}, tok[CU_BAD_INTS] = {0}, both[CU_BAD_INTS] = {0};
    lab[CU_BAD_LABEL] = 1; lab[CU_BAD_LABEL + 1] = 12;
    tok[CU_BAD_TOKEN] = 1; tok[CU_BAD_TOKEN + 1] = -3;
    both[CU_BAD_LABEL] = 1; both[CU_BAD_LABEL + 1] = 12; both[CU_BAD_TOKEN] = 1; both[CU_BAD_TOKEN + 1] = 99;
    cr_assert_eq(cu_bad_status(none, 10, 50), 0);
    cr_assert_eq(cu_bad_status(lab, 10, 50), SD_EINPUT);
    cr_assert_str_eq(sd_errmsg(), "label 12 out of range [0,10)");
    cr_assert_eq(cu_bad_status(tok, 10, 50), SD_EINPUT);
    cr_assert_str_eq(sd_errmsg(), "embedding: token id -3 outside the vocabulary [0, 50)");
    cr_assert_eq(cu_bad_status(both, 10, 50), SD_EINPUT);   /* the embedding ran first */
    cr_assert_str_eq(sd_errmsg(), "embedding: token id 99 outside the vocabulary [0, 50)");
}
#endif

/* On every back-end: a bad token id is reported as a token (from the call, or on a device from the next sync),
 * then a bad label as a label, each once. */
static void check_bad_ids(nn_backend *be) {
    nn_op e = {.kind = NN_OP_EMBEDDING, .n = 2, .c = 3, .h = 1, .w = 1, .units = 4, .vocab = 5, .oc = 3, .oh = 1, .ow = 4};
    nn_op l = eltwise_op(NN_OP_SOFTMAX_XENT, 2, 5, 1, 1);
    prep(be, &e);
    prep(be, &l);
    int32_t ids[6] = {0, 1, 2, 3, 7, 4}, labs[2] = {1, 5};
    float *table = rand_vec(20);
    void *ids_ = dev(be, ids, sizeof ids), *tab_ = dev(be, table, 80), *y = dev(be, NULL, 24 * 4);
    void *labs_ = dev(be, labs, sizeof labs), *prob = dev(be, NULL, 40), *loss = dev(be, NULL, 8), *z = dev(be, NULL, 40);
    int rc = be->ops->embedding_forward(be, &e, y, ids_, tab_);
    if (rc == 0) rc = be->ops->sync(be);
    cr_assert_eq(rc, SD_EINPUT, "%s: bad token: rc %d", be->name, rc);
    cr_assert(strstr(sd_errmsg(), "token id 7") && strstr(sd_errmsg(), "outside the vocabulary [0, 5)"), "%s: %s",
              be->name, sd_errmsg());
    cr_assert_eq(be->ops->sync(be), 0, "%s: reported once: %s", be->name, sd_errmsg());
    rc = be->ops->softmax_xent_forward(be, &l, prob, loss, z, labs_);
    if (rc == 0) rc = be->ops->sync(be);
    cr_assert_eq(rc, SD_EINPUT, "%s: bad label: rc %d", be->name, rc);
    cr_assert_not_null(strstr(sd_errmsg(), "label 5 out of range"), "%s: %s", be->name, sd_errmsg());
    nn_dev_free(be, ids_, sizeof ids); nn_dev_free(be, tab_, 80); nn_dev_free(be, y, 96);
    nn_dev_free(be, labs_, sizeof labs); nn_dev_free(be, prob, 40); nn_dev_free(be, loss, 8); nn_dev_free(be, z, 40);
    unprep(be, &e);
    unprep(be, &l);
    free(table);
}

ParameterizedTestParameters(contract, bad_token_then_bad_label) {
    static be_param names[] = {{"ref"}, {"dnnl"}, {"cudnn"}};
    return cr_make_param_array(be_param, names, sizeof names / sizeof *names);
}

ParameterizedTest(be_param *param, contract, bad_token_then_bad_label) {
    pctx p = {0};
    char why[600];
    if (!open_pair(param->name, &p, why, sizeof why)) TU_SKIP("%s", why);
    check_bad_ids(p.be);
    close_pair(&p);
}

#if SD_HAVE_CUDNN
/* Conv parity tolerance by algorithm family (what gpu-check's parity tests compare with). */
Test(cudnn_algo, tolerance_per_family) {
    cr_assert_eq(cu_algo_tolerance(CU_FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 0), 1e-5);
    cr_assert_eq(cu_algo_tolerance(CU_FWD, CUDNN_CONVOLUTION_FWD_ALGO_DIRECT, 0), 1e-5);
    cr_assert_eq(cu_algo_tolerance(CU_BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, 0), 1e-5);
    cr_assert_eq(cu_algo_tolerance(CU_FWD, CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, 0), 1e-4);
    cr_assert_eq(cu_algo_tolerance(CU_FWD, CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING, 0), 1e-4);
    cr_assert_eq(cu_algo_tolerance(CU_BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING, 0), 1e-4);
    cr_assert_eq(cu_algo_tolerance(CU_BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD, 0), 1e-4);
    /* ALGO_3 of backward-filter is a GEMM variant, not an FFT: the name, not the number, decides */
    cr_assert_eq(cu_algo_tolerance(CU_BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, 0), 1e-5);
    cr_assert_eq(cu_algo_tolerance(CU_FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, 1), 5e-3);
    cr_assert_eq(cu_algo_tolerance(CU_FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CU_PREC_TF32), 5e-3);
    /* fp16, bf16: 4 unit roundoffs of the 16-bit type, twice that for the transforming families */
    cr_assert_eq(cu_algo_tolerance(CU_FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, CU_PREC_FP16), 2e-3);
    cr_assert_eq(cu_algo_tolerance(CU_BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED, CU_PREC_FP16), 4e-3);
    cr_assert_eq(cu_algo_tolerance(CU_BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, CU_PREC_BF16), 1.6e-2);
    cr_assert_eq(cu_algo_tolerance(CU_FWD, CUDNN_CONVOLUTION_FWD_ALGO_FFT, CU_PREC_BF16), 3.2e-2);
    cr_assert_eq(cu_prec_tolerance(CU_PREC_FP16), 2e-3);
    cr_assert_eq(cu_prec_tolerance(CU_PREC_BF16), 1.6e-2);
    cr_assert_eq(cu_prec_tolerance(CU_PREC_FP32), 1e-5);
    cr_assert(4.0 * ldexp(1.0, -11) <= 2e-3 && 4.0 * ldexp(1.0, -8) <= 1.6e-2, "4 u of each type");
}

/* ---- on a GPU (make gpu-check): every convolution algorithm cuDNN accepts, and device memory ------------ */


/* A device copy of n floats in precision prec's storage type (fp32, or 16-bit by nn/half.h as the back-end's
 * conversion kernels make it), and back to fp32 on the host. */
static void *dev_in(const float *h, size_t n, cu_prec prec) {
    void *d = NULL;
    if (!cu_prec_half(prec)) {
        cr_assert_eq(cudaMalloc(&d, n * 4), cudaSuccess);
        cr_assert_eq(cudaMemcpy(d, h, n * 4, cudaMemcpyHostToDevice), cudaSuccess);
        return d;
    }
    uint16_t *t = malloc(n * 2);
    cr_assert_not_null(t);
    for (size_t i = 0; i < n; i++) t[i] = prec == CU_PREC_BF16 ? nn_f32_to_bf16(h[i]) : nn_f32_to_f16(h[i]);
    cr_assert_eq(cudaMalloc(&d, n * 2), cudaSuccess);
    cr_assert_eq(cudaMemcpy(d, t, n * 2, cudaMemcpyHostToDevice), cudaSuccess);
    free(t);
    return d;
}
static void dev_out(float *h, const void *d, size_t n, cu_prec prec) {
    if (!cu_prec_half(prec)) {
        cr_assert_eq(cudaMemcpy(h, d, n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
        return;
    }
    uint16_t *t = malloc(n * 2);
    cr_assert_not_null(t);
    cr_assert_eq(cudaMemcpy(t, d, n * 2, cudaMemcpyDeviceToHost), cudaSuccess);
    for (size_t i = 0; i < n; i++) h[i] = prec == CU_PREC_BF16 ? nn_bf16_to_f32(t[i]) : nn_f16_to_f32(t[i]);
    free(t);
}

/* Runs algorithm `algo` of direction dir on descriptors d (made for prec: FMA math for fp32, 16-bit data and
 * tensor-op math for fp16/bf16) into out (host, fp32); 0, or 1 when cuDNN declines the algorithm for this shape
 * (workspace query or the call says NOT_SUPPORTED). */
static int run_algo(cudnnHandle_t h, cu_descs *d, cu_prec prec, int dir, int algo, const float *x, const float *w,
                    const float *dy, float *out, size_t nx, size_t nw, size_t ny) {
    size_t ws = 0;
    cudnnStatus_t st;
    if (dir == CU_FWD)
        st = cudnnGetConvolutionForwardWorkspaceSize(h, d->x, d->w, d->conv[dir], d->y, (cudnnConvolutionFwdAlgo_t)algo, &ws);
    else if (dir == CU_BWD_DATA)
        st = cudnnGetConvolutionBackwardDataWorkspaceSize(h, d->w, d->y, d->conv[dir], d->x,
                                                          (cudnnConvolutionBwdDataAlgo_t)algo, &ws);
    else
        st = cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d->x, d->y, d->conv[dir], d->w,
                                                            (cudnnConvolutionBwdFilterAlgo_t)algo, &ws);
    if (st != CUDNN_STATUS_SUCCESS) return 1;
    if (ws > ((size_t)1 << 30)) return 1;
    void *dx_ = dev_in(x, nx, prec), *dw_ = dev_in(w, nw, prec), *dy_ = dev_in(dy, ny, prec);
    void *wsp = NULL;
    if (ws) cr_assert_eq(cudaMalloc(&wsp, ws), cudaSuccess);
    const float one = 1.0f, zero = 0.0f;   /* float scalars for FLOAT and the pseudo-half configurations */
    void *res;
    size_t nres;
    if (dir == CU_FWD) {
        st = cudnnConvolutionForward(h, &one, d->x, dx_, d->w, dw_, d->conv[dir], (cudnnConvolutionFwdAlgo_t)algo, wsp,
                                     ws, &zero, d->y, dy_);
        res = dy_; nres = ny;
    } else if (dir == CU_BWD_DATA) {
        st = cudnnConvolutionBackwardData(h, &one, d->w, dw_, d->y, dy_, d->conv[dir],
                                          (cudnnConvolutionBwdDataAlgo_t)algo, wsp, ws, &zero, d->x, dx_);
        res = dx_; nres = nx;
    } else {
        st = cudnnConvolutionBackwardFilter(h, &one, d->x, dx_, d->y, dy_, d->conv[dir],
                                            (cudnnConvolutionBwdFilterAlgo_t)algo, wsp, ws, &zero, d->w, dw_);
        res = dw_; nres = nw;
    }
    int declined = algo_declined(st);
    if (!declined) {
        cr_assert_eq(st, CUDNN_STATUS_SUCCESS, "%s: %s", cu_algo_name(dir, algo), cudnnGetErrorString(st));
        cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
        dev_out(out, res, nres, prec);
    }
    cudaFree(dx_); cudaFree(dw_); cudaFree(dy_); cudaFree(wsp);
    return declined;
}

/* For each convolution of the workloads (batch 4), every forward, backward-data and backward-filter algorithm
 * cuDNN accepts for the shape is run and compared with the reference at its family's tolerance; each line
 * names the algorithm. At least one algorithm per direction must be usable. fp16, bf16: the same on descriptors
 * in the 16-bit type (the back-end's pseudo-half configurations), operands rounded as its conversion kernels do,
 * at the 16-bit tolerances (cu_algo_tolerance). */
static void every_algorithm(cu_prec prec) {
    pctx p = {0};
    char why[600];
    if (!open_pair("cudnn", &p, why, sizeof why)) TU_SKIP("%s", why);
    if (prec == CU_PREC_BF16) {
        struct cudaDeviceProp prop;
        cr_assert_eq(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
        if (cu_prec_check_device(prec, prop.major, prop.minor, prop.name)) {
            close_pair(&p);
            TU_SKIP("%s", sd_errmsg());
        }
    }
    const char *pn = cu_prec_name(prec);
    cudnnHandle_t h;
    cr_assert_eq(cudnnCreate(&h), CUDNN_STATUS_SUCCESS);
    layer_case L[32];
    int nl = workload_layers(L);
    for (int i = 0; i < nl; i++) {
        if (L[i].op.kind != NN_OP_CONV2D) continue;
        nn_op op = L[i].op;
        op.n = 4;
        const size_t nx = (size_t)op.n * op.c * op.h * op.w, ny = (size_t)op.n * op.oc * op.oh * op.ow;
        const size_t nw = (size_t)op.oc * op.c * op.kh * op.kw;
        float *x = rand_vec(nx), *w = rand_vec(nw), *dy = rand_vec(ny), *got = malloc(4 * (nx > nw ? (nx > ny ? nx : ny)
                                                                                                    : (nw > ny ? nw : ny)));
        /* the reference: y, dx, dw (dw from zero) */
        float *want[3];
        {
            nn_backend *r = p.ref;
            prep(r, &op);
            void *X = dev(r, x, nx * 4), *W = dev(r, w, nw * 4), *DY = dev(r, dy, ny * 4);
            void *Y = dev(r, NULL, ny * 4), *DX = dev(r, NULL, nx * 4), *DW = dev(r, NULL, nw * 4);
            cr_assert_eq(r->ops->conv2d_forward(r, &op, Y, X, W, NULL), 0, "%s", sd_errmsg());
            cr_assert_eq(r->ops->conv2d_backward(r, &op, DX, DW, NULL, DY, X, W), 0, "%s", sd_errmsg());
            want[CU_FWD] = host_of(r, Y, ny); want[CU_BWD_DATA] = host_of(r, DX, nx); want[CU_BWD_FILTER] = host_of(r, DW, nw);
            nn_dev_free(r, X, nx * 4); nn_dev_free(r, W, nw * 4); nn_dev_free(r, DY, ny * 4);
            nn_dev_free(r, Y, ny * 4); nn_dev_free(r, DX, nx * 4); nn_dev_free(r, DW, nw * 4);
            unprep(r, &op);
        }
        cu_descs d;
        cr_assert_eq(cu_descs_init_dt(&d, &op, cu_prec_conv_math(prec), cu_prec_cudnn_type(prec)), 0, "%s",
                     sd_errmsg());
        const int counts[3] = {CUDNN_CONVOLUTION_FWD_ALGO_COUNT, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                               CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT};
        const size_t sizes[3] = {ny, nx, nw};
        for (int dir = 0; dir < 3; dir++) {
            int usable = 0;
            for (int a = 0; a < counts[dir]; a++) {
                if (run_algo(h, &d, prec, dir, a, x, w, dy, got, nx, nw, ny)) {
                    printf("cudnn %s %-20s %-12s %-22s declined\n", pn, L[i].name,
                           dir == 0 ? "forward" : dir == 1 ? "bwd-data" : "bwd-filter", cu_algo_name(dir, a));
                    continue;
                }
                usable++;
                double e = tu_rel_err(got, want[dir], sizes[dir]), tol = cu_algo_tolerance(dir, a, prec);
                printf("cudnn %s %-20s %-12s %-22s rel %.2e (tolerance %.1e)\n", pn, L[i].name,
                       dir == 0 ? "forward" : dir == 1 ? "bwd-data" : "bwd-filter", cu_algo_name(dir, a), e, tol);
                cr_expect(e < tol, "%s %s %s algorithm %s: relative error %.3e >= %.1e", pn, L[i].name,
                          dir == 0 ? "forward" : dir == 1 ? "backward-data" : "backward-filter", cu_algo_name(dir, a), e, tol);
            }
            cr_expect_gt(usable, 0, "%s %s: no usable algorithm in direction %d", pn, L[i].name, dir);
        }
        cu_descs_fini(&d);
        for (int k = 0; k < 3; k++) free(want[k]);
        free(x); free(w); free(dy); free(got);
    }
    cudnnDestroy(h);
    close_pair(&p);
}
Test(cudnn_gpu, every_usable_conv_algorithm, .timeout = 900) { every_algorithm(CU_PREC_FP32); }
Test(cudnn_gpu, every_usable_conv_algorithm_fp16, .timeout = 900) { every_algorithm(CU_PREC_FP16); }
Test(cudnn_gpu, every_usable_conv_algorithm_bf16, .timeout = 900) { every_algorithm(CU_PREC_BF16); }

/* Building and freeing a model repeatedly returns device memory to where it was after the first round (the
 * first keeps cuDNN's and cuBLAS's own allocations): a leak of one activation buffer per round shows. */
Test(cudnn_gpu, memory_returns_to_baseline, .timeout = 600) {
    pctx p = {0};
    char why[600];
    if (!open_pair("cudnn", &p, why, sizeof why)) TU_SKIP("%s", why);
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, "workloads", "mnist_cnn"), 0, "%s", sd_errmsg());
    size_t base = 0, base_acct = 0, fr = 0, total = 0;
    for (int round = 0; round < 6; round++) {
        nn_model *m = NULL;
        cr_assert_eq(nn_model_build(&m, &w, p.be, 32, 7), 0, "%s", sd_errmsg());
        nn_model_free(m);
        cr_assert_eq(p.be->ops->sync(p.be), 0, "%s", sd_errmsg());
        cr_assert_eq(cudaMemGetInfo(&fr, &total), cudaSuccess);
        printf("cudnn memory after round %d: %zu bytes in use by the device\n", round, total - fr);
        if (round == 0) {
            base = total - fr;
            base_acct = p.be->bytes_in_use;   /* what stays: the shared convolution workspace */
            continue;
        }
        cr_expect_leq(total - fr, base + ((size_t)1 << 20), "round %d: %zu bytes in use, %zu after round 0", round,
                      total - fr, base);
        cr_expect_eq(p.be->bytes_in_use, base_acct, "round %d: the back-end accounts %zu bytes, %zu after round 0",
                     round, p.be->bytes_in_use, base_acct);
    }
    sd_workload_free(&w);
    close_pair(&p);
}

/* ---- on a GPU: mixed precision ------------------------------------------------------------------------------ */

/* cudnn at precision prec, or 0 with why[] filled (not built, no device; bf16 on a GPU older than Ampere). */
static int open_prec(const char *prec, nn_backend **be, char *why, size_t len) {
    nn_backend_opts o = {.threads = 2, .autotune = 1, .precision = prec, .quiet = 1};
    int rc = nn_backend_new(be, "cudnn", &o, NULL, 0);
    if (rc == SD_ENODEV || (rc == SD_EUSAGE && strstr(sd_errmsg(), "compute capability"))) {
        snprintf(why, len, "cudnn %s: %s", prec, sd_errmsg());
        return 0;
    }
    cr_assert_eq(rc, 0, "cudnn %s: %s", prec, sd_errmsg());
    return 1;
}

/* The conversion kernels compute on the device exactly what nn/half.h computes on the host (the functions
 * tested above), bit for bit, NaNs included: fp32 -> fp16/bf16 on a sweep of patterns, and back (= and +=). */
Test(cudnn_gpu, half_conversions_on_device, .timeout = 300) {
    nn_backend *be = NULL;
    char why[600];
    if (!open_prec("fp32", &be, why, sizeof why)) TU_SKIP("%s", why);
    cudaStream_t st = cu_backend_stream(be);
    const size_t n = 1u << 20;
    float *h = malloc(n * 4), *back = malloc(n * 4), *acc0 = malloc(n * 4);
    uint16_t *h16 = malloc(n * 2);
    cr_assert(h && back && acc0 && h16);
    for (size_t i = 0; i < n; i++) h[i] = nn_bits_f32((uint32_t)(i * 4093u + 17u));
    for (size_t i = 0; i < n; i++) acc0[i] = (float)(i % 7) - 3.0f;
    float *d, *dacc;
    uint16_t *d16;
    cr_assert_eq(cudaMalloc((void **)&d, n * 4), cudaSuccess);
    cr_assert_eq(cudaMalloc((void **)&dacc, n * 4), cudaSuccess);
    cr_assert_eq(cudaMalloc((void **)&d16, n * 2), cudaSuccess);
    cr_assert_eq(cudaMemcpy(d, h, n * 4, cudaMemcpyHostToDevice), cudaSuccess);
    for (int bf16 = 0; bf16 < 2; bf16++) {
        cr_assert_eq(cu_launch_to_half(d16, d, n, bf16, st), cudaSuccess);
        cr_assert_eq(cudaStreamSynchronize(st), cudaSuccess);
        cr_assert_eq(cudaMemcpy(h16, d16, n * 2, cudaMemcpyDeviceToHost), cudaSuccess);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) bad += h16[i] != (bf16 ? nn_f32_to_bf16(h[i]) : nn_f32_to_f16(h[i]));
        cr_expect_eq(bad, 0, "%s: %zu of %zu device conversions differ from the host's", bf16 ? "bf16" : "fp16", bad, n);
        cr_assert_eq(cudaMemcpy(dacc, acc0, n * 4, cudaMemcpyHostToDevice), cudaSuccess);
        for (int accumulate = 0; accumulate < 2; accumulate++) {
            cr_assert_eq(cu_launch_from_half(dacc, d16, n, bf16, accumulate, st), cudaSuccess);
            cr_assert_eq(cudaStreamSynchronize(st), cudaSuccess);
            cr_assert_eq(cudaMemcpy(back, dacc, n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
            bad = 0;
            for (size_t i = 0; i < n; i++) {
                const float v = bf16 ? nn_bf16_to_f32(h16[i]) : nn_f16_to_f32(h16[i]);
                const float want = accumulate ? v + v : v;   /* the first pass left v there */
                if (accumulate && fpclassify(v) == FP_SUBNORMAL) continue;   /* -ftz=true: the device flushes */
                bad += !(isnan(want) && isnan(back[i])) && memcmp(&want, &back[i], 4) != 0;
            }
            cr_expect_eq(bad, 0, "%s widened (%s): %zu of %zu differ", bf16 ? "bf16" : "fp16",
                         accumulate ? "+=" : "=", bad, n);
        }
    }
    cudaFree(d); cudaFree(dacc); cudaFree(d16);
    free(h); free(back); free(acc0); free(h16);
    nn_backend_free(be);
}

/* The back-end's scale entry (the training loop's loss scaler): x *= s as nn_scale_elem, bit for bit; the inf/NaN
 * flag set by one bad element and clear otherwise; nothing asked, nothing waited for. */
Test(cudnn_gpu, loss_scale_on_device, .timeout = 120) {
    nn_backend *be = NULL;
    char why[600];
    if (!open_prec("fp16", &be, why, sizeof why)) TU_SKIP("%s", why);
    cr_assert_not_null(be->ops->scale);
    const size_t n = 100003;
    float *x = rand_vec(n), *got = malloc(n * 4);
    void *dx = dev(be, x, n * 4);
    int bad = -1;
    cr_assert_eq(be->ops->scale(be, dx, n, 65536.0f, &bad), 0, "%s", sd_errmsg());
    cr_expect_eq(bad, 0);
    cr_assert_eq(be->ops->scale(be, dx, n, 1.0f / 65536.0f, NULL), 0, "%s", sd_errmsg());
    cr_assert_eq(be->ops->download(be, got, dx, n * 4), 0, "%s", sd_errmsg());
    cr_expect(memcmp(got, x, n * 4) == 0, "x * 2^16 * 2^-16 must be x exactly");
    x[n - 1] = INFINITY;
    cr_assert_eq(be->ops->upload(be, dx, x, n * 4), 0, "%s", sd_errmsg());
    cr_assert_eq(be->ops->scale(be, dx, n, 0.5f, &bad), 0, "%s", sd_errmsg());
    cr_expect_eq(bad, 1, "an inf must be reported");
    x[n - 1] = 3e38f;
    cr_assert_eq(be->ops->upload(be, dx, x, n * 4), 0, "%s", sd_errmsg());
    cr_assert_eq(be->ops->scale(be, dx, n, 2.0f, &bad), 0, "%s", sd_errmsg());
    cr_expect_eq(bad, 1, "an overflow to inf must be reported");
    nn_dev_free(be, dx, n * 4);
    free(x); free(got);
    nn_backend_free(be);
}

/* Mixed-precision training on the GPU tracks fp32 on the CPU: mnist_cnn on synthetic data, 2 epochs of 8 batches of
 * 32, cudnn in fp16 (the loop's loss scaler on by default) and bf16 against ref in fp32 with the same seed; each
 * epoch's training loss within 2% (the first) and 5%, validation accuracy within 0.1; fp16 ends with a finite scale
 * and at most a couple of skipped steps. */
static void mixed_training(const char *prec) {
    nn_backend *be = NULL;
    char why[600];
    if (!open_prec(prec, &be, why, sizeof why)) TU_SKIP("%s", why);
    nn_backend *ref = open_ref();
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, "workloads", "mnist_cnn"), 0, "%s", sd_errmsg());
    sd_dataset tr, te;
    cr_assert_eq(sd_data_synthetic(&tr, 256, w.in_c, w.in_h, w.in_w, w.classes, 5, 0), 0, "%s", sd_errmsg());
    cr_assert_eq(sd_data_synthetic(&te, 64, w.in_c, w.in_h, w.in_w, w.classes, 5, 1), 0, "%s", sd_errmsg());
    nn_train_opts o = {.epochs = 2, .batch = 32, .max_batches = 8, .seed = 11, .shuffle = 1};
    nn_train_result g, r;
    cr_assert_eq(nn_train(&w, be, &tr, &te, &o, &g), 0, "cudnn %s: %s", prec, sd_errmsg());
    cr_assert_eq(nn_train(&w, ref, &tr, &te, &o, &r), 0, "ref: %s", sd_errmsg());
    for (int e = 0; e < 2; e++) {
        const double tol = e == 0 ? 0.02 : 0.05;
        printf("cudnn %s mnist_cnn epoch %d: loss %.4f (ref fp32 %.4f), accuracy %.3f (%.3f)\n", prec, e + 1,
               g.epochs[e].loss, r.epochs[e].loss, g.epochs[e].accuracy, r.epochs[e].accuracy);
        cr_expect(fabs(g.epochs[e].loss - r.epochs[e].loss) <= tol * fmax(1.0, fabs(r.epochs[e].loss)),
                  "%s epoch %d: loss %.4f vs %.4f", prec, e + 1, g.epochs[e].loss, r.epochs[e].loss);
        cr_expect(fabs(g.epochs[e].accuracy - r.epochs[e].accuracy) <= 0.1, "%s epoch %d: accuracy %.3f vs %.3f", prec,
                  e + 1, g.epochs[e].accuracy, r.epochs[e].accuracy);
    }
    if (strcmp(prec, "fp16") == 0) {
        printf("cudnn fp16: loss scale %g at the end, %ld steps skipped\n", (double)g.loss_scale, g.skipped_steps);
        cr_expect(g.loss_scale >= 1.0f && isfinite(g.loss_scale), "loss scale %g", (double)g.loss_scale);
        cr_expect_leq(g.skipped_steps, 2, "%ld of 16 steps skipped", g.skipped_steps);
    } else {
        cr_expect_eq(g.loss_scale, 0.0f, "no loss scaling in %s", prec);
    }
    nn_train_result_free(&g);
    nn_train_result_free(&r);
    sd_dataset_free(&tr);
    sd_dataset_free(&te);
    sd_workload_free(&w);
    nn_backend_free(ref);
    nn_backend_free(be);
}
Test(cudnn_gpu, fp16_training_tracks_fp32, .timeout = 900) { mixed_training("fp16"); }
Test(cudnn_gpu, bf16_training_tracks_fp32, .timeout = 900) { mixed_training("bf16"); }

/* The installed libraries have every function the stubs forward to (no device needed to load them); a
 * library lacking one is reported by name when the back-end starts, not as a status code mid-run. */
Test(cudnn_install, libraries_have_every_stubbed_function) {
    cr_assert_eq(cu_dl_require_all(&cu_lib_cudnn, cu_dl_cudnn_names), 0, "%s", sd_errmsg());
    cr_assert_eq(cu_dl_require_all(&cu_lib_cublas, cu_dl_cublas_names), 0, "%s", sd_errmsg());
#if SD_HAVE_NCCL
    cr_assert_eq(cu_dl_require_all(&cu_lib_nccl, cu_dl_nccl_names), 0, "%s", sd_errmsg());
#endif
    static const char *const older[] = {"cudnnCreate", "cudnnNoSuchFunction", NULL};
    cr_assert_eq(cu_dl_require_all(&cu_lib_cudnn, older), SD_EBACKEND);
    char want[128];
    snprintf(want, sizeof want, "%s has no cudnnNoSuchFunction", cu_lib_cudnn.soname);
    cr_assert_not_null(strstr(sd_errmsg(), want), "%s", sd_errmsg());
}
#endif
