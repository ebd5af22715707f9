#!/usr/bin/env python3
"""paddle_runner -- the showdown runner protocol (PROTOCOL.md) for PaddlePaddle (dynamic graph, CPU).

NCHW as the native engine (paddle.nn.functional conv2d / max_pool2d / linear); Paddle's linear weight is
[in][out], so dense weights are transposed. Parameters are Paddle tensors with gradients; after backward the
spec's optimizer (runner_common.Optimizer) runs on Paddle tensors under no_grad.
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

    # one function per layer kind: f(L, params, x, mask) -> y
    def conv2d(self, L, p, x, m):
        return self.F.conv2d(x, p[0], p[1], stride=L.s, padding=L.p)

    def maxpool(self, L, p, x, m):
        return self.F.max_pool2d(x, L.k, stride=L.s, padding=L.p)

    def dense(self, L, p, x, m):
        return self.F.linear(x, p[0], p[1])

    def relu(self, L, p, x, m):
        return self.F.relu(x)

    def flatten(self, L, p, x, m):
        return self.paddle.reshape(x, [x.shape[0], -1])

    def build(self, layers, params, opt, batch):
        paddle = self.paddle

        def param(a, L, role):   # Paddle's linear weight is [in][out]
            a = a.T if role == "w" and L.op != "conv2d" else a
            return paddle.to_tensor(np.ascontiguousarray(a), dtype="float32", stop_gradient=False)
        self.build_layers(layers, params, opt, param, paddle.zeros_like)

    def forward(self, x):
        with self.paddle.no_grad():
            return self._forward(self.paddle.to_tensor(x), None).numpy()

    def train_step(self, x, y, masks, t):
        paddle = self.paddle
        z = self._forward(paddle.to_tensor(x), [paddle.to_tensor(m) for m in masks])
        lv = self.F.cross_entropy(z, paddle.to_tensor(y), reduction="none")
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
