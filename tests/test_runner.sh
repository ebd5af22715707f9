#!/bin/bash
# test_runner — framework runners through `showdown bench --impl native,pytorch`: fake runners written here
# (garbage, non-zero exit, a hang past the timeout, a different parameter count, an over-long line, not
# installed) are each reported clearly while the native result is kept; no runner expands the spec itself; then,
# with python3-torch, the graph workloads from showdown's plan, the runner by hand (--plan, or the plan from
# --showdown), and mnist_mlp on a Fashion-MNIST subset through both implementations: equal parameter counts,
# accuracy within 3 points. With the jax and tensorflow venvs ($VENVS/jax, $VENVS/tensorflow), those runners on
# resnet18_cifar, babi_rnn, imdb_gru and mnist_hrnn, and keras on each of the tensorflow, jax and torch venvs on the
# recurrent three: the forward pass of the native export, and one training batch beside native.
set -u
SD=${SHOWDOWN:-./showdown}
PY=${PYTHON:-/usr/bin/python3}
fail=0; t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
ok()  { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

# bench with a fake pytorch runner; quick native run on synthetic data
bench() { # fake-program json-out extra-args...
  local prog=$1 out=$2; shift 2
  $SD bench --workload mnist_mlp --data synthetic --epochs 1 --batches 2 --backend ref --threads 1 --quiet \
     --impl native,pytorch --runner "pytorch=$prog" --json "$out" "$@" > "$t/stdout" 2> "$t/stderr"
}
# jq-free JSON check: prints "<native status> | <pytorch status> | <pytorch error>"
runs() { "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
by = {r["implementation"]: r for r in d["runs"]}
n, p = by.get("native", {}), by.get("pytorch", {})
print(n.get("status"), "|", p.get("status"), "|", p.get("error", ""))' "$1"; }
check() { # name want-exit want-pytorch-status message-pattern
  local name=$1 want=$2 st=$3 pat=$4 got=$5 line
  line=$(runs "$t/$name.json" 2>&1)
  if [ "$got" -ne "$want" ]; then bad "$name: exit $got, expected $want"; cat "$t/stderr"; return; fi
  case "$line" in
    "ok | $st | "*) ;;
    *) bad "$name: runs are '$line', expected native ok and pytorch $st"; return ;;
  esac
  if grep -q -- "$pat" <<<"$line" && grep -q -- "$pat" "$t/stderr"; then ok "$name: '$pat' (exit $got, native kept)"
  else bad "$name: no '$pat' in the result ('$line') or on stderr:"; head -5 "$t/stderr"; fi
}

cat > "$t/garbage" <<'EOF'
#!/bin/sh
echo "this is not JSON"
EOF
cat > "$t/exit3" <<'EOF'
#!/bin/sh
echo '{"event":"hello","protocol":1,"framework":"pytorch","version":"0.fake","device":"cpu","parameters":669706}'
echo "Traceback: something broke" >&2
exit 3
EOF
cat > "$t/hang" <<EOF
#!/bin/sh
echo '{"event":"hello","protocol":1,"framework":"pytorch","version":"0.fake","device":"cpu","parameters":669706}'
sleep 1000 &
echo \$! > "$t/hang.pid"
wait
EOF
cat > "$t/mismatch" <<'EOF'
#!/bin/sh
echo '{"event":"hello","protocol":1,"framework":"pytorch","version":"0.fake","device":"cpu","parameters":669696}'
sleep 30
EOF
cat > "$t/nodone" <<'EOF'
#!/bin/sh
echo '{"event":"hello","protocol":1,"framework":"pytorch","version":"0.fake","device":"cpu","parameters":669706}'
EOF
cat > "$t/longline" <<'EOF'
#!/usr/bin/python3
import sys
sys.stdout.write('{"event":"hello","x":"' + "a" * (2 << 20) + '"}\n')
EOF
cat > "$t/unavail" <<'EOF'
#!/bin/sh
echo '{"event":"error","kind":"unavailable","message":"torch not importable: No module named torch"}'
exit 3
EOF
cat > "$t/good" <<'EOF'
#!/bin/sh
echo '{"event":"hello","protocol":1,"framework":"pytorch","version":"0.fake","device":"fake cpu","parameters":669706,"extra":1}'
echo '{"event":"progress","epoch":1,"batch":1,"batches":2}'
echo '{"event":"epoch","epoch":1,"train_s":0.5,"val_s":0.25,"loss":2.0,"val_loss":1.5,"accuracy":0.5,"train_images":256,"test_images":256}'
echo '{"event":"done","confusion":[[1,0,0,0,0,0,0,0,0,0],[0,1,0,0,0,0,0,0,0,0],[0,0,1,0,0,0,0,0,0,0],[0,0,0,1,0,0,0,0,0,0],[0,0,0,0,1,0,0,0,0,0],[0,0,0,0,0,1,0,0,0,0],[0,0,0,0,0,0,1,0,0,0],[0,0,0,0,0,0,0,1,0,0],[0,0,0,0,0,0,0,0,1,0],[0,0,0,0,0,0,0,0,0,1]]}'
EOF
chmod +x "$t"/garbage "$t"/exit3 "$t"/hang "$t"/mismatch "$t"/nodone "$t"/longline "$t"/unavail "$t"/good

bench "$t/garbage" "$t/garbage.json"; check garbage 1 failed "protocol error: pytorch runner output line 1:1:1" $?
bench "$t/exit3" "$t/exit3.json"; check exit3 1 failed "pytorch runner exited with status 3: Traceback: something broke" $?
bench "$t/hang" "$t/hang.json" --runner-timeout 2; check hang 1 failed "pytorch runner timed out: no output for 2 s (killed)" $?
alive() { # pid: running (not gone, not a zombie awaiting its reaper)
  [ -r "/proc/$1/stat" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
hp=$(cat "$t/hang.pid" 2>/dev/null || echo 0)
for _ in $(seq 50); do alive "$hp" || break; sleep 0.1; done
if [ "$hp" = 0 ]; then bad "hang: the fake runner did not start its child"
elif alive "$hp"; then bad "hang: the runner's child $hp survived (process group not killed)"; kill "$hp"
else ok "hang: the runner's whole process group was killed"; fi
bench "$t/mismatch" "$t/mismatch.json"; check mismatch 1 failed "architecture mismatch: pytorch has 669696 parameters, native 669706" $?
bench "$t/nodone" "$t/nodone.json"; check nodone 1 failed "exited after 0 of 1 epochs without done" $?
bench "$t/longline" "$t/longline.json"; check longline 1 failed "output line 1 is longer than 1048576 bytes" $?
bench "$t/unavail" "$t/unavail.json"; check unavail 0 unavailable "unavailable: torch not importable" $?
bench "$t/does-not-exist" "$t/missing.json"; check missing 0 unavailable "unavailable: cannot start pytorch runner" $?
# the real runner under a Python that cannot import torch (a shadowing torch package that raises ImportError)
mkdir -p "$t/notorch/torch"
echo 'raise ImportError("No module named torch (shadowed by the test)")' > "$t/notorch/torch/__init__.py"
printf '#!/bin/sh\nPYTHONPATH=%s exec %s "$@"\n' "$t/notorch" "$PY" > "$t/py-notorch"; chmod +x "$t/py-notorch"
$SD bench --workload mnist_mlp --data synthetic --epochs 1 --batches 2 --backend ref --threads 1 --quiet \
   --impl native,pytorch --python "$t/py-notorch" --json "$t/notorch.json" > "$t/stdout" 2> "$t/stderr"
check notorch 0 unavailable "unavailable: torch not importable: No module named torch (shadowed" $?
bench "$t/does-not-exist" "$t/missing.json" >/dev/null
grep -q "UNAVAILABLE: unavailable: cannot start" "$t/stdout" && ok "table says UNAVAILABLE" || bad "table: no UNAVAILABLE line"

# a well-behaved fake: its epochs become a run with summary, versions recorded, overhead printed
bench "$t/good" "$t/good.json"; rc=$?
if [ $rc -eq 0 ] && "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
p = [r for r in d["runs"] if r["implementation"] == "pytorch"][0]
assert p["status"] == "ok", p
assert p["backend"] == "cpu" and p["device"] == "fake cpu", p
assert p["backend_env"]["version"] == "0.fake" and p["backend_env"]["extra"] == 1, p["backend_env"]
assert d["environment"]["libraries"]["pytorch"] == "0.fake"
assert p["summary"]["first_epoch_s"]["median"] == 0.5 and p["summary"]["accuracy"]["median"] == 0.5, p["summary"]
assert p["samples"][0]["confusion"][3][3] == 1 and p["model"]["parameters"] == 669706
' "$t/good.json"; then ok "good fake: run recorded (summary, backend_env, environment.libraries.pytorch)"
else bad "good fake: exit $rc or wrong record"; cat "$t/stderr"; fi
grep -q "ref/pytorch" "$t/stdout" && grep -qE "ref/pytorch +[0-9.]+ +0\.500 +[0-9.]+x" "$t/stdout" \
  && ok "overhead table printed" || { bad "no overhead line:"; cat "$t/stdout"; }

# a time cap (SHOWDOWN_CELL_SECONDS) is the first repeat's: the fake trains 3 of the 10 batches asked under it; the
# second repeat gets --max-batches 3 and no cap, and the run records what was trained as max_batches (what a
# verify rerun runs) beside time_cap_s and batches_asked
cat > "$t/capped" <<EOF
#!/bin/sh
mb=0; while [ \$# -gt 0 ]; do [ "\$1" = --max-batches ] && mb=\$2; shift; done
echo "cap=\${SHOWDOWN_CELL_SECONDS:-unset} max_batches=\$mb" >> "$t/capped.log"
n=\$mb; [ "\${SHOWDOWN_CELL_SECONDS:-0}" != 0 ] && n=3
echo '{"event":"hello","protocol":1,"framework":"pytorch","version":"0.fake","device":"fake cpu","parameters":669706}'
echo "{\"event\":\"epoch\",\"epoch\":1,\"train_s\":0.5,\"val_s\":0.25,\"loss\":2.0,\"val_loss\":1.5,\"accuracy\":0.5,\"train_images\":\$((n * 128)),\"test_images\":\$((n * 128))}"
echo '{"event":"done"}'
EOF
chmod +x "$t/capped"
SHOWDOWN_CELL_SECONDS=5 $SD bench --workload mnist_mlp --data synthetic --epochs 1 --batches 10 --repeat 2 \
  --impl pytorch --runner "pytorch=$t/capped" --no-db --json "$t/capped.json" > "$t/stdout" 2> "$t/stderr"; rc=$?
if [ $rc -eq 0 ] && [ "$(cat "$t/capped.log")" = "$(printf 'cap=5 max_batches=10\ncap=0 max_batches=3')" ] && "$PY" -c '
import json, sys
s = json.load(open(sys.argv[1]))["runs"][0]["settings"]
assert (s["max_batches"], s["time_cap_s"], s["batches_asked"], s["repeat"]) == (3, 5.0, 10, 2), s
' "$t/capped.json" && grep -q "(3 of 10 batches: time cap)" "$t/stderr"; then
  ok "time cap: the first repeat sets the length (3 of 10 batches), the second runs it uncapped, both recorded"
else bad "time cap: exit $rc, runner calls: $(tr '\n' ';' < "$t/capped.log")"; cat "$t/stderr"; fi

# --spread: a framework cell's processes in rounds over the run (mnist_mlp's first, mnist_cnn's first, then their
# second ...), the later ones at the length the capped first trained, uncapped; each cell one run of all its
# processes (samples numbered on, the summary over all: steady 0.1 / 0.3 / 0.5 s for mnist_mlp); a later process
# that fails makes its cell failed (exit 1)
cat > "$t/spread" <<EOF
#!/bin/sh
mb=0; spec=""; while [ \$# -gt 0 ]; do [ "\$1" = --max-batches ] && mb=\$2; [ "\$1" = --spec ] && spec=\$2; shift; done
k=\$((\$(cat "$t/spread.count" 2>/dev/null || echo 0) + 1)); echo \$k > "$t/spread.count"
w=\$(basename "\$spec" .json)
echo "\$w cap=\${SHOWDOWN_CELL_SECONDS:-unset} max_batches=\$mb" >> "$t/spread.log"
[ "\$k" = "\${FAIL_AT:-0}" ] && { echo "broken on call \$k" >&2; exit 3; }
[ "\$k" = "\${SLEEP_AT:-0}" ] && sleep 8
n=\$mb; [ "\${SHOWDOWN_CELL_SECONDS:-0}" != 0 ] && n=3
p=669706; [ "\$w" = mnist_cnn ] && p=1199882
echo "{\"event\":\"hello\",\"protocol\":1,\"framework\":\"pytorch\",\"version\":\"0.fake\",\"device\":\"fake cpu\",\"parameters\":\$p}"
for e in 1 2; do
  echo "{\"event\":\"epoch\",\"epoch\":\$e,\"train_s\":0.\$k,\"val_s\":0.25,\"loss\":2.0,\"val_loss\":1.5,\"accuracy\":0.5,\"train_images\":\$((n * 128)),\"test_images\":\$((n * 128))}"
done
echo '{"event":"done"}'
EOF
chmod +x "$t/spread"
spread() { rm -f "$t/spread.log" "$t/spread.count"
  SHOWDOWN_CELL_SECONDS=5 $SD bench --workload mnist_mlp,mnist_cnn --data synthetic --epochs 2 --batches 10 --repeat 3 \
    --spread --impl pytorch --runner "pytorch=$t/spread" --no-db --json "$t/spread.json" "$@" > "$t/stdout" 2> "$t/stderr"; }
spread; rc=$?
want=$(printf '%s\n' "mnist_mlp cap=5 max_batches=10" "mnist_cnn cap=5 max_batches=10" "mnist_mlp cap=0 max_batches=3" \
       "mnist_cnn cap=0 max_batches=3" "mnist_mlp cap=0 max_batches=3" "mnist_cnn cap=0 max_batches=3")
if [ $rc -eq 0 ] && [ "$(cat "$t/spread.log")" = "$want" ] && "$PY" -c '
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert [r["workload"] for r in runs] == ["mnist_mlp", "mnist_cnn"], runs
r = runs[0]
assert [s["repeat"] for s in r["samples"]] == [1, 2, 3], r["samples"]
assert [s["epochs"][1]["train_s"] for s in r["samples"]] == [0.1, 0.3, 0.5], r["samples"]
st = r["summary"]["steady_epoch_s"]
assert (st["median"], st["min"], st["max"], st["n"]) == (0.3, 0.1, 0.5, 3), st
assert r["summary"]["steady_epochs_s"]["n"] == 3 and r["summary"]["train_images_per_s"]["n"] == 3, r["summary"]
s = r["settings"]
assert (s["max_batches"], s["time_cap_s"], s["batches_asked"], s["repeat"]) == (3, 5.0, 10, 3), s
assert r["equivalence"]["status"] == "not checked", r["equivalence"]
assert runs[1]["summary"]["steady_epoch_s"]["n"] == 3, runs[1]["summary"]
' "$t/spread.json" && grep -q "round 3/3: \[2/2\] mnist_cnn" "$t/stderr"; then
  ok "--spread: processes in rounds over the cells, later ones at the capped length, one run of all of them each"
else bad "--spread: exit $rc, runner calls: $(tr '\n' ';' < "$t/spread.log")"; cat "$t/stderr"; fi
FAIL_AT=4 spread; rc=$?
if [ $rc -eq 1 ] && "$PY" -c '
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert [(r["workload"], r["status"]) for r in runs] == [("mnist_mlp", "ok"), ("mnist_cnn", "failed")], runs
assert "broken on call 4" in runs[1]["error"], runs[1]
assert runs[0]["summary"]["steady_epoch_s"]["n"] == 3, runs[0]["summary"]
' "$t/spread.json"; then ok "--spread: a later process that fails makes its cell failed (exit 1), the others measured"
else bad "--spread with a failing second process: exit $rc"; cat "$t/stderr"; fi
# native's repeats are spread too: one a round, merged into one run of three samples
$SD bench --workload mnist_mlp --data synthetic --epochs 2 --batches 2 --repeat 3 --spread --impl native --no-db \
  --json "$t/spread-native.json" > "$t/stdout" 2> "$t/stderr"; rc=$?
if [ $rc -eq 0 ] && grep -q "round 3/3: \[1/1\] mnist_mlp · native" "$t/stderr" && "$PY" -c '
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert len(runs) == 1 and runs[0]["implementation"] == "native", runs
assert [s["repeat"] for s in runs[0]["samples"]] == [1, 2, 3], runs[0]["samples"]
assert runs[0]["summary"]["steady_epoch_s"]["n"] == 3 and runs[0]["settings"]["repeat"] == 3, runs[0]
' "$t/spread-native.json"; then ok "--spread: native's repeats one a round, one run of three samples"
else bad "--spread native: exit $rc"; cat "$t/stderr"; fi
# a later process past the time limit (a slow spell, a slow import) is tried once more at twice the limit: the cell
# keeps its processes; a second timeout would fail it as above
SLEEP_AT=4 spread --runner-limit 3; rc=$?
if [ $rc -eq 0 ] && [ "$(wc -l < "$t/spread.log")" -eq 7 ] && grep -q "mnist_cnn · pytorch timed out: once more, with a limit of 6 s" "$t/stderr" && "$PY" -c '
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert [(r["workload"], r["status"]) for r in runs] == [("mnist_mlp", "ok"), ("mnist_cnn", "ok")], runs
assert [r["summary"]["steady_epoch_s"]["n"] for r in runs] == [3, 3], runs
' "$t/spread.json"; then ok "--spread: a later process past the time limit measured once more, its cell kept"
else bad "--spread with a second process past the limit: exit $rc, runner calls: $(tr '\n' ';' < "$t/spread.log")"; cat "$t/stderr"; fi

# the steady state is the fastest epoch after the first (0.3 s of 0.3 and 0.4), the first apart (0.5 s)
cat > "$t/epochs3" <<'EOF'
#!/bin/sh
echo '{"event":"hello","protocol":1,"framework":"pytorch","version":"0.fake","device":"fake cpu","parameters":669706}'
for e in 1:0.5 2:0.3 3:0.4; do
  echo "{\"event\":\"epoch\",\"epoch\":${e%%:*},\"train_s\":${e#*:},\"val_s\":0.1,\"loss\":2.0,\"val_loss\":1.5,\"accuracy\":0.5,\"train_images\":256,\"test_images\":256}"
done
echo '{"event":"done"}'
EOF
chmod +x "$t/epochs3"
$SD bench --workload mnist_mlp --data synthetic --epochs 3 --batches 2 --quiet --impl pytorch --runner "pytorch=$t/epochs3" \
  --no-db --json "$t/epochs3.json" > /dev/null 2> "$t/stderr"; rc=$?
if [ $rc -eq 0 ] && "$PY" -c '
import json, sys
s = json.load(open(sys.argv[1]))["runs"][0]["summary"]
assert s["steady_epoch_s"]["median"] == 0.3 and s["first_epoch_s"]["median"] == 0.5, s
assert s["steady_from"] == "epochs 2..N (fastest)", s["steady_from"]
' "$t/epochs3.json"; then ok "steady state: the fastest epoch after the first (0.3 s of 0.3 and 0.4)"
else bad "steady state of epochs 0.5, 0.3, 0.4: exit $rc"; cat "$t/stderr"; fi

# an inference workload through a fake runner: the "inference" event becomes the run's timed pass
cat > "$t/infer" <<'EOF'
#!/bin/sh
echo '{"event":"hello","protocol":1,"framework":"pytorch","version":"0.fake","device":"fake cpu","parameters":23508032}'
echo '{"event":"inference","timed_s":2.5,"images":64,"passes":3,"cold_s":3.0}'
echo '{"event":"done","peak_bytes":0}'
EOF
chmod +x "$t/infer"
$SD bench --workload resnet50_features --batches 2 --quiet --impl pytorch --runner "pytorch=$t/infer" \
   --json "$t/infer.json" > "$t/stdout" 2> "$t/stderr"; rc=$?
if [ $rc -eq 0 ] && "$PY" -c '
import json, sys
p = json.load(open(sys.argv[1]))["runs"][0]
assert p["status"] == "ok" and p["mode"] == "inference", p
s = p["summary"]
assert abs(s["inference_s_per_1000_images"]["median"] - 2500 / 64) < 1e-6 and s["cold_pass_s"]["median"] == 3.0, s
assert s["first_epoch_s"] is None and p["model"]["parameters"] == 23508032
assert p["samples"][0]["inference_passes"] == 3, p["samples"][0]
' "$t/infer.json"; then ok "inference fake: timed pass recorded (s per 1,000 images, its passes, cold pass apart)"
else bad "inference fake: exit $rc or wrong record"; cat "$t/stderr"; fi

# the pytorch runner's interpreter: the newest torch of --venvs DIR/torch and Debian's (read from each
# version.py); a fake venv whose "python" is the good fake runner shows which was chosen
mkvenv() { # dir version
  mkdir -p "$1/torch/bin" "$1/torch/lib/python3.11/site-packages/torch"
  cp "$t/good" "$1/torch/bin/python"
  printf "__version__ = '%s'\ndebug = False\n" "$2" > "$1/torch/lib/python3.11/site-packages/torch/version.py"
}
picked() { # results.json -> "<interpreter> <torch_source> <torch_dir>"
  "$PY" -c '
import json, sys
p = [r for r in json.load(open(sys.argv[1]))["runs"] if r["implementation"] == "pytorch"][0]
e = p.get("backend_env", {})
print(e.get("interpreter"), e.get("torch_source"), e.get("torch_dir"), p.get("status"))' "$1"; }
DEB=/usr/lib/python3/dist-packages/torch/version.py
mkvenv "$t/vnew" 99.1.0
$SD bench --workload mnist_mlp --data synthetic --epochs 1 --batches 2 --backend ref --threads 1 --quiet \
   --impl native,pytorch --venvs "$t/vnew" --json "$t/vnew.json" > /dev/null 2> "$t/stderr"; rc=$?
got=$(picked "$t/vnew.json" 2>&1)
if [ $rc -eq 0 ] && [ "$got" = "$t/vnew/torch/bin/python venv $t/vnew/torch/lib/python3.11/site-packages/torch ok" ]; then
  ok "torch 99.1.0 in --venvs is newer than the system's: its interpreter runs, recorded ($got)"
else bad "newer venv torch not chosen: exit $rc, '$got'"; cat "$t/stderr"; fi
mkvenv "$t/vold" 0.1.0
$SD bench --workload mnist_mlp --data synthetic --epochs 1 --batches 2 --backend ref --threads 1 --quiet \
   --impl native,pytorch --venvs "$t/vold" --runner-timeout 600 --json "$t/vold.json" > /dev/null 2> "$t/stderr"
got=$(picked "$t/vold.json" 2>&1)
if [ -f "$DEB" ]; then want="/usr/bin/python3 system /usr/lib/python3/dist-packages/torch"
else want="$t/vold/torch/bin/python venv $t/vold/torch/lib/python3.11/site-packages/torch"; fi
case "$got" in
  "$want "*) ok "torch 0.1.0 in --venvs against $( [ -f "$DEB" ] && sed -n "s/^__version__ = //p" "$DEB" || echo none): '$want' chosen" ;;
  *) bad "older venv torch: '$got', expected '$want'"; cat "$t/stderr" ;;
esac
# the real one: .venv-frameworks/torch (make deps-frameworks) is PyTorch 2.x, newer than Debian's 1.13
V=${VENVS:-.venv-frameworks}
if [ -x "$V/torch/bin/python" ] && "$V/torch/bin/python" -c 'import torch, numpy' 2>/dev/null; then
  $SD bench --workload mnist_mlp --data synthetic --epochs 1 --batches 2 --backend ref --threads 1 --quiet \
     --impl native,pytorch --venvs "$V" --runner-timeout 600 --json "$t/venv.json" > /dev/null 2> "$t/stderr"; rc=$?
  if [ $rc -eq 0 ] && "$PY" -c '
import json, os, sys
d = json.load(open(sys.argv[1]))
p = [r for r in d["runs"] if r["implementation"] == "pytorch"][0]
e = p["backend_env"]
assert p["status"] == "ok", p.get("error")
assert e["torch_source"] == "venv" and e["interpreter"].endswith("/torch/bin/python"), e
assert int(e["version"].split(".")[0]) >= 2 and d["environment"]["libraries"]["pytorch"] == e["version"], e
assert os.path.realpath(e["torch_path"]) == os.path.realpath(e["torch_dir"]), (e["torch_path"], e["torch_dir"])
print("venv torch %s at %s" % (e["version"], e["torch_path"]))
' "$t/venv.json"; then ok "the pytorch runner ran .venv-frameworks torch (version and path recorded)"
  else bad "venv torch: exit $rc"; tail -3 "$t/stderr"; fi
else
  echo "skipped: no .venv-frameworks/torch"
fi

# no runner parses the spec's layer language (blocks, repeats, layer keys): showdown's plan is the one expansion
if grep -nE 'def expand|"blocks"|\["model"\]\["layers"\]|"filters"' workloads/runners/*.py; then
  bad "a runner reads the spec's layers (above) instead of the plan"
else ok "no runner expands the spec: every one builds showdown's plan"; fi

# the jax and tensorflow runners (with $VENVS/jax, $VENVS/tensorflow) on a graph workload and the recurrent ones:
# the forward pass of the native export (--export-weights: weights, 8 inputs, logits) within 1e-4, then one
# training batch of 4 through bench beside native: the same parameter count, the training loss and the validation
# loss after it (batch norm's running statistics, updated once) within 1e-4 (keras: the loss within 1e-3)
# Each framework is a job with its own scratch folder $t/FW, two at a time (every run is on one thread); the native
# exports they read are made first.
runner_cases() { # impl venv-name runner env loss-tolerance workloads...
  local fw=$1 venv=$2 runner=$3 env=$4 tol=$5 w dargs rc grc eq got; shift 5
  local JPY=$V/$venv/bin/python s=$t/$fw
  mkdir -p "$s"
  local mod=$venv; [ "$runner" = keras_runner.py ] && mod=keras
  if ! [ -x "$JPY" ] || ! env $env TF_CPP_MIN_LOG_LEVEL=2 "$JPY" -c "import $mod, numpy" 2>/dev/null; then
    echo "skipped: $fw cases (no $JPY importing $mod; make deps-frameworks)"; return
  fi
  for w in "$@"; do
    [ -f "$t/ex-$w/index.json" ] || { bad "$w: no native export"; continue; }
    $SD bench --workload $w --describe --json > "$s/$w.plan" 2> "$s/stderr" || { bad "$w: describe: $(cat "$s/stderr")"; continue; }
    dargs=$("$PY" -c 'import json, sys
s, p = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
emb = [l["vocab"] for l in p["layers"] if l["op"] == "embedding"]
print(("--data synthetic-tokens --vocab %d" % emb[0]) if emb else "--data synthetic",
      "--shape", ",".join(str(v) for v in s["data"]["shape"]), "--classes", s["data"]["classes"])' workloads/$w.json "$s/$w.plan")
    env $env "$JPY" workloads/runners/$runner --spec workloads/$w.json --plan "$s/$w.plan" $dargs --synthetic-seed 1 \
       --train-n 4 --test-n 4 --epochs 0 --batch 4 --threads 1 --equivalence "$t/ex-$w" > "$s/jeq.out" 2>&1; rc=$?
    eq=$("$PY" -c 'import json, sys
e = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
q = [x for x in e if x["event"] == "equivalence"]
print("%.1e" % q[0]["max_rel_diff"] if q and q[0]["max_rel_diff"] <= 1e-4 else "bad")' "$s/jeq.out" 2>&1)
    if [ $rc -eq 0 ] && [ "$eq" != bad ] && [ -n "$eq" ]; then ok "$fw $w: forward of the native export within 1e-4 ($eq)"
    else bad "$fw $w: equivalence exit $rc '$eq'"; tail -3 "$s/jeq.out"; fi
    $SD bench --workload $w --data synthetic --epochs 1 --batch 4 --batches 1 --backend ref --threads 1 --quiet --no-db \
       --impl native,$fw --venvs "$V" --runner-timeout 600 --json "$s/j-$w.json" > /dev/null 2> "$s/stderr"; rc=$?
    got=$("$PY" -c 'import json, sys
by = {r["implementation"]: r for r in json.load(open(sys.argv[1]))["runs"]}
n, j, tol = by["native"], by[sys.argv[2]], float(sys.argv[3])
assert n["status"] == "ok" and j["status"] == "ok", (n.get("error"), j.get("error"))
assert n["model"]["parameters"] == j["model"]["parameters"], (n["model"], j["model"])
en, ej = n["samples"][0]["epochs"][0], j["samples"][0]["epochs"][0]
for k in ("loss", "val_loss"):
    assert abs(en[k] - ej[k]) <= tol * abs(en[k]), (k, en[k], ej[k])
print("%d parameters, loss native %.7f %s %.7f, validation %.7f %.7f"
      % (j["model"]["parameters"], en["loss"], sys.argv[2], ej["loss"], en["val_loss"], ej["val_loss"]))' "$s/j-$w.json" $fw $tol 2>&1); grc=$?
    if [ $rc -eq 0 ] && [ $grc -eq 0 ]; then ok "$fw $w: one training batch beside native ($got)"
    else bad "$fw $w: bench exit $rc: $got"; tail -3 "$s/stderr"; fi
  done
}
for w in resnet18_cifar babi_rnn imdb_gru mnist_hrnn; do
  $SD bench --workload $w --data synthetic --export-weights "$t/ex-$w" > /dev/null 2> "$t/stderr" \
    || bad "$w: --export-weights: $(tail -1 "$t/stderr")"
done
# jax and tensorflow on a graph and the recurrent workloads; Keras 3 on each back-end (the venv showdown runs it
# from) builds the recurrent workloads from stock layers
CASES=("jax jax jax_runner.py - 1e-4 resnet18_cifar babi_rnn imdb_gru mnist_hrnn"
       "tensorflow tensorflow tensorflow_runner.py - 1e-4 resnet18_cifar babi_rnn imdb_gru mnist_hrnn"
       "keras-tensorflow tensorflow keras_runner.py KERAS_BACKEND=tensorflow 1e-3 babi_rnn imdb_gru mnist_hrnn"
       "keras-jax jax keras_runner.py KERAS_BACKEND=jax 1e-3 babi_rnn imdb_gru mnist_hrnn"
       "keras-torch torch keras_runner.py KERAS_BACKEND=torch 1e-3 babi_rnn imdb_gru mnist_hrnn")
for c in "${CASES[@]}"; do
  set -- $c; [ "$4" = - ] && set -- "$1" "$2" "$3" "" "${@:5}"
  while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n; done
  ( trap - EXIT; fail=0; runner_cases "$@"; echo $fail > "$t/$1.verdict" ) > "$t/$1.log" 2>&1 &
done
wait
for c in "${CASES[@]}"; do
  set -- $c; cat "$t/$1.log"
  case $(cat "$t/$1.verdict" 2>/dev/null) in
    0) ;;
    1) fail=1 ;;
    *) fail=1; echo "FAIL: $1 cases ended without a verdict" ;;
  esac
done

# the real PyTorch runner against the native engine on Fashion-MNIST
FM=/usr/share/datasets/fashion-mnist
if ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "skipped: torch not importable ($PY)"; [ $fail -eq 0 ] && exit 77 || exit 1
fi
# the graph workloads (spec /2: blocks, residual and dense connections, batch norm, pooling; an inference
# workload) through bench: the runner builds showdown's plan (--plan) in PyTorch with the native parameter count
# (bench kills a runner whose hello says otherwise) and runs one training batch and validation, or the passes
for w in resnet50_features densenet121_xray resnet18_cifar vgg16_cifar; do
  nat=$($SD bench --workload $w --describe | sed -n 's/^parameters: \([0-9,]*\).*/\1/p' | tr -d ,)
  $SD bench --workload $w --impl pytorch --data synthetic --epochs 1 --batch 4 --batches 1 --threads 1 --quiet \
     --no-db --runner-timeout 600 --json "$t/$w.json" > "$t/stdout" 2> "$t/stderr"; rc=$?
  got=$("$PY" -c 'import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
print(r["status"], r["model"]["parameters"], r.get("error", ""))' "$t/$w.json" 2>&1)
  if [ $rc -eq 0 ] && [ -n "$nat" ] && [ "$got" = "ok $nat " ]; then ok "$w: pytorch runs the plan, $nat parameters as native"
  else bad "$w: exit $rc, native '$nat', pytorch '$got'"; tail -3 "$t/stderr"; fi
done
# a runner started by hand: with --plan (bench --describe --json), without it (the runner asks --showdown), and
# with the plan of another workload (refused)
$SD bench --workload mnist_cnn --describe --json > "$t/cnn.plan" 2> "$t/stderr" || bad "describe --json: $(cat "$t/stderr")"
$SD bench --workload mnist_mlp --describe --json > "$t/mlp.plan" 2> "$t/stderr" || bad "describe --json: $(cat "$t/stderr")"
byhand() { # out extra-args...
  local out=$1; shift
  "$PY" workloads/runners/pytorch_runner.py --spec workloads/mnist_cnn.json --data synthetic --synthetic-seed 1 \
     --train-n 32 --test-n 16 --shape 1,28,28 --classes 10 --epochs 1 --batch 8 --threads 1 "$@" > "$out" 2>&1; }
events() { # the events of a runner's output, and its epoch's loss, val_loss and accuracy (progress lines, which a slow
  # machine adds, left out)
  "$PY" -c 'import json, sys
ev = [e for e in map(json.loads, open(sys.argv[1])) if e["event"] != "progress"]
print(" ".join(e["event"] for e in ev), *[(e["loss"], e["val_loss"], e["accuracy"]) for e in ev if e["event"] == "epoch"])' "$1" 2>&1; }
byhand "$t/plan.out" --plan "$t/cnn.plan"; rc=$?
e=$(events "$t/plan.out")
[ $rc -eq 0 ] && [ "${e%% (*}" = "hello epoch inference done" ] && grep -q '"parameters":1199882' "$t/plan.out" \
  && ok "pytorch_runner --plan: mnist_cnn runs ($e)" || { bad "pytorch_runner --plan: exit $rc, events '$e'"; tail -3 "$t/plan.out"; }
byhand "$t/noplan.out" --showdown "$SD"; rc=$?
[ $rc -eq 0 ] && [ "$(events "$t/noplan.out")" = "$e" ] \
  && ok "pytorch_runner without --plan: the plan from --showdown, the same losses and accuracy" \
  || { bad "pytorch_runner without --plan: exit $rc"; tail -3 "$t/noplan.out"; }
byhand "$t/other.out" --plan "$t/mlp.plan"; rc=$?
[ $rc -eq 1 ] && grep -q '"event":"error".*the plan describes mnist_mlp' "$t/other.out" \
  && ok "pytorch_runner refuses the plan of another workload" || { bad "another workload's plan: exit $rc"; cat "$t/other.out"; }
if [ ! -e "$FM/train-images-idx3-ubyte.gz" ]; then
  echo "skipped: fashion-mnist not installed"; [ $fail -eq 0 ] && exit 77 || exit 1
fi
$SD bench --workload mnist_mlp --data real --data-dir "$FM" --epochs 1 --batches 30 --backend ref --threads 1 \
   --impl native,pytorch --runner-timeout 600 --json "$t/real.json" > "$t/stdout" 2> "$t/stderr"; rc=$?
cat "$t/stdout"
if [ $rc -ne 0 ]; then bad "real mnist_mlp: exit $rc"; tail -5 "$t/stderr"
elif "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
by = {r["implementation"]: r for r in d["runs"]}
n, p = by["native"], by["pytorch"]
assert n["status"] == "ok" and p["status"] == "ok", (n.get("error"), p.get("error"))
assert n["model"]["parameters"] == p["model"]["parameters"] == 669706, (n["model"], p["model"])
an, ap = n["summary"]["accuracy"]["median"], p["summary"]["accuracy"]["median"]
print("real mnist_mlp: accuracy native %.4f pytorch %.4f" % (an, ap))
assert abs(an - ap) <= 0.03, (an, ap)
assert n["data"]["kind"] == p["data"]["kind"] == "real"
rn, rp = n["samples"][0].get("peak_rss_bytes", 0), p["samples"][0].get("peak_rss_bytes", 0)
assert rn > 10 << 20 and rp > 10 << 20, ("each process records its peak RSS", rn, rp)
' "$t/real.json"; then ok "real mnist_mlp: parameter counts equal, accuracy within 3 points, both peak RSS recorded"
else bad "real mnist_mlp comparison"; fi
exit $fail
