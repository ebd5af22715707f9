#!/usr/bin/python3
"""tf_perf — one TensorFlow cell of `make bench-cpu`: a workload of workloads/*.json built from showdown's layer
plan by the tensorflow runner (workloads/runners/tensorflow_runner.py: tf.nn ops, NHWC, the native initial weights,
the spec's optimizer arithmetic), timed at one setting on one resident synthetic batch as torch_perf.py times
PyTorch: steady-state training and inference images/s, the median of --repeat timed windows. Settings:
  graph   the runner's training step and forward as tf.function (jit_compile=False): TensorFlow's graph executor
  xla     the same functions with jit_compile=True (XLA)
--precision bf16: the runner's bf16 compute (fp32 variables, optimizer and loss) and its bf16 inference forward.
Dropout is TensorFlow's own (tf.nn.experimental.stateless_dropout, a new seed per step inside the step function),
not the runner's native masks. Denormals flushed: TensorFlow's executor and XLA flush them themselves (1e-39 * 1
is 0 in both settings), and FTZ and DAZ are set before TensorFlow starts its thread pools.
The first call of each function (tracing, XLA compilation) is not in the median: compile_s.
Prints one JSON object on stdout (torch_perf's fields, framework/version/path for torch/torch_path); a workload the
runner cannot build prints {"unsupported": ...} and exits 4."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perf_common as pc  # noqa: E402  (standard library only until flush_denormals has run)

SETTINGS = ("graph", "xla")


def run(a, flushed):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.path.insert(0, pc.RUNNERS)
    import tensorflow_runner as tr
    cell = pc.Cell(a, tr.TensorFlow)
    fw = tr.TensorFlow(cell.ns)
    tf, rc, np = fw.tf, cell.rc, cell.np
    # TensorFlow's dropout in place of the native masks: the "mask" the runner hands each dropout layer is its seed
    fw.dropout = lambda L, p, xs, m: (xs[0] if m is None else
                                      tf.nn.experimental.stateless_dropout(xs[0], L.rate, seed=m))
    fw.loss = cell.loss
    fw.build(cell.layers, cell.params, cell.opt, cell.B)
    jit = a.setting == "xla"
    x = tf.constant(rc.to_nhwc(cell.x, None))
    out = cell.result(a, "tensorflow", tf.__version__, os.path.dirname(tf.__file__), flushed)
    out["onednn_opts"] = os.environ.get("TF_ENABLE_ONEDNN_OPTS", "default")

    train = None
    if not cell.inference:
        y = tf.constant(cell.y)
        bc = tf.constant(np.asarray(cell.opt.corrections(1) if cell.opt.name == "adam" else (1.0, 1.0), np.float32))
        counter = tf.Variable(0, dtype=tf.int64)
        step = fw.step.python_function   # the runner's step, traced into this function

        def train_fn(x, y, bc):
            counter.assign_add(1)
            seeds = [tf.stack([counter.read_value(), tf.constant(L.i, tf.int64)]) for L in cell.drops]
            return step(x, y, seeds, bc)
        train_c = tf.function(train_fn, jit_compile=jit)

        def train():
            train_c(x, y, bc).numpy()
    infer_c = tf.function((fw.fwd16 if fw.bf16 else fw.fwd).python_function, jit_compile=jit)

    def infer():
        infer_c(x).numpy()
    return pc.time_phases(cell, out, a, train, infer)


if __name__ == "__main__":
    pc.exit_now(pc.main(__doc__, SETTINGS, run))
