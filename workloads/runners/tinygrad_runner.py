#!/usr/bin/env python3
"""tinygrad_runner -- the showdown runner protocol (PROTOCOL.md) for tinygrad (lazy tensors compiled to C for the
CPU device; the training step under TinyJit).

NCHW as the native engine (Tensor.conv2d / max_pool2d / avg_pool2d, x @ W.T for dense), so the native weights load
unchanged; graph layers (add, concat) as the plan connects them; embedding (nn.Embedding's one-hot lookup),
repeat_vector and GRU/LSTM (runner_common.LayerModel's loop over the steps: one kernel set per step, so a long
sequence compiles for minutes); batch norm as tinygrad's nn.BatchNorm computes it
(Tensor.batchnorm with the batch's statistics in training, the running ones, moved as native's, otherwise). The
spec's optimizer (runner_common.Optimizer) on tinygrad tensors; it and the running statistics realised with
assign inside the jitted step.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner_common as rc  # noqa: E402
import numpy as np  # noqa: E402


class Tinygrad(rc.LayerModel):
    BF16 = "n/a: no bf16 on CPU (tinygrad's CPU back-end emits bf16 C that clang rejects)"

    def __init__(self, a):
        os.environ.setdefault("DEV", "CPU")
        if a.threads > 0:
            os.environ.setdefault("CPU_COUNT", str(a.threads))
        import tinygrad
        from tinygrad import Tensor, TinyJit, Device
        self.Tensor, self.TinyJit = Tensor, TinyJit
        self.name, self.version = "tinygrad", rc.dist_version("tinygrad")
        self.device = "cpu (tinygrad %s)" % Device.DEFAULT
        self.threads = a.threads
        self.tinygrad = tinygrad

    def extras(self):
        return {"threads": self.threads, "tinygrad_device": self.device}

    # one function per layer kind: f(L, params, inputs, mask) -> y
    def conv2d(self, L, p, xs, m):
        return xs[0].conv2d(p[0], p[1], stride=L.s, padding=(L.p[1], L.p[1], L.p[0], L.p[0]))

    def maxpool(self, L, p, xs, m):
        x = xs[0]
        if L.p != (0, 0):
            x = x.pad((L.p[1], L.p[1], L.p[0], L.p[0]), value=float("-inf"))
        return x.max_pool2d(L.k, stride=L.s)

    def avgpool(self, L, p, xs, m):   # padded positions out of the count, as native
        return xs[0].avg_pool2d(L.k, stride=L.s, padding=L.p, count_include_pad=False)

    def global_avgpool(self, L, p, xs, m):
        return xs[0].mean(axis=(2, 3), keepdim=True)

    def batchnorm(self, L, p, xs, m):
        """Training: the batch's mean and biased variance normalise, the running ones move towards the mean and
        the unbiased variance (their assigns join self.updates, realised with the step)."""
        x = xs[0]
        rm, rv = self.stats[L.i]
        if not self.training:
            return x.batchnorm(p[0], p[1], rm, (rv + L.eps).rsqrt())
        axes = tuple(a for a in range(x.ndim) if a != 1)
        shape = [1, -1] + [1] * (x.ndim - 2)
        mean = x.mean(axis=axes)
        var = (x - mean.detach().reshape(shape)).square().mean(axis=axes)   # d(var)/d(mean) = 0
        n = x.numel() // x.shape[1]
        self.updates += [rm.assign(self.running(rm, mean.detach(), L.momentum)),
                         rv.assign(self.running(rv, var.detach() * (n / (n - 1.0)), L.momentum))]
        return x.batchnorm(p[0], p[1], mean, (var + L.eps).rsqrt())

    def dense(self, L, p, xs, m):
        y = xs[0] @ p[0].T
        return y if p[1] is None else y + p[1]

    def relu(self, L, p, xs, m):
        return xs[0].relu()

    def flatten(self, L, p, xs, m):
        return xs[0].reshape(xs[0].shape[0], -1)

    def concat(self, L, p, xs, m):
        return xs[0].cat(*xs[1:], dim=1)

    def embedding(self, L, p, xs, m):   # float-held ids [n][T][1][1] (or the range [lo, hi) of them) -> [n][T][1][E]
        from tinygrad import dtypes
        n = xs[0].shape[0]
        ids = xs[0].reshape(n, -1)
        if L.range:
            ids = ids[:, L.range[0]:L.range[1]]
        ids = ids.cast(dtypes.int32)
        # tinygrad's nn.Embedding lookup: a one-hot compare against arange, which its scheduler turns into a load
        y = (self.Tensor.arange(L.vocab) == ids.unsqueeze(-1)).unsqueeze(-1).where(p[0], 0).sum(-2)
        return y.reshape(n, L.out_shape[0], 1, L.units)

    def repeat_vector(self, L, p, xs, m):   # Keras RepeatVector: [n][C] -> [n][T][1][C]
        n = xs[0].shape[0]
        return xs[0].reshape(n, 1, 1, -1).expand(n, L.times, 1, L.out_shape[2])

    # the hooks of runner_common.LayerModel.gru (GRU and LSTM): the loop over the steps in tinygrad Tensor ops
    def rnn_reshape(self, x, shape):
        return x.reshape(shape)

    def rnn_linear(self, x, w):
        return x @ w.T

    def rnn_unstack(self, x, axis):
        return [t.squeeze(axis) for t in x.split(1, dim=axis)]

    def rnn_stack(self, xs, axis):
        return xs[0].stack(*xs[1:], dim=axis)

    def rnn_sigmoid(self, x):
        return x.sigmoid()

    def rnn_tanh(self, x):
        return x.tanh()

    def per_example(self, z, t):
        if self.loss == "sigmoid_binary_cross_entropy":   # the mean over classes
            return z.binary_crossentropy_logits(t, reduction="none").mean(axis=1)
        return z.sparse_categorical_crossentropy(t, reduction="none")

    def build(self, layers, params, opt, batch):
        Tensor = self.Tensor
        realized = lambda a: Tensor(np.array(a)).contiguous().realize()  # noqa: E731
        self.build_layers(layers, params, opt, lambda a, L, role: realized(a),
                          lambda v: Tensor.zeros(*v.shape).contiguous().realize(), lambda a, L, name: realized(a))
        self.fwd = self.TinyJit(lambda x: self._forward(x, None).realize())
        if opt is None:
            return

        def step(x, t, bc, *masks):
            self.updates = []
            lv = self.per_example(self._forward(x, masks), t)
            grads = lv.mean().gradient(*self.vars)
            outs = []
            for k, (v, g) in enumerate(zip(self.vars, grads)):
                pn, a, b = opt.update(v.detach(), g, self.s0[k], self.s1[k], (bc[0], bc[1]), lambda t: t.sqrt())
                outs += [v.assign(pn), self.s0[k].assign(a), self.s1[k].assign(b)]
            s = lv.sum()
            Tensor.realize(s, *outs, *self.updates)
            return s
        self.step = self.TinyJit(step)

    def forward(self, x):
        if len(x) != getattr(self, "fwd_n", len(x)):
            return self._forward(self.Tensor(x), None).numpy()   # another batch size than the jitted one
        self.fwd_n = len(x)
        return self.fwd(self.Tensor(x)).numpy()

    def train_step(self, x, y, masks, t):
        Tensor = self.Tensor
        bc = self.opt.corrections(t) if self.opt.name == "adam" else (1.0, 1.0)
        s = self.step(Tensor(x), Tensor(self.targets(y)), Tensor(np.asarray(bc, np.float32)),
                      *[Tensor(m) for m in masks])
        return float(s.item())


if __name__ == "__main__":
    rc.main(Tinygrad, "showdown runner for tinygrad (workloads/runners/PROTOCOL.md)")
