#!/bin/sh
# gpu-check — the acceptance test a user with an NVIDIA GPU runs first (`make gpu-check`). One line per check:
#   parity fp32 (Find and heuristic algorithms) and TF32 of every op against the reference, every convolution
#   algorithm cuDNN accepts for the workloads' shapes, device memory back to baseline after build/free loops,
#   bad token ids and labels caught on the device, a short training run per workload tracking the CPU
#   back-end, compute-sanitizer (memcheck, racecheck, synccheck) over a reduced suite where the tool exists,
#   NCCL data parallel where there are two or more GPUs.
# Then the verdict (scripts/gpu-verdict.sh): exit 0 PASS; 1 FAIL (what failed); 4 CANNOT RUN (no device, or a
# build without the cuDNN back-end: why). Checks this machine cannot do (one GPU, no compute-sanitizer) are
# listed as not run. Criterion runs one test process at a time: several CUDA contexts each searching
# algorithms with up to 1 GiB of workspace would exhaust a small GPU and skew the timings cuDNN ranks by.
set -u
BUILD=${BUILD:-build/rel}
SHOWDOWN=${SHOWDOWN:-./showdown}
CU=${CU:-/usr/local/cuda}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu-verdict.sh"
out=out/gpu-check
logs=$out/logs
mkdir -p "$logs"
res=$out/results.tsv
: > "$res"

record() {   # record STATUS CHECK DETAIL
  printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$res"
  case $1 in
    PASS) word=PASS ;; FAIL) word=FAIL ;; NODEV) word="CANNOT RUN" ;; *) word="not run" ;;
  esac
  printf 'gpu-check: %-34s %-10s %s\n' "$2" "$word" "$3"
}
finish() { gv_verdict "$res"; rc=$?; echo "gpu-check: logs in $logs"; exit $rc; }

if [ "${HAVE_CUDNN:-0}" != 1 ]; then
  record NODEV "build" "this build has no cuDNN back-end (scripts/detect.sh found no CUDA+cuDNN; see \`make config\`)"
  finish
fi

nodev=""   # set by the first check that finds no device: the device checks after it are not attempted
skipped() { record NODEV "$1" "not attempted: no device (see above)"; }
tests() {   # tests CHECK LOGNAME ENV-ASSIGNMENTS... -- BINARY ARGS...
  check=$1; log="$logs/$2.log"; shift 2
  if [ -n "$nodev" ]; then skipped "$check"; return; fi
  env_args=""
  while [ "$1" != "--" ]; do env_args="$env_args $1"; shift; done
  shift
  # shellcheck disable=SC2086
  env $env_args "$@" --jobs 1 --verbose > "$log" 2>&1
  j=$(gv_judge_tests $? "$log")
  st=${j%% *}; detail=${j#* }
  [ "$st" = NODEV ] && nodev=$detail
  record "$st" "$check" "$detail"
}

P="$BUILD/tests/test_parity"; C="$BUILD/tests/test_cudnn"; D="$BUILD/tests/test_dp"
tests "parity fp32, Find algorithms" parity-find SD_TEST_AUTOTUNE=1 -- "$P" --filter 'cudnn/*'
tests "parity fp32, heuristic algorithms" parity-heur SD_TEST_AUTOTUNE=0 -- "$P" --filter 'cudnn/*'
tests "parity tf32 (tolerance 5e-3)" parity-tf32 SD_TEST_PRECISION=tf32 -- "$P" --filter 'cudnn/*'
tests "every usable conv algorithm" conv-algos -- "$C" --filter 'cudnn_gpu/every_usable_conv_algorithm'
tests "memory back to baseline" memory -- "$C" --filter 'cudnn_gpu/memory_returns_to_baseline'
tests "bad token ids and labels" bad-ids -- "$C" --filter 'contract/*'

# Short training runs: cudnn against the CPU back-end (dnnl, else ref) on the same data, seed and dropout
# masks; every epoch's training loss within 5% and test accuracy within 0.05 of the CPU run's.
cpu_be=dnnl
"$SHOWDOWN" bench --workload mnist_mlp --backend dnnl --data synthetic --epochs 1 --batches 1 --no-db \
  > "$logs/dnnl-probe.log" 2>&1 || cpu_be=ref
for w in mnist_mlp mnist_cnn cifar10_vgg; do
  check="training $w vs $cpu_be"
  if [ -n "$nodev" ]; then skipped "$check"; continue; fi
  args="--workload $w --data synthetic --epochs 3 --batches 20 --no-db"
  # shellcheck disable=SC2086
  "$SHOWDOWN" bench $args --backend cudnn --json "$out/$w.cudnn.json" > "$logs/train-$w-cudnn.log" 2>&1
  j=$(gv_judge_bench $? "$logs/train-$w-cudnn.log")
  if [ "${j%% *}" != PASS ]; then
    [ "${j%% *}" = NODEV ] && nodev=${j#* }
    record "${j%% *}" "$check" "cudnn run: ${j#* }"; continue
  fi
  # shellcheck disable=SC2086
  if ! "$SHOWDOWN" bench $args --backend "$cpu_be" --json "$out/$w.cpu.json" > "$logs/train-$w-cpu.log" 2>&1; then
    record FAIL "$check" "the $cpu_be run failed: $logs/train-$w-cpu.log"; continue
  fi
  cmp=$("${PYTHON:-python3}" - "$out/$w.cudnn.json" "$out/$w.cpu.json" <<'PY'
import json, sys
def epochs(p):
    return json.load(open(p))["runs"][0]["samples"][0]["epochs"]
g, c = epochs(sys.argv[1]), epochs(sys.argv[2])
bad = []
for a, b in zip(g, c):
    if abs(a["loss"] - b["loss"]) > 0.05 * max(1.0, abs(b["loss"])) or abs(a["accuracy"] - b["accuracy"]) > 0.05:
        bad.append("epoch %d loss %.4f vs %.4f, accuracy %.4f vs %.4f" % (a["epoch"], a["loss"], b["loss"],
                                                                          a["accuracy"], b["accuracy"]))
if len(g) != len(c) or not g:
    bad.append("%d epochs vs %d" % (len(g), len(c)))
last = "final loss %.4f vs %.4f, accuracy %.4f vs %.4f" % (g[-1]["loss"], c[-1]["loss"], g[-1]["accuracy"],
                                                           c[-1]["accuracy"]) if g and c else ""
print(("FAIL " + "; ".join(bad)) if bad else ("PASS " + last))
PY
)
  [ -n "$cmp" ] || cmp="FAIL could not compare the results files"
  record "${cmp%% *}" "$check" "${cmp#* }"
done

# compute-sanitizer over a reduced suite: one training step of mnist_cnn (conv, pool, dense, dropout, loss,
# optimizer) and the GRU, through each tool.
san=$(command -v compute-sanitizer 2>/dev/null || true)
[ -z "$san" ] && [ -x "$CU/bin/compute-sanitizer" ] && san="$CU/bin/compute-sanitizer"
for tool in memcheck racecheck synccheck; do
  check="compute-sanitizer $tool"
  if [ -n "$nodev" ]; then skipped "$check"; continue; fi
  if [ -z "$san" ]; then record NOTRUN "$check" "compute-sanitizer not found (CUDA toolkit's bin/)"; continue; fi
  st=PASS; detail=""
  for f in 'cudnn/step_mnist_cnn' 'cudnn/gru'; do
    log="$logs/sanitizer-$tool-$(echo "$f" | tr / -).log"
    "$san" --tool "$tool" --target-processes all --error-exitcode 99 "$P" --filter "$f" --jobs 1 --verbose \
      > "$log" 2>&1
    j=$(gv_judge_tests $? "$log")
    if [ "${j%% *}" != PASS ]; then st=FAIL; detail="$f: ${j#* } ($log)"; break; fi
    detail="${detail:+$detail, }$f"
  done
  record "$st" "$check" "$detail"
done

# NCCL data parallel over two GPUs: NCCL's average, two replicas against one model, then a 2-GPU run.
check="nccl data parallel, 2 GPUs"
if [ -n "$nodev" ]; then skipped "$check"
else
  "$D" --filter 'dp_gpu/*' --jobs 1 --verbose > "$logs/dp-gpu.log" 2>&1
  j=$(gv_judge_tests $? "$logs/dp-gpu.log")
  case $j in
    PASS*)
      "$SHOWDOWN" bench --workload mnist_cnn --backend cudnn --gpus 2 --data synthetic --epochs 2 --batches 20 \
        --no-db > "$logs/dp-bench.log" 2>&1
      b=$(gv_judge_bench $? "$logs/dp-bench.log")
      if [ "${b%% *}" = PASS ]; then record PASS "$check" "${j#* }; mnist_cnn --gpus 2 trained"
      else record FAIL "$check" "mnist_cnn --gpus 2: ${b#* }"; fi ;;
    NODEV*) record NOTRUN "$check" "${j#* }" ;;   # a GPU answered the checks above: one is too few here
    *) record "${j%% *}" "$check" "${j#* }" ;;
  esac
fi
finish
