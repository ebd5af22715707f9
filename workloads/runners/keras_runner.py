#!/usr/bin/env python3
"""keras_runner -- the showdown runner protocol (PROTOCOL.md) for Keras 3 on the backend KERAS_BACKEND names
(tensorflow, jax or torch; showdown runs it as keras-tensorflow, keras-jax, keras-torch).

The model is a Keras functional model of stock layers (Conv2D, MaxPooling2D, AveragePooling2D,
GlobalAveragePooling2D, BatchNormalization, Dense, ReLU, Flatten, Add, Concatenate; Embedding, RepeatVector, GRU,
RNN) wired as the plan connects them, channels_last as Keras defaults, trained with model.train_on_batch on the
spec's loss (softmax cross-entropy, or binary cross-entropy on one-hot targets).

Recurrent workloads: sequences are [n][steps][features]; an embedding reads the float-held ids (or the plan's range
of them) cast to int32. GRU is Keras's GRU(reset_after=True), cuDNN's and PyTorch's formulation with two bias
vectors, its gates reordered from native's r,z,n to Keras's z,r,h. LSTM is an RNN of Keras's LSTMCell (gates
i,f,c,o = PyTorch's i,f,g,o) with PyTorch's second bias vector added: the native parameter count, and both biases
trained as native trains them (Keras's single bias would move by one optimizer update where native's sum moves by
two). A time-distributed LSTM (mnist_hrnn) runs the rows as one batch of sequences, as the native engine does.

The optimizer is a keras.optimizers.Optimizer subclass whose update_step is the spec's arithmetic
(runner_common.Optimizer on keras.ops): Keras 3's stock RMSprop puts eps inside the sqrt (Keras 2, which the spec
and the published runs follow, put it outside), which changes the early steps visibly. Likewise batch norm's
training step moves the moving variance towards the unbiased batch variance, as the native engine does (Keras's
towards the biased one). Dropout is the native engine's mask: each dropout layer multiplies by a mask given as an
extra model input (ones at inference).

Under --precision bf16 the training model's layers take the `mixed_bfloat16` dtype policy (bf16 compute, fp32
variables, Keras's own mixed precision) with a float32 output layer so the loss is fp32; a second, float32 model
with the same weights (copied after training steps) runs the inference forward, so the equivalence check stays fp32.
The recurrent layers (their cells too) take the policy as the others do; the embedding ids stay int32.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner_common as rc  # noqa: E402
import numpy as np  # noqa: E402


class Keras:
    LOSSES = ("softmax_cross_entropy", "sigmoid_binary_cross_entropy", "none")
    BF16 = True   # the mixed_bfloat16 policy: bf16 compute, fp32 variables, optimizer state and loss

    def __init__(self, a):
        self.backend = os.environ.get("KERAS_BACKEND", "tensorflow")
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import keras
        self.keras = keras
        if keras.backend.backend() != self.backend:
            raise ImportError("keras runs on %s, not %s" % (keras.backend.backend(), self.backend))
        if self.backend == "tensorflow":
            import tensorflow as be
            if a.threads > 0:
                be.config.threading.set_intra_op_parallelism_threads(a.threads)
                be.config.threading.set_inter_op_parallelism_threads(1)
        elif self.backend == "jax":
            import jax as be
        elif self.backend == "torch":
            import torch as be
            if a.threads > 0:
                be.set_num_threads(a.threads)
        else:
            raise ImportError("unknown KERAS_BACKEND %r" % self.backend)
        self.be = be
        self.name, self.version = "keras-" + self.backend, rc.dist_version("keras")
        self.device = "cpu"
        self.threads = a.threads
        self.bf16 = a.precision == "bf16"
        self.dtype = None   # the dtype policy of the layers being built (None: the global float32)
        self.BatchNorm = native_batchnorm(keras)
        self.LSTMCell = lstm_cell(keras)

    def extras(self):
        return {"keras": self.keras.__version__, "backend": self.backend, "backend_version": self.be.__version__,
                "threads": self.threads, "layout": "channels_last"}

    # one function per layer kind: f(L, inputs (keras tensors, plan order), mask_input) -> keras tensor; weights
    # set later by set_weights
    def conv2d(self, L, xs, m):
        K, x = self.keras.layers, xs[0]
        if L.p != (0, 0):
            x = K.ZeroPadding2D(L.p, dtype=self.dtype)(x)
        return K.Conv2D(L.units, L.k, strides=L.s, padding="valid", use_bias=L.bias, name="l%d" % L.i,
                        dtype=self.dtype)(x)

    def maxpool(self, L, xs, m):   # Keras pools pad by 'same' only: an explicit -inf border instead
        x = xs[0]
        if L.p != (0, 0):
            x = self.keras.ops.pad(x, [[0, 0], [L.p[0], L.p[0]], [L.p[1], L.p[1]], [0, 0]], constant_values=-np.inf)
        return self.keras.layers.MaxPooling2D(L.k, strides=L.s, padding="valid", dtype=self.dtype)(x)

    def avgpool(self, L, xs, m):
        if L.p != (0, 0):
            raise rc.Unsupported("avgpool padding (Keras pools pad by 'same' only, and a zero border would count)")
        return self.keras.layers.AveragePooling2D(L.k, strides=L.s, padding="valid", dtype=self.dtype)(xs[0])

    def global_avgpool(self, L, xs, m):
        return self.keras.layers.GlobalAveragePooling2D(keepdims=True, dtype=self.dtype)(xs[0])

    def batchnorm(self, L, xs, m):
        return self.BatchNorm(momentum=1.0 - L.momentum, epsilon=L.eps, name="l%d" % L.i, dtype=self.dtype)(xs[0])

    def dense(self, L, xs, m):
        return self.keras.layers.Dense(L.units, use_bias=L.bias, name="l%d" % L.i, dtype=self.dtype)(xs[0])

    def relu(self, L, xs, m):
        return self.keras.layers.ReLU(dtype=self.dtype)(xs[0])

    def flatten(self, L, xs, m):
        return self.keras.layers.Flatten(dtype=self.dtype)(xs[0])

    def dropout(self, L, xs, m):
        return xs[0] if m is None else self.keras.layers.Multiply(dtype=self.dtype)([xs[0], m])

    def add(self, L, xs, m):
        return self.keras.layers.Add(dtype=self.dtype)(xs)

    def concat(self, L, xs, m):   # channels_last
        return self.keras.layers.Concatenate(axis=-1, dtype=self.dtype)(xs)

    def embedding(self, L, xs, m):   # float-held ids [n][1][1][T] (or the range [lo, hi) of them) -> [n][T][E]
        ops = self.keras.ops
        ids = ops.reshape(xs[0], (-1, L.in_shape[0]))
        if L.range:
            ids = ids[:, L.range[0]:L.range[1]]
        # int32 before any layer under the bf16 policy could round the ids (above 256)
        return self.keras.layers.Embedding(L.vocab, L.units, name="l%d" % L.i, dtype=self.dtype)(ops.cast(ids, "int32"))

    def repeat_vector(self, L, xs, m):   # [n][C] -> [n][T][C]
        return self.keras.layers.RepeatVector(L.times, dtype=self.dtype)(xs[0])

    def gru(self, L, xs, m):
        """GRU(reset_after=True) is cuDNN's GRU; LSTM is Keras's cell with PyTorch's second bias (lstm_cell).
        Input [n][steps][features], or time-distributed [n][rows][steps][1] (mnist_hrnn's per-row LSTM, every
        row its own sequence); output every step's h or the last one's (the last one's per row when distributed)."""
        K, ops, x = self.keras.layers, self.keras.ops, xs[0]
        name = "l%d" % L.i
        if L.op == "gru":
            rnn = K.GRU(L.units, reset_after=True, return_sequences=L.ret_seq, name=name, dtype=self.dtype)
        else:
            rnn = K.RNN(self.LSTMCell(L.units, dtype=self.dtype), return_sequences=L.ret_seq, name=name,
                        dtype=self.dtype)
        if not L.distributed:
            return rnn(x)
        # the rows as one batch of sequences, as native and Keras 2's TimeDistributed (batch size not fixed) run
        # them; Keras 3's TimeDistributed calls the layer once per row (28 recurrences, 2-3x slower here)
        y = rnn(ops.reshape(x, (-1, L.steps, L.features)))   # native has no return_sequences here (plan.c)
        return ops.reshape(y, (-1, L.out_shape[0], L.units))

    lstm = gru

    def _model(self, layers, params, dtype):
        """The functional model of the plan, its layers under the dtype policy `dtype`, weights from params."""
        keras = self.keras
        self.dtype = dtype
        c, h, w = layers[0].in_shape
        inp = keras.Input((h, w, c), name="x")
        minputs = {}
        for L in self.drops:
            shape = self._mask(np.zeros((1,) + rc.mask_shape(L)), L).shape[1:]
            minputs[L.i] = keras.Input(shape, name="mask%d" % L.i)
        outs = []   # layer i reads the outputs of its inputs (-1: the model input)
        for L in layers:
            f = getattr(self, L.op, None)
            if f is None:
                raise rc.Unsupported(L.op)
            outs.append(f(L, [inp if j < 0 else outs[j] for j in L.inputs], minputs.get(L.i)))
        x = outs[-1]
        if dtype is not None:   # the logits back in float32: the loss is computed in fp32
            x = keras.layers.Activation("linear", dtype="float32")(x)
        self.dtype = None
        model = keras.Model([inp] + [minputs[L.i] for L in self.drops], x)
        for L in layers:
            if L.op in ("embedding", "gru", "lstm"):
                model.get_layer("l%d" % L.i).set_weights(rnn_weights(L, params[L.i]))
            elif L.i in params:
                W, b = params[L.i]
                if L.op == "batchnorm":   # gamma, beta, moving mean 0 and variance 1
                    wts = [W, b, np.zeros_like(W), np.ones_like(W)]
                else:
                    W = rc.conv_hwio(W) if L.op == "conv2d" else rc.dense_in_out(W, L, True)
                    wts = [W] if b is None else [W, b]
                model.get_layer("l%d" % L.i).set_weights(wts)
        return model

    def build(self, layers, params, opt, batch):
        keras = self.keras
        self.drops = [L for L in layers if L.op == "dropout" and L.rate > 0]
        self.seq_in = rc.layouts(layers)[0]
        self.model = self._model(layers, params, "mixed_bfloat16" if self.bf16 else None)
        self.eval_model = self._model(layers, params, None) if self.bf16 else self.model
        self.stale = False   # the eval model's weights lag the trained ones
        self.bce = self.loss == "sigmoid_binary_cross_entropy"
        if opt is not None:   # an inference workload is not compiled for training
            loss = keras.losses.BinaryCrossentropy(from_logits=True) if self.bce else \
                keras.losses.SparseCategoricalCrossentropy(from_logits=True)
            self.model.compile(optimizer=spec_optimizer(keras, opt), loss=loss)
        self.classes = layers[-1].out_shape[0]
        self.batch = batch
        self.ones = {}

    def parameters(self):   # the trainable ones: batch norm's moving statistics are not parameters natively
        return sum(int(np.prod(v.shape)) for v in self.model.trainable_weights)

    def _mask(self, m, L):
        """A native dropout mask in the layout of its input: NHWC for a map, [n][steps][features] for a sequence."""
        return m.reshape(len(m), L.in_shape[0], L.in_shape[2]) if self.seq_in[L.i] else rc.to_nhwc(m, L)

    def _ones(self, n):
        if n not in self.ones:
            self.ones[n] = [self._mask(np.ones((n,) + rc.mask_shape(L), np.float32), L) for L in self.drops]
        return self.ones[n]

    def forward(self, x):
        if self.stale:
            self.eval_model.set_weights(self.model.get_weights())
            self.stale = False
        return np.asarray(self.eval_model.predict_on_batch([rc.to_nhwc(x, None)] + self._ones(len(x))))

    def train_step(self, x, y, masks, t):
        masks = [self._mask(m, L) for m, L in zip(masks, self.drops)]
        loss = self.model.train_on_batch([rc.to_nhwc(x, None)] + masks, rc.one_hot(y, self.classes) if self.bce else y)
        self.stale = self.bf16
        return float(loss[0] if isinstance(loss, (list, tuple)) else loss) * len(y)


GRU_ZRH = (1, 0, 2)   # Keras's GRU gates z, r, h from the native (PyTorch) r, z, n


def rnn_weights(L, p):
    """Layer L's native parameters (runner_common.param_shapes) as Keras's set_weights takes them. GRU: kernel
    [F][3H] and recurrent kernel [H][3H] in gate order z,r,h, bias [2][3H] (input, recurrent); LSTM (gate order
    i,f,c,o = PyTorch's i,f,g,o): kernel, recurrent kernel, bias (b_ih), recurrent_bias (b_hh)."""
    if L.op == "embedding":
        return [p[0]]
    wih, whh, bih, bhh = p
    if L.op == "gru":
        H = L.units
        rows = np.concatenate([np.arange(g * H, (g + 1) * H) for g in GRU_ZRH])
        wih, whh, bih, bhh = wih[rows], whh[rows], bih[rows], bhh[rows]
        return [np.ascontiguousarray(wih.T), np.ascontiguousarray(whh.T), np.stack([bih, bhh])]
    return [np.ascontiguousarray(wih.T), np.ascontiguousarray(whh.T), bih, bhh]


def lstm_cell(keras):
    """Keras's LSTMCell with PyTorch's second bias vector (recurrent_bias, b_hh) beside its own (bias, b_ih):
    the native model has both, so the parameter count is the native one (PROTOCOL.md kills a runner whose count
    differs), and each trains as native's does (with one bias the sum would move by one update, not two)."""
    ops = keras.ops

    class LSTMCell2(keras.layers.LSTMCell):
        def build(self, input_shape):
            super().build(input_shape)
            self.recurrent_bias = self.add_weight(shape=(4 * self.units,), name="recurrent_bias",
                                                  initializer="zeros")

        def call(self, inputs, states, training=False):
            h, c = states
            z = ops.matmul(inputs, self.kernel) + self.bias + ops.matmul(h, self.recurrent_kernel) + self.recurrent_bias
            c, o = self._compute_carry_and_output_fused(ops.split(z, 4, axis=1), c)
            h = o * self.activation(c)
            return h, [h, c]

    return LSTMCell2


def native_batchnorm(keras):
    """Keras's BatchNormalization whose training step moves the moving variance towards the unbiased batch variance
    (n / (n - 1) times the biased one, n values per channel), as the native engine and PyTorch do; Keras's own
    moves it towards the biased one. Inference is Keras's own."""
    ops = keras.ops

    class BatchNorm(keras.layers.BatchNormalization):
        def call(self, inputs, training=None, mask=None):
            if not training:
                return super().call(inputs, training=False)
            x = ops.cast(inputs, "float32")   # the statistics in fp32, as Keras's (bf16 under mixed precision)
            mean, var = ops.moments(x, list(range(len(x.shape) - 1)))
            n = ops.cast(ops.size(x) // x.shape[-1], "float32")
            m = self.momentum
            self.moving_mean.assign(self.moving_mean * m + mean * (1.0 - m))
            self.moving_variance.assign(self.moving_variance * m + var * (n / (n - 1.0)) * (1.0 - m))
            y = ops.batch_normalization(x, mean, var, axis=-1, offset=self.beta, scale=self.gamma,
                                        epsilon=self.epsilon)
            return ops.cast(y, self.compute_dtype)

    return BatchNorm


def spec_optimizer(keras, opt):
    """A Keras optimizer doing runner_common.Optimizer's arithmetic with keras.ops (any backend)."""
    ops = keras.ops
    dense = None
    if keras.backend.backend() == "tensorflow":   # keras.ops.convert_to_tensor keeps IndexedSlices as they are
        import tensorflow as tf
        dense = tf.convert_to_tensor

    class SpecOptimizer(keras.optimizers.Optimizer):
        def build(self, var_list):
            if self.built:
                return
            super().build(var_list)
            self.s0 = [self.add_variable_from_reference(v, "s0") for v in var_list]
            self.s1 = [self.add_variable_from_reference(v, "s1") for v in var_list]

        def update_step(self, gradient, variable, learning_rate):
            k = self._get_variable_index(variable)
            if dense is not None:   # an embedding's gradient is IndexedSlices: dense, as native updates every row
                gradient = dense(gradient)
            bc = (1.0, 1.0)
            if opt.name == "adam":
                t = ops.cast(self.iterations + 1, variable.dtype)
                bc = (1.0 - ops.power(opt.b1, t), 1.0 - ops.power(opt.b2, t))
            p, a, b = opt.update(variable, gradient, self.s0[k], self.s1[k], bc, ops.sqrt)
            self.assign(self.s0[k], a)
            self.assign(self.s1[k], b)
            self.assign(variable, p)

    return SpecOptimizer(learning_rate=opt.lr, name="spec_" + opt.name)


if __name__ == "__main__":
    rc.main(Keras, "showdown runner for Keras 3 (workloads/runners/PROTOCOL.md)")
