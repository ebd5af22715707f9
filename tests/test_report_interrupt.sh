#!/bin/bash
# test_report_interrupt — Ctrl-C during `make report` (scripts/report.sh): SIGINT to the whole foreground process
# group while the bench step runs keeps the cells already measured in out/showdown.db and leaves no report (nor a
# half-written one); an earlier report in out/ is left as it was. RESUME=1 then goes on from the groups that finished
# (out/report-state.txt) and renders the report; under other settings it starts anew. Native only, synthetic data,
# short cells.
set -u
SD=$(realpath "${SHOWDOWN:-./showdown}")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
t=$(mktemp -d); pid=""
trap '[ -n "$pid" ] && kill -KILL -- "-$pid" 2>/dev/null; rm -rf "$t"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
cd "$t" || exit 1
ln -s "$ROOT/scripts" scripts; ln -s "$ROOT/workloads" workloads; ln -s "$ROOT/templates" templates
# the scores of step 4 read scoring/ (found beside a binary in the checkout, not beside build/san/showdown)
ln -s "$ROOT/scoring" scoring
mkdir -p out
echo "an earlier report" > out/showdown.pdf
# three cells in three groups, the last two long enough to be interrupted
# A background job of a non-interactive shell starts with SIGINT ignored, and a shell cannot trap a signal ignored
# at its start: report.sh would not stop between its commands. A terminal's foreground job has it at its default.
fg='import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.setsid(); os.execvp(sys.argv[1], sys.argv[1:])'
export REPORT_FRAMEWORKS=none REPORT_WORKLOADS=mnist_mlp,cifar10_vgg,vgg16_cifar
export REPORT_BENCH_ARGS='--epochs 2 --batches 4 --data synthetic'
python3 -c "$fg" bash scripts/report.sh "$SD" > log 2>&1 &
pid=$!
# (the groups run light to heavy, a cell each: mnist_mlp, cifar10_vgg, vgg16_cifar; interrupted once the first
# group is recorded as finished, so that RESUME=1 below has it to keep)
for _ in $(seq 1 600); do grep -q '^group 1' out/report-state.txt 2>/dev/null && break; kill -0 $pid 2>/dev/null || break; sleep 0.2; done
if ! grep -q '^\[1/1\] mnist_mlp' log || ! grep -q '^group 1' out/report-state.txt; then
  bad "the first group never ended: $(tail -5 log)"; exit 1
fi
kill -INT -- "-$pid"   # Ctrl-C: the terminal signals the whole foreground group
wait $pid; rc=$?; pid=""
[ $rc -ne 0 ] && ok "report stopped by Ctrl-C: exit $rc" || bad "report exit 0 after Ctrl-C: $(tail -5 log)"
grep -q '^\[1/1\] vgg16_cifar' log && bad "the run was not interrupted (all 3 cells ended); lengthen the cells" || ok "interrupted before the last cell"
python3 - out/showdown.db <<'PY' && ok "out/showdown.db keeps the finished cell(s)" || bad "database: $(tail -5 log)"
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute("SELECT workload, status FROM results").fetchall()
print("  results in the database:", rows)
assert ("mnist_mlp", "ok") in rows, rows
PY
[ "$(cat out/showdown.pdf)" = "an earlier report" ] && ok "the earlier report is untouched, no half-written PDF" \
  || bad "out/showdown.pdf changed"
left=$(find out -name '*.tmp*' -o -name '.*.pdf*' -o -name '*.part' | head -3)
[ -z "$left" ] && ok "no temporary files left in out/" || bad "left behind: $left"
[ ! -e out/bench/report-bench.json ] && ok "no results file from the interrupted run" || bad "out/bench/report-bench.json written"
grep -q 'interrupted at step 2.*go on with: make report RESUME=1' log && ok "the interrupt message says how to go on" \
  || bad "no 'go on with: make report RESUME=1' in: $(tail -3 log)"

# RESUME=1, same settings: group 1 (mnist_mlp) kept as it is, the other two measured, the report rendered
cp out/bench/report-bench.part1.json part1.json
cp -a out out.interrupted   # for the case of other settings below
mlp_rows() { python3 -c 'import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM results WHERE workload = ?", ("mnist_mlp",)).fetchone()[0])' out/showdown.db; }
rows=$(mlp_rows)
RESUME=1 bash scripts/report.sh "$SD" > log2 2>&1; rc=$?
[ $rc -eq 0 ] && ok "RESUME=1: exit 0" || bad "RESUME=1: exit $rc: $(tail -5 log2)"
grep -q '^report: RESUME=1: going on from out/report-state.txt: group 1 of 3 kept' log2 && \
  grep -q '^report 2/6: group 1: mnist_mlp .*: kept' log2 && ok "RESUME=1 says it goes on, group 1 (mnist_mlp) kept" \
  || bad "RESUME=1 does not say it goes on with group 1 kept: $(grep RESUME log2)"
! grep -q '^\[1/1\] mnist_mlp' log2 && [ "$(mlp_rows)" = "$rows" ] && grep -q '^\[1/1\] cifar10_vgg' log2 && \
  grep -q '^\[1/1\] vgg16_cifar' log2 && ok "mnist_mlp not measured again; cifar10_vgg and vgg16_cifar measured" \
  || bad "RESUME=1 measured: $(grep '^\[1/1\]' log2 | cut -c1-40 | paste -sd' ') (mnist_mlp rows $rows -> $(mlp_rows))"
[ "$(head -c 4 out/showdown.pdf)" = "%PDF" ] && ok "out/showdown.pdf rendered" || bad "no PDF: $(head -c 20 out/showdown.pdf)"
python3 - out/bench/report-bench.json part1.json <<'PY' && ok "report-bench.json: the three workloads, mnist_mlp's runs the kept part's" \
  || bad "report-bench.json: $(tail -5 log2)"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
part = json.load(open(sys.argv[2]))["runs"]
assert {r["workload"] for r in runs if r["status"] == "ok"} == {"mnist_mlp", "cifar10_vgg", "vgg16_cifar"}, runs
assert runs[:len(part)] == part, "mnist_mlp's runs differ from the part kept"
PY
left=$(ls out/report-state.txt out/bench/report-bench.part* out/bench/report-gave-up.txt 2>/dev/null)
[ -z "$left" ] && ok "a finished report leaves no state nor parts" || bad "left behind: $left"

# RESUME=1 under other settings (another cell length) starts anew: mnist_mlp measured again
rm -rf out; mv out.interrupted out
REPORT_BENCH_ARGS='--epochs 2 --batches 2 --data synthetic' RESUME=1 python3 -c "$fg" bash scripts/report.sh "$SD" > log3 2>&1 &
pid=$!
# (the state copied holds a group 1 too: the new one follows the new key line)
for _ in $(seq 1 600); do grep -q 'starting anew' log3 && grep -q '^group 1' out/report-state.txt 2>/dev/null && break
                          kill -0 $pid 2>/dev/null || break; sleep 0.2; done
kill -INT -- "-$pid" 2>/dev/null; wait $pid; pid=""
grep -q '^report: RESUME=1: the recorded run had other settings (or none): starting anew' log3 && \
  grep -q '^\[1/1\] mnist_mlp' log3 && grep -q '^key .*args=--epochs 2 --batches 2 --data synthetic$' out/report-state.txt \
  && ok "RESUME=1 under other settings starts anew and measures mnist_mlp again" \
  || bad "other settings: $(grep -m 3 'RESUME\|mnist_mlp' log3)"
exit $fail
