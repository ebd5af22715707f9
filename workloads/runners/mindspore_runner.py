#!/usr/bin/env python3
"""mindspore_runner -- the showdown runner protocol (PROTOCOL.md) for MindSpore (PyNative mode, CPU).

NCHW as the native engine (mindspore.ops conv2d / max_pool2d / avg_pool2d / batch_norm / dense, dense weight
[out][in]), so the native weights load unchanged; graph layers (add, concat) as the plan connects them; batch norm's
running statistics are Parameters that ops.batch_norm moves as the native engine does (momentum, the unbiased
variance); embedding (ops.gather), repeat_vector, LSTM as MindSpore's fused ops.LSTM and GRU as
runner_common.LayerModel's loop over the steps, each step a mindspore.jit graph. Gradients by mindspore.value_and_grad over the Parameters; the spec's optimizer
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

    def lstm(self, L, p, xs, m):
        """MindSpore's fused LSTM (ops.LSTM, what nn.LSTM runs on CPU: oneDNN's, gates i,f,g,o as cuDNN's, the two
        bias vectors summed), time-major; the loop of single ops was 1-10 ms an op in PyNative."""
        ops, ms, H = self.ops, self.ms, L.units
        wih, whh, bih, bhh = p
        n = xs[0].shape[0]
        x = ops.transpose(ops.reshape(xs[0], (-1, L.steps, L.features)), (1, 0, 2))
        if L.i not in self.fused:
            self.fused[L.i] = ops.LSTM(L.features, H, 1, True, False, 0.0)
        w = ops.concat((wih.view(-1, 1, 1), whh.view(-1, 1, 1), (bih + bhh).view(-1, 1, 1)))
        h0 = ops.zeros((1, x.shape[1], H), ms.float32)
        y = self.fused[L.i](x, h0, h0, w)[0]   # [steps][rows][units]
        if L.ret_seq:
            return ops.reshape(ops.transpose(y, (1, 0, 2)), (n,) + tuple(L.out_shape))
        return ops.reshape(y[-1], (n,) + tuple(L.out_shape)) if L.distributed else y[-1]

    def gru(self, L, p, xs, m):
        """runner_common.LayerModel.gru's GRU (gates r,z,n, n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))), its
        step a mindspore.jit graph (one launch a step, not 20 PyNative ops): MindSpore has no GRU kernel on CPU
        (DynamicGRUV2 is Ascend's; nn.GRU runs a loop of single ops there)."""
        ops, H = self.ops, L.units
        wih, whh, bih, bhh = p
        n = xs[0].shape[0]
        gx = ops.reshape(ops.dense(ops.reshape(xs[0], (-1, L.features)), wih, bih), (-1, L.steps, 3 * H))
        grz, gn = (ops.unbind(t, 1) for t in ops.split(gx, [2 * H, H], 2))
        if L.i not in self.fused:
            def step(g1, g2, h, whh, bhh):
                arz, an = ops.split(ops.dense(h, whh, bhh), [2 * H, H], -1)
                r, z = ops.split(ops.sigmoid(g1 + arz), H, -1)
                nh = ops.tanh(g2 + r * an)
                return nh + z * (h - nh)
            self.fused[L.i] = self.ms.jit(step)
        step = self.fused[L.i]
        h, hs = ops.zeros((gx.shape[0], H), self.ms.float32), []
        for t in range(L.steps):
            h = step(grz[t], gn[t], h, whh, bhh)
            if L.ret_seq:
                hs.append(h)
        if L.ret_seq:
            return ops.reshape(ops.stack(hs, 1), (n,) + tuple(L.out_shape))
        return ops.reshape(h, (n,) + tuple(L.out_shape)) if L.distributed else h

    def per_example(self, z, t):
        if self.loss == "sigmoid_binary_cross_entropy":   # the mean over classes
            return self.ops.binary_cross_entropy_with_logits(z, t, reduction="none").mean(axis=1)
        return self.ops.cross_entropy(z, t, reduction="none")

    def build(self, layers, params, opt, batch):
        ms, ops = self.ms, self.ops
        self.fused = {}
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
