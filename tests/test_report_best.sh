#!/bin/bash
# test_report_best — scripts/report_best.py puts bench-cpu's best settings into the default report's results: one
# run per workload, framework and setting with the phases that setting won (training images/s, inference seconds per
# 1,000 images), settings.setting naming it, the peak RSS, an inference workload marked as bench marks it, the
# machine's roofline limits in the environment, each run's command cut to the settings that won; a second merge replaces the first; a missing cpu.json changes nothing.
set -u
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
fail=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=1; }
cat > "$t/r.json" <<'J'
{"schema": "showdown-results/1", "environment": {"cores": 2}, "runs": [
 {"workload": "mnist_cnn", "implementation": "pytorch", "backend": "cpu", "status": "ok", "samples": []}]}
J
cat > "$t/cpu.json" <<'J'
{"threads": 2, "precision": "fp32",
 "roofline": {"mnist_cnn": {"batch": 128, "train": 0.01, "infer": 0.002, "machine": {"peak_gflops": 190.0}}},
 "rows": [
  {"workload": "mnist_cnn", "phase": "train", "best_setting": "compile",
   "torch_best": {"value": 1600, "median": 1500, "min": 1400, "max": 1600, "n": 2}, "torch_best_rss_mib": 1000,
   "jax_best_setting": "jit", "jax_best": {"value": 900, "median": 900, "min": 900, "max": 900, "n": 1}, "jax_best_rss_mib": 500},
  {"workload": "mnist_cnn", "phase": "infer", "best_setting": "channels_last",
   "torch_best": {"value": 6000, "median": 5000, "min": 4000, "max": 6000, "n": 2}, "torch_best_rss_mib": 900,
   "jax_best_setting": "jit", "jax_best": {"value": 4000, "median": 4000, "min": 4000, "max": 4000, "n": 1}, "jax_best_rss_mib": 600},
  {"workload": "resnet50_features", "phase": "infer", "best_setting": "shipped",
   "torch_best": {"value": 20, "median": 20, "min": 20, "max": 20, "n": 1},
   "tinygrad_best_setting": "jit", "tinygrad_best": {"value": 9, "median": 9, "min": 8, "max": 10, "n": 2}, "tinygrad_best_rss_mib": 700}]}
J
# the commands the quick pass ran (a framework's candidates of a workload in one process), each cut to the settings
# that won a phase: what make report's bench --best-settings and verify --rerun measure
"$PY" - "$t/cpu.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
cmd = lambda st: {"python": "py", "script": "scripts/torch_perf.py", "args": ["--workload", "mnist_cnn", "--setting", st], "env": []}
c["cells"] = [{"workload": "mnist_cnn", "side": "torch", "setting": s, "cmd": cmd("eager,channels_last,compile"), "version": "2.15"}
              for s in ("eager", "channels_last", "compile")]
json.dump(c, open(sys.argv[1], "w"))
PY
# make report measures the best settings again only where the results hold some (report_best.py --has-best)
if $PY scripts/report_best.py --has-best "$t/r.json"; then bad "--has-best: exit 0 before the merge"; else ok "--has-best: exit 1 before the merge"; fi
$PY scripts/report_best.py "$t/r.json" "$t/cpu.json" > "$t/out" || bad "report_best.py exit $?"
if $PY scripts/report_best.py --has-best "$t/r.json"; then ok "--has-best: exit 0 after it"; else bad "--has-best: exit $? after the merge"; fi
$PY scripts/report_best.py "$t/r.json" "$t/cpu.json" > "$t/out" || bad "report_best.py exit $? (second merge)"
$PY - "$t/r.json" > "$t/check" <<'PY' || bad "check: $(cat "$t/check")"
import json, sys
d = json.load(open(sys.argv[1]))
runs = {(r["workload"], r["implementation"], r.get("settings", {}).get("setting")): r for r in d["runs"]}
assert len(d["runs"]) == 5, "5 runs (1 bench + 4 best), got %d" % len(d["runs"])
c = runs[("mnist_cnn", "pytorch", "compile")]
assert c["summary"]["train_images_per_s"]["median"] == 1500 and "inference_s_per_1000_images" not in c["summary"], c
assert c["samples"][0]["peak_rss_bytes"] == 1000 * 1048576 and "mode" not in c, c
cl = runs[("mnist_cnn", "pytorch", "channels_last")]
assert abs(cl["summary"]["inference_s_per_1000_images"]["median"] - 0.2) < 1e-12, cl
assert abs(cl["summary"]["inference_s_per_1000_images"]["min"] - 1000 / 6000) < 1e-12 and "mode" not in cl, cl
j = runs[("mnist_cnn", "jax", "jit")]
assert set(j["summary"]) == {"train_images_per_s", "train_s_per_1000_images", "inference_s_per_1000_images"}, j
assert abs(j["summary"]["train_s_per_1000_images"]["median"] - 1000 / 900) < 1e-12, j   # what verify compares
assert j["samples"][0]["peak_rss_bytes"] == 600 * 1048576, j
assert ("resnet50_features", "pytorch", "shipped") not in runs, "shipped is the bench cell's, not a best setting"
for st in ("compile", "channels_last"):   # eager won nothing: its candidate is not run again
    assert runs[("mnist_cnn", "pytorch", st)]["rerun"]["args"] == ["--workload", "mnist_cnn", "--setting", "channels_last,compile"], runs[("mnist_cnn", "pytorch", st)]
assert "rerun" not in j, j   # no cell recorded its command
tg = runs[("resnet50_features", "tinygrad", "jit")]
assert tg["mode"] == "inference" and tg["source"] == "bench-cpu", tg
assert d["environment"]["roofline_machine"] == {"peak_gflops": 190.0}, d["environment"]
assert "best_not_tried" not in d["environment"], d["environment"]   # every workload of the results was tried
print("runs as expected")
PY
[ $fail = 0 ] && ok "best settings merged: $(cat "$t/check")"
cp "$t/r.json" "$t/r0.json"
$PY scripts/report_best.py "$t/r.json" "$t/none.json" 2> "$t/err" || bad "a missing cpu.json: exit $?"
cmp -s "$t/r.json" "$t/r0.json" && grep -q 'no best settings' "$t/err" && ok "a missing cpu.json changes nothing and says so" ||
  bad "a missing cpu.json: $(cat "$t/err")"
# what the quick pass did not try is recorded for the report's tables: a workload bench-cpu did not run, a
# framework that gave up after a timeout (bench_table --give-up), the torch.compile candidates it left out
"$PY" - "$t" <<'PY'
import json, sys
t = sys.argv[1]
d = json.load(open(t + "/r.json"))
d["runs"].append({"workload": "densenet121_xray", "implementation": "paddle", "backend": "cpu", "status": "ok", "samples": []})
json.dump(d, open(t + "/r2.json", "w"))
c = json.load(open(t + "/cpu.json"))
c["gave_up"] = {"torch": "resnet50_features"}
c["compile_not_tried"] = ["resnet18_cifar", "resnet50_features"]
json.dump(c, open(t + "/cpu2.json", "w"))
PY
$PY scripts/report_best.py "$t/r2.json" "$t/cpu2.json" > /dev/null || bad "report_best.py exit $? (not tried)"
got=$($PY -c 'import json, sys; print(json.load(open(sys.argv[1]))["environment"].get("best_not_tried"))' "$t/r2.json")
[ "$got" = "densenet121_xray (the quick pass leaves it to FULL=1); pytorch from resnet50_features on (it timed out there); torch.compile on resnet18_cifar, resnet50_features (FULL=1 tries it)" ] \
  && ok "what the best-setting pass did not try is recorded: $got" || bad "best_not_tried: '$got'"
[ $fail = 0 ] && echo "test_report_best: all ok"
exit $fail
