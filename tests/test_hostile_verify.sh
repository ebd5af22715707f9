#!/bin/bash
# test_hostile_verify — hostile inputs of verify and of the report's machine-made inputs: a published file with no
# runs is an error (exit 3), not "everything reproduced"; results, scores, verdict and regression files are read
# once (a pipe works) and bounded (a 2 GB sparse file is refused "over 64 MiB" from its size); a file too large for
# the address space fails with a message that has text.
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
has() { # description file pattern
  grep -q -- "$3" "$2" && ok "$1" || bad "$1: $(head -c 400 "$2")"
}

$SD bench --workload mnist_mlp --backend ref --data synthetic --epochs 2 --batches 2 --repeat 2 --no-db --quiet \
  --json "$t/r.json" > /dev/null 2>&1 || bad "bench for the measurement"
$SD score --offline --json "$t/scores.json" > /dev/null 2>&1 || bad "score for a scores file"

# "runs": [] verifies nothing: a bad published file (exit 3), not exit 0 "0 cell(s)"
"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); d["runs"]=[]; d["published"]={"title":"empty"}; json.dump(d,open(sys.argv[2],"w"))' \
  "$t/r.json" "$t/empty.json"
expect 3 "a published file with no runs" $SD verify "$t/empty.json" --results "$t/r.json"
has "the empty list is named" "$t/err" "empty.json:.*no runs: a published file with nothing to verify"

# a file whose every run measured nothing (a framework that was not installed) verifies nothing either: exit 9
"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); d["runs"]=[{"workload":"mnist_mlp","implementation":"jax","backend":"auto","status":"unavailable","error":"jax is not installed"}]; json.dump(d,open(sys.argv[2],"w"))' \
  "$t/r.json" "$t/none.json"
expect 9 "a published file that measured nothing" $SD verify "$t/none.json" --results "$t/r.json"
has "nothing measured is said" "$t/out" "nothing to verify: no published cell was measured"

# inputs from a pipe: each file is read once
expect 0 "verify --results from a pipe" $SD verify "$t/r.json" --results <(cat "$t/r.json")
expect 0 "verify of a published file from a pipe" $SD verify <(cat "$t/r.json") --results "$t/r.json"
expect 0 "report --results and --scores from pipes" $SD report --results <(cat "$t/r.json") --scores <(cat "$t/scores.json") \
  --no-db --out "$t/rep" --format md
$SD verify "$t/r.json" --results "$t/r.json" --json "$t/v.json" > /dev/null 2>&1
expect 0 "report --verify from a pipe" $SD report --results "$t/r.json" --verify <(cat "$t/v.json") --no-db --out "$t/rep" --format md

# a 2 GB sparse file is refused from its size, as over 64 MiB, wherever it is given
truncate -s 2G "$t/big.json"
expect 3 "verify --results 2 GB" $SD verify "$t/r.json" --results "$t/big.json"
has "verify: over 64 MiB" "$t/err" "big.json:1:1: over 64 MiB"
for opt in --scores --verify --regressions; do
  expect 3 "report $opt 2 GB" $SD report --results "$t/r.json" $opt "$t/big.json" --no-db --out "$t/rep" --format md
  has "report $opt: over 64 MiB" "$t/err" "big.json:1:1: over 64 MiB"
done
rm -f "$t/big.json"

# out of memory while reading a 50 MB file (under ulimit -v): a message with text, naming the file
"$PY" - "$t" <<'PY'
import json, sys
t = sys.argv[1]
r = json.load(open(t + "/r.json"))
run = dict(r["runs"][0]); run.pop("samples", None)
r["runs"] = [run] * (50_000_000 // len(json.dumps(run)))
json.dump(r, open(t + "/big50.json", "w"))
s = json.load(open(t + "/scores.json"))
s["padding"] = [1.5] * 10_000_000
json.dump(s, open(t + "/scores50.json", "w"))
PY
limit=300000   # KiB: showdown starts and reads small files, but cannot hold these two in memory
rlimit=400000  # KiB: report checks for 320 MiB before it starts (main.c), so it gets a little more
if ! (ulimit -v $limit; $SD verify "$t/r.json" --results "$t/r.json" > /dev/null 2>&1) 2> /dev/null; then
  echo "skipped: showdown does not run under ulimit -v $limit (a sanitizer build reserves its shadow memory)"
  exit $fail
fi
(ulimit -v $rlimit; $SD report --results "$t/r.json" --scores "$t/scores50.json" --no-db --out "$t/rep" --format md \
  > /dev/null 2> "$t/err"); rc=$?
if [ $rc -eq 0 ]; then
  echo "skipped: 400 MB of address space held a 50 MB scores file here"
else
  has "report: out of memory has text (exit $rc)" "$t/err" "scores50.json: out of memory"
fi
(ulimit -v $limit; $SD verify "$t/r.json" --results "$t/big50.json" > /dev/null 2> "$t/err"); rc=$?
if [ $rc -eq 0 ]; then
  echo "skipped: 300 MB of address space held a 50 MB results file here"
else
  has "verify: out of memory names the file (exit $rc)" "$t/err" "big50.json: out of memory"
fi
exit $fail
