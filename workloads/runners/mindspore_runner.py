#!/usr/bin/env python3
"""mindspore_runner -- the showdown runner protocol (PROTOCOL.md) for MindSpore (PyNative mode, CPU).

NCHW as the native engine (mindspore.ops conv2d / max_pool2d / dense, dense weight [out][in]), so the native
weights load unchanged. Gradients by mindspore.value_and_grad over the Parameters; the spec's optimizer
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

    # one function per layer kind: f(L, params, x, mask) -> y
    def conv2d(self, L, p, x, m):
        if L.p != (0, 0):
            return self.ops.conv2d(x, p[0], p[1], stride=L.s, pad_mode="pad", padding=L.p)
        return self.ops.conv2d(x, p[0], p[1], stride=L.s, pad_mode="valid")

    def maxpool(self, L, p, x, m):
        return self.ops.max_pool2d(x, L.k, stride=L.s, padding=L.p)

    def dense(self, L, p, x, m):
        return self.ops.dense(x, p[0], p[1])

    def relu(self, L, p, x, m):
        return self.ops.relu(x)

    def flatten(self, L, p, x, m):
        return self.ops.reshape(x, (x.shape[0], -1))

    def build(self, layers, params, opt, batch):
        ms, ops = self.ms, self.ops
        self.build_layers(layers, params, opt, lambda a, L, role: ms.Parameter(ms.Tensor(a), name="%s%d" % (role, L.i)),
                          ops.zeros_like)

        def loss_fn(x, y, *masks):
            z = self._forward(x, masks)
            lv = ops.cross_entropy(z, y, reduction="none")
            return lv.mean(), lv.sum()
        self.grad_fn = ms.value_and_grad(loss_fn, None, self.vars, has_aux=True)

    def forward(self, x):
        return self._forward(self.ms.Tensor(x), None).asnumpy()

    def train_step(self, x, y, masks, t):
        ms = self.ms
        (_, lsum), grads = self.grad_fn(ms.Tensor(x), ms.Tensor(y.astype(np.int32)), *[ms.Tensor(m) for m in masks])
        bc = self.opt.corrections(t) if self.opt.name == "adam" else (1.0, 1.0)
        for k, v in enumerate(self.vars):
            pn, self.s0[k], self.s1[k] = self.opt.update(v.value(), grads[k], self.s0[k], self.s1[k], bc, self.ops.sqrt)
            v.set_data(pn)
        return float(lsum.asnumpy())


if __name__ == "__main__":
    rc.main(MindSpore, "showdown runner for MindSpore (workloads/runners/PROTOCOL.md)")
