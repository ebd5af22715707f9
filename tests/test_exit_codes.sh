#!/bin/bash
# test_exit_codes — every documented exit code, produced by the commands that document it. The table of what was
# observed is docs/exit-codes.md: the test fails when that file differs from it (UPDATE_DOCS=1 writes it).
# Exit 4 needs a machine without a usable GPU (bench --backend cudnn); elsewhere the row says so and the test skips.
set -u
SD=${SHOWDOWN:-./showdown}
SD=$(cd "$(dirname "$SD")" && pwd)/$(basename "$SD")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-/usr/bin/python3}
DOC=$ROOT/docs/exit-codes.md
npass=0; nfail=0; t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
declare -A seen
# code command description command... : run it, check the code, remember which command gave it
produce() {
  local want=$1 cmd=$2 what=$3; shift 3
  "$@" > "$t/out" 2> "$t/err"; local rc=$?
  if [ $rc -eq "$want" ]; then echo "ok: $cmd: $what (exit $rc)"; npass=$((npass + 1)); seen[$want]="${seen[$want]:-}${seen[$want]:+, }\`$cmd\`"
  else echo "FAIL: $cmd: $what: exit $rc, expected $want: $(head -2 "$t/err")"; nfail=$((nfail + 1)); fi
}
bench() { "$SD" bench --workload mnist_mlp --backend ref --data synthetic --batches 2 --epochs 1 --threads 1 --quiet "$@"; }
RES=$ROOT/tests/fixtures/report/results-synthetic.json

bench --no-db --epochs 2 --batches 3 --repeat 3 --json "$t/r.json" > /dev/null 2>&1 || { echo "FAIL: the measurement the cases use"; exit 1; }
"$PY" - "$t" <<'PY'
import json, sys
t = sys.argv[1]
r = json.load(open(t + "/r.json"))
m = r["runs"][0]
med = m["summary"]["steady_epoch_s"]["median"]; acc = m["summary"]["accuracy"]["median"]
def cell(value, env=None):
    c = {"workload": "mnist_mlp", "implementation": "native", "backend": "ref", "data": {"kind": "synthetic"},
         "settings": {"batch": 128, "max_batches": 3, "precision": "fp32"},
         "summary": {"steady_epoch_s": {"median": value, "n": 1}, "accuracy": {"median": acc, "n": 1}}}
    if env: c["environment"] = env
    return c
def doc(cs): return {"schema": "showdown-results/1", "published": {"title": "crafted"}, "environment": r["environment"], "runs": cs}
json.dump(doc([cell(med)]), open(t + "/same.json", "w"))
json.dump(doc([cell(med / 1000)]), open(t + "/slower.json", "w"))
json.dump(doc([cell(med, env={"cpu_model": "Imaginary CPU 9000"})]), open(t + "/other.json", "w"))
d = json.load(open(t + "/r.json")); d["runs"][0]["summary"]["accuracy"]["max"] = 1.5; json.dump(d, open(t + "/bad.json", "w"))
PY
cat > "$t/cfg.json" <<JSON
{"workloads": "mnist_mlp", "backends": "ref", "data": "synthetic", "epochs": 1, "batches": 2, "repeat": 1,
 "keep": 5, "threshold_pct": 7, "out": "$t/n"}
JSON

produce 0 bench "a short run" bench --no-db --json "$t/r0.json"
produce 0 report "a report" "$SD" report --no-db --results "$RES" --out "$t/rep" --format md
produce 0 verify "every cell reproduced" "$SD" verify "$t/same.json" --results "$t/r.json"
produce 0 nightly "a first night" "$SD" nightly --config "$t/cfg.json"
touch "$t/afile"
produce 1 report "--out is a file: the outputs cannot be written" "$SD" report --no-db --results "$RES" --out "$t/afile" --format md
produce 2 bench "an unknown workload" bench --no-db --workload nosuch
produce 2 report "an unknown option" "$SD" report --bogus
produce 2 nightly "--keep 0" "$SD" nightly --keep 0
produce 3 report "a results file with a wrong field" "$SD" report --no-db --results "$t/bad.json" --out "$t/rep3" --format md
produce 3 verify "a results file with a wrong field" "$SD" verify "$t/same.json" --results "$t/bad.json"
cp -r "$ROOT/scoring" "$t/scoring"
"$PY" -c 'import json,sys; p=sys.argv[1]; d=json.load(open(p)); [c.__setitem__("weight", 0) for c in d["categories"]]; json.dump(d, open(p, "w"))' "$t/scoring/method.json"
produce 3 score "method.json with every weight 0" "$SD" score --offline --quiet --scoring-dir "$t/scoring"
bench --no-db --backend cudnn > /dev/null 2>&1; rc=$?
if [ $rc -eq 4 ]; then produce 4 bench "--backend cudnn without a usable GPU" bench --no-db --backend cudnn
else echo "skipped: --backend cudnn runs here (exit $rc): exit 4 not produced"; seen[4]="(needs a machine without a GPU)"; fi
produce 5 verify "a comparable cell did not reproduce" "$SD" verify "$t/slower.json" --results "$t/r.json"
SHOWDOWN_TEST_SLOWDOWN=1500 produce 6 nightly "a night much slower than the one before" "$SD" nightly --config "$t/cfg.json"
flock "$t/n/nightly.lock" sleep 30 & holder=$!
sleep 0.5
produce 7 nightly "another run holds the lock" "$SD" nightly --config "$t/cfg.json"
kill $holder 2>/dev/null; wait $holder 2>/dev/null
port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
produce 8 score "no network" "$SD" score --api-base "http://127.0.0.1:$port" --se-api-base "http://127.0.0.1:$port" --timeout 2 \
  --quiet --cache-dir "$t/cache" --json "$t/s8.json"
produce 9 verify "a cell measured on another CPU: not comparable" "$SD" verify "$t/other.json" --results "$t/r.json"
for sig in INT TERM; do
  want=$([ $sig = INT ] && echo 130 || echo 143)
  rm -f "$t/rs.json"
  SHOWDOWN_TEST_SLOWDOWN=1000 "$SD" bench --workload mnist_mlp --backend ref --data synthetic --batches 2 --epochs 3 --threads 1 \
    --quiet --no-db --json "$t/rs.json" > /dev/null 2>&1 & r=$!
  sleep 1.5; kill -$sig $r; wait $r; rc=$?
  if [ $rc -eq "$want" ] && [ ! -e "$t/rs.json" ]; then echo "ok: bench: SIG$sig (exit $rc, no results file)"; npass=$((npass + 1)); seen[$want]="\`bench\`"
  else echo "FAIL: bench SIG$sig: exit $rc, expected $want"; nfail=$((nfail + 1)); fi
done

{
  echo "# Exit codes"
  echo
  echo "Every command exits with one of these codes. The last column lists the commands that tests/test_exit_codes.sh"
  echo "made produce each code; that test writes this file (UPDATE_DOCS=1) and fails when it differs from what it saw."
  echo
  echo "| code | meaning | produced in the test by |"
  echo "|---|---|---|"
  while IFS='|' read -r code meaning; do
    echo "| $code | $meaning | ${seen[${code%%,*}]:-not produced} |"
  done <<'TABLE'
0|success
1|runtime failure (a run failed, an output could not be written, nightly's report step failed, or the address-space limit (`ulimit -v`) is below what the command needs; the other runs' results are still written)
2|usage: bad command line, unknown workload, implementation or back-end anywhere in a list (checked before anything is measured), an output directory that cannot be written (checked before measuring), online `score` with neither HOME nor `--cache-dir`, or a command not built yet
3|bad input file: workload spec, data set, results, scoring file or method (the message names file:line:column), a published file with no runs, an input over 64 MiB or not a regular file, a database file that is not showdown's, or a recorded report that changed
4|requested back-end or device not available (e.g. `--backend cudnn` without a GPU)
5|`verify`: a comparable cell did not reproduce
6|`nightly`: a regression was flagged
7|another run holds the lock
8|network failure (online `score` with no query answered: the scores are still printed and written, from the snapshot)
9|`verify`: no comparable cell failed, but some were NOT-COMPARABLE, MISSING or UNVERIFIABLE (nothing was checked there), or the published file measured nothing
130|interrupted by SIGINT (also while blocked reading an input); `bench` writes no partial results file and removes its temp files; `verify --rerun` prints the verdicts of the cells it checked and writes them with --json, marked interrupted
143|interrupted by SIGTERM; as 130
TABLE
} > "$t/exit-codes.md"
if [ "${UPDATE_DOCS:-0}" = 1 ]; then cp "$t/exit-codes.md" "$DOC"; echo "wrote $DOC"
elif cmp -s "$t/exit-codes.md" "$DOC"; then echo "ok: docs/exit-codes.md matches what was observed"; npass=$((npass + 1))
else echo "FAIL: docs/exit-codes.md differs from what was observed:"; diff "$DOC" "$t/exit-codes.md"; nfail=$((nfail + 1)); fi
echo "$npass passed, $nfail failed"
[ $nfail -eq 0 ]
