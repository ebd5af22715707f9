#!/usr/bin/env python3
"""tensorflow_runner -- the showdown runner protocol (PROTOCOL.md) for plain TensorFlow 2 (tf.nn, tf.Variable,
tf.GradientTape, tf.function), without Keras (keras_runner.py runs Keras on TensorFlow).

NHWC, as TensorFlow's CPU kernels require: the input batch, the conv kernels (HWIO), the dense weights ([in][out],
rows reordered after a flatten) and the dropout masks are converted from the native layout (runner_common);
sequences (embedding, repeat_vector, GRU/LSTM outputs) keep the native [n][steps][1][features]. Builds every op
pytorch_runner does: graph layers with add/concat (the plan's inputs), batch norm (running statistics as
tf.Variables, updated as the native engine does), max/average/global-average pooling, embedding with a range,
repeat_vector, and GRU/LSTM in cuDNN's formulation over tf.scan.

Under --precision bf16 the training step does what Keras's mixed_bfloat16 policy does: it casts the fp32
variables, the input and the masks to bf16 inside the tape, so the forward pass computes in bf16 and the gradients
reach the fp32 variables through the casts; the loss, the optimizer and its state, batch norm's running statistics
and the inference forward (the equivalence check) stay fp32.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner_common as rc  # noqa: E402
import numpy as np  # noqa: E402


class TensorFlow:
    LOSSES = ("softmax_cross_entropy", "sigmoid_binary_cross_entropy", "none")
    BF16 = True   # bf16 compute in training, fp32 variables, optimizer state and loss (Keras's mixed policy)

    def __init__(self, a):
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
        import tensorflow as tf
        if a.threads > 0:
            tf.config.threading.set_intra_op_parallelism_threads(a.threads)
            tf.config.threading.set_inter_op_parallelism_threads(1)
        self.tf = tf
        self.name, self.version = "tensorflow", rc.dist_version("tensorflow-cpu", "tensorflow")
        self.device = "cpu"
        self.threads = a.threads
        self.bf16 = a.precision == "bf16"

    def extras(self):
        bi = self.tf.sysconfig.get_build_info()
        return {"threads": self.threads, "onednn": os.environ.get("TF_ENABLE_ONEDNN_OPTS", "default"),
                "cpu_build": not bi.get("is_cuda_build", False), "layout": "NHWC"}

    # one function per layer kind: f(L, params, inputs (list, plan order), mask) -> y. Maps are NHWC; sequences
    # ([n][steps][1][features], the output of embedding, repeat_vector and recurrent layers) stay in the native
    # order; self.seq[i] says which layer outputs are sequences
    def _cax(self, L):
        """The channel axis of layer L's (first) input: the last of an NHWC map, 1 of a flat tensor or a sequence."""
        return 1 if self.seq_in[L.i] or self.flat_in[L.i] else 3

    def conv2d(self, L, p, xs, m):
        pad = [[0, 0], [L.p[0], L.p[0]], [L.p[1], L.p[1]], [0, 0]] if L.p != (0, 0) else "VALID"
        y = self.tf.nn.conv2d(xs[0], p[0], (1,) + L.s + (1,), pad)
        return y if p[1] is None else self.tf.nn.bias_add(y, p[1])

    def _pad(self, L, x, value):
        if L.p == (0, 0):
            return x
        return self.tf.pad(x, [[0, 0], [L.p[0], L.p[0]], [L.p[1], L.p[1]], [0, 0]], constant_values=value)

    def maxpool(self, L, p, xs, m):
        return self.tf.nn.max_pool2d(self._pad(L, xs[0], -np.inf), L.k, L.s, "VALID")

    def avgpool(self, L, p, xs, m):   # the native average leaves padded positions out of the count
        tf, x = self.tf, xs[0]
        if L.p == (0, 0):
            return tf.nn.avg_pool2d(x, L.k, L.s, "VALID")
        area = float(L.k[0] * L.k[1])
        s = tf.nn.avg_pool2d(self._pad(L, x, 0.0), L.k, L.s, "VALID") * area
        ones = self._pad(L, tf.ones_like(x[:1, :, :, :1]), 0.0)
        return s / (tf.nn.avg_pool2d(ones, L.k, L.s, "VALID") * area)

    def global_avgpool(self, L, p, xs, m):
        return self.tf.reduce_mean(xs[0], axis=[1, 2], keepdims=True)

    def batchnorm(self, L, p, xs, m):
        """gamma, beta = p; running mean and variance in self.stats[i]. Training: the batch mean and biased
        variance normalise, the running ones move by momentum towards the mean and the unbiased variance
        (host_ops.c nn_host_batchnorm_forward); otherwise the running ones normalise."""
        tf, x = self.tf, xs[0]
        c = self._cax(L) if len(x.shape) == 4 else 1
        axes = [a for a in range(len(x.shape)) if a != c]
        shape = [1] * len(x.shape)
        shape[c] = -1
        rm, rv = self.stats[L.i]
        if self.training:
            mean = tf.reduce_mean(x, axis=axes)
            var = tf.reduce_mean(tf.square(x - tf.reshape(mean, shape)), axis=axes)
            cnt = tf.cast(tf.size(x) // tf.shape(x)[c], tf.float32)
            unbiased = tf.cast(var, tf.float32) * cnt / tf.maximum(cnt - 1.0, 1.0)   # the statistics stay fp32
            mom = L.momentum
            rm.assign((1.0 - mom) * rm + mom * tf.stop_gradient(tf.cast(mean, tf.float32)))
            rv.assign((1.0 - mom) * rv + mom * tf.stop_gradient(unbiased))
        else:   # in the compute dtype (bf16 under --precision bf16)
            mean, var = tf.cast(rm, x.dtype), tf.cast(rv, x.dtype)
        sc = p[0] / tf.sqrt(var + L.eps)
        return (x - tf.reshape(mean, shape)) * tf.reshape(sc, shape) + tf.reshape(p[1], shape)

    def dense(self, L, p, xs, m):
        y = self.tf.matmul(xs[0], p[0])
        return y if p[1] is None else y + p[1]

    def relu(self, L, p, xs, m):
        return self.tf.nn.relu(xs[0])

    def flatten(self, L, p, xs, m):
        return self.tf.reshape(xs[0], (self.tf.shape(xs[0])[0], -1))

    def dropout(self, L, p, xs, m):
        return xs[0] if m is None else xs[0] * m

    def add(self, L, p, xs, m):
        return self.tf.add_n(xs)

    def concat(self, L, p, xs, m):
        return self.tf.concat(xs, axis=self._cax(L))

    def embedding(self, L, p, xs, m):   # float-held ids (or the range [lo, hi) of them) -> [n][T][1][E]
        tf = self.tf
        n = tf.shape(xs[0])[0]
        ids = tf.reshape(xs[0], (n, -1))
        if L.range:
            ids = ids[:, L.range[0]:L.range[1]]
        return tf.reshape(tf.gather(p[0], tf.cast(ids, tf.int32)), (n, L.out_shape[0], 1, L.units))

    def repeat_vector(self, L, p, xs, m):   # Keras RepeatVector: [n][C] -> [n][T][1][C]
        tf = self.tf
        x = tf.reshape(xs[0], (tf.shape(xs[0])[0], 1, 1, -1))
        return tf.tile(x, [1, L.times, 1, 1])

    def gru(self, L, p, xs, m):
        """cuDNN's (PyTorch's) GRU/LSTM over tf.scan: input viewed as [-1][steps][features] (time_distributed:
        every row its own sequence), zero initial state; gates r,z,n (n = tanh(x_n + r * (h W_hn + b_hn))) or
        i,f,g,o; output every step's h ([steps][1][units]) or the last one's ([units]; per row when distributed)."""
        tf = self.tf
        wih, whh, bih, bhh = p
        H = L.units
        n = tf.shape(xs[0])[0]
        seq = tf.reshape(xs[0], (-1, L.steps, L.features))
        rows = tf.shape(seq)[0]
        gx = tf.einsum("rtf,gf->trg", seq, wih) + bih   # [steps][rows][G*H]: the input part, every step at once
        h0 = tf.zeros((rows, H), seq.dtype)
        sig = tf.sigmoid
        if L.op == "lstm":
            def cell(hc, g):
                h, c = hc
                a = g + tf.matmul(h, whh, transpose_b=True) + bhh
                c = sig(a[:, H:2 * H]) * c + sig(a[:, :H]) * tf.tanh(a[:, 2 * H:3 * H])
                return sig(a[:, 3 * H:]) * tf.tanh(c), c
            hs = tf.scan(cell, gx, initializer=(h0, h0))[0]
        else:
            def cell(h, g):
                a = tf.matmul(h, whh, transpose_b=True) + bhh
                r = sig(g[:, :H] + a[:, :H])
                z = sig(g[:, H:2 * H] + a[:, H:2 * H])
                c = tf.tanh(g[:, 2 * H:] + r * a[:, 2 * H:])
                return (1.0 - z) * c + z * h
            hs = tf.scan(cell, gx, initializer=h0)
        out = L.out_shape if L.ret_seq or L.distributed else (L.units,)
        y = tf.transpose(hs, (1, 0, 2)) if L.ret_seq else hs[-1]
        return tf.reshape(y, (n,) + tuple(out))

    lstm = gru

    def build(self, layers, params, opt, batch):
        tf = self.tf
        self.layers, self.opt = layers, opt
        self.seq_in, self.flat_in = rc.layouts(layers)
        fns = []
        for L in layers:
            f = getattr(self, L.op, None)
            if f is None:
                raise rc.Unsupported(L.op)
            fns.append(f)
        self.vars, self.p, self.stats = [], {}, {}
        for L in layers:
            if L.i not in params:
                continue
            t = list(params[L.i])
            if L.op == "conv2d":
                t[0] = rc.conv_hwio(t[0])
            elif L.op == "dense":   # rows in NHWC order after the flatten of a map
                t[0] = rc.dense_in_out(t[0], L, not self.seq_in[L.i])
            pv = tuple(None if a is None else tf.Variable(a) for a in t)
            self.p[L.i] = pv
            self.vars += [v for v in pv if v is not None]
            if L.op == "batchnorm":   # running mean 0 and variance 1, as native's and torch's
                c = L.in_shape[0]
                self.stats[L.i] = (tf.Variable(tf.zeros(c), trainable=False), tf.Variable(tf.ones(c), trainable=False))
        self.s0 = [tf.Variable(tf.zeros_like(v)) for v in self.vars]
        self.s1 = [tf.Variable(tf.zeros_like(v)) for v in self.vars]
        self.drops = [L for L in layers if L.op == "dropout" and L.rate > 0]
        drop_ids = [L.i for L in self.drops]
        self.training = False

        # embedding ids are held as floats: bf16 would round ids above 256, so such an input stays fp32
        cast_x = not any(L.op == "embedding" for L in layers)

        def forward(x, masks, training, dt=None):
            """The layers in plan order; layer i reads the outputs of its inputs (-1: the model input).
            dt: the compute dtype the parameters, input and masks are cast to (None: as held, fp32)."""
            self.training = training   # read while tracing (batchnorm)
            mk = dict(zip(drop_ids, masks)) if masks is not None else {}
            p = self.p
            if dt is not None:
                p = {i: tuple(None if v is None else tf.cast(v, dt) for v in t) for i, t in p.items()}
                mk = {i: tf.cast(m, dt) if m.dtype.is_floating else m for i, m in mk.items()}   # tf_perf: seeds
                x = tf.cast(x, dt) if cast_x else x
            outs = []
            for L, f in zip(layers, fns):
                outs.append(f(L, p.get(L.i), [x if j < 0 else outs[j] for j in L.inputs], mk.get(L.i)))
            return outs[-1] if dt is None else tf.cast(outs[-1], tf.float32)

        def per_example(z, y):
            if self.loss == "sigmoid_binary_cross_entropy":   # mean over classes against one-hot targets
                t = tf.one_hot(y, tf.shape(z)[1], dtype=z.dtype)
                return tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=t, logits=z), axis=1)
            return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=z)

        @tf.function
        def step(x, y, masks, bc):
            with tf.GradientTape() as tape:
                lv = per_example(forward(x, masks, True, tf.bfloat16 if self.bf16 else None), y)
                loss = tf.reduce_mean(lv)
            grads = tape.gradient(loss, self.vars)
            for v, g, a, b in zip(self.vars, grads, self.s0, self.s1):
                g = tf.convert_to_tensor(g)   # an embedding's gradient comes as IndexedSlices: dense, as native's
                pn, an, bn = opt.update(v, g, a, b, (bc[0], bc[1]), tf.sqrt)
                v.assign(pn)
                a.assign(an)
                b.assign(bn)
            return tf.reduce_sum(lv)

        self.step = step
        self.fwd = tf.function(lambda x: forward(x, None, False))
        # the inference forward in bf16 (scripts/tf_perf.py times it under bf16; the runner's forward is fp32)
        self.fwd16 = tf.function(lambda x: forward(x, None, False, tf.bfloat16))

    def parameters(self):
        return sum(int(np.prod(v.shape)) for v in self.vars)

    def forward(self, x):
        return self.fwd(rc.to_nhwc(x, None)).numpy()

    def train_step(self, x, y, masks, t):
        bc = self.opt.corrections(t) if self.opt.name == "adam" else (1.0, 1.0)
        masks = [m if self.seq_in[L.i] else rc.to_nhwc(m, L) for m, L in zip(masks, self.drops)]
        return float(self.step(rc.to_nhwc(x, None), y.astype(np.int32), masks, np.asarray(bc, np.float32)))


if __name__ == "__main__":
    rc.main(TensorFlow, "showdown runner for TensorFlow (workloads/runners/PROTOCOL.md)")
