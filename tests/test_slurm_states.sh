#!/bin/bash
# test_slurm_states — collect's per-cell states that a real one-node cluster cannot produce in seconds
# (timed out, cancelled, still pending, completed without results), and the sacct path, with stand-ins for
# sbatch / sacct / scontrol on PATH that print what Slurm 22.05 prints. tests/test_slurm.sh runs a real one.
set -u
cd "$(dirname "$0")/.."
SD=$(readlink -f "${SHOWDOWN:-./showdown}")
T=$(mktemp -d /tmp/showdown-slurmst.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; [ -f "$T/out.txt" ] && sed 's/^/   out| /' "$T/out.txt"; exit 1; }
mkdir -p "$T/bin"
cat >"$T/bin/sbatch" <<'EOF'
#!/bin/sh
echo "$@" >>"$FAKE/sbatch.args"
echo "4242"
EOF
# sacct: accounting off unless $FAKE/sacct.out exists
cat >"$T/bin/sacct" <<'EOF'
#!/bin/sh
echo "$@" >>"$FAKE/sacct.args"
[ -f "$FAKE/sacct.out" ] || { echo "Slurm accounting storage is disabled" >&2; exit 1; }
cat "$FAKE/sacct.out"
EOF
cat >"$T/bin/scontrol" <<'EOF'
#!/bin/sh
cat "$FAKE/scontrol.out"
EOF
chmod +x "$T/bin/"*
export FAKE=$T PATH="$T/bin:$PATH"

# a 4-cell matrix (nothing runs: the stand-in sbatch only records its arguments)
$SD bench --executor slurm --workload mnist_mlp,mnist_cnn --backend ref,dnnl --data synthetic --epochs 1 \
    --batches 2 --partition gpu --gres gpu:2 --constraint v100 --time 0:10:00 --results-dir "$T/m" \
    >"$T/out.txt" 2>&1 || fail "submit exited $?"
grep -q -- '--array=0-3' "$T/sbatch.args" || fail "sbatch not given --array=0-3: $(cat "$T/sbatch.args")"
for o in --partition=gpu --gres=gpu:2 --constraint=v100 --time=0:10:00 "--output=$T/m/logs/cell-%a-%A.log" --parsable; do
  grep -q -- "$o" "$T/sbatch.args" || fail "sbatch not given $o"
done
grep -q "^  2) set -- --workload 'mnist_cnn' --impl 'native' --backend 'ref' ;;" "$T/m/job.sh" || fail "job.sh cell 2"
grep -q "bench \"\$@\" --no-db --json '$T/m'/cells/cell-\"\$SLURM_ARRAY_TASK_ID\".json '--data' 'synthetic'" "$T/m/job.sh" \
  || fail "job.sh command line: $(tail -1 "$T/m/job.sh")"
grep -q -- "--partition\|--results-dir\|--workload 'mnist_mlp,mnist_cnn'" <(tail -1 "$T/m/job.sh") && fail "executor options leaked into the cells"
bash -n "$T/m/job.sh" || fail "job.sh is not valid sh"

# cell 0 ran (its results file from a local run), 1 timed out, 2 was cancelled, 3 is pending
$SD bench --workload mnist_mlp --backend ref --data synthetic --epochs 1 --batches 2 --no-db --quiet \
    --json "$T/m/cells/cell-0.json" >/dev/null 2>&1 || fail "local bench for cell 0"
echo "slurmstepd: error: *** JOB 4244 ON n7 CANCELLED AT 2026-11-22T01:00:00 DUE TO TIME LIMIT ***" >"$T/m/logs/cell-1-4242.log"
task() { echo "JobId=$((4242 + $1)) ArrayJobId=4242 ArrayTaskId=$1 JobName=showdown JobState=$2 Reason=None ExitCode=$3 BatchHost=n$1 NumNodes=1"; }
{ task 0 COMPLETED 0:0; task 1 TIMEOUT 0:0; task 2 CANCELLED 0:15; task 3 PENDING 0:0; } >"$T/scontrol.out"
$SD collect "$T/m" --db "$T/sd.db" >"$T/out.txt" 2>&1
rc=$?
[ $rc -eq 7 ] || fail "collect with a pending task exited $rc, expected 7"
grep -q 'still pending or running' "$T/out.txt" || fail "no word on the pending task"
grep -q '^3 \+pending ' "$T/out.txt" || fail "cell 3 not pending"
[ -f "$T/sd.db" ] && [ -n "$(sqlite3 "$T/sd.db" 'SELECT id FROM runs' 2>/dev/null)" ] && fail "nothing may be merged while tasks run"

# the array ended: 3 completed without a results file (missing)
{ task 0 COMPLETED 0:0; task 1 TIMEOUT 0:0; task 2 CANCELLED 0:15; task 3 COMPLETED 0:0; } >"$T/scontrol.out"
$SD collect "$T/m" --db "$T/sd.db" >"$T/out.txt" 2>&1
rc=$?
cat "$T/out.txt"
[ $rc -eq 1 ] || fail "collect exited $rc, expected 1"
grep -q '(states from scontrol)' "$T/out.txt" || fail "states should come from scontrol (sacct disabled)"
grep -q '^0 \+ok \+4242_0 .*mnist_mlp \+native \+ref ' "$T/out.txt" || fail "cell 0 ok"
grep -q '^1 \+timeout .*Slurm TIMEOUT.*DUE TO TIME LIMIT' "$T/out.txt" || fail "cell 1 timeout with the log line"
grep -q '^2 \+cancelled .*Slurm CANCELLED exit 0:15' "$T/out.txt" || fail "cell 2 cancelled"
grep -q "^3 \+missing .*no results file; Slurm COMPLETED exit 0:0; no log at $T/m/logs/cell-3-4242.log" "$T/out.txt" || fail "cell 3 missing"
grep -q -- "--resubmit $T/m --cells 1,2,3\$" "$T/out.txt" || fail "resubmit command"
python3 - "$T/m/merged.json" <<'EOF' || fail "merged.json"
import json, sys
d = json.load(open(sys.argv[1]))
st = [(r["cell"], r["status"]) for r in d["runs"]]
assert st == [(0, "ok"), (1, "timeout"), (2, "cancelled"), (3, "missing")], st
assert d["slurm"]["cells_not_ok"] == 3 and d["slurm"]["jobs"] == ["4242"], d["slurm"]
assert d["runs"][0]["environment"]["hostname"], "cell 0 keeps its environment"
EOF

# sacct when accounting is on (pending tasks of an array not yet split: "4242_[2-3]")
printf '4242_0|COMPLETED|0:0\n4242_1|TIMEOUT|0:0\n4242_[2-3]|PENDING|0:0\n' >"$T/sacct.out"
$SD collect "$T/m" --no-db >"$T/out.txt" 2>&1
[ $? -eq 7 ] || fail "sacct: pending range should keep collect waiting"
grep -q '(states from sacct)' "$T/out.txt" || fail "states should come from sacct"
grep -q '^2 \+pending ' "$T/out.txt" && grep -q '^3 \+pending ' "$T/out.txt" || fail "sacct range 2-3 pending"

# resubmit: every cell not ok by default, with a changed time limit; previous results moved aside
rm "$T/sacct.out"
: >"$T/sbatch.args"
$SD bench --executor slurm --resubmit "$T/m" --time 1:00:00 >"$T/out.txt" 2>&1 || fail "resubmit exited $?"
grep -q -- '--array=1-3' "$T/sbatch.args" || fail "resubmit array: $(cat "$T/sbatch.args")"
grep -q -- '--time=1:00:00' "$T/sbatch.args" || fail "resubmit --time"
$SD bench --executor slurm --resubmit "$T/m" --cells 0,9 >"$T/out.txt" 2>&1; [ $? -eq 2 ] || fail "--cells 9 is outside the matrix"
$SD bench --executor slurm --resubmit "$T/m" --cells 0-1,x >"$T/out.txt" 2>&1; [ $? -eq 2 ] || fail "--cells 0-1,x"
: >"$T/sbatch.args"
$SD bench --executor slurm --resubmit "$T/m" --cells 0 >"$T/out.txt" 2>&1 || fail "resubmit --cells 0"
grep -q -- '--array=0 ' "$T/sbatch.args" || fail "resubmit of cell 0: $(cat "$T/sbatch.args")"
[ -f "$T/m/cells/cell-0.json.job-4242" ] && [ ! -f "$T/m/cells/cell-0.json" ] || fail "cell 0's previous results not moved aside"
echo "test_slurm_states: ok"
