#!/bin/bash
# test_report — `showdown report` end to end from small crafted inputs: page counts (pdfinfo), names and
# key numbers in the text (pdftotext), every SVG well formed (xmllint), two renders byte-identical, a
# missing criterion shown as missing (never 0), no benchmark results / no scores still rendering and
# saying so, the one-page brief, and positioned errors for bad inputs.
set -u
SD=$(realpath "${SHOWDOWN:-./showdown}")
REP="$SD report --no-db"   # a results database in out/ must not leak into these checks
for tool in pdfinfo pdftotext xmllint; do
  command -v $tool >/dev/null || { echo "skipped: $tool not installed"; exit 77; }
done
fail=0; t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
expect() { # expected-exit description command...
  local want=$1 what=$2; shift 2
  "$@" > "$t/out" 2> "$t/err"; local rc=$?
  if [ $rc -ne "$want" ]; then echo "FAIL: $what: exit $rc, expected $want"; head -5 "$t/err"; fail=1; else echo "ok: $what (exit $rc)"; fi
}
has() { # file pattern description
  if grep -q -- "$2" "$1"; then echo "ok: $3"; else echo "FAIL: $3: no '$2' in $1:"; head -20 "$1"; fail=1; fi
}
hasnt() {
  if grep -q -- "$2" "$1"; then echo "FAIL: $3: '$2' found in $1"; grep -- "$2" "$1" | head -3; fail=1; else echo "ok: $3"; fi
}

# ---- fixtures ------------------------------------------------------------------------------------------
cat > "$t/scores.json" <<'EOF'
{"schema": "showdown-scores/1", "as_of": "2026-11-18",
 "categories": [
  {"id": "support", "name": "Support & Community", "criteria": [
     {"id": "sponsor", "name": "Sponsor"}, {"id": "activity", "name": "Activity"}, {"id": "ecosystem", "name": "Ecosystem"}]},
  {"id": "api", "name": "API & Internals", "criteria": [
     {"id": "graph", "name": "Graph building"}, {"id": "numerics", "name": "Numerics"}, {"id": "ops", "name": "NN ops"}]},
  {"id": "platform", "name": "Platform", "criteria": [
     {"id": "languages", "name": "API languages"}, {"id": "cloud", "name": "Cloud support"}, {"id": "onnx", "name": "ONNX"}]}],
 "frameworks": [
  {"name": "PyTorch", "overall": 87.25, "tier": "1",
   "categories": {"support": {"score": 90}, "api": {"score": 88.5}, "platform": {"score": 83.25}},
   "criteria": {"sponsor": {"raw": 2, "normalised": 100}, "activity": {"raw": 41.5, "normalised": 90},
                "ecosystem": {"raw": 12.1, "normalised": 80}, "graph": {"raw": 2, "normalised": 100},
                "numerics": {"raw": 8, "normalised": 80}, "ops": {"raw": 27.5, "normalised": 85.5},
                "languages": {"raw": 2.5, "normalised": 62.5}, "cloud": {"raw": 3, "normalised": 100},
                "onnx": {"raw": 2, "normalised": 87.25}}},
  {"name": "Theano", "overall": 41.5, "tier": "3", "archived": true,
   "categories": {"support": {"score": 33}, "api": {"score": 61.5}, "platform": {"score": 30}},
   "criteria": {"sponsor": {"raw": 0, "normalised": 0}, "activity": {"raw": 0.1, "normalised": 1},
                "ecosystem": {"raw": 9.9, "normalised": 98}, "graph": {"raw": 1, "normalised": 50},
                "numerics": {"raw": 7, "normalised": 70}, "ops": {"raw": 22, "normalised": 64.5},
                "languages": {"raw": 1, "normalised": 25}, "cloud": {"missing": true},
                "onnx": {"raw": 1, "normalised": 35}}},
  {"name": "MXNet", "overall": 79.5, "tier": "2",
   "categories": {"support": {"score": 77}, "api": {"score": 80}, "platform": {"score": 81.5}},
   "criteria": {"sponsor": {"raw": 2, "normalised": 100}, "activity": {"raw": 10, "normalised": 40},
                "ecosystem": {"raw": 10.5, "normalised": 91}, "graph": {"raw": 2, "normalised": 100},
                "numerics": {"raw": 6, "normalised": 60}, "ops": {"raw": 26, "normalised": 80},
                "languages": {"raw": 3.7, "normalised": 92.5}, "cloud": {"raw": 3, "normalised": 100},
                "onnx": {"raw": 1, "normalised": 52}}}]}
EOF
cat > "$t/results.json" <<'EOF'
{"schema": "showdown-results/1", "created": "2026-11-20T09:15:00Z",
 "tool": {"name": "showdown", "version": "0.1.0", "commit": "0123456789ab", "dirty": false},
 "environment": {"cpu_model": "Test CPU 9000", "cores": 2, "memory_bytes": 8589934592, "os": "Debian 12",
                 "libraries": {"cairo": "1.16.0", "jansson": "2.14"}},
 "runs": [
  {"workload": "mnist_mlp", "implementation": "native", "backend": "ref", "device": "CPU (reference, 2 threads)",
   "status": "ok", "settings": {"batch": 128, "epochs": 3, "optimizer": {"name": "rmsprop", "lr": 0.001}},
   "samples": [
    {"repeat": 0, "epochs": [{"epoch": 1, "train_s": 6.5, "val_s": 0.5, "loss": 0.5, "accuracy": 0.9412, "images_per_s": 9000},
                             {"epoch": 2, "train_s": 5.25, "val_s": 0.5, "loss": 0.3, "accuracy": 0.9631, "images_per_s": 11000},
                             {"epoch": 3, "train_s": 5.25, "val_s": 0.5, "loss": 0.2, "accuracy": 0.9717, "images_per_s": 11000}]},
    {"repeat": 1, "epochs": [{"epoch": 1, "train_s": 6.7, "val_s": 0.5, "loss": 0.5, "accuracy": 0.9412, "images_per_s": 9000},
                             {"epoch": 2, "train_s": 5.35, "val_s": 0.5, "loss": 0.3, "accuracy": 0.9631, "images_per_s": 11000},
                             {"epoch": 3, "train_s": 5.35, "val_s": 0.5, "loss": 0.2, "accuracy": 0.9717, "images_per_s": 11000}]}],
   "summary": {"first_epoch_s": {"median": 6.6, "min": 6.5, "max": 6.7}, "steady_epoch_s": {"median": 5.3, "min": 5.25, "max": 5.35},
               "val_s": {"median": 0.5, "min": 0.5, "max": 0.5}, "accuracy": {"median": 0.9717, "min": 0.9717, "max": 0.9717},
               "train_images_per_s": {"median": 11320, "min": 11200, "max": 11400}}},
  {"workload": "mnist_mlp", "implementation": "native", "backend": "dnnl", "device": "CPU (oneDNN 2.6.3, 2 threads)",
   "status": "ok", "settings": {"batch": 128, "epochs": 3},
   "samples": [
    {"repeat": 0, "epochs": [{"epoch": 1, "train_s": 2.5, "accuracy": 0.9402}, {"epoch": 2, "train_s": 1.125, "accuracy": 0.9625},
                             {"epoch": 3, "train_s": 1.125, "accuracy": 0.9722}]}],
   "summary": {"first_epoch_s": {"median": 2.5, "min": 2.5, "max": 2.5}, "steady_epoch_s": {"median": 1.125, "min": 1.125, "max": 1.125},
               "accuracy": {"median": 0.9722, "min": 0.9722, "max": 0.9722}}},
  {"workload": "mnist_mlp", "implementation": "native", "backend": "cudnn", "status": "failed",
   "error": "no CUDA device"}]}
EOF
cat > "$t/published.json" <<'EOF'
{"schema": "showdown-results/1", "published": {"source": "a 2018 publication, table 1", "date": "2018-03-01"},
 "runs": [{"workload": "mnist_mlp", "implementation": "Keras (TF)", "device": "K80", "summary": {"total_s": {"median": 194}}},
          {"workload": "mnist_mlp", "implementation": "Keras (TF)", "device": "P100", "summary": {"total_s": {"median": 69}}}]}
EOF

# ---- the full report -------------------------------------------------------------------------------------
run_full() { $REP --results "$t/results.json" "$t/published.json" --scores "$t/scores.json" --out "$1" --format pdf,svg,md; }
expect 0 "full report" run_full "$t/a"
has "$t/out" "showdown.pdf" "says where the PDF is"
has "$t/out" "omitted for lack of data: showdown, phase_tables, precision, frameworks, verification, regressions, history" "names the sections without data"
pages=$(pdfinfo "$t/a/showdown.pdf" | awk '/^Pages:/ {print $2}')
if [ "${pages:-0}" -ge 6 ] && [ "${pages:-0}" -le 20 ]; then echo "ok: $pages pages"; else echo "FAIL: $pages pages"; fail=1; fi
pdfinfo "$t/a/showdown.pdf" > "$t/info"
has "$t/info" "CreationDate:.*2026" "PDF date comes from the inputs"
pdftotext -layout "$t/a/showdown.pdf" "$t/a.txt"
for want in "PyTorch" "MXNet" "Theano (archived)" "87.2" "79.5" "Test CPU 9000" "reference C" "oneDNN" \
            "Keras (TF)" "194" "69" "a 2018 publication" "6.60" "1.12" "0.972" "Not run" \
            "Podium" "Criteria breakdown" "Methodology" "Inputs of this report" "page 2 of $pages"; do
  has "$t/a.txt" "$want" "PDF text has '$want'"
done
# the missing criterion: drawn and written as missing, never as 0
has "$t/a.txt" "Theano (archived): Cloud support" "missing criterion named in the note"
has "$t/a.txt" "not counted as zero" "note says missing is not zero"
grep "^| Theano" "$t/a/showdown.md" | grep "Cloud" >/dev/null 2>&1 || true
row=$(grep -E '^\| Theano \(archived\) \|' "$t/a/showdown.md" | grep -c '\*missing\*')
if [ "$row" -ge 1 ]; then echo "ok: Markdown row of Theano has *missing*"; else echo "FAIL: no *missing* in Theano's rows"; fail=1; fi
csv="$t/a/tables/criteria-platform-table.csv"
has "$csv" "^Theano (archived),25,,35," "CSV leaves the missing cell empty (not 0)"
# every figure as SVG, well formed; every table as CSV
nsvg=$(ls "$t/a/figures/"*.svg | wc -l)
[ "$nsvg" -ge 10 ] && echo "ok: $nsvg SVG files" || { echo "FAIL: only $nsvg SVG files"; fail=1; }
if xmllint --noout "$t/a/figures/"*.svg 2> "$t/xml"; then echo "ok: every SVG parses"; else echo "FAIL: xmllint"; head "$t/xml"; fail=1; fi
has "$t/a/showdown.md" "(figures/radar-categories.svg)" "Markdown links the figures"
has "$t/a/showdown.md" "Not run: native · cuDNN (no CUDA device)" "failed run named with its reason"
has "$t/a/showdown.md" "| PyTorch | \*\*87.2\*\*" "Markdown table marks the best value"
# rendering twice gives byte-identical files
expect 0 "second render" run_full "$t/b"
if diff -r "$t/a" "$t/b" >/dev/null && [ -z "$(cd "$t/a" && find . -type f | sort | comm -3 - <(cd "$t/b" && find . -type f | sort))" ]; then
  echo "ok: two renders byte-identical ($(find "$t/a" -type f | wc -l) files)"
else echo "FAIL: renders differ"; diff -rq "$t/a" "$t/b" | head; fail=1; fi

# ---- absent data ------------------------------------------------------------------------------------------
expect 0 "scores only (no benchmark results)" $REP --scores "$t/scores.json" --out "$t/c"
has "$t/out" "bench_tables" "says the benchmark sections were omitted"
pdftotext "$t/c/showdown.pdf" "$t/c.txt"
has "$t/c.txt" "Podium" "scores-only report has the podium"
has "$t/c.txt" "Not in this report for lack of data in its inputs: Which framework, for what, Throughput per phase," "the cover says the benchmark sections are absent"
hasnt "$t/c.txt" "training time per full epoch per device" "no empty benchmark table"
hasnt "$t/c.txt" "test accuracy per epoch" "no empty accuracy chart"
has "$t/c/showdown.md" "omitted" "Markdown lists the omitted sections"
expect 0 "results only (no scores)" $REP --results "$t/results.json" --out "$t/d" --format pdf
has "$t/out" "podium" "says the score sections were omitted"
[ ! -e "$t/d/showdown.md" ] && [ ! -d "$t/d/figures" ] && echo "ok: --format pdf writes only the PDF" || { echo "FAIL: extra outputs"; fail=1; }

# ---- scores as `showdown score --json` writes them (scoring/README.md) ------------------------------------------
cat > "$t/scores2.json" <<'EOF2'
{"schema": "showdown-scores/1", "as_of": "2026-11-21T23:20:51Z", "mode": "offline (snapshot only)",
 "snapshot": {"date": "2026-11-21", "as_of": "2026-11-21T23:20:51Z", "path": "scoring/snapshot.json"},
 "method": {"categories": [{"id": "support", "name": "Support & Community", "weight": 1},
                           {"id": "api", "name": "API & Internals", "weight": 1}, {"id": "platform", "name": "Platform", "weight": 1}],
            "criteria": [{"id": "sponsor", "name": "Sponsor", "category": "support"}, {"id": "activity", "name": "Activity", "category": "support"},
                         {"id": "graph", "name": "Graph building", "category": "api"}, {"id": "onnx", "name": "ONNX", "category": "platform"}]},
 "frameworks": [
  {"id": "pytorch", "name": "PyTorch", "rank": 1, "status": "active", "overall": 96.26666667, "tier": 1,
   "categories": {"support": 100, "api": 100, "platform": 88.8},
   "criteria": {"sponsor": {"raw": 3, "normalised": 100},
                "activity": {"raw": null, "normalised": null, "missing": "no git mirror was available"},
                "graph": {"raw": 2, "normalised": 100}, "onnx": {"raw": 2, "normalised": 88.8}}},
  {"id": "theano", "name": "Theano", "rank": 2, "status": "retired", "overall": null, "tier": null,
   "categories": {"support": null, "api": null, "platform": null},
   "criteria": {"sponsor": {"raw": null, "normalised": null, "missing": "not checked"}}}]}
EOF2
expect 0 "scores in the scorer's own layout" $REP --scores "$t/scores2.json" --out "$t/g" --format pdf,md
pdftotext -layout "$t/g/showdown.pdf" "$t/g.txt"
has "$t/g.txt" "Theano (retired)" "status shown beside the name"
has "$t/g.txt" "96.3" "overall score read"
has "$t/g.txt" "offline (snapshot only), snapshot of 2026-11-21" "snapshot date on the score pages"
has "$t/g/showdown.md" "PyTorch, Activity: no git mirror was available" "why a value is missing, in the Markdown"
row=$(grep -E '^\| Theano \(retired\) \|' "$t/g/showdown.md" | head -1)
case "$row" in *"*missing*"*) echo "ok: a framework without an overall score shows missing";;
  *) echo "FAIL: Theano's podium row: $row"; fail=1;; esac

# ---- verification verdicts (showdown verify --json) ---------------------------------------------------------------
cat > "$t/verify.json" <<'EOF2'
{"schema": "showdown-verify/1", "published_file": "p.json", "title": "A published table", "source": "somewhere",
 "tolerance_pct": 10, "accuracy_tolerance": 0.02, "measured_from": "results r.json",
 "cells": [{"workload": "mnist_mlp", "implementation": "native", "backend": "dnnl", "device_published": "CPU",
            "metric": "train_total_s", "published": 3.5, "measured": {"median": 3.45, "min": 3.4, "max": 3.6, "n": 3},
            "verdict": "REPRODUCED", "why": "within 10% or inside the measured spread"},
           {"workload": "mnist_mlp", "implementation": "pytorch", "backend": "cudnn", "device_published": "Tesla K80 (GPU)",
            "metric": "train_total_s", "published": 194, "verdict": "NOT-COMPARABLE", "why": "device: published Tesla K80"}],
 "counts": {"REPRODUCED": 1, "NOT-COMPARABLE": 1}, "exit_code": 9}
EOF2
expect 0 "verification section" $REP --verify "$t/verify.json" --results "$t/results.json" --out "$t/h" --format pdf,md
pdftotext -layout "$t/h/showdown.pdf" "$t/h.txt"
has "$t/h/showdown.md" "1 REPRODUCED, 1 NOT-COMPARABLE" "verdict counts"
has "$t/h.txt" "Verdicts per published file" "verdict counts per file in the PDF"
has "$t/h.txt" "reproduced" "verdicts in the PDF"
has "$t/h/showdown.md" "device: published Tesla K80" "why a cell is not comparable (Markdown: every cell)"
has "$t/h/showdown.md" "| native · dnnl" "verdict rows in the Markdown"
hasnt "$t/out" "omitted for lack of data: .*verification" "verification not omitted when verdicts are given"

# ---- the results database: the latest run, and earlier runs as history -------------------------------------------
db="$t/h.db"
ok_bench=1
for i in 1 2; do
  $SD bench --workload mnist_mlp --backend ref --epochs 2 --batches 2 --data synthetic --db "$db" --quiet \
      --json "$t/h$i.json" > /dev/null 2>&1 || ok_bench=0
done
if [ $ok_bench = 1 ]; then
  expect 0 "report from the database" $SD report --db "$db" --out "$t/i" --format pdf,md
  has "$t/i/showdown.md" "h.db (bench run 2)" "the latest run of the database is reported"
  has "$t/i/showdown.md" "steady-state epoch time across runs" "history from earlier runs"
  hasnt "$t/out" "omitted for lack of data: .*history" "history not omitted"
else
  echo "FAIL: showdown bench could not make a database"; fail=1
fi
expect 2 "nothing to report" sh -c "cd \"$t\" && \"$SD\" report --db none.db --out j"   # in an empty directory: no out/scores.json to fall back on
[ ! -e "$t/none.db" ] && echo "ok: a missing database is not created" || { echo "FAIL: created $t/none.db"; fail=1; }

# ---- the one-page brief -------------------------------------------------------------------------------------
expect 0 "brief template" $REP --template brief --results "$t/results.json" "$t/published.json" --scores "$t/scores.json" --out "$t/e" --format pdf
pb=$(pdfinfo "$t/e/showdown.pdf" | awk '/^Pages:/ {print $2}')
[ "$pb" = 1 ] && echo "ok: brief is one page" || { echo "FAIL: brief has $pb pages"; fail=1; }

# ---- errors ----------------------------------------------------------------------------------------------------
printf '{"format": "showdown-template/1",\n "sections": [{"type": "podium"},\n  {"type": "podiumm"}]}\n' > "$t/bad.json"
expect 3 "unknown section type" $REP --template "$t/bad.json" --scores "$t/scores.json" --out "$t/f"
has "$t/err" "bad.json:3:12: unknown section type 'podiumm'" "template error names file:line:column"
printf '{"format": "showdown-template/1", "sections": [{"type": "text", "text": "{nope}"}]}\n' > "$t/bad2.json"
expect 3 "unknown placeholder" $REP --template "$t/bad2.json" --scores "$t/scores.json" --out "$t/f"
has "$t/err" "unknown placeholder '{nope}'" "placeholder error"
printf '{"schema": "showdown-scores/1", "frameworks": []}\n' > "$t/wrong.json"
expect 3 "scores file given as results" $REP --results "$t/wrong.json" --out "$t/f"
has "$t/err" "not showdown-results/" "schema error"
printf '{"schema": "showdown-results/1", "runs": [}\n' > "$t/broken.json"
expect 3 "broken JSON" $REP --results "$t/broken.json" --out "$t/f"
has "$t/err" "broken.json:1:" "JSON error positioned"
expect 2 "bad --format" $REP --scores "$t/scores.json" --format pdf,gif --out "$t/f"
has "$t/err" "--format expects a comma-separated list of pdf, svg, md, csv or all, got 'gif'" "format error"
expect 2 "unknown template name" $REP --template nosuch --scores "$t/scores.json" --out "$t/f"

exit $fail
