#!/usr/bin/python3
"""mindspore_perf — one MindSpore cell of `make bench-cpu`: a workload of workloads/*.json built from showdown's layer
plan by the mindspore runner (workloads/runners/mindspore_runner.py: mindspore.ops, NCHW, the native initial
weights), timed on one resident synthetic batch as torch_perf.py times PyTorch. Settings:
  pynative  the runner as it ships: PyNative mode, the spec's optimizer arithmetic written back with set_data
  graph     MindSpore's fast path: the training step (value_and_grad and MindSpore's own optimizer, nn.Momentum /
            nn.Adam / nn.RMSProp / nn.Adadelta with the spec's settings) and the forward compiled by ms.jit
Both with MindSpore's CPU operator threads set to --threads. The runner's dropout masks (one fixed set) in both.
Numbers checked: the graph first step's loss against the PyNative loss of the same weights and batch
(check_rel_diff; above 1e-4 the cell fails).
Prints one JSON object on stdout (torch_perf's fields); a workload the runner cannot build prints
{"unsupported": ...} and exits 4."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perf_common as pc  # noqa: E402  (standard library only until flush_denormals has run)

SETTINGS = ("pynative", "graph")
CHECK_TOLERANCE = 1e-4


def own_optimizer(nn, o, params):
    """The spec's optimizer as MindSpore's own class."""
    if o.name == "sgd":
        return nn.Momentum(params, learning_rate=o.lr, momentum=o.mom)
    if o.name == "adam":
        return nn.Adam(params, learning_rate=o.lr, beta1=o.b1, beta2=o.b2, eps=o.eps)
    if o.name == "rmsprop":
        return nn.RMSProp(params, learning_rate=o.lr, decay=o.rho, epsilon=o.eps)
    return nn.Adadelta(params, learning_rate=o.lr, rho=o.rho, epsilon=o.eps)


def run(a, flushed):
    os.environ.setdefault("GLOG_v", "3")
    import mindspore as ms
    if hasattr(ms, "device_context"):
        ms.device_context.cpu.op_tuning.threads_num(a.threads)
    sys.path.insert(0, pc.RUNNERS)
    import mindspore_runner as mr
    cell = pc.Cell(a, mr.MindSpore)
    fw = mr.MindSpore(cell.ns)
    fw.loss = cell.loss
    fw.build(cell.layers, cell.params, cell.opt, cell.B)
    ops, np = fw.ops, cell.np
    out = cell.result(a, "mindspore", fw.version, os.path.dirname(ms.__file__), flushed)
    masks_np = cell.rc.Masks(cell.layers, cell.B).step(42, 0)
    x = ms.Tensor(cell.x)
    if a.setting == "pynative":
        train = None
        if not cell.inference:
            def train():
                fw.train_step(cell.x, cell.y, masks_np, 1)
        return pc.time_phases(cell, out, a, train, lambda: fw.forward(cell.x))

    from mindspore import nn

    def forward_fn(x):
        return fw._forward(x, None)
    fwd = ms.jit(forward_fn)
    if cell.inference:
        return pc.time_phases(cell, out, a, None, lambda: fwd(x).asnumpy())
    y = ms.Tensor(cell.y.astype(np.int32))
    masks = [ms.Tensor(m) for m in masks_np]
    opt = own_optimizer(nn, cell.opt, fw.vars)

    def loss_fn(x, y, masks):
        return ops.cross_entropy(fw._forward(x, masks), y)
    ref = float(loss_fn(x, y, masks).asnumpy())
    grad_fn = ms.value_and_grad(loss_fn, None, opt.parameters)

    def step_fn(x, y, masks):
        lv, grads = grad_fn(x, y, masks)
        opt(grads)
        return lv
    step = ms.jit(step_fn)
    first = []

    def train():
        v = float(step(x, y, masks).asnumpy())
        if not first:
            first.append(v)
    out = pc.time_phases(cell, out, a, train, lambda: fwd(x).asnumpy())
    out["check_rel_diff"] = abs(first[0] - ref) / max(abs(ref), 1e-30)
    if out["check_rel_diff"] > CHECK_TOLERANCE:
        raise SystemExit("mindspore_perf: graph loss %.7g differs from PyNative's %.7g" % (first[0], ref))
    return out


if __name__ == "__main__":
    sys.exit(pc.main(__doc__, SETTINGS, run))
