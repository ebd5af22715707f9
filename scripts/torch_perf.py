#!/usr/bin/python3
"""torch_perf — one PyTorch cell of `make bench-cpu`: a workload of workloads/*.json, built from showdown's layer
plan as the pytorch runner builds it (same layers and parameter counts, PyTorch's own dropout and torch.optim), timed at one
setting on one resident synthetic batch, as `showdown perf` times the native engine: steady-state training
and inference images/s, the median of --repeat timed windows. Settings:
  shipped        eager, NCHW, torch.no_grad for inference, nothing flushed: what a user's code gets by default
  eager          eager NCHW, denormals flushed (as showdown's CPU back-ends), torch.inference_mode
  channels_last  eager with the model and batch in channels-last (convolution models)
  compile        torch.compile (inductor, CPU) of the training step's model, or of the inference model with
                 inductor's weight freezing for an inference workload
--precision bf16: every setting under torch.autocast("cpu", bfloat16), training and inference; the parameters,
optimizer state and loss stay fp32.
Every setting but shipped runs, from bench_table, with glibc malloc's mmap threshold fixed (GLIBC_TUNABLES,
bench_table.TORCH_MALLOC), so that a pass's tensors are not mapped and faulted in afresh.
Prints one JSON object on stdout; the caller (scripts/bench_table.py) runs each cell in its own process and
reads its peak memory (max RSS) from the kernel."""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "workloads", "runners"))

import torch  # noqa: E402
from torch import nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import pytorch_runner as pr  # noqa: E402
import runner_common as rc  # noqa: E402
import perf_common as pc  # noqa: E402
from perf_common import median_time  # noqa: E402  (the cells' one timing rule)

SETTINGS = ("shipped", "eager", "channels_last", "compile")


class Model(nn.Module):
    """The pytorch runner's graph as one module (so .to, .train and torch.compile see all of it). Dropout is
    PyTorch's own: the runner's native masks are for equal numbers, a peer at its best uses its own."""

    def __init__(self, fw):
        super().__init__()
        self.fw, self.mods = fw, fw.model
        for k, L in enumerate(fw.layers):
            if L.op == "dropout" and L.rate > 0:
                fw.fns[k] = lambda xs, m, r=L.rate: F.dropout(xs[0], r, training=self.training)

    def forward(self, x):
        return self.fw._forward(x, None)


def build(a, spec_path, spec):
    """The workload's layers from `showdown bench --describe --json`, built by the pytorch runner with the native
    initial weights."""
    ns = argparse.Namespace(plan=None, showdown=a.showdown, spec=spec_path, threads=a.threads, device="cpu",
                            precision="fp32", cudnn_benchmark=0, seed=42)
    layers = rc.load_plan(ns, spec)
    fw = pr.PyTorch(ns)
    fw.loss = spec["model"].get("loss", "softmax_cross_entropy")
    fw.build(layers, rc.init_params(layers, spec, 42), None, 0)
    return Model(fw), layers


def optimizer(params, o):
    name, lr = o["name"], float(o.get("lr", {"sgd": 0.01, "rmsprop": 0.001, "adadelta": 1.0, "adam": 0.001}[o["name"]]))
    eps = float(o.get("eps", 1e-7))
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=float(o.get("momentum", 0.0)))
    if name == "adam":
        return torch.optim.Adam(params, lr=lr, betas=(float(o.get("beta1", 0.9)), float(o.get("beta2", 0.999))), eps=eps)
    if name == "rmsprop":
        return torch.optim.RMSprop(params, lr=lr, alpha=float(o.get("rho", 0.9)), eps=eps)
    if name == "adadelta":
        return torch.optim.Adadelta(params, lr=lr, rho=float(o.get("rho", 0.95)), eps=eps)
    raise ValueError("unknown optimizer %r" % name)


def batch_of(spec, layers, B):
    """A synthetic batch of the spec's input: token ids for an embedding model, uniform images otherwise."""
    shape = tuple(int(v) for v in spec["data"]["shape"])
    emb = [L for L in layers if L.op == "embedding"]
    g = torch.Generator().manual_seed(12345)
    if emb:
        return torch.randint(0, emb[0].vocab, (B,) + shape, generator=g).float()
    return torch.rand((B,) + shape, generator=g)


def compiled(model, freeze=False):
    if not hasattr(torch, "compile"):
        raise SystemExit("torch_perf: torch %s has no torch.compile (PyTorch 2.0 or later)" % torch.__version__)
    if freeze:   # weights become constants: inductor folds and prepacks them (inference only)
        import torch._inductor.config as ic
        ic.freezing = True
    return torch.compile(model)


def run(a):
    spec_path = os.path.join(a.workloads, a.workload + ".json")
    with open(spec_path) as f:
        spec = json.load(f)
    inference = "inference" in spec
    B = a.batch or int((spec.get("inference") or spec.get("training"))["batch"])
    torch.manual_seed(0)
    model, layers = build(a, spec_path, spec)
    conv = any(L.op == "conv2d" for L in layers)
    x = batch_of(spec, layers, B)
    if a.setting == "channels_last" or (a.setting == "compile" and conv and a.compile_channels_last):
        if not conv:
            raise SystemExit("torch_perf: %s has no convolution: channels-last does not apply" % a.workload)
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    out = {"format": "showdown-torch-cell/1", "workload": a.workload, "setting": a.setting, "batch": B,
           "threads": torch.get_num_threads(), "torch": torch.__version__, "torch_path": os.path.dirname(torch.__file__),
           "flush_denormal": False, "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "(unset)"),
           "mode": "inference" if inference else "training", "train_images_per_s": None, "infer_images_per_s": None}
    if a.setting != "shipped":
        out["flush_denormal"] = bool(torch.set_flush_denormal(True))
    grad_off = torch.no_grad if a.setting == "shipped" else torch.inference_mode
    amp = lambda: torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.precision == "bf16")  # noqa: E731
    out["precision"] = a.precision
    t_compile = 0.0
    if not inference:
        classes = int(spec["data"]["classes"])
        y = torch.arange(B) % classes
        bce = spec["model"]["loss"] == "sigmoid_binary_cross_entropy"
        target = F.one_hot(y, classes).float() if bce else y
        opt = optimizer(model.parameters(), spec["training"]["optimizer"])
        fwd = model
        if a.setting == "compile":
            fwd = compiled(model)

        def train_step():
            opt.zero_grad(set_to_none=True)
            with amp():
                z = fwd(x).float()
            loss = F.binary_cross_entropy_with_logits(z, target) if bce else F.cross_entropy(z, y)
            loss.backward()
            opt.step()

        model.train()
        if a.setting == "compile":   # the first call compiles: timed apart, not in the median
            t0 = time.perf_counter()
            train_step()
            t_compile = time.perf_counter() - t0
        ts, windows, _ = median_time(train_step, a.seconds, a.repeat)
        out["train_images_per_s"], out["train_windows_s"] = B / ts, windows
    model.eval()
    fwd = model
    if a.setting == "compile" and inference:
        fwd = compiled(model, freeze=True)
        with grad_off():
            t0 = time.perf_counter()
            with amp():
                fwd(x)
            t_compile = time.perf_counter() - t0
    if a.setting == "compile" and not inference:
        out["infer_images_per_s"] = None   # compiling the eval graph too would double the cost; eager gives it
    else:
        def infer_step():
            with grad_off(), amp():
                fwd(x)
        ti, windows, _ = median_time(infer_step, a.seconds / 2 if not inference else a.seconds, a.repeat)
        out["infer_images_per_s"], out["infer_windows_s"] = B / ti, windows
    out["compile_s"] = t_compile
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", required=True)
    ap.add_argument("--setting", type=pc.setting_list(SETTINGS), default=["shipped"],
                    help="one of %s, or a comma list run in turn in this process (one JSON line each; what one "
                         "leaves, flushed denormals or compiled code, stays for the next)" % ", ".join(SETTINGS))
    ap.add_argument("--workloads", default=os.path.join(HERE, "..", "workloads"))
    ap.add_argument("--showdown", help="the showdown binary that gives the layer plan (default $SHOWDOWN, ./showdown)")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--batch", type=int, default=0, help="batch size (default: the workload's)")
    ap.add_argument("--seconds", type=float, default=4.0, help="time budget of the timed training steps")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--compile-channels-last", action="store_true", help="compile the channels-last model")
    ap.add_argument("--precision", choices=("fp32", "bf16"), default="fp32", help="bf16: under torch.autocast")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    return pc.each_setting(a, run)


if __name__ == "__main__":
    pc.exit_now(main())
