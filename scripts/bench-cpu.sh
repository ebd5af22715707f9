#!/bin/sh
# bench-cpu — issue 3's CPU comparison: the native engine (ref, dnnl) against PyTorch CPU on the same models,
# batch and threads, in the same run: `showdown perf` (with per-layer GFLOP/s and the measured sgemm ceiling),
# then PyTorch as shipped and at its best setting found (OMP_WAIT_POLICY=passive, denormals flushed, and
# OPENBLAS_CORETYPE where OpenBLAS misdetects the CPU) when /usr/bin/python3 imports torch.
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
  # OpenBLAS 0.3.21 identifies some AVX-512 CPUs (VMs) as "Prescott" and runs its SSE3 kernel: PyTorch's
  # sgemm then reaches ~13 GFLOP/s instead of ~60+. The best setting names the right core.
  best_env="OMP_WAIT_POLICY=passive"
  core=$(OPENBLAS_VERBOSE=2 "$PYTHON" -c 'import torch; torch.mm(torch.rand(64,64), torch.rand(64,64))' 2>&1 |
         sed -n 's/^Core: //p' | head -n1)
  if [ "$core" = "Prescott" ] && grep -q avx512f /proc/cpuinfo; then
    best_env="$best_env OPENBLAS_CORETYPE=SkylakeX"
    echo "bench-cpu: OpenBLAS detects this CPU as $core; PyTorch's best setting adds OPENBLAS_CORETYPE=SkylakeX"
  fi
  # showdown's CPU back-ends flush denormals to zero (nn/host_ops.h): the best setting does too
  env $best_env "$PYTHON" scripts/torch_perf.py --threads "$THREADS" --seconds "$SECONDS_PER_CELL" --flush-denormal \
      > "$OUT/torch-passive.json.tmp" && mv "$OUT/torch-passive.json.tmp" "$OUT/torch-passive.json"
  torch_files="$OUT/torch-shipped.json $OUT/torch-passive.json"
else
  echo "bench-cpu: $PYTHON cannot import torch: PyTorch columns skipped (install python3-torch)"
fi
load1=$(cut -d' ' -f1 /proc/loadavg)
"$PYTHON" scripts/bench_table.py --load "$load0,$load1" --out "$OUT/cpu.json" "$OUT/perf.json" $torch_files
