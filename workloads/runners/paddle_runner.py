#!/usr/bin/env python3
"""paddle_runner -- the showdown runner protocol (PROTOCOL.md) for PaddlePaddle (dynamic graph, CPU).

NCHW as the native engine (paddle.nn.functional conv2d / max_pool2d / avg_pool2d / batch_norm / linear); Paddle's
linear weight is [in][out], so dense weights are transposed. Graph layers (add, concat) as the plan connects them;
embedding (F.embedding), repeat_vector and GRU/LSTM (runner_common.LayerModel's loop over the steps: paddle.matmul,
unbind, stack), the native [out][in] recurrent weights unchanged.
Parameters are Paddle tensors with gradients; after backward the spec's optimizer (runner_common.Optimizer) runs
on Paddle tensors under no_grad.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner_common as rc  # noqa: E402
import numpy as np  # noqa: E402


class Paddle(rc.LayerModel):
    BF16 = "n/a: no bf16 on CPU (paddle.amp.auto_cast acts on CUDA and XPU only; the CPU conv2d has no bfloat16 kernel)"

    def __init__(self, a):
        os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
        os.environ.setdefault("GLOG_minloglevel", "2")
        import paddle
        import paddle.nn.functional as F
        paddle.set_device("cpu")
        self.paddle, self.F = paddle, F
        self.name, self.version = "paddle", rc.dist_version("paddlepaddle", "paddlepaddle-gpu")
        self.device = "cpu"
        self.threads = a.threads

    def extras(self):
        return {"threads": self.threads, "mkldnn": bool(self.paddle.is_compiled_with_cuda() is False),
                "commit": getattr(self.paddle.version, "commit", "")}

    # one function per layer kind: f(L, params, inputs, mask) -> y
    def conv2d(self, L, p, xs, m):
        return self.F.conv2d(xs[0], p[0], p[1], stride=L.s, padding=L.p)

    def maxpool(self, L, p, xs, m):
        return self.F.max_pool2d(xs[0], L.k, stride=L.s, padding=L.p)

    def avgpool(self, L, p, xs, m):   # exclusive: padded positions out of the count, as native
        return self.F.avg_pool2d(xs[0], L.k, stride=L.s, padding=L.p, exclusive=True)

    def global_avgpool(self, L, p, xs, m):
        return self.paddle.mean(xs[0], axis=[2, 3], keepdim=True)

    def batchnorm(self, L, p, xs, m):
        """Training: Paddle moves running statistics towards the biased batch variance, native towards the
        unbiased one; so batch_norm gets scratch statistics it overwrites (momentum 0: the batch's mean and
        biased variance) and the running ones move as native's do."""
        paddle, F, x = self.paddle, self.F, xs[0]
        rm, rv = self.stats[L.i]
        if not self.training:
            return F.batch_norm(x, rm, rv, p[0], p[1], training=False, epsilon=L.eps)
        bm, bv = paddle.zeros_like(rm), paddle.zeros_like(rv)
        y = F.batch_norm(x, bm, bv, p[0], p[1], training=True, momentum=0.0, epsilon=L.eps)
        n = int(np.prod(x.shape)) // x.shape[1]   # values per channel
        with paddle.no_grad():
            paddle.assign(self.running(rm, bm, L.momentum), rm)
            paddle.assign(self.running(rv, bv * (n / (n - 1.0)), L.momentum), rv)
        return y

    def dense(self, L, p, xs, m):
        return self.F.linear(xs[0], p[0], p[1])

    def relu(self, L, p, xs, m):
        return self.F.relu(xs[0])

    def flatten(self, L, p, xs, m):
        return self.paddle.reshape(xs[0], [xs[0].shape[0], -1])

    def concat(self, L, p, xs, m):
        return self.paddle.concat(xs, axis=1)

    def embedding(self, L, p, xs, m):   # float-held ids [n][T][1][1] (or the range [lo, hi) of them) -> [n][T][1][E]
        paddle = self.paddle
        n = xs[0].shape[0]
        ids = paddle.reshape(xs[0], [n, -1])
        if L.range:
            ids = ids[:, L.range[0]:L.range[1]]
        y = self.F.embedding(paddle.cast(ids, "int64"), p[0])
        return paddle.reshape(y, [n, L.out_shape[0], 1, L.units])

    def repeat_vector(self, L, p, xs, m):   # Keras RepeatVector: [n][C] -> [n][T][1][C]
        n = xs[0].shape[0]
        return self.paddle.expand(self.paddle.reshape(xs[0], [n, 1, 1, -1]), [n, L.times, 1, L.out_shape[2]])

    # the hooks of runner_common.LayerModel.gru (GRU and LSTM): the loop over the steps in Paddle tensors; unbind
    # (not a slice a step) so that the backward gathers the steps' gradients in one op
    def rnn_reshape(self, x, shape):
        return self.paddle.reshape(x, list(shape))

    def rnn_linear(self, x, w):
        return self.paddle.matmul(x, w, transpose_y=True)

    def rnn_unstack(self, x, axis):
        return self.paddle.unbind(x, axis)

    def rnn_stack(self, xs, axis):
        return self.paddle.stack(xs, axis)

    def rnn_sigmoid(self, x):
        return self.F.sigmoid(x)

    def rnn_tanh(self, x):
        return self.paddle.tanh(x)

    def build(self, layers, params, opt, batch):
        paddle = self.paddle

        def param(a, L, role):   # Paddle's linear weight is [in][out]
            a = a.T if role == "w" and L.op == "dense" else a
            return paddle.to_tensor(np.ascontiguousarray(a), dtype="float32", stop_gradient=False)
        self.build_layers(layers, params, opt, param, paddle.zeros_like, lambda a, L, name: paddle.to_tensor(a))

    def per_example(self, z, t):
        if self.loss == "sigmoid_binary_cross_entropy":   # the mean over classes
            return self.F.binary_cross_entropy_with_logits(z, t, reduction="none").mean(axis=1)
        return self.F.cross_entropy(z, t, reduction="none")

    def forward(self, x):
        with self.paddle.no_grad():
            return self._forward(self.paddle.to_tensor(x), None).numpy()

    def train_step(self, x, y, masks, t):
        paddle = self.paddle
        z = self._forward(paddle.to_tensor(x), [paddle.to_tensor(m) for m in masks])
        lv = self.per_example(z, paddle.to_tensor(self.targets(y)))
        lv.mean().backward()
        bc = self.opt.corrections(t) if self.opt.name == "adam" else (1.0, 1.0)
        with paddle.no_grad():
            for k, v in enumerate(self.vars):
                pn, self.s0[k], self.s1[k] = self.opt.update(v, v.grad, self.s0[k], self.s1[k], bc, paddle.sqrt)
                paddle.assign(pn, v)
                v.clear_gradient()
        return float(lv.sum())


if __name__ == "__main__":
    rc.main(Paddle, "showdown runner for PaddlePaddle (workloads/runners/PROTOCOL.md)")
