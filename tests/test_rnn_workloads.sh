#!/bin/bash
# test_rnn_workloads — the recurrent workloads end to end: imdb_gru's parameter count, then training
# on a small IMDB sample this test writes in the aclImdb text layout and as showdown-tokens/1 files, and on
# synthetic token data (each run must finish with finite losses and an accuracy); the PyTorch runner on the
# same sample; mnist_hrnn and babi_rnn parameter counts and a short synthetic run each.
set -u
SD=${SHOWDOWN:-./showdown}
fail=0; t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=1; }

$SD bench --workload imdb_gru --describe > "$t/d" 2>&1 || bad "describe exits non-zero"
grep -q "parameters: 3,818,302 (expected 3818302: match)" "$t/d" && ok "imdb_gru has 3,818,302 parameters" \
  || { bad "imdb_gru parameter count"; cat "$t/d"; }

# 48 reviews per class and split: positive ones use "good great fine", negative ones "bad awful poor"
acl="$t/aclImdb"
mkdir -p "$acl"/{train,test}/{pos,neg}
for s in train test; do
  for i in $(seq 1 48); do
    printf 'This movie was Good, GREAT! %s acting; a fine plot <br /><br />I liked it %d.\n' "good" "$i" > "$acl/$s/pos/${i}_9.txt"
    printf 'This movie was bad... AWFUL %s acting; a poor plot<br />I did not like it %d.\n' "bad" "$i" > "$acl/$s/neg/${i}_1.txt"
  done
done

check_json() { # file description
  python3 - "$1" <<'PY' && ok "$2" || { bad "$2"; }
import json, math, sys
d = json.load(open(sys.argv[1]))
r = d["runs"][0]
assert r["status"] == "ok", r.get("error")
eps = r["samples"][0]["epochs"]
assert len(eps) == 2, len(eps)
for e in eps:
    assert math.isfinite(e["loss"]) and math.isfinite(e["val_loss"]), e
    assert 0.0 <= e["accuracy"] <= 1.0 and e["test_images"] > 0, e
assert r["model"]["parameters"] == 3818302
PY
}

for be in ref dnnl; do
  if $SD bench --workload imdb_gru --backend $be --data real --data-dir "$acl" --epochs 2 --batch 16 --no-db --quiet \
       --json "$t/acl_$be.json" > "$t/out" 2> "$t/err"; then
    check_json "$t/acl_$be.json" "imdb_gru trains on the aclImdb sample ($be)"
  else
    rc=$?
    if [ $be = dnnl ] && grep -q "not built into this binary" "$t/err"; then echo "skipped: dnnl not built"; continue; fi
    bad "imdb_gru on the aclImdb sample ($be): exit $rc"; head -5 "$t/err"
  fi
done

# the PyTorch runner on the same sample: its own Keras tokenizer, the same initial weights, cuDNN's GRU
# formulation -> the same losses (or "unavailable" without torch)
if $SD bench --workload imdb_gru --backend ref --impl native,pytorch --data real --data-dir "$acl" --epochs 2 --batch 16 \
     --no-db --quiet --json "$t/pt.json" > "$t/out" 2> "$t/err"; then
  /usr/bin/python3 - "$t/pt.json" <<'PY'
import json, sys
runs = {r["implementation"]: r for r in json.load(open(sys.argv[1]))["runs"]}
pt = runs.get("pytorch")
if pt is None or pt["status"] == "unavailable":
    print("skipped: pytorch runner unavailable"); sys.exit(0)
assert pt["status"] == "ok", pt.get("error")
ln = [e["loss"] for e in runs["native"]["samples"][0]["epochs"]]
lp = [e["loss"] for e in pt["samples"][0]["epochs"]]
for a, b in zip(ln, lp):
    assert abs(a - b) <= 1e-4 * max(1.0, abs(a)), (ln, lp)
print("ok: the PyTorch runner reproduces the native losses on the aclImdb sample", ln, lp)
PY
  [ $? -eq 0 ] || bad "PyTorch runner losses"
else
  bad "imdb_gru native+pytorch on the aclImdb sample: exit $?"; head -5 "$t/err"
fi

# the same sample as token-id files: 1 = start, 2 = oov, ids from 3; a long and a short review per class
{ echo "showdown-tokens/1"; for i in $(seq 1 40); do echo "1 1 5 6 7 8 9 $((i + 20))"; echo "0 1 10 11 12 13 14 15 16 17 18 19 $((i + 100))"; done; } > "$t/train.tok"
cp "$t/train.tok" "$t/test.tok"
if $SD bench --workload imdb_gru --backend ref --data real --data-dir "$t" --epochs 2 --batch 16 --no-db --quiet \
     --json "$t/tok.json" > "$t/out" 2> "$t/err"; then
  check_json "$t/tok.json" "imdb_gru trains on token-id files"
else
  bad "imdb_gru on token-id files: exit $?"; head -5 "$t/err"
fi
mkdir -p "$t/bad"
printf 'showdown-tokens/1\n1 1 5 x7\n' > "$t/bad/train.tok"
cp "$t/bad/train.tok" "$t/bad/test.tok"
$SD bench --workload imdb_gru --backend ref --data real --data-dir "$t/bad" --epochs 1 --batch 1 --no-db --quiet > "$t/out" 2> "$t/err"
rc=$?
if [ $rc -ne 0 ] && grep -q "bad/train.tok:2: field 4" "$t/err"; then ok "a malformed token file is named with its line (exit $rc)"
else bad "malformed token file: exit $rc"; cat "$t/err" | head -3; fi

if $SD bench --workload imdb_gru --backend ref --data synthetic --epochs 2 --batches 3 --batch 16 --no-db --quiet \
     --json "$t/syn.json" > "$t/out" 2> "$t/err"; then
  check_json "$t/syn.json" "imdb_gru trains on synthetic token data"
else
  bad "imdb_gru on synthetic data: exit $?"; head -5 "$t/err"
fi
for wl in "mnist_hrnn 200,458" "babi_rnn 46,236"; do
  set -- $wl
  $SD bench --workload $1 --describe > "$t/d" 2>&1 || bad "$1 describe exits non-zero"
  grep -q "parameters: $2 (expected ${2//,/}: match)" "$t/d" && ok "$1 has $2 parameters" || { bad "$1 parameter count"; cat "$t/d"; }
  if $SD bench --workload $1 --backend ref --data synthetic --epochs 1 --batches 2 --batch 8 --no-db --quiet \
       --json "$t/$1.json" > "$t/out" 2> "$t/err"; then
    /usr/bin/python3 -c "
import json, math, sys
r = json.load(open('$t/$1.json'))['runs'][0]
e = r['samples'][0]['epochs'][0]
assert r['status'] == 'ok' and math.isfinite(e['loss']) and e['test_images'] == 16, r
" && ok "$1 trains on synthetic data" || bad "$1 results"
  else
    bad "$1 on synthetic data: exit $?"; head -5 "$t/err"
  fi
done
exit $fail
