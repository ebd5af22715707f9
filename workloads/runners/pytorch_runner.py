#!/usr/bin/python3
"""pytorch_runner -- the showdown runner protocol (workloads/runners/PROTOCOL.md) for PyTorch.

Builds any "showdown-workload/1" or "/2" model from the spec (no per-workload code: blocks, repeats and
residual/concat connections expand as src/nn/spec.c does) and trains it on the same data,
with the same initial weights, data order, dropout masks and optimizer arithmetic as the native engine
(src/nn/model.c, src/nn/train.c, src/nn/kernels.h), printing one JSON line per event on stdout.
Runs with torch 1.13 (Debian's python3-torch) to 2.x (PyPI, .venv-frameworks/torch) and numpy; nothing else.
The hello event names the interpreter and the torch directory it imported.
"""
import argparse
import json
import math
import os
import sys
import time

# written once for every runner (workloads/runners/runner_common.py): the protocol lines, the hash of
# src/nn/kernels.h, the data readers and the shuffle order
from runner_common import (M64, U, emit, fail, h64, h64s, load_cifar10, load_idx, shuffled,  # noqa: E402
                           synthetic, u01)

PROTOCOL = 1


try:
    import numpy as np
except Exception as e:  # noqa: BLE001 - any import failure means the same thing here
    fail("numpy not importable: %s" % e, "unavailable", 3)
try:
    import torch
    import torch.nn.functional as F
except Exception as e:  # noqa: BLE001
    fail("torch not importable: %s" % e, "unavailable", 3)

# ---- data: the same files (load_idx, load_cifar10 in runner_common), or the same synthetic stream as
# src/data/synthetic.c (runner_common.synthetic)


# ---- token data: src/data/imdb.c in numpy ---------------------------------------------------
def pad_seqs(seqs, maxlen, pad_post, trunc_post):
    """keras pad_sequences(value=0) with 'pre'/'post' padding and truncation."""
    x = np.zeros((len(seqs), maxlen), dtype=np.float32)
    for i, s in enumerate(seqs):
        if len(s) > maxlen:
            s = s[:maxlen] if trunc_post else s[len(s) - maxlen:]
        if len(s):
            if pad_post:
                x[i, :len(s)] = s
            else:
                x[i, maxlen - len(s):] = s
    return x


def token_opts(spec):
    d = spec["data"]
    return (int(d.get("num_words", 0)), int(d["shape"][0]), d.get("padding", "pre") == "post",
            d.get("truncating", "pre") == "post")


def load_tokens(path, spec):
    """A showdown-tokens/1 file (format in src/data/data.h); showdown has validated it already."""
    nw, maxlen, pp, tp = token_opts(spec)
    seqs, ys = [], []
    with open(path) as f:
        if f.readline().rstrip("\r\n") != "showdown-tokens/1":
            raise ValueError("%s: not a showdown-tokens/1 file" % path)
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            v = [int(t) for t in line.split()]
            ys.append(v[0])
            seqs.append([2 if nw > 0 and t >= nw else t for t in v[1:]])
    return pad_seqs(seqs, maxlen, pp, tp).reshape(len(ys), maxlen, 1, 1), np.array(ys, dtype=np.int64)


ACL_SEP = set("!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~ \t\n\r")


def acl_words(data):
    """Keras Tokenizer rules on bytes: ASCII lower-case, the filter characters and whitespace separate."""
    out, cur = [], bytearray()
    for b in bytes(c + 32 if 65 <= c <= 90 else c for c in data):
        if chr(b) in ACL_SEP and b < 128:
            if cur:
                out.append(bytes(cur))
                cur = bytearray()
        else:
            cur.append(b)
    if cur:
        out.append(bytes(cur))
    return out


def load_aclimdb(root, spec):
    """The aclImdb layout as sd_data_load_imdb_text reads it (vocabulary from train, ties in byte order)."""
    nw, maxlen, pp, tp = token_opts(spec)
    splits = {}
    for split in ("train", "test"):
        docs = []
        for lab, cls in ((0, "neg"), (1, "pos")):
            d = os.path.join(root, split, cls)
            for name in sorted(n for n in os.listdir(d) if n.endswith(".txt") and len(n) > 4):
                with open(os.path.join(d, name), "rb") as f:
                    docs.append((lab, acl_words(f.read())))
        splits[split] = docs
    count = {}
    for _, ws in splits["train"]:
        for wd in ws:
            count[wd] = count.get(wd, 0) + 1
    rank = {wd: r + 1 for r, wd in enumerate(sorted(count, key=lambda k: (-count[k], k)))}
    out = []
    for split in ("train", "test"):
        seqs, ys = [], []
        for lab, ws in splits[split]:
            ids = [1]
            for wd in ws:
                t = rank[wd] + 3 if wd in rank else 2
                ids.append(2 if nw > 0 and t >= nw else t)
            seqs.append(ids)
            ys.append(lab)
        out.append((pad_seqs(seqs, maxlen, pp, tp).reshape(len(ys), maxlen, 1, 1), np.array(ys, dtype=np.int64)))
    return out


def synthetic_tokens(n, maxlen, vocab, classes, seed, split):
    """sd_data_synthetic_tokens, element for element."""
    key = h64s(seed ^ h64s(0x70C5 + split))
    block = min(64, max(1, (vocab - 3) // (2 * classes)))
    with np.errstate(over="ignore"):
        h = h64(U(key) ^ h64(np.arange(n, dtype=np.uint64)))
    y = (h % U(classes)).astype(np.int64)
    span = U(maxlen - maxlen // 4 + 1)
    ln = np.where((h >> U(56)) < U(179), U(maxlen), U(maxlen // 4) + ((h >> U(16)) % span)).astype(np.int64)
    ln = np.maximum(ln, 1)
    t = np.arange(maxlen, dtype=np.uint64)
    with np.errstate(over="ignore"):
        r = h64(h[:, None] ^ h64(t)[None, :])
    own = U(3) + (y.astype(np.uint64)[:, None] * U(block) + ((r >> U(10)) % U(block))) % U(vocab - 3)
    rnd = U(3) + ((r >> U(10)) % U(vocab - 3))
    ids = np.where((r & U(1023)) < U(307), own, rnd).astype(np.float32)
    ids[:, 0] = 1.0
    ids[np.arange(maxlen)[None, :] >= ln[:, None]] = 0.0
    return ids.reshape(n, maxlen, 1, 1), y


# ---- the model, from the spec ------------------------------------------------------------------------
def pair(v, default):
    if v is None:
        return default
    return (int(v[0]), int(v[1])) if isinstance(v, list) else (int(v), int(v))


def padding(l, k):
    p = l.get("padding", "valid")
    if p == "valid":
        return (0, 0)
    if p == "same":
        return (k[0] // 2, k[1] // 2)
    return pair(p, (0, 0))


class HashDropout(torch.nn.Module):
    """Inverted dropout whose mask is nn_dropout_keep(layer_seed, element, rate) of src/nn/kernels.h."""

    def __init__(self, rate, index):
        super().__init__()
        self.rate, self.index, self.seed = float(rate), index, None
        self._hi = None

    def forward(self, x):
        if not self.training or self.rate == 0.0:
            return x
        n = x.numel()
        if self._hi is None or self._hi.size != n:
            self._hi = h64(np.arange(n, dtype=np.uint64))   # nn_hash64(i): independent of the step
        lseed = h64s(self.seed ^ (self.index + 1))
        keep = u01(h64(U(lseed) ^ self._hi)) >= np.float32(self.rate)
        scale = np.float32(1.0) / (np.float32(1.0) - np.float32(self.rate))
        mask = torch.from_numpy(keep.astype(np.float32) * scale).to(x.device).view_as(x)
        return x * mask


class TokenEmbedding(torch.nn.Module):
    """embedding: float-held ids [N][T][1][1] -> [N][T][1][E]."""

    def __init__(self, vocab, units, lo=0, hi=0):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, units)
        self.lo, self.hi = lo, hi   # "range": the ids [lo, hi) of the input (hi 0: all)

    def forward(self, x):
        n = x.shape[0]
        ids = x.reshape(n, -1)
        if self.hi:
            ids = ids[:, self.lo:self.hi]
        return self.emb(ids.long()).view(n, ids.shape[1], 1, -1)


class RepeatVector(torch.nn.Module):
    """repeat_vector (Keras RepeatVector): [N][C] -> [N][T][1][C]."""

    def __init__(self, times):
        super().__init__()
        self.times = times

    def forward(self, x):
        n = x.shape[0]
        return x.reshape(n, 1, 1, -1).expand(n, self.times, 1, x.reshape(n, -1).shape[1])


class Recurrent(torch.nn.Module):
    """gru / lstm: PyTorch's GRU/LSTM are cuDNN's formulation, the native one. Input viewed as
    [-1][T][F] (time_distributed: every row its own sequence), output as the planned (c, h, w)."""

    def __init__(self, kind, f, units, t, ret_seq, out_shape):
        super().__init__()
        cls = torch.nn.LSTM if kind == "lstm" else torch.nn.GRU
        self.rnn = cls(f, units, batch_first=True)
        self.t, self.f, self.ret_seq, self.out_shape = t, f, ret_seq, out_shape

    def forward(self, x):
        n = x.shape[0]
        y, hn = self.rnn(x.reshape(-1, self.t, self.f))
        if not self.ret_seq:
            y = (hn[0] if isinstance(hn, tuple) else hn)[-1]
        return y.reshape((n,) + self.out_shape)


def init_recurrent(m, kind, key):
    """nn_model_init_params for embedding / gru / lstm (src/nn/model.c init_recurrent)."""
    def fill(t, k, limit):
        u = u01(h64(U(k) ^ h64(np.arange(t.numel(), dtype=np.uint64))))
        t.copy_(torch.from_numpy((np.float32(2.0) * u - np.float32(1.0)) * np.float32(limit)).view_as(t))
    if kind == "embedding":
        fill(m.emb.weight, key, 0.05)
        return
    r = m.rnn
    g = 4 if kind == "lstm" else 3
    h, f = r.hidden_size, r.input_size
    fill(r.weight_ih_l0, key, np.float32(math.sqrt(6.0 / (f + g * h))))
    fill(r.weight_hh_l0, h64s((key + 1) & M64), np.float32(math.sqrt(6.0 / (h + g * h))))
    torch.nn.init.zeros_(r.bias_ih_l0)
    torch.nn.init.zeros_(r.bias_hh_l0)
    if kind == "lstm":
        r.bias_ih_l0[h:2 * h] = 1.0   # Keras unit_forget_bias on b_x of gate f


# ---- spec version 2: blocks, "$param" values, repeats, connections -> the flat layer list ---------------
# The same expansion as src/nn/spec.c (expand_item / expand_block), so layer i here is the native layer i
# (its initial weights and dropout stream depend on i). Each layer gets "inputs": earlier layer indices,
# -1 = the model input. Connection layers are {"op": "add"} and {"op": "concat"}.
def expand(spec):
    blocks = spec["model"].get("blocks", {})
    out = []

    def value(v, env):
        if isinstance(v, str) and v.startswith("$"):
            return env[v[1:]]
        return v

    def item(l, env, cur):
        for _ in range(int(value(l.get("repeat", 1), env))):
            if "block" in l:
                cur = block(l, env, cur)
            else:
                layer = {k: value(v, env) for k, v in l.items() if k != "repeat"}
                layer["inputs"] = [cur]
                out.append(layer)
                cur = len(out) - 1
        return cur

    def seq(layers, env, cur):
        for l in layers or []:
            cur = item(l, env, cur)
        return cur

    def block(use, outer, cur):
        b = blocks[use["block"]]
        env = {k: value(v, outer) for k, v in b.get("params", {}).items()}
        for k in env:
            if k in use:
                env[k] = value(use[k], outer)
        x_in = cur
        main = seq(b["layers"], env, cur)
        conn = b.get("connection", "none")
        if conn == "residual":
            sc = seq(b["projection"], env, x_in) if use.get("project", False) else x_in
            out.append({"op": "add", "inputs": [main, sc]})
            cur = len(out) - 1
        elif conn == "concat":
            out.append({"op": "concat", "inputs": [x_in, main]})
            cur = len(out) - 1
        else:
            cur = main
        return seq(b.get("after"), env, cur)

    seq(spec["model"]["layers"], {}, -1)
    return out


class Graph(torch.nn.Module):
    """The layers in spec order; layer i reads the outputs of layers inputs[i] (-1: the model input)."""

    def __init__(self, mods, inputs, kinds):
        super().__init__()
        self.mods = torch.nn.ModuleList(mods)
        self.inputs, self.kinds = inputs, kinds

    def forward(self, x):
        outs = []
        for m, ins, kind in zip(self.mods, self.inputs, self.kinds):
            xs = [x if j < 0 else outs[j] for j in ins]
            if kind == "add":
                y = xs[0]
                for t in xs[1:]:
                    y = y + t
            elif kind == "concat":
                y = torch.cat(xs, 1)
            else:
                y = m(xs[0])
            outs.append(y)
        return outs[-1]


def build(spec, seed):
    """Graph model + list of (layer index, module) with weights, in the native slab order."""
    layers = expand(spec)
    shapes = []   # (c, h, w) of each layer's output
    mods, weighted, drops, inputs, kinds, recurrent = [], [], [], [], [], []
    for i, l in enumerate(layers):
        op = l["op"]
        ins = l["inputs"]
        c, h, w = tuple(spec["data"]["shape"]) if ins[0] < 0 else shapes[ins[0]]
        if op == "conv2d":
            k = pair(l["kernel"], None)
            s = pair(l.get("stride"), (1, 1))
            p = padding(l, k)
            m = torch.nn.Conv2d(c, int(l["filters"]), k, s, p, bias=l.get("bias", True))
            c, h, w = int(l["filters"]), (h + 2 * p[0] - k[0]) // s[0] + 1, (w + 2 * p[1] - k[1]) // s[1] + 1
            weighted.append((i, m, k[0] * k[1]))
        elif op in ("maxpool", "avgpool"):
            k = pair(l["size"], None)
            s = pair(l.get("stride"), k)
            p = padding(l, k)
            if p[0] * 2 > k[0] or p[1] * 2 > k[1]:
                raise ValueError("layer %d: %s padding %s is more than half the window %s (torch cannot)" %
                                 (i + 1, op, p, k))
            if op == "maxpool":
                m = torch.nn.MaxPool2d(k, s, p)
            else:   # the native average leaves padded positions out of the count
                m = torch.nn.AvgPool2d(k, s, p, count_include_pad=False)
            h, w = (h + 2 * p[0] - k[0]) // s[0] + 1, (w + 2 * p[1] - k[1]) // s[1] + 1
        elif op == "global_avgpool":
            m = torch.nn.AdaptiveAvgPool2d(1)
            h, w = 1, 1
        elif op == "batchnorm":
            flat = ins[0] >= 0 and layers[ins[0]]["op"] in ("flatten", "dense")
            bn = torch.nn.BatchNorm1d if flat else torch.nn.BatchNorm2d
            m = bn(c, eps=float(l.get("eps", 1e-5)), momentum=float(l.get("momentum", 0.1)))
        elif op == "add":
            m = torch.nn.Identity()
        elif op == "concat":
            m = torch.nn.Identity()
            c = sum(shapes[j][0] if j >= 0 else spec["data"]["shape"][0] for j in ins)
        elif op == "dense":
            if h != 1 or w != 1:
                raise ValueError("layer %d: dense after a %dx%dx%d feature map needs flatten" % (i + 1, c, h, w))
            m = torch.nn.Linear(c, int(l["units"]), bias=l.get("bias", True))
            c = int(l["units"])
            weighted.append((i, m, 1))
        elif op == "relu":
            m = torch.nn.ReLU()
        elif op == "flatten":
            m = torch.nn.Flatten()
            c, h, w = c * h * w, 1, 1
        elif op == "dropout":
            m = HashDropout(l["rate"], i)
            drops.append(m)
        elif op == "embedding":   # recurrent ops; shapes as nn/backend.h "Sequence tensors"
            lo, hi = (int(l["range"][0]), int(l["range"][1])) if "range" in l else (0, 0)
            m = TokenEmbedding(int(l["vocab"]), int(l["units"]), lo, hi)
            c, h, w = (hi - lo if hi else c), 1, int(l["units"])
            recurrent.append((i, m, op))
        elif op == "repeat_vector":
            m = RepeatVector(int(l["times"]))
            c, h, w = int(l["times"]), 1, c
        elif op in ("gru", "lstm"):
            units, rs = int(l["units"]), bool(l.get("return_sequences", False))
            if l.get("time_distributed", False):   # [1][rows][steps] -> rows sequences of one feature
                m = Recurrent(op, 1, units, w, False, (h, 1, units))
                c, h, w = h, 1, units
            else:
                m = Recurrent(op, w, units, c, rs, (c, 1, units) if rs else (units,))
                c, h, w = (c, 1, units) if rs else (units, 1, 1)
            recurrent.append((i, m, op))
        else:
            raise ValueError("layer %d: unknown op %r" % (i + 1, op))
        shapes.append((c, h, w))
        mods.append(m)
        inputs.append(ins)
        kinds.append(op)
    init = spec["model"].get("init", {})
    with torch.no_grad():
        for i, m, rf in weighted:
            # Glorot-uniform from the counter-based hash: the native engine's exact initial weights
            # (nn_model_init_params); torch's own glorot would draw other numbers from the same law.
            if init.get("weights", "glorot_uniform") == "glorot_uniform":
                fan_in, fan_out = m.weight.shape[1] * rf, m.weight.shape[0] * rf
                limit = np.float32(math.sqrt(6.0 / (fan_in + fan_out)))
                lseed = h64s(seed ^ h64s(0x5EED + i))
                u = u01(h64(U(lseed) ^ h64(np.arange(m.weight.numel(), dtype=np.uint64))))
                w0 = (np.float32(2.0) * u - np.float32(1.0)) * limit
                m.weight.copy_(torch.from_numpy(w0).view_as(m.weight))
            else:
                torch.nn.init.zeros_(m.weight)
            if m.bias is not None:
                torch.nn.init.zeros_(m.bias)   # spec "bias": "zeros" (the only bias init the engine has)
        for i, m, kind in recurrent:
            init_recurrent(m, kind, h64s(seed ^ h64s(0x5EED + i)))
    # batch norm: gamma 1, beta 0, running mean 0, variance 1 (torch's defaults, as the native engine)
    return Graph(mods, inputs, kinds), [m for _, m, _ in weighted], drops


# ---- optimizers: the arithmetic of src/nn/kernels.h, in float32 ---------------------------------------
class Optim:
    def __init__(self, params, o):
        self.params = [p for p in params]
        self.name = o["name"]
        self.lr = float(o.get("lr", {"sgd": 0.0, "rmsprop": 0.001, "adadelta": 1.0, "adam": 0.001}[self.name]))
        self.mom = float(o.get("momentum", 0.0))
        self.rho = float(o.get("rho", 0.95 if self.name == "adadelta" else 0.9))
        self.eps = float(o.get("eps", 1e-7))
        self.b1, self.b2 = float(o.get("beta1", 0.9)), float(o.get("beta2", 0.999))
        self.s0 = [torch.zeros_like(p) for p in self.params]
        self.s1 = [torch.zeros_like(p) for p in self.params]
        self.t = 0

    @torch.no_grad()
    def step(self):
        self.t += 1
        lr, rho, eps = self.lr, self.rho, self.eps
        if self.name == "adam":
            bc1 = float(np.float32(1.0) - np.float32(self.b1) ** np.float32(self.t))
            bc2 = float(np.float32(1.0) - np.float32(self.b2) ** np.float32(self.t))
        for p, a, b in zip(self.params, self.s0, self.s1):
            g = p.grad
            if self.name == "sgd":          # v = m v + g; p -= lr v   (PyTorch form)
                if self.mom != 0.0:
                    a.mul_(self.mom).add_(g)
                    g = a
                p.sub_(g * lr)
            elif self.name == "rmsprop":    # a = rho a + (1-rho) g^2; p -= lr g / (sqrt(a) + eps)   (Keras)
                a.mul_(rho).add_(g * g * (1.0 - rho))
                p.sub_(g * lr / (a.sqrt() + eps))
            elif self.name == "adadelta":   # Keras form with lr
                a.mul_(rho).add_(g * g * (1.0 - rho))
                d = g * (b + eps).sqrt() / (a + eps).sqrt()
                p.sub_(d * lr)
                b.mul_(rho).add_(d * d * (1.0 - rho))
            elif self.name == "adam":
                a.mul_(self.b1).add_(g * (1.0 - self.b1))
                b.mul_(self.b2).add_(g * g * (1.0 - self.b2))
                p.sub_((a / bc1) * lr / ((b / bc2).sqrt() + eps))
            else:
                raise ValueError("unknown optimizer %r" % self.name)
            p.grad = None


def mean_roc_auc(scores, targets):
    """Mean over classes of the ROC AUC (Mann-Whitney, ties at half), classes without both labels skipped."""
    aucs = []
    for k in range(scores.shape[1]):
        s, t = scores[:, k].astype(np.float64), targets[:, k] > 0.5
        pos = int(t.sum())
        neg = len(t) - pos
        if pos == 0 or neg == 0:
            continue
        order = np.argsort(s, kind="mergesort")
        ranks = np.empty(len(s))
        ss = s[order]
        i = 0
        while i < len(ss):
            j = i
            while j < len(ss) and ss[j] == ss[i]:
                j += 1
            ranks[order[i:j]] = 0.5 * (i + 1 + j)
            i = j
        aucs.append((ranks[t].sum() - 0.5 * pos * (pos + 1)) / (pos * neg))
    return float(np.mean(aucs)) if aucs else float("nan")


# ---- the training loop of src/nn/train.c ----------------------------------------------------------------


def equivalence(d, model, weighted, device):
    """Load the weights `showdown bench` exported (nn/export.h), run its input batch forward, report the max
    relative difference to the native logits; training then starts from these (identical) weights."""
    with open(os.path.join(d, "index.json")) as f:
        idx = json.load(f)
    by = {}
    for e in idx["params"]:
        by.setdefault(e["layer"], {})[e["role"]] = np.load(os.path.join(d, e["file"]))
    with torch.no_grad():
        for i, m in zip(sorted(by), weighted):
            m.weight.copy_(torch.from_numpy(by[i]["weight"]).view_as(m.weight))
            if m.bias is not None:
                m.bias.copy_(torch.from_numpy(by[i]["bias"]))
        model.eval()
        z = model(torch.from_numpy(np.load(os.path.join(d, idx["input"]["file"]))).to(device)).cpu().double().numpy()
    ref = np.load(os.path.join(d, idx["logits"]["file"])).astype(np.float64)
    emit({"event": "equivalence", "batch": int(ref.shape[0]),
          "max_rel_diff": float(np.abs(z - ref).max() / max(np.abs(ref).max(), 1e-30))})


def main():
    ap = argparse.ArgumentParser(description="showdown runner for PyTorch (workloads/runners/PROTOCOL.md)")
    ap.add_argument("--spec", required=True)
    ap.add_argument("--data", required=True, choices=["idx", "cifar10", "synthetic", "tokens", "aclimdb",
                                                      "synthetic-tokens"])
    ap.add_argument("--train-tokens"); ap.add_argument("--test-tokens"); ap.add_argument("--acl-dir")
    ap.add_argument("--vocab", type=int, default=0)
    ap.add_argument("--train-images"); ap.add_argument("--train-labels")
    ap.add_argument("--test-images"); ap.add_argument("--test-labels")
    ap.add_argument("--cifar-dir")
    ap.add_argument("--synthetic-seed", type=int, default=0)
    ap.add_argument("--train-n", type=int, default=0); ap.add_argument("--test-n", type=int, default=0)
    ap.add_argument("--shape", default=""); ap.add_argument("--classes", type=int, default=0)
    ap.add_argument("--epochs", type=int, required=True); ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--max-batches", type=int, default=0)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--shuffle", type=int, default=1)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--cudnn-benchmark", type=int, default=1)
    ap.add_argument("--precision", default="fp32", choices=["fp32", "tf32"])
    ap.add_argument("--equivalence", default=None, help="showdown-weights/1 directory: check the forward pass first")
    a, _unknown = ap.parse_known_args()   # arguments of later protocol additions (--plan ...) are ignored

    with open(a.spec) as f:
        spec = json.load(f)
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    if a.device == "auto":
        dev = "cuda" if torch.cuda.is_available() else "cpu"
    elif a.device == "cuda" and not torch.cuda.is_available():
        fail("device cuda requested but torch.cuda.is_available() is false", "unavailable", 3)
    else:
        dev = a.device
    tf32 = a.precision == "tf32"
    torch.backends.cudnn.benchmark = bool(a.cudnn_benchmark)
    torch.backends.cudnn.allow_tf32 = tf32          # torch 1.13 defaults to True: fp32 means off
    torch.backends.cuda.matmul.allow_tf32 = tf32
    device = torch.device(dev)
    devname = torch.cuda.get_device_name(0) if dev == "cuda" else "cpu (%d threads)" % torch.get_num_threads()

    torch.manual_seed(a.seed)
    model, weighted, drops = build(spec, a.seed)
    model.to(device)
    nparams = sum(p.numel() for p in model.parameters())
    emit({"event": "hello", "protocol": PROTOCOL, "framework": "pytorch", "version": torch.__version__,
          "device": devname, "device_kind": dev, "parameters": nparams, "threads": torch.get_num_threads(),
          "python": sys.version.split()[0], "executable": sys.executable,
          "torch_path": os.path.dirname(torch.__file__), "numpy": np.__version__, "cudnn_benchmark": bool(a.cudnn_benchmark),
          "cudnn": torch.backends.cudnn.version() if dev == "cuda" else None})
    if a.equivalence:
        equivalence(a.equivalence, model, weighted, device)

    def sync():
        if dev == "cuda":
            torch.cuda.synchronize()

    def infer_pass(x_all, n_batches, B):
        """forward in inference mode over n_batches, the outputs copied to the host (train.c: infer_pass)"""
        with torch.no_grad():
            for b in range(n_batches):
                x = torch.from_numpy(x_all[b * B:(b + 1) * B]).to(device)
                model(x).cpu()
        sync()

    if "inference" in spec:   # an inference-only workload: untimed pass(es), then one timed pass
        inf = spec["inference"]
        shape = tuple(int(v) for v in a.shape.split(","))
        xte, _ = synthetic(a.test_n, shape, max(1, a.classes), a.synthetic_seed, 1)
        B = a.batch
        nvb = len(xte) // B
        if a.max_batches > 0:
            nvb = min(nvb, a.max_batches)
        if nvb == 0:
            fail("the data hold no full batch of %d (%d images)" % (B, len(xte)))
        model.eval()
        cold = 0.0
        for p in range(int(inf.get("warmup", 1))):
            t0 = time.perf_counter()
            infer_pass(xte, nvb, B)
            if p == 0:
                cold = time.perf_counter() - t0
            emit({"event": "progress", "epoch": 0, "batch": nvb, "batches": nvb})
        t0 = time.perf_counter()
        infer_pass(xte, nvb, B)
        emit({"event": "inference", "timed_s": time.perf_counter() - t0, "images": nvb * B, "cold_s": cold})
        emit({"event": "done", "peak_bytes": torch.cuda.max_memory_allocated() if dev == "cuda" else 0})
        return

    if a.data == "idx":
        xtr, ytr = load_idx(a.train_images, a.train_labels)
        xte, yte = load_idx(a.test_images, a.test_labels)
    elif a.data == "cifar10":
        xtr, ytr = load_cifar10(a.cifar_dir, 0)
        xte, yte = load_cifar10(a.cifar_dir, 1)
    elif a.data == "tokens":
        xtr, ytr = load_tokens(a.train_tokens, spec)
        xte, yte = load_tokens(a.test_tokens, spec)
    elif a.data == "aclimdb":
        (xtr, ytr), (xte, yte) = load_aclimdb(a.acl_dir, spec)
    elif a.data == "synthetic-tokens":
        maxlen = int(a.shape.split(",")[0])
        xtr, ytr = synthetic_tokens(a.train_n, maxlen, a.vocab, a.classes, a.synthetic_seed, 0)
        xte, yte = synthetic_tokens(a.test_n, maxlen, a.vocab, a.classes, a.synthetic_seed, 1)
    else:
        shape = tuple(int(v) for v in a.shape.split(","))
        xtr, ytr = synthetic(a.train_n, shape, a.classes, a.synthetic_seed, 0)
        xte, yte = synthetic(a.test_n, shape, a.classes, a.synthetic_seed, 1)

    opt = Optim(model.parameters(), spec["training"]["optimizer"])
    B, C = a.batch, int(spec["data"]["classes"])
    bce = spec["model"]["loss"] == "sigmoid_binary_cross_entropy"

    def loss_fn(z, y, reduction):
        """per-example loss: softmax cross-entropy, or the mean over classes of the binary cross-entropy
        against one-hot targets (train.c: targets_of)"""
        if not bce:
            return F.cross_entropy(z, y, reduction=reduction)
        lv = F.binary_cross_entropy_with_logits(z, F.one_hot(y, C).to(z.dtype), reduction="none").mean(1)
        return lv.sum() if reduction == "sum" else lv

    nb = len(ytr) // B
    if a.max_batches > 0:
        nb = min(nb, a.max_batches)
    nvb = len(yte) // B
    if a.max_batches > 0:
        nvb = min(nvb, a.max_batches)
    if nb == 0 or nvb == 0:
        fail("the data hold no full batch of %d (train %d, test %d examples)" % (B, len(ytr), len(yte)))
    step, last = 0, time.monotonic()
    confusion = None
    for e in range(1, a.epochs + 1):
        idx = shuffled(len(ytr), a.seed, e) if a.shuffle else np.arange(len(ytr))
        model.train()
        lsum, t0 = 0.0, time.perf_counter()
        for b in range(nb):
            sel = idx[b * B:(b + 1) * B]
            x = torch.from_numpy(xtr[sel]).to(device)
            y = torch.from_numpy(ytr[sel]).to(device)
            with np.errstate(over="ignore"):
                dseed = h64s(a.seed ^ ((step * 0x9E37) & M64))    # train.c: per-step dropout seed
            for d in drops:
                d.seed = dseed
            lv = loss_fn(model(x), y, "none")
            lv.mean().backward()
            opt.step()
            step += 1
            lsum += float(lv.detach().sum())
            now = time.monotonic()
            if now - last > 2.0:
                emit({"event": "progress", "epoch": e, "batch": b + 1, "batches": nb})
                last = now
        sync()
        train_s = time.perf_counter() - t0
        loss = lsum / (nb * B)
        if loss != loss:
            fail("training diverged: loss is NaN in epoch %d" % e)
        t1 = time.perf_counter()
        model.eval()
        correct, vloss = 0, 0.0
        conf = torch.zeros(C * C, dtype=torch.int64)
        scores = []
        with torch.no_grad():
            for b in range(nvb):
                x = torch.from_numpy(xte[b * B:(b + 1) * B]).to(device)
                y = torch.from_numpy(yte[b * B:(b + 1) * B]).to(device)
                z = model(x)
                vloss += float(loss_fn(z, y, "sum"))
                pred = z.argmax(1)
                correct += int((pred == y).sum())
                conf += torch.bincount((y * C + pred).cpu(), minlength=C * C)
                if bce:
                    scores.append(torch.sigmoid(z).cpu().numpy())
        sync()
        val_s = time.perf_counter() - t1
        confusion = conf.view(C, C).tolist()
        acc = correct / (nvb * B)
        if bce:   # mean per-class ROC AUC, as train.c (nn_mean_roc_auc)
            acc = mean_roc_auc(np.concatenate(scores), np.eye(C, dtype=np.float32)[yte[:nvb * B]])
            if acc != acc:
                fail("no class has both positive and negative examples in the %d validation images" % (nvb * B))
        emit({"event": "epoch", "epoch": e, "train_s": train_s, "val_s": val_s, "loss": loss,
              "val_loss": vloss / (nvb * B), "accuracy": acc, "train_images": nb * B,
              "test_images": nvb * B})
        last = time.monotonic()
    # inference timed apart: the test batches through the trained model, outputs copied to the host
    t2 = time.perf_counter()
    infer_pass(xte, nvb, B)
    emit({"event": "inference", "timed_s": time.perf_counter() - t2, "images": nvb * B})
    peak = torch.cuda.max_memory_allocated() if dev == "cuda" else 0
    emit({"event": "done", "confusion": confusion, "peak_bytes": peak})


if __name__ == "__main__":
    try:
        main()
    except SystemExit:
        raise
    except BaseException as e:  # noqa: BLE001 - report every failure as a protocol error line
        fail("%s: %s" % (type(e).__name__, e))
