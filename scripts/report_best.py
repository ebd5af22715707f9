#!/usr/bin/env python3
"""report_best — adds bench-cpu's best-setting figures (out/bench/cpu.json) to the default report's results
(out/bench/report-bench.json) as runs of their own, so the report shows each framework as shipped (the bench cells)
and at its best setting (these runs, settings.setting naming the candidate, "source": "bench-cpu").
One run per workload, framework and setting, holding the phases that setting won: training images/s and inference
seconds per 1,000 images, as the median of bench-cpu's rounds with their min and max, and the peak RSS; and the
command that measures it (`rerun`: bench-cpu's cell script, cut to the settings that won), through which make report
measures the published figure (showdown bench --best-settings) and verify --rerun measures it again.
Usage: report_best.py RESULTS.json CPU.json | report_best.py --has-best RESULTS.json (exit 0 if it holds such runs)"""
import copy
import json
import os
import sys

IMPL = {"torch": "pytorch"}   # bench-cpu's side names that differ from bench --impl


def is_best(run):
    """A run this script added (a best setting), as against the bench cells it adds them to."""
    return run.get("source") == "bench-cpu"


def stat(s, invert=False):
    """A bench-cpu figure (img/s over rounds) as a results statistic; invert: seconds per 1,000 images."""
    f = (lambda v: 1000.0 / v) if invert else (lambda v: v)
    lo, hi = (f(s["max"]), f(s["min"])) if invert else (s["min"], s["max"])
    return {"median": f(s["median"]), "min": lo, "max": hi, "n": s["n"]}


def cell_of(cpu, workload, side, setting):
    """bench-cpu's cell of a side's setting on a workload (its last round): the command and version it ran with."""
    found = None
    for c in cpu.get("cells", []):
        if c.get("workload") == workload and c.get("side") == side and c.get("setting") == setting and \
                "error" not in c and "na" not in c:
            found = c
    return found or {}


def best_runs(cpu):
    runs = {}
    trained = {row["workload"] for row in cpu.get("rows", []) if row["phase"] == "train"}
    for row in cpu.get("rows", []):
        sides = [("torch", row.get("best_setting"), row.get("torch_best"), row.get("torch_best_rss_mib"))]
        for key in row:
            if key.endswith("_best_setting") and key != "best_setting":
                fw = key[:-len("_best_setting")]
                sides.append((fw, row[key], row.get(fw + "_best"), row.get(fw + "_best_rss_mib")))
        for fw, setting, s, rss in sides:
            if not setting or setting == "shipped" or not s or not s.get("n"):
                continue
            impl = IMPL.get(fw, fw)
            c = cell_of(cpu, row["workload"], fw, setting)
            r = runs.setdefault((row["workload"], impl, setting), {
                "workload": row["workload"], "implementation": impl, "backend": "cpu", "status": "ok",
                "source": "bench-cpu", "settings": {"setting": setting, "threads": cpu.get("threads"),
                                                    "precision": cpu.get("precision", "fp32")},
                "summary": {}, "samples": [{"repeat": 1, "peak_bytes": 0, "peak_rss_bytes": 0}]})
            if c.get("batch"):
                r["settings"]["batch"] = c["batch"]
            if c.get("cmd"):   # what verify --rerun runs to measure it again
                r["rerun"] = c["cmd"]
                r["backend_env"] = {"interpreter": c["cmd"]["python"], "version": c.get("version") or c.get("torch")}
            if row["phase"] == "train":
                r["summary"]["train_images_per_s"] = stat(s)
                r["summary"]["train_s_per_1000_images"] = stat(s, invert=True)
            else:
                r["summary"]["inference_s_per_1000_images"] = stat(s, invert=True)
            if rss:
                r["samples"][0]["peak_rss_bytes"] = max(r["samples"][0]["peak_rss_bytes"], int(rss * 1048576))
    for r in runs.values():
        if r["workload"] not in trained:   # an inference workload, as bench marks its runs
            r["mode"] = "inference"
        if "rerun" in r:
            r["rerun"] = winners_only(r["rerun"], {s for (w, i, s) in runs if (w, i) == (r["workload"], r["implementation"])})
    return list(runs.values())


def winners_only(cmd, winners):
    """The cell command with its --setting list cut to the settings that won a phase: the processes that measure
    a best setting (showdown bench --best-settings, then verify --rerun) run what is published, not every candidate."""
    cmd = copy.deepcopy(cmd)
    a = cmd.get("args", [])
    if "--setting" in a and a.index("--setting") + 1 < len(a):
        k = a.index("--setting") + 1
        a[k] = ",".join(s for s in a[k].split(",") if s in winners) or a[k]
    return cmd


def not_tried(doc, cpu):
    """The workloads of the results bench-cpu did not run, each framework that stopped after a timeout
    (bench_table --give-up) and the torch.compile candidates left out, as one sentence; "" when it tried everything."""
    ran = {c.get("workload") for c in cpu.get("cells", []) + cpu.get("rows", [])}
    wls = sorted({r["workload"] for r in doc["runs"] if not is_best(r)} - ran)
    parts = ["%s (the quick pass leaves %s to FULL=1)" % (", ".join(wls), "it" if len(wls) == 1 else "them")] if wls else []
    parts += ["%s from %s on (it timed out there)" % (IMPL.get(side, side), wl)
              for side, wl in sorted((cpu.get("gave_up") or {}).items())]
    if cpu.get("compile_not_tried"):
        parts.append("torch.compile on %s (FULL=1 tries it)" % ", ".join(cpu["compile_not_tried"]))
    return "; ".join(parts)


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__.splitlines()[-1])
    if argv[1] == "--has-best":
        return 0 if any(is_best(r) for r in json.load(open(argv[2])).get("runs", [])) else 1
    results, cpu_path = argv[1], argv[2]
    try:
        cpu = json.load(open(cpu_path))
    except (OSError, ValueError) as e:
        print("report: no best settings (%s): the report shows the frameworks as shipped" % e, file=sys.stderr)
        return 0
    doc = json.load(open(results))
    prec = cpu.get("precision", "fp32")   # an earlier call's runs of this precision are replaced, others kept
    doc["runs"] = [r for r in doc["runs"] if not is_best(r) or
                   r.get("settings", {}).get("precision", "fp32") != prec] + best_runs(cpu)
    # the machine's limits the roofline floors were computed against: the report's "% of this machine's limit"
    machines = [f.get("machine") for f in (cpu.get("roofline") or {}).values() if isinstance(f, dict)]
    machines = [m for m in machines if m]
    if machines:
        doc.setdefault("environment", {})["roofline_machine"] = machines[0]
    # what the best-setting pass did not try, so that a "shipped" best is not read as a measured verdict
    key = "best_not_tried" + ("" if prec == "fp32" else "_" + prec)
    untried = not_tried(doc, cpu)
    doc.setdefault("environment", {}).pop(key, None)
    if untried:
        doc["environment"][key] = untried
    tmp = results + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=2)
    os.replace(tmp, results)
    n = sum(1 for r in doc["runs"] if is_best(r))
    print("report: %d best-setting run(s) from %s added to %s" % (n, cpu_path, results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
