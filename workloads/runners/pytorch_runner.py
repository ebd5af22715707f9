#!/usr/bin/python3
"""pytorch_runner -- the showdown runner protocol (workloads/runners/PROTOCOL.md) for PyTorch.

Builds any "showdown-workload/1" model from the spec (no per-workload code) and trains it on the same data,
with the same initial weights, data order, dropout masks and optimizer arithmetic as the native engine
(src/nn/model.c, src/nn/train.c, src/nn/kernels.h), printing one JSON line per event on stdout.
Runs with Debian's python3-torch (torch 1.13) and numpy; nothing else.
"""
import argparse
import gzip
import json
import math
import os
import sys
import time

PROTOCOL = 1


def emit(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def fail(message, kind="failed", code=1):
    emit({"event": "error", "kind": kind, "message": message})
    sys.exit(code)


try:
    import numpy as np
except Exception as e:  # noqa: BLE001 - any import failure means the same thing here
    fail("numpy not importable: %s" % e, "unavailable", 3)
try:
    import torch
    import torch.nn.functional as F
except Exception as e:  # noqa: BLE001
    fail("torch not importable: %s" % e, "unavailable", 3)

# ---- the counter-based hash of src/nn/kernels.h (splitmix64 finaliser), on uint64 numpy arrays ----------
M64 = (1 << 64) - 1
U = np.uint64


def h64(x):
    """nn_hash64 over a uint64 array (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        x = x + U(0x9E3779B97F4A7C15)
        x = (x ^ (x >> U(30))) * U(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> U(27))) * U(0x94D049BB133111EB)
        return x ^ (x >> U(31))


def h64s(x):
    """nn_hash64 of one Python int."""
    return int(h64(np.array([x & M64], dtype=np.uint64))[0])


def u01(h):
    """24 random bits -> float32 in [0,1), exactly as the C code: (float)(h >> 40) * (1.0f / 16777216.0f)."""
    return (h >> U(40)).astype(np.float32) * np.float32(1.0 / 16777216.0)


# ---- data: the same files, or the same synthetic stream as src/data/synthetic.c ----------------------
def _open(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


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


def pixels(u8):
    return u8.astype(np.float32) / np.float32(255.0)


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


def syn_key(seed, tag):
    return h64s(seed ^ h64s(tag))


def syn_u64(key, ctr):
    with np.errstate(over="ignore"):
        return h64(U(key) + ctr.astype(np.uint64) * U(GAMMA))


def synthetic(n, shape, classes, seed, split):
    c, h, w = shape
    dim = c * h * w
    kp, kl, kn = syn_key(seed, SYN_PROTO), syn_key(seed, SYN_LABEL + split), syn_key(seed, SYN_NOISE + split)
    proto = u01(syn_u64(kp, np.arange(classes * dim, dtype=np.uint64))).reshape(classes, dim)
    y = (syn_u64(kl, np.arange(n, dtype=np.uint64)) % U(classes)).astype(np.int64)
    x = np.empty((n, dim), dtype=np.float32)
    step = max(1, (1 << 22) // dim)
    for i0 in range(0, n, step):
        i1 = min(n, i0 + step)
        ctr = np.arange(i0 * dim, i1 * dim, dtype=np.uint64)
        noise = u01(syn_u64(kn, ctr)).reshape(i1 - i0, dim)
        v = proto[y[i0:i1]] + NOISE * (np.float32(2.0) * noise - np.float32(1.0))
        x[i0:i1] = np.clip(v, np.float32(0.0), np.float32(1.0))
    return x.reshape(n, c, h, w), y


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


def build(spec, seed):
    """Sequential model + list of (layer index, module) with weights, in the native slab order."""
    c, h, w = spec["data"]["shape"]
    mods, weighted, drops = [], [], []
    for i, l in enumerate(spec["model"]["layers"]):
        op = l["op"]
        if op == "conv2d":
            k = pair(l["kernel"], None)
            s = pair(l.get("stride"), (1, 1))
            p = padding(l, k)
            m = torch.nn.Conv2d(c, int(l["filters"]), k, s, p, bias=l.get("bias", True))
            c, h, w = int(l["filters"]), (h + 2 * p[0] - k[0]) // s[0] + 1, (w + 2 * p[1] - k[1]) // s[1] + 1
            weighted.append((i, m, k[0] * k[1]))
        elif op == "maxpool":
            k = pair(l["size"], None)
            s = pair(l.get("stride"), k)
            p = padding(l, k)
            if p[0] * 2 > k[0] or p[1] * 2 > k[1]:
                raise ValueError("layer %d: maxpool padding %s is more than half the window %s (torch cannot)" %
                                 (i + 1, p, k))
            m = torch.nn.MaxPool2d(k, s, p)
            h, w = (h + 2 * p[0] - k[0]) // s[0] + 1, (w + 2 * p[1] - k[1]) // s[1] + 1
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
        else:
            raise ValueError("layer %d: unknown op %r" % (i + 1, op))
        mods.append(m)
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
    return torch.nn.Sequential(*mods), [m for _, m, _ in weighted], drops


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


# ---- the training loop of src/nn/train.c ----------------------------------------------------------------
def shuffled(n, seed, epoch):
    """Fisher-Yates with the counter-based hash: train.c's shuffle(), the same order for (seed, epoch, n)."""
    s = h64s(seed ^ h64s(0xE90C0000 + epoch))
    i = np.arange(n, dtype=np.uint64)
    j = (h64(U(s) ^ i) % (i + U(1))).astype(np.int64)
    idx = list(range(n))
    for k in range(n - 1, 0, -1):
        jk = j[k]
        idx[k], idx[jk] = idx[jk], idx[k]
    return np.array(idx, dtype=np.int64)


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
    ap.add_argument("--data", required=True, choices=["idx", "cifar10", "synthetic"])
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
    a = ap.parse_args()

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
          "python": sys.version.split()[0], "numpy": np.__version__, "cudnn_benchmark": bool(a.cudnn_benchmark),
          "cudnn": torch.backends.cudnn.version() if dev == "cuda" else None})
    if a.equivalence:
        equivalence(a.equivalence, model, weighted, device)

    if a.data == "idx":
        xtr, ytr = load_idx(a.train_images, a.train_labels)
        xte, yte = load_idx(a.test_images, a.test_labels)
    elif a.data == "cifar10":
        xtr, ytr = load_cifar10(a.cifar_dir, 0)
        xte, yte = load_cifar10(a.cifar_dir, 1)
    else:
        shape = tuple(int(v) for v in a.shape.split(","))
        xtr, ytr = synthetic(a.train_n, shape, a.classes, a.synthetic_seed, 0)
        xte, yte = synthetic(a.test_n, shape, a.classes, a.synthetic_seed, 1)

    opt = Optim(model.parameters(), spec["training"]["optimizer"])
    B, C = a.batch, int(spec["data"]["classes"])
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
            lv = F.cross_entropy(model(x), y, reduction="none")
            lv.mean().backward()
            opt.step()
            step += 1
            lsum += float(lv.detach().sum())
            now = time.monotonic()
            if now - last > 2.0:
                emit({"event": "progress", "epoch": e, "batch": b + 1, "batches": nb})
                last = now
        if dev == "cuda":
            torch.cuda.synchronize()
        train_s = time.perf_counter() - t0
        loss = lsum / (nb * B)
        if loss != loss:
            fail("training diverged: loss is NaN in epoch %d" % e)
        t1 = time.perf_counter()
        model.eval()
        correct, vloss = 0, 0.0
        conf = torch.zeros(C * C, dtype=torch.int64)
        with torch.no_grad():
            for b in range(nvb):
                x = torch.from_numpy(xte[b * B:(b + 1) * B]).to(device)
                y = torch.from_numpy(yte[b * B:(b + 1) * B]).to(device)
                z = model(x)
                vloss += float(F.cross_entropy(z, y, reduction="sum"))
                pred = z.argmax(1)
                correct += int((pred == y).sum())
                conf += torch.bincount((y * C + pred).cpu(), minlength=C * C)
        if dev == "cuda":
            torch.cuda.synchronize()
        val_s = time.perf_counter() - t1
        confusion = conf.view(C, C).tolist()
        emit({"event": "epoch", "epoch": e, "train_s": train_s, "val_s": val_s, "loss": loss,
              "val_loss": vloss / (nvb * B), "accuracy": correct / (nvb * B), "train_images": nb * B,
              "test_images": nvb * B})
        last = time.monotonic()
    peak = torch.cuda.max_memory_allocated() if dev == "cuda" else 0
    emit({"event": "done", "confusion": confusion, "peak_bytes": peak})


if __name__ == "__main__":
    try:
        main()
    except SystemExit:
        raise
    except BaseException as e:  # noqa: BLE001 - report every failure as a protocol error line
        fail("%s: %s" % (type(e).__name__, e))
