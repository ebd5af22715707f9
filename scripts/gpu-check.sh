#!/bin/sh
# gpu-check — one command for a GPU machine: the cuDNN back-end parity tests (every op and a training
# step against the reference), then the mnist_cnn and cifar10_vgg training benchmarks on cudnn (and PyTorch on CUDA
# where the bench command offers it), data parallel over two GPUs with NCCL where there are two, ending
# with a table. `make gpu-check` builds and calls it.
# Exit codes (README.md): 0 all ran and passed; 1 a parity test or benchmark failed; 4 cannot run here
# (no CUDA device, or a build without the cuDNN back-end), the code `showdown bench --backend cudnn`
# exits with. A cron job should call this script: through make every failure is make's "Error N", exit 2.
set -u
BUILD=${BUILD:-build/rel}
SHOWDOWN=${SHOWDOWN:-./showdown}
PYTHON=${PYTHON:-/usr/bin/python3}
EXIT_NODEV=4
out=out/gpu-check
mkdir -p "$out" "$BUILD/test-logs"

if [ "${HAVE_CUDNN:-0}" != 1 ]; then
  echo "gpu-check: cannot run: this build has no cuDNN back-end (scripts/detect.sh found no CUDA+cuDNN;" \
       "see \`make config\`)"
  exit $EXIT_NODEV
fi

# 1. parity: test_parity's cudnn suite (every op and one training step vs ref) and test_cudnn (the
# back-end's own tests); both report "skipped: cudnn: <why>" when there is no usable device
for t in "test_parity:cudnn/*" "test_cudnn:*"; do
  bin=${t%%:*}; filter=${t#*:}
  log="$BUILD/test-logs/gpu-check-$bin.log"
  "$BUILD/tests/$bin" --filter "$filter" --verbose >"$log" 2>&1
  rc=$?
  why=$(grep -m1 '^skipped: cudnn: ' "$log" | sed 's/^skipped: cudnn: //')
  if [ -n "$why" ]; then
    echo "gpu-check: cannot run: $why"
    exit $EXIT_NODEV
  fi
  if [ $rc -ne 0 ]; then
    echo "gpu-check: $bin FAILED (exit $rc); $log:"
    grep -E 'FAIL|Assertion|error' "$log" | head -n 20 | sed 's/^/  | /'
    exit 1
  fi
  echo "gpu-check: $bin ($filter): passed ($(grep -m1 'Synthesis' "$log" | sed 's/.*Synthesis: //'))"
done

# 2. training benchmarks
status=0
table="$out/table.txt"
printf '%-14s %-16s %-8s %10s  %s\n' workload engine result wall_s output > "$table"
run() {   # run WORKLOAD ENGINE ARGS...
  w=$1; e=$2; shift 2
  json="$out/$w.$e.json"
  t0=$(date +%s.%N)
  "$SHOWDOWN" bench --workload "$w" "$@" --json "$json" >"$out/$w.$e.log" 2>&1
  r=$?
  t1=$(date +%s.%N)
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  if [ $r -eq 0 ]; then res=ok
  elif grep -q 'not built yet' "$out/$w.$e.log"; then res="n/a"; json="(bench not built yet)"
  else res="FAIL($r)"; status=1; json="$out/$w.$e.log"; fi
  printf '%-14s %-16s %-8s %10s  %s\n' "$w" "$e" "$res" "$wall" "$json" >> "$table"
}
torch_cuda=0
if "$PYTHON" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null &&
   "$SHOWDOWN" bench --help 2>/dev/null | grep -q -- '--framework'; then
  torch_cuda=1
fi
for w in mnist_cnn cifar10_vgg; do
  run "$w" cudnn --backend cudnn
  [ $torch_cuda -eq 1 ] && run "$w" pytorch-cuda --framework pytorch --device cuda
done
[ $torch_cuda -eq 1 ] || echo "gpu-check: PyTorch on CUDA: not run (torch without CUDA, or no --framework in bench)"

# 3. data parallel over two GPUs with NCCL (--gpus): test_dp's GPU suite (NCCL's average; two cudnn replicas
# against one reference model on the whole batch), then a 2-GPU training benchmark. Needs >= 2 devices.
log="$BUILD/test-logs/gpu-check-test_dp.log"
"$BUILD/tests/test_dp" --filter 'dp_gpu/*' --verbose >"$log" 2>&1
rc=$?
why=$(grep -m1 '^skipped: ' "$log" | sed 's/^skipped: //')
if [ $rc -ne 0 ]; then
  echo "gpu-check: test_dp (dp_gpu/*) FAILED (exit $rc); $log:"
  grep -E 'FAIL|Assertion|error' "$log" | head -n 20 | sed 's/^/  | /'
  status=1
elif [ -n "$why" ]; then
  echo "gpu-check: data parallel: not run: $why"
else
  echo "gpu-check: test_dp (dp_gpu/*): passed ($(grep -m1 'Synthesis' "$log" | sed 's/.*Synthesis: //'))"
  run mnist_cnn cudnn-2gpu --backend cudnn --gpus 2
fi
cat "$table"
exit $status
