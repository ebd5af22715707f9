#!/usr/bin/python3
"""pytorch_runner -- the showdown runner protocol (workloads/runners/PROTOCOL.md) for PyTorch, the reference runner.

Builds any workload from showdown's layer plan (runner_common: graph layers with add/concat connections, batch
norm, pooling, embedding, GRU/LSTM) out of torch.nn modules, and trains it through runner_common's loop with the
native engine's initial weights, data order, dropout masks and optimizer arithmetic. NCHW as the native engine, so
the native weights load unchanged; PyTorch's GRU/LSTM are cuDNN's formulation, the native one. Runs with torch
1.13 (Debian's python3-torch) to 2.x (PyPI, .venv-frameworks/torch), on the CPU or CUDA (cuDNN autotuning and
TF32 as the protocol's options say). The hello event names the interpreter and the torch directory it imported.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner_common as rc  # noqa: E402

RECURRENT = ("gru", "lstm")


class PyTorch:
    LOSSES = ("softmax_cross_entropy", "sigmoid_binary_cross_entropy", "none")
    CUDA = True
    BF16 = True   # torch.autocast: bf16 compute, fp32 parameters, optimizer state and loss

    def __init__(self, a):
        try:
            import torch
            import torch.nn.functional as F
        except Exception as e:  # noqa: BLE001 - any import failure means the same thing here
            raise ImportError("torch not importable: %s" % e)
        self.torch, self.F = torch, F
        if a.threads > 0:
            torch.set_num_threads(a.threads)
        if a.device == "cuda" and not torch.cuda.is_available():
            rc.fail("device cuda requested but torch.cuda.is_available() is false", "unavailable", 3)
        dev = a.device if a.device != "auto" else "cuda" if torch.cuda.is_available() else "cpu"
        tf32 = a.precision == "tf32"
        self.bf16 = a.precision == "bf16"
        torch.backends.cudnn.benchmark = bool(a.cudnn_benchmark)
        torch.backends.cudnn.allow_tf32 = tf32          # torch 1.13 defaults to True: fp32 means off
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.manual_seed(a.seed)
        self.dev, self.device_kind = torch.device(dev), dev
        self.name, self.version = "pytorch", rc.dist_version("torch")
        self.device = torch.cuda.get_device_name(0) if dev == "cuda" else "cpu (%d threads)" % torch.get_num_threads()
        self.cudnn_benchmark = bool(a.cudnn_benchmark)
        self.training = None

    def extras(self):
        torch = self.torch
        return {"threads": torch.get_num_threads(), "executable": sys.executable,
                "torch_path": os.path.dirname(torch.__file__), "cudnn_benchmark": self.cudnn_benchmark,
                "cudnn": torch.backends.cudnn.version() if self.device_kind == "cuda" else None}

    # one method per layer kind: (L, flat: the input is [n][features]) -> (module or None, f(inputs, mask) -> y)
    def conv2d(self, L, flat):
        m = self.torch.nn.Conv2d(L.in_shape[0], L.units, L.k, L.s, L.p, bias=L.bias)
        return m, lambda xs, k: m(xs[0])

    def _pool(self, L, cls, **kw):
        if L.p[0] * 2 > L.k[0] or L.p[1] * 2 > L.k[1]:
            raise ValueError("layer %d: %s padding %s is more than half the window %s (torch cannot)" %
                             (L.i + 1, L.op, L.p, L.k))
        m = cls(L.k, L.s, L.p, **kw)
        return m, lambda xs, k: m(xs[0])

    def maxpool(self, L, flat):
        return self._pool(L, self.torch.nn.MaxPool2d)

    def avgpool(self, L, flat):   # the native average leaves padded positions out of the count
        return self._pool(L, self.torch.nn.AvgPool2d, count_include_pad=False)

    def global_avgpool(self, L, flat):
        m = self.torch.nn.AdaptiveAvgPool2d(1)
        return m, lambda xs, k: m(xs[0])

    def batchnorm(self, L, flat):   # gamma 1, beta 0, running mean 0, variance 1: torch's defaults and native's
        m = (self.torch.nn.BatchNorm1d if flat else self.torch.nn.BatchNorm2d)(L.in_shape[0], eps=L.eps,
                                                                               momentum=L.momentum)
        return m, lambda xs, k: m(xs[0])

    def dense(self, L, flat):
        m = self.torch.nn.Linear(L.in_shape[0], L.units, bias=L.bias)
        return m, lambda xs, k: m(xs[0])

    def relu(self, L, flat):
        return None, lambda xs, k: self.F.relu(xs[0])

    def flatten(self, L, flat):
        return None, lambda xs, k: xs[0].flatten(1)

    def dropout(self, L, flat):   # the native mask (runner_common.Masks), training only
        return None, lambda xs, k: xs[0] if k is None else xs[0] * k.view_as(xs[0])

    def add(self, L, flat):
        return None, lambda xs, k: sum(xs[1:], xs[0])

    def concat(self, L, flat):
        return None, lambda xs, k: self.torch.cat(xs, 1)

    def embedding(self, L, flat):   # float-held ids [n][T][1][1] (or the range [lo, hi) of them) -> [n][T][1][E]
        m = self.torch.nn.Embedding(L.vocab, L.units)
        lo, hi = L.range or (0, 0)

        def f(xs, k):
            n = xs[0].shape[0]
            ids = xs[0].reshape(n, -1)
            if hi:
                ids = ids[:, lo:hi]
            return m(ids.long()).view(n, ids.shape[1], 1, -1)
        return m, f

    def repeat_vector(self, L, flat):   # Keras RepeatVector: [n][C] -> [n][T][1][C]
        return None, lambda xs, k: xs[0].reshape(xs[0].shape[0], 1, 1, -1).expand(xs[0].shape[0], L.times, 1, -1)

    def gru(self, L, flat):
        """Input viewed as [-1][steps][features] (time_distributed: every row its own sequence), output as
        planned: every step's h ([steps][1][units]), or the last one's ([units]; per row when distributed)."""
        m = (self.torch.nn.LSTM if L.op == "lstm" else self.torch.nn.GRU)(L.features, L.units, batch_first=True)
        out = L.out_shape if L.ret_seq or L.distributed else (L.units,)

        def f(xs, k):
            n = xs[0].shape[0]
            y, hn = m(xs[0].reshape(-1, L.steps, L.features))
            if not L.ret_seq:
                y = (hn[0] if isinstance(hn, tuple) else hn)[-1]
            return y.reshape((n,) + out)
        return m, f

    lstm = gru

    @staticmethod
    def _flat_out(L, flat):
        """Whether layer L's torch output is [n][features] (what BatchNorm1d, not 2d, normalises)."""
        if L.op in ("flatten", "dense"):
            return True
        if L.op in RECURRENT:
            return not (L.ret_seq or L.distributed)
        return flat and L.op in rc.POINTWISE + ("add", "concat")

    def build(self, layers, params, opt, batch):
        torch = self.torch
        self.layers, self.opt, self.fns, mods, flat = layers, opt, [], [], {}
        for L in layers:
            make = getattr(self, L.op, None)
            if make is None:
                raise rc.Unsupported(L.op)
            fin = L.inputs[0] >= 0 and flat[L.inputs[0]]
            m, f = make(L, fin)
            flat[L.i] = self._flat_out(L, fin)
            self.fns.append(f)
            if m is None:
                continue
            mods.append(m)
            arrays = [a for a in params.get(L.i, ()) if a is not None]
            ps = list(m.parameters())
            if len(ps) != len(arrays):
                raise ValueError("layer %d (%s): %d parameter tensors, the plan has %d" % (L.i + 1, L.op, len(ps),
                                                                                          len(arrays)))
            with torch.no_grad():   # the native engine's numbers (runner_common.init_params or the export)
                for p, a in zip(ps, arrays):
                    p.copy_(torch.from_numpy(a).view_as(p))
        self.model = torch.nn.ModuleList(mods).to(self.dev)
        self.params = list(self.model.parameters())
        self.s0 = [torch.zeros_like(p) for p in self.params]
        self.s1 = [torch.zeros_like(p) for p in self.params]
        self.drops = [L for L in layers if L.op == "dropout" and L.rate > 0]

    def _forward(self, x, masks):
        """The layers in plan order; layer i reads the outputs of its inputs (-1: the model input)."""
        outs = []
        for L, f in zip(self.layers, self.fns):
            outs.append(f([x if j < 0 else outs[j] for j in L.inputs], masks.get(L.i) if masks else None))
        return outs[-1]

    def _mode(self, training):   # batch norm: batch statistics in training, running ones otherwise
        if self.training != training:
            self.model.train(training)
            self.training = training

    def _loss(self, z, y):
        """Per example: softmax cross-entropy, or the mean over classes of the binary cross-entropy against
        one-hot targets (train.c targets_of)."""
        if self.loss != "sigmoid_binary_cross_entropy":
            return self.F.cross_entropy(z, y, reduction="none")
        t = self.F.one_hot(y, z.shape[1]).to(z.dtype)
        return self.F.binary_cross_entropy_with_logits(z, t, reduction="none").mean(1)

    def parameters(self):
        return sum(p.numel() for p in self.params)

    def forward(self, x):
        self._mode(False)
        with self.torch.no_grad():
            return self._forward(self.torch.from_numpy(x).to(self.dev), None).cpu().numpy()

    def train_step(self, x, y, masks, t):
        torch = self.torch
        self._mode(True)
        mk = {L.i: torch.from_numpy(m).to(self.dev) for L, m in zip(self.drops, masks)}
        with torch.autocast(self.device_kind, dtype=torch.bfloat16, enabled=self.bf16):
            z = self._forward(torch.from_numpy(x).to(self.dev), mk)
        lv = self._loss(z.float(), torch.from_numpy(y).to(self.dev))
        lv.mean().backward()
        bc = self.opt.corrections(t) if self.opt.name == "adam" else (1.0, 1.0)
        with torch.no_grad():
            for k, p in enumerate(self.params):
                pn, self.s0[k], self.s1[k] = self.opt.update(p, p.grad, self.s0[k], self.s1[k], bc, torch.sqrt)
                p.copy_(pn)
                p.grad = None
        return float(lv.detach().sum())

    def peak_bytes(self):
        return self.torch.cuda.max_memory_allocated() if self.device_kind == "cuda" else 0


if __name__ == "__main__":
    rc.main(PyTorch, "showdown runner for PyTorch (workloads/runners/PROTOCOL.md)")
