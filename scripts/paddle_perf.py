#!/usr/bin/python3
"""paddle_perf — one PaddlePaddle cell of `make bench-cpu`: a workload of workloads/*.json built from showdown's layer
plan by the paddle runner (workloads/runners/paddle_runner.py: paddle.nn.functional ops, NCHW, the native initial
weights), timed on one resident synthetic batch as torch_perf.py times PyTorch. Settings:
  dygraph  the runner as it ships: dynamic graph, the spec's optimizer arithmetic on Paddle tensors (shipped)
  static   Paddle's fast path: the loss and the forward through paddle.jit.to_static (full graph), Paddle's own
           optimizer (paddle.optimizer Momentum / Adam / RMSProp / Adadelta with the spec's settings)
The runner's dropout masks (one fixed set) in both. A recurrent workload of more than STATIC_MAX_STEPS steps is n/a in
static (its unrolled graph compiles for minutes). Numbers checked: the static first step's loss against the
dynamic graph's loss of the same weights and batch (check_rel_diff; above 1e-4 the cell fails).
Prints one JSON object on stdout (torch_perf's fields); a workload the runner cannot build prints
{"unsupported": ...} and exits 4."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perf_common as pc  # noqa: E402  (standard library only until flush_denormals has run)

SETTINGS = ("dygraph", "static")
CHECK_TOLERANCE = 1e-4
# to_static unrolls the runner's loop over a GRU/LSTM's steps (some twenty ops a step) into one graph whose compile
# grows with them: mnist_hrnn's 2 x 28 steps in 27 s, imdb_gru's 150 in 6 min, babi_rnn's 557 over 10 min on a
# 2-core host; past this many the static setting is n/a rather than a cell spent compiling
STATIC_MAX_STEPS = 100


def own_optimizer(paddle, o, params):
    """The spec's optimizer as Paddle's own class."""
    if o.name == "sgd":
        return paddle.optimizer.Momentum(learning_rate=o.lr, momentum=o.mom, parameters=params)
    if o.name == "adam":
        return paddle.optimizer.Adam(learning_rate=o.lr, beta1=o.b1, beta2=o.b2, epsilon=o.eps, parameters=params)
    if o.name == "rmsprop":
        return paddle.optimizer.RMSProp(learning_rate=o.lr, rho=o.rho, epsilon=o.eps, parameters=params)
    return paddle.optimizer.Adadelta(learning_rate=o.lr, rho=o.rho, epsilon=o.eps, parameters=params)


def run(a, flushed):
    sys.path.insert(0, pc.RUNNERS)
    import paddle_runner as pr
    cell = pc.Cell(a, pr.Paddle)
    steps = sum(L.steps for L in cell.layers if L.op in ("gru", "lstm"))
    if a.setting == "static" and steps > STATIC_MAX_STEPS:
        raise cell.rc.Unsupported("%d recurrent steps in the static setting (paddle.jit.to_static unrolls the loop "
                                  "over the steps: minutes of compilation past %d; the dygraph setting runs it)"
                                  % (steps, STATIC_MAX_STEPS))
    fw = pr.Paddle(cell.ns)
    fw.loss = cell.loss
    fw.build(cell.layers, cell.params, cell.opt, cell.B)
    paddle = fw.paddle
    out = cell.result(a, "paddle", fw.version, os.path.dirname(paddle.__file__), flushed)
    x = paddle.to_tensor(cell.x)
    masks_np = cell.rc.Masks(cell.layers, cell.B).step(42, 0)
    train = None
    if a.setting == "dygraph":
        if not cell.inference:
            def train():
                fw.train_step(cell.x, cell.y, masks_np, 1)

        def infer():
            fw.forward(cell.x)
        return pc.time_phases(cell, out, a, train, infer)

    def forward_fn(x):
        return fw._forward(x, None)
    fwd = paddle.jit.to_static(forward_fn, full_graph=True)
    if not cell.inference:
        y = paddle.to_tensor(fw.targets(cell.y))   # labels, or one-hot rows for sigmoid BCE
        masks = [paddle.to_tensor(m) for m in masks_np]

        def loss_fn(x, y, masks):
            return fw.per_example(fw._forward(x, masks), y).mean()
        with paddle.no_grad():
            ref = float(loss_fn(x, y, masks))
        static_loss = paddle.jit.to_static(loss_fn, full_graph=True)
        opt = own_optimizer(paddle, cell.opt, fw.vars)
        first = []

        def train():
            lv = static_loss(x, y, masks)
            lv.backward()
            opt.step()
            opt.clear_grad()
            v = float(lv)
            if not first:
                first.append(v)
        out = pc.time_phases(cell, out, a, train, lambda: fwd(x).numpy())
        out["check_rel_diff"] = abs(first[0] - ref) / max(abs(ref), 1e-30)
        if out["check_rel_diff"] > CHECK_TOLERANCE:
            raise SystemExit("paddle_perf: static loss %.7g differs from the dynamic graph's %.7g" % (first[0], ref))
        return out
    return pc.time_phases(cell, out, a, None, lambda: fwd(x).numpy())


if __name__ == "__main__":
    pc.exit_now(pc.main(__doc__, SETTINGS, run))
