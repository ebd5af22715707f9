#!/bin/bash
# test_bench_host — bench --host-wait: a canary before each cell, the host's speed recorded with each run
# (host_speed, the canary over the run's reference) and said once at the end; without --host-wait no canary runs.
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
$SD bench --workload mnist_mlp --host-wait -1 > /dev/null 2> "$t/err"; rc=$?
[ $rc -eq 2 ] && ok "--host-wait -1 is a usage error (exit 2)" || bad "--host-wait -1: exit $rc"
exit $fail
