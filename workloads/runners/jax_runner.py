#!/usr/bin/env python3
"""jax_runner -- the showdown runner protocol (PROTOCOL.md) for plain JAX (jax.lax, jax.numpy, jit).

Builds any workload of showdown's layer plan, as pytorch_runner does: graph layers with add/concat connections
(the plan's `inputs`, walked in plan order), batch norm (batch statistics in training, the running ones, updated as
the native engine does, otherwise), max/average/global-average pooling, embedding (a range of the input),
repeat_vector, and GRU/LSTM in cuDNN's formulation with lax.scan. NCHW throughout (lax.conv_general_dilated with
OIHW kernels), so the native weights load unchanged; `nhwc = True` before build() runs the convolutions, pools,
batch norm and concat channels-last instead (scripts/jax_perf.py; the caller converts weights and input). One
jitted function per training step: forward, value_and_grad, and the spec's optimizer (runner_common.Optimizer).
Under --precision bf16 the training forward computes in bf16 (parameters, input and masks cast at the step's
start; the gradients flow back through the casts to the fp32 parameters) and the loss in fp32; the optimizer, its
state, batch norm's running statistics and the inference forward (the equivalence check) stay fp32.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner_common as rc  # noqa: E402
import numpy as np  # noqa: E402


class Jax:
    LOSSES = ("softmax_cross_entropy", "sigmoid_binary_cross_entropy", "none")
    BF16 = True   # bf16 compute in training, fp32 parameters, optimizer state and loss

    def __init__(self, a):
        if a.threads > 0:
            os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=%s intra_op_parallelism_threads=%d"
                                  % ("true" if a.threads > 1 else "false", a.threads))
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax
        import jax.numpy as jnp
        from jax import lax
        self.jax, self.jnp, self.lax = jax, jnp, lax
        self.name, self.version = "jax", rc.dist_version("jax")
        self.device = "cpu (%s)" % jax.devices()[0].device_kind
        self.threads = a.threads
        self.nhwc = False
        self.bf16 = a.precision == "bf16"

    def extras(self):
        import jaxlib
        return {"jaxlib": jaxlib.__version__, "backend": self.jax.default_backend(), "threads": self.threads}

    # layout helpers: the channel axis of a map, and a window (kernel, stride, padding) over its spatial axes
    def _cax(self, x):
        return (3 if self.nhwc else 1) if x.ndim == 4 else 1

    def _win(self, v, fill):
        return ((fill,) + tuple(v) + (fill,)) if self.nhwc else ((fill, fill) + tuple(v))

    def _pads(self, L):
        sp = [(L.p[0], L.p[0]), (L.p[1], L.p[1])]
        return [(0, 0)] + sp + [(0, 0)] if self.nhwc else [(0, 0), (0, 0)] + sp

    # one function per layer kind: f(L, params of L, inputs (list, plan order), dropout mask or None) -> y;
    # batchnorm alone also reads and returns its running statistics (see _forward)
    def conv2d(self, L, p, xs, m):
        dn = ("NHWC", "HWIO", "NHWC") if self.nhwc else ("NCHW", "OIHW", "NCHW")
        y = self.lax.conv_general_dilated(xs[0], p[0], L.s, [(L.p[0], L.p[0]), (L.p[1], L.p[1])],
                                          dimension_numbers=dn)
        if p[1] is None:
            return y
        return y + (p[1] if self.nhwc else p[1][None, :, None, None])

    def maxpool(self, L, p, xs, m):
        return self.lax.reduce_window(xs[0], -self.jnp.inf, self.lax.max, self._win(L.k, 1), self._win(L.s, 1),
                                      self._pads(L))

    def avgpool(self, L, p, xs, m):   # the native average leaves padded positions out of the count
        lax, x = self.lax, xs[0]
        win, st, pads = self._win(L.k, 1), self._win(L.s, 1), self._pads(L)
        s = lax.reduce_window(x, 0.0, lax.add, win, st, pads)
        if L.p == (0, 0):
            return s / float(L.k[0] * L.k[1])
        ones = self.jnp.ones((1,) + x.shape[1:], x.dtype)
        return s / lax.reduce_window(ones, 0.0, lax.add, win, st, pads)

    def global_avgpool(self, L, p, xs, m):
        return xs[0].mean(axis=(1, 2) if self.nhwc else (2, 3), keepdims=True)

    def batchnorm(self, L, p, xs, m, stats, train):
        """gamma, beta = p; stats = (running mean, running variance). Training: the batch mean and biased
        variance normalise, the running ones move by momentum towards the mean and the unbiased variance
        (host_ops.c nn_host_batchnorm_forward); otherwise the running ones normalise."""
        jnp, x = self.jnp, xs[0]
        c = self._cax(x)
        axes = tuple(a for a in range(x.ndim) if a != c)
        shape = [1] * x.ndim
        shape[c] = x.shape[c]
        if train:
            mean = x.mean(axis=axes)
            var = jnp.square(x - mean.reshape(shape)).mean(axis=axes)
            cnt = x.size // x.shape[c]
            unbiased = var * (cnt / (cnt - 1.0)) if cnt > 1 else var
            mom = L.momentum
            stats = ((1.0 - mom) * stats[0] + mom * self.lax.stop_gradient(mean),
                     (1.0 - mom) * stats[1] + mom * self.lax.stop_gradient(unbiased))
        else:   # in the compute dtype (bf16 under --precision bf16)
            mean, var = (s.astype(x.dtype) for s in stats)
        sc = p[0] / jnp.sqrt(var + L.eps)
        return (x - mean.reshape(shape)) * sc.reshape(shape) + p[1].reshape(shape), stats

    def dense(self, L, p, xs, m):
        y = xs[0] @ p[0].T
        return y if p[1] is None else y + p[1]

    def relu(self, L, p, xs, m):
        return self.jnp.maximum(xs[0], 0.0)

    def flatten(self, L, p, xs, m):
        return xs[0].reshape(xs[0].shape[0], -1)

    def dropout(self, L, p, xs, m):   # the native mask (runner_common.Masks), training only
        return xs[0] if m is None else xs[0] * m.reshape(xs[0].shape)

    def add(self, L, p, xs, m):
        return sum(xs[1:], xs[0])

    def concat(self, L, p, xs, m):
        return self.jnp.concatenate(xs, axis=self._cax(xs[0]))

    def embedding(self, L, p, xs, m):   # float-held ids [n][T][1][1] (or the range [lo, hi) of them) -> [n][T][1][E]
        n = xs[0].shape[0]
        ids = xs[0].reshape(n, -1)
        if L.range:
            ids = ids[:, L.range[0]:L.range[1]]
        return self.jnp.take(p[0], ids.astype(self.jnp.int32), axis=0).reshape(n, ids.shape[1], 1, -1)

    def repeat_vector(self, L, p, xs, m):   # Keras RepeatVector: [n][C] -> [n][T][1][C]
        x = xs[0].reshape(xs[0].shape[0], 1, 1, -1)
        return self.jnp.broadcast_to(x, (x.shape[0], L.times, 1, x.shape[3]))

    def gru(self, L, p, xs, m):
        """cuDNN's (PyTorch's) GRU/LSTM over lax.scan: input viewed as [-1][steps][features] (time_distributed:
        every row its own sequence), zero initial state; gates r,z,n (GRU: n = tanh(x_n + r * (h W_hn + b_hn)))
        or i,f,g,o (LSTM); output as planned: every step's h ([steps][1][units]) or the last one's ([units];
        per row when distributed)."""
        jnp, jax = self.jnp, self.jax
        wih, whh, bih, bhh = p
        H, n = L.units, xs[0].shape[0]
        seq = xs[0].reshape(-1, L.steps, L.features)
        gx = jnp.swapaxes(seq @ wih.T + bih, 0, 1)   # [steps][rows][G*H]: the input part, for every step at once
        h0 = jnp.zeros((seq.shape[0], H), seq.dtype)
        sig = jax.nn.sigmoid
        if L.op == "lstm":
            def cell(hc, g):
                h, c = hc
                a = g + h @ whh.T + bhh
                c = sig(a[:, H:2 * H]) * c + sig(a[:, :H]) * jnp.tanh(a[:, 2 * H:3 * H])
                h = sig(a[:, 3 * H:]) * jnp.tanh(c)
                return (h, c), h
            (hT, _), ys = self.lax.scan(cell, (h0, h0), gx)
        else:
            def cell(h, g):
                a = h @ whh.T + bhh
                r = sig(g[:, :H] + a[:, :H])
                z = sig(g[:, H:2 * H] + a[:, H:2 * H])
                c = jnp.tanh(g[:, 2 * H:] + r * a[:, 2 * H:])
                h = (1.0 - z) * c + z * h
                return h, h
            hT, ys = self.lax.scan(cell, h0, gx)
        out = L.out_shape if L.ret_seq or L.distributed else (L.units,)
        y = jnp.swapaxes(ys, 0, 1) if L.ret_seq else hT
        return y.reshape((n,) + tuple(out))

    lstm = gru

    def build(self, layers, params, opt, batch):
        jax, jnp = self.jax, self.jnp
        self.layers = layers
        self.fns = []
        for L in layers:
            f = getattr(self, L.op, None)
            if f is None:
                raise rc.Unsupported(L.op)
            self.fns.append(f)
        arr = lambda a: None if a is None else jnp.asarray(a)  # noqa: E731
        self.params = {str(i): tuple(arr(a) for a in t) for i, t in params.items()}
        # batch norm's running mean and variance: 0 and 1, as native's and torch's
        self.stats = {str(L.i): (jnp.zeros(L.in_shape[0], jnp.float32), jnp.ones(L.in_shape[0], jnp.float32))
                      for L in layers if L.op == "batchnorm"}
        zeros = lambda t: jax.tree_util.tree_map(jnp.zeros_like, t)  # noqa: E731
        self.s0, self.s1 = zeros(self.params), zeros(self.params)
        drop_ids = [L.i for L in layers if L.op == "dropout" and L.rate > 0]

        def forward(params, stats, x, masks, train):
            """The layers in plan order; layer i reads the outputs of its inputs (-1: the model input).
            Returns the logits and the batch norm statistics (updated in training)."""
            mk = dict(zip(drop_ids, masks)) if masks is not None else {}
            outs, new = [], dict(stats)
            for L, f in zip(layers, self.fns):
                xs = [x if j < 0 else outs[j] for j in L.inputs]
                k = str(L.i)
                if L.op == "batchnorm":
                    y, new[k] = f(L, params[k], xs, None, stats[k], train)
                else:
                    y = f(L, params.get(k), xs, mk.get(L.i))
                outs.append(y)
            return outs[-1], new

        def per_example(z, y):
            if self.loss == "sigmoid_binary_cross_entropy":   # mean over classes against one-hot targets
                t = jax.nn.one_hot(y, z.shape[1], dtype=z.dtype)
                return (jnp.logaddexp(0.0, z) - t * z).mean(axis=1)
            return jax.nn.logsumexp(z, axis=1) - jnp.take_along_axis(z, y[:, None], axis=1)[:, 0]

        # embedding ids are held as floats: bf16 would round ids above 256, so such an input stays fp32
        cast_x = not any(L.op == "embedding" for L in layers)

        def half(params, x, masks):
            """The parameters, input and float masks in bf16 (a non-float mask, jax_perf's dropout key, as is)."""
            bf = lambda a: a.astype(jnp.bfloat16) if jnp.issubdtype(a.dtype, jnp.floating) else a  # noqa: E731
            return (jax.tree_util.tree_map(bf, params), bf(x) if cast_x else x,
                    None if masks is None else [bf(m) for m in masks])

        def loss(params, stats, x, y, masks):
            if self.bf16:
                params, x, masks = half(params, x, masks)
            z, new = forward(params, stats, x, masks, True)
            lv = per_example(z.astype(jnp.float32), y)
            return lv.mean(), (lv.sum(), new)

        def step(params, stats, s0, s1, x, y, masks, bc):
            (_, (lsum, stats)), g = jax.value_and_grad(loss, has_aux=True)(params, stats, x, y, masks)
            leaves = lambda t: jax.tree_util.tree_leaves(t)  # noqa: E731
            treedef = jax.tree_util.tree_structure(params)
            new = [opt.update(p, gg, a, b, bc, jnp.sqrt)
                   for p, gg, a, b in zip(leaves(params), leaves(g), leaves(s0), leaves(s1))]
            unflat = lambda k: jax.tree_util.tree_unflatten(treedef, [n[k] for n in new])  # noqa: E731
            return unflat(0), stats, unflat(1), unflat(2), lsum

        self.opt = opt
        self.step = jax.jit(step)
        self.fwd = jax.jit(lambda params, stats, x: forward(params, stats, x, None, False)[0])

        # the inference forward in bf16 (scripts/jax_perf.py times it under bf16; the runner's forward is fp32)
        def forward16(params, stats, x):
            params, x, _ = half(params, x, None)
            return forward(params, stats, x, None, False)[0].astype(jnp.float32)
        self.fwd16 = jax.jit(forward16)

    def parameters(self):
        return sum(int(np.prod(v.shape)) for v in self.jax.tree_util.tree_leaves(self.params))

    def forward(self, x):
        return np.asarray(self.fwd(self.params, self.stats, x))

    def train_step(self, x, y, masks, t):
        bc = self.opt.corrections(t) if self.opt.name == "adam" else (1.0, 1.0)
        self.params, self.stats, self.s0, self.s1, lsum = self.step(
            self.params, self.stats, self.s0, self.s1, x, y.astype(np.int32), masks, np.asarray(bc, np.float32))
        return float(lsum)


if __name__ == "__main__":
    rc.main(Jax, "showdown runner for JAX (workloads/runners/PROTOCOL.md)")
