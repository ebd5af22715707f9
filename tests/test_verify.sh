#!/bin/bash
# test_verify — `showdown verify` on crafted published files: one cell of each verdict, the exit codes
# (0 all reproduced, 5 a comparable cell did not, 9 some could not be checked), a --rerun through bench
# with >= 3 repetitions, bench's own results (an unavailable framework among them) accepted, an implementation
# difference NOT-COMPARABLE, a too-wide published or measured spread named, reruns in a slow spell UNVERIFIABLE and measured
# again after the others, a SLOWER confirmed by a second rerun (UNVERIFIABLE when the two disagree), positioned
# errors for a bad file, an interrupted rerun's verdicts kept, and the published CNN table on this machine.
set -u
SD=${SHOWDOWN:-./showdown}
PY=${PYTHON:-/usr/bin/python3}
fail=0; t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=1; }
expect() { # want description command...
  local want=$1 what=$2; shift 2
  "$@" > "$t/out" 2> "$t/err"; local rc=$?
  if [ $rc -eq "$want" ]; then ok "$what (exit $rc)"; else bad "$what: exit $rc, expected $want"; head -5 "$t/err" "$t/out"; fi
}

$SD bench --workload mnist_mlp --backend ref --data synthetic --epochs 2 --batches 3 --repeat 3 --no-db --quiet \
  --json "$t/r.json" > /dev/null || bad "bench for the measurement"
"$PY" -c 'import json, sys
s = json.load(open(sys.argv[1]))["runs"][0]["summary"]
e = s["steady_epochs_s"]
assert e["n"] == 3 and e["min"] <= s["steady_epoch_s"]["median"] <= e["max"], s' "$t/r.json" \
  && ok "the summary holds the steady epochs of every repeat (steady_epochs_s, n 3)" || bad "steady_epochs_s missing or wrong"

# published cells crafted from the measurement: same machine, except where a verdict needs otherwise
"$PY" - "$t" <<'PY'
import copy, json, sys
t = sys.argv[1]
r = json.load(open(t + "/r.json"))
m = r["runs"][0]
med = m["summary"]["steady_epoch_s"]["median"]
acc = m["summary"]["accuracy"]["median"]
def cell(name, value, accuracy=acc, impl="native", env=None, settings=None, host_speed=None):
    c = {"workload": "mnist_mlp", "implementation": impl, "backend": "ref", "note": name,
         "settings": settings or {"batch": 128, "max_batches": 3, "precision": "fp32"},
         "data": {"kind": "synthetic"},
         "summary": {"steady_epoch_s": {"median": value, "n": 1}, "accuracy": {"median": accuracy, "n": 1}}}
    if env: c["environment"] = env
    if host_speed: c["host_speed"] = host_speed
    return c
k80 = {"gpu": {"name": "Tesla K80", "count": 1}, "libraries": {"cuda_runtime": "8.0", "cudnn": "6.0"}}
other_cpu = {"cpu_model": "Imaginary CPU 9000"}
# synthetic data's accuracy is not compared (random labels): the cell whose accuracy differs reproduces
cells = [cell("REPRODUCED", med), cell("SLOWER", med / 1000), cell("FASTER", med * 1000),
         cell("REPRODUCED", med, accuracy=acc + 0.5 if acc < 0.5 else acc - 0.5),
         cell("NOT-COMPARABLE", med, env=k80), cell("MISSING", med, impl="tensorflow")]
def doc(cs):
    return {"schema": "showdown-results/1", "published": {"title": "crafted"}, "environment": r["environment"], "runs": cs}
json.dump(doc(cells), open(t + "/all.json", "w"), indent=1)
json.dump(doc([cells[0]]), open(t + "/ok.json", "w"), indent=1)
json.dump(doc([cells[4], cells[5], cell("other cpu", med, env=other_cpu),
               cell("batch", med, settings={"batch": 64, "max_batches": 3})]), open(t + "/nc.json", "w"), indent=1)
json.dump(doc([cells[0]]), open(t + "/rerun.json", "w"), indent=1)
# the host's speed (its canary, host_speed): a figure faster than one published in a slow spell, and one slower
# measured in a slow spell here, cannot be judged; the same without a slow spell are FASTER and SLOWER
json.dump(doc([cell("pub slow", med * 1000, host_speed=0.72), cell("here slow", med / 1000),
               cell("pub fast", med * 1000, host_speed=0.95)]), open(t + "/host.json", "w"), indent=1)
slow_here = copy.deepcopy(r)
slow_here["runs"][0]["host_speed"] = 0.8
json.dump(slow_here, open(t + "/r-slow.json", "w"), indent=1)
PY

expect 5 "one of each verdict: exit 5 (a comparable cell did not reproduce)" $SD verify "$t/all.json" --results "$t/r.json" --json "$t/v.json"
"$PY" - "$t/v.json" <<'PY' || fail=1
import json, sys
v = json.load(open(sys.argv[1]))
got = [(c["note"], c["verdict"]) for c in v["cells"]]
for note, verdict in got:
    assert note == verdict, got
assert v["exit_code"] == 5 and v["counts"]["REPRODUCED"] == 2 and v["counts"]["MISSING"] == 1, v["counts"]
assert "accuracy not compared (synthetic data)" in v["cells"][3]["why"], v["cells"][3]["why"]
assert "host ran" not in v["cells"][1]["why"] + v["cells"][2]["why"], v["cells"][1:3]
nc = v["cells"][4]
assert "device: published Tesla K80 (GPU), here CPU" in nc["why"], nc["why"]
assert "tensorflow" in v["cells"][5]["why"], v["cells"][5]["why"]
print("ok: verdicts", [g[1] for g in got])
PY
grep -q "REPRODUCED" "$t/out" && grep -q "SLOWER" "$t/out" && ok "table on stdout" || bad "table: $(cat "$t/out")"
# on real data (Fashion-MNIST) an accuracy beyond --acc-tolerance is ACCURACY-DIFFERS
if $SD bench --workload mnist_mlp --backend ref --data real --epochs 2 --batches 3 --repeat 3 --no-db --quiet \
     --json "$t/real.json" > /dev/null 2>&1; then
  "$PY" - "$t" <<'PY'
import json, sys
t = sys.argv[1]
r = json.load(open(t + "/real.json"))
c = dict(r["runs"][0])
c["summary"] = dict(c["summary"], accuracy={"median": c["summary"]["accuracy"]["median"] + 0.3, "n": 1})
json.dump(dict(r, runs=[c]), open(t + "/realacc.json", "w"))
PY
  expect 5 "real data, accuracy 0.3 off: exit 5" $SD verify "$t/realacc.json" --results "$t/real.json"
  grep -q "ACCURACY-DIFFERS *accuracy: published" "$t/out" && ok "real data: ACCURACY-DIFFERS" || bad "real data: $(cat "$t/out")"
else echo "skipped: accuracy on real data (no Fashion-MNIST here: apt-get install dataset-fashion-mnist)"; fi
# a framework with a runner is measured like the engine (here: no tensorflow run in the results: MISSING, naming
# the measurement looked for); a framework showdown has no runner for is MISSING for that reason
"$PY" - "$t" <<'PY'
import json, sys
t = sys.argv[1]
d = json.load(open(t + "/all.json"))
c = dict(d["runs"][0], implementation="caffe2", note="no runner")
json.dump(dict(d, runs=[c]), open(t + "/caffe2.json", "w"))
PY
expect 9 "a framework without a runner" $SD verify "$t/caffe2.json" --results "$t/r.json"
grep -q "MISSING *no caffe2 runner in showdown" "$t/out" && ok "MISSING names the missing runner" || bad "caffe2: $(cat "$t/out")"
grep -q "no measurement of mnist_mlp/tensorflow/cpu" "$t/err" "$t/out" 2>/dev/null || $SD verify "$t/all.json" --results "$t/r.json" 2>/dev/null | grep -q "no measurement of mnist_mlp/tensorflow/cpu" \
  && ok "a runner's cell looks for that runner's measurement" || bad "tensorflow cell: $($SD verify "$t/all.json" --results "$t/r.json" 2>&1 | grep tensorflow)"

expect 5 "host slow spells: unverifiable (and a FASTER beside them: exit 5)" $SD verify "$t/host.json" --results "$t/r-slow.json" --json "$t/host-v.json"
"$PY" - "$t/host-v.json" <<'PY' && ok "a slow spell at either end: UNVERIFIABLE, naming the host's speed" || fail=1
import json, sys
c = json.load(open(sys.argv[1]))["cells"]
got = [(x["note"], x["verdict"]) for x in c]
assert got == [("pub slow", "UNVERIFIABLE"), ("here slow", "UNVERIFIABLE"), ("pub fast", "FASTER")], got
assert "faster than published, which was measured while its host ran at 72% of its speed" in c[0]["why"], c[0]["why"]
assert "slower than published, but measured while this host ran at 80% of its speed (its canary): rerun it when " \
    "the host is quiet" in c[1]["why"], c[1]["why"]
assert c[0]["host_speed_published"] == 0.72 and c[1]["host_speed_measured"] == 0.8, c[:2]
assert "host_speed_published" not in c[1] and c[2]["host_speed_published"] == 0.95, c[1:]
PY
expect 0 "all reproduced: exit 0" $SD verify "$t/ok.json" --results "$t/r.json"
expect 9 "only not comparable / missing: exit 9" $SD verify "$t/nc.json" --results "$t/r.json" --json "$t/nc-v.json"
grep -q "cpu: published Imaginary CPU 9000, here " "$t/out" && ok "CPU model difference named" || bad "cpu diff: $(cat "$t/out")"
grep -q "batch: published 64, here 128" "$t/out" && ok "batch difference named" || bad "batch diff: $(cat "$t/out")"

# --rerun measures through bench with at least 3 repetitions (tolerance wide: this checks the path, not speed)
expect 0 "--rerun" $SD verify "$t/rerun.json" --rerun --tolerance 1e8 --acc-tolerance 1 --json "$t/rr.json"
"$PY" -c 'import json,sys; c=json.load(open(sys.argv[1]))["cells"][0]; assert c["measured"]["n"] >= 3, c; print("ok: rerun n =", c["measured"]["n"])' "$t/rr.json" || fail=1
# a long rerun says where it is: the round, the process of how many
grep -q "^verify: round 1 of 3 \[1/3\]: mnist_mlp/native/ref$" "$t/err" && ok "the rerun says its progress (round 1 of 3 [1/3])" \
  || bad "no 'round 1 of 3 [1/3]' progress: $(cat "$t/err")"
# two cells' repeats run in rounds, one process of each a round, as make report's bench --spread measured them,
# and each cell is judged from its three processes joined
$SD bench --workload mnist_mlp,mnist_cnn --backend ref --data synthetic --epochs 2 --batches 2 --repeat 1 --no-db --quiet \
  --json "$t/two.json" > /dev/null 2>&1 || bad "bench for two cells"
expect 0 "--rerun of two cells" $SD verify "$t/two.json" --rerun --tolerance 1e8 --acc-tolerance 1 --json "$t/two-v.json"
grep '^verify: round' "$t/err" | sed 's/ ·.*//' > "$t/order"
printf 'verify: round %s: mnist_%s/native/ref\n' "1 of 3 [1/6]" mlp "1 of 3 [2/6]" cnn "2 of 3 [3/6]" mlp "2 of 3 [4/6]" cnn \
  "3 of 3 [5/6]" mlp "3 of 3 [6/6]" cnn | cmp -s - "$t/order" \
  && "$PY" -c 'import json, sys; c = json.load(open(sys.argv[1]))["cells"]; assert [x["measured"]["n"] for x in c] == [3, 3, 3, 3], c' "$t/two-v.json" \
  && ok "two cells' processes in rounds, one of each a round, each judged (steady epoch, inference) from its three" \
  || bad "two cells' rounds: $(cat "$t/order" "$t/err")"

# bench's own results, as `make report` writes them: a measured cell, a framework that is not installed
# (unavailable: no summary) and, when Debian's PyTorch runs here, a framework cell; verify accepts them all
impls=native,tensorflow
$SD env 2>/dev/null | grep -q "^  pytorch  *runnable" && impls=native,pytorch,tensorflow
$SD bench --workload mnist_mlp --impl "$impls" --backend ref --data synthetic --epochs 2 --batches 3 --repeat 2 \
  --venvs "$t/no-venvs" --no-db --quiet --json "$t/own.json" > /dev/null 2>&1
grep -q '"unavailable"' "$t/own.json" || bad "own results: no unavailable run: $(grep -c status "$t/own.json")"
expect 0 "own results verified against themselves" $SD verify "$t/own.json" --results "$t/own.json" --json "$t/own-v.json"
grep -q "tensorflow .* UNAVAILABLE  *not measured in the published run: unavailable" "$t/out" \
  && ok "the unavailable framework is shown as such" || bad "unavailable row: $(cat "$t/out" "$t/err")"
# --impl / --workload: only those cells are checked (a reader re-checking the cells that matter to them)
$SD verify "$t/own.json" --results "$t/own.json" --impl native > "$t/only" 2>&1; rc=$?
if [ $rc -eq 0 ] && grep -q "^mnist_mlp *native " "$t/only" && ! grep -q "tensorflow" "$t/only"; then
  ok "--impl native: the native cells alone (exit 0)"
else bad "--impl native: exit $rc: $(cat "$t/only")"; fi
$SD verify "$t/own.json" --results "$t/own.json" --workload mnist_cnn > "$t/only" 2>&1; rc=$?
[ $rc -eq 9 ] && ! grep -q "^mnist_mlp" "$t/only" && ok "--workload of no published cell: nothing checked (exit 9)" \
  || bad "--workload mnist_cnn: exit $rc: $(cat "$t/only")"
"$PY" - "$t/own-v.json" <<'PY' || fail=1
import json, sys
v = json.load(open(sys.argv[1]))
k = v["counts"]
assert k["REPRODUCED"] >= 1 and k["NOT-MEASURED"] == 1 and v["exit_code"] == 0, k
print("ok: own results counts", k)
PY
expect 0 "own results --rerun (tolerance wide: the path, not the speed)" $SD verify "$t/own.json" --rerun --tolerance 1e8 \
  --acc-tolerance 1 --quiet

# a difference in the implementation's identity is NOT-COMPARABLE, naming it: the back-end's recorded
# implementation, and a framework's version (PyTorch 2.15 published, Debian's here)
"$PY" - "$t" <<'PY'
import json, sys
t = sys.argv[1]
d = json.load(open(t + "/own.json"))
for r in d["runs"]:
    if r["implementation"] == "native":
        r["backend_env"]["backend_impl"] = "plain C 0.9 (imagined)"
    if r["implementation"] == "pytorch":
        r["backend_env"]["version"] = "2.15.0"
json.dump(d, open(t + "/other-impl.json", "w"))
PY
expect 9 "another implementation: exit 9" $SD verify "$t/other-impl.json" --results "$t/own.json"
grep -q "native .* NOT-COMPARABLE   backend_impl: published plain C 0.9 (imagined), here plain C" "$t/out" \
  && ok "a back-end difference is named" || bad "back-end identity: $(cat "$t/out")"
if grep -q '"pytorch"' "$t/own.json"; then
  grep -q "pytorch .* NOT-COMPARABLE   framework version: published 2.15.0, here " "$t/out" \
    && ok "a PyTorch version difference is NOT-COMPARABLE" || bad "pytorch version: $(cat "$t/out")"
else
  echo "skipped: no runnable pytorch here for the framework-version case"
fi

# a published spread wider than the tolerance: a measurement inside it is UNVERIFIABLE, and verify says why
"$PY" - "$t" <<'PY'
import json, sys
t = sys.argv[1]
r = json.load(open(t + "/r.json"))
med = r["runs"][0]["summary"]["steady_epoch_s"]["median"]
d = json.load(open(t + "/ok.json"))
d["runs"][0]["summary"]["steady_epoch_s"] = {"median": med / 1.3, "min": med / 2, "max": med * 1.2, "n": 3}
json.dump(d, open(t + "/wide.json", "w"))
r["runs"][0]["summary"]["steady_epoch_s"] = {"median": med, "min": med * 0.98, "max": med * 1.02, "n": 3}
json.dump(r, open(t + "/narrow.json", "w"))   # a measurement with a narrow spread of its own
PY
expect 9 "a published spread wider than the tolerance" $SD verify "$t/wide.json" --results "$t/narrow.json"
grep -q "UNVERIFIABLE .*published spread [0-9.]*% \[.*\] is wider than the 10% tolerance" "$t/out" \
  && ok "UNVERIFIABLE names the published spread" || bad "spread: $(cat "$t/out")"
# one repeat has no spread over repeats, but its steady epochs (2..N) have one (summary.steady_epochs_s): a rerun
# 20% slower that lies inside a published run's own 30% epoch spread is UNVERIFIABLE, not SLOWER; without it, SLOWER
"$PY" - "$t" <<'PY'
import json, sys
t = sys.argv[1]
r = json.load(open(t + "/narrow.json"))
med = r["runs"][0]["summary"]["steady_epoch_s"]["median"]
d = json.load(open(t + "/ok.json"))
d["runs"][0]["summary"]["steady_epoch_s"] = {"median": med / 1.2, "min": med / 1.2, "max": med / 1.2, "n": 1}
json.dump(d, open(t + "/one.json", "w"))
d["runs"][0]["summary"]["steady_epochs_s"] = {"median": med, "min": med / 1.2, "max": med * 1.1, "n": 2}
json.dump(d, open(t + "/one-epochs.json", "w"))
PY
expect 5 "one repeat, no epoch spread recorded: SLOWER" $SD verify "$t/one.json" --results "$t/narrow.json"
grep -q " SLOWER " "$t/out" && ok "a single-repeat figure without its epochs' spread: SLOWER" || bad "one: $(cat "$t/out")"
expect 9 "one repeat whose steady epochs spread 30%" $SD verify "$t/one-epochs.json" --results "$t/narrow.json"
grep -q "UNVERIFIABLE .*published spread [0-9.]*% \[.*\] is wider than the 10% tolerance" "$t/out" \
  && ok "a single-repeat figure whose steady epochs spread wider than the tolerance: UNVERIFIABLE" \
  || bad "steady epochs spread: $(cat "$t/out")"
# from three repeats on, the figure is the repeats' median and its spread theirs: a slow epoch inside a repeat
# (steady epochs spread 30%, repeats 2%) leaves it verifiable
"$PY" - "$t" <<'PY'
import json, sys
t = sys.argv[1]
r = json.load(open(t + "/narrow.json"))
med = r["runs"][0]["summary"]["steady_epoch_s"]["median"]
d = json.load(open(t + "/ok.json"))
d["runs"][0]["summary"]["steady_epoch_s"] = {"median": med, "min": med * 0.99, "max": med * 1.01, "n": 3}
d["runs"][0]["summary"]["steady_epochs_s"] = {"median": med, "min": med * 0.99, "max": med * 1.3, "n": 6}
json.dump(d, open(t + "/three-epochs.json", "w"))
PY
expect 0 "three repeats within 2%, one slow steady epoch" $SD verify "$t/three-epochs.json" --results "$t/narrow.json"
grep -q " REPRODUCED" "$t/out" && ! grep -q "UNVERIFIABLE" "$t/out" \
  && ok "a 3-repeat figure's spread is its repeats', not its epochs': REPRODUCED" || bad "three: $(cat "$t/out")"

# a measurement whose own repeats spread wider than the tolerance: a published figure within the tolerance of its
# range is UNVERIFIABLE, naming that spread; one beyond the tolerance of its fastest repeat stays SLOWER
"$PY" - "$t" <<'PY'
import json, sys
t = sys.argv[1]
r = json.load(open(t + "/narrow.json"))
med = r["runs"][0]["summary"]["steady_epoch_s"]["median"]
d = json.load(open(t + "/ok.json"))
d["runs"][0]["summary"]["steady_epoch_s"] = {"median": med / 1.2, "min": med / 1.21, "max": med / 1.19, "n": 3}
json.dump(d, open(t + "/pub-narrow.json", "w"))
r["runs"][0]["summary"]["steady_epoch_s"] = {"median": med, "min": med / 1.12, "max": med * 1.1, "n": 3}
json.dump(r, open(t + "/m-wide.json", "w"))     # fastest repeat 7% above the published figure, spread 21%
r["runs"][0]["summary"]["steady_epoch_s"] = {"median": med, "min": med / 1.05, "max": med * 1.2, "n": 3}
json.dump(r, open(t + "/m-wide-slow.json", "w"))  # fastest repeat 14% above it, spread 25%
PY
expect 9 "a measurement spreading 21%, its fastest repeat 7% off" $SD verify "$t/pub-narrow.json" --results "$t/m-wide.json" \
  --json "$t/m-wide-v.json"
grep -q "UNVERIFIABLE .*20.0% slower than published, but this measurement's own spread 2[01].[0-9]% \[.*\] is wider than the 10% tolerance" \
  "$t/out" && "$PY" -c 'import json, sys; c = json.load(open(sys.argv[1]))["cells"][0]
assert c["verdict"] == "UNVERIFIABLE" and 20 < c["measured_spread_pct"] < 22, c' "$t/m-wide-v.json" \
  && ok "a rerun spreading wider than the tolerance around the published figure: UNVERIFIABLE, its spread named" \
  || bad "measured spread: $(cat "$t/out")"
expect 5 "a measurement spreading 25%, its fastest repeat 14% off" $SD verify "$t/pub-narrow.json" --results "$t/m-wide-slow.json"
grep -q " SLOWER .*20.0% slower than published, outside the tolerance" "$t/out" \
  && ok "a wide rerun whose fastest repeat is beyond the tolerance: SLOWER" || bad "wide slow: $(cat "$t/out")"
# the published figure inside a rerun's min-max that spreads wider than the tolerance, its median 20% off: not
# REPRODUCED (a rerun of make report's results held a figure 39% off inside a 36% spread so) but UNVERIFIABLE
"$PY" - "$t" <<'PY'
import json, sys
t = sys.argv[1]
r = json.load(open(t + "/narrow.json"))
med = r["runs"][0]["summary"]["steady_epoch_s"]["median"]
r["runs"][0]["summary"]["steady_epoch_s"] = {"median": med, "min": med / 1.25, "max": med * 1.02, "n": 3}
json.dump(r, open(t + "/m-wide-holds.json", "w"))   # its fastest repeat 4% below the published figure, spread 22%
PY
expect 9 "a measurement spreading 22% around the published figure, its median 20% off" $SD verify "$t/pub-narrow.json" \
  --results "$t/m-wide-holds.json"
grep -q "UNVERIFIABLE .*20.0% slower than published, but this measurement's own spread 2[12].[0-9]% \[.*\] is wider than the 10% tolerance" \
  "$t/out" && ! grep -q REPRODUCED "$t/out" \
  && ok "a published figure inside a measured range wider than the tolerance: UNVERIFIABLE, not REPRODUCED" \
  || bad "inside a wide range: $(cat "$t/out")"

# a best-setting run (bench-cpu's, as make report adds them) reruns its recorded cell script: here a fake one that
# prints the figure it is given; the same figure REPRODUCED, another version NOT-COMPARABLE naming it, an
# interpreter that is not here NOT-COMPARABLE, and a run that measures its shipped setting beside it is not taken
cat > "$t/cell.py" <<'EOF'
import json, os, sys
a = sys.argv
st = a[a.index("--setting") + 1]
calls = os.path.join(os.path.dirname(a[0]), "cell.calls")
open(calls, "a").write(st + "\n")
# FAKE_SLOW=f: f times slower, in the first FAKE_SLOW_CALLS processes (default all)
n = sum(1 for _ in open(calls))
f = float(os.environ.get("FAKE_SLOW", "1")) if n <= int(os.environ.get("FAKE_SLOW_CALLS", "1000000")) else 1.0
if os.environ.get("FAKE_SLEEP"):   # a process that takes long (the run an interruption lands in)
    import time
    time.sleep(float(os.environ["FAKE_SLEEP"]))
for s in st.split(","):
    print(json.dumps({"setting": s, "version": os.environ.get("FAKE_VERSION", "9.9"), "batch": 128,
                      "train_images_per_s": 1000.0 / f, "train_windows_s": [0.128 * f, 0.130 * f, 0.140 * f],
                      "infer_images_per_s": 2000.0 if os.environ.get("FAKE_INFER") else None,
                      "infer_windows_s": [0.064, 0.064, 0.064], "peak_rss_mib": 100}))
EOF
"$PY" - "$t" "$PY" <<'PY'
import json, sys
t, py = sys.argv[1], sys.argv[2]
d = json.load(open(t + "/r.json"))
def best(version, python=py, setting="jit"):
    return {"workload": "mnist_mlp", "implementation": "jax", "backend": "cpu", "status": "ok", "source": "bench-cpu",
            "settings": {"setting": setting, "threads": 2, "precision": "fp32", "batch": 128},
            "backend_env": {"interpreter": python, "version": version},
            "rerun": {"python": python, "script": t + "/cell.py", "args": ["--workload", "mnist_mlp", "--setting", "nhwc,jit"],
                      "env": ["FAKE_VERSION=9.9"]},
            "summary": {"train_images_per_s": {"median": 1015.6, "min": 1015.6, "max": 1015.6, "n": 1},
                        "train_s_per_1000_images": {"median": 0.9846, "min": 0.9846, "max": 0.9846, "n": 1}},
            "samples": [{"repeat": 1, "peak_bytes": 0}]}
json.dump(dict(d, runs=[best("9.9"), best("9.9", setting="nhwc")]), open(t + "/best.json", "w"))
json.dump(dict(d, runs=[best("1.0")]), open(t + "/best-ver.json", "w"))
json.dump(dict(d, runs=[best("9.9", python=t + "/no-python")]), open(t + "/best-nopy.json", "w"))
PY
expect 0 "a best setting rerun through its cell script" $SD verify "$t/best.json" --rerun --host-wait 0 --quiet --json "$t/bv.json"
[ "$(grep -c "jax .* train_s_per_1000_images .* REPRODUCED" "$t/out")" = 2 ] \
  && ok "two best settings REPRODUCED (1000 img/s at the fastest window)" || bad "best setting: $(cat "$t/out" "$t/err")"
[ "$(wc -l < "$t/cell.calls")" = 3 ] && ok "the two settings of one command: 3 processes, not 6" \
  || bad "cell script ran $(wc -l < "$t/cell.calls") times for two settings of one command"
expect 0 "the same rerun with its progress" $SD verify "$t/best.json" --rerun --host-wait 0
grep -q "^verify: round 3 of 3 \[3/3\]: mnist_mlp/jax setting jit" "$t/err" && ! grep -q "/6\]" "$t/err" \
  && ok "its progress counts the shared command's processes once: [3/3]" || bad "shared command's progress: $(cat "$t/err")"
expect 9 "a best setting under another framework version" $SD verify "$t/best-ver.json" --rerun --quiet
grep -q "NOT-COMPARABLE *framework version: published 1.0, here 9.9" "$t/out" && ok "its version difference is named" \
  || bad "best-ver: $(cat "$t/out")"
expect 9 "a best setting whose interpreter is not here" $SD verify "$t/best-nopy.json" --rerun --quiet
grep -q "NOT-COMPARABLE *setting jit cannot be measured here: its interpreter .*no-python is not here" "$t/out" \
  && ok "a missing interpreter is NOT-COMPARABLE, not a substitute" || bad "best-nopy: $(cat "$t/out")"

# make report publishes a best setting as verify measures it again: bench --best-settings runs each recorded command
# in 3 processes (two settings of one command share them), the phases a run holds take the median, min and max of the
# processes' fastest windows, and verify --rerun then reproduces them; a run whose interpreter is gone keeps its figure
: > "$t/cell.calls"
cp "$t/best.json" "$t/pub.json"
expect 0 "bench --best-settings" $SD bench --best-settings "$t/pub.json" --repeat 3 --quiet
"$PY" - "$t/pub.json" <<'PY' && ok "best settings published from 3 processes: median 1015.6 img/s at the fastest window, n 3" \
  || bad "bench --best-settings wrote $(cat "$t/pub.json")"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert len(runs) == 2, runs
for r in runs:
    s = r["summary"]
    assert set(s) == {"train_images_per_s", "train_s_per_1000_images"}, s   # no phase the run did not hold
    t = s["train_images_per_s"]
    assert t["n"] == 3 and abs(t["median"] - 1000 * 0.130 / 0.128) < 1e-6, t
    assert abs(s["train_s_per_1000_images"]["median"] - 1000 / t["median"]) < 1e-9, s
    assert len(r["samples"]) == 3 and r["samples"][0]["peak_rss_bytes"] == 100 * 1048576, r["samples"]
    assert r["rerun"]["args"][-1] == "nhwc,jit" and r["settings"]["setting"] in ("jit", "nhwc"), r
PY
[ "$(wc -l < "$t/cell.calls")" = 3 ] && ok "bench --best-settings: the two settings of one command in 3 processes" \
  || bad "bench --best-settings ran the cell script $(wc -l < "$t/cell.calls") times"
expect 0 "verify --rerun of what bench --best-settings published" $SD verify "$t/pub.json" --rerun --host-wait 0 --quiet
# a best setting whose processes disagree by more than verify's tolerance (the first 1.3 times slower: 30%) is
# measured again after the others, and the processes that agree better are published (the canary held at one figure:
# a spell of the host during the case would take the slow-host pass instead)
: > "$t/cell.calls"
cp "$t/best.json" "$t/pub-wide.json"
FAKE_SLOW=1.3 FAKE_SLOW_CALLS=1 SHOWDOWN_HOST_CANARY=1000 SHOWDOWN_HOST_REF="$t/ref-wide" $SD bench --best-settings "$t/pub-wide.json" --repeat 3 \
  --host-wait 0.2 > "$t/out" 2> "$t/err"; rc=$?
[ $rc -eq 0 ] && grep -q "^bench: 2 best setting(s) spread wider than verify's tolerance over their processes: measuring them again$" "$t/err" \
  && grep -Eq "^bench: mnist_mlp/jax setting jit: spread 0\.0% \(first 30\.0%\), host at [0-9]+%: this measurement published$" "$t/err" \
  && [ "$(wc -l < "$t/cell.calls")" = $((6 + $(grep -c ' ran while the host was at [0-9]*% of its speed: run once more$' "$t/err"))) ] \
  && "$PY" -c 'import json, sys; r = json.load(open(sys.argv[1]))["runs"]; assert all(x["summary"]["train_s_per_1000_images"]["max"] < 0.99 for x in r), r' "$t/pub-wide.json" \
  && ok "bench --best-settings: a setting whose processes disagree by 30% measured again, the steadier published" \
  || bad "bench --best-settings wide: exit $rc, $(wc -l < "$t/cell.calls") processes, $(cat "$t/err")"
# two commands' processes run in rounds, one process of each a round, so a drift of the host over the pass lands in
# every figure's spread alike rather than in one figure's median: the calls alternate, in bench and in verify
"$PY" - "$t/best.json" "$t/pub-two.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["runs"][1]["rerun"]["args"] = ["--workload", "mnist_mlp", "--setting", "nhwc,eager"]
json.dump(d, open(sys.argv[2], "w"))
PY
: > "$t/cell.calls"
expect 0 "bench --best-settings of two commands" $SD bench --best-settings "$t/pub-two.json" --repeat 3 --host-wait 0
[ "$(tr '\n' ' ' < "$t/cell.calls")" = "nhwc,jit nhwc,eager nhwc,jit nhwc,eager nhwc,jit nhwc,eager " ] \
  && grep -q "^bench: round 3 of 3 \[6/6\]: mnist_mlp/jax setting nhwc .* min left$" "$t/err" \
  && ok "bench --best-settings: two commands' processes in 3 rounds, one of each a round, with progress" \
  || bad "bench --best-settings rounds: $(tr '\n' ' ' < "$t/cell.calls"); $(cat "$t/err")"
: > "$t/cell.calls"
expect 0 "verify --rerun of two commands" $SD verify "$t/pub-two.json" --rerun --host-wait 0
[ "$(tr '\n' ' ' < "$t/cell.calls")" = "nhwc,jit nhwc,eager nhwc,jit nhwc,eager nhwc,jit nhwc,eager " ] \
  && [ "$(grep -c "jax .* REPRODUCED" "$t/out")" = 2 ] && grep -q "^verify: round 1 of 3 \[1/6\]: mnist_mlp/jax setting jit$" "$t/err" \
  && ok "verify --rerun: the same rounds, both REPRODUCED" \
  || bad "verify rounds: $(tr '\n' ' ' < "$t/cell.calls"); $(cat "$t/out" "$t/err")"
# a best-settings pass killed in the middle (make report's step 3 at a session's end) goes on from the processes that
# ended: each is kept in FILE.journal as it ends, the same command takes them up and runs only the rest, and what it
# publishes is what an uninterrupted pass publishes; a journal of other results is not taken up; none is left after
cp "$t/best.json" "$t/pub-j.json"; "$PY" - "$t/pub-two.json" "$t/pub-j.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[2]))
d["runs"][1]["rerun"]["args"] = ["--workload", "mnist_mlp", "--setting", "nhwc,eager"]
json.dump(d, open(sys.argv[2], "w"))
PY
cp "$t/pub-j.json" "$t/pub-j0.json"
: > "$t/cell.calls"
FAKE_SLEEP=0.4 $SD bench --best-settings "$t/pub-j.json" --repeat 3 --host-wait 0 > "$t/out" 2> "$t/err" & jp=$!
for _ in $(seq 1 300); do [ "$(wc -l < "$t/cell.calls")" -ge 4 ] && break; sleep 0.05; done
kill -INT $jp; wait $jp; rc=$?
[ $rc -eq 130 ] && cmp -s "$t/pub-j.json" "$t/pub-j0.json" && [ "$(grep -c '"pass"' "$t/pub-j.json.journal")" = 3 ] \
  && grep -q "interrupted; .*pub-j.json left as it was, the processes that ended kept in .*pub-j.json.journal" "$t/err" \
  && ok "bench --best-settings interrupted at its 4th process: the file as it was, 3 processes kept in its journal" \
  || bad "journal interrupt: exit $rc, $(wc -l < "$t/cell.calls") calls, $(cat "$t/err"; cat "$t/pub-j.json.journal" 2>/dev/null | head -c 300)"
: > "$t/cell.calls"
expect 0 "bench --best-settings run again on the interrupted pass" $SD bench --best-settings "$t/pub-j.json" --repeat 3 --host-wait 0
[ "$(tr '\n' ' ' < "$t/cell.calls")" = "nhwc,eager nhwc,jit nhwc,eager " ] \
  && grep -q "^bench: going on from .*pub-j.json.journal: 3 process(es) of an interrupted run kept$" "$t/err" \
  && grep -q "^bench: round 2 of 3 \[1/3\]: mnist_mlp/jax setting nhwc$" "$t/err" \
  && cmp -s <("$PY" -c 'import json,sys; print(json.dumps([r["summary"] for r in json.load(open(sys.argv[1]))["runs"]], sort_keys=True))' "$t/pub-j.json") \
            <("$PY" -c 'import json,sys; print(json.dumps([r["summary"] for r in json.load(open(sys.argv[1]))["runs"]], sort_keys=True))' "$t/pub-two.json") \
  && [ ! -e "$t/pub-j.json.journal" ] \
  && ok "run again, it measures the 3 processes missing, publishes what an uninterrupted pass does, and drops the journal" \
  || bad "journal resume: $(tr '\n' ' ' < "$t/cell.calls"); $(cat "$t/err"); journal left: $(ls "$t"/pub-j.json.journal 2>&1)"
cp "$t/pub-j0.json" "$t/pub-j.json"
printf '%s\n' '{"format":"showdown-best-settings-journal/1","results":"0000000000000000","repeat":3}' \
  "$(printf '{"pass":0,"argv":["x"],"env":[],"speed":null,"out":"{}"}')" > "$t/pub-j.json.journal"
: > "$t/cell.calls"
expect 0 "bench --best-settings beside a journal of other results" $SD bench --best-settings "$t/pub-j.json" --repeat 3 --host-wait 0
[ "$(wc -l < "$t/cell.calls")" = 6 ] && grep -q "pub-j.json.journal was of other results or another --repeat, or empty: started anew" "$t/err" \
  && ok "a journal of other results is not taken up: all 6 processes measured" \
  || bad "foreign journal: $(wc -l < "$t/cell.calls") calls; $(cat "$t/err")"
cp "$t/best-nopy.json" "$t/pub-nopy.json"
expect 1 "bench --best-settings with an interpreter that is not here" $SD bench --best-settings "$t/pub-nopy.json"
grep -q "mnist_mlp/jax setting jit: kept the figure of the pass that chose it: its interpreter .*no-python is not here" \
  "$t/err" && cmp -s <("$PY" -m json.tool --sort-keys "$t/best-nopy.json") <("$PY" -m json.tool --sort-keys "$t/pub-nopy.json") \
  && ok "a best setting that cannot be measured keeps its figure and is named" || bad "nopy: $(cat "$t/err")"

# a run's inference figure beside its training figure (page 2's inference table) is a cell of its own, judged from
# the same processes: a best setting with both phases gives two cells from 3 processes; a native bench run two cells
"$PY" - "$t" <<'PY'
import json, sys
t = sys.argv[1]
d = json.load(open(t + "/best.json"))
b = d["runs"][0]
b["rerun"]["env"].append("FAKE_INFER=1")
b["summary"]["inference_s_per_1000_images"] = {"median": 0.5, "min": 0.5, "max": 0.5, "n": 1}
json.dump(dict(d, runs=[b]), open(t + "/both.json", "w"))
PY
: > "$t/cell.calls"
expect 0 "a best setting with a training and an inference figure" $SD verify "$t/both.json" --rerun --host-wait 0 --quiet
grep -q "jax .* train_s_per_1000_images .* REPRODUCED" "$t/out" && grep -q "jax .* inference_s_per_1000_images .* 0.5 .* REPRODUCED" "$t/out" \
  && grep -q "^2 cell(s): 2 reproduced" "$t/out" && [ "$(wc -l < "$t/cell.calls")" = 3 ] \
  && ok "its training and inference figures: two cells REPRODUCED from the same 3 processes" \
  || bad "both phases: $(wc -l < "$t/cell.calls") processes, $(cat "$t/out" "$t/err")"
expect 0 "a native run checked against itself" $SD verify "$t/r.json" --results "$t/r.json"
grep -q "mnist_mlp .* native .* steady_epoch_s .* REPRODUCED" "$t/out" \
  && grep -q "mnist_mlp .* native .* inference_s_per_1000_images .* REPRODUCED" "$t/out" \
  && ok "a native run's steady epoch and inference pass: two cells" || bad "native both: $(cat "$t/out")"

# one rerun out of the tolerance is measured again after the others: SLOWER when the second agrees (two reruns, 6
# processes), UNVERIFIABLE "two reruns disagree" when the second reproduces (a spell the canary missed)
"$PY" - "$t" <<'PY'
import json, sys
t = sys.argv[1]
d = json.load(open(t + "/best.json"))
b = d["runs"][0]
b["rerun"]["env"].append("FAKE_SLOW=2")
json.dump(dict(d, runs=[b]), open(t + "/slow2.json", "w"))
b["rerun"]["env"].append("FAKE_SLOW_CALLS=3")
json.dump(dict(d, runs=[b]), open(t + "/slow-once.json", "w"))
PY
: > "$t/cell.calls"
expect 5 "a rerun twice 2x slower" $SD verify "$t/slow2.json" --rerun --host-wait 0 --json "$t/s2.json"
grep -q "^verify: 1 cell(s) outside the tolerance: measuring them again to confirm it$" "$t/err" \
  && grep -q "jax .* train_s_per_1000_images .* SLOWER .*; confirmed by a second rerun after the others: 1.9[0-9]* (100.0% slower)" "$t/out" \
  && [ "$(wc -l < "$t/cell.calls")" = 6 ] && ok "SLOWER confirmed by a second rerun (6 processes)" \
  || bad "slow2: $(wc -l < "$t/cell.calls") processes, $(cat "$t/out" "$t/err")"
: > "$t/cell.calls"
expect 9 "a rerun 2x slower once, then at speed" $SD verify "$t/slow-once.json" --rerun --host-wait 0 --quiet
grep -q "jax .* train_s_per_1000_images .* UNVERIFIABLE *two reruns disagree: the first measured 1.9[0-9]* (100.0% slower), a second after the others 0.9[0-9]* (REPRODUCED: within 10%" "$t/out" \
  && [ "$(wc -l < "$t/cell.calls")" = 6 ] && ok "two reruns that disagree: UNVERIFIABLE naming both" \
  || bad "slow-once: $(wc -l < "$t/cell.calls") processes, $(cat "$t/out" "$t/err")"

# an interrupted rerun keeps what it measured (a reader's rerun of a report takes hours): SIGINT while the third run's
# process sleeps ends it within seconds with exit 130, the child gone; the table and the --json file hold the two runs
# whose command ran a process in the round it stopped in, each judged from it and saying so, the SLOWER no second
# rerun confirmed said UNVERIFIABLE
"$PY" - "$t" <<'PY'
import copy, json, sys
t = sys.argv[1]
d = json.load(open(t + "/best.json"))
a = d["runs"][0]
def run(setting, env):
    r = copy.deepcopy(a)
    r["settings"]["setting"] = setting
    r["rerun"]["args"] = ["--workload", "mnist_mlp", "--setting", setting]
    r["rerun"]["env"] += env
    return r
json.dump(dict(d, runs=[run("jit", []), run("nhwc", ["FAKE_SLOW=2"]), run("jit", ["FAKE_SLEEP=120"])]),
          open(t + "/intr.json", "w"))
PY
: > "$t/cell.calls"
$SD verify "$t/intr.json" --rerun --host-wait 0 --json "$t/intr-v.json" > "$t/out" 2> "$t/err" &
vp=$!
for i in $(seq 1 600); do [ "$(wc -l < "$t/cell.calls")" -ge 3 ] && break; sleep 0.1; done
t0=$(date +%s)
kill -INT $vp
wait $vp
rc=$?
took=$(( $(date +%s) - t0 ))
[ $rc -eq 130 ] && [ $took -le 10 ] && ok "an interrupted rerun exits 130 within seconds (${took} s)" \
  || bad "interrupted rerun: exit $rc after ${took} s: $(cat "$t/err")"
pgrep -f "FAKE_SLEEP|$t/cell.py" > /dev/null && bad "the interrupted rerun's child still runs" \
  || ok "the interrupted rerun's child is gone"
grep -q "jax .* train_s_per_1000_images .* REPRODUCED .*; interrupted after 1 of its 3 processes$" "$t/out" \
  && grep -q "jax .* UNVERIFIABLE .*100.0% slower than published.*; interrupted before a second rerun could confirm it" "$t/out" \
  && grep -q "^interrupted: 2 of 3 published runs checked" "$t/out" \
  && ok "the interrupted rerun's table keeps the two runs checked" || bad "interrupted table: $(cat "$t/out" "$t/err")"
"$PY" -c 'import json, sys
v = json.load(open(sys.argv[1]))
assert v["interrupted"] == {"runs_checked": 2, "runs_total": 3}, v.get("interrupted")
assert [c["verdict"] for c in v["cells"]] == ["REPRODUCED", "UNVERIFIABLE"], v["cells"]
assert v["counts"]["REPRODUCED"] == 1 and v["counts"]["UNVERIFIABLE"] == 1, v["counts"]' "$t/intr-v.json" \
  && ok "its --json file is written, interrupted: 2 of 3 runs" || bad "interrupted json: $(head -c 600 "$t/intr-v.json" 2>&1)"

# a rerun in a slow spell (a machine reference of ten canaries far faster than this host's): a native cell and a best
# setting far slower than published are UNVERIFIABLE naming the host's speed, and measured again after the others
"$PY" - "$t" <<'PY'
import copy, json, sys
t = sys.argv[1]
here_slow = json.load(open(t + "/host.json"))["runs"][1]
d = json.load(open(t + "/best.json"))
b = copy.deepcopy(d["runs"][0])
b["summary"]["train_s_per_1000_images"] = {"median": 1e-4, "min": 1e-4, "max": 1e-4, "n": 1}
json.dump(dict(d, runs=[here_slow, b]), open(t + "/slow.json", "w"))
PY
SHOWDOWN_HOST_REF="$t/ref0" $SD verify "$t/slow.json" --rerun --host-wait 0.2 --quiet > /dev/null 2>&1
if [ -s "$t/ref0" ]; then
  cut -f1 "$t/ref0" | sort -u | awk -v now="$(date +%s)" '{ for (i = 0; i < 100; i++) printf "%s\t%s\t1e12\n", $0, now }' \
    > "$t/ref-fast"
  : > "$t/cell.calls"
  SHOWDOWN_HOST_REF="$t/ref-fast" $SD verify "$t/slow.json" --rerun --host-wait 0.2 --json "$t/slow-v.json" \
    > "$t/out" 2> "$t/err"; rc=$?
  [ $rc -eq 9 ] && ok "reruns in a slow spell: exit 9 (unverifiable)" || bad "slow spell rerun: exit $rc $(cat "$t/out" "$t/err")"
  grep -q "^verify: 2 cell(s) ran while this host was slow: measuring them again$" "$t/err" \
    && ok "both cells measured again after the others, and said so" || bad "no second pass: $(cat "$t/err")"
  "$PY" - "$t/slow-v.json" <<'PY' && ok "a native cell and a best setting: UNVERIFIABLE at the host's speed, measured twice" || fail=1
import json, sys
c = json.load(open(sys.argv[1]))["cells"]
assert [x["verdict"] for x in c] == ["UNVERIFIABLE", "UNVERIFIABLE"], c
for x in c:
    assert "slower than published, but measured while this host ran at 0% of its speed" in x["why"], x["why"]
    assert "; measured again after the others" in x["why"], x["why"]
PY
  [ "$(wc -l < "$t/cell.calls")" -ge 6 ] && ok "the best setting's processes ran again, not taken from the first pass" \
    || bad "the cell script ran $(wc -l < "$t/cell.calls") times"
  # the second pass measures in rounds as the first does: the native cell's repeats and the setting's processes
  # alternate, [k/6] counting each once
  again=$(sed -n '/^verify: 2 cell(s) ran while this host was slow/,$p' "$t/err" | sed -n 's/^verify: round \([0-9]\) of 3 \[\([0-9]\)\/6\]: \([^ ]*\).*/\1 \2 \3/p' | tr '\n' ' ')
  echo "$again" | awk '{ ok = NF == 18; for (i = 1; i <= 18 && ok; i += 3) { ok = $(i+1) == (i + 2) / 3 && $i == int((i + 5) / 6)
                         ok = ok && $(i+2) == ((i + 2) / 3 % 2 ? $3 : $6) } exit !(ok && $3 != $6) }' \
    && ok "the second pass in rounds too: the two cells' processes alternate, [1/6] to [6/6]" \
    || bad "second pass rounds: $again; $(cat "$t/err")"
  # a run whose training and inference figures both ran in the spell is measured again once, not once per figure
  "$PY" - "$t" <<'PY'
import json, sys
t = sys.argv[1]
d = json.load(open(t + "/both.json"))
b = d["runs"][0]
for k in ("train_s_per_1000_images", "inference_s_per_1000_images"):
    b["summary"][k] = {"median": 1e-4, "min": 1e-4, "max": 1e-4, "n": 1}
json.dump(d, open(t + "/both-slow.json", "w"))
PY
  SHOWDOWN_HOST_REF="$t/ref-fast" $SD verify "$t/both-slow.json" --rerun --host-wait 0.2 > "$t/out" 2> "$t/err"; rc=$?
  [ $rc -eq 9 ] && grep -q "^verify: 2 cell(s) ran while this host was slow: measuring them again$" "$t/err" \
    && [ "$(grep -c "UNVERIFIABLE .*; measured again after the others" "$t/out")" = 2 ] \
    && [ "$(grep -c "^verify: round 3 of 3 \[3/3\]: mnist_mlp/jax setting jit" "$t/err")" = 2 ] \
    && ok "a run's two figures in a spell: both measured again from one rerun of the run, not one each" \
    || bad "both figures slow: exit $rc, $(cat "$t/out" "$t/err")"
  # make report's publication of a best setting in the same spell: measured again after the others, and published
  # from the faster host (here both at about 0%), with the host's speed recorded
  : > "$t/cell.calls"
  cp "$t/best.json" "$t/pub-slow.json"
  SHOWDOWN_HOST_REF="$t/ref-fast" $SD bench --best-settings "$t/pub-slow.json" --repeat 3 --host-wait 0.2 \
    > "$t/out" 2> "$t/err"; rc=$?
  [ $rc -eq 0 ] && grep -q "^bench: 2 best setting(s) ran while this host was slow: measuring them again$" "$t/err" \
    && grep -Eq "^bench: mnist_mlp/jax setting jit: host at 0% \(first 0%\): (this measurement published|the first kept)$" "$t/err" \
    && [ "$(wc -l < "$t/cell.calls")" -ge 6 ] \
    && "$PY" -c 'import json, sys; r = json.load(open(sys.argv[1]))["runs"]; assert all(0 <= x["host_speed"] < 0.9 and x["summary"]["train_images_per_s"]["n"] == 3 for x in r), r' "$t/pub-slow.json" \
    && ok "bench --best-settings in a slow spell: measured again after the others, its host speed recorded" \
    || bad "bench --best-settings slow: exit $rc, $(wc -l < "$t/cell.calls") processes, $(cat "$t/err")"
else
  bad "verify --rerun --host-wait wrote no machine reference to SHOWDOWN_HOST_REF"
fi

printf '{\n  "schema": "showdown-results/1",\n  "runs": [ {"workload": 3} ]\n}\n' > "$t/bad.json"
expect 3 "bad published file" $SD verify "$t/bad.json"
grep -q "$t/bad.json:3:" "$t/err" && ok "error names file:line:col: $(cat "$t/err")" || bad "bad file message: $(cat "$t/err")"
expect 2 "no argument" $SD verify

# the published CNN table on this machine (no GPU here): NOT-COMPARABLE naming the hardware, exit 9
D=$(dirname "$0")/../workloads/published
if "$PY" -c 'import json,sys; e=json.load(open(sys.argv[1]))["environment"]; sys.exit(0 if e.get("gpu",{}).get("count",0)==0 else 1)' "$t/r.json"; then
  expect 9 "published CNN table" $SD verify "$D/dlf_cifar10_vgg.json" --results "$t/r.json"
  n=$(grep -c "NOT-COMPARABLE   device: published Tesla K80 (GPU), here CPU" "$t/out")
  [ "$n" = 13 ] && ok "13 K80 cells NOT-COMPARABLE naming the device" || bad "K80 rows: $n"
  # where the README disagrees with its own notebook (scripts/published_dlf.py records the evidence)
  grep -q "published-check cifar10_vgg/gluon on Tesla P100-PCIE-16GB (GPU): column says P100, but the notebook ran on Tesla V100-SXM2-16GB" "$t/out" \
    && ok "the P100 column that ran on a V100 is named" || bad "gluon published-check missing"
  $SD verify "$D/dlf_imdb_gru.json" --results "$t/r.json" > "$t/out" 2>&1
  grep -q "published-check imdb_gru/pytorch on Tesla P100-PCIE-16GB (GPU): README 16 s, the notebook's timed cell 12.6 s" "$t/out" \
    && ok "README 16 s vs notebook 12.6 s is named" || bad "imdb published-check missing"
  [ "$(grep -c published-check "$t/out")" = 1 ] && ok "one published-check in the GRU table" || bad "GRU published-checks: $(grep -c published-check "$t/out")"
  $SD verify "$D/dlf_densenet121_xray.json" --results "$t/r.json" > "$t/out" 2>&1
  grep -q "device: published 4x Tesla V100-PCIE-16GB (GPU), here CPU" "$t/out" && ok "DenseNet 4-GPU cells name the GPU count" \
    || bad "DenseNet 4x device"
else
  echo "skipped: the CNN table check assumes no GPU"
fi
for f in "$D"/*.json; do
  $SD verify "$f" --results "$t/r.json" > /dev/null 2> "$t/err"; rc=$?
  [ $rc -eq 9 ] || [ $rc -eq 5 ] || [ $rc -eq 0 ] && ok "$(basename "$f") parses (exit $rc)" || bad "$(basename "$f"): exit $rc $(cat "$t/err")"
done
exit $fail
