#!/bin/bash
# test_nightly — `showdown nightly` on a tiny config: dated directories, out/latest, the log, the run in
# the database; a second run made slower (test hook SHOWDOWN_TEST_SLOWDOWN, ms of sleep per batch) is
# flagged as a regression (exit 6); a concurrent run is refused at once (exit 7); old runs are pruned.
set -u
SD=${SHOWDOWN:-./showdown}
PY=${PYTHON:-/usr/bin/python3}
fail=0; t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=1; }
cat > "$t/cfg.json" <<JSON
{"workloads": "mnist_mlp", "backends": "ref", "data": "synthetic", "epochs": 2, "batches": 3, "repeat": 3,
 "keep": 2, "threshold_pct": 7, "out": "$t/out"}
JSON
$SD nightly --config "$t/cfg.json" > "$t/o1" 2>&1; rc=$?
[ $rc -eq 0 ] && ok "first nightly exit 0" || { bad "first nightly exit $rc"; cat "$t/o1"; }
d1=$(readlink "$t/out/latest")
[ -f "$t/out/$d1/nightly.log" ] && [ -f "$t/out/$d1/bench.json" ] && ok "out/latest -> $d1 with nightly.log and bench.json" || bad "dir $d1: $(ls -R "$t/out")"
case "$d1" in [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]) ok "dated directory $d1";; *) bad "directory name $d1";; esac
grep -q "score: usage error\|score: done\|score: no network" "$t/out/$d1/nightly.log" && ok "score step logged" || bad "score step: $(cat "$t/out/$d1/nightly.log")"
grep -q "no previous nightly run" "$t/out/$d1/nightly.log" && ok "first run: nothing to compare" || bad "first compare"

# 2 s per batch (6 s per epoch) stays clear of the epoch-time noise of a loaded machine under the sanitizers
SHOWDOWN_TEST_SLOWDOWN=2000 $SD nightly --config "$t/cfg.json" > "$t/o2" 2>&1; rc=$?
d2=$(readlink "$t/out/latest")
[ $rc -eq 6 ] && ok "slower second run: exit 6 (regression)" || { bad "second nightly exit $rc"; cat "$t/o2"; }
[ "$d2" = "$d1-2" ] && ok "second run the same day in $d2" || bad "second dir $d2"
grep -q "REGRESSION" "$t/out/$d2/nightly.log" && ok "regression in the log" || bad "log: $(cat "$t/out/$d2/nightly.log")"
"$PY" - "$t/out/$d2/regressions.json" <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1]))
g = r["regressions"]
assert len(g) == 1 and g[0]["workload"] == "mnist_mlp" and g[0]["slower_pct"] > 7 and g[0]["median"] > g[0]["previous_max"], r
print("ok: regressions.json: mnist_mlp %.0f%% slower" % g[0]["slower_pct"])
PY
# the regression is in the report of that run (the comparison runs before the report step)
if [ -f "$t/out/$d2/report/showdown.md" ]; then
  grep -q "Regressions against the previous nightly run" "$t/out/$d2/report/showdown.md" && grep -q "mnist_mlp · native · ref" "$t/out/$d2/report/showdown.md" \
    && ok "report of run 2 shows the regression" || bad "report md: $(grep -n -i regress "$t/out/$d2/report/showdown.md")"
  grep -q "No earlier nightly run to compare with" "$t/out/$d1/report/showdown.md" && ok "report of run 1: nothing to compare" || bad "report 1 md"
else
  bad "no report in $t/out/$d2/report: $(grep report "$t/out/$d2/nightly.log")"
fi

# concurrent: hold the lock with a slow run, then a second one must be refused at once
SHOWDOWN_TEST_SLOWDOWN=300 $SD nightly --config "$t/cfg.json" > "$t/o3" 2>&1 &
pid=$!
# the lock file holds the pid of the run that holds the lock (written after flock succeeds)
for i in $(seq 1 300); do grep -qx "$pid" "$t/out/nightly.lock" 2>/dev/null && break; sleep 0.05; done
$SD nightly --config "$t/cfg.json" > "$t/o4" 2>&1; rc=$?
[ $rc -eq 7 ] && grep -q "another nightly run holds $t/out/nightly.lock (pid $pid)" "$t/o4" && ok "concurrent run refused: $(cat "$t/o4")" || { bad "concurrent: exit $rc"; cat "$t/o4"; }
wait $pid; rc=$?
# (its verdict against run 2 depends on timing, so only the completion is checked)
[ $rc -eq 6 ] || [ $rc -eq 0 ] && ok "the run holding the lock finished (exit $rc)" || bad "third run exit $rc"

# keep = 2: the first directory and its database run are gone
[ ! -e "$t/out/$d1" ] && ok "oldest run directory pruned" || bad "not pruned: $(ls "$t/out")"
n=$("$PY" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from runs where kind = \"nightly\"").fetchone()[0])' "$t/out/showdown.db")
[ "$n" = 2 ] && ok "database keeps 2 nightly runs" || bad "nightly runs in db: $n"

# a directory read back from the database is not trusted: old runs whose dir lies outside OUT (absolute, or
# through "..") are dropped from the database but their directories are left alone
mkdir -p "$t/outside1" "$t/outside2"; touch "$t/outside1/nightly.log" "$t/outside2/nightly.log"
"$PY" -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.executemany("insert into runs (id, kind, created, environment, dir, complete) values (?, \"nightly\", \"2020-01-01T00:00:00Z\", \"{}\", ?, 1)", [(-2, sys.argv[2]), (-1, sys.argv[3])]); c.commit()' \
  "$t/out/showdown.db" "$t/outside1" "$t/out/../outside2"
$SD nightly --config "$t/cfg.json" > "$t/o5" 2>&1; rc=$?
[ -f "$t/outside1/nightly.log" ] && [ -f "$t/outside2/nightly.log" ] && ok "pruning leaves directories outside OUT alone (exit $rc)" || bad "pruned outside OUT: $(ls "$t")"
grep -q "not removing $t/out/../outside2: .* leaves $t/out" "$t/o5" && ok "the refusal is logged" || bad "no refusal logged: $(grep -i remov "$t/o5")"

printf '{"epochs": "two"}\n' > "$t/bad.json"
$SD nightly --config "$t/bad.json" > /dev/null 2> "$t/err"; rc=$?
[ $rc -eq 3 ] && grep -q "$t/bad.json:1:" "$t/err" && ok "bad config: $(cat "$t/err")" || bad "bad config exit $rc: $(cat "$t/err")"
exit $fail
