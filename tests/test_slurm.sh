#!/bin/bash
# test_slurm — bench --executor slurm and collect against a real Slurm: a private one-node cluster on this
# machine (tests/slurm_cluster.sh: munged, slurmctld, slurmd with a generated slurm.conf under a temp dir),
# a 4-cell matrix (mnist_mlp, mnist_cnn × the CPU back-ends) merged into one database run, cells made to
# fail (with a results file, without one) reported per cell, and the resubmission of one cell alone.
# Exit 77 with the reason when Slurm cannot run here. Stops everything it started.
set -u
cd "$(dirname "$0")/.."
SD=${SHOWDOWN:-./showdown}
SD=$(readlink -f "$SD")
T=$(mktemp -d /tmp/showdown-slurm.XXXXXX)
. tests/slurm_cluster.sh
cleanup() {
  if [ -n "${SLURM_CONF:-}" ] && [ -n "$SC_PIDS" ]; then   # no job step may outlive the cluster
    scancel --user=root >/dev/null 2>&1
    for _ in $(seq 1 20); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.5; done
  fi
  slurm_cluster_stop
  rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$T/out.txt" ] && sed 's/^/   out| /' "$T/out.txt" | tail -40; exit 1; }

slurm_cluster_start "$T/cluster" || exit $?
echo "cluster up: $(sinfo -h -o '%P %T %N %c CPUs')"

BACKENDS=ref   # the CPU back-ends this build has
grep -q '^HAVE_DNNL *:*= *1' build/config.mk 2>/dev/null && BACKENDS=ref,dnnl
QUICK=(--data synthetic --epochs 1 --batches 3 --threads 1 --poll 0.5)

# 1. the matrix: 2 workloads × 2 back-ends (2 × 1 without oneDNN), every cell ok
$SD bench --executor slurm --workload mnist_mlp,mnist_cnn --backend "$BACKENDS" "${QUICK[@]}" \
    --results-dir "$T/m1" --time 10:00 --wait --db "$T/sd.db" >"$T/out.txt" 2>&1
rc=$?
cat "$T/out.txt"
[ $rc -eq 0 ] || fail "bench --executor slurm --wait exited $rc"
ncells=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['cells']))" "$T/m1/manifest.json")
want=$(( 2 * $(echo "$BACKENDS" | tr ',' '\n' | wc -l) ))
[ "$ncells" = "$want" ] || fail "manifest lists $ncells cells, expected $want"
[ "$(grep -c '^[0-9]\+ \+ok ' "$T/out.txt")" = "$want" ] || fail "not every cell reported ok"
for i in $(seq 0 $((want - 1))); do
  [ -s "$T/m1/cells/cell-$i.json" ] || fail "no results file for cell $i"
  ls "$T/m1/logs/cell-$i-"*.log >/dev/null 2>&1 || fail "no log for cell $i"
done
grep -q 'mnist_cnn .*native .*ref ' "$T/out.txt" || fail "merged table lacks mnist_cnn/ref"
# one complete run holding every cell's result, each with its own environment fingerprint
python3 - "$T/sd.db" "$want" <<'EOF' || fail "database check"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1]); want = int(sys.argv[2])
runs = db.execute("SELECT id, complete, dir FROM runs").fetchall()
assert len(runs) == 1 and runs[0][1] == 1, runs
res = db.execute("SELECT workload, backend, status, run FROM results WHERE run_id = ?", (runs[0][0],)).fetchall()
assert len(res) == want, res
cells = set()
for wl, be, st, run in res:
    r = json.loads(run)
    assert st == "ok", (wl, be, st)
    assert r["environment"]["hostname"] and r["environment"]["cores"] >= 1, r.get("environment")
    assert r["slurm_job"].endswith("_%d" % r["cell"])
    assert r["summary"]["train_images_per_s"]["median"] > 0
    cells.add(r["cell"])
assert cells == set(range(want)), cells
print("database: run %d complete, %d results, cells %s" % (runs[0][0], len(res), sorted(cells)))
EOF

# 2. cells made to fail. Matrix {mnist_mlp, flaky.json} × {native/ref, pytorch}: cell 0 is ok; cell 1's
# framework runner crashes (a results file saying failed); cells 2 and 3 name a workload file that does
# not exist yet (no results file: Slurm's state, the exit code and the task's log say why).
printf '#!/bin/sh\necho "runner: simulated crash" >&2\nexit 1\n' >"$T/bad_runner.sh"
chmod +x "$T/bad_runner.sh"
$SD bench --executor slurm --workload "mnist_mlp,$T/flaky.json" --impl native,pytorch --backend ref \
    --runner "pytorch=$T/bad_runner.sh" "${QUICK[@]}" --results-dir "$T/m2" --time 10:00 --quiet \
    >"$T/submit.txt" 2>&1 || fail "submit exited $?"
$SD collect "$T/m2" --wait --poll 0.5 --db "$T/sd.db" >"$T/out.txt" 2>&1
rc=$?
cat "$T/out.txt"
[ $rc -eq 1 ] || fail "collect of a matrix with failed cells exited $rc, expected 1"
grep -q '^0 \+ok .*mnist_mlp \+native \+ref ' "$T/out.txt" || fail "cell 0 should be ok"
grep -q '^1 \+failed .*pytorch .*runner exited with status 1: runner: simulated crash' "$T/out.txt" \
  || fail "cell 1 not reported failed with its error"
for c in 2 3; do
  grep -q "^$c \+failed .*no results file; Slurm FAILED exit [1-9][0-9]*:0; log: .*no workload file .*flaky.json" "$T/out.txt" \
    || fail "cell $c not reported failed by Slurm's state and its log"
done
grep -q "showdown bench --executor slurm --resubmit $T/m2 --cells 1,2,3\$" "$T/out.txt" || fail "no resubmit command"

# 3. resubmit only cell 2 once its workload exists; cells 1 and 3 stay failed
cp workloads/mnist_mlp.json "$T/flaky.json"
$SD bench --executor slurm --resubmit "$T/m2" --cells 2 --wait --poll 0.5 --db "$T/sd.db" >"$T/out.txt" 2>&1
rc=$?
cat "$T/out.txt"
[ $rc -eq 1 ] || fail "resubmit --wait exited $rc, expected 1 (cells 1 and 3 still fail)"
grep -q '^2 \+ok ' "$T/out.txt" || fail "resubmitted cell 2 not ok"
grep -q '^3 \+failed ' "$T/out.txt" || fail "cell 3 (not resubmitted) should still be failed"
grep -q -- "--resubmit $T/m2 --cells 1,3\$" "$T/out.txt" || fail "resubmit command should name cells 1 and 3 only"
[ "$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['submissions']))" "$T/m2/manifest.json")" = 2 ] \
  || fail "manifest should record two submissions"
ls "$T/m2/cells/cell-2.json" >/dev/null || fail "no results for the resubmitted cell"

# 4. usage errors
$SD collect >/dev/null 2>&1; [ $? -eq 2 ] || fail "collect without DIR should exit 2"
$SD collect "$T/nothing" >"$T/err.txt" 2>&1; [ $? -eq 3 ] && grep -q 'no manifest' "$T/err.txt" || fail "collect of a non-matrix dir"
$SD bench --executor slurm --workload mnist_mlp --results-dir "$T/m1" >"$T/err.txt" 2>&1; [ $? -eq 2 ] \
  && grep -q 'already holds a matrix' "$T/err.txt" || fail "a second matrix into the same directory must be refused"
$SD bench --executor pbs --workload mnist_mlp >/dev/null 2>&1; [ $? -eq 2 ] || fail "--executor pbs should be a usage error"
echo "test_slurm: ok"
