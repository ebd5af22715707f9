"""runner_common -- what every framework runner of workloads/runners/PROTOCOL.md shares, written once.

The protocol (arguments, JSON lines), the layer plan showdown expands from the spec (`--plan`, or
`showdown bench --describe --json`: no runner parses the spec's layer language), the native engine's data (idx,
CIFAR-10, token files, the synthetic streams bit for bit), its initial weights, shuffle order, dropout masks and
optimizer arithmetic (src/nn/kernels.h), the equivalence check against `showdown bench --export-weights` files,
and the timed loops (training, validation, inference). A framework runner supplies one class (see Framework
below) and calls main(); it never re-implements any of this.
Needs numpy only; the framework is imported by the runner after the thread settings are in the environment.
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import time

PROTOCOL = 1


def peak_rss_bytes():
    """This process's peak resident memory (ru_maxrss, KiB on Linux): the interpreter, the framework and its data,
    as showdown records it for a native cell (core/util.c)."""
    import resource
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


def emit(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def fail(message, kind="failed", code=1):
    """kind: "failed", "unavailable" (framework or device absent) or "unsupported" (an op it lacks)."""
    emit({"event": "error", "kind": kind, "message": message})
    sys.exit(code)


def dist_version(*dists):
    """The version of the first installed distribution of dists from its package metadata: the probe of
    `showdown env` (bench/frameworks.c), so the results and page 1 name the same version."""
    from importlib import metadata
    for d in dists:
        try:
            return metadata.version(d)
        except metadata.PackageNotFoundError:
            pass
    return "unknown (no package metadata for %s)" % ",".join(dists)


class Unsupported(Exception):
    """Raised by a runner for an operation its framework lacks: reported as "unsupported: <op>"."""


try:
    import numpy as np
except Exception as e:  # noqa: BLE001 - any import failure means the same thing here
    fail("numpy not importable: %s" % e, "unavailable", 3)

# ---- the counter-based hash of src/nn/kernels.h (splitmix64 finaliser), on uint64 numpy arrays ----------
M64 = (1 << 64) - 1
U = np.uint64


def h64(x):
    with np.errstate(over="ignore"):
        x = x + U(0x9E3779B97F4A7C15)
        x = (x ^ (x >> U(30))) * U(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> U(27))) * U(0x94D049BB133111EB)
        return x ^ (x >> U(31))


def h64s(x):
    return int(h64(np.array([x & M64], dtype=np.uint64))[0])


def u01(h):
    return (h >> U(40)).astype(np.float32) * np.float32(1.0 / 16777216.0)


# ---- data (the same files, or the same synthetic stream as src/data/synthetic.c) ----------------------
def _open(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


def pixels(u8):
    return u8.astype(np.float32) / np.float32(255.0)


def load_idx(images, labels):
    with _open(images) as f:
        raw = f.read()
    if len(raw) < 16 or raw[0:4] != b"\x00\x00\x08\x03":
        raise ValueError("%s: not an idx3 unsigned-byte file" % images)
    n, h, w = (int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(3))
    x = np.frombuffer(raw, dtype=np.uint8, count=n * h * w, offset=16)
    with _open(labels) as f:
        rawl = f.read()
    if len(rawl) < 8 or rawl[0:4] != b"\x00\x00\x08\x01":
        raise ValueError("%s: not an idx1 unsigned-byte file" % labels)
    nl = int.from_bytes(rawl[4:8], "big")
    if nl != n:
        raise ValueError("%s: %d labels for %d images" % (labels, nl, n))
    y = np.frombuffer(rawl, dtype=np.uint8, count=n, offset=8).astype(np.int64)
    return pixels(x).reshape(n, 1, h, w), y


def load_cifar10(d, which):
    names = ["data_batch_%d.bin" % i for i in range(1, 6)] if which == 0 else ["test_batch.bin"]
    xs, ys = [], []
    for nm in names:
        raw = np.fromfile(os.path.join(d, nm), dtype=np.uint8)
        if raw.size % 3073:
            raise ValueError("%s: size %d is not a multiple of 3073" % (os.path.join(d, nm), raw.size))
        rec = raw.reshape(-1, 3073)
        ys.append(rec[:, 0].astype(np.int64))
        xs.append(pixels(rec[:, 1:]).reshape(-1, 3, 32, 32))
    return np.concatenate(xs), np.concatenate(ys)


GAMMA = 0x9E3779B97F4A7C15
SYN_PROTO, SYN_LABEL, SYN_NOISE = 1, 2, 4
NOISE = np.float32(0.5)   # SD_DATA_SYNTH_NOISE


def synthetic(n, shape, classes, seed, split):
    c, h, w = shape
    dim = c * h * w

    def key(tag):
        return h64s(seed ^ h64s(tag))

    def stream(k, ctr):
        with np.errstate(over="ignore"):
            return h64(U(k) + ctr.astype(np.uint64) * U(GAMMA))
    kp, kl, kn = key(SYN_PROTO), key(SYN_LABEL + split), key(SYN_NOISE + split)
    proto = u01(stream(kp, np.arange(classes * dim, dtype=np.uint64))).reshape(classes, dim)
    y = (stream(kl, np.arange(n, dtype=np.uint64)) % U(classes)).astype(np.int64)
    x = np.empty((n, dim), dtype=np.float32)
    step = max(1, (1 << 22) // dim)
    for i0 in range(0, n, step):
        i1 = min(n, i0 + step)
        noise = u01(stream(kn, np.arange(i0 * dim, i1 * dim, dtype=np.uint64))).reshape(i1 - i0, dim)
        v = proto[y[i0:i1]] + NOISE * (np.float32(2.0) * noise - np.float32(1.0))
        x[i0:i1] = np.clip(v, np.float32(0.0), np.float32(1.0))
    return x.reshape(n, c, h, w), y


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


def load_data(a, spec):
    """(train x, train y, test x, test y) of the protocol's --data kind; x float32 NCHW (token ids as floats)."""
    if a.data == "idx":
        return load_idx(a.train_images, a.train_labels) + load_idx(a.test_images, a.test_labels)
    if a.data == "cifar10":
        return load_cifar10(a.cifar_dir, 0) + load_cifar10(a.cifar_dir, 1)
    if a.data == "tokens":
        return load_tokens(a.train_tokens, spec) + load_tokens(a.test_tokens, spec)
    if a.data == "aclimdb":
        (xtr, ytr), (xte, yte) = load_aclimdb(a.acl_dir, spec)
        return xtr, ytr, xte, yte
    if a.data not in ("synthetic", "synthetic-tokens"):
        raise ValueError("unknown data kind %r" % a.data)
    shape = tuple(int(v) for v in a.shape.split(","))
    if a.data == "synthetic-tokens":
        return (synthetic_tokens(a.train_n, shape[0], a.vocab, a.classes, a.synthetic_seed, 0) +
                synthetic_tokens(a.test_n, shape[0], a.vocab, a.classes, a.synthetic_seed, 1))
    return (synthetic(a.train_n, shape, a.classes, a.synthetic_seed, 0) +
            synthetic(a.test_n, shape, a.classes, a.synthetic_seed, 1))


# ---- the layer plan: showdown's expansion of the spec, shapes included -----------------------------------
# showdown expands the spec (blocks, repeats, connections; src/nn/spec.c) and infers every shape
# (src/nn/model.c); it hands the result over as "showdown-plan/1" JSON (`--plan PATH`, the output of
# `showdown bench --workload SPEC --describe --json`), so no runner re-implements the spec's layer language.
PLAN_SCHEMA = "showdown-plan/1"
LOSS_OPS = ("softmax_cross_entropy", "sigmoid_binary_cross_entropy")   # the plan's loss row: the spec says it
POINTWISE = ("relu", "dropout", "batchnorm")  # same shape out as in: a flat input stays flat


def layouts(layers):
    """Per layer index, for a framework that keeps channels last: is the layer's (first) input a sequence
    ([n][steps][features]; natively [n][steps][1][features]), and is it flat ([n][features])? Embedding and
    repeat_vector output sequences, a recurrent layer one when it returns sequences (or is distributed), flatten and
    dense flat outputs; pointwise layers, add and concat pass their input's kind on. Returns (seq_in, flat_in)."""
    seq, flat, seq_in, flat_in = {}, {}, {}, {}
    for L in layers:
        j = L.inputs[0]
        si, fi = (False, False) if j < 0 else (seq[j], flat[j])
        seq_in[L.i], flat_in[L.i] = si, fi
        if L.op in ("embedding", "repeat_vector"):
            seq[L.i], flat[L.i] = True, False
        elif L.op in ("gru", "lstm"):
            seq[L.i] = bool(L.ret_seq or L.distributed)
            flat[L.i] = not seq[L.i]
        elif L.op in ("flatten", "dense"):
            seq[L.i], flat[L.i] = False, True
        elif L.op in POINTWISE + ("add", "concat"):
            seq[L.i], flat[L.i] = si, fi
        else:
            seq[L.i], flat[L.i] = False, False
    return seq_in, flat_in


def _dims(v):
    """A plan shape (1 to 3 dims) as (c, h, w): [n] -> (n, 1, 1), a sequence [T, F] -> (T, 1, F)."""
    v = [int(x) for x in v]
    return tuple(v) if len(v) == 3 else (v[0], 1, 1) if len(v) == 1 else (v[0], 1, v[1])


def _pair(v, default):
    if v is None:
        return default
    return (int(v[0]), int(v[1])) if isinstance(v, list) else (int(v), int(v))


class Layer:
    """One layer of the plan: index i (native layer i: its initial weights and dropout stream depend on it),
    op (the spec's name), inputs (earlier indices, -1 = the model input), in_shape and out_shape (c, h, w) per
    example, the op's attributes (k, s, p, units, bias, rate, eps, momentum, vocab, range, ret_seq, distributed,
    times, steps, features), and flat_src: the (C, H, W) map a flat input was flattened from (None if not),
    which an NHWC framework needs to reorder dense weights and dropout masks."""

    def __init__(self, d, src, src_flat):
        self.i, self.op, self.name = int(d["index"]), d["op"], d.get("name", "")
        self.inputs = [int(j) for j in d.get("inputs", [self.i - 1])]
        self.in_shape, self.out_shape = _dims(d["in"]), _dims(d["out"])
        self.flat_src = src_flat
        self.k, self.p = _pair(d.get("kernel"), None), _pair(d.get("padding"), (0, 0))
        self.s = _pair(d.get("stride"), self.k if self.op in ("maxpool", "avgpool") else (1, 1))
        self.units = int(d.get("units", 0))
        self.bias = bool(d.get("bias", True))
        self.rate = float(d.get("rate", 0.0))
        self.eps, self.momentum = float(d.get("eps", 1e-5)), float(d.get("momentum", 0.1))
        self.vocab = int(d.get("vocab", 0))
        self.range = tuple(int(v) for v in d["range"]) if d.get("range") else None
        self.ret_seq, self.distributed = bool(d.get("return_sequences")), bool(d.get("time_distributed"))
        self.times = int(d.get("times", self.out_shape[0]))   # repeat_vector
        if self.distributed:   # every row of a [1, rows, steps] input is a sequence of one feature
            self.steps, self.features = src[2], 1
            self.out_shape = (src[1], 1, self.units)
        else:                  # a sequence [steps, 1, features]
            self.steps, self.features = self.in_shape[0], self.in_shape[2]
        if self.op == "flatten":
            self.out_flat_src = src if src[1] * src[2] > 1 else src_flat
        else:
            self.out_flat_src = src_flat if self.op in POINTWISE else None


def plan_layers(doc, spec):
    """The Layer list of a showdown-plan/1 document, checked against the spec it claims to describe."""
    if doc.get("schema") != PLAN_SCHEMA:
        raise ValueError("the plan is not %s (schema %r)" % (PLAN_SCHEMA, doc.get("schema")))
    if doc.get("workload") != spec.get("name") or _dims(doc["input"]) != tuple(int(v) for v in spec["data"]["shape"]):
        raise ValueError("the plan describes %s %s, the spec is %s %s" % (doc.get("workload"), doc.get("input"),
                                                                        spec.get("name"), spec["data"]["shape"]))
    inp, layers = _dims(doc["input"]), []
    for d in doc["layers"]:
        if d["op"] in LOSS_OPS:
            continue
        if int(d["index"]) != len(layers):
            raise ValueError("plan layer %s: indices must run 0, 1, ... (expected %d)" % (d["index"], len(layers)))
        j = int(d.get("inputs", [len(layers) - 1])[0])
        src, flat = (inp, None) if j < 0 else (layers[j].out_shape, layers[j].out_flat_src)
        layers.append(Layer(d, src, flat))
    if not layers:
        raise ValueError("the plan has no layers")
    return layers


def _showdown(a):
    """The showdown binary: --showdown PATH, else $SHOWDOWN, ./showdown or the one at the root of this checkout."""
    if a.showdown:
        return a.showdown
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "showdown")
    for p in (os.environ.get("SHOWDOWN"), "./showdown", here):
        if p and os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    raise FileNotFoundError("no --plan given and no showdown binary to describe the workload "
                            "(--showdown PATH, $SHOWDOWN or ./showdown)")


def load_plan(a, spec):
    """The plan of --plan PATH, or else the one `showdown bench --workload SPEC --describe --json` prints."""
    if a.plan:
        with open(a.plan) as f:
            return plan_layers(json.load(f), spec)
    exe = _showdown(a)
    # a path (it holds a '/') names the spec file itself, not a name under --workloads
    cmd = [exe, "bench", "--workload", os.path.abspath(a.spec), "--describe", "--json"]
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=300)
    if r.returncode != 0:
        tail = (r.stderr.strip().splitlines() or ["no message"])[-1]
        raise RuntimeError("%s exited with status %d: %s" % (" ".join(cmd), r.returncode, tail))
    return plan_layers(json.loads(r.stdout), spec)


# ---- parameters in the native slab order, with the native initial values (src/nn/model.c) ---------------
def param_shapes(L):
    """Shapes of layer L's parameters in the native layout and slab order ([] for none): dense [out][in] and
    conv [out][in][kh][kw] then the bias; batchnorm gamma, beta; embedding [vocab][units]; gru/lstm weight_ih
    [G*H][F], weight_hh [G*H][H], bias_ih, bias_hh (PyTorch's names and order, cuDNN's formulation)."""
    c = L.in_shape[0]
    if L.op == "conv2d":
        return [(L.units, c) + L.k] + ([(L.units,)] if L.bias else [])
    if L.op == "dense":
        return [(L.units, c)] + ([(L.units,)] if L.bias else [])
    if L.op == "batchnorm":
        return [(c,), (c,)]
    if L.op == "embedding":
        return [(L.vocab, L.units)]
    if L.op in ("gru", "lstm"):
        gh = (4 if L.op == "lstm" else 3) * L.units
        return [(gh, L.features), (gh, L.units), (gh,), (gh,)]
    return []


def param_roles(L):
    """The role of each of layer L's parameters (param_shapes order), as LayerModel.build_layers names them."""
    if L.op in ("gru", "lstm"):
        return ("w_ih", "w_hh", "b_ih", "b_hh")
    return ("w", "b")


def _uniform(shape, key, limit):
    """Uniform in [-limit, limit) from the counter-based stream `key` (model.c fill_uniform)."""
    u = u01(h64(U(key) ^ h64(np.arange(int(np.prod(shape)), dtype=np.uint64))))
    return ((np.float32(2.0) * u - np.float32(1.0)) * np.float32(limit)).reshape(shape)


def init_params(layers, spec, seed):
    """{layer index: tuple of arrays (param_shapes order; conv/dense: (W, b or None))} with the native engine's
    exact initial numbers (nn_model_init_params)."""
    glorot = spec["model"].get("init", {}).get("weights", "glorot_uniform") == "glorot_uniform"
    out = {}
    for L in layers:
        shapes = param_shapes(L)
        if not shapes:
            continue
        arrays = [np.zeros(s, np.float32) for s in shapes]
        key = h64s(seed ^ h64s(0x5EED + L.i))
        if L.op == "batchnorm":
            arrays[0][:] = 1.0                       # gamma 1, beta 0
        elif L.op == "embedding" and glorot:
            arrays[0] = _uniform(shapes[0], key, 0.05)
        elif L.op in ("gru", "lstm") and glorot:   # Glorot on (F, G*H) and (H, G*H); LSTM forget-gate b_x 1
            gh = shapes[0][0]
            arrays[0] = _uniform(shapes[0], key, np.sqrt(6.0 / (L.features + gh)))
            arrays[1] = _uniform(shapes[1], h64s((key + 1) & M64), np.sqrt(6.0 / (L.units + gh)))
            if L.op == "lstm":
                arrays[2][L.units:2 * L.units] = 1.0
        elif glorot:                                 # conv2d, dense
            ws = shapes[0]
            rf = ws[2] * ws[3] if len(ws) == 4 else 1
            arrays[0] = _uniform(ws, key, np.float32(np.sqrt(6.0 / (ws[1] * rf + ws[0] * rf))))
        if L.op in ("conv2d", "dense") and not L.bias:
            arrays.append(None)
        out[L.i] = tuple(arrays)
    return out


def load_export(d, layers):
    """The files of `showdown bench --export-weights` (nn/export.h): params by layer (the same tuples as
    init_params), input, logits."""
    with open(os.path.join(d, "index.json")) as f:
        idx = json.load(f)
    if idx.get("schema") != "showdown-weights/1":
        raise ValueError("%s: not a showdown-weights/1 index" % d)
    by = {}
    for e in idx["params"]:
        by.setdefault(e["layer"], {})[e["role"]] = np.load(os.path.join(d, e["file"]))
    params = {}
    for L in layers:
        shapes = param_shapes(L)
        if not shapes:
            continue
        got = by.get(L.i, {})
        flat = np.concatenate([got[r].astype(np.float32).ravel() for r in ("weight", "bias") if r in got] or
                              [np.zeros(0, np.float32)])
        if flat.size != sum(int(np.prod(s)) for s in shapes):
            raise ValueError("layer %d: %d exported parameters, expected %s" % (L.i + 1, flat.size, shapes))
        arrays, o = [], 0
        for s in shapes:   # the slab order: split it by the native shapes
            n = int(np.prod(s))
            arrays.append(flat[o:o + n].reshape(s))
            o += n
        if L.op in ("conv2d", "dense") and not L.bias:
            arrays.append(None)
        params[L.i] = tuple(arrays)
    x = np.load(os.path.join(d, idx["input"]["file"]))
    z = np.load(os.path.join(d, idx["logits"]["file"]))
    return params, x, z


# ---- layout helpers for NHWC frameworks ----------------------------------------------------------------
def conv_hwio(W):
    """[out][in][kh][kw] -> [kh][kw][in][out] (TensorFlow, Keras channels_last)."""
    return np.ascontiguousarray(W.transpose(2, 3, 1, 0))


def dense_in_out(W, L, nhwc):
    """[out][in] -> [in][out]; after a flatten of a (C, H, W) map in an NHWC framework the inputs come in
    (H, W, C) order, so the rows are permuted to match."""
    if nhwc and L.flat_src is not None:
        C, H, Wd = L.flat_src
        return np.ascontiguousarray(W.reshape(W.shape[0], C, H, Wd).transpose(2, 3, 1, 0).reshape(H * Wd * C, -1))
    return np.ascontiguousarray(W.T)


def to_nhwc(a, L):
    """An NCHW activation-shaped array (input batch or dropout mask at layer L's input) in NHWC order."""
    if a.ndim == 4:
        return np.ascontiguousarray(a.transpose(0, 2, 3, 1))
    if L is not None and L.flat_src is not None:
        C, H, W = L.flat_src
        return np.ascontiguousarray(a.reshape(a.shape[0], C, H, W).transpose(0, 2, 3, 1).reshape(a.shape[0], -1))
    return a


# ---- dropout masks, shuffle order, optimizer arithmetic (src/nn/kernels.h, src/nn/train.c) ----------------
def mask_shape(L):
    """Per-example shape of dropout layer L's mask in native order: a flat input's is one-dimensional."""
    return L.in_shape if L.in_shape[1] * L.in_shape[2] > 1 else (L.in_shape[0],)


class Masks:
    """Per-step inverted-dropout masks (keep / (1 - rate)) for every dropout layer, in native NCHW order."""

    def __init__(self, layers, batch):
        self.layers = [L for L in layers if L.op == "dropout" and L.rate > 0]
        self.hi = {}
        self.shapes = {L.i: (batch,) + mask_shape(L) for L in self.layers}

    def step(self, seed, step):
        with np.errstate(over="ignore"):
            dseed = h64s(seed ^ ((step * 0x9E37) & M64))
        out = []
        for L in self.layers:
            shape = self.shapes[L.i]
            n = int(np.prod(shape))
            if n not in self.hi:
                self.hi[n] = h64(np.arange(n, dtype=np.uint64))
            lseed = h64s(dseed ^ (L.i + 1))
            keep = u01(h64(U(lseed) ^ self.hi[n])) >= np.float32(L.rate)
            scale = np.float32(1.0) / (np.float32(1.0) - np.float32(L.rate))
            out.append((keep.astype(np.float32) * scale).reshape(shape))
        return out

    def ones(self):
        return [np.ones(self.shapes[L.i], np.float32) for L in self.layers]


def shuffled(n, seed, epoch):
    s = h64s(seed ^ h64s(0xE90C0000 + epoch))
    i = np.arange(n, dtype=np.uint64)
    j = (h64(U(s) ^ i) % (i + U(1))).astype(np.int64)
    idx = list(range(n))
    for k in range(n - 1, 0, -1):
        jk = j[k]
        idx[k], idx[jk] = idx[jk], idx[k]
    return np.array(idx, dtype=np.int64)


class Optimizer:
    """The spec's optimizer with the native arithmetic on any array type with + - * / and a sqrt function
    (numpy, jax.numpy, tf, paddle, mindspore, tinygrad tensors). update() returns new (p, s0, s1)."""

    DEFAULT_LR = {"sgd": 0.0, "rmsprop": 0.001, "adadelta": 1.0, "adam": 0.001}

    def __init__(self, o):
        self.name = o["name"]
        if self.name not in self.DEFAULT_LR:
            raise Unsupported("optimizer " + self.name)
        self.lr = float(o.get("lr", self.DEFAULT_LR[self.name]))
        self.mom = float(o.get("momentum", 0.0))
        self.rho = float(o.get("rho", 0.95 if self.name == "adadelta" else 0.9))
        self.eps = float(o.get("eps", 1e-7))
        self.b1, self.b2 = float(o.get("beta1", 0.9)), float(o.get("beta2", 0.999))

    def corrections(self, t):
        """Adam's bias corrections for step t (1-based), in float32 like the C code."""
        return (float(np.float32(1.0) - np.float32(self.b1) ** np.float32(t)),
                float(np.float32(1.0) - np.float32(self.b2) ** np.float32(t)))

    def update(self, p, g, s0, s1, bc, sqrt):
        lr, rho, eps = self.lr, self.rho, self.eps
        if self.name == "sgd":            # v = m v + g; p -= lr v   (PyTorch form)
            if self.mom != 0.0:
                s0 = s0 * self.mom + g
                g = s0
            return p - g * lr, s0, s1
        if self.name == "rmsprop":        # Keras: eps outside the sqrt
            s0 = s0 * rho + g * g * (1.0 - rho)
            return p - g * lr / (sqrt(s0) + eps), s0, s1
        if self.name == "adadelta":       # Keras form with lr
            s0 = s0 * rho + g * g * (1.0 - rho)
            d = g * sqrt(s1 + eps) / sqrt(s0 + eps)
            return p - d * lr, s0, s1 * rho + d * d * (1.0 - rho)
        s0 = s0 * self.b1 + g * (1.0 - self.b1)   # adam, bias-corrected, eps after the sqrt
        s1 = s1 * self.b2 + g * g * (1.0 - self.b2)
        return p - (s0 / bc[0]) * lr / (sqrt(s1 / bc[1]) + eps), s0, s1


# ---- losses and the validation metric (src/nn/train.c) -----------------------------------------------------
def softmax_xent(z, y):
    z = z.astype(np.float64)
    m = z.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z - m).sum(axis=1)) + m[:, 0]
    return lse - z[np.arange(len(y)), y]


def sigmoid_bce(z, y):
    """Per example: the mean over classes of the binary cross-entropy against one-hot targets (train.c)."""
    z = z.astype(np.float64)
    t = one_hot(y, z.shape[1])
    return (np.logaddexp(0.0, z) - t * z).mean(axis=1)


def one_hot(y, classes):
    """The float32 one-hot rows of labels y: sigmoid BCE's targets (train.c targets_of)."""
    return np.eye(classes, dtype=np.float32)[y]


def mean_roc_auc(scores, targets):
    """Mean over classes of the ROC AUC (Mann-Whitney, ties at half), classes without both labels skipped
    (nn_mean_roc_auc)."""
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


# ---- the protocol's command line and main loop ---------------------------------------------------------
def parse_args(description):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--spec", required=True)
    ap.add_argument("--plan", help="showdown-plan/1 file (showdown bench --describe --json); without it the "
                                   "runner asks the showdown binary for the plan")
    ap.add_argument("--showdown", help="the showdown binary that describes the spec when --plan is not given "
                                       "(default $SHOWDOWN, then ./showdown)")
    ap.add_argument("--data", required=True)   # idx, cifar10, synthetic, tokens, aclimdb, synthetic-tokens
    ap.add_argument("--train-images"); ap.add_argument("--train-labels")
    ap.add_argument("--test-images"); ap.add_argument("--test-labels")
    ap.add_argument("--cifar-dir")
    ap.add_argument("--train-tokens"); ap.add_argument("--test-tokens"); ap.add_argument("--acl-dir")
    ap.add_argument("--vocab", type=int, default=0)
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
    ap.add_argument("--precision", default="fp32", choices=["fp32", "tf32", "bf16", "fp16"])
    ap.add_argument("--equivalence", default=None, help="showdown-weights/1 directory: check the forward pass first")
    a, _unknown = ap.parse_known_args()   # arguments of later protocol additions are ignored
    return a


def set_threads(n):
    """Thread caps for the math libraries, before any framework is imported."""
    if n > 0:
        for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "TF_NUM_INTRAOP_THREADS"):
            os.environ[k] = str(n)


class Framework:
    """What a runner implements (the names main() calls):
      name, version, device; extras() -> dict for hello (backend versions, threads ...)
      build(layers, params, optimizer, batch): the model with these native-layout weights (params: init_params'
        tuples); optimizer is None for an inference workload; `loss` (the spec's) is set before build
      parameters() -> int, counted by the framework itself
      forward(x) -> logits (numpy [n][classes]) in inference mode, x numpy NCHW float32
      train_step(x, y, masks, t) -> summed loss of the batch (float); masks: Masks.step() arrays (NCHW)
    Optional: class attributes LOSSES (the spec losses it trains; default softmax cross-entropy only), CUDA
    (True: it runs --device cuda itself) and BF16 (True: --precision bf16 trains in its own mixed precision; a
    string: the reason it cannot, reported as `unsupported`); device_kind ("cpu" or "cuda", default cpu);
    peak_bytes() for done.
    Each op it builds is a method named after it (main() calls an op without one unsupported before make() imports
    the framework); raise Unsupported(what) for a variant of an op the framework lacks."""


class LayerModel:
    """The build shared by the runners whose model is the plan run layer by layer (chainer, paddle, mindspore,
    tinygrad): one method per op kind, f(L, params, inputs (list, plan order), mask) -> y, found by the op's name
    (an op without one is Unsupported); each layer's native weights wrapped as the framework's parameters, batch
    norm's running statistics as its buffers; the optimizer's two state slots per parameter; dropout as the mask
    multiplied in (the runner's masks, the native engine's). A subclass also implements per_example(z, t), the
    loss per example of targets t (the framework's tensor of targets(y)), for both losses: LOSSES."""

    LOSSES = ("softmax_cross_entropy", "sigmoid_binary_cross_entropy", "none")

    def build_layers(self, layers, params, opt, wrap, zeros, buffer):
        """wrap(array, L, role) -> the framework's parameter (role: param_roles(L), "w" or "b" for a weight or
        bias, batch norm's gamma or beta, "w_ih" ... "b_hh" for a recurrent layer's); zeros(param) -> an optimizer
        state slot (none for an inference workload, opt None); buffer(array, L, name) -> a batch norm running
        statistic (name "mean" or "var"), which self.stats holds. self.p[i] is layer i's tuple of parameters in
        param_shapes order (a conv or dense layer without bias: (W, None))."""
        self.layers, self.opt = layers, opt
        self.fns = []
        for L in layers:
            f = getattr(self, L.op, None)
            if f is None:
                raise Unsupported(L.op)
            self.fns.append(f)
        self.p, self.vars, self.stats = {}, [], {}
        for L in layers:
            if L.i in params:
                pv = tuple(None if a is None else wrap(a, L, role) for a, role in zip(params[L.i], param_roles(L)))
                self.p[L.i] = pv
                self.vars += [v for v in pv if v is not None]
            if L.op == "batchnorm":   # running mean 0 and variance 1, as native's
                c = L.in_shape[0]
                self.stats[L.i] = (buffer(np.zeros(c, np.float32), L, "mean"), buffer(np.ones(c, np.float32), L, "var"))
        self.s0 = [zeros(v) for v in self.vars] if opt else []
        self.s1 = [zeros(v) for v in self.vars] if opt else []
        self.drop_ids = [L.i for L in layers if L.op == "dropout" and L.rate > 0]
        # the outputs to let go after each layer: those no later layer reads (an inference pass holds no more)
        last = {j: L.i for L in layers for j in L.inputs}
        self.release = {L.i: {j for j in L.inputs if j >= 0 and last[j] == L.i} for L in layers}

    def _forward(self, x, masks):
        """The layers in plan order; layer i reads the outputs of its inputs (-1: the model input). masks: a
        training step's dropout masks, None in inference; self.training says which (batch norm reads it)."""
        self.training = masks is not None
        mk = dict(zip(self.drop_ids, masks)) if self.training else {}
        outs = {}
        for L, f in zip(self.layers, self.fns):
            outs[L.i] = f(L, self.p.get(L.i), [x if j < 0 else outs[j] for j in L.inputs], mk.get(L.i))
            for j in self.release[L.i]:
                del outs[j]
        return outs[self.layers[-1].i]

    def targets(self, y):
        """The loss's targets of labels y (numpy): the labels as int32, or their one-hot float32 rows for sigmoid
        BCE."""
        if self.loss == "sigmoid_binary_cross_entropy":
            return one_hot(y, self.layers[-1].out_shape[0])
        return y.astype(np.int32)

    @staticmethod
    def running(stat, batch, momentum):
        """A running statistic moved towards the batch's by momentum (host_ops.c nn_host_batchnorm_forward; the
        variance's batch value is the unbiased one)."""
        return stat * (1.0 - momentum) + batch * momentum

    def dropout(self, L, p, xs, m):
        return xs[0] if m is None else xs[0] * m

    def add(self, L, p, xs, m):
        return sum(xs[1:], xs[0])

    def gru(self, L, p, xs, m):
        """cuDNN's (PyTorch's) GRU/LSTM as a loop over the steps in the framework's own ops, through the runner's
        hooks rnn_reshape(x, shape), rnn_linear(x, w) (x w^T), rnn_unstack(x, axis) (a list),
        rnn_stack(list, axis), rnn_sigmoid, rnn_tanh. The input viewed as [rows][steps][features]
        (time_distributed: every row of the map its own sequence), zero initial state; gates r,z,n
        (n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))) or i,f,g,o; the output every step's h
        ([steps][1][units]) or the last one's ([units]; [rows][1][units] when distributed)."""
        wih, whh, bih, bhh = p
        H, x, sig, tanh = L.units, xs[0], self.rnn_sigmoid, self.rnn_tanh
        n = x.shape[0]
        gx = self.rnn_linear(self.rnn_reshape(x, (-1, L.features)), wih) + bih   # every step's input part at once
        gx = self.rnn_reshape(gx, (-1, L.steps, gx.shape[-1]))

        def gate(a, k):
            return a[..., k * H:(k + 1) * H]
        h = c = None   # the zero initial state: the products with it (exact zeros) are left out
        hs = []
        for g in self.rnn_unstack(gx, 1):
            a = bhh if h is None else self.rnn_linear(h, whh) + bhh
            if L.op == "lstm":
                a = g + a
                i, f, o = sig(gate(a, 0)), sig(gate(a, 1)), sig(gate(a, 3))
                c = i * tanh(gate(a, 2)) if c is None else f * c + i * tanh(gate(a, 2))
                h = o * tanh(c)
            else:
                r, z = sig(gate(g, 0) + gate(a, 0)), sig(gate(g, 1) + gate(a, 1))
                nh = tanh(gate(g, 2) + r * gate(a, 2))
                h = (1.0 - z) * nh if h is None else (1.0 - z) * nh + z * h
            if L.ret_seq:
                hs.append(h)
        if L.ret_seq:
            return self.rnn_reshape(self.rnn_stack(hs, 1), (n,) + tuple(L.out_shape))
        return self.rnn_reshape(h, (n,) + tuple(L.out_shape)) if L.distributed else h

    lstm = gru

    def parameters(self):
        return sum(int(np.prod(v.shape)) for v in self.vars)


def exit_now(code):
    """Exit with CODE once stdout and stderr are out, without the interpreter's teardown: unloading TensorFlow,
    PyTorch or Keras takes 0.3-1 s a process, ~70 processes in the default report. Every figure is out by then,
    and a parent that measures the process's peak RSS (bench_table's wait4) sees the same peak."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code if isinstance(code, int) else (0 if code is None else 1))


def main(make, description):
    """make(args) -> a Framework instance (imports the framework; ImportError => unavailable)."""
    code = 0
    try:
        try:
            _main(make, description)
        except SystemExit:
            raise
        except Unsupported as e:
            fail("unsupported: %s" % e, "unsupported", 4)
        except BaseException as e:  # noqa: BLE001 - every failure becomes a protocol error line
            fail("%s: %s" % (type(e).__name__, str(e).strip().splitlines()[-1][:900] if str(e).strip() else ""))
    except SystemExit as e:
        code = e.code
    exit_now(code)


def _batches(n, B, cap):
    return min(n // B, cap) if cap > 0 else n // B


def capped(b, nb, t_start, t_first, share):
    """The cell's time cap after step b+1 of nb: stop here once two steps or more are done and those after the
    first (whose time is the framework's compile and first allocations, not its speed) took over SHARE s. A cell of
    two steps (the heavy workloads' quick cells) may stop after its first, timed from T_START."""
    if nb <= 2:
        return b + 1 < nb and time.perf_counter() - t_start > share
    return 2 <= b + 1 < nb and time.perf_counter() - t_first > share


def infer_pass(fw, x, nb, B):
    """Forward in inference mode over nb batches, the outputs copied to the host (train.c infer_pass)."""
    for b in range(nb):
        fw.forward(x[b * B:(b + 1) * B])


# the timed inference figure is the fastest of several passes, as native times it (src/nn/train.h NN_INFER_*): a
# pass of a few milliseconds timed once is at the mercy of the host's slow spells
INFER_PASSES, INFER_MIN_S, INFER_FIT_S, INFER_MAX_PASSES = 3, 1.0, 5.0, 100


def infer_more(k, best, total):
    """Whether a pass more is timed after k passes, the fastest best seconds, total seconds in all."""
    if k >= INFER_MAX_PASSES:
        return False
    return total < INFER_MIN_S or (k < INFER_PASSES and best * INFER_PASSES <= INFER_FIT_S)


def infer_timed(fw, x, nb, B):
    """The timed inference passes (infer_more): (the fastest pass's seconds, the passes)."""
    best, total, k = float("inf"), 0.0, 0
    while True:
        t0 = time.perf_counter()
        infer_pass(fw, x, nb, B)
        dt = time.perf_counter() - t0
        best, total, k = min(best, dt), total + dt, k + 1
        if not infer_more(k, best, total):
            return best, k


def _inference_workload(a, spec, fw):
    """An inference-only workload: untimed warm-up pass(es) over --test-n synthetic images, then the timed passes."""
    B = a.batch
    x, _ = synthetic(a.test_n, tuple(int(v) for v in a.shape.split(",")), max(1, a.classes), a.synthetic_seed, 1)
    nb = _batches(len(x), B, a.max_batches)
    if nb == 0:
        fail("the data hold no full batch of %d (%d images)" % (B, len(x)))
    cold = 0.0
    budget = float(os.environ.get("SHOWDOWN_CELL_SECONDS", "0") or 0)
    for p in range(int(spec["inference"].get("warmup", 1))):
        t0 = time.perf_counter()
        if p == 0 and budget > 0:   # the cell's time cap: a slow first pass sets fewer batches for every pass
            for b in range(nb):
                fw.forward(x[b * B:(b + 1) * B])
                if b == 0:
                    t_first = time.perf_counter()
                if capped(b, nb, t0, t_first, budget / 3):
                    nb = b + 1
                    break
        else:
            infer_pass(fw, x, nb, B)
        if p == 0:
            cold = time.perf_counter() - t0
        emit({"event": "progress", "epoch": 0, "batch": nb, "batches": nb})
    best, passes = infer_timed(fw, x, nb, B)
    emit({"event": "inference", "timed_s": best, "images": nb * B, "passes": passes, "cold_s": cold})


def _main(make, description):
    a = parse_args(description)
    set_threads(a.threads)
    if a.device == "cuda" and not getattr(make, "CUDA", False):
        fail("device cuda: this runner runs on the CPU", "unavailable", 3)
    bf16 = getattr(make, "BF16", False)   # True: it trains in its own bf16 AMP; a string: why it cannot
    if a.precision == "bf16" and bf16 is not True:
        fail(bf16 if isinstance(bf16, str) else "n/a: bf16 mixed precision is not wired into this runner",
             "unsupported", 4)
    if a.precision == "fp16":   # fp16 needs a GPU and loss scaling: no runner trains in it yet
        fail("n/a: fp16 mixed precision is not wired into this runner", "unsupported", 4)
    with open(a.spec) as f:
        spec = json.load(f)
    loss = spec["model"].get("loss", "softmax_cross_entropy")
    if loss not in getattr(make, "LOSSES", ("softmax_cross_entropy",)):
        raise Unsupported("loss " + loss)
    layers = load_plan(a, spec)
    for L in layers:   # a runner has a method per op it builds: one it lacks is said before the framework's import
        if not callable(getattr(make, L.op, None)):
            raise Unsupported(L.op)
    try:
        fw = make(a)
    except ImportError as e:
        fail("%s" % e, "unavailable", 3)
    opt = Optimizer(spec["training"]["optimizer"]) if "training" in spec else None
    if a.equivalence:
        params, eq_x, eq_z = load_export(a.equivalence, layers)
    else:
        params, eq_x, eq_z = init_params(layers, spec, a.seed), None, None
    B, C = a.batch, int(spec["data"].get("classes", 0))   # an inference workload may have none
    fw.loss = loss
    fw.build(layers, params, opt, B)
    hello = {"event": "hello", "protocol": PROTOCOL, "framework": fw.name, "version": fw.version,
             "device": fw.device, "device_kind": getattr(fw, "device_kind", "cpu"), "parameters": int(fw.parameters()),
             "python": sys.version.split()[0], "numpy": np.__version__}
    hello.update(fw.extras())
    # a cell's time cap (the default report sets it): a framework too slow for its batches in the first epoch
    # (its first step, a compile, not counted) trains and validates fewer of them in every epoch; each epoch's
    # train_images says how many
    budget = float(os.environ.get("SHOWDOWN_CELL_SECONDS", "0") or 0)
    if budget > 0:
        hello["cell_seconds"] = budget
    t_start = time.perf_counter()
    emit(hello)
    if eq_x is not None:
        z = np.asarray(fw.forward(eq_x), dtype=np.float64)
        ref = eq_z.astype(np.float64)
        if z.shape != ref.shape:
            raise ValueError("forward output %s, native %s" % (z.shape, ref.shape))
        emit({"event": "equivalence", "batch": int(ref.shape[0]),
              "max_rel_diff": float(np.abs(z - ref).max() / max(np.abs(ref).max(), 1e-30))})
    peak = getattr(fw, "peak_bytes", lambda: 0)
    if "inference" in spec:
        _inference_workload(a, spec, fw)
        emit({"event": "done", "peak_bytes": peak(), "peak_rss_bytes": peak_rss_bytes()})
        return

    xtr, ytr, xte, yte = load_data(a, spec)
    nb, nvb = _batches(len(ytr), B, a.max_batches), _batches(len(yte), B, a.max_batches)
    if nb == 0 or nvb == 0:
        fail("the data hold no full batch of %d (train %d, test %d examples)" % (B, len(ytr), len(yte)))
    bce = loss == "sigmoid_binary_cross_entropy"
    per_example = sigmoid_bce if bce else softmax_xent
    masks = Masks(layers, B)
    step, last, confusion = 0, time.monotonic(), None
    for e in range(1, a.epochs + 1):
        idx = shuffled(len(ytr), a.seed, e) if a.shuffle else np.arange(len(ytr))
        lsum, t0 = 0.0, time.perf_counter()
        for b in range(nb):
            sel = idx[b * B:(b + 1) * B]
            lsum += float(fw.train_step(xtr[sel], ytr[sel], masks.step(a.seed, step), step + 1))
            step += 1
            if e == 1 and b == 0:
                t_first = time.perf_counter()
            if budget > 0 and e == 1 and capped(b, nb, t_start, t_first, budget / (a.epochs + 1)):
                nb = b + 1
                nvb = min(nvb, nb)
                break
            now = time.monotonic()
            if now - last > 2.0:
                emit({"event": "progress", "epoch": e, "batch": b + 1, "batches": nb})
                last = now
        train_s = time.perf_counter() - t0
        loss_e = lsum / (nb * B)
        if loss_e != loss_e:
            fail("training diverged: loss is NaN in epoch %d" % e)
        t1 = time.perf_counter()
        correct, vloss, scores = 0, 0.0, []
        conf = np.zeros(C * C, dtype=np.int64)
        for b in range(nvb):
            y = yte[b * B:(b + 1) * B]
            z = np.asarray(fw.forward(xte[b * B:(b + 1) * B]))
            vloss += float(per_example(z, y).sum())
            pred = z.argmax(1)
            correct += int((pred == y).sum())
            conf += np.bincount(y * C + pred, minlength=C * C)
            if bce:
                with np.errstate(over="ignore"):
                    scores.append(np.float32(1.0) / (np.float32(1.0) + np.exp(-z.astype(np.float32))))
        val_s = time.perf_counter() - t1
        confusion = conf.reshape(C, C).tolist()
        acc = correct / (nvb * B)
        if bce:   # the mean per-class ROC AUC, as train.c (nn_mean_roc_auc)
            acc = mean_roc_auc(np.concatenate(scores), one_hot(yte[:nvb * B], C))
            if acc != acc:
                fail("no class has both positive and negative examples in the %d validation images" % (nvb * B))
        emit({"event": "epoch", "epoch": e, "train_s": train_s, "val_s": val_s, "loss": loss_e,
              "val_loss": vloss / (nvb * B), "accuracy": acc, "train_images": nb * B, "test_images": nvb * B})
        last = time.monotonic()
    # inference timed apart: the test batches through the trained model, outputs copied to the host
    best, passes = infer_timed(fw, xte, nvb, B)
    emit({"event": "inference", "timed_s": best, "images": nvb * B, "passes": passes})
    emit({"event": "done", "confusion": confusion, "peak_bytes": peak(), "peak_rss_bytes": peak_rss_bytes()})
