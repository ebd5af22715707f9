/* dnnl_im2col — the unfolding of a convolution's input into bf16 rows for backward-weights as one matmul
 * (dnnl_conv.c): row (n, oh, ow) holds x's receptive field in the order of OIHW weights' inner (ic, kh, kw), so
 * dW[oc][ic*kh*kw] = dy^T col lands in the user's weight layout as it is. Padding positions are zeros. */
#include "be_dnnl/dnnl_be.h"
#include "nn/half.h"   /* nn_f32_to_bf16: the rounding test_cudnn checks */

#include <stdint.h>
#include <string.h>

void dn_im2col_bf16(uint16_t *col, const float *x, const nn_op *op, int n0, int nb, int threads) {
    const int C = op->c, H = op->h, W = op->w, KH = op->kh, KW = op->kw, OH = op->oh, OW = op->ow;
    const size_t KK = (size_t)KH * KW, rowlen = (size_t)C * KK;
    const long rows = (long)nb * OH * OW;
    const int B = (int)nn_fmt_block(op->fmt_in, (size_t)C), blocked = B > 1, CB = (C + B - 1) / B;
    const int padded = op->fmt_in != NN_FMT_NHWC;   /* a partial block is B floats in memory (nhwc: one block of C) */
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (long r = 0; r < rows; r++) {
        const int n = n0 + (int)(r / ((long)OH * OW)), s = (int)(r % ((long)OH * OW));
        const int ih0 = s / OW * op->sh - op->ph, iw0 = s % OW * op->sw - op->pw;
        uint16_t *row = col + (size_t)r * rowlen;
        if (blocked) {   /* [n][C/B][h][w][B] (nhwc: B = C): B channels of a position are contiguous */
            for (int cb = 0; cb < CB; cb++) {
                const int cn = C - cb * B < B ? C - cb * B : B;
                uint16_t *out = row + (size_t)cb * B * KK;
                for (int kh = 0; kh < KH; kh++) {
                    const int ih = ih0 + kh;
                    for (int kw = 0; kw < KW; kw++) {
                        const int iw = iw0 + kw;
                        uint16_t *o = out + (size_t)kh * KW + kw;
                        if (ih < 0 || ih >= H || iw < 0 || iw >= W) {
                            for (int j = 0; j < cn; j++) o[(size_t)j * KK] = 0;
                            continue;
                        }
                        /* 16 lanes at a time, all of a padded block's (only cn are stored): the conversion
                         * vectorizes */
                        const float *src = x + nn_fmt_at(op->fmt_in, (size_t)C, (size_t)H * W, (size_t)n,
                                                         (size_t)(cb * B), (size_t)ih * W + iw);
                        for (int j0 = 0; j0 < cn; j0 += 16) {
                            const int all = padded ? B - j0 : cn - j0, lanes = all < 16 ? all : 16;
                            const int keep = cn - j0 < 16 ? cn - j0 : 16;
                            uint16_t v[16];
                            for (int j = 0; j < lanes; j++) v[j] = nn_f32_to_bf16(src[j0 + j]);
                            for (int j = 0; j < keep; j++) o[(size_t)(j0 + j) * KK] = v[j];
                        }
                    }
                }
            }
        } else {         /* nchw: a kernel row is a contiguous run of x's row */
            for (int ci = 0; ci < C; ci++) {
                const float *plane = x + ((size_t)n * C + ci) * H * W;
                uint16_t *out = row + (size_t)ci * KK;
                for (int kh = 0; kh < KH; kh++) {
                    const int ih = ih0 + kh;
                    uint16_t *o = out + (size_t)kh * KW;
                    if (ih < 0 || ih >= H) {
                        memset(o, 0, sizeof *o * (size_t)KW);
                        continue;
                    }
                    const float *src = plane + (size_t)ih * W;
                    for (int kw = 0; kw < KW; kw++) {
                        const int iw = iw0 + kw;
                        o[kw] = iw < 0 || iw >= W ? 0 : nn_f32_to_bf16(src[iw]);
                    }
                }
            }
        }
    }
}

/* db[o] += the sum of dy over n, oh, ow (dy in op->fmt_out, fp32) */
void dn_conv_db_add(float *db, const float *dy, const nn_op *op, int threads) {
    const int N = op->n, O = op->oc;
    const size_t S = (size_t)op->oh * op->ow;
    if (op->fmt_out != NN_FMT_NCHW) {
        /* 16 channels a thread at a time: a block of nChw16c / nChw8c (rows of B at each position), or 16 of an
         * nhwc position's O */
        const int nhwc = op->fmt_out == NN_FMT_NHWC, B = nhwc ? 16 : (int)nn_fmt_block(op->fmt_out, (size_t)O);
        const int OB = (O + B - 1) / B;
        const size_t step = nhwc ? (size_t)O : (size_t)B;   /* floats from one position to the next */
        #pragma omp parallel for num_threads(threads) schedule(static)
        for (int ob = 0; ob < OB; ob++) {
            float acc[16] = {0};
            const int lanes = nhwc && O - ob * B < B ? O - ob * B : B;
            for (int n = 0; n < N; n++) {
                const float *p = dy + (nhwc ? (size_t)n * S * (size_t)O + (size_t)(ob * B)
                                            : nn_fmt_at(op->fmt_out, (size_t)O, S, (size_t)n, (size_t)(ob * B), 0));
                for (size_t s = 0; s < S; s++)
                    for (int j = 0; j < lanes; j++) acc[j] += p[s * step + (size_t)j];
            }
            for (int j = 0; j < B && ob * B + j < O; j++) db[ob * B + j] += acc[j];
        }
    } else {
        #pragma omp parallel for num_threads(threads) schedule(static)
        for (int o = 0; o < O; o++) {
            float acc = 0;
            for (int n = 0; n < N; n++) {
                const float *p = dy + ((size_t)n * O + o) * S;
                for (size_t s = 0; s < S; s++) acc += p[s];
            }
            db[o] += acc;
        }
    }
}

/* ---- fp32 convolution passes as one sgemm, for small outputs (dnnl_conv.c, conv_gemm_choose) ------------------ */

/* col[n*oh*ow][ic*kh*kw] of all op->n images, fp32, in dn_im2col_bf16's order; padding positions are zeros */
void dn_im2col_f32(float *col, const float *x, const nn_op *op, int threads) {
    const int C = op->c, H = op->h, W = op->w, KH = op->kh, KW = op->kw, OH = op->oh, OW = op->ow;
    const size_t KK = (size_t)KH * KW, rowlen = (size_t)C * KK, S = (size_t)OH * OW;
    const long rows = (long)op->n * (long)S;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (long r = 0; r < rows; r++) {
        const size_t n = (size_t)r / S, s = (size_t)r % S;
        const int ih0 = (int)(s / OW) * op->sh - op->ph, iw0 = (int)(s % OW) * op->sw - op->pw;
        float *row = col + (size_t)r * rowlen;
        for (int ci = 0; ci < C; ci++)
            for (int kh = 0; kh < KH; kh++) {
                const int ih = ih0 + kh;
                for (int kw = 0; kw < KW; kw++) {
                    const int iw = iw0 + kw;
                    row[(size_t)ci * KK + (size_t)kh * KW + kw] =
                        ih < 0 || ih >= H || iw < 0 || iw >= W ? 0.0f
                        : x[nn_fmt_at(op->fmt_in, (size_t)C, (size_t)H * W, n, (size_t)ci, (size_t)ih * W + iw)];
                }
            }
    }
}

/* dx (op->fmt_in, overwritten, a blocked layout's padded lanes zero) = each column entry added back at the input
 * position it was read from. One thread owns an image's block of channels, so no two add to one element. */
void dn_col2im_f32(float *dx, const float *col, const nn_op *op, int threads) {
    const int C = op->c, H = op->h, W = op->w, KH = op->kh, KW = op->kw, OH = op->oh, OW = op->ow;
    const size_t KK = (size_t)KH * KW, rowlen = (size_t)C * KK, S = (size_t)OH * OW, HW = (size_t)H * W;
    const int B = (int)nn_fmt_block(op->fmt_in, (size_t)C), CB = (C + B - 1) / B;   /* nhwc: one block of C */
    #pragma omp parallel for collapse(2) num_threads(threads) schedule(static)
    for (int n = 0; n < op->n; n++)
        for (int cb = 0; cb < CB; cb++) {
            float *blk = dx + nn_fmt_at(op->fmt_in, (size_t)C, HW, (size_t)n, (size_t)cb * B, 0);
            if (B > 1) memset(blk, 0, sizeof(float) * HW * (size_t)B);   /* [h][w][B], padded lanes too */
            else memset(blk, 0, sizeof(float) * HW);
            const int c1 = (cb + 1) * B < C ? (cb + 1) * B : C;
            for (size_t s = 0; s < S; s++) {
                const int ih0 = (int)(s / OW) * op->sh - op->ph, iw0 = (int)(s % OW) * op->sw - op->pw;
                const float *row = col + ((size_t)n * S + s) * rowlen;
                for (int kh = 0; kh < KH; kh++) {
                    const int ih = ih0 + kh;
                    if (ih < 0 || ih >= H) continue;
                    for (int kw = 0; kw < KW; kw++) {
                        const int iw = iw0 + kw;
                        if (iw < 0 || iw >= W) continue;
                        const size_t at = (size_t)ih * W + iw;
                        for (int ci = cb * B; ci < c1; ci++)
                            blk[B > 1 ? at * B + (size_t)(ci - cb * B) : at] += row[(size_t)ci * KK + (size_t)kh * KW + kw];
                    }
                }
            }
        }
}

/* rows[n*oh*ow][oc] = dy (op->fmt_out) */
void dn_rows_of(float *rows, const float *dy, const nn_op *op, int threads) {
    const int O = op->oc;
    const size_t S = (size_t)op->oh * op->ow;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int n = 0; n < op->n; n++)
        for (size_t s = 0; s < S; s++)
            for (int o = 0; o < O; o++)
                rows[((size_t)n * S + s) * O + o] = dy[nn_fmt_at(op->fmt_out, (size_t)O, S, (size_t)n, (size_t)o, s)];
}

/* y (op->fmt_out, a blocked layout's padded lanes zero) = rows[n*oh*ow][oc] + b (b NULL: none) */
void dn_rows_to(float *y, const float *rows, const float *b, const nn_op *op, int threads) {
    const int O = op->oc, B = (int)nn_fmt_block(op->fmt_out, (size_t)O), OB = (O + B - 1) / B;
    const size_t S = (size_t)op->oh * op->ow;
    #pragma omp parallel for collapse(2) num_threads(threads) schedule(static)
    for (int n = 0; n < op->n; n++)
        for (int ob = 0; ob < OB; ob++)
            for (size_t s = 0; s < S; s++)
                for (int j = 0; j < B; j++) {
                    const int o = ob * B + j;
                    const size_t at = nn_fmt_at(op->fmt_out, (size_t)O, S, (size_t)n, (size_t)ob * B, s) + (size_t)j;
                    y[at] = o >= O ? 0.0f : rows[((size_t)n * S + s) * O + o] + (b ? b[o] : 0.0f);
                }
}
