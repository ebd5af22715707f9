"""runner_common -- what every framework runner of workloads/runners/PROTOCOL.md shares, written once.

The protocol (arguments, JSON lines), the spec's layers with inferred shapes (one function per layer kind
in SHAPES), the native engine's data (idx, CIFAR-10, the synthetic stream bit for bit), its initial weights,
shuffle order, dropout masks and optimizer arithmetic (src/nn/kernels.h), the equivalence check against
`showdown bench --export-weights` files, and the timed training loop. A framework runner supplies one class
(see Framework below) and calls main(); it never re-implements any of this.
Needs numpy only; the framework is imported by the runner after the thread settings are in the environment.
"""
import argparse
import gzip
import json
import os
import sys
import time

PROTOCOL = 1


def emit(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def fail(message, kind="failed", code=1):
    """kind: "failed", "unavailable" (framework or device absent) or "unsupported" (an op it lacks)."""
    emit({"event": "error", "kind": kind, "message": message})
    sys.exit(code)


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


def load_data(a):
    if a.data == "idx":
        return load_idx(a.train_images, a.train_labels) + load_idx(a.test_images, a.test_labels)
    if a.data == "cifar10":
        return load_cifar10(a.cifar_dir, 0) + load_cifar10(a.cifar_dir, 1)
    shape = tuple(int(v) for v in a.shape.split(","))
    return (synthetic(a.train_n, shape, a.classes, a.synthetic_seed, 0) +
            synthetic(a.test_n, shape, a.classes, a.synthetic_seed, 1))


# ---- the spec's layers with shapes: one function per layer kind ------------------------------------------
class Layer:
    """One spec layer: index i (0-based, as the native plan), op, its spec dict l, input shape (c, h, w),
    output shape, and flat_src: the (C, H, W) map a flat input was flattened from (None if not), which an NHWC
    framework needs to reorder dense weights and dropout masks."""

    def __init__(self, i, l, shape, flat_src):
        self.i, self.l, self.op = i, l, l["op"]
        self.in_shape, self.flat_src = shape, flat_src
        self.out_shape, self.out_flat_src = shape, flat_src
        self.k = self.s = self.p = None
        self.bias = bool(l.get("bias", True))
        self.units = 0
        self.rate = float(l.get("rate", 0.0))


def _pair(v, default):
    if v is None:
        return default
    return (int(v[0]), int(v[1])) if isinstance(v, list) else (int(v), int(v))


def _padding(l, k):
    p = l.get("padding", "valid")
    if p == "valid":
        return (0, 0)
    if p == "same":
        return (k[0] // 2, k[1] // 2)
    return _pair(p, (0, 0))


def _window(L, key, default_stride):
    c, h, w = L.in_shape
    L.k = _pair(L.l[key], None)
    L.s = _pair(L.l.get("stride"), L.k if default_stride else (1, 1))
    L.p = _padding(L.l, L.k)
    return (h + 2 * L.p[0] - L.k[0]) // L.s[0] + 1, (w + 2 * L.p[1] - L.k[1]) // L.s[1] + 1


def _shape_conv2d(L):
    oh, ow = _window(L, "kernel", False)
    L.units = int(L.l["filters"])
    L.out_shape, L.out_flat_src = (L.units, oh, ow), None


def _shape_maxpool(L):
    oh, ow = _window(L, "size", True)
    L.out_shape, L.out_flat_src = (L.in_shape[0], oh, ow), None


def _shape_dense(L):
    c, h, w = L.in_shape
    if h != 1 or w != 1:
        raise ValueError("layer %d: dense after a %dx%dx%d feature map needs flatten" % (L.i + 1, c, h, w))
    L.units = int(L.l["units"])
    L.out_shape, L.out_flat_src = (L.units, 1, 1), None


def _shape_flatten(L):
    c, h, w = L.in_shape
    L.out_shape = (c * h * w, 1, 1)
    L.out_flat_src = (c, h, w) if h * w > 1 else L.flat_src


def _shape_same(L):
    pass


SHAPES = {"conv2d": _shape_conv2d, "maxpool": _shape_maxpool, "dense": _shape_dense, "flatten": _shape_flatten,
          "relu": _shape_same, "dropout": _shape_same}
WEIGHTED = ("conv2d", "dense")


def plan(spec):
    shape, flat_src, layers = tuple(int(v) for v in spec["data"]["shape"]), None, []
    for i, l in enumerate(spec["model"]["layers"]):
        if l["op"] not in SHAPES:
            raise Unsupported(l["op"])
        L = Layer(i, l, shape, flat_src)
        SHAPES[L.op](L)
        shape, flat_src = L.out_shape, L.out_flat_src
        layers.append(L)
    if spec["model"].get("loss", "softmax_cross_entropy") != "softmax_cross_entropy":
        raise Unsupported("loss " + str(spec["model"]["loss"]))
    return layers


def native_shapes(L):
    """Weight and bias shapes in the native layout (dense [out][in], conv [out][in][kh][kw])."""
    c = L.in_shape[0]
    if L.op == "conv2d":
        return (L.units, c, L.k[0], L.k[1]), (L.units,)
    return (L.units, c), (L.units,)


def init_params(layers, spec, seed):
    """{layer index: (W, b or None)} with the native engine's exact initial numbers (nn_model_init_params)."""
    init, out = spec["model"].get("init", {}), {}
    for L in layers:
        if L.op not in WEIGHTED:
            continue
        ws, bs = native_shapes(L)
        rf = ws[2] * ws[3] if len(ws) == 4 else 1
        if init.get("weights", "glorot_uniform") == "glorot_uniform":
            limit = np.float32(np.sqrt(6.0 / (ws[1] * rf + ws[0] * rf)))
            lseed = h64s(seed ^ h64s(0x5EED + L.i))
            u = u01(h64(U(lseed) ^ h64(np.arange(int(np.prod(ws)), dtype=np.uint64))))
            W = ((np.float32(2.0) * u - np.float32(1.0)) * limit).reshape(ws)
        else:
            W = np.zeros(ws, np.float32)
        out[L.i] = (W, np.zeros(bs, np.float32) if L.bias else None)
    return out


def load_export(d, layers):
    """The files of `showdown bench --export-weights` (nn/export.h): params by layer, input, logits."""
    with open(os.path.join(d, "index.json")) as f:
        idx = json.load(f)
    if idx.get("schema") != "showdown-weights/1":
        raise ValueError("%s: not a showdown-weights/1 index" % d)
    by = {}
    for e in idx["params"]:
        by.setdefault(e["layer"], {})[e["role"]] = np.load(os.path.join(d, e["file"]))
    params = {}
    for L in layers:
        if L.op in WEIGHTED:
            ws, bs = native_shapes(L)
            W, b = by[L.i]["weight"], by[L.i].get("bias")
            if W.shape != ws:
                raise ValueError("layer %d: exported weight %s, expected %s" % (L.i + 1, W.shape, ws))
            params[L.i] = (W.astype(np.float32), None if b is None else b.astype(np.float32))
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
class Masks:
    """Per-step inverted-dropout masks (keep / (1 - rate)) for every dropout layer, in native NCHW order."""

    def __init__(self, layers, batch):
        self.layers = [L for L in layers if L.op == "dropout" and L.rate > 0]
        self.hi = {}
        self.shapes = {L.i: (batch,) + (L.in_shape if L.in_shape[1] * L.in_shape[2] > 1 else (L.in_shape[0],))
                       for L in self.layers}

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


# ---- the protocol's command line and main loop ---------------------------------------------------------
def parse_args(description):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--spec", required=True)
    ap.add_argument("--data", required=True)   # idx, cifar10, synthetic; token kinds: their ops are unsupported here
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
    a, _unknown = ap.parse_known_args()   # arguments of later protocol additions (token data ...) are ignored
    return a


def set_threads(n):
    """Thread caps for the math libraries, before any framework is imported."""
    if n > 0:
        for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "TF_NUM_INTRAOP_THREADS"):
            os.environ[k] = str(n)


def softmax_xent(z, y):
    z = z.astype(np.float64)
    m = z.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z - m).sum(axis=1)) + m[:, 0]
    return lse - z[np.arange(len(y)), y]


class Framework:
    """What a runner implements (the names main() calls):
      name, version, device; extras() -> dict for hello (backend versions, threads ...)
      build(layers, params, optimizer, batch): the model with these native-layout weights
      parameters() -> int, counted by the framework itself
      forward(x) -> logits (numpy [n][classes]) in inference mode, x numpy NCHW float32
      train_step(x, y, masks, t) -> summed loss of the batch (float); masks: Masks.step() arrays (NCHW)
    Raise Unsupported(op) for an op the framework lacks."""


def main(make, description):
    """make(args) -> a Framework instance (imports the framework; ImportError => unavailable)."""
    try:
        _main(make, description)
    except SystemExit:
        raise
    except Unsupported as e:
        fail("unsupported: %s" % e, "unsupported", 4)
    except BaseException as e:  # noqa: BLE001 - every failure becomes a protocol error line
        fail("%s: %s" % (type(e).__name__, str(e).strip().splitlines()[-1][:900] if str(e).strip() else ""))


def _main(make, description):
    a = parse_args(description)
    set_threads(a.threads)
    if a.device == "cuda":
        fail("device cuda: this runner runs on the CPU", "unavailable", 3)
    with open(a.spec) as f:
        spec = json.load(f)
    layers = plan(spec)
    try:
        fw = make(a)
    except ImportError as e:
        fail("%s" % e, "unavailable", 3)
    opt = Optimizer(spec["training"]["optimizer"])
    if a.equivalence:
        params, eq_x, eq_z = load_export(a.equivalence, layers)
    else:
        params, eq_x, eq_z = init_params(layers, spec, a.seed), None, None
    B, C = a.batch, int(spec["data"]["classes"])
    fw.build(layers, params, opt, B)
    hello = {"event": "hello", "protocol": PROTOCOL, "framework": fw.name, "version": fw.version,
             "device": fw.device, "device_kind": "cpu", "parameters": int(fw.parameters()),
             "python": sys.version.split()[0], "numpy": np.__version__}
    hello.update(fw.extras())
    emit(hello)
    if eq_x is not None:
        z = np.asarray(fw.forward(eq_x), dtype=np.float64)
        ref = eq_z.astype(np.float64)
        if z.shape != ref.shape:
            raise ValueError("forward output %s, native %s" % (z.shape, ref.shape))
        emit({"event": "equivalence", "batch": int(ref.shape[0]),
              "max_rel_diff": float(np.abs(z - ref).max() / max(np.abs(ref).max(), 1e-30))})

    if a.data not in ("idx", "cifar10", "synthetic"):
        raise Unsupported("data kind " + a.data)
    xtr, ytr, xte, yte = load_data(a)
    nb, nvb = len(ytr) // B, len(yte) // B
    if a.max_batches > 0:
        nb, nvb = min(nb, a.max_batches), min(nvb, a.max_batches)
    if nb == 0 or nvb == 0:
        fail("the data hold no full batch of %d (train %d, test %d examples)" % (B, len(ytr), len(yte)))
    masks = Masks(layers, B)
    step, last, confusion = 0, time.monotonic(), None
    for e in range(1, a.epochs + 1):
        idx = shuffled(len(ytr), a.seed, e) if a.shuffle else np.arange(len(ytr))
        lsum, t0 = 0.0, time.perf_counter()
        for b in range(nb):
            sel = idx[b * B:(b + 1) * B]
            lsum += float(fw.train_step(xtr[sel], ytr[sel], masks.step(a.seed, step), step + 1))
            step += 1
            now = time.monotonic()
            if now - last > 2.0:
                emit({"event": "progress", "epoch": e, "batch": b + 1, "batches": nb})
                last = now
        train_s = time.perf_counter() - t0
        loss = lsum / (nb * B)
        if loss != loss:
            fail("training diverged: loss is NaN in epoch %d" % e)
        t1 = time.perf_counter()
        correct, vloss = 0, 0.0
        conf = np.zeros(C * C, dtype=np.int64)
        for b in range(nvb):
            y = yte[b * B:(b + 1) * B]
            z = np.asarray(fw.forward(xte[b * B:(b + 1) * B]))
            vloss += float(softmax_xent(z, y).sum())
            pred = z.argmax(1)
            correct += int((pred == y).sum())
            conf += np.bincount(y * C + pred, minlength=C * C)
        val_s = time.perf_counter() - t1
        confusion = conf.reshape(C, C).tolist()
        emit({"event": "epoch", "epoch": e, "train_s": train_s, "val_s": val_s, "loss": loss,
              "val_loss": vloss / (nvb * B), "accuracy": correct / (nvb * B), "train_images": nb * B,
              "test_images": nvb * B})
        last = time.monotonic()
    emit({"event": "done", "confusion": confusion, "peak_bytes": 0})
