/* host_ops — reference arithmetic over host memory shared by the CPU back-ends (ref, dnnl): dropout,
 * softmax cross-entropy and the optimizer step, with the semantics documented in nn/backend.h. */
#ifndef SD_NN_HOST_OPS_H
#define SD_NN_HOST_OPS_H

#include "nn/backend.h"

int nn_host_dropout_forward(int threads, const nn_op *op, float *y, void *ws, const float *x, uint64_t seed);
int nn_host_dropout_backward(int threads, const nn_op *op, float *dx, const float *dy, const void *ws);
int nn_host_softmax_xent_forward(int threads, const nn_op *op, float *prob, float *loss, const float *logits,
                                 const int32_t *labels);
int nn_host_softmax_xent_backward(int threads, const nn_op *op, float *dlogits, const float *prob,
                                  const int32_t *labels);
int nn_host_optimizer_step(int threads, const nn_optim *o, float *p, const float *g, float *state, size_t n,
                           long step);

#endif
