/* dnnl_rnn — the dnnl back-end's GRU and LSTM on the host: the arithmetic of nn/host_rnn.c (the reference)
 * with vector kernels for the steps' products and gates (dnnl_rnn.c). Private to be_dnnl. */
#ifndef SD_BE_DNNL_RNN_H
#define SD_BE_DNNL_RNN_H

#include "nn/backend.h"

/* The workspace of a training forward (what backward reads) has nn_host_rnn_ws_bytes' size; its rows are
 * time-major here (dnnl_rnn.c). */
/* Temporaries (bytes, 64-byte aligned by the caller) of forward and of backward with `threads` threads. */
size_t dnnl_rnn_host_fwd_tmp_bytes(const nn_op *op, int threads);
size_t dnnl_rnn_host_bwd_tmp_bytes(const nn_op *op, int threads);

/* ws NULL: evaluation (nothing kept for backward). */
int dnnl_rnn_host_forward(int threads, const nn_op *op, float *y, void *ws, const float *x, const float *w,
                          float *tmp);
/* dx overwritten (may be NULL), dw accumulated, as nn_host_rnn_backward. */
int dnnl_rnn_host_backward(int threads, const nn_op *op, float *dx, float *dw, const float *dy, const float *x,
                           const float *w, const void *ws, float *tmp);

#endif
