#!/bin/bash
# test_report_again — the report's cells that a host slow spell slowed are listed, and a second measurement
# replaces the first only where its host ran faster (scripts/report_again.py).
set -u
PY=${PYTHON:-/usr/bin/python3}
fail=0; t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=1; }
cat > "$t/part.json" <<'J'
{"schema": "showdown-results/1", "runs": [
 {"workload": "mnist_mlp", "implementation": "native", "status": "ok", "host_speed": 0.70, "summary": {"x": 1}},
 {"workload": "mnist_mlp", "implementation": "pytorch", "status": "ok", "host_speed": 0.95, "summary": {"x": 2}},
 {"workload": "mnist_mlp", "implementation": "jax", "status": "ok", "host_speed": 0.80, "summary": {"x": 3}},
 {"workload": "mnist_mlp", "implementation": "chainer", "status": "failed", "host_speed": 0.50},
 {"workload": "mnist_cnn", "implementation": "native", "status": "ok", "host_speed": 0.85, "summary": {"x": 4}},
 {"workload": "mnist_cnn", "implementation": "native", "status": "ok", "host_speed": 0.60,
  "settings": {"precision": "bf16"}, "summary": {"x": 5}},
 {"workload": "babi_rnn", "implementation": "native", "status": "ok", "summary": {"x": 6}}]}
J
out=$("$PY" scripts/report_again.py slow "$t/part.json")
[ "$out" = "$(printf 'mnist_mlp\tnative,jax\nmnist_cnn\tnative')" ] \
  && ok "slow: the measured cells below 90% of the host's speed, by workload (failed and unmarked ones not)" \
  || bad "slow listed: $out"
cat > "$t/again.json" <<'J'
{"schema": "showdown-results/1", "runs": [
 {"workload": "mnist_mlp", "implementation": "native", "status": "ok", "host_speed": 0.98, "summary": {"x": 10}},
 {"workload": "mnist_mlp", "implementation": "jax", "status": "ok", "host_speed": 0.75, "summary": {"x": 30}},
 {"workload": "mnist_cnn", "implementation": "native", "status": "failed", "host_speed": 0.99}]}
J
msg=$("$PY" scripts/report_again.py replace "$t/part.json" "$t/again.json"); rc=$?
[ $rc -eq 0 ] && [ "$msg" = "report: 1 of 3 cell(s) measured again ran on a faster host: their figures replace the first ones" ] \
  && ok "replace: says how many replaced" || bad "replace: exit $rc, '$msg'"
"$PY" - "$t/part.json" <<'P' && ok "replace: the faster host's figure in place, the slower or failed second ones not, order kept" || fail=1
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
got = [(r["workload"], r["implementation"], (r.get("summary") or {}).get("x")) for r in runs]
want = [("mnist_mlp", "native", 10), ("mnist_mlp", "pytorch", 2), ("mnist_mlp", "jax", 3), ("mnist_mlp", "chainer", None),
        ("mnist_cnn", "native", 4), ("mnist_cnn", "native", 5), ("babi_rnn", "native", 6)]
print(got) if got != want else None
sys.exit(0 if got == want else 1)
P
[ ! -e "$t/again.json" ] && ok "replace: the second measurement's file is removed" || bad "again.json left"
"$PY" scripts/report_again.py > /dev/null 2> "$t/err"; rc=$?
[ $rc -eq 2 ] && grep -q "Usage: report_again.py slow PART" "$t/err" && ok "no arguments: usage, exit 2" || bad "usage: exit $rc"
exit $fail
