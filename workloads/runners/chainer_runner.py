#!/usr/bin/env python3
"""chainer_runner -- the showdown runner protocol (PROTOCOL.md) for Chainer (define-by-run on NumPy, CPU).

NCHW as the native engine (chainer.functions convolution_2d / max_pooling_2d with cover_all=False / linear,
W [out][in]), so the native weights load unchanged; graph layers (add, concat) as the plan connects them; embedding (embed_id), repeat_vector and GRU/LSTM
(runner_common.LayerModel's loop over the steps: linear, separate, stack); batch
norm by batch_normalization in training (it moves the running statistics as the native engine does: decay =
1 - momentum, the unbiased variance) and fixed_batch_normalization otherwise; the spec's optimizer runs on the
NumPy arrays in place.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner_common as rc  # noqa: E402
import numpy as np  # noqa: E402


class Chainer(rc.LayerModel):
    BF16 = "n/a: no bf16 on CPU (Chainer computes with NumPy, which has no bfloat16)"

    def __init__(self, a):
        import chainer
        import chainer.functions as F
        self.chainer, self.F = chainer, F
        self.name, self.version = "chainer", rc.dist_version("chainer")
        self.device = "cpu (numpy)"
        self.threads = a.threads

    def extras(self):
        return {"threads": self.threads, "cupy": self.chainer.backends.cuda.available}

    # one function per layer kind: f(L, params, inputs, mask) -> y
    def conv2d(self, L, p, xs, m):
        return self.F.convolution_2d(xs[0], p[0], p[1], stride=L.s, pad=L.p)

    def maxpool(self, L, p, xs, m):
        return self.F.max_pooling_2d(xs[0], L.k, stride=L.s, pad=L.p, cover_all=False)

    def avgpool(self, L, p, xs, m):
        if L.p != (0, 0):
            raise rc.Unsupported("avgpool padding (chainer's average_pooling_2d counts the padded zeros; "
                                 "native leaves them out)")
        return self.F.average_pooling_2d(xs[0], L.k, stride=L.s)

    def global_avgpool(self, L, p, xs, m):
        return self.F.mean(xs[0], axis=(2, 3), keepdims=True)

    def batchnorm(self, L, p, xs, m):
        rm, rv = self.stats[L.i]
        if self.training:   # rm, rv updated in place
            return self.F.batch_normalization(xs[0], p[0], p[1], eps=L.eps, running_mean=rm, running_var=rv,
                                              decay=1.0 - L.momentum)
        return self.F.fixed_batch_normalization(xs[0], p[0], p[1], rm, rv, eps=L.eps)

    def dense(self, L, p, xs, m):
        return self.F.linear(xs[0], p[0], p[1])

    def relu(self, L, p, xs, m):
        return self.F.relu(xs[0])

    def flatten(self, L, p, xs, m):
        return self.F.reshape(xs[0], (xs[0].shape[0], -1))

    def concat(self, L, p, xs, m):
        return self.F.concat(xs, axis=1)

    def embedding(self, L, p, xs, m):   # float-held ids [n][T][1][1] (or the range [lo, hi) of them) -> [n][T][1][E]
        x = xs[0]   # the model input: a NumPy array
        ids = x.reshape(len(x), -1)
        if L.range:
            ids = ids[:, L.range[0]:L.range[1]]
        return self.F.reshape(self.F.embed_id(ids.astype(np.int32), p[0]), (len(x), L.out_shape[0], 1, L.units))

    def repeat_vector(self, L, p, xs, m):   # Keras RepeatVector: [n][C] -> [n][T][1][C]
        n = xs[0].shape[0]
        return self.F.broadcast_to(self.F.reshape(xs[0], (n, 1, 1, -1)), (n, L.times, 1, L.out_shape[2]))

    # the hooks of runner_common.LayerModel.gru (GRU and LSTM): the loop over the steps in chainer.functions;
    # separate (not a slice a step) so that the backward gathers the steps' gradients in one op
    def rnn_reshape(self, x, shape):
        return self.F.reshape(x, shape)

    def rnn_linear(self, x, w):
        return self.F.linear(x, w)

    def rnn_unstack(self, x, axis):
        return self.F.separate(x, axis)

    def rnn_stack(self, xs, axis):
        return self.F.stack(xs, axis)

    def rnn_sigmoid(self, x):
        return self.F.sigmoid(x)

    def rnn_tanh(self, x):
        return self.F.tanh(x)

    def build(self, layers, params, opt, batch):
        chainer = self.chainer
        self.build_layers(layers, params, opt, lambda a, L, role: chainer.Parameter(np.array(a)),
                          lambda v: np.zeros_like(v.array), lambda a, L, name: a)

    def per_example(self, z, t):
        if self.loss == "sigmoid_binary_cross_entropy":   # the mean over classes
            return self.F.mean(self.F.sigmoid_cross_entropy(z, t.astype(np.int32), reduce="no"), axis=1)
        return self.F.softmax_cross_entropy(z, t, reduce="no")

    def forward(self, x):
        with self.chainer.using_config("train", False), self.chainer.no_backprop_mode():
            return self._forward(x, None).array

    def train_step(self, x, y, masks, t):
        with self.chainer.using_config("train", True):
            z = self._forward(x, masks)
            lv = self.per_example(z, self.targets(y))
            self.F.mean(lv).backward()
        bc = self.opt.corrections(t) if self.opt.name == "adam" else (1.0, 1.0)
        for k, v in enumerate(self.vars):
            pn, self.s0[k], self.s1[k] = self.opt.update(v.array, v.grad, self.s0[k], self.s1[k], bc, np.sqrt)
            v.array[...] = pn
            v.cleargrad()
        return float(lv.array.sum())


if __name__ == "__main__":
    rc.main(Chainer, "showdown runner for Chainer (workloads/runners/PROTOCOL.md)")
