#!/bin/bash
# test_describe_json — `bench --describe --json`: the "showdown-plan/1" document of every workload parses and has
# the layer count and parameter total of the text --describe; mnist_cnn's layers field by field; --json FILE; and
# a framework runner gets the same plan as --plan PATH.
set -u
SD=${SHOWDOWN:-./showdown}
PY=${PYTHON:-/usr/bin/python3}
W=$(dirname "$0")/../workloads
fail=0; t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

# the text table's layer rows (numbered lines) and its "parameters: N" total, against the JSON's
same_as_text() { # workload
  $SD bench --workload "$1" --describe > "$t/text" 2> "$t/err" || { bad "$1: text --describe failed: $(cat "$t/err")"; return; }
  $SD bench --workload "$1" --describe --json > "$t/plan" 2> "$t/err" || { bad "$1: --describe --json failed: $(cat "$t/err")"; return; }
  "$PY" - "$t/text" "$t/plan" "$1" <<'PY' && ok "$1: layers and parameters as the text --describe" || bad "$1: plan differs from the table"
import json, re, sys
text = open(sys.argv[1]).read().splitlines()
plan = json.load(open(sys.argv[2]))
rows = [l for l in text if re.match(r"^\d+ ", l)]
params = int(re.search(r"^parameters: ([\d,]+)", "\n".join(text), re.M).group(1).replace(",", ""))
assert plan["schema"] == "showdown-plan/1" and plan["workload"] == sys.argv[3], (plan["schema"], plan["workload"])
assert len(plan["layers"]) == len(rows), (len(plan["layers"]), len(rows))
assert sum(l["params"] for l in plan["layers"]) == params, (sum(l["params"] for l in plan["layers"]), params)
for i, (l, row) in enumerate(zip(plan["layers"], rows)):
    assert l["index"] == i and row.split()[1] == l["name"], (l, row)
    assert all(-1 <= j < i for j in l["inputs"]), l
PY
}
for f in "$W"/*.json; do same_as_text "$(basename "$f" .json)"; done

$SD bench --workload mnist_cnn --describe --json > "$t/cnn.json" || bad "mnist_cnn --describe --json"
"$PY" - "$t/cnn.json" <<'PY' && ok "mnist_cnn: input, ops, shapes and attributes" || fail=1
import json, sys
p = json.load(open(sys.argv[1]))
assert p["input"] == [1, 28, 28] and p["classes"] == 10 and p["batch"] > 0, p
ls = p["layers"]
ops = [l["op"] for l in ls]
assert ops[0] == "conv2d" and ops[-1] == "softmax_cross_entropy" and "dense" in ops and "maxpool" in ops, ops
c = ls[0]
assert c["inputs"] == [-1] and c["in"] == [1, 28, 28] and c["units"] == c["out"][0], c
assert len(c["kernel"]) == 2 and len(c["stride"]) == 2 and len(c["padding"]) == 2 and c["bias"] is True, c
assert c["flops"] > 0 and c["params"] > 0, c
for a, b in zip(ls, ls[1:]):
    if b["inputs"] == [a["index"]]:
        assert b["in"] == a["out"], (a, b)
assert [l["rate"] for l in ls if l["op"] == "dropout"] == [0.25, 0.5], ls   # the spec's floats as written
for l in ls:
    if l["op"] in ("relu", "flatten", "softmax_cross_entropy"):
        assert not {"units", "kernel", "bias", "rate"} & set(l), l
PY

# --json FILE writes the same document; --json - is stdout
$SD bench --workload mnist_cnn --describe --json "$t/f.json" > "$t/out" && cmp -s "$t/f.json" "$t/cnn.json" && [ ! -s "$t/out" ] \
  && ok "--describe --json FILE" || bad "--describe --json FILE differs from stdout"
$SD bench --workload mnist_cnn --describe --json - | cmp -s - "$t/cnn.json" && ok "--describe --json -" || bad "--describe --json -"
$SD bench --workload mnist_mlp,mnist_cnn --describe --json --quiet > "$t/two" && [ "$(wc -l < "$t/two")" = 2 ] \
  && ok "two workloads: one line each" || bad "two workloads: $(wc -l < "$t/two") lines"

# a framework runner gets --plan PATH: the same document (a fake runner keeps it, then says it is unavailable)
cat > "$t/fake" <<EOF
#!/bin/sh
while [ \$# -gt 0 ]; do [ "\$1" = --plan ] && cp "\$2" "$t/got-plan.json"; shift; done
echo '{"event":"error","kind":"unavailable","message":"fake runner"}'
exit 3
EOF
chmod +x "$t/fake"
$SD bench --workload mnist_cnn --impl pytorch --runner "pytorch=$t/fake" --data synthetic --epochs 1 --batches 1 \
  --no-db --quiet > /dev/null 2> "$t/err"
if [ -f "$t/got-plan.json" ] && cmp -s "$t/got-plan.json" "$t/cnn.json"; then ok "the runner's --plan is the --describe --json document"
else bad "runner --plan: $(ls "$t"; cat "$t/err")"; fi
exit $fail
