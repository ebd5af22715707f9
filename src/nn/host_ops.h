/* host_ops — reference arithmetic over host memory shared by the CPU back-ends (ref, dnnl): dropout,
 * softmax cross-entropy and the optimizer step, with the semantics documented in nn/backend.h. */
#ifndef SD_NN_HOST_OPS_H
#define SD_NN_HOST_OPS_H

#include "nn/backend.h"

/* Flush denormals to zero (FTZ + DAZ) on the calling thread and on the `threads` OpenMP workers, as
 * TensorFlow does on the CPU. Without it RMSprop's accumulators of parameters whose gradient stays zero
 * (dead ReLU units) decay into the denormal range and every update of them costs ~100 cycles: mnist_mlp's
 * optimizer step went from 0.30 to 2.4 ms after 3,000 steps. Values below 1.2e-38 become 0. Both CPU
 * back-ends call it when they are created (so they agree with each other); the setting stays on. */
void nn_host_flush_denormals(int threads);
#define NN_HOST_DENORMALS "flushed to zero (FTZ+DAZ) on the back-end's threads"

/* C[M][N] (+)= A[M][K] · B[K][N], row-major (accumulate 0: C is overwritten); single-threaded. */
void nn_host_gemm_nn(int M, int N, int K, const float *A, const float *B, float *C, int accumulate);
/* out[C][R] = in[R][C]^T */
void nn_host_transpose(int R, int C, const float *in, float *out);

int nn_host_dropout_forward(int threads, const nn_op *op, float *y, void *ws, const float *x, uint64_t seed);
int nn_host_dropout_backward(int threads, const nn_op *op, float *dx, const float *dy, const void *ws);
/* dy[i] = y[i] > 0 ? dy[i] : 0 over n floats, in place (the back-ends' relu_mask) */
int nn_host_relu_mask(int threads, size_t n, float *dy, const float *y);
int nn_host_softmax_xent_forward(int threads, const nn_op *op, float *prob, float *loss, const float *logits,
                                 const int32_t *labels);
int nn_host_softmax_xent_backward(int threads, const nn_op *op, float *dlogits, const float *prob,
                                  const int32_t *labels);
int nn_host_optimizer_step(int threads, const nn_optim *o, float *p, const float *g, float *state, size_t n,
                           long step);

/* graph ops: the semantics of the matching nn_backend_ops entries */
int nn_host_add(int threads, size_t n, float *y, const float *a, const float *b);
int nn_host_concat_forward(int threads, const nn_op *op, float *y, const float *const *x);
int nn_host_concat_backward(int threads, const nn_op *op, float *const *dx, const float *dy);
int nn_host_batchnorm_forward(int threads, const nn_op *op, float *y, void *ws, const float *x, const float *gamma,
                              const float *beta, float *running, int train);
int nn_host_batchnorm_backward(int threads, const nn_op *op, float *dx, float *dgamma, float *dbeta,
                               const float *dy, const float *x, const float *gamma, const void *ws);
int nn_host_avgpool_forward(int threads, const nn_op *op, float *y, const float *x);
int nn_host_avgpool_backward(int threads, const nn_op *op, float *dx, const float *dy);
int nn_host_sigmoid_bce_forward(int threads, const nn_op *op, float *prob, float *loss, const float *logits,
                                const float *targets);
int nn_host_sigmoid_bce_backward(int threads, const nn_op *op, float *dlogits, const float *prob,
                                 const float *targets);
/* recurrent ops, in host_rnn.c: the reference arithmetic of embedding, GRU and LSTM with the
 * semantics and layouts of nn/backend.h. The workspace of gru/lstm is nn_host_rnn_ws_bytes. */
size_t nn_host_rnn_ws_bytes(const nn_op *op);
int nn_host_embedding_forward(int threads, const nn_op *op, float *y, const int32_t *ids, const float *table);
int nn_host_embedding_backward(int threads, const nn_op *op, float *dtable, const float *dy, const int32_t *ids);
/* dtable += rows [r0, r1) of dy at their ids, columns [e0, e1) (the backward's loop, for a back-end's own split) */
void nn_host_embedding_add_rows(const nn_op *op, float *dtable, const float *dy, const int32_t *ids, long r0, long r1,
                                int e0, int e1);
int nn_host_rnn_forward(int threads, const nn_op *op, float *y, void *ws, const float *x, const float *w);
int nn_host_rnn_backward(int threads, const nn_op *op, float *dx, float *dw, const float *dy, const float *x,
                         const float *w, const float *y, const void *ws);
int nn_host_repeat_forward(int threads, const nn_op *op, float *y, const float *x);
int nn_host_repeat_backward(int threads, const nn_op *op, float *dx, const float *dy);

#endif
