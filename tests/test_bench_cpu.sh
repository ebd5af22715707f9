#!/bin/bash
# test_bench_cpu — scripts/bench_table.py (`make bench-cpu`) on fake cells: a fake `showdown perf` and a fake
# PyTorch whose settings have known speeds. The best setting is the fastest candidate of round 1, per phase;
# ratios are of the medians over rounds; a failed torch.compile candidate is listed and does not fail the
# run, a failed shipped cell does (exit 1); a cell beside a busy process is flagged; peak memory is the
# cell's own; a --batch override reaches both sides. Needs no PyTorch and no timing of real work; the last
# check runs the real PyTorch cell (scripts/torch_perf.py) when a torch is importable, and says skipped otherwise.
set -u
PY=${PYTHON:-/usr/bin/python3}
fail=0; t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
ok()  { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

mkdir -p "$t/wl"
echo '{"training": {"batch": 8}}' > "$t/wl/w1.json"
echo '{"inference": {"batch": 8}}' > "$t/wl/w2.json"
# native: w1 trains at 1000 img/s in round 1 and 1200 in round 2 (median 1100), infers at 500; w2 infers at
# 90. A ~60 MiB array makes its peak memory visible.
cat > "$t/showdown" <<EOF
#!$PY
import json, os, sys
a = sys.argv[1:]
if a[:1] == ["--version"]:
    print("fake"); sys.exit(0)
wl, out = a[a.index("--workload") + 1], a[a.index("--json") + 1]
if "--batch" in a:
    open(os.path.join("$t", "batches"), "a").write("native %s %s\n" % (wl, a[a.index("--batch") + 1]))
n = os.path.join("$t", "native-" + wl)
k = int(open(n).read()) + 1 if os.path.exists(n) else 0
open(n, "w").write(str(k))
mem = bytearray(60 << 20) if "--no-ceiling" in a else b""
if os.environ.get("FAKE_BUSY") == wl:   # another process spins beside this cell
    # not a descendant the cell waits for (its CPU would count as the cell's own): sh starts it and exits
    import signal, subprocess, time
    pid = int(subprocess.run(["sh", "-c", "'$PY' -c 'while True: pass' >/dev/null 2>&1 & echo \$!"],
                             capture_output=True, text=True).stdout)
    time.sleep(1.5); os.kill(pid, signal.SIGKILL)
run = {"w1": {"train_images_per_s": [1000.0, 1200.0][min(k, 1)], "infer_images_per_s": 500.0},
       "w2": {"train_images_per_s": None, "infer_images_per_s": 90.0}}.get(wl, {"train_images_per_s": 1.0, "infer_images_per_s": 1.0})
json.dump({"sgemm_gflops": 100.0, "runs": [run], "environment": {}}, open(out, "w"))
EOF
# PyTorch: w1 train shipped 100, eager 200, channels_last 400 (round 1) / 300 (round 2), compile fails;
# infer eager 250 beats channels_last 200; w2 infer eager 30, channels_last 45, shipped 20
cat > "$t/torchpy" <<EOF
#!$PY
import json, os, sys
a = sys.argv[1:]
if a[:1] == ["-c"]:
    sys.exit(0)
wl, s = a[a.index("--workload") + 1], a[a.index("--setting") + 1]
if "--batch" in a:
    open(os.path.join("$t", "batches"), "a").write("torch %s %s\n" % (wl, a[a.index("--batch") + 1]))
if s == "compile":
    print("Traceback ...\nBackendCompilerFailed: inductor broke", file=sys.stderr); sys.exit(1)
if s == "shipped" and os.environ.get("FAKE_SHIPPED_FAILS") == wl:
    print("RuntimeError: shipped broke", file=sys.stderr); sys.exit(1)
n = os.path.join("$t", "torch-%s-%s" % (wl, s))
k = int(open(n).read()) + 1 if os.path.exists(n) else 0
open(n, "w").write(str(k))
tr = {"shipped": 100.0, "eager": 200.0, "channels_last": [400.0, 300.0][min(k, 1)]}[s] if wl == "w1" else None
inf = {"w1": {"shipped": 100.0, "eager": 250.0, "channels_last": 200.0},
       "w2": {"shipped": 20.0, "eager": 30.0, "channels_last": 45.0}}[wl][s]
print(json.dumps({"train_images_per_s": tr, "infer_images_per_s": inf, "torch": "9.9-fake", "torch_path": "/fake",
                  "compile_s": 0.0, "batch": 8, "flush_denormal": s != "shipped"}))
EOF
chmod +x "$t/showdown" "$t/torchpy"

run() { # out-dir extra-env...
  local out=$1; shift
  env "$@" "$PY" scripts/bench_table.py --showdown "$t/showdown" --torch-python "$t/torchpy" --workloads "$t/wl" \
      --workload w1,w2 --rounds 2 --compile w1 --profile 0 --out "$out" > "$out.txt" 2> "$out.err"
}
mkdir -p "$t/a"; rm -f "$t"/native-* "$t"/torch-*
run "$t/a" FAKE_BUSY=w2; rc=$?
cat "$t/a.txt"
if [ $rc -ne 0 ]; then bad "exit $rc with only the compile candidate failing"; cat "$t/a.err"; fi
if "$PY" - "$t/a/cpu.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
rows = {(r["workload"], r["phase"]): r for r in d["rows"]}
assert sorted(rows) == [("w1", "infer"), ("w1", "train"), ("w2", "infer")], sorted(rows)
tr, inf, w2 = rows[("w1", "train")], rows[("w1", "infer")], rows[("w2", "infer")]
assert tr["best_setting"] == "channels_last" and inf["best_setting"] == "eager" and w2["best_setting"] == "channels_last", \
    (tr["best_setting"], inf["best_setting"], w2["best_setting"])
assert tr["native"]["median"] == 1100 and abs(tr["native"]["spread"] - 200 / 1100) < 1e-9, tr["native"]
assert tr["torch_best"]["median"] == 350 and tr["torch_shipped"]["median"] == 100, (tr["torch_best"], tr["torch_shipped"])
assert abs(tr["native_over_torch_best"] - 1100 / 350) < 1e-9 and abs(tr["native_over_torch_shipped"] - 11) < 1e-9
assert abs(w2["native_over_torch_best"] - 2.0) < 1e-9, w2
assert tr["compile_failed"] and "inductor broke" in tr["compile_failed"][0], tr["compile_failed"]
assert w2["busy"] and w2["others_max"] > 0.10, (w2["busy"], w2["others_max"])
# peak memory: the native cell's 60 MiB array over the fake's baseline; the fake torch holds none
assert 55 < tr["native_rss_mib"] - d["baseline_rss_mib"]["native"] < 90, (tr["native_rss_mib"], d["baseline_rss_mib"])
assert tr["torch_best_rss_mib"] < tr["native_rss_mib"] - 40, (tr["torch_best_rss_mib"], tr["native_rss_mib"])
# round 2 ran only native, shipped and the best settings (channels_last for training, eager for inference)
r2 = sorted(c["setting"] for c in d["cells"] if c["round"] == 2 and c["workload"] == "w1")
assert r2 == ["channels_last", "dnnl", "eager", "shipped"], r2
EOF
then ok "best setting per phase, medians over rounds, ratios, failed compile listed, busy cell flagged, max RSS"
else bad "cpu.json of the fake run is wrong"; fi
grep -q "w1 torch.compile candidate failed: exit 1: BackendCompilerFailed: inductor broke" "$t/a.txt" \
  && ok "the table names the failed compile candidate" || bad "no compile failure line in the table"
grep -q "^BUSY MACHINE: .*w2" "$t/a.txt" && ok "the table says the machine was busy during w2" \
  || bad "no BUSY MACHINE line naming w2"
grep -qE "^w1 +train .* channels_last +11\.00x +3\.14x" "$t/a.txt" && ok "w1 train row: 11.00x shipped, 3.14x best" \
  || bad "w1 train row not as expected"

mkdir -p "$t/b"; rm -f "$t"/native-* "$t"/torch-*
run "$t/b" FAKE_SHIPPED_FAILS=w1; rc=$?
if [ $rc -eq 1 ] && grep -q "w1 torch_shipped: exit 1: RuntimeError: shipped broke" "$t/b.txt"; then
  ok "a failed shipped cell: exit 1, error in the table"
else bad "failed shipped cell: exit $rc"; cat "$t/b.txt"; fi
# a batch override reaches both sides' cells of that workload only, and the table says so
mkdir -p "$t/c"; rm -f "$t"/native-* "$t"/torch-* "$t/batches"
"$PY" scripts/bench_table.py --showdown "$t/showdown" --torch-python "$t/torchpy" --workloads "$t/wl" \
    --workload w1,w2 --rounds 1 --compile "" --profile 0 --batch w1=4 --out "$t/c" > "$t/c.txt" 2> "$t/c.err"
got=$(sort "$t/batches" 2>/dev/null | uniq -c | awk '{print $1, $2, $3, $4}' | paste -sd' ' -)
if [ "$got" = "1 native w1 4 3 torch w1 4" ] && grep -q "^w1 at batch 4 on both sides" "$t/c.txt"; then
  ok "--batch w1=4: native and the 3 torch cells of w1 ran at batch 4, w2 at its own"
else bad "--batch override: '$got'"; cat "$t/c.txt"; fi
"$PY" scripts/bench_table.py --showdown "$t/showdown" --workloads "$t/wl" --workload w1 --batch w1=x \
    --out "$t/d" > /dev/null 2> "$t/d.err"; rc=$?
[ $rc -eq 2 ] && grep -q "expected WORKLOAD=N" "$t/d.err" && ok "--batch w1=x: exit 2, names what was expected" \
  || { bad "--batch w1=x: exit $rc"; cat "$t/d.err"; }

# the real PyTorch cell, with whatever torch this machine has: the model is built from showdown's plan as the
# pytorch runner builds it, and its parameter count is the native one
if "${PYTHON:-/usr/bin/python3}" -c 'import torch, numpy' 2> /dev/null; then
  "${PYTHON:-/usr/bin/python3}" scripts/torch_perf.py --showdown "${SHOWDOWN:-./showdown}" --workload mnist_cnn \
      --setting eager --seconds 0.2 --repeat 1 --threads 1 > "$t/e.json" 2> "$t/e.err"; rc=$?
  if [ $rc -eq 0 ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["workload"] == "mnist_cnn" and d["train_images_per_s"] > 0 and d["infer_images_per_s"] > 0 else 1)' "$t/e.json"
  then ok "torch_perf times mnist_cnn with this machine's torch ($("${PYTHON:-/usr/bin/python3}" -c 'import torch; print(torch.__version__)'))"
  else bad "torch_perf mnist_cnn: exit $rc: $(tail -3 "$t/e.err")"; fi
else
  echo "skipped: torch_perf (no torch importable by ${PYTHON:-/usr/bin/python3})"
fi
exit $fail
