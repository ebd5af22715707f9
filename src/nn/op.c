/* op — the op table: one row per nn_op_kind with its names, its flags and the back-end primitives it needs
 * (nn/backend.h nn_op_info). Everything that lists op kinds by name reads it. */
#include "nn/backend.h"
#include "nn/backend_impl.h"

#include <assert.h>
#include <stddef.h>

#define PRIMS(f, b) offsetof(nn_backend_ops, f), offsetof(nn_backend_ops, b)

static const nn_op_info ops[] = {
    [NN_OP_DENSE] = {"dense", "dense", NN_OPF_PRODUCT, PRIMS(dense_forward, dense_backward)},
    [NN_OP_CONV2D] = {"conv2d", "conv2d", NN_OPF_PRODUCT, PRIMS(conv2d_forward, conv2d_backward)},
    [NN_OP_MAXPOOL] = {"maxpool", "maxpool", 0, PRIMS(maxpool_forward, maxpool_backward)},
    [NN_OP_RELU] = {"relu", "relu", 0, PRIMS(relu_forward, relu_backward)},
    [NN_OP_DROPOUT] = {"dropout", "dropout", 0, PRIMS(dropout_forward, dropout_backward)},
    [NN_OP_FLATTEN] = {"flatten", "flatten", 0, 0, 0},
    [NN_OP_SOFTMAX_XENT] = {"softmax_xent", NULL, NN_OPF_LOSS, PRIMS(softmax_xent_forward, softmax_xent_backward)},
    /* graph ops; add and concat come from a block's connection, not from a layer a spec writes */
    [NN_OP_ADD] = {"add", NULL, NN_OPF_JOIN, PRIMS(add_forward, copy)},
    [NN_OP_CONCAT] = {"concat", NULL, NN_OPF_JOIN, PRIMS(concat_forward, concat_backward)},
    [NN_OP_BATCHNORM] = {"batchnorm", "batchnorm", 0, PRIMS(batchnorm_forward, batchnorm_backward)},
    [NN_OP_AVGPOOL] = {"avgpool", "avgpool", 0, PRIMS(avgpool_forward, avgpool_backward)},
    [NN_OP_GLOBAL_AVGPOOL] = {"global_avgpool", "global_avgpool", 0, PRIMS(avgpool_forward, avgpool_backward)},
    [NN_OP_SIGMOID_BCE] = {"sigmoid_bce", NULL, NN_OPF_LOSS, PRIMS(sigmoid_bce_forward, sigmoid_bce_backward)},
    /* recurrent ops */
    [NN_OP_EMBEDDING] = {"embedding", "embedding", 0, PRIMS(embedding_forward, embedding_backward)},
    [NN_OP_GRU] = {"gru", "gru", NN_OPF_PRODUCT, PRIMS(gru_forward, gru_backward)},
    [NN_OP_LSTM] = {"lstm", "lstm", NN_OPF_PRODUCT, PRIMS(lstm_forward, lstm_backward)},
    [NN_OP_REPEAT] = {"repeat", "repeat_vector", 0, PRIMS(repeat_forward, repeat_backward)},
};
static_assert(sizeof ops / sizeof ops[0] == NN_OP_COUNT, "one row of the op table per nn_op_kind");

const nn_op_info *nn_op_info_of(nn_op_kind k) {
    static const nn_op_info unknown = {"?", NULL, 0, 0, 0};
    return (unsigned)k < NN_OP_COUNT && ops[k].name ? &ops[k] : &unknown;
}

const char *nn_op_name(nn_op_kind k) { return nn_op_info_of(k)->name; }
