#!/bin/bash
# test_report_merge — scripts/report_merge.py joins the default report's bench groups: every part's runs and
# framework versions in one results file, and a framework that sat out a heavier group after overrunning the cell
# limit gets a "not run" cell (not a failed one) per workload it did not run, naming where it overran; a part
# whose process ran under another OpenMP wait policy keeps it in its runs; the parts are removed.
set -u
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
fail=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=1; }
cat > "$t/p1.json" <<'J'
{"schema": "showdown-results/1", "environment": {"cores": 2, "omp_wait_policy": "spin (libgomp default): x", "libraries": {"torch": "2.15"}}, "runs": [
 {"workload": "resnet50_features", "implementation": "native", "status": "ok"},
 {"workload": "resnet50_features", "implementation": "mindspore", "status": "failed",
  "error": "mindspore runner timed out: still running after 45 s in all (--runner-limit; killed)"}]}
J
cat > "$t/p2.json" <<'J'
{"schema": "showdown-results/1", "environment": {"cores": 2, "omp_wait_policy": "passive: 1 other runnable task", "libraries": {"jax": "0.10"}}, "runs": [
 {"workload": "vgg16_cifar", "implementation": "native", "status": "ok"},
 {"workload": "resnet18_cifar", "implementation": "native", "status": "ok"}]}
J
printf '%s\n' "mindspore:resnet50_features resnet50_features fp32" \
              "mindspore:resnet50_features resnet18_cifar,vgg16_cifar fp32" > "$t/gave"
$PY scripts/report_merge.py "$t/out.json" "$t/gave" "$t/p1.json" "$t/p2.json" > "$t/log" || bad "exit $?"
$PY - "$t/out.json" > "$t/check" 2>&1 <<'PY' && ok "parts joined; mindspore's two skipped workloads are not-run cells (status \"not run\") naming resnet50_features" || bad "merge: $(cat "$t/check")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["environment"]["libraries"] == {"torch": "2.15", "jax": "0.10"}, d["environment"]
runs = {(r["workload"], r["implementation"]): r for r in d["runs"]}
assert len(d["runs"]) == 6, len(d["runs"])
assert "timed out" in runs[("resnet50_features", "mindspore")]["error"]   # its own cell kept, not doubled
for wl in ("resnet18_cifar", "vgg16_cifar"):
    r = runs[(wl, "mindspore")]
    assert r["status"] == "not run" and "overran its cell limit on resnet50_features (the quick report" in r["error"], r
# a part whose process ran under another OpenMP wait policy: its runs say so, the head keeps the first part's
assert d["environment"]["omp_wait_policy"].startswith("spin"), d["environment"]
for wl in ("resnet18_cifar", "vgg16_cifar"):
    assert runs[(wl, "native")]["environment"] == {"omp_wait_policy": "passive: 1 other runnable task"}, runs[(wl, "native")]
assert "environment" not in runs[("resnet50_features", "native")]
PY
[ ! -e "$t/p1.json" ] && [ ! -e "$t/p2.json" ] && [ ! -e "$t/gave" ] && ok "parts and the gave-up list removed" \
  || bad "parts left behind"
$PY scripts/report_merge.py "$t/x.json" > /dev/null 2> "$t/err"; rc=$?
[ $rc -eq 2 ] && grep -q "Usage" "$t/err" && ok "no parts: exit 2 with the usage" || bad "no parts: exit $rc"
exit $fail
