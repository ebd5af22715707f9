#!/bin/sh
# bench-cpu — issue 3's CPU comparison: the native engine (ref, dnnl) against PyTorch CPU on the same models,
# batch and threads, in the same run: `showdown perf` (with per-layer GFLOP/s and the measured sgemm ceiling),
# then PyTorch as shipped and with OMP_WAIT_POLICY=passive when /usr/bin/python3 imports torch.
# Prints the table and writes out/bench/cpu.json. Usage: scripts/bench-cpu.sh [SHOWDOWN] [OUTDIR]
set -eu
SHOWDOWN=${1:-./showdown}
OUT=${2:-out/bench}
PYTHON=${PYTHON:-/usr/bin/python3}
SECONDS_PER_CELL=${SECONDS_PER_CELL:-6}
THREADS=${THREADS:-$(nproc)}
mkdir -p "$OUT"
load0=$(cut -d' ' -f1 /proc/loadavg)
echo "bench-cpu: $THREADS threads, load average $load0 at start (a busy machine skews every column)"
"$SHOWDOWN" perf --layers --threads "$THREADS" --seconds "$SECONDS_PER_CELL" --json "$OUT/perf.json"
torch_files=""
if "$PYTHON" -c 'import torch' 2>/dev/null; then
  env -u OMP_WAIT_POLICY "$PYTHON" scripts/torch_perf.py --threads "$THREADS" --seconds "$SECONDS_PER_CELL" \
      > "$OUT/torch-shipped.json.tmp" && mv "$OUT/torch-shipped.json.tmp" "$OUT/torch-shipped.json"
  OMP_WAIT_POLICY=passive "$PYTHON" scripts/torch_perf.py --threads "$THREADS" --seconds "$SECONDS_PER_CELL" \
      > "$OUT/torch-passive.json.tmp" && mv "$OUT/torch-passive.json.tmp" "$OUT/torch-passive.json"
  torch_files="$OUT/torch-shipped.json $OUT/torch-passive.json"
else
  echo "bench-cpu: $PYTHON cannot import torch: PyTorch columns skipped (install python3-torch)"
fi
load1=$(cut -d' ' -f1 /proc/loadavg)
"$PYTHON" scripts/bench_table.py --load "$load0,$load1" --out "$OUT/cpu.json" "$OUT/perf.json" $torch_files
