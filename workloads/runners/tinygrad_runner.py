#!/usr/bin/env python3
"""tinygrad_runner -- the showdown runner protocol (PROTOCOL.md) for tinygrad (lazy tensors compiled to C for the
CPU device; the training step under TinyJit).

NCHW as the native engine (Tensor.conv2d / max_pool2d / avg_pool2d, x @ W.T for dense), so the native weights load
unchanged; graph layers (add, concat) as the plan connects them; batch norm as tinygrad's nn.BatchNorm computes it
(Tensor.batchnorm with the batch's statistics in training, the running ones, moved as native's, otherwise). The
spec's optimizer (runner_common.Optimizer) on tinygrad tensors; it and the running statistics realised with
assign inside the jitted step.
embedding (nn.Embedding's one-hot lookup), repeat_vector and GRU/LSTM (runner_common.LayerModel's step as a
TinyJit cell run once a step, the same kernels every step): a model with them trains eagerly, its embedding and
recurrent layers' outputs leaves whose gradients the runner carries back itself (eager_gradients: the steps'
gradients by the cell's autograd, backpropagation through time, the table's gradient scatter-added on the host).
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
        if a.threads == 1:   # compile kernels in this process: a pool of spawned workers (a core each) starts slower
            os.environ.setdefault("PARALLEL", "0")   # than it saves here (first batch 9.5 -> 7.5 s) and runs on 2 cores
        import tinygrad
        from tinygrad import Tensor, TinyJit, Device
        self.Tensor, self.TinyJit, self.Device = Tensor, TinyJit, Device
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
        if self.training:
            # its backward is a reduction over every (word, id) pair (8 s a step for imdb_gru's 30,000 words): the
            # table's gradient scatter-added on the host instead, the output a leaf (eager_gradients)
            idn = ids.numpy().ravel()

            def back(d):
                dt = np.zeros((L.vocab, L.units), np.float32)
                np.add.at(dt, idn, d.reshape(-1, L.units))
                return [], [(p[0], dt)]
            y = self.Tensor(y.detach().numpy())
            self.records.append((y, back))
        return y.reshape(n, L.out_shape[0], 1, L.units)

    def repeat_vector(self, L, p, xs, m):   # Keras RepeatVector: [n][C] -> [n][T][1][C]
        n = xs[0].shape[0]
        return xs[0].reshape(n, 1, 1, -1).expand(n, L.times, 1, L.out_shape[2])

    # GRU/LSTM outside the lazy graph, which over all the steps (each step's kernels distinct by its offset) takes
    # 9-13 min to schedule and compile for 150 steps: a step is a TinyJit cell (the same kernels every step,
    # replayed), the layer's output a leaf tensor, backpropagation through time in bptt (eager_gradients). The
    # cell is runner_common.LayerModel.gru's step: gates r,z,n / i,f,g,o.
    def _cell(self, L, g, h, c, whh, bhh):
        H, a = L.units, h @ whh.T + bhh
        if L.op == "lstm":
            a = g + a
            i, f, o = a[:, :H].sigmoid(), a[:, H:2 * H].sigmoid(), a[:, 3 * H:].sigmoid()
            c = f * c + i * a[:, 2 * H:3 * H].tanh()
            return o * c.tanh(), c
        r, z = (g[:, :H] + a[:, :H]).sigmoid(), (g[:, H:2 * H] + a[:, H:2 * H]).sigmoid()
        nh = (g[:, 2 * H:] + r * a[:, 2 * H:]).tanh()
        return (1.0 - z) * nh + z * h, c

    def _host(self, t):
        """Tensor t's realised CPU buffer as a numpy array, no copy (Tensor(numpy) and .numpy() schedule a copy
        each: 20 ms a step)."""
        b = t.uop.base.buffer.ensure_allocated()
        d = self.Device[b.device]
        d.synchronize()
        return np.frombuffer(d.allocator._as_buffer(b.get_buf(b.device)), np.float32, count=b.size).reshape(t.shape)

    def _cells(self, L, p, rows):
        """Layer L's step functions for ROWS sequences, each jitted with its input tensors (written in place) and
        their host views: fwd(g, *S) -> S' and bwd(g, *S, *dS') -> (dg, *dS, dwhh, dbhh), the step's gradients by
        tinygrad's autograd; the state S is (h, c) for an LSTM, (h,) for a GRU."""
        key = (L.i, rows)
        if key not in self.cells:
            Tensor, whh, bhh, k = self.Tensor, p[1], p[3], 2 if L.op == "lstm" else 1

            def fwd(g, *s):
                out = self._cell(L, g, s[0], s[-1], whh, bhh)[:k]
                Tensor.realize(*out)
                return out

            def bwd(g, *sd):
                out = self._cell(L, g, sd[0], sd[k - 1], whh, bhh)[:k]
                obj = sum(((o * d).sum() for o, d in zip(out[1:], sd[k + 1:])), (out[0] * sd[k]).sum())
                gs = [t.contiguous() for t in obj.gradient(g, *sd[:k], whh, bhh)]
                Tensor.realize(*gs)
                return gs

            def slots(n):
                ts = [Tensor.zeros(rows, whh.shape[0]).contiguous().realize()]
                ts += [Tensor.zeros(rows, L.units).contiguous().realize() for _ in range(n)]
                return ts, [self._host(t) for t in ts]
            self.cells[key] = (self.TinyJit(fwd), slots(k), self.TinyJit(bwd), slots(2 * k))
        return self.cells[key]

    def _call(self, f, slots, values):
        for v, a in zip(slots[1], values):
            v[...] = a
        return [self._host(t).copy() for t in f(*slots[0])]   # a replayed TinyJit reuses its output buffers

    def gru(self, L, p, xs, m):
        H = L.units
        x, n = xs[0], xs[0].shape[0]
        gx = (x.reshape(-1, L.features) @ p[0].T + p[2]).reshape(-1, L.steps, p[0].shape[0])
        gnp = gx.detach().numpy()   # every step's input part at once; gx stays the graph for the backward
        rows = gnp.shape[0]
        fwd, slots = self._cells(L, p, rows)[:2]
        s = [np.zeros((rows, H), np.float32)] * (2 if L.op == "lstm" else 1)
        states = [s]
        for t in range(L.steps):
            s = self._call(fwd, slots, [gnp[:, t]] + s)
            states.append(s)
        out = self.Tensor(np.stack([st[0] for st in states[1:]], 1) if L.ret_seq else s[0])
        if self.training:
            def back(d):
                dg, dwhh, dbhh = self.bptt(L, p, gnp, states, d)
                return [(gx, dg)], [(p[1], dwhh), (p[3], dbhh)]
            self.records.append((out, back))
        if L.ret_seq or L.distributed:
            return out.reshape((n,) + tuple(L.out_shape))
        return out

    lstm = gru

    def bptt(self, L, p, gnp, states, dout):
        """Backpropagation through the steps of a layer's forward: dout the gradient of its output (every step's h
        or the last one's) -> the gradients of its step inputs gx, of whh and of bhh."""
        bwd, slots = self._cells(L, p, gnp.shape[0])[2:]
        dg = np.zeros_like(gnp)
        dwhh, dbhh = np.zeros(p[1].shape, np.float32), np.zeros(p[3].shape, np.float32)
        ds = [np.zeros_like(v) for v in states[0]]
        if not L.ret_seq:
            ds[0] = dout
        for t in reversed(range(L.steps)):
            if L.ret_seq:
                ds[0] = ds[0] + dout[:, t]
            r = self._call(bwd, slots, [gnp[:, t]] + states[t] + ds)
            dg[:, t], ds, w, b = r[0], r[1:-2], r[-2], r[-1]
            dwhh += w
            dbhh += b
        return dg, dwhh, dbhh

    def per_example(self, z, t):
        if self.loss == "sigmoid_binary_cross_entropy":   # the mean over classes
            return z.binary_crossentropy_logits(t, reduction="none").mean(axis=1)
        return z.sparse_categorical_crossentropy(t, reduction="none")

    def build(self, layers, params, opt, batch):
        Tensor = self.Tensor
        realized = lambda a: Tensor(np.array(a)).contiguous().realize()  # noqa: E731
        self.build_layers(layers, params, opt, lambda a, L, role: realized(a),
                          lambda v: Tensor.zeros(*v.shape).contiguous().realize(), lambda a, L, name: realized(a))
        self.rnn = any(L.op in ("gru", "lstm", "embedding") for L in layers)
        self.cells, self.records = {}, []
        self.fwd = self.TinyJit(lambda x: self._forward(x, None).realize())
        if opt is None:
            return

        def step(x, t, bc, *masks):
            self.updates, self.records = [], []
            lv = self.per_example(self._forward(x, masks), t)
            grads = self.eager_gradients(lv.mean()) if self.rnn else lv.mean().gradient(*self.vars)
            outs = []
            for k, (v, g) in enumerate(zip(self.vars, grads)):
                pn, a, b = opt.update(v.detach(), g, self.s0[k], self.s1[k], (bc[0], bc[1]), lambda t: t.sqrt())
                outs += [v.assign(pn), self.s0[k].assign(a), self.s1[k].assign(b)]
            s = lv.sum()
            Tensor.realize(s, *outs, *self.updates)
            return s
        # a recurrent model's step runs its layers' jitted cells itself (TinyJit does not nest)
        self.step = step if self.rnn else self.TinyJit(step)

    def eager_gradients(self, loss):
        """The gradients of the parameters when layers recorded their own backward (self.records: output leaf,
        back(d) -> (graph tensors and their gradients, parameters and theirs)): tinygrad's autograd from the loss
        to the parameters and the leaves, then, record by record from the last, its back and autograd again from
        the graph tensors it names to the parameters and the earlier leaves."""
        nv, Tensor = len(self.vars), self.Tensor
        index = {id(v): k for k, v in enumerate(self.vars)}
        leaves = [r[0] for r in self.records]
        gs = loss.gradient(*self.vars, *leaves)
        grads, dleaf = gs[:nv], gs[nv:]
        for k in reversed(range(len(self.records))):
            pairs, pgrads = self.records[k][1](dleaf[k].numpy())
            for y, dy in pairs:
                more = y.gradient(*self.vars, *leaves[:k], gradient=Tensor(dy))
                grads = [a + b for a, b in zip(grads, more[:nv])]
                dleaf[:k] = [a + b for a, b in zip(dleaf[:k], more[nv:])]
            for v, d in pgrads:
                grads[index[id(v)]] = grads[index[id(v)]] + Tensor(d)
        return grads

    def forward(self, x):
        if self.rnn or len(x) != getattr(self, "fwd_n", len(x)):
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
