#!/bin/bash
# test_db — the results database: a bench run is stored complete; a bench killed with kill -9 in the
# middle leaves its run incomplete and the earlier runs intact; corrupt, foreign and newer files give a
# clear "is not a showdown database" error (exit 3), never a crash.
set -u
SD=${SHOWDOWN:-./showdown}
PY=${PYTHON:-/usr/bin/python3}
fail=0; t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=1; }
q() { "$PY" -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print("|".join(str(x) for r in c.execute(sys.argv[2]) for x in r))' "$@"; }

B="--backend ref --data synthetic --quiet"
$SD bench --workload mnist_mlp $B --epochs 2 --batches 2 --db "$t/s.db" > /dev/null || bad "first bench"
[ "$(q "$t/s.db" 'select count(*), sum(complete) from runs')" = "1|1" ] && ok "run 1 stored complete" || bad "run 1: $(q "$t/s.db" 'select * from runs')"
[ "$(q "$t/s.db" 'pragma journal_mode')" = "wal" ] && ok "WAL journal" || bad "journal mode"
[ "$(q "$t/s.db" 'pragma user_version')" = "1" ] && ok "schema version 1" || bad "user_version"
n=$(q "$t/s.db" "select count(*) from sqlite_master where type='table' and name in ('runs','results','scores','http_cache')")
[ "$n" = 4 ] && ok "tables runs, results, scores, http_cache" || bad "tables: $n"
"$PY" - "$t/s.db" <<'PY' || fail=1
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
(summary, samples, run), = c.execute("select summary, samples, run from results where run_id = 1")
s, smp, r = json.loads(summary), json.loads(samples), json.loads(run)
assert s["first_epoch_s"]["n"] == 1 and len(smp) == 1 and len(smp[0]["epochs"]) == 2, (s, smp)
assert r["workload"] == "mnist_mlp" and r["settings"]["max_batches"] == 2
print("ok: result row holds summary and samples as JSON")
PY

# kill -9 in the middle: mnist_mlp finishes (one result stored), then cifar10_vgg (far slower per batch)
# is running when the first result appears
$SD bench --workload mnist_mlp,cifar10_vgg $B --epochs 30 --batches 2 --db "$t/s.db" > /dev/null 2>&1 &
pid=$!
for i in $(seq 1 3000); do   # up to 5 min (slow under ASan); breaks as soon as the result is in
  [ "$(q "$t/s.db" 'select count(*) from results where run_id = 2' 2>/dev/null)" = 1 ] && break; sleep 0.1
done
kill -9 $pid; wait $pid 2>/dev/null
[ "$(q "$t/s.db" 'select complete from runs where id = 2')" = 0 ] && ok "killed run 2 is not complete" || bad "run 2: $(q "$t/s.db" 'select * from runs')"
[ "$(q "$t/s.db" 'select count(*) from results where run_id = 2')" = 1 ] && ok "killed run kept its finished result" || bad "run 2 results"
[ "$(q "$t/s.db" 'select complete, (select count(*) from results where run_id = 1) from runs where id = 1')" = "1|1" ] && ok "run 1 intact" || bad "run 1 after kill"
[ "$(q "$t/s.db" 'pragma integrity_check')" = ok ] && ok "integrity_check ok after kill -9" || bad "integrity"
$SD bench --workload mnist_mlp $B --epochs 1 --batches 1 --db "$t/s.db" > /dev/null || bad "bench after kill"
[ "$(q "$t/s.db" 'select group_concat(x) from (select id || ":" || complete as x from runs order by id)')" = "1:1,2:0,3:1" ] && ok "reopened: runs 1:1,2:0,3:1" || bad "runs after reopen: $(q "$t/s.db" 'select id, complete from runs')"

expect3() { # file description
  $SD bench --workload mnist_mlp $B --epochs 1 --batches 1 --db "$1" > /dev/null 2> "$t/err"; rc=$?
  if [ $rc -eq 3 ] && grep -q "$1 is not a showdown database (" "$t/err"; then ok "$2: $(cat "$t/err")"
  else bad "$2: exit $rc: $(cat "$t/err")"; fi
}
printf 'this is not a database at all\n' > "$t/text.db"; expect3 "$t/text.db" "text file"
"$PY" -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("create table t(x)"); c.commit()' "$t/foreign.db"
expect3 "$t/foreign.db" "foreign SQLite file"
cp "$t/s.db" "$t/corrupt.db"; rm -f "$t/s.db-wal"
"$PY" -c '
import sys
f = open(sys.argv[1], "r+b"); f.seek(100); f.write(b"\xa5" * 8000); f.close()' "$t/corrupt.db"
expect3 "$t/corrupt.db" "corrupt pages"
"$PY" -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("pragma application_id = 1396982850"); c.execute("pragma user_version = 99"); c.commit()' "$t/newer.db"
$SD bench --workload mnist_mlp $B --epochs 1 --batches 1 --db "$t/newer.db" > /dev/null 2> "$t/err"; rc=$?
[ $rc -eq 3 ] && grep -q "newer showdown (schema 99" "$t/err" && ok "newer schema refused" || bad "newer: $rc $(cat "$t/err")"
exit $fail
