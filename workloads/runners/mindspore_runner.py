#!/usr/bin/env python3
"""mindspore_runner -- the showdown runner protocol (PROTOCOL.md) for MindSpore (PyNative mode, CPU).

NCHW as the native engine (mindspore.ops conv2d / max_pool2d / avg_pool2d / batch_norm / dense, dense weight
[out][in]), so the native weights load unchanged; graph layers (add, concat) as the plan connects them; batch norm's
running statistics are Parameters that ops.batch_norm moves as the native engine does (momentum, the unbiased
variance); embedding (ops.gather), repeat_vector and GRU/LSTM (runner_common.LayerModel's loop over the steps:
ops.dense, unbind, stack). Gradients by mindspore.value_and_grad over the Parameters; the spec's optimizer
(runner_common.Optimizer) on MindSpore tensors, written back with Parameter.set_data.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner_common as rc  # noqa: E402
import numpy as np  # noqa: E402


class MindSpore(rc.LayerModel):
    BF16 = "n/a: no bf16 on CPU (MindSpore's CPU Conv2D and MatMul kernels take float32 and float64 only)"

    def __init__(self, a):
        os.environ.setdefault("GLOG_v", "3")
        import mindspore as ms
        from mindspore import ops
        ms.set_device("CPU") if hasattr(ms, "set_device") else ms.set_context(device_target="CPU")
        self.ms, self.ops = ms, ops
        self.name, self.version = "mindspore", rc.dist_version("mindspore")
        self.device = "cpu"
        self.threads = a.threads

    def extras(self):
        return {"threads": self.threads, "mode": "pynative" if self.ms.get_context("mode") == 1 else "graph"}

    # one function per layer kind: f(L, params, inputs, mask) -> y
    def conv2d(self, L, p, xs, m):
        if L.p != (0, 0):
            return self.ops.conv2d(xs[0], p[0], p[1], stride=L.s, pad_mode="pad", padding=L.p)
        return self.ops.conv2d(xs[0], p[0], p[1], stride=L.s, pad_mode="valid")

    def maxpool(self, L, p, xs, m):
        return self.ops.max_pool2d(xs[0], L.k, stride=L.s, padding=L.p)

    def avgpool(self, L, p, xs, m):   # padded positions out of the count, as native; padding (top, bottom, left, right)
        return self.ops.avg_pool2d(xs[0], L.k, stride=L.s, padding=(L.p[0], L.p[0], L.p[1], L.p[1]),
                                   count_include_pad=False)

    def global_avgpool(self, L, p, xs, m):
        return xs[0].mean(axis=(2, 3), keep_dims=True)

    def batchnorm(self, L, p, xs, m):
        rm, rv = self.stats[L.i]
        return self.ops.batch_norm(xs[0], rm, rv, p[0], p[1], training=self.training, momentum=L.momentum, eps=L.eps)

    def dense(self, L, p, xs, m):
        return self.ops.dense(xs[0], p[0], p[1])

    def relu(self, L, p, xs, m):
        return self.ops.relu(xs[0])

    def flatten(self, L, p, xs, m):
        return self.ops.reshape(xs[0], (xs[0].shape[0], -1))

    def concat(self, L, p, xs, m):
        return self.ops.cat(xs, axis=1)

    def embedding(self, L, p, xs, m):   # float-held ids [n][T][1][1] (or the range [lo, hi) of them) -> [n][T][1][E]
        ops = self.ops
        n = xs[0].shape[0]
        ids = ops.reshape(xs[0], (n, -1))
        if L.range:
            ids = ids[:, L.range[0]:L.range[1]]
        return ops.reshape(ops.gather(p[0], ids.astype(self.ms.int32), 0), (n, L.out_shape[0], 1, L.units))

    def repeat_vector(self, L, p, xs, m):   # Keras RepeatVector: [n][C] -> [n][T][1][C]
        n = xs[0].shape[0]
        return self.ops.broadcast_to(self.ops.reshape(xs[0], (n, 1, 1, -1)), (n, L.times, 1, L.out_shape[2]))

    # the hooks of runner_common.LayerModel.gru (GRU and LSTM): the loop over the steps in mindspore.ops; unbind
    # (not a slice a step) so that the backward gathers the steps' gradients in one op
    def rnn_reshape(self, x, shape):
        return self.ops.reshape(x, shape)

    def rnn_linear(self, x, w):
        return self.ops.dense(x, w)

    def rnn_unstack(self, x, axis):
        return self.ops.unbind(x, axis)

    def rnn_stack(self, xs, axis):
        return self.ops.stack(xs, axis)

    def rnn_sigmoid(self, x):
        return self.ops.sigmoid(x)

    def rnn_tanh(self, x):
        return self.ops.tanh(x)

    def per_example(self, z, t):
        if self.loss == "sigmoid_binary_cross_entropy":   # the mean over classes
            return self.ops.binary_cross_entropy_with_logits(z, t, reduction="none").mean(axis=1)
        return self.ops.cross_entropy(z, t, reduction="none")

    def build(self, layers, params, opt, batch):
        ms, ops = self.ms, self.ops
        self.build_layers(layers, params, opt, lambda a, L, role: ms.Parameter(ms.Tensor(a), name="%s%d" % (role, L.i)),
                          ops.zeros_like,
                          lambda a, L, name: ms.Parameter(ms.Tensor(a), name="%s%d" % (name, L.i), requires_grad=False))
        if opt is None:
            return

        def loss_fn(x, t, *masks):
            lv = self.per_example(self._forward(x, masks), t)
            return lv.mean(), lv.sum()
        self.grad_fn = ms.value_and_grad(loss_fn, None, self.vars, has_aux=True)

    def forward(self, x):
        return self._forward(self.ms.Tensor(x), None).asnumpy()

    def train_step(self, x, y, masks, t):
        ms = self.ms
        (_, lsum), grads = self.grad_fn(ms.Tensor(x), ms.Tensor(self.targets(y)), *[ms.Tensor(m) for m in masks])
        bc = self.opt.corrections(t) if self.opt.name == "adam" else (1.0, 1.0)
        for k, v in enumerate(self.vars):
            pn, self.s0[k], self.s1[k] = self.opt.update(v.value(), grads[k], self.s0[k], self.s1[k], bc, self.ops.sqrt)
            v.set_data(pn)
        return float(lsum.asnumpy())


if __name__ == "__main__":
    rc.main(MindSpore, "showdown runner for MindSpore (workloads/runners/PROTOCOL.md)")
