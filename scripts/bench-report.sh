#!/bin/bash
# bench-report — time `showdown report` on the full template: median of 5 renders (PDF + SVG + Markdown + CSV)
# of the benchmark results (OUTDIR/bench.json when present, else the synthetic fixture) with the 11-framework
# synthetic scores fixture; wall time (depends on the machine's load and fsync) and CPU time (user + sys).
# Target: under one second. Usage: bench-report.sh SHOWDOWN OUTDIR
set -eu
SD=$1; OUT=$2
FX=tests/fixtures/report
res=$OUT/bench.json; [ -f "$res" ] || res=$FX/results-synthetic.json
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
TIMEFORMAT='%R %U %S'
for i in 1 2 3 4 5; do
  { time "$SD" report --results "$res" $FX/published-dlf2018-table1.json --scores $FX/scores-synthetic.json \
        --out "$tmp/r$i" --format pdf,svg,md > "$tmp/log"; } 2>> "$tmp/times"
done
wall=$(awk '{print $1}' "$tmp/times" | sort -n | sed -n 3p)
cpu=$(awk '{print $2 + $3}' "$tmp/times" | sort -n | sed -n 3p)
pages=$(sed -n 's/.*(\([0-9]*\) pages.*/\1/p' "$tmp/log" | head -1)
nfig=$(ls "$tmp/r1/figures" | wc -l)
echo "report render (full template, $pages pages, $nfig SVG, from $res): median of 5: wall ${wall} s, CPU ${cpu} s (target < 1 s)"
