#!/bin/bash
# test_bench_cpu — scripts/bench_table.py (`make bench-cpu`) on fake cells: a fake `showdown perf` and a fake
# PyTorch whose settings have known speeds. Every candidate runs in every round, and the best setting per phase
# is the one with the fastest figure after them all; a figure is a cell's fastest window in the fastest round that
# another round confirms within 10% (extra rounds run until two agree, else "?"; a lucky round does not count); a failed torch.compile candidate is listed and does not fail the
# run, a failed shipped cell does (exit 1); a cell beside a busy process is flagged; peak memory is the
# cell's own; a --batch override reaches both sides; a --profile taken in a host slow spell says so. Fake TensorFlow and JAX cells: each framework's best setting,
# the best peer over every framework, a workload their runner cannot build shown n/a, a failed XLA candidate listed
# without failing the run. Needs no framework and no timing of real work; the last checks run the real PyTorch cell
# (scripts/torch_perf.py) when a torch is importable, and the real TensorFlow and JAX cells through bench_table
# (one tiny workload, one round) when VENVS (.venv-frameworks) has them, and say skipped otherwise.
set -u
PY=${PYTHON:-/usr/bin/python3}
fail=0; t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
ok()  { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

mkdir -p "$t/wl"
echo '{"training": {"batch": 8}}' > "$t/wl/w1.json"
echo '{"inference": {"batch": 8}}' > "$t/wl/w2.json"
# native: w1 trains at 1000 img/s in round 1 and 1200 from round 2 on, infers at 500; w2 infers at
# 90. A ~60 MiB array makes its peak memory visible.
real_sd=$(realpath "${SHOWDOWN:-./showdown}")
cat > "$t/showdown" <<EOF
#!$PY
import json, os, sys
a = sys.argv[1:]
if a[:1] == ["--version"]:
    print("fake"); sys.exit(0)
if "--host-ref" in a:   # the machine's recent canaries: the real showdown keeps their file
    os.execv("$real_sd", ["$real_sd"] + a)
if "--layers" in a:   # a profile (--profile N): text only
    print("fake profile of " + a[a.index("--workload") + 1]); sys.exit(0)
wl, out = a[a.index("--workload") + 1], a[a.index("--json") + 1]
if "--roofline" in a:   # the floors: w1 4 ms a training step and 2 ms an inference pass, w2 10 ms a pass
    open(os.path.join("$t", "roofline-calls"), "a").write(wl + "\n")
    fl = {"w1": (0.004, 0.002), "w2": (None, 0.010)}
    json.dump({"roofline_machine": {"peak_gflops": 100.0}, "runs": [{"workload": w, "batch": 8, "roofline": {
        "train": {"floor_s": fl[w][0]} if fl[w][0] else None, "inference": {"floor_s": fl[w][1]}}}
        for w in wl.split(",")]}, open(out, "w"))
    sys.exit(0)
if wl == "mnist_mlp" and "--no-ceiling" in a and os.environ.get("FAKE_CANARY"):   # the host canary: k-th of a list
    seq, cf = [float(x) for x in os.environ["FAKE_CANARY"].split(",")], os.path.join("$t", "canary")
    k = int(open(cf).read()) + 1 if os.path.exists(cf) else 0
    open(cf, "w").write(str(k))
    json.dump({"runs": [{"train_images_per_s": seq[min(k, len(seq) - 1)]}]}, open(out, "w")); sys.exit(0)
if "--batch" in a:
    open(os.path.join("$t", "batches"), "a").write("native %s %s\n" % (wl, a[a.index("--batch") + 1]))
if wl != "mnist_mlp":   # a timed cell (mnist_mlp: the host canary and the sgemm ceiling, fp32 by design)
    open(os.path.join("$t", "precisions"), "a").write("native %s\n" % dict(zip(a, a[1:])).get("--precision", "-"))
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
# w1 inference: windows of 8, 16 and 20 ms a batch (median 500 img/s): the fastest, 1000 img/s, counts
run = {"w1": {"train_images_per_s": [1000.0, 1200.0][min(k, 1)], "infer_images_per_s": 500.0,
              "infer_windows_s": [0.016, 0.008, 0.020]},
       "w2": {"train_images_per_s": None, "infer_images_per_s": 90.0}}.get(wl, {"train_images_per_s": 1.0, "infer_images_per_s": 1.0})
json.dump({"sgemm_gflops": 100.0, "runs": [run], "environment": {}}, open(out, "w"))
EOF
# PyTorch: w1 train shipped 100, eager 200, channels_last 400 (round 1) / 300 (round 2 on), compile fails;
# infer eager 250 beats channels_last 200; w2 infer eager 50 in round 1 (a lucky round), 30 after,
# channels_last 45, shipped 20
cat > "$t/torchpy" <<EOF
#!$PY
import json, os, sys
a = sys.argv[1:]
if a[:1] == ["-c"]:
    sys.exit(0)
wl, s = a[a.index("--workload") + 1], a[a.index("--setting") + 1]
if "--batch" in a:
    open(os.path.join("$t", "batches"), "a").write("torch %s %s\n" % (wl, a[a.index("--batch") + 1]))
open(os.path.join("$t", "precisions"), "a").write("torch %s\n" % dict(zip(a, a[1:])).get("--precision", "-"))
open(os.path.join("$t", "malloc"), "a").write("%s %s\n" % (s, os.environ.get("GLIBC_TUNABLES", "-")))
if s == "compile":
    print("Traceback ...\nBackendCompilerFailed: inductor broke", file=sys.stderr); sys.exit(1)
if s == "shipped" and os.environ.get("FAKE_SHIPPED_FAILS") == wl:
    print("RuntimeError: shipped broke", file=sys.stderr); sys.exit(1)
n = os.path.join("$t", "torch-%s-%s" % (wl, s))
k = int(open(n).read()) + 1 if os.path.exists(n) else 0
open(n, "w").write(str(k))
if os.environ.get("FAKE_SLOW") == wl:   # a candidate that overruns any timeout
    import time; time.sleep(60)
tr = {"shipped": 100.0, "eager": 200.0, "channels_last": [400.0, 300.0][min(k, 1)]}[s] if wl == "w1" else None
inf = {"w1": {"shipped": 100.0, "eager": 250.0, "channels_last": 200.0},
       "w2": {"shipped": 20.0, "eager": [50.0, 30.0][min(k, 1)], "channels_last": 45.0}}[wl][s]
win = [0.016, 0.032, 0.032] if (wl, s) == ("w1", "eager") else None   # median 250 img/s, fastest 500
print(json.dumps({"train_images_per_s": tr, "infer_images_per_s": inf, "infer_windows_s": win,
                  "torch": "9.9-fake", "torch_path": "/fake",
                  "compile_s": 0.0, "batch": 8, "flush_denormal": s != "shipped"}))
EOF
# TensorFlow: w1 train graph 500, xla fails; infer graph 200; w2 n/a (its runner lacks batchnorm).
# JAX: w1 train 700 (the best peer: native 1200 is 1.71x it), infer 100, nhwc half that; w2 infer 60, nhwc 75
# (beats torch's 45: native 90 is 1.20x it).
cat > "$t/peerpy" <<EOF
#!$PY
import json, os, sys
a = sys.argv[1:]
if a[:1] == ["-c"]:
    sys.exit(0)
fw = "jax" if a[0].endswith("jax_perf.py") else "tensorflow"
wl, s = a[a.index("--workload") + 1], a[a.index("--setting") + 1]
open(os.path.join("$t", "peer-cells"), "a").write("%s %s %s\n" % (fw, wl, s))
open(os.path.join("$t", "precisions"), "a").write("%s %s\n" % (fw, dict(zip(a, a[1:])).get("--precision", "-")))
if fw == "tensorflow" and wl == "w2":
    print(json.dumps({"workload": wl, "setting": s, "unsupported": "batchnorm"})); sys.exit(4)
if s == "xla":
    print("Traceback ...\nInternalError: XLA broke", file=sys.stderr); sys.exit(1)
tr, inf = {("tensorflow", "w1"): (500.0, 200.0), ("jax", "w1"): (700.0, 100.0), ("jax", "w2"): (None, 60.0)}[(fw, wl)]
if s == "nhwc":
    tr, inf = (tr / 2, inf / 2) if wl == "w1" else (None, 75.0)
print(json.dumps({"train_images_per_s": tr, "infer_images_per_s": inf, "framework": fw, "version": "0.0-fake",
                  "path": "/fake", "compile_s": 1.0, "batch": 8, "flush_denormal": True}))
EOF
chmod +x "$t/showdown" "$t/torchpy" "$t/peerpy"
TFPY="" JAXPY=""   # no TensorFlow or JAX columns unless a run names them

run() { # out-dir extra-env...
  local out=$1; shift
  env "$@" "$PY" scripts/bench_table.py --showdown "$t/showdown" --torch-python "$t/torchpy" --workloads "$t/wl" \
      --workload w1,w2 --rounds 2 --compile w1 --profile 0 --tf-python "$TFPY" --jax-python "$JAXPY" --out "$out" \
      > "$out.txt" 2> "$out.err"
}
mkdir -p "$t/a"; rm -f "$t"/native-* "$t"/torch-* "$t/malloc"
run "$t/a" FAKE_BUSY=w2 GLIBC_TUNABLES=glibc.malloc.arena_max=2; rc=$?
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
# native 1000 then 1200: a confirmation round finds 1200 again; channels_last's 400 is never seen again, and
# the confirmation round's 300 agrees with round 2's: its figure is 300, confirmed
assert tr["native"]["value"] == 1200 and tr["native"]["confirmed"] and tr["native"]["n"] == 3, tr["native"]
assert abs(tr["native"]["spread"] - 200 / 1200) < 1e-9, tr["native"]
assert tr["torch_best"]["value"] == 300 and tr["torch_best"]["confirmed"] and tr["torch_best"]["n"] == 3, tr["torch_best"]
assert tr["torch_shipped"]["value"] == 100 and tr["torch_shipped"]["confirmed"], tr["torch_shipped"]
assert abs(tr["native_over_torch_best"] - 4) < 1e-9 and abs(tr["native_over_torch_shipped"] - 12) < 1e-9
# w2: eager's lucky 50 of round 1 would have been round 1's best; a confirmation round finds 30 again, and the
# best is channels_last's 45
assert [c[1] for c in sorted((c["round"], c["infer"]) for c in d["cells"] if (c["workload"], c["setting"]) == ("w2", "eager"))] \
    == [50, 30, 30], d["cells"]
assert abs(w2["native_over_torch_best"] - 2.0) < 1e-9, w2
assert tr["compile_failed"] and "inductor broke" in tr["compile_failed"][0], tr["compile_failed"]
assert w2["busy"] and w2["others_max"] > 0.10, (w2["busy"], w2["others_max"])
# peak memory: the native cell's 60 MiB array over the fake's baseline (less what the baseline process held and
# the cell's did not: 55-59 MiB measured); the fake torch holds none
assert 40 < tr["native_rss_mib"] - d["baseline_rss_mib"]["native"] < 90, (tr["native_rss_mib"], d["baseline_rss_mib"])
assert tr["torch_best_rss_mib"] < tr["native_rss_mib"] - 40, (tr["torch_best_rss_mib"], tr["native_rss_mib"])
# round 2 ran every candidate again but the compile that failed in round 1; round 3 the cells no two rounds
# of which agreed (channels_last is w1's best training candidate, w2's eager could have been its best)
r2 = sorted(c["setting"] for c in d["cells"] if c["round"] == 2 and c["workload"] == "w1")
assert r2 == ["channels_last", "dnnl", "eager", "shipped"], r2
r3 = sorted((c["workload"], c["setting"]) for c in d["cells"] if c["round"] == 3)
assert r3 == [("w1", "channels_last"), ("w1", "dnnl"), ("w2", "eager")], r3
assert not [c["round"] for c in d["cells"] if c["round"] > 3], [c["round"] for c in d["cells"]]
# a cell with windows counts its fastest; windows 25% or more slower than it are counted as slowed
assert inf["native"]["value"] == 1000 and inf["torch_best"]["value"] == 500, (inf["native"], inf["torch_best"])
assert (inf["windows"], inf["windows_slowed"]) == (15, 10), (inf["windows"], inf["windows_slowed"])
assert (tr["windows"], tr["windows_slowed"]) == (0, 0), (tr["windows"], tr["windows_slowed"])
EOF
then ok "best setting per phase after every round, fastest windows, confirmed figures, ratios, failed compile listed, busy cell flagged, max RSS"
else bad "cpu.json of the fake run is wrong"; fi
# % of floor: the phase's floor over each side's time a batch of 8 (w1 train: 4 ms over 8/1200 s and 8/300 s)
if "$PY" - "$t/a/cpu.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
rows = {(r["workload"], r["phase"]): r for r in d["rows"]}
want = {("w1", "train"): (60.0, 15.0), ("w1", "infer"): (25.0, 12.5), ("w2", "infer"): (11.25, 5.625)}
for k, (n, p) in want.items():
    r = rows[k]
    assert abs(r["native_pct_floor"] - n) < 1e-9 and abs(r["peer_best_pct_floor"] - p) < 1e-9, (k, r)
assert d["roofline"]["w2"]["train"] is None and d["roofline"]["w1"]["batch"] == 8, d["roofline"]
EOF
then ok "native and best peer % of floor per phase, from perf --roofline"
else bad "% of floor in cpu.json is wrong"; fi
grep -qE "^w1 +train +4\.000 +60\.0% +15\.0%" "$t/a.txt" && grep -qE "^w2 +infer +10\.000 +11\.2% +5\.6%" "$t/a.txt" \
  && ok "the roofline table prints each side's % of floor" || bad "roofline table rows not as expected"
# the machine's peak and bandwidth are measured once: one perf --roofline for every workload of one batch
[ "$(cat "$t/roofline-calls" 2>/dev/null)" = "w1,w2" ] && ok "one perf --roofline process for both workloads" \
  || bad "perf --roofline calls: $(paste -sd'|' "$t/roofline-calls" 2>/dev/null)"
# PyTorch as shipped runs in the user's environment; its candidates with malloc's mmap threshold fixed, beside
# what the user set
if [ "$(sort -u "$t/malloc" | paste -sd'|' -)" = "channels_last glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824|compile glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824|eager glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824|shipped glibc.malloc.arena_max=2" ]
then ok "PyTorch's candidates run with a fixed mmap threshold, shipped without"
else bad "GLIBC_TUNABLES of the torch cells: $(sort -u "$t/malloc" | paste -sd'|' -)"; fi
grep -q "^host: 10 of 15 timed windows (67%) ran 25% or more slower than their cell's fastest" "$t/a.txt" \
  && ok "the table says how many windows the host slowed" || bad "no host line counting slowed windows"
grep -q "w1 torch.compile candidate failed: exit 1: BackendCompilerFailed: inductor broke" "$t/a.txt" \
  && ok "the table names the failed compile candidate" || bad "no compile failure line in the table"
grep -q "^BUSY MACHINE: .*w2" "$t/a.txt" && ok "the table says the machine was busy during w2" \
  || bad "no BUSY MACHINE line naming w2"
grep -qE "^w1 +train +1200\.0 .* 300\.0 ± +17% +channels_last +12\.00x +4\.00x" "$t/a.txt" \
  && ok "w1 train row: 12.00x shipped, 4.00x best (channels_last 300, confirmed)" \
  || bad "w1 train row not as expected"

if grep -q "best peer\|tensorflow best\|jax best" "$t/a.txt" || ! grep -q "^tensorflow: not measured" "$t/a.txt"; then
  bad "without TensorFlow and JAX the table is not PyTorch's alone"
else ok "without TensorFlow and JAX the table is PyTorch's alone"; fi

# TensorFlow and JAX (fake) beside PyTorch
mkdir -p "$t/p"; rm -f "$t"/native-* "$t"/torch-* "$t/peer-cells"
TFPY="$t/peerpy" JAXPY="$t/peerpy" run "$t/p"; rc=$?
cat "$t/p.txt"
[ $rc -eq 0 ] || { bad "exit $rc with only the compile and XLA candidates failing"; cat "$t/p.err"; }
if "$PY" - "$t/p/cpu.json" "$t/peer-cells" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
rows = {(r["workload"], r["phase"]): r for r in d["rows"]}
tr, inf, w2 = rows[("w1", "train")], rows[("w1", "infer")], rows[("w2", "infer")]
assert tr["tensorflow_best_setting"] == "graph" and tr["tensorflow_best"]["value"] == 500, tr
assert tr["jax_best"]["value"] == 700 and abs(tr["native_over_jax_best"] - 1200 / 700) < 1e-9, tr
assert tr["peer_best"]["framework"] == "jax" and abs(tr["native_over_peer_best"] - 1200 / 700) < 1e-9, tr["peer_best"]
assert inf["peer_best"]["framework"] == "torch" and inf["peer_best"]["setting"] == "eager", inf["peer_best"]
assert w2["tensorflow_best"] is None and w2["tensorflow_na"] == "unsupported batchnorm", w2
assert w2["peer_best"]["framework"] == "jax" and w2["peer_best"]["setting"] == "nhwc", w2["peer_best"]
assert abs(w2["native_over_peer_best"] - 1.2) < 1e-9 and tr["jax_best_setting"] == "jit", (w2, tr)
assert any("XLA broke" in e for e in tr["tensorflow_best_errors"]), tr.get("tensorflow_best_errors")
# round 1 runs every candidate (an n/a workload once), round 2 every one again but the failed XLA and none
# where n/a
cells = [tuple(l.split()) for l in open(sys.argv[2])]
assert sorted(cells[:7]) == [("jax", "w1", "jit"), ("jax", "w1", "nhwc"), ("jax", "w2", "jit"), ("jax", "w2", "nhwc"),
                             ("tensorflow", "w1", "graph"), ("tensorflow", "w1", "xla"), ("tensorflow", "w2", "graph")], cells[:7]
assert sorted(cells[7:]) == [("jax", "w1", "jit"), ("jax", "w1", "nhwc"), ("jax", "w2", "jit"), ("jax", "w2", "nhwc"),
                             ("tensorflow", "w1", "graph")], cells[7:]
EOF
then ok "TensorFlow and JAX: best setting each, best peer over every framework, n/a, no failed candidate rerun"
else bad "cpu.json of the TensorFlow/JAX fake run is wrong"; fi
grep -qE "^w1 +train .* graph +2\.40x .* jit +1\.71x .* jax jit +1\.71x" "$t/p.txt" \
  && ok "w1 train row: TensorFlow graph 2.40x, JAX jit 1.71x, best peer jax jit" || bad "w1 train peer row not as expected"
grep -qE "^w2 +infer +n/a: batchnorm .*jax nhwc +1\.20x" "$t/p.txt" && grep -q "^  w2 tensorflow: n/a: unsupported batchnorm" \
  "$t/p.txt" && ok "w2: TensorFlow n/a, the reason in the table" \
  || bad "no n/a cell for w2's TensorFlow"
grep -q "^native below 2x the best peer (every framework measured): w1 train (jax jit 1.71x), w2 infer (jax nhwc 1.20x)" \
  "$t/p.txt" && ok "the below-2x line names the best peer over every framework" || bad "below-2x line not as expected"
grep -q "w1 tensorflow: exit 1: InternalError: XLA broke" "$t/p.txt" && ok "the failed XLA candidate is listed" \
  || bad "no line for the failed XLA candidate"

# the host canary: a process whose canary after it ran slow (50 against the run's third fastest, 100) runs once
# more, waiting for a slow canary to turn fast before it starts; still slowed, it counts but confirms nothing.
# Canaries: 300, 100, 100 at the start (300 a lucky one) | 100 | r1 | 50 (measured again:) 50, 100 | r1 | 50 ;
# 100 | r2 | 100
mkdir -p "$t/h"; rm -f "$t"/native-* "$t"/torch-* "$t/canary"
FAKE_CANARY=300,100,100,100,50,50,100,50,100 "$PY" scripts/bench_table.py --showdown "$t/showdown" --torch-python "" \
    --workloads "$t/wl" --workload w2 --rounds 2 --profile 0 --host-wait 5 --tf-python "" --jax-python "" \
    --out "$t/h" > "$t/h.txt" 2> "$t/h.err"; rc=$?
if [ $rc -eq 0 ] && "$PY" - "$t/h/cpu.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
cs = [c for c in d["cells"] if c["side"] == "native"]
assert [(c["round"], c["host_slowed"]) for c in cs] == [(1, True), (2, False)], cs
assert cs[0]["host_before"] == 100 and cs[0]["host_after"] == 50 and cs[0]["host_wait_s"] >= 0.5, cs[0]
assert cs[1]["host_wait_s"] < 0.5 and cs[1]["host_before"] == cs[1]["host_after"] == 100, cs
n = d["rows"][0]["native"]
assert n["value"] == 90 and n["confirmed"] and n["n"] == 2 and n["host_slowed"] == 1, n
assert [v for _, v in d["host_canary"]["samples"]] == [300, 100, 100, 100, 50, 50, 100, 50, 100, 100], d["host_canary"]
assert d["host_canary"]["retries"] == 1, d["host_canary"]
EOF
then ok "host canary: a process slowed after runs once more, waiting out a slow canary; a clean round confirms it"
else bad "host canary run (exit $rc)"; cat "$t/h.txt" "$t/h.err"; fi
grep -q "^round 1 w2 .*native .*ran while the host was at 50% of its speed: measured again" "$t/h.err" \
  && ok "the log says the process measured again" || { bad "no measured-again line"; cat "$t/h.err"; }
grep -q "^host canary (mnist_mlp training, 0.3 s, before and after each cell): reference 100 img/s (the upper \
quartile of this run's and the machine's recent ones, the third fastest at least), 3 of 10 below 90% of it; 1 cell(s) waited 1 s in all for a slow \
spell to end, 1 process(es) measured again after one, 1 cell(s) ran in or beside one" "$t/h.txt" \
  && ok "the table says what the host canary saw" || { bad "no host canary line"; grep "^host" "$t/h.txt"; }
# --profile 1 profiles the workload furthest below 2x (w2, 1.20x JAX nhwc) and judges it by a canary before and
# after: canaries at 50 after ten at 100, on a machine whose recent canaries (SHOWDOWN_HOST_REF) ran at 100, mark it
# taken in a slow spell; canaries at 100 do not
cpu() { sed -n "s/^$1[[:space:]]*: //p" /proc/cpuinfo | head -1; }
key="$(cpu 'model name') (family $(cpu 'cpu family') model $(cpu model))|2 threads|perf canary|release"
now=$(date +%s)
for i in $(seq 200); do printf '%s\t%s\t100.0\n' "$key" "$now"; done > "$t/ref100"
for c in slow fast; do
  rm -f "$t"/native-* "$t"/torch-* "$t/canary"; mkdir -p "$t/p$c"
  if [ $c = slow ]; then seq=100,100,100,100,100,100,100,100,100,100,50; else seq=100; fi
  SHOWDOWN_HOST_REF="$t/ref100" FAKE_CANARY=$seq "$PY" scripts/bench_table.py --showdown "$t/showdown" \
      --torch-python "$t/torchpy" --workloads "$t/wl" --workload w1,w2 --rounds 1 --confirm 0 --compile "" --profile 1 \
      --threads 2 --host-wait 0 --tf-python "$t/peerpy" --jax-python "$t/peerpy" --out "$t/p$c" > "$t/p$c.txt" \
      2> "$t/p$c.err" || bad "profile run ($c canaries) failed"
done
if "$PY" - "$t/pslow/cpu.json" "$t/pfast/cpu.json" <<'EOF'
import json, sys
s, f = (json.load(open(p))["profiles"] for p in sys.argv[1:3])
assert list(s) == ["w2"] and list(f) == ["w2"], (s, f)
assert s["w2"]["host_slowed"] and s["w2"]["host_before"] == s["w2"]["host_after"] == 50, s
assert not f["w2"]["host_slowed"] and f["w2"]["host_before"] == 100, f
text = open(s["w2"]["file"]).read()
assert text.startswith("fake profile of w2") and "host canary before/after: 50/50 img/s, below 90% of the run's 100: taken in a slow spell" in text, text
assert "slow spell" not in open(f["w2"]["file"]).read()
EOF
then ok "a profile taken in a slow spell says so in its file and cpu.json; one taken outside does not"
else bad "profile canary"; cat "$t/pslow.txt" "$t/pslow.err" | tail -5; fi
grep -q "profile of w2 (native 1.20x the best peer, jax nhwc): .*profile-w2.txt  HOST SLOW" "$t/pslow.err" \
  && ok "the log marks the slow profile" || bad "no HOST SLOW on the profile line"

# the run's waiting budget spent (--host-wait-total 0): the same canaries, no cell waits
rm -f "$t"/native-* "$t/canary"
FAKE_CANARY=300,100,100,100,50,50,100,50,100 "$PY" scripts/bench_table.py --showdown "$t/showdown" --torch-python "" \
    --workloads "$t/wl" --workload w2 --rounds 2 --profile 0 --host-wait 5 --host-wait-total 0 --tf-python "" \
    --jax-python "" --out "$t/h0" > "$t/h0.txt" 2> "$t/h0.err"
"$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); c = [c for c in d["cells"] if c["round"] == 2][0]
sys.exit(0 if c["host_wait_s"] == 0 and c["host_before"] == 50 and c["host_slowed"] else 1)' "$t/h0/cpu.json" \
  && ok "--host-wait-total 0: a cell after a slow canary runs at once, flagged" || bad "--host-wait-total 0 still waited"

# the machine's reference (SHOWDOWN_HOST_REF): a file whose recent canaries of this key ran at 1000 img/s makes
# today's 100 a slow spell (the third fastest while few are known); the run writes its key's recent canaries back
# (those three and its own) and keeps the other keys' lines
rm -f "$t"/native-* "$t/canary"
printf '%s\t%s\t1000.0\n' "$key" "$now" "$key" "$now" "$key" $((now - 60)) > "$t/hostref"
printf 'showdown canary key\t%s\t5.0\n' "$now" >> "$t/hostref"
SHOWDOWN_HOST_REF="$t/hostref" FAKE_CANARY=100 "$PY" scripts/bench_table.py --showdown "$t/showdown" --torch-python "" \
    --workloads "$t/wl" --workload w2 --rounds 1 --confirm 0 --profile 0 --threads 2 --host-wait 0 --host-wait-total 0 \
    --tf-python "" --jax-python "" --out "$t/hr" > "$t/hr.txt" 2> "$t/hr.err"
if "$PY" - "$t/hr/cpu.json" "$t/hostref" "$key" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
c = [c for c in d["cells"] if c["side"] == "native"][0]
assert d["host_canary"]["fastest"] == 1000 and d["host_canary"]["machine_reference"] == [1000.0] * 3, d["host_canary"]
assert c["host_slowed"], c
lines = [l.split("\t") for l in open(sys.argv[2]).read().splitlines()]
mine = sorted(float(v) for k, _, v in lines if k == sys.argv[3])
assert mine[-3:] == [1000.0] * 3 and set(mine[:-3]) <= {100.0} and len(mine) <= 10, lines
assert any(k == "showdown canary key" for k, _, _ in lines), lines
EOF
then ok "the machine's recent canaries are the reference, and are kept"
else bad "machine reference"; tail -5 "$t/hr.err"; cat "$t/hostref"; fi

mkdir -p "$t/b"; rm -f "$t"/native-* "$t"/torch-*
run "$t/b" FAKE_SHIPPED_FAILS=w1; rc=$?
if [ $rc -eq 1 ] && grep -q "w1 torch_shipped: exit 1: RuntimeError: shipped broke" "$t/b.txt"; then
  ok "a failed shipped cell: exit 1, error in the table"
else bad "failed shipped cell: exit $rc"; cat "$t/b.txt"; fi
# a batch override reaches both sides' cells of that workload only, and the table says so
mkdir -p "$t/c"; rm -f "$t"/native-* "$t"/torch-* "$t/batches"
"$PY" scripts/bench_table.py --showdown "$t/showdown" --torch-python "$t/torchpy" --workloads "$t/wl" \
    --workload w1,w2 --rounds 1 --confirm 0 --compile "" --profile 0 --batch w1=4 --tf-python "" --jax-python "" --out "$t/c" > "$t/c.txt" 2> "$t/c.err"
got=$(sort "$t/batches" 2>/dev/null | uniq -c | awk '{print $1, $2, $3, $4}' | paste -sd' ' -)
if [ "$got" = "1 native w1 4 3 torch w1 4" ] && grep -q "^w1 at batch 4 on both sides" "$t/c.txt"; then
  ok "--batch w1=4: native and the 3 torch cells of w1 ran at batch 4, w2 at its own"
else bad "--batch override: '$got'"; cat "$t/c.txt"; fi
grep -qE "^w1 +train +1000\.0 ± +0%\? " "$t/c.txt" && ok "one round and no confirmation round: the figure is unconfirmed (?)" \
  || { bad "w1 train row of a one-round run not marked ?"; grep "^w1" "$t/c.txt"; }
"$PY" scripts/bench_table.py --showdown "$t/showdown" --workloads "$t/wl" --workload w1 --batch w1=x \
    --out "$t/d" > /dev/null 2> "$t/d.err"; rc=$?
[ $rc -eq 2 ] && grep -q "expected WORKLOAD=N" "$t/d.err" && ok "--batch w1=x: exit 2, names what was expected" \
  || { bad "--batch w1=x: exit $rc"; cat "$t/d.err"; }

# the default report's quick pass: --skip leaves out a setting its bench cells measured (no torch shipped cell
# runs), --give-up stops a framework that timed out on one workload from running the later ones
mkdir -p "$t/g"; rm -f "$t"/native-* "$t"/torch-*
FAKE_SLOW=w1 "$PY" scripts/bench_table.py --showdown "$t/showdown" --torch-python "$t/torchpy" --workloads "$t/wl" \
    --workload w1,w2 --rounds 1 --confirm 0 --compile "" --profile 0 --tf-python "" --jax-python "" --timeout 2 \
    --skip torch=shipped --give-up --out "$t/g" > "$t/g.txt" 2> "$t/g.err"; rc=$?
ran=$(cd "$t" && ls torch-* 2>/dev/null | paste -sd' ' -)
if [ "$ran" = "torch-w1-channels_last torch-w1-eager" ] && "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["gave_up"] == {"torch": "w1"} and d["skipped_settings"] == ["torch=shipped"], (d["gave_up"], d["skipped_settings"])
assert all(c["side"] != "torch" or c["workload"] == "w1" for c in d["cells"]), "torch ran w2"
assert all("timed out" in c.get("error", "") for c in d["cells"] if c["side"] == "torch"), "a w1 torch cell did not time out"
' "$t/g/cpu.json" && grep -q "torch timed out on w1: its later workloads are not run" "$t/g.err"; then
  ok "--skip torch=shipped runs no shipped cell; --give-up: torch timed out on w1 and ran nothing of w2 (exit $rc)"
else bad "--skip/--give-up: torch cells run: '$ran' (exit $rc)"; tail -5 "$t/g.err"; fi

# --grouped: a framework's candidates in one process, a line each as it finishes; one that overruns the timeout
# costs only itself: the setting finished before it keeps its figures
cat > "$t/torchgrp" <<EOF
#!$PY
import json, sys, time
a = sys.argv[1:]
if a[:1] == ["-c"]:
    sys.exit(0)
for s in a[a.index("--setting") + 1].split(","):
    if s == "channels_last":
        time.sleep(60)
    print(json.dumps({"setting": s, "train_images_per_s": 200.0, "infer_images_per_s": 250.0, "torch": "9.9-fake",
                      "torch_path": "/fake", "compile_s": 0.0, "batch": 8, "flush_denormal": True}), flush=True)
EOF
chmod +x "$t/torchgrp"
mkdir -p "$t/gr"; rm -f "$t"/native-*
"$PY" scripts/bench_table.py --showdown "$t/showdown" --torch-python "$t/torchgrp" --workloads "$t/wl" \
    --workload w1 --rounds 1 --confirm 0 --compile "" --profile 0 --tf-python "" --jax-python "" --timeout 3 \
    --skip torch=shipped --grouped --out "$t/gr" > "$t/gr.txt" 2> "$t/gr.err"; rc=$?
if "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
c = {x["setting"]: x for x in d["cells"] if x["side"] == "torch"}
assert sorted(c) == ["channels_last", "eager"], sorted(c)
assert "error" not in c["eager"] and c["eager"]["train"] == 200.0, c["eager"]
assert "timed out" in c["channels_last"]["error"], c["channels_last"]
' "$t/gr/cpu.json"; then ok "--grouped: the candidate finished before another timed out keeps its figure (exit $rc)"
else bad "--grouped timeout: the finished candidate's figure is lost (exit $rc)"; tail -5 "$t/gr.err"; fi

# a cell that times out is killed with everything it started (a cell script running each setting in a process of
# its own, as mindspore_perf does): its child must not outlive it and hold the cores during the next cells
cat > "$t/forks.py" <<EOF
import subprocess, sys, time
c = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
open("$t/child.pid", "w").write(str(c.pid))
time.sleep(600)
EOF
if "$PY" - "$t" <<'EOF'
import os, sys, time
sys.path.insert(0, "scripts")
import bench_table as bt
t = sys.argv[1]
text, err, *_ = bt.run_cell([sys.executable, os.path.join(t, "forks.py")], dict(os.environ), 1.0)
assert err and "timed out" in err, err
pid = int(open(os.path.join(t, "child.pid")).read())
time.sleep(0.3)
try:
    state = [l for l in open("/proc/%d/status" % pid) if l.startswith("State:")][0]
    assert "Z" in state, "the cell's child still runs: " + state
except FileNotFoundError:
    pass
EOF
then ok "a timed-out cell is killed with the process it started"
else bad "a timed-out cell's child outlived it"; fi

# settings run apart (perf_common.main(apart=True), as mindspore_perf runs them) share the cell's time limit
# (SHOWDOWN_CELL_LIMIT_S, set by bench_table): a setting that overruns its share is an error line, the next one runs
cat > "$t/apart.py" <<EOF
import sys, time
sys.path.insert(0, "$PWD/scripts")
import perf_common as pc
def run(a, flushed):
    if a.setting == "slow":
        time.sleep(60)
    return {"workload": a.workload, "setting": a.setting, "train_images_per_s": 1.0}
sys.exit(pc.main("apart", ("slow", "fast"), run, apart=True))
EOF
SHOWDOWN_CELL_LIMIT_S=20 "$PY" "$t/apart.py" --workload w1 --setting slow,fast > "$t/apart.out" 2> "$t/apart.err"; rc=$?
if [ $rc -eq 0 ] && "$PY" - "$t/apart.out" <<'EOF'
import json, sys
s, f = [json.loads(l) for l in open(sys.argv[1])]
assert s["setting"] == "slow" and s["error"].startswith("timed out after 5 s (its share of the cell's 20 s)"), s
assert f["setting"] == "fast" and f["train_images_per_s"] == 1.0, f
EOF
then ok "settings run apart share the cell's limit: the slow one times out at its share, the next one runs"
else bad "settings apart: exit $rc: $(cat "$t/apart.out" "$t/apart.err" | tail -3)"; fi

# --precision bf16 (PRECISION=bf16 in bench-cpu.sh): every timed cell of both sides gets it, the header and
# cpu.json say it; the default run above said fp32
rm -f "$t/precisions"
"$PY" scripts/bench_table.py --showdown "$t/showdown" --torch-python "$t/torchpy" --tf-python "$t/peerpy" \
    --jax-python "$t/peerpy" --workloads "$t/wl" --workload w1 --rounds 1 --confirm 0 --profile 0 --precision bf16 \
    --out "$t/h" > "$t/h.txt" 2> "$t/h.err"; rc=$?
got=$(sort "$t/precisions" 2>/dev/null | uniq -c | awk '{print $1, $2, $3}' | paste -sd' ' -)
if [ $rc -ne 0 ]; then bad "--precision bf16: exit $rc"; tail -3 "$t/h.err"
elif [ "$got" = "2 jax bf16 1 native bf16 2 tensorflow bf16 3 torch bf16" ] \
   && grep -q "^bench-cpu: precision bf16, " "$t/h.txt" \
   && grep -q "^bench-cpu: precision fp32, " "$t/a.txt" \
   && "$PY" -c 'import json, sys; assert [json.load(open(f))["precision"] for f in sys.argv[1:]] == ["bf16", "fp32"]' \
        "$t/h/cpu.json" "$t/a/cpu.json"
then ok "--precision bf16: native, torch, tensorflow and jax cells ran bf16; header and cpu.json say bf16 (else fp32)"
else bad "--precision bf16: cells' precisions '$got'"; head -3 "$t/h.txt"; fi
grep -q -- '--precision "${PRECISION:-fp32}"' scripts/bench-cpu.sh && ok "bench-cpu.sh passes PRECISION" \
  || bad "bench-cpu.sh does not pass PRECISION to bench_table"

# the native side's setting: `showdown perf --precision` (bf16 on dnnl where the CPU has it), recorded per run
SD=${SHOWDOWN:-./showdown}
"$SD" perf --precision fp8 --no-ceiling > /dev/null 2> "$t/p8.err"; rc=$?
[ $rc -eq 2 ] && grep -q "expects fp32, tf32, bf16 or fp16" "$t/p8.err" && ok "perf --precision fp8: exit 2, the choices named" \
  || bad "perf --precision fp8: exit $rc: $(cat "$t/p8.err")"
# fp16 is cuDNN's: on the CPU back-ends alone nothing runs, a usage error that says so
"$SD" perf --precision fp16 --workload mnist_mlp --backend ref,dnnl --no-ceiling > /dev/null 2> "$t/p16.err"; rc=$?
[ $rc -eq 2 ] && grep -q "no back-end of this run (--backend) runs --precision fp16" "$t/p16.err" \
  && grep -q "runs on cudnn" "$t/p16.err" && ok "perf --precision fp16 on ref,dnnl: exit 2, fp16 runs on cudnn" \
  || bad "perf --precision fp16 on ref,dnnl: exit $rc: $(cat "$t/p16.err")"
if grep -qw avx512_bf16 /proc/cpuinfo && "$SD" env 2>/dev/null | grep -q "dnnl"; then
  "$SD" perf --workload mnist_mlp --backend dnnl --precision bf16 --threads 1 --seconds 0.1 --repeat 1 --no-ceiling \
      --json "$t/pb.json" > /dev/null 2> "$t/pb.err"; rc=$?
  [ $rc -eq 0 ] && "$PY" -c 'import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
assert r["precision"] == "bf16" and r["backend"] == "dnnl" and r["train_images_per_s"] > 0, r' "$t/pb.json" \
    && ok "perf --precision bf16 on dnnl: the run records precision bf16" \
    || bad "perf --precision bf16: exit $rc: $(tail -2 "$t/pb.err")"
elif "$SD" env 2>/dev/null | grep -qE '^  dnnl +built'; then
  # a CPU without bf16: the run is refused as a usage error that names the instruction set, not run in fp32
  "$SD" perf --workload mnist_mlp --backend dnnl --precision bf16 --seconds 0.1 --repeat 1 --no-ceiling \
      > /dev/null 2> "$t/pb.err"; rc=$?
  [ $rc -eq 2 ] && grep -q "bf16 is not supported on this CPU" "$t/pb.err" && grep -q "AVX512_BF16 or AMX" "$t/pb.err" \
    && ok "perf --precision bf16 on a CPU without AVX512_BF16: exit 2, says so" \
    || bad "perf --precision bf16 without AVX512_BF16: exit $rc: $(cat "$t/pb.err")"
  echo "skipped: perf --precision bf16 run (no avx512_bf16 on this CPU)"
else echo "skipped: perf --precision bf16 (no dnnl back-end)"; fi

# oneDNN's reference convolution and pooling are 40x slower than its kernels: none runs on this CPU (an AVX2 one
# got them from the graph's AVX-512 layout, nChw16c, until the layout followed the instruction set), and no pooling
# runs its plain-NCHW implementation (30 ms a call on mnist_cnn against 1-2 blocked)
if "$SD" env 2>/dev/null | grep -qE '^  dnnl +built'; then
  DNNL_VERBOSE=1 "$SD" perf --workload mnist_cnn,cifar10_vgg --backend dnnl --seconds 0.1 --repeat 1 --no-ceiling \
      > "$t/vb.out" 2> "$t/vb.err"; rc=$?
  isa=$(grep -m1 -o 'isa:[^,]*' "$t/vb.out")
  nconv=$(grep -cE '^onednn_verbose,exec,cpu,(convolution|pooling)' "$t/vb.out")
  refs=$(grep -E '^onednn_verbose,exec,cpu,(convolution|pooling)[^,]*,ref' "$t/vb.out" | cut -d, -f4-7 | sort -u)
  [ $rc -eq 0 ] && [ "$nconv" -gt 0 ] && [ -z "$refs" ] \
    && ok "perf on dnnl ($isa): $nconv convolution and pooling calls, none oneDNN's reference implementation" \
    || bad "perf on dnnl ($isa): exit $rc, $nconv calls, reference ones: $(echo "$refs" | head -3)"

  # the roofline's Winograd probe runs its three shapes in the graph's blocked layout, so the engine's own Winograd
  # (blocked tensors only) is among what it times: each shape shows up in the back-end's Winograd choice (in plain
  # NCHW none did, and the probe read oneDNN's direct kernel, under the sgemm peak, as the Winograd rate)
  SD_DNNL_CHOOSE_LOG=1 "$SD" perf --workload mnist_mlp --backend dnnl --seconds 0.1 --repeat 1 --roofline \
      > "$t/wp.out" 2> "$t/wp.err"; rc=$?
  nshape=0
  for sh in '32x128x32x32->128 k3 s1 train' '64x64x32x32->64 k3 s1 train' '16x256x16x16->256 k3 s1 train'; do
    grep -qF "choose: $sh | fwd oneDNN" "$t/wp.err" && nshape=$((nshape + 1))
  done
  [ $rc -eq 0 ] && [ $nshape -eq 3 ] && grep -q '^Winograd: forward [0-9.]*, backward [0-9.]* GFLOP/s' "$t/wp.out" \
    && ok "perf --roofline: the Winograd probe's 3 shapes go through the back-end's Winograd choice (blocked layout)" \
    || bad "perf --roofline Winograd probe: exit $rc, $nshape of 3 shapes chose: $(grep -m3 choose "$t/wp.err")"
fi

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
  "${PYTHON:-/usr/bin/python3}" scripts/torch_perf.py --showdown "${SHOWDOWN:-./showdown}" --workload mnist_cnn \
      --setting eager --seconds 0.2 --repeat 1 --threads 1 --precision bf16 > "$t/e16.json" 2> "$t/e16.err"; rc=$?
  [ $rc -eq 0 ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["precision"] == "bf16" and d["train_images_per_s"] > 0 and d["infer_images_per_s"] > 0 else 1)' "$t/e16.json" \
    && ok "torch_perf --precision bf16 times mnist_cnn under autocast" \
    || bad "torch_perf --precision bf16 mnist_cnn: exit $rc: $(tail -3 "$t/e16.err")"
else
  echo "skipped: torch_perf (no torch importable by ${PYTHON:-/usr/bin/python3})"
fi

# the real TensorFlow and JAX cells (scripts/tf_perf.py, scripts/jax_perf.py) through bench_table, with the venvs of
# `make deps-frameworks`: one tiny workload, one round, 1 s windows; jax_perf nhwc gives the NCHW logits (mnist_cnn,
# resnet18_cifar); a recurrent workload (babi_rnn) is a cell of each
VENVS=${VENVS:-.venv-frameworks}
tensorflow_py=""; jax_py=""
for fw in tensorflow jax; do
  if [ -x "$VENVS/$fw/bin/python" ] && TF_CPP_MIN_LOG_LEVEL=2 "$VENVS/$fw/bin/python" -c "import $fw, numpy" 2> /dev/null; then
    eval "${fw}_py=\$VENVS/$fw/bin/python"
  else
    echo "skipped: the real $fw cell (no $VENVS/$fw/bin/python importing $fw; make deps-frameworks)"
  fi
done
if [ -n "$tensorflow_py$jax_py" ]; then
  "$PY" scripts/bench_table.py --showdown "${SHOWDOWN:-./showdown}" --torch-python "" --tf-python "$tensorflow_py" \
      --jax-python "$jax_py" --workload mnist_mlp --rounds 1 --confirm 0 --host-wait -1 --seconds 1 --repeat 2 \
      --profile 0 --out "$t/r" \
      > "$t/r.txt" 2> "$t/r.err"; rc=$?
  cat "$t/r.txt"
  if [ $rc -eq 0 ] && "$PY" - "$t/r/cpu.json" "$tensorflow_py" "$jax_py" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["rows"]:
    for fw, py in (("tensorflow", sys.argv[2]), ("jax", sys.argv[3])):
        assert not py or (r[fw + "_best"]["value"] > 0 and r["native_over_%s_best" % fw] > 0), (fw, r)
    assert r["peer_best"]["framework"] in ("tensorflow", "jax"), r["peer_best"]
assert all(c.get("flush_denormal") for c in d["cells"] if c["side"] in ("tensorflow", "jax")), "denormals not flushed"
EOF
  then ok "the real TensorFlow/JAX cells time mnist_mlp through bench_table ($(grep -E '^(tensorflow|jax) [0-9]' "$t/r.txt" | cut -d' ' -f1,2 | paste -sd, -))"
  else bad "real TensorFlow/JAX cells: exit $rc: $(tail -3 "$t/r.err")"; fi
  if [ -n "$jax_py" ]; then   # jax_perf's nhwc setting computes the runner's NCHW logits (a resnet: batch norm, add)
    for w in mnist_cnn resnet18_cifar; do
      "$jax_py" - "${SHOWDOWN:-./showdown}" $w > "$t/n.txt" 2>&1 <<'EOF'
import argparse, sys
import numpy as np
sys.path[:0] = ["scripts", "workloads/runners"]
import perf_common as pc, jax_perf as jp, jax_runner as jr
a = argparse.Namespace(workload=sys.argv[2], workloads="workloads", showdown=sys.argv[1], threads=1, batch=2)
z = []
for nhwc in (False, True):
    cell = pc.Cell(a, jr.Jax)
    fw = jr.Jax(cell.ns)
    params, x = jp.nhwc(fw, cell) if nhwc else (cell.params, cell.x)
    fw.build(cell.layers, params, cell.opt, cell.B)
    z.append(np.asarray(fw.fwd(fw.params, fw.stats, x)))
d = float(np.abs(z[0] - z[1]).max() / np.abs(z[0]).max())
print("max relative difference %.2g" % d)
sys.exit(0 if d < 1e-4 else 1)
EOF
      [ $? -eq 0 ] && ok "jax_perf nhwc: $w's logits as the runner's NCHW ($(tail -1 "$t/n.txt"))" \
        || bad "jax_perf nhwc logits differ on $w: $(tail -3 "$t/n.txt")"
    done
  fi
  # a recurrent workload (embedding with a range, LSTM, repeat_vector, add) is a cell of each framework
  for fw in tensorflow jax; do
    eval "py=\$${fw}_py"; [ -n "$py" ] || continue
    script=$([ $fw = jax ] && echo jax_perf.py || echo tf_perf.py)
    TF_CPP_MIN_LOG_LEVEL=2 "$py" scripts/$script --showdown "${SHOWDOWN:-./showdown}" --workload babi_rnn --threads 1 \
        --seconds 0.2 --repeat 1 > "$t/j.json" 2> "$t/j.err"; rc=$?
    [ $rc -eq 0 ] && "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["train_images_per_s"] > 0 and d["infer_images_per_s"] > 0, d' "$t/j.json" \
      && ok "$script babi_rnn: a cell (training and inference timed)" \
      || bad "$script babi_rnn: exit $rc: $(cat "$t/j.json") $(tail -2 "$t/j.err")"
    # --precision bf16: the runner's bf16 training step and bf16 forward, on a convolution and a recurrent model
    for w in mnist_cnn babi_rnn; do
      TF_CPP_MIN_LOG_LEVEL=2 "$py" scripts/$script --showdown "${SHOWDOWN:-./showdown}" --workload $w --threads 1 \
          --seconds 0.2 --repeat 1 --precision bf16 > "$t/j.json" 2> "$t/j.err"; rc=$?
      [ $rc -eq 0 ] && "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["precision"] == "bf16" and d["train_images_per_s"] > 0 and d["infer_images_per_s"] > 0, d' "$t/j.json" \
        && ok "$script --precision bf16 $w: a cell" \
        || bad "$script --precision bf16 $w: exit $rc: $(cat "$t/j.json") $(tail -2 "$t/j.err")"
    done
  done
fi
exit $fail
