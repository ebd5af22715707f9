#!/usr/bin/env python3
"""report_merge — joins the default report's bench groups (one `showdown bench` results file per group of workloads
of equal length) into out/bench/report-bench.json: the first part's head and environment, every part's runs (with
what of its environment differs from the first's, such as the OpenMP wait policy its process ran under), the
framework versions of all. A framework that sat out a group (it overran the cell limit on a lighter heavy workload;
GAVE_UP lines "impl:workload workloads precision", scripts/report.sh) gets a "not run" cell for each workload it did
not run, saying why, so that the report shows a reason instead of a hole, and not a failure that never happened.
The parts are removed once it is written.
Usage: report_merge.py OUT GAVE_UP PART..."""
import json
import os
import sys


def merge(parts, gave_up_lines):
    doc = json.load(open(parts[0]))
    for p in parts[1:]:
        d = json.load(open(p))
        env = d.get("environment") or {}
        # what this part's process ran under and the head's did not (its OpenMP wait policy: verify --rerun measures
        # under it) goes into each of its runs, which read the head's environment under their own
        own = {k: v for k, v in env.items() if k != "libraries" and doc["environment"].get(k) != v}
        for r in d["runs"]:
            for k, v in own.items():
                r.setdefault("environment", {}).setdefault(k, v)
        doc["runs"] += d["runs"]
        doc["environment"].setdefault("libraries", {}).update(env.get("libraries", {}))
    have = {(r["workload"], r["implementation"], (r.get("settings") or {}).get("precision", "fp32"))
            for r in doc["runs"]}
    for line in gave_up_lines:
        impl_wl, wls, prec = line.split()
        impl, where = impl_wl.split(":", 1)
        for wl in wls.split(","):
            if (wl, impl, prec) in have:
                continue
            run = {"workload": wl, "implementation": impl, "backend": "auto", "status": "not run",
                   "error": "not run: overran its cell limit on %s (the quick report; FULL=1 runs it)" % where}
            if prec != "fp32":
                run["settings"] = {"precision": prec}
            doc["runs"].append(run)
            have.add((wl, impl, prec))
    return doc


def main(argv):
    if len(argv) < 4:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    out, gave, parts = argv[1], argv[2], argv[3:]
    lines = open(gave).read().split("\n") if os.path.exists(gave) else []
    doc = merge(parts, [l for l in lines if l.strip()])
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=2)
    os.replace(tmp, out)
    for p in parts + ([gave] if os.path.exists(gave) else []):
        os.remove(p)
    print("results of %d cells in %s" % (len(doc["runs"]), out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
