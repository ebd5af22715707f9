#!/usr/bin/env python3
"""jax_runner -- the showdown runner protocol (PROTOCOL.md) for plain JAX (jax.lax, jax.numpy, jit).

NCHW throughout (lax.conv_general_dilated with OIHW kernels), so the native weights load unchanged; one
jitted function per training step: forward, value_and_grad, and the spec's optimizer (runner_common.Optimizer).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner_common as rc  # noqa: E402
import numpy as np  # noqa: E402


class Jax:
    def __init__(self, a):
        if a.threads > 0:
            os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=%s intra_op_parallelism_threads=%d"
                                  % ("true" if a.threads > 1 else "false", a.threads))
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax
        import jax.numpy as jnp
        from jax import lax
        self.jax, self.jnp, self.lax = jax, jnp, lax
        self.name, self.version = "jax", jax.__version__
        self.device = "cpu (%s)" % jax.devices()[0].device_kind
        self.threads = a.threads

    def extras(self):
        import jaxlib
        return {"jaxlib": jaxlib.__version__, "backend": self.jax.default_backend(), "threads": self.threads}

    # one function per layer kind: f(L, params, x, mask) -> y
    def conv2d(self, L, p, x, m):
        y = self.lax.conv_general_dilated(x, p[0], L.s, [(L.p[0], L.p[0]), (L.p[1], L.p[1])],
                                          dimension_numbers=("NCHW", "OIHW", "NCHW"))
        return y if p[1] is None else y + p[1][None, :, None, None]

    def maxpool(self, L, p, x, m):
        return self.lax.reduce_window(x, -self.jnp.inf, self.lax.max, (1, 1) + L.k, (1, 1) + L.s,
                                      [(0, 0), (0, 0), (L.p[0], L.p[0]), (L.p[1], L.p[1])])

    def dense(self, L, p, x, m):
        y = x @ p[0].T
        return y if p[1] is None else y + p[1]

    def relu(self, L, p, x, m):
        return self.jnp.maximum(x, 0.0)

    def flatten(self, L, p, x, m):
        return x.reshape(x.shape[0], -1)

    def dropout(self, L, p, x, m):
        return x if m is None else x * m

    def build(self, layers, params, opt, batch):
        jax, jnp = self.jax, self.jnp
        self.layers = layers
        self.fns = []
        for L in layers:
            f = getattr(self, L.op, None)
            if f is None:
                raise rc.Unsupported(L.op)
            self.fns.append(f)
        self.params = {str(i): (jnp.asarray(W), None if b is None else jnp.asarray(b)) for i, (W, b) in params.items()}
        zeros = lambda t: jax.tree_util.tree_map(jnp.zeros_like, t)  # noqa: E731
        self.s0, self.s1 = zeros(self.params), zeros(self.params)
        drop_ids = [L.i for L in layers if L.op == "dropout" and L.rate > 0]

        def forward(params, x, masks):
            mk = dict(zip(drop_ids, masks)) if masks is not None else {}
            for L, f in zip(layers, self.fns):
                x = f(L, params.get(str(L.i)), x, mk.get(L.i))
            return x

        def loss(params, x, y, masks):
            z = forward(params, x, masks)
            lv = jax.nn.logsumexp(z, axis=1) - jnp.take_along_axis(z, y[:, None], axis=1)[:, 0]
            return lv.mean(), lv.sum()

        def step(params, s0, s1, x, y, masks, bc):
            (_, lsum), g = jax.value_and_grad(loss, has_aux=True)(params, x, y, masks)
            leaves = lambda t: jax.tree_util.tree_leaves(t)  # noqa: E731
            treedef = jax.tree_util.tree_structure(params)
            new = [opt.update(p, gg, a, b, bc, jnp.sqrt)
                   for p, gg, a, b in zip(leaves(params), leaves(g), leaves(s0), leaves(s1))]
            unflat = lambda k: jax.tree_util.tree_unflatten(treedef, [n[k] for n in new])  # noqa: E731
            return unflat(0), unflat(1), unflat(2), lsum

        self.opt = opt
        self.step = jax.jit(step)
        self.fwd = jax.jit(lambda params, x: forward(params, x, None))

    def parameters(self):
        return sum(int(np.prod(v.shape)) for v in self.jax.tree_util.tree_leaves(self.params))

    def forward(self, x):
        return np.asarray(self.fwd(self.params, x))

    def train_step(self, x, y, masks, t):
        bc = self.opt.corrections(t) if self.opt.name == "adam" else (1.0, 1.0)
        self.params, self.s0, self.s1, lsum = self.step(self.params, self.s0, self.s1, x, y.astype(np.int32), masks,
                                                        np.asarray(bc, np.float32))
        return float(lsum)


if __name__ == "__main__":
    rc.main(Jax, "showdown runner for JAX (workloads/runners/PROTOCOL.md)")
