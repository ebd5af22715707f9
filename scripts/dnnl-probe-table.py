#!/usr/bin/env python3
"""Merge dnnl-probe outputs (TSV: layer pass dt ms impl) of oneDNN 2.6 and 3.x into one table.

usage: dnnl-probe-table.py A26.tsv[,B26.tsv...] A3.tsv[,B3.tsv...]
With several runs a side, each cell is the median over the runs (runs alternated 2.6, 3.x, 2.6, ...), and
the last rows give each run's sum over the shapes."""
import statistics
import sys

DTS = ["f32", "bf16", "bf16all"]


def load(paths):
    rows, order, impls = {}, [], {}
    for path in paths.split(","):
        for line in open(path):
            layer, pas, dt, ms, impl = line.rstrip("\n").split("\t")
            if (layer, pas) not in order:
                order.append((layer, pas))
            rows.setdefault((layer, pas, dt), []).append(float(ms))
            impls[(layer, pas, dt)] = impl
    return rows, order, impls


def main():
    a, order, ia = load(sys.argv[1])
    b, _, ib = load(sys.argv[2])
    n = len(sys.argv[1].split(","))
    print("median of %d runs a side, ms a call (bfA: y, dx, dW in bf16 too)" % n if n > 1 else "ms a call")
    print("%-24s %-11s %7s %7s %7s %7s %7s %7s  %s" % (
        "layer (N=64)", "pass", "2.6f32", "2.6bf16", "2.6bfA", "3.2f32", "3.2bf16", "3.2bfA",
        "kernels 2.6 f32 / bf16 | 3.2 f32 / bf16"))
    tot = [0.0] * 6
    for layer, pas in order:
        cells = [statistics.median(src[(layer, pas, dt)]) for src in (a, b) for dt in DTS]
        tot = [t + c for t, c in zip(tot, cells)]
        k = "%s / %s | %s / %s" % (ia[(layer, pas, "f32")], ia[(layer, pas, "bf16")],
                                   ib[(layer, pas, "f32")], ib[(layer, pas, "bf16")])
        print("%-24s %-11s %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f  %s" % ((layer, pas) + tuple(cells) + (k,)))
    print("%-24s %-11s %7.1f %7.1f %7.1f %7.1f %7.1f %7.1f" % (("sum of medians", "") + tuple(tot)))
    for pas in ("fwd", "bwd_data", "bwd_weights"):
        s = [sum(statistics.median(src[(l, p, dt)]) for l, p in order if p == pas) for src in (a, b) for dt in DTS]
        print("%-24s %-11s %7.1f %7.1f %7.1f %7.1f %7.1f %7.1f" % (("  sum", pas) + tuple(s)))
    if n > 1:
        for r in range(n):
            s = [sum(src[(l, p, dt)][r] for l, p in order) for src in (a, b) for dt in DTS]
            print("%-24s %-11s %7.1f %7.1f %7.1f %7.1f %7.1f %7.1f" % (("sum, run %d" % (r + 1), "") + tuple(s)))


main()
