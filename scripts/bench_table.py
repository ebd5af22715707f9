#!/usr/bin/python3
"""bench_table — merge `showdown perf` JSON with the PyTorch runs (as shipped, passive) into issue 3's table:
training and inference images/s, dnnl's ratios against both PyTorch settings (best layout of each), GFLOP/s
against the sgemm ceiling measured in the same run. Writes the merged JSON atomically."""
import argparse
import json
import os
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("perf")
    ap.add_argument("torch", nargs="*", help="torch-shipped.json torch-passive.json")
    ap.add_argument("--out", required=True)
    ap.add_argument("--load", default="")
    a = ap.parse_args()
    perf = json.load(open(a.perf))
    torch_runs = {}
    settings = {}
    for path in a.torch:
        doc = json.load(open(path))
        setting = "passive" if doc.get("omp_wait_policy") == "passive" else "shipped"
        settings[setting] = "OMP_WAIT_POLICY=%s OPENBLAS_CORETYPE=%s%s, sgemm %.0f GFLOP/s" % (
            doc.get("omp_wait_policy"), doc.get("openblas_coretype"),
            " torch.set_flush_denormal(True)" if doc.get("flush_denormal") else "", doc.get("torch_sgemm_gflops", 0))
        for r in doc["runs"]:
            best = torch_runs.setdefault((r["workload"], setting), {"train": 0, "infer": 0, "layout": {}})
            for k in ("train", "infer"):
                v = r[k + "_images_per_s"]
                if v > best[k]:
                    best[k] = v
                    best["layout"][k] = "channels-last" if r["channels_last"] else "nchw"
    ceiling = perf["sgemm_gflops"]
    native = {(r["workload"], r["backend"]): r for r in perf["runs"]}
    rows = []
    print("\nsgemm ceiling %.0f GFLOP/s (%s); load average %s (start,end)" % (ceiling, perf["sgemm_how"], a.load))
    print("showdown's OpenMP wait policy: %s" % perf.get("environment", {}).get("omp_wait_policy", "(not recorded)"))
    hdr = "%-12s %-6s %10s %10s %10s %10s  %-9s %-9s %s" % ("workload", "phase", "ref", "dnnl", "torch", "torch",
                                                            "dnnl/", "dnnl/", "dnnl GFLOP/s")
    print(hdr)
    print("%-12s %-6s %10s %10s %10s %10s  %-9s %-9s %s" % ("", "", "img/s", "img/s", "shipped", "passive",
                                                            "shipped", "passive", "(% of sgemm)"))
    for wl in ("mnist_mlp", "mnist_cnn", "cifar10_vgg"):
        for phase in ("train", "infer"):
            ref = native.get((wl, "ref"), {}).get(phase + "_images_per_s")
            d = native.get((wl, "dnnl"), {})
            dn = d.get(phase + "_images_per_s")
            gf = d.get(phase + "_gflops")
            ts = torch_runs.get((wl, "shipped"), {}).get(phase)
            tp = torch_runs.get((wl, "passive"), {}).get(phase)
            f = lambda v: "%10.0f" % v if v else "%10s" % "-"
            r = lambda n, t: "%-9s" % ("%.2fx" % (n / t) if n and t else "-")
            print("%-12s %-6s %s %s %s %s  %s %s %s" % (wl, phase, f(ref), f(dn), f(ts), f(tp), r(dn, ts), r(dn, tp),
                                                       "%.0f (%.0f%%)" % (gf, 100 * gf / ceiling) if gf else "-"))
            rows.append({"workload": wl, "phase": phase, "ref_images_per_s": ref, "dnnl_images_per_s": dn,
                         "torch_shipped_images_per_s": ts, "torch_passive_images_per_s": tp,
                         "dnnl_over_torch_shipped": dn / ts if dn and ts else None,
                         "dnnl_over_torch_passive": dn / tp if dn and tp else None,
                         "dnnl_gflops": gf, "dnnl_fraction_of_sgemm": gf / ceiling if gf else None})
    for k, v in settings.items():
        print("torch %-8s %s" % (k, v))
    d = native.get(("cifar10_vgg", "dnnl"))
    if d and "layers" in d:
        print("\ncifar10_vgg on dnnl, per layer (GFLOP/s, % of the sgemm ceiling):")
        for l in d["layers"]:
            print("  %-10s fwd %6.1f (%3.0f%%)   bwd %6.1f (%3.0f%%)" % (l["layer"], l["fwd_gflops"],
                  100 * l["fwd_gflops"] / ceiling, l["bwd_gflops"], 100 * l["bwd_gflops"] / ceiling))
    out = {"format": "showdown-bench-cpu/1", "sgemm_gflops": ceiling, "load_average": a.load, "rows": rows, "torch_settings": settings,
           "perf": perf}
    tmp = a.out + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(out, fh, indent=1, sort_keys=True)
    os.replace(tmp, a.out)
    print("\nwritten: %s" % a.out)


if __name__ == "__main__":
    sys.exit(main())
