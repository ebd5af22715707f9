#!/usr/bin/python3
"""tinygrad_perf — one tinygrad cell of `make bench-cpu`: a workload of workloads/*.json built from showdown's layer
plan by the tinygrad runner (workloads/runners/tinygrad_runner.py), timed on one resident synthetic batch as
torch_perf.py times PyTorch. One setting, as the runner ships and as tinygrad is meant to be used:
  jit   the runner's training step and forward under TinyJit (the spec's optimizer arithmetic inside the step)
        (a recurrent workload: each GRU/LSTM step a TinyJit cell, the rest of the step eager, as the runner runs it)
The runner's dropout masks (one fixed set). The first calls (capture, kernel compilation) are not in the median.
Prints one JSON object on stdout (torch_perf's fields); a workload the runner cannot build prints
{"unsupported": ...} and exits 4."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perf_common as pc  # noqa: E402  (standard library only until flush_denormals has run)

SETTINGS = ("jit",)


def run(a, flushed):
    sys.path.insert(0, pc.RUNNERS)
    import tinygrad_runner as tr
    cell = pc.Cell(a, tr.Tinygrad)
    fw = tr.Tinygrad(cell.ns)
    fw.loss = cell.loss
    fw.build(cell.layers, cell.params, cell.opt, cell.B)
    out = cell.result(a, "tinygrad", fw.version, os.path.dirname(fw.tinygrad.__file__), flushed)
    masks = cell.rc.Masks(cell.layers, cell.B).step(42, 0)
    train = None
    if not cell.inference:
        def train():
            fw.train_step(cell.x, cell.y, masks, 1)
    return pc.time_phases(cell, out, a, train, lambda: fw.forward(cell.x))


if __name__ == "__main__":
    pc.exit_now(pc.main(__doc__, SETTINGS, run))
