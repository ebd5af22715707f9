#!/bin/bash
# test_bench_host — bench --host-wait: a canary before each cell, the host's speed recorded with each run
# (host_speed, the canary over the run's reference) and said once at the end; without --host-wait no canary runs.
# The reference outlives the process (SHOWDOWN_HOST_REF): a run that starts in a slow spell is judged against the
# machine's recent canaries, and a cell that ran in one is measured again.
set -u
SD=${SHOWDOWN:-./showdown}
PY=${PYTHON:-/usr/bin/python3}
fail=0; t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=1; }

$SD bench --workload mnist_mlp,mnist_cnn --backend ref --data synthetic --epochs 1 --batches 2 --threads 1 --no-db \
  --host-wait 2 --host-wait-total 10 --json "$t/h.json" > /dev/null 2> "$t/err"; rc=$?
[ $rc -eq 0 ] && ok "bench --host-wait: exit 0" || { bad "bench --host-wait: exit $rc"; cat "$t/err"; }
"$PY" - "$t/h.json" <<'PY' && ok "every run records host_speed (the canary over the reference)" || fail=1
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
sp = [r.get("host_speed") for r in runs]
ok = len(runs) == 2 and all(isinstance(v, float) and 0 < v < 10 for v in sp)
print("host_speed", sp) if not ok else None
sys.exit(0 if ok else 1)
PY
grep -qE "^host: [0-9]+ canaries \(mnist_mlp training, reference [0-9]+ images/s\); [0-9]+ cell\(s\) waited [0-9]+ s" "$t/err" \
  && ok "the host line says the canaries and the waits" || bad "no host line: $(cat "$t/err")"
$SD bench --workload mnist_mlp --backend ref --data synthetic --epochs 1 --batches 2 --threads 1 --no-db \
  --json "$t/n.json" > /dev/null 2> "$t/err"
grep -q '"host_speed"' "$t/n.json" && bad "host_speed without --host-wait" || ok "no canary without --host-wait"
grep -q "^host:" "$t/err" && bad "a host line without --host-wait" || ok "no host line without --host-wait"
# The machine's reference: a run keeps its recent canaries under its key (the CPU's name, family and model), keeps
# other keys' lines and drops lines older than three days.
ref="$t/host-canary"
now=$(date +%s)
printf 'other cpu|2 threads|dnnl|release\t%s\t1234.0\nold cpu|2 threads|dnnl|release\t%s\t99.0\n' "$now" $((now - 4 * 86400)) > "$ref"
SHOWDOWN_HOST_REF=$ref $SD bench --workload mnist_mlp --backend ref --data synthetic --epochs 1 --batches 2 --threads 1 \
  --no-db --host-wait 1 --host-wait-total 5 --json "$t/r1.json" > /dev/null 2> "$t/err"; rc=$?
[ $rc -eq 0 ] && ok "bench with a reference file: exit 0" || { bad "bench with a reference file: exit $rc"; cat "$t/err"; }
key=$(grep -v '^other cpu\|^old cpu' "$ref" | head -1 | cut -f1)
n=$(grep -c "^$key	" "$ref")
case $key in *" (family "*" model "*")|1 threads|"*"|"*) [ "$n" -ge 4 ] && ok "the file keeps this machine's canaries ($n, $key)" \
                                     || bad "$n lines for '$key': $(cat "$ref")";;
             *) bad "no line of this machine's key: $(cat "$ref")";; esac
grep -q "^other cpu|2 threads|dnnl|release	$now	1234.0$" "$ref" && ok "another machine's line is kept" \
  || bad "another machine's line lost: $(cat "$ref")"
grep -q "^old cpu" "$ref" && bad "a line older than three days kept" || ok "a line older than three days is dropped"

# A machine whose recent canaries were a thousand times faster: every canary now is a slow spell's. The cell waits
# its budget, is measured again once (the budget allows one), and records the host's speed it ran at. (Forty
# lines: the reference is the upper quartile of the file's and the run's canaries.)
for i in $(seq 40); do printf '%s\t%s\t1e12\n' "$key" "$now"; done > "$ref"
SHOWDOWN_HOST_REF=$ref $SD bench --workload mnist_mlp --backend ref --data synthetic --epochs 1 --batches 2 --threads 1 \
  --no-db --host-wait 0.6 --host-wait-total 30 --json "$t/r2.json" > /dev/null 2> "$t/err"; rc=$?
[ $rc -eq 0 ] && ok "bench in a spell: exit 0" || { bad "bench in a spell: exit $rc"; cat "$t/err"; }
grep -q "^host: mnist_mlp · native ran while the host was at 0% of its speed: measured again$" "$t/err" \
  && ok "a cell that ran in a spell is measured again, and said so" || bad "no retry line: $(cat "$t/err")"
grep -qE "^host: .*; 1 measured again \(a spell began while they ran\)$" "$t/err" \
  && ok "the host line counts the cell measured again" || bad "host line: $(grep '^host: [0-9]' "$t/err")"
"$PY" - "$t/r2.json" <<'PY' && ok "one run kept, its host_speed the slow one" || fail=1
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
ok = len(runs) == 1 and runs[0]["status"] == "ok" and runs[0]["host_speed"] < 0.01
print([(r["status"], r.get("host_speed")) for r in runs]) if not ok else None
sys.exit(0 if ok else 1)
PY
# The cells a spell still slowed after the matrix are measured once more after the others, with a longer wait; the
# runs of the faster host are kept, in the results and in the database rows the first ones were stored in.
for i in $(seq 40); do printf '%s\t%s\t1e12\n' "$key" "$now"; done > "$ref"
SHOWDOWN_HOST_REF=$ref $SD bench --workload mnist_mlp,mnist_cnn --backend ref --data synthetic --epochs 1 --batches 2 \
  --threads 1 --db "$t/a.db" --host-wait 0.3 --host-wait-total 30 --json "$t/a.json" > /dev/null 2> "$t/err"; rc=$?
[ $rc -eq 0 ] && ok "bench with cells slowed to the end: exit 0" || { bad "slowed to the end: exit $rc"; cat "$t/err"; }
grep -q "^host: 2 cell(s) ran while this host was slow: measuring them again$" "$t/err" \
  && ok "the cells still slowed are measured again after the others, and said so" || bad "no again line: $(cat "$t/err")"
n=$(grep -cE "^host: again [12]/2: mnist_(mlp|cnn) · native: host at [0-9]+% \(first [0-9]+%\): (this measurement published|the first kept)$" "$t/err")
[ "$n" = 2 ] && ok "each says which measurement is kept ($(grep -c 'published$' "$t/err") published)" \
  || bad "$n again lines: $(grep '^host: again' "$t/err")"
"$PY" - "$t/a.json" "$t/a.db" <<'PY' && ok "the database rows hold the runs the results file publishes" || fail=1
import json, math, sqlite3, sys
runs = json.load(open(sys.argv[1]))["runs"]
db = sqlite3.connect(sys.argv[2])
rows = [json.loads(r[0]) for r in db.execute("SELECT run FROM results ORDER BY seq")]
done = db.execute("SELECT complete FROM runs").fetchall()
def same(a, b):   # the results file writes reals to 10 digits, the database to 17
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=1e-8)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b
ok = len(runs) == 2 and len(rows) == 2 and all(r["status"] == "ok" for r in runs) and done == [(1,)] \
     and all(same(r, d) for r, d in zip(runs, rows))
print("results", [(r["workload"], r.get("host_speed")) for r in runs], "database",
      [(r["workload"], r.get("host_speed")) for r in rows], "complete", done) if not ok else None
sys.exit(0 if ok else 1)
PY
# A runner a slow spell took past its time bound (killed: "timed_out") is measured again like a slowed cell, and
# that measurement is published whatever the host's speed (a figure rather than none); one that times out again
# stays failed, and bench exits 1.
good='{"event":"hello","protocol":1,"framework":"pytorch","version":"0.fake","device":"fake cpu","parameters":669706}
{"event":"epoch","epoch":1,"train_s":0.5,"val_s":0.25,"loss":2.0,"val_loss":1.5,"accuracy":0.5,"train_images":256,"test_images":256}
{"event":"done"}'
printf '#!/bin/sh\nif [ ! -e %s ]; then touch %s; echo %s; exec sleep 1000; fi\ncat <<"J"\n%s\nJ\n' "$t/once" "$t/once" \
  "'{\"event\":\"hello\",\"protocol\":1,\"framework\":\"pytorch\",\"version\":\"0.fake\",\"device\":\"fake cpu\",\"parameters\":669706}'" \
  "$good" > "$t/slowfirst"
printf '#!/bin/sh\necho %s\nexec sleep 1000\n' \
  "'{\"event\":\"hello\",\"protocol\":1,\"framework\":\"pytorch\",\"version\":\"0.fake\",\"device\":\"fake cpu\",\"parameters\":669706}'" \
  > "$t/slowalways"
chmod +x "$t/slowfirst" "$t/slowalways"
for prog in slowfirst slowalways; do
  SHOWDOWN_HOST_REF=$ref $SD bench --workload mnist_mlp --backend ref --data synthetic --epochs 1 --batches 2 --threads 1 \
    --no-db --impl native,pytorch --runner "pytorch=$t/$prog" --runner-timeout 2 --host-wait 0.3 --host-wait-total 30 \
    --json "$t/$prog.json" > /dev/null 2> "$t/err"; rc=$?
  if [ $prog = slowfirst ]; then want=0; line="this measurement published"; st=ok; else want=1; line="the first kept"; st=failed; fi
  grep -qE "^host: again [12]/2: mnist_mlp · pytorch: host at [0-9]+% \(first [0-9]+%, timed out\): $line$" "$t/err" \
    && [ $rc -eq $want ] && ok "$prog: timed out in a spell, measured again: '$line', exit $rc" \
    || bad "$prog: exit $rc (expected $want), again lines: $(grep '^host: again\|timed out' "$t/err")"
  "$PY" - "$t/$prog.json" "$st" <<'PY' && ok "$prog: the pytorch run is $st" || fail=1
import json, sys
runs = {r["implementation"]: r for r in json.load(open(sys.argv[1]))["runs"]}
p = runs["pytorch"]
want = sys.argv[2]
ok = p["status"] == want and ("timed_out" in p) == (want == "failed") and runs["native"]["status"] == "ok"
print({k: p.get(k) for k in ("status", "timed_out", "error", "host_speed")}) if not ok else None
sys.exit(0 if ok else 1)
PY
done
# A cell whose processes disagree by more than verify's tolerance (10%) on its steady epoch is measured again after
# the others, and the measurement whose processes agree better is published.
hello='{"event":"hello","protocol":1,"framework":"pytorch","version":"0.fake","device":"fake cpu","parameters":669706}'
cat > "$t/wide" <<EOF
#!/bin/sh
n=\$(cat "$t/wide.n" 2>/dev/null || echo 0); n=\$((n + 1)); echo \$n > "$t/wide.n"
case \$n in 2) s=0.9;; 4|5|6) s=0.50\$n;; *) s=0.5;; esac
echo '$hello'
echo '{"event":"epoch","epoch":1,"train_s":0.6,"val_s":0.25,"loss":2.0,"val_loss":1.5,"accuracy":0.5,"train_images":256,"test_images":256}'
echo '{"event":"epoch","epoch":2,"train_s":'\$s',"val_s":0.25,"loss":2.0,"val_loss":1.5,"accuracy":0.5,"train_images":256,"test_images":256}'
echo '{"event":"done"}'
EOF
chmod +x "$t/wide"
SHOWDOWN_HOST_REF="$t/wide-ref" $SD bench --workload mnist_mlp --backend ref --data synthetic --epochs 2 --batches 2 \
  --threads 1 --no-db --impl pytorch --runner "pytorch=$t/wide" --repeat 3 --host-wait 0.3 --host-wait-total 30 \
  --json "$t/wide.json" > /dev/null 2> "$t/err"; rc=$?
[ $rc -eq 0 ] && ok "bench with a wide cell: exit 0" || { bad "wide cell: exit $rc"; cat "$t/err"; }
grep -q "^host: 1 cell(s) spread wider than 10% over their processes: measuring them again$" "$t/err" \
  && grep -qE "^host: again 1/1: mnist_mlp · pytorch: spread 0\.4% \(first 80\.0%\), host at [0-9]+%: this measurement published$" "$t/err" \
  && ok "a cell whose processes disagree is measured again, the steadier measurement published, and said so" \
  || bad "wide cell lines: $(grep '^host' "$t/err")"
"$PY" - "$t/wide.json" <<'PY' && ok "the published steady epoch is the second measurement's (median 0.505 s of 0.504-0.506)" || fail=1
import json, sys
r = json.load(open(sys.argv[1]))["runs"]
s = r[0]["summary"]["steady_epoch_s"]
ok = len(r) == 1 and abs(s["median"] - 0.505) < 1e-9 and abs(s["min"] - 0.504) < 1e-9 and abs(s["max"] - 0.506) < 1e-9
print(len(r), s) if not ok else None
sys.exit(0 if ok else 1)
PY
# no budget left for a retry: measured once
SHOWDOWN_HOST_REF=$ref $SD bench --workload mnist_mlp --backend ref --data synthetic --epochs 1 --batches 2 --threads 1 \
  --no-db --host-wait 0.6 --host-wait-total 0.6 --json "$t/r3.json" > /dev/null 2> "$t/err"
grep -q "measured again$" "$t/err" && bad "a retry beyond the wait budget" || ok "no retry beyond the wait budget"
sum=$(md5sum < "$ref")
SHOWDOWN_HOST_REF= $SD bench --workload mnist_mlp --backend ref --data synthetic --epochs 1 --batches 2 --threads 1 \
  --no-db --host-wait 1 --host-wait-total 5 --json "$t/r4.json" > /dev/null 2> "$t/err"
[ "$(md5sum < "$ref")" = "$sum" ] && ok "SHOWDOWN_HOST_REF empty: no reference kept" || bad "the reference file changed"
ls "$t" | grep -q '^host-canary\.' && bad "a temporary reference file left behind" || ok "no temporary file left"

# perf --host-ref: bench-cpu's canaries reach the same file through showdown, which alone reads and writes it;
# another key's lines and the last 500 of this key's are kept, oldest first, and their usual speed printed (the
# upper quartile: 900 of 100..1200); a line that is not "time<TAB>images/s" is refused
h="$t/hr"; now=$(date +%s)
printf 'other key\t%s\t5.0\nk\t%s\t1.0\n' "$now" "$now" > "$h"
usual=$(seq 1 12 | awk -v now="$now" '{printf "%d\t%d.0\n", now - $1, 100 * $1}' \
  | SHOWDOWN_HOST_REF=$h $SD perf --host-ref k --host-ref-save); rc=$?
got=$(SHOWDOWN_HOST_REF=$h $SD perf --host-ref k | cut -f2 | paste -sd' ' -)
[ $rc -eq 0 ] && [ "$got" = "1200.0 1100.0 1000.0 900.0 800.0 700.0 600.0 500.0 400.0 300.0 200.0 100.0" ] \
  && [ "$usual" = "900.0" ] && grep -qxF "$(printf 'other key\t%s\t5.0' "$now")" "$h" \
  && ok "perf --host-ref: a key's canaries kept oldest first, their usual speed printed (900), other keys kept" \
  || { bad "perf --host-ref: exit $rc, read back '$got', usual '$usual'"; cat "$h"; }
# 600 canaries: the last 500 kept (100..50000 img/s, one a second), their upper quartile 37500
usual=$(seq 1 600 | awk -v now="$now" '{printf "%d\t%d.0\n", now - $1, 100 * $1}' \
  | SHOWDOWN_HOST_REF=$h $SD perf --host-ref k --host-ref-save)
got=$(SHOWDOWN_HOST_REF=$h $SD perf --host-ref k | cut -f2 | sed -n '1p;$p' | paste -sd' ' -)
[ "$usual" = "37500.0" ] && [ "$(SHOWDOWN_HOST_REF=$h $SD perf --host-ref k | wc -l)" -eq 500 ] && [ "$got" = "50000.0 100.0" ] \
  && ok "perf --host-ref: the last 500 of 600 kept, the usual speed theirs (37500)" \
  || bad "600 canaries: usual '$usual', first and last '$got'"
seq 1 12 | awk -v now="$now" '{printf "%d\t%d.0\n", now - $1, 100 * $1}' | SHOWDOWN_HOST_REF=$h $SD perf --host-ref k --host-ref-save > /dev/null
printf '%s\t1.0\nnot a line\n' "$now" | SHOWDOWN_HOST_REF=$h $SD perf --host-ref k --host-ref-save 2> "$t/err"; rc=$?
[ $rc -eq 3 ] && grep -q "stdin:2: expected" "$t/err" && [ "$(SHOWDOWN_HOST_REF=$h $SD perf --host-ref k | wc -l)" -eq 12 ] \
  && ok "perf --host-ref-save: a bad line is exit 3 naming it, the file unchanged" || bad "bad line: exit $rc, $(cat "$t/err")"
$SD perf --host-ref-save < /dev/null 2> "$t/err"; rc=$?
[ $rc -eq 2 ] && ok "--host-ref-save without --host-ref: exit 2" || bad "--host-ref-save alone: exit $rc"

$SD bench --workload mnist_mlp --host-wait -1 > /dev/null 2> "$t/err"; rc=$?
[ $rc -eq 2 ] && ok "--host-wait -1 is a usage error (exit 2)" || bad "--host-wait -1: exit $rc"
exit $fail
