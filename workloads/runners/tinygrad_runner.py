#!/usr/bin/env python3
"""tinygrad_runner -- the showdown runner protocol (PROTOCOL.md) for tinygrad (lazy tensors compiled to C for the
CPU device; the training step under TinyJit).

NCHW as the native engine (Tensor.conv2d / max_pool2d, x @ W.T for dense), so the native weights load unchanged;
the spec's optimizer (runner_common.Optimizer) on tinygrad tensors, realised with assign inside the jitted step.
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

    # one function per layer kind: f(L, params, x, mask) -> y
    def conv2d(self, L, p, x, m):
        return x.conv2d(p[0], p[1], stride=L.s, padding=(L.p[1], L.p[1], L.p[0], L.p[0]))

    def maxpool(self, L, p, x, m):
        if L.p != (0, 0):
            x = x.pad((L.p[1], L.p[1], L.p[0], L.p[0]), value=float("-inf"))
        return x.max_pool2d(L.k, stride=L.s)

    def dense(self, L, p, x, m):
        y = x @ p[0].T
        return y if p[1] is None else y + p[1]

    def relu(self, L, p, x, m):
        return x.relu()

    def flatten(self, L, p, x, m):
        return x.reshape(x.shape[0], -1)

    def build(self, layers, params, opt, batch):
        Tensor = self.Tensor
        self.build_layers(layers, params, opt, lambda a, L, role: Tensor(np.array(a)).contiguous().realize(),
                          lambda v: Tensor.zeros(*v.shape).contiguous().realize())

        def step(x, y, bc, *masks):
            z = self._forward(x, masks)
            lv = z.sparse_categorical_crossentropy(y, reduction="none")
            grads = lv.mean().gradient(*self.vars)
            outs = []
            for k, (v, g) in enumerate(zip(self.vars, grads)):
                pn, a, b = opt.update(v.detach(), g, self.s0[k], self.s1[k], (bc[0], bc[1]), lambda t: t.sqrt())
                outs += [v.assign(pn), self.s0[k].assign(a), self.s1[k].assign(b)]
            s = lv.sum()
            Tensor.realize(s, *outs)
            return s
        self.step = self.TinyJit(step)
        self.fwd = self.TinyJit(lambda x: self._forward(x, None).realize())

    def forward(self, x):
        if len(x) != getattr(self, "fwd_n", len(x)):
            return self._forward(self.Tensor(x), None).numpy()   # another batch size than the jitted one
        self.fwd_n = len(x)
        return self.fwd(self.Tensor(x)).numpy()

    def train_step(self, x, y, masks, t):
        Tensor = self.Tensor
        bc = self.opt.corrections(t) if self.opt.name == "adam" else (1.0, 1.0)
        s = self.step(Tensor(x), Tensor(y.astype(np.int32)), Tensor(np.asarray(bc, np.float32)),
                      *[Tensor(m) for m in masks])
        return float(s.item())


if __name__ == "__main__":
    rc.main(Tinygrad, "showdown runner for tinygrad (workloads/runners/PROTOCOL.md)")
