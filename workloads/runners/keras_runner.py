#!/usr/bin/env python3
"""keras_runner -- the showdown runner protocol (PROTOCOL.md) for Keras 3 on the backend KERAS_BACKEND names
(tensorflow, jax or torch; showdown runs it as keras-tensorflow, keras-jax, keras-torch).

The model is a Keras functional model of stock layers (Conv2D, MaxPooling2D, Dense, ReLU, Flatten), channels_last
as Keras defaults, trained with model.train_on_batch. The optimizer is a keras.optimizers.Optimizer subclass whose
update_step is the spec's arithmetic (runner_common.Optimizer on keras.ops): Keras 3's stock RMSprop puts eps inside
the sqrt (Keras 2, which the spec and the published runs follow, put it outside), which changes the early steps
visibly. Dropout is the native engine's mask: each dropout layer multiplies by a mask given as an extra model
input (ones at inference).

Under --precision bf16 the training model's layers take the `mixed_bfloat16` dtype policy (bf16 compute, fp32
variables, Keras's own mixed precision) with a float32 output layer so the loss is fp32; a second, float32 model
with the same weights (copied after training steps) runs the inference forward, so the equivalence check stays fp32.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner_common as rc  # noqa: E402
import numpy as np  # noqa: E402


class Keras:
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

    def extras(self):
        return {"keras": self.keras.__version__, "backend": self.backend, "backend_version": self.be.__version__,
                "threads": self.threads, "layout": "channels_last"}

    # one function per layer kind: f(L, x, mask_input) -> keras tensor; weights set later by set_weights
    def conv2d(self, L, x, m):
        K = self.keras.layers
        if L.p != (0, 0):
            x = K.ZeroPadding2D(L.p, dtype=self.dtype)(x)
        return K.Conv2D(L.units, L.k, strides=L.s, padding="valid", use_bias=L.bias, name="l%d" % L.i,
                        dtype=self.dtype)(x)

    def maxpool(self, L, x, m):
        if L.p != (0, 0):
            raise rc.Unsupported("maxpool padding (Keras pools pad by 'same' only)")
        return self.keras.layers.MaxPooling2D(L.k, strides=L.s, padding="valid", dtype=self.dtype)(x)

    def dense(self, L, x, m):
        return self.keras.layers.Dense(L.units, use_bias=L.bias, name="l%d" % L.i, dtype=self.dtype)(x)

    def relu(self, L, x, m):
        return self.keras.layers.ReLU(dtype=self.dtype)(x)

    def flatten(self, L, x, m):
        return self.keras.layers.Flatten(dtype=self.dtype)(x)

    def dropout(self, L, x, m):
        return x if m is None else self.keras.layers.Multiply(dtype=self.dtype)([x, m])

    def _model(self, layers, params, dtype):
        """The functional model of the plan, its layers under the dtype policy `dtype`, weights from params."""
        keras = self.keras
        self.dtype = dtype
        c, h, w = layers[0].in_shape
        x = inp = keras.Input((h, w, c), name="x")
        minputs = {}
        for L in self.drops:
            shape = rc.to_nhwc(np.zeros((1,) + rc.mask_shape(L)), L).shape[1:]
            minputs[L.i] = keras.Input(shape, name="mask%d" % L.i)
        for L in layers:
            f = getattr(self, L.op, None)
            if f is None:
                raise rc.Unsupported(L.op)
            x = f(L, x, minputs.get(L.i))
        if dtype is not None:   # the logits back in float32: the loss is computed in fp32
            x = keras.layers.Activation("linear", dtype="float32")(x)
        self.dtype = None
        model = keras.Model([inp] + [minputs[L.i] for L in self.drops], x)
        for L in layers:
            if L.i in params:
                W, b = params[L.i]
                W = rc.conv_hwio(W) if L.op == "conv2d" else rc.dense_in_out(W, L, True)
                model.get_layer("l%d" % L.i).set_weights([W] if b is None else [W, b])
        return model

    def build(self, layers, params, opt, batch):
        keras = self.keras
        self.drops = [L for L in layers if L.op == "dropout" and L.rate > 0]
        self.model = self._model(layers, params, "mixed_bfloat16" if self.bf16 else None)
        self.eval_model = self._model(layers, params, None) if self.bf16 else self.model
        self.stale = False   # the eval model's weights lag the trained ones
        self.model.compile(optimizer=spec_optimizer(keras, opt),
                           loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        self.batch = batch
        self.ones = {}

    def parameters(self):
        return self.model.count_params()

    def _ones(self, n):
        if n not in self.ones:
            self.ones[n] = [rc.to_nhwc(np.ones((n,) + rc.mask_shape(L), np.float32), L) for L in self.drops]
        return self.ones[n]

    def forward(self, x):
        if self.stale:
            self.eval_model.set_weights(self.model.get_weights())
            self.stale = False
        return np.asarray(self.eval_model.predict_on_batch([rc.to_nhwc(x, None)] + self._ones(len(x))))

    def train_step(self, x, y, masks, t):
        masks = [rc.to_nhwc(m, L) for m, L in zip(masks, self.drops)]
        loss = self.model.train_on_batch([rc.to_nhwc(x, None)] + masks, y)
        self.stale = self.bf16
        return float(loss[0] if isinstance(loss, (list, tuple)) else loss) * len(y)


def spec_optimizer(keras, opt):
    """A Keras optimizer doing runner_common.Optimizer's arithmetic with keras.ops (any backend)."""
    ops = keras.ops

    class SpecOptimizer(keras.optimizers.Optimizer):
        def build(self, var_list):
            if self.built:
                return
            super().build(var_list)
            self.s0 = [self.add_variable_from_reference(v, "s0") for v in var_list]
            self.s1 = [self.add_variable_from_reference(v, "s1") for v in var_list]

        def update_step(self, gradient, variable, learning_rate):
            k = self._get_variable_index(variable)
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
