#!/usr/bin/python3
"""torch_perf — PyTorch CPU on the same models, batch and threads as `showdown perf`: steady-state training
and inference images/s on one resident synthetic batch (median of repeats). The caller sets the OpenMP
environment (as shipped, or OMP_WAIT_POLICY=passive) and --flush-denormal; conv models are timed in NCHW and
channels-last. Prints one JSON document on stdout."""
import argparse
import json
import os
import sys
import time

import torch
from torch import nn


def mnist_mlp():
    m = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Dropout(0.2), nn.Linear(512, 512),
                      nn.ReLU(), nn.Dropout(0.2), nn.Linear(512, 10))
    return m, (1, 28, 28), 128, lambda p: torch.optim.RMSprop(p, lr=0.001, alpha=0.9, eps=1e-7)


def mnist_cnn():
    m = nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Dropout(0.25), nn.Flatten(), nn.Linear(9216, 128), nn.ReLU(), nn.Dropout(0.5),
                      nn.Linear(128, 10))
    return m, (1, 28, 28), 128, lambda p: torch.optim.Adadelta(p, lr=1.0, rho=0.95, eps=1e-7)


def cifar10_vgg():
    m = nn.Sequential(nn.Conv2d(3, 50, 3, padding=1), nn.ReLU(), nn.Conv2d(50, 50, 3, padding=1),
                      nn.MaxPool2d(2), nn.ReLU(), nn.Dropout(0.25), nn.Conv2d(50, 100, 3, padding=1), nn.ReLU(),
                      nn.Conv2d(100, 100, 3, padding=1), nn.MaxPool2d(2), nn.ReLU(), nn.Dropout(0.25),
                      nn.Flatten(), nn.Linear(6400, 512), nn.ReLU(), nn.Dropout(0.5), nn.Linear(512, 10))
    return m, (3, 32, 32), 64, lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9)


MODELS = {"mnist_mlp": mnist_mlp, "mnist_cnn": mnist_cnn, "cifar10_vgg": cifar10_vgg}


def median_time(fn, seconds, repeat):
    fn()
    t0 = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t0, 1e-6)
    k = max(1, min(1000, int(seconds / repeat / once)))
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(k):
            fn()
        ts.append((time.perf_counter() - t0) / k)
    ts.sort()
    return ts[len(ts) // 2]


def run(name, threads, seconds, repeat, channels_last):
    torch.manual_seed(0)
    model, shape, batch, opt_fn = MODELS[name]()
    x = torch.rand((batch,) + shape)
    y = torch.randint(0, 10, (batch,))
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    opt = opt_fn(model.parameters())
    loss_fn = nn.CrossEntropyLoss()

    def train_step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    def infer_step():
        with torch.no_grad():
            model(x)

    model.train()
    ts = median_time(train_step, seconds, repeat)
    model.eval()
    ti = median_time(infer_step, seconds / 2, repeat)
    return {"workload": name, "batch": batch, "threads": threads, "channels_last": channels_last,
            "train_images_per_s": batch / ts, "infer_images_per_s": batch / ti}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--workload", default="mnist_mlp,mnist_cnn,cifar10_vgg")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--flush-denormal", action="store_true",
                    help="torch.set_flush_denormal(True): denormals flushed to zero, as showdown's CPU back-ends do")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    flushed = bool(a.flush_denormal and torch.set_flush_denormal(True))
    runs = []
    for name in a.workload.split(","):
        layouts = [False] if name == "mnist_mlp" else [False, True]
        for cl in layouts:
            r = run(name, a.threads, a.seconds, a.repeat, cl)
            print("torch %-12s %-13s train %9.1f img/s  infer %9.1f img/s" % (
                name, "channels-last" if cl else "nchw", r["train_images_per_s"], r["infer_images_per_s"]),
                file=sys.stderr, flush=True)
            runs.append(r)
    a_, b_ = torch.rand(2048, 2048), torch.rand(2048, 2048)
    sgemm = 2 * 2048 ** 3 / median_time(lambda: torch.mm(a_, b_), 2.0, 3) / 1e9
    print("torch sgemm 2048^3: %.0f GFLOP/s (OPENBLAS_CORETYPE=%s)" % (sgemm, os.environ.get("OPENBLAS_CORETYPE", "auto")),
          file=sys.stderr, flush=True)
    json.dump({"format": "showdown-torch-perf/1", "torch": torch.__version__, "torch_sgemm_gflops": sgemm,
               "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "(unset)"), "flush_denormal": flushed,
               "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE", "(auto)"), "runs": runs}, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
