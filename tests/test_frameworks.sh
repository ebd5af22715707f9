#!/bin/bash
# test_frameworks — the framework runners through `showdown bench --impl`: the weight export
# (showdown-weights/1) recomputed in NumPy; an uninstalled framework reported unavailable, an "unsupported" op
# and a failed equivalence check reported as such while the native run is kept; runner_common's own path for an
# op a framework lacks; then, for every framework installed by `make deps-frameworks`, mnist_mlp and mnist_cnn
# (synthetic, 2 batches of 16): equal parameter counts, forward pass within 1e-4 of native, and the first
# epoch's training loss within 1e-3 of native's (same weights, data order, dropout masks and optimizer); the
# inference workload resnet50_features and the multi-label densenet121_xray (batch 2, one batch) in the keras,
# paddle, mindspore, tinygrad and chainer runners: forward within 1e-4, the first sigmoid BCE loss within 1e-4
# (tinygrad: densenet121_xray's forward only); the recurrent workloads babi_rnn, imdb_gru and mnist_hrnn in
# paddle, mindspore, tinygrad and chainer: forward within 1e-4, the 2-batch training loss within 1e-3; and
# --precision bf16 in each framework's own mixed precision, or `unsupported` with the reason. Frameworks that are not installed are listed as skipped with the reason; none installed still passes.
set -u
SD=${SHOWDOWN:-./showdown}
PY=${PYTHON:-/usr/bin/python3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENVS=${VENVS:-$ROOT/.venv-frameworks}
fail=0; t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
ok()  { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
cd "$ROOT" || exit 1

# 1. the export: files and index, and the logits recomputed from the exported weights and input in NumPy
if $SD bench --workload mnist_mlp --data synthetic --batches 2 --export-weights "$t/w" --quiet --no-db 2> "$t/err"; then
  if "$PY" - "$t/w" <<'PYEOF'
import json, os, sys
import numpy as np
d = sys.argv[1]
idx = json.load(open(os.path.join(d, "index.json")))
assert idx["schema"] == "showdown-weights/1" and idx["workload"] == "mnist_mlp", idx
P = {(e["layer"], e["role"]): np.load(os.path.join(d, e["file"])) for e in idx["params"]}
assert sum(a.size for a in P.values()) == idx["parameters"] == 669706, idx["parameters"]
x = np.load(os.path.join(d, "input.npy")); z = np.load(os.path.join(d, "logits.npy"))
assert x.shape == (8, 1, 28, 28) and z.shape == (8, 10) and x.dtype == np.float32, (x.shape, z.shape)
assert np.load(os.path.join(d, "labels.npy")).dtype == np.int32
h = x.reshape(8, -1).astype(np.float64)
for li in sorted({k[0] for k in P}):            # dense, relu, dropout (identity), ..., dense
    h = h @ P[(li, "weight")].T + P[(li, "bias")]
    if li != max(k[0] for k in P):
        h = np.maximum(h, 0)
err = np.abs(h - z).max() / np.abs(z).max()
print("numpy forward vs exported logits: max rel diff %.2e" % err)
assert err < 1e-5, err
PYEOF
  then ok "export: index, npy files and logits agree with a NumPy forward pass"
  else bad "export: files do not check out"; fi
else bad "export failed: $(cat "$t/err")"; fi

# 2. a framework that is not installed: unavailable, not a failure; the native run is kept
mkdir -p "$t/novenv"
$SD bench --workload mnist_mlp --data synthetic --epochs 1 --batches 1 --backend ref --threads 1 --quiet --no-db \
   --impl native,chainer --venvs "$t/novenv" --json "$t/unavail.json" > "$t/stdout" 2> "$t/stderr"; rc=$?
if [ $rc -eq 0 ] && "$PY" -c '
import json, sys
by = {r["implementation"]: r for r in json.load(open(sys.argv[1]))["runs"]}
assert by["native"]["status"] == "ok", by["native"]
c = by["chainer"]
assert c["status"] == "unavailable" and "chainer is not installed" in c["error"] and "make deps-frameworks" in c["error"], c
' "$t/unavail.json" && grep -q "chainer .*UNAVAILABLE: unavailable: chainer is not installed" "$t/stdout"
then ok "uninstalled chainer reported unavailable (exit 0, native kept)"
else bad "uninstalled framework: exit $rc"; cat "$t/stdout" "$t/stderr"; fi

# 2b. the console of a matrix: a progress line per cell, numbered; a framework not installed and a data-set
# fallback said once, not once per workload
$SD bench --workload cifar10_vgg,resnet18_cifar --data auto --epochs 1 --batches 1 --batch 4 --backend ref --threads 1 \
   --no-db --impl native,chainer,paddle --venvs "$t/novenv" > /dev/null 2> "$t/console"
n_inst=$(grep -c "chainer: unavailable: chainer is not installed" "$t/console")
n_data=$(grep -c "^data: CIFAR-10 is not on this machine" "$t/console")
n_prog=$(grep -cE '^\[[1-6]/6\] (cifar10_vgg|resnet18_cifar) · (native ref · train · [0-9.]+ img/s|chainer · unavailable: chainer is not installed|paddle · unavailable: paddle is not installed) · ETA [0-9]+ min$' "$t/console")
if [ "$n_inst" -eq 1 ] && [ "$n_data" -eq 1 ] && [ "$n_prog" -eq 6 ]; then
  ok "console: 6 numbered progress lines, 'not installed' and the CIFAR-10 fallback said once each"
else bad "console: $n_prog progress lines (6), 'chainer not installed' $n_inst times, CIFAR-10 fallback $n_data times (1 each):"; cat "$t/console"; fi

# 3. fake runners: an op the framework lacks, and a forward pass that disagrees with native
cat > "$t/unsup" <<'SH'
#!/bin/sh
echo '{"event":"error","kind":"unsupported","message":"unsupported: maxpool padding"}'
exit 4
SH
cat > "$t/noteq" <<'SH'
#!/bin/sh
echo '{"event":"hello","protocol":1,"framework":"jax","version":"0.fake","device":"cpu","parameters":669706}'
echo '{"event":"equivalence","batch":8,"max_rel_diff":0.5}'
echo '{"event":"epoch","epoch":1,"train_s":0.5,"val_s":0.25,"loss":2.0,"val_loss":1.5,"accuracy":0.5,"train_images":128,"test_images":128}'
echo '{"event":"done"}'
SH
chmod +x "$t/unsup" "$t/noteq"
$SD bench --workload mnist_mlp --data synthetic --epochs 1 --batches 1 --backend ref --threads 1 --quiet --no-db \
   --impl native,tinygrad --runner "tinygrad=$t/unsup" --json "$t/unsup.json" > "$t/stdout" 2> "$t/stderr"; rc=$?
if [ $rc -eq 0 ] && grep -q "tinygrad .*UNSUPPORTED: unsupported: maxpool padding" "$t/stdout"; then
  ok "unsupported op: status unsupported, the table says so, exit 0"
else bad "unsupported: exit $rc"; cat "$t/stdout" "$t/stderr"; fi
$SD bench --workload mnist_mlp --data synthetic --epochs 1 --batches 1 --backend ref --threads 1 --quiet --no-db \
   --impl native,jax --runner "jax=$t/noteq" --json "$t/noteq.json" > "$t/stdout" 2> "$t/stderr"; rc=$?
if [ $rc -eq 1 ] && grep -q "equivalence failed: forward output differs from native by 0.5" "$t/stderr" \
   && grep -qE "ref/jax .*failed \(5\.0e-01\)" "$t/stdout" && "$PY" -c '
import json, sys
j = [r for r in json.load(open(sys.argv[1]))["runs"] if r["implementation"] == "jax"][0]
assert j["equivalence"]["status"] == "failed" and j["equivalence"]["max_rel_diff"] == 0.5, j["equivalence"]' "$t/noteq.json"
then ok "failed equivalence: recorded, printed, exit 1"
else bad "failed equivalence: exit $rc"; cat "$t/stdout" "$t/stderr"; fi

# the report: one row per framework that ran in the benchmark table, the status in an unsupported one's cell, the
# check; an uninstalled one named in the note
$SD report --results "$t/unavail.json" "$t/noteq.json" "$t/unsup.json" --no-db --out "$t/rep" --format md > /dev/null 2>&1
tbl=$(grep -A12 "mnist_mlp: training time per full epoch per device" "$t/rep/showdown.md" 2>/dev/null)
if ! grep -q "^| chainer |" <<<"$tbl" && grep -q "^| tinygrad | unsupported |" <<<"$tbl" \
   && grep -qE "^\| jax \| (\*\*)?[0-9.]+(\*\*)? \| (\*\*)?0\.500(\*\*)? \| failed \(5\.0e-01\) \|" <<<"$tbl" && grep -q "same model" <<<"$tbl" \
   && grep -q "Not installed here: chainer" <<<"$tbl"
then ok "report: rows tinygrad (unsupported), jax (equivalence failed) in the bench table, chainer named not installed"
else bad "report table:"; echo "$tbl"; fi

# 4. runner_common with a framework that lacks conv2d (a NumPy stand-in with a method for every other op):
# "unsupported: conv2d", kind unsupported, said before the framework is imported (make() is never called);
# started by hand without --plan, it gets the plan from showdown ($SHOWDOWN or ./showdown: bench --describe --json)
cat > "$t/np_runner.py" <<PYEOF
import sys
sys.path.insert(0, "$ROOT/workloads/runners")
import runner_common as rc
class NoConv:
    def __init__(self, a): open("$t/imported", "w").write("imported")
    def dense(self, *a): pass
    def relu(self, *a): pass
    def maxpool(self, *a): pass
    def flatten(self, *a): pass
    def dropout(self, *a): pass
rc.main(NoConv, "test")
PYEOF
"$PY" "$t/np_runner.py" --spec workloads/mnist_cnn.json --data synthetic --train-n 32 --test-n 32 --shape 1,28,28 \
   --classes 10 --epochs 1 --batch 16 > "$t/out" 2>&1; rc=$?
if [ $rc -eq 4 ] && grep -q '"kind":"unsupported","message":"unsupported: conv2d"' "$t/out" && [ ! -e "$t/imported" ]; then
  ok "runner_common: an op the framework lacks is 'unsupported: conv2d', before its import"
else bad "runner_common unsupported: exit $rc, imported: $([ -e "$t/imported" ] && echo yes || echo no): $(cat "$t/out")"; fi

# 4b. runner_common's time cap (SHOWDOWN_CELL_SECONDS) does not count the first step (a compiled framework's
# trace and compile): a stand-in whose first step takes 1.5 s and the others 10 ms trains all 10 batches under a
# 2 s cap (1 epoch: 1 s a share); one whose steps all take 0.4 s stops after 4 (the 3 after the first > 1 s); a
# cell of 2 batches (the heavy workloads' quick cells) whose first step takes 1.5 s stops after it
cat > "$t/cap_runner.py" <<PYEOF
import os, sys, time
import numpy as np
sys.path.insert(0, "$ROOT/workloads/runners")
import runner_common as rc
class Fake:
    LOSSES = ("softmax_cross_entropy",)
    def __init__(self, a): self.name, self.version, self.device, self.n = "fake", "0", "cpu", 0
    def extras(self): return {}
    def build(self, layers, params, opt, batch): self.classes = layers[-1].units
    def parameters(self): return 0
    def forward(self, x): return np.zeros((len(x), self.classes), dtype=np.float32)
    def train_step(self, x, y, masks, t):
        self.n += 1
        time.sleep(float(os.environ["FIRST_S"]) if self.n == 1 else float(os.environ["STEP_S"]))
        return 0.0
for op in ("dense", "relu", "dropout", "flatten"):
    setattr(Fake, op, lambda self, *a: None)
rc.main(Fake, "test")
PYEOF
for c in "1.5 0.01 10 160" "0.4 0.4 4 160" "1.5 0.01 1 32"; do
  set -- $c
  FIRST_S=$1 STEP_S=$2 SHOWDOWN_CELL_SECONDS=2 "$PY" "$t/cap_runner.py" --spec workloads/mnist_mlp.json --data synthetic \
    --train-n $4 --test-n $4 --shape 1,28,28 --classes 10 --epochs 1 --batch 16 > "$t/cap.out" 2>&1
  got=$("$PY" -c 'import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d.get("event") == "epoch": print(d["train_images"] // 16)' "$t/cap.out" 2>/dev/null)
  [ "$got" = "$3" ] && ok "time cap: first step $1 s, then $2 s a step: $got of $(($4 / 16)) batches" \
    || bad "time cap: first step $1 s, then $2 s a step: '$got' of $(($4 / 16)) batches, expected $3: $(tail -2 "$t/cap.out")"
done

# 5. the forward pass is checked on every kind of workload, not only the image ones: a graph (resnet18_cifar), a
# token RNN (imdb_gru) and an inference workload (resnet50_features) through the pytorch runner and $PY's torch
if "$PY" -c 'import torch' 2>/dev/null; then
  $SD bench --workload resnet18_cifar,imdb_gru,resnet50_features --impl pytorch --python "$PY" --data synthetic \
     --epochs 1 --batches 1 --batch 8 --quiet --no-db --json "$t/eqall.json" > "$t/stdout" 2> "$t/stderr"; rc=$?
  if [ $rc -eq 0 ] && "$PY" - "$t/eqall.json" <<'PYEOF'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
got = {r["workload"]: r["equivalence"] for r in runs if r["implementation"] == "pytorch"}
assert sorted(got) == ["imdb_gru", "resnet18_cifar", "resnet50_features"], got
for wl in sorted(got):
    eq = got[wl]
    assert eq["status"] == "passed" and eq["max_rel_diff"] <= 1e-4, (wl, eq)
    print("pytorch %s: forward max rel diff %.1e" % (wl, eq["max_rel_diff"]))
PYEOF
  then ok "pytorch: forward within 1e-4 of native on a graph, a token RNN and an inference workload"
  else bad "pytorch equivalence on resnet18_cifar, imdb_gru, resnet50_features: exit $rc"; tail -5 "$t/stderr"; fi
else echo "skipped: pytorch equivalence on graph, RNN and inference workloads ($PY does not import torch)"; fi

# bench IMPL beside native on WORKLOADS (synthetic data, the reference back-end, one thread, one epoch of BATCHES
# batches of BATCH) into JSON: pair_bench IMPL WORKLOADS BATCH BATCHES RUNNER_TIMEOUT JSON
pair_bench() {
  $SD bench --workload $2 --data synthetic --epochs 1 --batch $3 --batches $4 --backend ref --threads 1 --quiet --no-db \
     --impl native,$1 --venvs "$VENVS" --runner-timeout $5 --json "$6" > "$t/stdout" 2> "$t/stderr"
}
# IMPL's runs in JSON against native's, per workload: both ok, equal parameter counts, the forward within 1e-4; on
# LOSS_WORKLOADS the first epoch's training loss within LOSS_TOL (relative; densenet121_xray also its validation
# loss within 1e-3 and a ROC AUC in [0, 1]): check_vs_native JSON IMPL WORKLOADS LOSS_TOL LOSS_WORKLOADS
check_vs_native() {
  "$PY" - "$@" <<'PYEOF'
import json, sys
runs, impl, wls = json.load(open(sys.argv[1]))["runs"], sys.argv[2], sys.argv[3].split(",")
tol, loss_wls = float(sys.argv[4]), sys.argv[5].split(",")
for wl in wls:
    by = {r["implementation"]: r for r in runs if r["workload"] == wl}
    n, f = by["native"], by[impl]
    assert n["status"] == "ok" and f["status"] == "ok", (wl, n.get("error"), f.get("error"))
    assert n["model"]["parameters"] == f["model"]["parameters"], (wl, n["model"], f["model"])
    eq = f["equivalence"]
    assert eq["status"] == "passed" and eq["max_rel_diff"] <= 1e-4, (wl, eq)
    line = "%s %s: %d parameters, forward max rel diff %.1e" % (impl, wl, f["model"]["parameters"], eq["max_rel_diff"])
    if wl in loss_wls:
        en, ef = n["samples"][0]["epochs"][0], f["samples"][0]["epochs"][0]
        assert abs(en["loss"] - ef["loss"]) <= tol * abs(en["loss"]), (wl, en["loss"], ef["loss"])
        line += ", training loss native %.6f %s %.6f (diff %.1e)" % (en["loss"], impl, ef["loss"], abs(en["loss"] - ef["loss"]))
        if wl == "densenet121_xray":
            assert abs(en["val_loss"] - ef["val_loss"]) <= 1e-3 * abs(en["val_loss"]), (en["val_loss"], ef["val_loss"])
            assert 0.0 <= ef["accuracy"] <= 1.0, ef["accuracy"]
            line += ", validation %.6f %.6f, ROC AUC %.3f" % (en["val_loss"], ef["val_loss"], ef["accuracy"])
    print(line)
PYEOF
}

# 6-7. Every installed framework, each in its own job with its own scratch folder, two at a time (every run is
# on one thread, and the machine has two cores); a job's lines come back in order after all have ended.
venv_of() { case $1 in pytorch) echo "";; keras-tensorflow) echo tensorflow;; keras-jax) echo jax;; keras-torch) echo torch;; *) echo "$1";; esac; }
has() { case " $2 " in *" $1 "*) return 0;; esac; return 1; }
PAIR="tensorflow keras-tensorflow keras-jax keras-torch jax paddle mindspore tinygrad chainer"
GRAPH="keras-tensorflow keras-jax keras-torch paddle mindspore tinygrad chainer"
RNN="paddle mindspore tinygrad chainer"

framework_checks() { # IMPL: sections 6, 6b, 6c and 7 for one framework, in the scratch folder $t
  local impl=$1 v rc wls p
  v=$(venv_of $impl)
  # 6. against the native engine: mnist_mlp and mnist_cnn, 2 batches of 16
  if has $impl "$PAIR"; then
    if [ ! -x "$VENVS/$v/bin/python" ]; then echo "skipped: $impl (not installed: no $VENVS/$v/bin/python; make deps-frameworks)"; return; fi
    pair_bench $impl mnist_mlp,mnist_cnn 16 2 600 "$t/$impl.json"; rc=$?
    if [ $rc -eq 0 ] && check_vs_native "$t/$impl.json" $impl mnist_mlp,mnist_cnn 1e-3 mnist_mlp,mnist_cnn
    then ok "$impl: parameter counts equal, forward within 1e-4, 2-batch training loss within 1e-3 (mnist_mlp, mnist_cnn)"
    else bad "$impl: exit $rc"; tail -5 "$t/stderr"; fi
  fi

  # 6b. the inference workload and the multi-label one (graph layers, batch norm, pooling, concat; sigmoid BCE) in
  # the runners that build them through runner_common.LayerModel or Keras, beside native, batch 2, one batch: equal
  # parameter counts, forward within 1e-4 of native, densenet121_xray's first training loss (the sigmoid BCE of the
  # initial weights) within 1e-4 of native's, the validation loss after the step within 1e-3, a ROC AUC. tinygrad
  # compiles densenet121_xray's training step for minutes (a cold kernel cache): its forward only, the runner started
  # by hand on the native export (the forward of 8 images and one inference batch of them)
  if has $impl "$GRAPH"; then
    wls=resnet50_features,densenet121_xray; [ $impl = tinygrad ] && wls=resnet50_features
    pair_bench $impl $wls 2 1 1800 "$t/$impl-graph.json"; rc=$?
    if [ $rc -eq 0 ] && check_vs_native "$t/$impl-graph.json" $impl $wls 1e-4 densenet121_xray
    then ok "$impl: $wls (parameter counts, forward within 1e-4$([ $impl = tinygrad ] || echo ', sigmoid BCE within 1e-4'))"
    else bad "$impl $wls: exit $rc"; tail -5 "$t/stderr"; fi
  fi
  if [ $impl = tinygrad ]; then
    $SD bench --workload densenet121_xray --data synthetic --export-weights "$t/ex-dn" > /dev/null 2> "$t/stderr" \
      && $SD bench --workload densenet121_xray --describe --json > "$t/dn.plan" 2>> "$t/stderr" \
      && "$VENVS/$v/bin/python" workloads/runners/tinygrad_runner.py --spec workloads/densenet121_xray.json --plan "$t/dn.plan" \
           --data synthetic --synthetic-seed 1 --train-n 8 --test-n 8 --shape 3,224,224 --classes 14 --epochs 0 --batch 8 \
           --threads 1 --equivalence "$t/ex-dn" > "$t/tg-dn.out" 2>> "$t/stderr"; rc=$?
    if [ $rc -eq 0 ] && "$PY" - "$t/tg-dn.out" <<'PYEOF'
import json, sys
ev = {e["event"]: e for e in map(json.loads, open(sys.argv[1]))}
assert ev["hello"]["parameters"] == 6968206, ev["hello"]
assert ev["equivalence"]["max_rel_diff"] <= 1e-4 and "done" in ev, ev
print("tinygrad densenet121_xray: %d parameters, forward max rel diff %.1e"
      % (ev["hello"]["parameters"], ev["equivalence"]["max_rel_diff"]))
PYEOF
    then ok "tinygrad: densenet121_xray forward of the native export within 1e-4"
    else bad "tinygrad densenet121_xray equivalence: exit $rc"; tail -5 "$t/stderr" "$t/tg-dn.out"; fi
  fi

  # 6c. the recurrent workloads (embedding with a range, repeat_vector, GRU, LSTM, time-distributed LSTM) in the
  # runners that build them through runner_common.LayerModel, beside native, synthetic data, 2 batches of 16: equal
  # parameter counts, forward within 1e-4 of native, the first epoch's training loss within 1e-3 (the second step's
  # loss follows the first update, so the gradients are checked too)
  if has $impl "$RNN"; then
    wls=babi_rnn,imdb_gru,mnist_hrnn
    pair_bench $impl $wls 16 2 1800 "$t/$impl-rnn.json"; rc=$?
    if [ $rc -eq 0 ] && check_vs_native "$t/$impl-rnn.json" $impl $wls 1e-3 $wls
    then ok "$impl: $wls (parameter counts, forward within 1e-4, 2-batch training loss within 1e-3)"
    else bad "$impl $wls: exit $rc"; tail -5 "$t/stderr"; fi
  fi

  # 7. --precision bf16: the frameworks with a CPU mixed precision train in it (the first epoch's loss moves off
  # fp32's by more than fp32 rounding and by less than bf16's error allows; the equivalence forward stays fp32 within
  # 1e-4; the run records precision bf16); the others are `unsupported` with the reason. The fp32 run is section 6's
  # (the same framework settings); pytorch, which has no section 6 here, runs its own.
  v=${v:-torch}
  if [ ! -x "$VENVS/$v/bin/python" ]; then echo "skipped: $impl bf16 (not installed: no $VENVS/$v/bin/python; make deps-frameworks)"; return; fi
  rc=0
  for p in fp32 bf16; do
    [ $p = fp32 ] && has $impl "$PAIR" && { cp "$t/$impl.json" "$t/$impl-fp32.json" || rc=1; continue; }
    $SD bench --workload mnist_mlp,mnist_cnn --data synthetic --epochs 1 --batch 16 --batches 2 --threads 1 --quiet \
       --no-db --impl $impl --precision $p --venvs "$VENVS" --runner-timeout 600 --json "$t/$impl-$p.json" \
       > "$t/stdout" 2> "$t/stderr" || rc=$?
  done
  if [ $rc -eq 0 ] && "$PY" - "$t/$impl-fp32.json" "$t/$impl-bf16.json" "$impl" <<'PYEOF'
import json, sys
impl = sys.argv[3]
f32, b16 = ({r["workload"]: r for r in json.load(open(f))["runs"] if r["implementation"] == impl}
            for f in sys.argv[1:3])
for wl in ("mnist_mlp", "mnist_cnn"):
    r, b = f32[wl], b16[wl]
    if impl in ("paddle", "mindspore", "tinygrad", "chainer"):
        assert b["status"] == "unsupported" and b["error"].startswith("n/a: no bf16 on CPU ("), b
        print("%s %s bf16: %s" % (impl, wl, b["error"]))
        continue
    assert r["status"] == "ok" and b["status"] == "ok", (r.get("error"), b.get("error"))
    assert b["settings"]["precision"] == "bf16" and r["settings"]["precision"] == "fp32", b["settings"]
    eq = b["equivalence"]
    assert eq["status"] == "passed" and eq["max_rel_diff"] <= 1e-4, eq
    lf, lb = r["samples"][0]["epochs"][0]["loss"], b["samples"][0]["epochs"][0]["loss"]
    d = abs(lb - lf) / abs(lf)
    assert 1e-5 < d < 5e-2, (lf, lb, d)
    print("%s %s: forward max rel diff %.1e, training loss fp32 %.6f bf16 %.6f (rel diff %.1e)"
          % (impl, wl, eq["max_rel_diff"], lf, lb, d))
PYEOF
  then ok "$impl: --precision bf16 (mnist_mlp, mnist_cnn)"
  else bad "$impl bf16: exit $rc"; tail -5 "$t/stderr"; fi
}

# The longest jobs first, so the two lanes end close together.
ALL="tinygrad mindspore paddle chainer keras-tensorflow keras-jax keras-torch tensorflow jax pytorch"
top=$t
for impl in $ALL; do
  while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n; done
  mkdir -p "$top/$impl"
  ( trap - EXIT; t=$top/$impl; fail=0; framework_checks $impl; echo $fail > "$t/verdict" ) > "$top/$impl.log" 2>&1 &
done
wait
ran=0
for impl in $ALL; do
  cat "$top/$impl.log"
  case $(cat "$top/$impl/verdict" 2>/dev/null) in
    0) ;;
    1) fail=1 ;;
    *) fail=1; echo "FAIL: $impl: its checks ended without a verdict" ;;
  esac
  grep -q "^ok: $impl: parameter counts equal" "$top/$impl.log" && ran=$((ran+1))
done
echo "frameworks checked: $ran"
exit $fail
