/* host_rnn — the reference arithmetic of the recurrent ops over host memory: embedding lookup,
 * and GRU / LSTM in cuDNN's formulation, forward and backward, with the layouts documented in nn/backend.h.
 * Examples are independent in the recurrence, so threads split the batch; weight gradients are gathered
 * at the end as gemms over all time steps. Results depend only on the inputs and the thread count. */
#include "nn/host_ops.h"
#include "core/err.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

static void split(int n, int nt, int t, int *i0, int *i1) {
    int per = (n + nt - 1) / nt;
    *i0 = t * per < n ? t * per : n;
    *i1 = (t + 1) * per < n ? (t + 1) * per : n;
}

static float sigm(float a) { return 1.0f / (1.0f + expf(-a)); }

/* ---- embedding ------------------------------------------------------------------------------------- */

int nn_host_embedding_forward(int threads, const nn_op *op, float *y, const int32_t *ids, const float *table) {
    const long nt = (long)op->n * op->c;
    const int E = op->units, T = op->c, S = op->ids_stride ? op->ids_stride : op->c;
    for (long i = 0; i < nt; i++) {
        const int32_t id = ids[(i / T) * S + i % T];
        if (id < 0 || id >= op->vocab)
            return sd_err(SD_EINPUT, "embedding: token id %d (example %ld, step %ld) outside the vocabulary [0, %d)",
                          (int)id, i / T, i % T, op->vocab);
    }
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (long i = 0; i < nt; i++)
        memcpy(y + (size_t)i * E, table + (size_t)ids[(i / T) * S + i % T] * E, sizeof(float) * E);
    return 0;
}

void nn_host_embedding_add_rows(const nn_op *op, float *dtable, const float *dy, const int32_t *ids, long r0, long r1,
                                int e0, int e1) {
    const int E = op->units, T = op->c, S = op->ids_stride ? op->ids_stride : op->c;
    for (long i = r0; i < r1; i++) {
        const int32_t id = ids[(i / T) * S + i % T];
        if (id < 0 || id >= op->vocab) continue;   /* forward rejected it already */
        float *d = dtable + (size_t)id * E;
        const float *g = dy + (size_t)i * E;
        #pragma omp simd
        for (int e = e0; e < e1; e++) d[e] += g[e];
    }
}

int nn_host_embedding_backward(int threads, const nn_op *op, float *dtable, const float *dy, const int32_t *ids) {
    /* each thread owns a slice of the E columns: duplicate ids never race */
    #pragma omp parallel num_threads(threads)
    {
        int e0, e1;
        split(op->units, omp_get_num_threads(), omp_get_thread_num(), &e0, &e1);
        nn_host_embedding_add_rows(op, dtable, dy, ids, 0, (long)op->n * op->c, e0, e1);
    }
    return 0;
}

/* ---- GRU / LSTM ------------------------------------------------------------------------------------- */

static int gates_of(const nn_op *op) { return op->kind == NN_OP_LSTM ? NN_LSTM_GATES : NN_GRU_GATES; }

/* Workspace per (example, step) row r = i*T + t:
 *   gru:  gates [nT][4H] = r, z, n, (W_hn h + b_hn);   hprev [nT][H]
 *   lstm: gates [nT][4H] = i, f, g, o (activated);      hprev [nT][H];  c [nT][H] */
size_t nn_host_rnn_ws_bytes(const nn_op *op) {
    const size_t rows = (size_t)op->n * op->c, H = (size_t)op->units;
    return sizeof(float) * rows * H * (op->kind == NN_OP_LSTM ? 6 : 5);
}

typedef struct rnn_w {
    int T, F, H, G, GH;
    const float *Wx, *Wh, *bx, *bh;   /* slices of w */
} rnn_w;

static rnn_w rnn_view(const nn_op *op, const float *w) {
    rnn_w v;
    v.T = op->c; v.F = op->w; v.H = op->units; v.G = gates_of(op); v.GH = v.G * v.H;
    v.Wx = w;
    v.Wh = v.Wx + (size_t)v.GH * v.F;
    v.bx = v.Wh + (size_t)v.GH * v.H;
    v.bh = v.bx + v.GH;
    return v;
}

static int check_shape(const nn_op *op) {
    if (op->kind != NN_OP_GRU && op->kind != NN_OP_LSTM)
        return sd_err(SD_ERROR, "internal: recurrent kernel called for op %d", (int)op->kind);
    if (op->n < 1 || op->c < 1 || op->w < 1 || op->units < 1 || op->h != 1)
        return sd_err(SD_EINPUT, "recurrent op: bad shape n=%d T=%d F=%d H=%d h=%d", op->n, op->c, op->w, op->units, op->h);
    return 0;
}

int nn_host_rnn_forward(int threads, const nn_op *op, float *y, void *ws, const float *x, const float *w) {
    SD_TRY(check_shape(op));
    const rnn_w v = rnn_view(op, w);
    const int T = v.T, F = v.F, H = v.H, GH = v.GH, lstm = op->kind == NN_OP_LSTM;
    const size_t rows = (size_t)op->n * T;
    float *wsg = ws, *wsh = ws ? wsg + rows * 4 * H : NULL, *wsc = ws ? wsh + rows * H : NULL;
    float *WxT = malloc(sizeof(float) * (size_t)F * GH), *WhT = malloc(sizeof(float) * (size_t)H * GH);
    int fail = !WxT || !WhT;
    if (!fail) {
        nn_host_transpose(GH, F, v.Wx, WxT);   /* [F][GH] */
        nn_host_transpose(GH, H, v.Wh, WhT);   /* [H][GH] */
        #pragma omp parallel num_threads(threads)
        {
            int i0, i1;
            split(op->n, omp_get_num_threads(), omp_get_thread_num(), &i0, &i1);
            const int m = i1 - i0;
            float *xg = m ? malloc(sizeof(float) * (size_t)m * T * GH) : NULL;
            float *hg = m ? malloc(sizeof(float) * (size_t)m * GH) : NULL;
            float *h = m ? calloc((size_t)m * H, sizeof(float)) : NULL;
            float *cs = m ? calloc((size_t)m * H, sizeof(float)) : NULL;
            if (m && (!xg || !hg || !h || !cs)) {
                #pragma omp atomic write
                fail = 1;
            } else if (m) {
                /* input projections of every step at once: xg[r] = W_x x_r + b_x */
                nn_host_gemm_nn(m * T, GH, F, x + (size_t)i0 * T * F, WxT, xg, 0);
                for (size_t r = 0; r < (size_t)m * T; r++)
                    for (int k = 0; k < GH; k++) xg[r * GH + k] += v.bx[k];
                for (int t = 0; t < T; t++) {
                    nn_host_gemm_nn(m, GH, H, h, WhT, hg, 0);
                    for (int j = 0; j < m; j++) {
                        const size_t row = (size_t)(i0 + j) * T + t;
                        const float *a = xg + ((size_t)j * T + t) * GH, *b = hg + (size_t)j * GH;
                        float *hj = h + (size_t)j * H, *cj = cs + (size_t)j * H;
                        for (int k = 0; k < H; k++) {
                            const float hp = hj[k];
                            float hn;
                            if (!lstm) {
                                const float bhn = b[2 * H + k] + v.bh[2 * H + k];
                                const float r = sigm(a[k] + b[k] + v.bh[k]);
                                const float z = sigm(a[H + k] + b[H + k] + v.bh[H + k]);
                                const float nn = tanhf(a[2 * H + k] + r * bhn);
                                hn = (1.0f - z) * nn + z * hp;
                                if (ws) {
                                    float *g = wsg + row * 4 * H;
                                    g[k] = r; g[H + k] = z; g[2 * H + k] = nn; g[3 * H + k] = bhn;
                                }
                            } else {
                                const float ig = sigm(a[k] + b[k] + v.bh[k]);
                                const float fg = sigm(a[H + k] + b[H + k] + v.bh[H + k]);
                                const float gg = tanhf(a[2 * H + k] + b[2 * H + k] + v.bh[2 * H + k]);
                                const float og = sigm(a[3 * H + k] + b[3 * H + k] + v.bh[3 * H + k]);
                                const float c = fg * cj[k] + ig * gg;
                                cj[k] = c;
                                hn = og * tanhf(c);
                                if (ws) {
                                    float *g = wsg + row * 4 * H;
                                    g[k] = ig; g[H + k] = fg; g[2 * H + k] = gg; g[3 * H + k] = og;
                                    wsc[row * H + k] = c;
                                }
                            }
                            if (ws) wsh[row * H + k] = hp;
                            hj[k] = hn;
                            if (op->ret_seq) y[row * H + k] = hn;
                        }
                    }
                }
                if (!op->ret_seq) memcpy(y + (size_t)i0 * H, h, sizeof(float) * (size_t)m * H);
            }
            free(xg); free(hg); free(h); free(cs);
        }
    }
    free(WxT);
    free(WhT);
    return fail ? sd_err(SD_ENOMEM, "%s forward: out of memory", lstm ? "lstm" : "gru") : 0;
}

/* dW[GH][K] += tr[GH][R] · in[R][K] and db[GH] += the row sums of tr, the GH rows split across threads. */
static void weight_grads(int GH, int K, long R, const float *tr, const float *in, float *dW, float *db,
                         int threads) {
    #pragma omp parallel num_threads(threads)
    {
        int g0, g1;
        split(GH, omp_get_num_threads(), omp_get_thread_num(), &g0, &g1);
        if (g1 > g0) nn_host_gemm_nn(g1 - g0, K, (int)R, tr + (size_t)g0 * R, in, dW + (size_t)g0 * K, 1);
        for (int k = g0; k < g1; k++) {
            double s = 0;
            for (long r = 0; r < R; r++) s += tr[(size_t)k * R + r];
            db[k] += (float)s;
        }
    }
}

int nn_host_rnn_backward(int threads, const nn_op *op, float *dx, float *dw, const float *dy, const float *x,
                         const float *w, const float *y, const void *ws) {
    (void)y;
    SD_TRY(check_shape(op));
    const rnn_w v = rnn_view(op, w);
    const int T = v.T, F = v.F, H = v.H, GH = v.GH, lstm = op->kind == NN_OP_LSTM;
    const size_t rows = (size_t)op->n * T;
    const float *wsg = ws, *wsh = wsg + rows * 4 * H, *wsc = wsh + rows * H;
    /* gradients of the pre-activations: dax for the input side, dah for the recurrent side (they differ
     * for the GRU's new gate, whose recurrent part is scaled by r) */
    float *dax = malloc(sizeof(float) * rows * GH);
    float *dah = lstm ? dax : malloc(sizeof(float) * rows * GH);
    float *tr = malloc(sizeof(float) * rows * GH);
    int fail = !dax || !dah || !tr;
    if (!fail) {
        #pragma omp parallel num_threads(threads)
        {
            int i0, i1;
            split(op->n, omp_get_num_threads(), omp_get_thread_num(), &i0, &i1);
            const int m = i1 - i0;
            float *dh = m ? calloc((size_t)m * H, sizeof(float)) : NULL;
            float *dc = m ? calloc((size_t)m * H, sizeof(float)) : NULL;
            float *step = m ? malloc(sizeof(float) * (size_t)m * GH) : NULL;
            if (m && (!dh || !dc || !step)) {
                #pragma omp atomic write
                fail = 1;
            } else if (m) {
                if (!op->ret_seq) memcpy(dh, dy + (size_t)i0 * H, sizeof(float) * (size_t)m * H);
                for (int t = T - 1; t >= 0; t--) {
                    for (int j = 0; j < m; j++) {
                        const size_t row = (size_t)(i0 + j) * T + t;
                        const float *g = wsg + row * 4 * H, *hp = wsh + row * H;
                        float *ax = dax + row * GH, *ah = dah + row * GH, *st = step + (size_t)j * GH;
                        float *dhj = dh + (size_t)j * H, *dcj = dc + (size_t)j * H;
                        for (int k = 0; k < H; k++) {
                            float d = dhj[k] + (op->ret_seq ? dy[row * H + k] : 0.0f);
                            if (!lstm) {
                                const float r = g[k], z = g[H + k], nn = g[2 * H + k], bhn = g[3 * H + k];
                                const float dz = d * (hp[k] - nn), dn = d * (1.0f - z);
                                const float dan = dn * (1.0f - nn * nn);
                                const float dar = dan * bhn * r * (1.0f - r), daz = dz * z * (1.0f - z);
                                ax[k] = dar; ax[H + k] = daz; ax[2 * H + k] = dan;
                                ah[k] = dar; ah[H + k] = daz; ah[2 * H + k] = dan * r;
                                dhj[k] = d * z;                 /* direct path h' = ... + z h */
                            } else {
                                const float ig = g[k], fg = g[H + k], gg = g[2 * H + k], og = g[3 * H + k];
                                const float c = wsc[row * H + k], cp = t > 0 ? wsc[(row - 1) * H + k] : 0.0f;
                                const float tc = tanhf(c);
                                const float dcc = dcj[k] + d * og * (1.0f - tc * tc);
                                ax[k] = dcc * gg * ig * (1.0f - ig);
                                ax[H + k] = dcc * cp * fg * (1.0f - fg);
                                ax[2 * H + k] = dcc * ig * (1.0f - gg * gg);
                                ax[3 * H + k] = d * tc * og * (1.0f - og);
                                dcj[k] = dcc * fg;
                                dhj[k] = 0.0f;
                            }
                        }
                        memcpy(st, ah, sizeof(float) * GH);
                    }
                    nn_host_gemm_nn(m, H, GH, step, v.Wh, dh, 1);     /* dh_prev += dah · W_h */
                }
                if (dx) nn_host_gemm_nn(m * T, F, GH, dax + (size_t)i0 * T * GH, v.Wx, dx + (size_t)i0 * T * F, 0);
            }
            free(dh); free(dc); free(step);
        }
    }
    if (!fail) {
        float *dWx = dw, *dWh = dw + (size_t)GH * F, *dbx = dWh + (size_t)GH * H, *dbh = dbx + GH;
        const long R = (long)rows;
        nn_host_transpose((int)R, GH, dax, tr);                  /* [GH][rows] */
        weight_grads(GH, F, R, tr, x, dWx, dbx, threads);
        if (dah != dax) nn_host_transpose((int)R, GH, dah, tr);
        weight_grads(GH, H, R, tr, wsh, dWh, dbh, threads);
    }
    free(dax);
    if (dah != dax) free(dah);
    free(tr);
    return fail ? sd_err(SD_ENOMEM, "%s backward: out of memory", lstm ? "lstm" : "gru") : 0;
}

/* ---- repeat (Keras RepeatVector) ----------------------------------------------------------------------- */

int nn_host_repeat_forward(int threads, const nn_op *op, float *y, const float *x) {
    const int C = op->c, T = op->oc;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int i = 0; i < op->n; i++)
        for (int t = 0; t < T; t++) memcpy(y + ((size_t)i * T + t) * C, x + (size_t)i * C, sizeof(float) * C);
    return 0;
}

int nn_host_repeat_backward(int threads, const nn_op *op, float *dx, const float *dy) {
    const int C = op->c, T = op->oc;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int i = 0; i < op->n; i++) {
        float *d = dx + (size_t)i * C;
        memset(d, 0, sizeof(float) * C);
        for (int t = 0; t < T; t++) {
            const float *g = dy + ((size_t)i * T + t) * C;
            for (int k = 0; k < C; k++) d[k] += g[k];
        }
    }
    return 0;
}
