#!/bin/bash
# test_report_interrupt — Ctrl-C during `make report` (scripts/report.sh): SIGINT to the whole foreground process
# group while the bench step runs keeps the cells already measured in out/showdown.db and leaves no report (nor a
# half-written one); an earlier report in out/ is left as it was. Native only, synthetic data, short cells.
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
mkdir -p out
echo "an earlier report" > out/showdown.pdf
# three cells, the last two long enough to be interrupted
# A background job of a non-interactive shell starts with SIGINT ignored, and a shell cannot trap a signal ignored
# at its start: report.sh would not stop between its commands. A terminal's foreground job has it at its default.
fg='import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.setsid(); os.execvp(sys.argv[1], sys.argv[1:])'
REPORT_FRAMEWORKS=none REPORT_WORKLOADS=mnist_mlp,cifar10_vgg,vgg16_cifar \
  REPORT_BENCH_ARGS='--epochs 3 --batches 40 --data synthetic' python3 -c "$fg" bash scripts/report.sh "$SD" > log 2>&1 &
pid=$!
# (the groups run light to heavy, a cell each: mnist_mlp, cifar10_vgg, vgg16_cifar)
for _ in $(seq 1 600); do grep -q '^\[1/1\] mnist_mlp' log && break; kill -0 $pid 2>/dev/null || break; sleep 0.2; done
if ! grep -q '^\[1/1\] mnist_mlp' log; then bad "the first cell never ended: $(tail -5 log)"; exit 1; fi
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
exit $fail
