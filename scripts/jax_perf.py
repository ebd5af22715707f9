#!/usr/bin/python3
"""jax_perf — one JAX cell of `make bench-cpu`: a workload of workloads/*.json built from showdown's layer plan by
the jax runner (workloads/runners/jax_runner.py: jax.lax ops, NCHW, the native initial weights, the spec's
optimizer arithmetic), timed on one resident synthetic batch as torch_perf.py times PyTorch: steady-state training
and inference images/s, the median of --repeat timed windows. Settings:
  jit   the runner's jitted training step inside one jax.jit with the parameters and optimizer state donated,
        and its jitted forward: JAX's normal mode (NCHW, as the runner builds it)
  nhwc  the same, jitted, with the runner channels-last (its nhwc flag: convolutions, pools, batch norm and concat
        in NHWC, HWIO kernels, the dense rows after a flatten reordered as the tensorflow runner does): XLA's CPU
        convolutions are NHWC (convolution models)
--precision bf16: the runner's bf16 compute (fp32 parameters, optimizer and loss) and its bf16 inference forward.
Dropout is JAX's own (jax.random.bernoulli, the key split inside the step), not the runner's native masks.
Denormals flushed: XLA's CPU runtime flushes them itself (1e-39 * 1 is 0 in a jitted function), and FTZ and DAZ
are set before XLA starts its thread pools. Every call is waited for (block_until_ready); the first (tracing,
XLA compilation) is not in the median: compile_s.
Prints one JSON object on stdout (torch_perf's fields, framework/version/path for torch/torch_path); a workload the
runner cannot build prints {"unsupported": ...} and exits 4."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perf_common as pc  # noqa: E402  (standard library only until flush_denormals has run)

SETTINGS = ("jit", "nhwc")


def nhwc(fw, cell):
    """The runner channels-last (fw.nhwc: convolutions, pools, batch norm, concat), and the weights and batch for
    it: (params, batch)."""
    rc, np = cell.rc, cell.np
    if not any(L.op == "conv2d" for L in cell.layers):
        raise SystemExit("jax_perf: %s has no convolution: NHWC does not apply" % cell.spec["name"])
    fw.nhwc = True
    by = {L.i: L for L in cell.layers}
    params = {}
    for i, t in cell.params.items():   # dense stays [out][in] (the runner multiplies by W.T), rows reordered
        L = by[i]
        if L.op == "conv2d":
            t = (rc.conv_hwio(t[0]),) + tuple(t[1:])
        elif L.op == "dense":
            t = (np.ascontiguousarray(rc.dense_in_out(t[0], L, True).T),) + tuple(t[1:])
        params[i] = t
    return params, rc.to_nhwc(cell.x, None)


def run(a, flushed):
    sys.path.insert(0, pc.RUNNERS)
    import jax_runner as jr
    cell = pc.Cell(a, jr.Jax)
    fw = jr.Jax(cell.ns)
    jax, jnp = fw.jax, fw.jnp

    def dropout(L, p, xs, key):   # the "mask" the runner hands each dropout layer is its key
        x = xs[0]
        if key is None:
            return x
        keep = 1.0 - L.rate
        return jnp.where(jax.random.bernoulli(key, keep, x.shape), x / keep, jnp.zeros_like(x))
    fw.dropout = dropout
    params, xb = cell.params, cell.x
    if a.setting == "nhwc":
        params, xb = nhwc(fw, cell)
    fw.loss = cell.loss
    fw.build(cell.layers, params, cell.opt, cell.B)
    x = jnp.asarray(xb)
    out = cell.result(a, "jax", jax.__version__, os.path.dirname(jax.__file__), flushed)
    out["backend"] = jax.default_backend()
    out["xla_flags"] = os.environ.get("XLA_FLAGS", "")
    nd = len(cell.drops)

    train = None
    if not cell.inference:
        y = jnp.asarray(cell.y)
        bc = jnp.asarray(cell.opt.corrections(1) if cell.opt.name == "adam" else (1.0, 1.0), jnp.float32)

        def train_fn(params, stats, s0, s1, key, x, y, bc):
            keys = jax.random.split(key, nd + 1)
            p, st, a0, a1, lsum = fw.step(params, stats, s0, s1, x, y, [keys[i + 1] for i in range(nd)], bc)
            return p, st, a0, a1, keys[0], lsum
        train_j = jax.jit(train_fn, donate_argnums=(0, 1, 2, 3, 4))
        state = [fw.params, fw.stats, fw.s0, fw.s1, jax.random.PRNGKey(0)]

        def train():
            state[0], state[1], state[2], state[3], state[4], lsum = train_j(*state, x, y, bc)
            lsum.block_until_ready()

    fwd = fw.fwd16 if fw.bf16 else fw.fwd

    def infer():   # batch norm's running statistics as training left them
        fwd(state[0] if train else fw.params, state[1] if train else fw.stats, x).block_until_ready()
    return pc.time_phases(cell, out, a, train, infer)


if __name__ == "__main__":
    pc.exit_now(pc.main(__doc__, SETTINGS, run))
