#!/usr/bin/env python3
"""chainer_runner -- the showdown runner protocol (PROTOCOL.md) for Chainer (define-by-run on NumPy, CPU).

NCHW as the native engine (chainer.functions convolution_2d / max_pooling_2d with cover_all=False / linear,
W [out][in]), so the native weights load unchanged; the spec's optimizer runs on the NumPy arrays in place.
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

    # one function per layer kind: f(L, params, x, mask) -> y
    def conv2d(self, L, p, x, m):
        return self.F.convolution_2d(x, p[0], p[1], stride=L.s, pad=L.p)

    def maxpool(self, L, p, x, m):
        return self.F.max_pooling_2d(x, L.k, stride=L.s, pad=L.p, cover_all=False)

    def dense(self, L, p, x, m):
        return self.F.linear(x, p[0], p[1])

    def relu(self, L, p, x, m):
        return self.F.relu(x)

    def flatten(self, L, p, x, m):
        return self.F.reshape(x, (x.shape[0], -1))

    def build(self, layers, params, opt, batch):
        chainer = self.chainer
        self.build_layers(layers, params, opt, lambda a, L, role: chainer.Parameter(np.array(a)),
                          lambda v: np.zeros_like(v.array))

    def forward(self, x):
        with self.chainer.using_config("train", False), self.chainer.no_backprop_mode():
            return self._forward(x, None).array

    def train_step(self, x, y, masks, t):
        with self.chainer.using_config("train", True):
            z = self._forward(x, masks)
            lv = self.F.softmax_cross_entropy(z, y.astype(np.int32), reduce="no")
            self.F.mean(lv).backward()
        bc = self.opt.corrections(t) if self.opt.name == "adam" else (1.0, 1.0)
        for k, v in enumerate(self.vars):
            pn, self.s0[k], self.s1[k] = self.opt.update(v.array, v.grad, self.s0[k], self.s1[k], bc, np.sqrt)
            v.array[...] = pn
            v.cleargrad()
        return float(lv.array.sum())


if __name__ == "__main__":
    rc.main(Chainer, "showdown runner for Chainer (workloads/runners/PROTOCOL.md)")
