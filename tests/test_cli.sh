#!/bin/bash
# test_cli — the command line as a user meets it: help on every command, exit codes, error messages,
# --describe, and a short bench run whose results file is checked field by field.
set -u
SD=${SHOWDOWN:-./showdown}
fail=0; t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
expect() { # expected-exit description command...
  local want=$1 what=$2; shift 2
  "$@" > "$t/out" 2> "$t/err"; local rc=$?
  if [ $rc -ne "$want" ]; then echo "FAIL: $what: exit $rc, expected $want"; cat "$t/err" | head -5; fail=1; else echo "ok: $what (exit $rc)"; fi
}
has() { # file pattern description
  if grep -q -- "$2" "$1"; then echo "ok: $3"; else echo "FAIL: $3: no '$2' in:"; head -5 "$1"; fail=1; fi
}

expect 0 "showdown --help" $SD --help
has "$t/out" "bench" "--help lists bench"
for c in bench score report verify nightly; do
  expect 0 "$c --help" $SD $c --help
  has "$t/out" "usage: showdown $c" "$c --help prints usage"
done
expect 2 "no command" $SD
expect 2 "unknown command" $SD frobnicate
has "$t/err" "unknown command 'frobnicate'" "unknown command named"
expect 2 "bench without --workload" $SD bench
has "$t/err" "showdown bench: --workload is required" "missing --workload message"
expect 2 "bench --epochs abc" $SD bench --workload mnist_mlp --epochs abc
has "$t/err" "--epochs expects an integer, got 'abc'" "bad integer message"
expect 2 "bench --bogus" $SD bench --bogus
has "$t/err" "unknown option '--bogus'" "unknown option message"
expect 2 "unknown workload" $SD bench --workload nope --describe
has "$t/err" "no workload 'nope'" "unknown workload message"
expect 2 "unknown back-end" $SD bench --workload mnist_mlp --backend tpu --data synthetic --batches 1 --epochs 1
has "$t/err" "unknown back-end 'tpu'" "unknown back-end message"

# list options: comma-separated values checked against their choices, whole-argument lists, positionals
expect 2 "report --format pdf,gif" $SD report --format pdf,gif --no-db --out "$t/rf"
has "$t/err" "showdown report: --format expects a comma-separated list of pdf, svg, md, csv or all, got 'gif'" "bad list item named"
expect 2 "report --format ," $SD report --format , --no-db --out "$t/rf"
has "$t/err" "--format expects a comma-separated list of pdf, svg, md, csv or all, got ','" "empty list refused"
expect 2 "perf --backend ref,tpu" $SD perf --backend ref,tpu
has "$t/err" "--backend expects a comma-separated list of ref, dnnl, cudnn or all, got 'tpu'" "perf back-end checked"
expect 2 "perf --workload ''" $SD perf --workload ''
has "$t/err" "--workload expects NAME\[,NAME...\], got ''" "empty name list refused"
expect 2 "env --require ref,nosuch" $SD env --require ref,nosuch --no-probe
has "$t/err" "--require expects a comma-separated list of ref, dnnl, cudnn, pytorch.*, got 'nosuch'" "env --require checked"
expect 2 "score --method v3" $SD score --offline --method v3
has "$t/err" "--method expects v1 or v2, got 'v3'" "choice message"
expect 2 "report --results without a file" $SD report --results --no-db
has "$t/err" "showdown report: --results expects FILE...$" "whole-argument list needs one"
expect 2 "report --results x 65 times" $SD report --no-db --results $(seq 1 65)
has "$t/err" "--results takes at most 64 values" "list bound"
expect 2 "collect without DIR" $SD collect
has "$t/err" "showdown collect: missing DIR: the results directory" "missing positional named"
expect 0 "report --help" $SD report --help
has "$t/out" "--format pdf|svg|md|csv|all\[,...\]" "usage shows a list's choices"
has "$t/out" "--results FILE..." "usage shows a whole-argument list"

expect 0 "describe cifar10_vgg" $SD bench --workload cifar10_vgg --describe
has "$t/out" "parameters: 3,441,592 (expected 3441592: match)" "cifar10_vgg has 3,441,592 parameters"
expect 0 "describe mnist_mlp,mnist_cnn" $SD bench --workload mnist_mlp,mnist_cnn --describe
has "$t/out" "parameters: 669,706" "mnist_mlp parameters"
has "$t/out" "parameters: 1,199,882" "mnist_cnn parameters"

printf '{\n  "schema": "showdown-workload/1",\n  "name": 5\n}\n' > "$t/bad.json"
expect 3 "bad spec" $SD bench --workload "$t/bad.json" --describe
has "$t/err" "$t/bad.json:3:11: expected a string for 'name' in workload (got number)" "spec error names file:line:col"

expect 3 "--data real without CIFAR-10" $SD bench --workload cifar10_vgg --data real --epochs 1 --batches 1
has "$t/err" "CIFAR-10 is not on this machine" "missing data set explained"
mkdir "$t/mn"; printf 'garbage' > "$t/mn/train-images-idx3-ubyte"; cp "$t/mn/train-images-idx3-ubyte" "$t/mn/train-labels-idx1-ubyte"
cp "$t/mn/train-images-idx3-ubyte" "$t/mn/t10k-images-idx3-ubyte"; cp "$t/mn/train-images-idx3-ubyte" "$t/mn/t10k-labels-idx1-ubyte"
expect 3 "corrupt idx file" $SD bench --workload mnist_mlp --data-dir "$t/mn" --epochs 1 --batches 1 --quiet
has "$t/err" "$t/mn/train-images-idx3-ubyte" "corrupt file named"

# a short run on synthetic data: 2 epochs x 5 batches, repeated twice, results checked field by field
expect 0 "bench mnist_mlp synthetic" $SD bench --workload mnist_mlp --backend ref --data synthetic --epochs 2 --batches 5 --repeat 2 --json "$t/r.json" --quiet
has "$t/out" "mnist_mlp      native           ref" "summary table row"
/usr/bin/python3 - "$t/r.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "showdown-results/1", d["schema"]
assert d["tool"]["version"] and "commit" in d["tool"]
env = d["environment"]
for k in ("cpu_model", "cores", "os", "kernel", "compiler", "libraries"):
    assert k in env, k
r = d["runs"][0]
assert (r["workload"], r["implementation"], r["backend"], r["status"]) == ("mnist_mlp", "native", "ref", "ok"), r
assert r["data"]["kind"] == "synthetic" and "seed=42" in r["data"]["source"], r["data"]
assert r["model"]["parameters"] == 669706
assert r["settings"]["batch"] == 128 and r["settings"]["epochs"] == 2 and r["settings"]["repeat"] == 2
assert len(r["samples"]) == 2 and all(len(s["epochs"]) == 2 for s in r["samples"])
for s in r["samples"]:
    for e in s["epochs"]:
        assert e["train_s"] > 0 and e["val_s"] > 0 and 0 <= e["accuracy"] <= 1 and e["train_images"] == 640
        assert e["test_images"] == 640, e["test_images"]
    assert sum(map(sum, s["confusion"])) == 640
sm = r["summary"]
for k in ("first_epoch_s", "steady_epoch_s", "val_s", "accuracy", "train_images_per_s"):
    assert sm[k]["min"] <= sm[k]["median"] <= sm[k]["max"] and sm[k]["n"] == 2, (k, sm[k])
firsts = sorted(s["epochs"][0]["train_s"] for s in r["samples"])
assert abs(sm["first_epoch_s"]["median"] - sum(firsts) / 2) < 1e-9
# same seed -> the same accuracy in both repeats (deterministic training)
accs = [s["epochs"][-1]["accuracy"] for s in r["samples"]]
assert accs[0] == accs[1], accs
print("ok: results file fields")
PY

# --results takes every following argument whole (a comma in a file name stays), repeated uses add up
cp "$t/r.json" "$t/a,b.json"
expect 0 "report of two results files" $SD report --results "$t/r.json" "$t/a,b.json" --results "$t/r.json" --no-db --out "$t/rep" --format md,csv
has "$t/out" "report: $t/rep/showdown.md" "report written"

# perf on an inference-only workload: no training figure, so its column says so instead of printing nan
mkdir -p "$t/wl"
cat > "$t/wl/tiny_features.json" <<'JSON'
{"schema": "showdown-workload/2", "name": "tiny_features", "title": "a dense layer, inference only",
 "data": {"dataset": "synthetic", "shape": [1, 4, 4]},
 "model": {"layers": [{"op": "flatten"}, {"op": "dense", "units": 3}], "loss": "none"},
 "inference": {"batch": 2, "images": 8, "warmup": 1}}
JSON
expect 0 "perf of an inference workload" $SD perf --workload tiny_features --workloads "$t/wl" --backend ref --threads 1 --seconds 0.2 --no-ceiling
has "$t/out" "^tiny_features ref   batch 2    train n/a (an inference workload) *infer  *[0-9.]* img/s" "perf names no training figure for an inference workload"
if grep -q "nan img/s" "$t/out"; then echo "FAIL: perf printed nan img/s:"; head -3 "$t/out"; fail=1; else echo "ok: no nan img/s"; fi

# an interrupted run writes nothing
$SD bench --workload mnist_mlp --backend ref --data synthetic --epochs 50 --json "$t/int.json" --quiet > /dev/null 2>&1 &
pid=$!; sleep 3; kill -INT $pid; wait $pid; rc=$?
if [ $rc -eq 130 ] && [ ! -e "$t/int.json" ]; then echo "ok: SIGINT exits 130 and writes no results"; else echo "FAIL: SIGINT: exit $rc, file $(ls "$t")"; fail=1; fi
exit $fail
