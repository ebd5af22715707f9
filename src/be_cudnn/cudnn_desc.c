/* cudnn_desc — the cuDNN back-end's pure shape logic: descriptor set-up per op, output-shape inference,
 * algorithm choice from candidate lists, bad inputs flagged by the kernels. None of it needs a GPU (cuDNN's
 * descriptor calls run without one), so tests/test_cudnn.c checks all of it on any machine. */
#include "be_cudnn/cudnn_be.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cu_bad_status(const int bad[CU_BAD_INTS], int classes, int vocab) {
    if (bad[CU_BAD_TOKEN])
        return sd_err(SD_EINPUT, "embedding: token id %d outside the vocabulary [0, %d)", bad[CU_BAD_TOKEN + 1], vocab);
    if (bad[CU_BAD_LABEL]) return sd_err(SD_EINPUT, "label %d out of range [0,%d)", bad[CU_BAD_LABEL + 1], classes);
    return 0;
}

/* ---- descriptors -------------------------------------------------------------------------------- */

static int set4d_dt(cudnnTensorDescriptor_t t, cudnnDataType_t dt, int n, int c, int h, int w) {
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, dt, n, c, h, w), CU_HINT_DESC);
    return 0;
}
static int set4d(cudnnTensorDescriptor_t t, int n, int c, int h, int w) {
    return set4d_dt(t, CUDNN_DATA_FLOAT, n, c, h, w);
}

static int make_tensor(cudnnTensorDescriptor_t *t) {
    CUDNN_CHECK(cudnnCreateTensorDescriptor(t), "");
    return 0;
}

/* x [n][c][h][w] and y [n][oc][oh][ow] in dt, the shapes of a convolution or pooling op. */
static int xy_descs(cu_descs *d, const nn_op *op, cudnnDataType_t dt) {
    SD_TRY(make_tensor(&d->x));
    SD_TRY(make_tensor(&d->y));
    SD_TRY(set4d_dt(d->x, dt, op->n, op->c, op->h, op->w));
    return set4d_dt(d->y, dt, op->n, op->oc, op->oh, op->ow);
}

static int pool_descs(cu_descs *d, const nn_op *op, cudnnPoolingMode_t mode) {
    SD_TRY(xy_descs(d, op, CUDNN_DATA_FLOAT));
    CUDNN_CHECK(cudnnCreatePoolingDescriptor(&d->pool), "");
    CUDNN_CHECK(cudnnSetPooling2dDescriptor(d->pool, mode, CUDNN_NOT_PROPAGATE_NAN, op->kh, op->kw, op->ph, op->pw,
                                            op->sh, op->sw), CU_HINT_DESC);
    return 0;
}

/* dt: the data type of a convolution's x, y and w (its compute type is FLOAT in every precision). */
static int descs_set(cu_descs *d, const nn_op *op, cudnnMathType_t math, cudnnDataType_t dt) {
    switch (op->kind) {
    case NN_OP_DENSE:
        SD_TRY(make_tensor(&d->x));
        SD_TRY(make_tensor(&d->y));
        SD_TRY(make_tensor(&d->bias));
        SD_TRY(set4d(d->x, op->n, op->c, 1, 1));
        SD_TRY(set4d(d->y, op->n, op->oc, 1, 1));
        SD_TRY(set4d(d->bias, 1, op->oc, 1, 1));
        return 0;
    case NN_OP_CONV2D:
        SD_TRY(xy_descs(d, op, dt));
        SD_TRY(make_tensor(&d->bias));
        SD_TRY(set4d(d->bias, 1, op->oc, 1, 1));
        CUDNN_CHECK(cudnnCreateFilterDescriptor(&d->w), "");
        CUDNN_CHECK(cudnnSetFilter4dDescriptor(d->w, dt, CUDNN_TENSOR_NCHW, op->oc, op->c, op->kh, op->kw),
                    CU_HINT_DESC);
        for (int i = 0; i < 3; i++) {
            CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&d->conv[i]), "");
            CUDNN_CHECK(cudnnSetConvolution2dDescriptor(d->conv[i], op->ph, op->pw, op->sh, op->sw, 1, 1,
                                                        CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT), CU_HINT_DESC);
            CUDNN_CHECK(cudnnSetConvolutionMathType(d->conv[i], math), "");
        }
        return 0;
    case NN_OP_MAXPOOL:
        return pool_descs(d, op, CUDNN_POOLING_MAX_DETERMINISTIC);
    case NN_OP_RELU:
        SD_TRY(make_tensor(&d->y));
        SD_TRY(set4d(d->y, op->n, op->oc, op->oh, op->ow));
        CUDNN_CHECK(cudnnCreateActivationDescriptor(&d->act), "");
        CUDNN_CHECK(cudnnSetActivationDescriptor(d->act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0), "");
        return 0;
    case NN_OP_SOFTMAX_XENT:
        /* logits [n][c] as [n][c][1][1]: MODE_INSTANCE normalises over c per example */
        SD_TRY(make_tensor(&d->y));
        SD_TRY(set4d(d->y, op->n, op->c, 1, 1));
        return 0;
    case NN_OP_DROPOUT:
    case NN_OP_FLATTEN:
        return 0;     /* elementwise kernel / a view: no descriptor */
    /* graph ops */
    case NN_OP_AVGPOOL:
    case NN_OP_GLOBAL_AVGPOOL:
        return pool_descs(d, op, CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING);
    case NN_OP_BATCHNORM:
        /* x and y [n][c][h][w]; bias holds the per-channel scale/shift/mean/variance shape [1][c][1][1] */
        SD_TRY(make_tensor(&d->x));
        SD_TRY(make_tensor(&d->bias));
        SD_TRY(set4d(d->x, op->n, op->c, op->h, op->w));
        CUDNN_CHECK(cudnnDeriveBNTensorDescriptor(d->bias, d->x, CUDNN_BATCHNORM_SPATIAL), CU_HINT_DESC);
        return 0;
    case NN_OP_ADD:
    case NN_OP_CONCAT:
    case NN_OP_SIGMOID_BCE:
        return 0;     /* kernels and strided copies: no descriptor */
    default:
        return sd_err(SD_EUNSUPPORTED, "cudnn: op kind %d has no descriptors", (int)op->kind);
    }
}

int cu_descs_init_dt(cu_descs *d, const nn_op *op, cudnnMathType_t math, cudnnDataType_t dt) {
    memset(d, 0, sizeof *d);
    d->kind = op->kind;
    int rc = descs_set(d, op, math, dt);
    if (rc < 0) cu_descs_fini(d);
    return rc;
}

int cu_descs_init(cu_descs *d, const nn_op *op, cudnnMathType_t math) {
    return cu_descs_init_dt(d, op, math, CUDNN_DATA_FLOAT);
}

void cu_descs_fini(cu_descs *d) {
    /* destroy errors are ignored: nothing useful can be done about them on a cleanup path */
    cudnnTensorDescriptor_t tensors[] = { d->x, d->y, d->bias };
    for (size_t i = 0; i < sizeof tensors / sizeof *tensors; i++)
        if (tensors[i]) (void)cudnnDestroyTensorDescriptor(tensors[i]);
    if (d->w) (void)cudnnDestroyFilterDescriptor(d->w);
    for (int i = 0; i < 3; i++)
        if (d->conv[i]) (void)cudnnDestroyConvolutionDescriptor(d->conv[i]);
    if (d->pool) (void)cudnnDestroyPoolingDescriptor(d->pool);
    if (d->act) (void)cudnnDestroyActivationDescriptor(d->act);
    memset(d, 0, sizeof *d);
}

int cu_descs_output_dims(const cu_descs *d, const nn_op *op, int out[4]) {
    switch (op->kind) {
    case NN_OP_CONV2D:
        CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(d->conv[CU_FWD], d->x, d->w, &out[0], &out[1], &out[2],
                                                          &out[3]), CU_HINT_DESC);
        return 0;
    case NN_OP_MAXPOOL:
    case NN_OP_AVGPOOL:
    case NN_OP_GLOBAL_AVGPOOL:
        CUDNN_CHECK(cudnnGetPooling2dForwardOutputDim(d->pool, d->x, &out[0], &out[1], &out[2], &out[3]),
                    CU_HINT_DESC);
        return 0;
    default:
        out[0] = op->n; out[1] = op->oc; out[2] = op->oh; out[3] = op->ow;
        return 0;
    }
}

int cu_descs_check(const cu_descs *d, const nn_op *op) {
    int o[4];
    SD_TRY(cu_descs_output_dims(d, op, o));
    if (o[0] != op->n || o[1] != op->oc || o[2] != op->oh || o[3] != op->ow)
        return sd_err(SD_EINPUT, "cudnn: %s output shape: cuDNN infers %dx%dx%dx%d, the layer says %dx%dx%dx%d",
                      op->kind == NN_OP_CONV2D ? "conv2d" : op->kind == NN_OP_MAXPOOL ? "maxpool" : "avgpool",
                      o[0], o[1], o[2], o[3], op->n, op->oc,
                      op->oh, op->ow);
    return 0;
}

/* ---- algorithm choice ----------------------------------------------------------------------------- */

static int tensor_op_math(cudnnMathType_t m) {
    return m == CUDNN_TENSOR_OP_MATH || m == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
}

int cu_algo_pick(const cu_algo_perf *p, int n, size_t ws_limit, int tensor_ops) {
    for (int i = 0; i < n; i++) {
        if (p[i].status != CUDNN_STATUS_SUCCESS) continue;
        if (p[i].memory > ws_limit) continue;
        if (!tensor_ops && tensor_op_math(p[i].math)) continue;
        return i;
    }
    return -1;
}

cudnnMathType_t cu_algo_math(cudnnMathType_t found, int tensor_ops) {
    if (!tensor_ops && found == CUDNN_DEFAULT_MATH) return CUDNN_FMA_MATH;
    return found;
}

const char *cu_algo_name(int dir, int algo) {
    static const char *const fwd[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT",
                                      "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
    static const char *const bwd_data[] = {"ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD",
                                           "WINOGRAD_NONFUSED"};
    static const char *const bwd_filter[] = {"ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD",
                                             "WINOGRAD_NONFUSED", "FFT_TILING"};
    _Static_assert(sizeof fwd / sizeof *fwd == CUDNN_CONVOLUTION_FWD_ALGO_COUNT, "fwd algo names");
    _Static_assert(sizeof bwd_data / sizeof *bwd_data == CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, "bwd data names");
    _Static_assert(sizeof bwd_filter / sizeof *bwd_filter == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                   "bwd filter names");
    switch (dir) {
    case CU_FWD:
        if (algo >= 0 && algo < (int)(sizeof fwd / sizeof *fwd)) return fwd[algo];
        break;
    case CU_BWD_DATA:
        if (algo >= 0 && algo < (int)(sizeof bwd_data / sizeof *bwd_data)) return bwd_data[algo];
        break;
    case CU_BWD_FILTER:
        if (algo >= 0 && algo < (int)(sizeof bwd_filter / sizeof *bwd_filter)) return bwd_filter[algo];
        break;
    }
    return "UNKNOWN";
}

double cu_prec_tolerance(int prec) {
    switch (prec) {
    case CU_PREC_TF32: return 5e-3;
    case CU_PREC_FP16: return 2e-3;    /* 4 u, u = 2^-11 */
    case CU_PREC_BF16: return 1.6e-2;  /* 4 u, u = 2^-8 */
    default: return 1e-5;
    }
}

double cu_algo_tolerance(int dir, int algo, int prec) {
    const char *n = cu_algo_name(dir, algo);
    const int transformed = strstr(n, "WINOGRAD") || strstr(n, "FFT");
    if (prec == CU_PREC_FP16 || prec == CU_PREC_BF16) return (transformed ? 2 : 1) * cu_prec_tolerance(prec);
    if (prec == CU_PREC_TF32) return cu_prec_tolerance(prec);
    return transformed ? 1e-4 : 1e-5;
}

void cu_conv_key(const nn_op *op, char *buf, size_t len) {
    snprintf(buf, len, "n%d %dx%dx%d -> %d k%dx%d s%dx%d p%dx%d", op->n, op->c, op->h, op->w, op->oc, op->kh,
             op->kw, op->sh, op->sw, op->ph, op->pw);
}

static const char *math_name(cudnnMathType_t m) {
    switch (m) {
    case CUDNN_DEFAULT_MATH: return "default";
    case CUDNN_TENSOR_OP_MATH: return "tensor-op";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "tensor-op-conv";
    case CUDNN_FMA_MATH: return "fma";
    default: return "?";
    }
}

void cu_conv_choice_str(const cu_conv_choice *c, char *buf, size_t len) {
    static const char *const dir[] = {"fwd", "bwd_data", "bwd_filter"};
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < 3 && used < len; i++) {
        const cu_algo_perf *p = &c->dir[i];
        char t[32] = "";
        if (p->time_ms >= 0) snprintf(t, sizeof t, "%.3f ms, ", p->time_ms);
        int k = snprintf(buf + used, len - used, "%s%s=%s(%sws %zu B, %s)", i ? " " : "", dir[i],
                         cu_algo_name(i, p->algo), t, p->memory, math_name(p->math));
        if (k < 0) break;
        used += (size_t)k;
    }
    if (used < len) snprintf(buf + used, len - used, " [%s]", c->searched ? "find" : "heuristic");
}
