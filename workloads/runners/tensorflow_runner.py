#!/usr/bin/env python3
"""tensorflow_runner -- the showdown runner protocol (PROTOCOL.md) for plain TensorFlow 2 (tf.nn, tf.Variable,
tf.GradientTape, tf.function), without Keras (keras_runner.py runs Keras on TensorFlow).

NHWC, as TensorFlow's CPU kernels require: the input batch, the conv kernels (HWIO), the dense weights ([in][out],
rows reordered after a flatten) and the dropout masks are converted from the native layout (runner_common).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner_common as rc  # noqa: E402
import numpy as np  # noqa: E402


class TensorFlow:
    def __init__(self, a):
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
        import tensorflow as tf
        if a.threads > 0:
            tf.config.threading.set_intra_op_parallelism_threads(a.threads)
            tf.config.threading.set_inter_op_parallelism_threads(1)
        self.tf = tf
        self.name, self.version = "tensorflow", tf.__version__
        self.device = "cpu"
        self.threads = a.threads

    def extras(self):
        bi = self.tf.sysconfig.get_build_info()
        return {"threads": self.threads, "onednn": os.environ.get("TF_ENABLE_ONEDNN_OPTS", "default"),
                "cpu_build": not bi.get("is_cuda_build", False), "layout": "NHWC"}

    # one function per layer kind: f(L, params, x, mask) -> y
    def conv2d(self, L, p, x, m):
        pad = [[0, 0], [L.p[0], L.p[0]], [L.p[1], L.p[1]], [0, 0]] if L.p != (0, 0) else "VALID"
        y = self.tf.nn.conv2d(x, p[0], (1,) + L.s + (1,), pad)
        return y if p[1] is None else self.tf.nn.bias_add(y, p[1])

    def maxpool(self, L, p, x, m):
        if L.p != (0, 0):
            x = self.tf.pad(x, [[0, 0], [L.p[0], L.p[0]], [L.p[1], L.p[1]], [0, 0]], constant_values=-np.inf)
        return self.tf.nn.max_pool2d(x, L.k, L.s, "VALID")

    def dense(self, L, p, x, m):
        y = self.tf.matmul(x, p[0])
        return y if p[1] is None else y + p[1]

    def relu(self, L, p, x, m):
        return self.tf.nn.relu(x)

    def flatten(self, L, p, x, m):
        return self.tf.reshape(x, (self.tf.shape(x)[0], -1))

    def dropout(self, L, p, x, m):
        return x if m is None else x * m

    def build(self, layers, params, opt, batch):
        tf = self.tf
        self.layers, self.opt = layers, opt
        fns = []
        for L in layers:
            f = getattr(self, L.op, None)
            if f is None:
                raise rc.Unsupported(L.op)
            fns.append(f)
        self.vars, self.p = [], {}
        for L in layers:
            if L.i in params:
                W, b = params[L.i]
                W = rc.conv_hwio(W) if L.op == "conv2d" else rc.dense_in_out(W, L, True)
                pv = (tf.Variable(W), None if b is None else tf.Variable(b))
                self.p[L.i] = pv
                self.vars += [v for v in pv if v is not None]
        self.s0 = [tf.Variable(tf.zeros_like(v)) for v in self.vars]
        self.s1 = [tf.Variable(tf.zeros_like(v)) for v in self.vars]
        self.drops = [L for L in layers if L.op == "dropout" and L.rate > 0]
        drop_ids = [L.i for L in self.drops]

        def forward(x, masks):
            mk = dict(zip(drop_ids, masks)) if masks is not None else {}
            for L, f in zip(layers, fns):
                x = f(L, self.p.get(L.i), x, mk.get(L.i))
            return x

        @tf.function
        def step(x, y, masks, bc):
            with tf.GradientTape() as tape:
                z = forward(x, masks)
                lv = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=z)
                loss = tf.reduce_mean(lv)
            grads = tape.gradient(loss, self.vars)
            for v, g, a, b in zip(self.vars, grads, self.s0, self.s1):
                pn, an, bn = opt.update(v, g, a, b, (bc[0], bc[1]), tf.sqrt)
                v.assign(pn)
                a.assign(an)
                b.assign(bn)
            return tf.reduce_sum(lv)

        self.step = step
        self.fwd = tf.function(lambda x: forward(x, None))

    def parameters(self):
        return sum(int(np.prod(v.shape)) for v in self.vars)

    def forward(self, x):
        return self.fwd(rc.to_nhwc(x, None)).numpy()

    def train_step(self, x, y, masks, t):
        bc = self.opt.corrections(t) if self.opt.name == "adam" else (1.0, 1.0)
        masks = [rc.to_nhwc(m, L) for m, L in zip(masks, self.drops)]
        return float(self.step(rc.to_nhwc(x, None), y.astype(np.int32), masks, np.asarray(bc, np.float32)))


if __name__ == "__main__":
    rc.main(TensorFlow, "showdown runner for TensorFlow (workloads/runners/PROTOCOL.md)")
