#!/usr/bin/python3
"""mindspore_perf — one MindSpore cell of `make bench-cpu`: a workload of workloads/*.json built from showdown's layer
plan, the native initial weights, timed on one resident synthetic batch as torch_perf.py times PyTorch. Settings:
  pynative  the runner as it ships (workloads/runners/mindspore_runner.py): PyNative mode, mindspore.ops layer by
            layer, the spec's optimizer arithmetic written back with set_data
  graph     MindSpore's own fast path: the plan as one nn.Cell of stock cells (nn.Conv2d, nn.BatchNorm2d, nn.Dense
            ...) whose construct runs the layers unrolled, MindSpore's own loss (nn.SoftmaxCrossEntropyWithLogits,
            nn.BCEWithLogitsLoss) and optimizer (nn.Momentum / nn.Adam / nn.RMSProp / nn.Adadelta with the spec's
            settings) in nn.TrainOneStepCell, compiled in GRAPH_MODE; for a model with convolutions oneDNN capped
            at AVX2 (ONEDNN_MAX_CPU_ISA): on an AVX-512 CPU MindSpore's plain-layout (NCHW) convolutions get
            oneDNN's jit_uni_ncsp with a reference kernel inside (mnist_cnn ~30x slower), at AVX2 its gemm:jit
            kernel (a model without convolutions keeps AVX-512: its matrix products are faster with it)
A recurrent workload (embedding, GRU, LSTM) is n/a in graph: its stock cells are not wired in.
Both with MindSpore's CPU operator threads set to --threads (25 unless told). The runner's dropout masks (one fixed
set) in both. Numbers checked: the graph step's first loss against the shipped step's on the same weights and
batch (check_rel_diff; above 1e-4 the cell fails).
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


def graph_net(ms, nn, ops, rc, layers, params):
    """The plan as one nn.Cell: a stock cell per layer with the native weights, wrapped so that every layer reads
    its inputs from the tuple of outputs so far (0: the model input, i + 1: layer i's); construct appends the
    layers' outputs in plan order, a loop over a CellList that graph compilation unrolls."""

    class One(nn.Cell):   # a stock cell on one input
        def __init__(self, inner, j):
            super().__init__()
            self.inner, self.j = inner, j

        def construct(self, outs, masks):
            return self.inner(outs[self.j])

    class Dropout(nn.Cell):   # the runner's mask k multiplied in, in training
        def __init__(self, j, k):
            super().__init__()
            self.j, self.k = j, k

        def construct(self, outs, masks):
            if self.training:
                return outs[self.j] * masks[self.k]
            return outs[self.j]

    class Add(nn.Cell):
        def __init__(self, ins):
            super().__init__()
            self.ins = ins

        def construct(self, outs, masks):
            y = outs[self.ins[0]]
            for j in self.ins[1:]:
                y = y + outs[j]
            return y

    class Concat(nn.Cell):   # along the channels
        def __init__(self, ins):
            super().__init__()
            self.ins, self.cat = ins, ops.Concat(axis=1)

        def construct(self, outs, masks):
            return self.cat(tuple(outs[j] for j in self.ins))

    class GlobalAvgPool(nn.Cell):
        def __init__(self):
            super().__init__()
            self.mean = ops.ReduceMean(keep_dims=True)

        def construct(self, x):
            return self.mean(x, (2, 3))

    class Net(nn.Cell):
        def __init__(self, seq):
            super().__init__()
            self.seq = nn.CellList(seq)

        def construct(self, x, masks):
            outs = (x,)
            for c in self.seq:
                outs = outs + (c(outs, masks),)
            return outs[-1]

    def pad(L, padding):   # padding: a convolution's (top, bottom, left, right), a pool's (h, w)
        return {"pad_mode": "pad", "padding": padding} if L.p != (0, 0) else {"pad_mode": "valid"}

    def stock(L, p):
        T = ms.Tensor
        if L.op == "conv2d":
            return nn.Conv2d(L.in_shape[0], L.units, L.k, stride=L.s, has_bias=p[1] is not None, weight_init=T(p[0]),
                             bias_init=None if p[1] is None else T(p[1]),
                             **pad(L, (L.p[0], L.p[0], L.p[1], L.p[1])))
        if L.op == "dense":
            return nn.Dense(L.in_shape[0], L.units, has_bias=p[1] is not None, weight_init=T(p[0]),
                            bias_init=None if p[1] is None else T(p[1]))
        if L.op == "batchnorm":   # MindSpore's momentum is the running statistics' weight; the unbiased variance
            bn = nn.BatchNorm2d if L.in_shape[1] * L.in_shape[2] > 1 else nn.BatchNorm1d
            return bn(L.in_shape[0], eps=L.eps, momentum=1.0 - L.momentum, gamma_init=T(p[0]), beta_init=T(p[1]))
        if L.op == "maxpool":
            return nn.MaxPool2d(L.k, L.s, **pad(L, L.p))
        if L.op == "avgpool":   # padded positions out of the count, as native
            return nn.AvgPool2d(L.k, L.s, count_include_pad=False, **pad(L, L.p))
        if L.op == "global_avgpool":
            return GlobalAvgPool()
        if L.op == "relu":
            return nn.ReLU()
        if L.op == "flatten":
            return nn.Flatten()
        if L.op in ("embedding", "repeat_vector", "gru", "lstm"):
            raise rc.Unsupported("%s in the graph setting (its network is MindSpore's stock cells; nn.Embedding and "
                                 "nn.GRU/nn.LSTM with the native weights are not wired in: the pynative setting "
                                 "runs it)" % L.op)
        raise rc.Unsupported(L.op)

    drops = [L.i for L in layers if L.op == "dropout" and L.rate > 0]
    seq = []
    for L in layers:
        ins = tuple(j + 1 for j in L.inputs)
        if L.op == "dropout":
            seq.append(Dropout(ins[0], drops.index(L.i)) if L.i in drops else One(nn.Identity(), ins[0]))
        elif L.op == "add":
            seq.append(Add(ins))
        elif L.op == "concat":
            seq.append(Concat(ins))
        else:
            seq.append(One(stock(L, params.get(L.i)), ins[0]))
    return Net(seq)


def run(a, flushed):
    os.environ.setdefault("GLOG_v", "3")
    sys.path.insert(0, pc.RUNNERS)
    import mindspore_runner as mr   # its class imports mindspore
    cell = pc.Cell(a, mr.MindSpore)
    # oneDNN reads its ISA cap once, and MindSpore takes its thread count once, per process: main runs each
    # setting of a list in a process of its own; the cell records the cap it ran with
    if a.setting == "graph" and any(L.op == "conv2d" for L in cell.layers):
        os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")
    import mindspore as ms
    from mindspore import nn, ops
    ms.device_context.cpu.op_tuning.threads_num(a.threads)
    fw = mr.MindSpore(cell.ns)
    ms.set_context(mode=ms.PYNATIVE_MODE)   # the shipped step, and the reference of the graph one
    fw.loss = cell.loss
    np = cell.np
    out = cell.result(a, "mindspore", fw.version, os.path.dirname(ms.__file__), flushed)
    out["onednn_max_cpu_isa"] = os.environ.get("ONEDNN_MAX_CPU_ISA", "default")
    masks_np = cell.rc.Masks(cell.layers, cell.B).step(42, 0)
    if a.setting == "pynative":
        fw.build(cell.layers, cell.params, cell.opt, cell.B)
        train = None
        if not cell.inference:
            def train():
                fw.train_step(cell.x, cell.y, masks_np, 1)
        return pc.time_phases(cell, out, a, train, lambda: fw.forward(cell.x))

    net = graph_net(ms, nn, ops, cell.rc, cell.layers, cell.params)
    x = ms.Tensor(cell.x)
    masks = tuple(ms.Tensor(m) for m in masks_np)
    if not cell.inference:   # the shipped step's first loss on the same weights and batch, before graph mode
        fw.build(cell.layers, cell.params, cell.opt, cell.B)
        ref = fw.train_step(cell.x, cell.y, masks_np, 1) / cell.B
        bce = cell.loss == "sigmoid_binary_cross_entropy"
        y = ms.Tensor(cell.rc.one_hot(cell.y, cell.classes) if bce else cell.y.astype(np.int32))
        loss = nn.BCEWithLogitsLoss() if bce else nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")

        class WithLoss(nn.Cell):
            def __init__(self):
                super().__init__()
                self.net, self.loss = net, loss

            def construct(self, x, y, *masks):
                return self.loss(self.net(x, masks), y)
        step = nn.TrainOneStepCell(WithLoss(), own_optimizer(nn, cell.opt, net.trainable_params()))
    ms.set_context(mode=ms.GRAPH_MODE)
    first = []

    def train():
        if not net.training:
            net.set_train(True)
        v = float(step(x, y, *masks).asnumpy())
        if not first:
            first.append(v)

    def infer():
        if net.training:
            net.set_train(False)
        net(x, ()).asnumpy()
    out = pc.time_phases(cell, out, a, None if cell.inference else train, infer)
    if not cell.inference:
        out["check_rel_diff"] = abs(first[0] - ref) / max(abs(ref), 1e-30)
        if out["check_rel_diff"] > CHECK_TOLERANCE:
            raise SystemExit("mindspore_perf: graph loss %.7g differs from the shipped step's %.7g" % (first[0], ref))
    return out


if __name__ == "__main__":
    pc.exit_now(pc.main(__doc__, SETTINGS, run, apart=True))
