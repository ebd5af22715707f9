#!/bin/sh
# gpu-check — the acceptance test a user with an NVIDIA GPU runs first (`make gpu-check`). One line per check:
#   parity fp32 (Find and heuristic algorithms), TF32, fp16 and bf16 of every op against the reference, every
#   convolution algorithm cuDNN accepts for the workloads' shapes (fp32, fp16, bf16), the mixed-precision kernels
#   (16-bit conversions, loss scaling) and fp16/bf16 training against fp32, device memory back to baseline after build/free loops,
#   bad token ids and labels caught on the device, a short training run of every workload of workloads/*.json
#   tracking the CPU back-end, data parallel (--gpus 2) on imdb_gru and densenet121_xray (token ids, BCE
#   targets) against the same on the CPU, compute-sanitizer (memcheck, racecheck, synccheck; autotune off) over
#   a reduced suite where the tool exists, NCCL's reduction where there are two or more GPUs.
# Then the verdict (scripts/gpu-verdict.sh): exit 0 PASS; 1 FAIL (what failed); 4 CANNOT RUN (no device, or a
# build without the cuDNN back-end: why). Checks this machine cannot do (one GPU, no compute-sanitizer, a
# build without NCCL) are listed as not run. `--dry-run` lists every check and its command, runs nothing.
# Criterion runs one test process at a time: several CUDA contexts each searching algorithms with up to 1 GiB
# of workspace would exhaust a small GPU and skew the timings cuDNN ranks by.
set -u
dry=0
case "${1:-}" in
  --dry-run) dry=1 ;;
  "") ;;
  *) echo "usage: scripts/gpu-check.sh [--dry-run]" >&2; exit 2 ;;
esac
BUILD=${BUILD:-build/rel}
SHOWDOWN=${SHOWDOWN:-./showdown}
CU=${CU:-/usr/local/cuda}
WORKLOADS=${WORKLOADS:-workloads}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu-verdict.sh"
out=out/gpu-check
logs=$out/logs
res=$out/results.tsv
if [ $dry = 0 ]; then mkdir -p "$logs"; : > "$res"; fi

# Short training runs: a few batches, synthetic data, the same seed and dropout masks on both sides.
TRAIN_ARGS="--data synthetic --epochs 2 --batches 4 --no-db"
DP_WORKLOADS="imdb_gru densenet121_xray"   # --gpus 2: token ids and BCE targets on every replica
DP_ARGS="--gpus 2 --batch 16"
SAN_FILTERS="cudnn/step_mnist_cnn cudnn/gru"

ndry=0
plan() {   # plan CHECK COMMAND: the --dry-run line
  ndry=$((ndry + 1))
  printf 'gpu-check: %-44s would run: %s\n' "$1" "$2"
}
record() {   # record STATUS CHECK DETAIL
  printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$res"
  case $1 in
    PASS) word=PASS ;; FAIL) word=FAIL ;; NODEV) word="CANNOT RUN" ;; *) word="not run" ;;
  esac
  printf 'gpu-check: %-44s %-10s %s\n' "$2" "$word" "$3"
}
finish() { gv_verdict "$res"; rc=$?; echo "gpu-check: logs in $logs"; exit $rc; }

if [ $dry = 0 ] && [ "${HAVE_CUDNN:-0}" != 1 ]; then
  record NODEV "build" "this build has no cuDNN back-end (scripts/detect.sh found no CUDA+cuDNN; see \`make config\`)"
  finish
fi

nodev=""   # set by the first check that finds no device: the device checks after it are not attempted
skipped() { record NODEV "$1" "not attempted: no device (see above)"; }
tests() {   # tests CHECK LOGNAME ENV-ASSIGNMENTS... -- BINARY ARGS...
  check=$1; log="$logs/$2.log"; shift 2
  env_args=""
  while [ "$1" != "--" ]; do env_args="$env_args $1"; shift; done
  shift
  if [ $dry = 1 ]; then plan "$check" "${env_args# } $* --jobs 1 --verbose"; return; fi
  if [ -n "$nodev" ]; then skipped "$check"; return; fi
  # shellcheck disable=SC2086
  env $env_args "$@" --jobs 1 --verbose > "$log" 2>&1
  j=$(gv_judge_tests $? "$log")
  st=${j%% *}; detail=${j#* }
  [ "$st" = NODEV ] && nodev=$detail
  [ "$st" = SKIP ] && st=NOTRUN
  record "$st" "$check" "$detail"
}

P="$BUILD/tests/test_parity"; C="$BUILD/tests/test_cudnn"; D="$BUILD/tests/test_dp"
tests "parity fp32, Find algorithms" parity-find SD_TEST_AUTOTUNE=1 -- "$P" --filter 'cudnn/*'
tests "parity fp32, heuristic algorithms" parity-heur SD_TEST_AUTOTUNE=0 -- "$P" --filter 'cudnn/*'
tests "parity tf32 (tolerance 5e-3)" parity-tf32 SD_TEST_PRECISION=tf32 -- "$P" --filter 'cudnn/*'
# fp16, bf16: convolutions and dense layers at the 16-bit tolerances, training steps by NMSE (fp16 loss-scaled);
# bf16 needs compute capability 8.0: on an older GPU its checks are not run
tests "parity fp16 (tolerance 2e-3)" parity-fp16 SD_TEST_PRECISION=fp16 -- "$P" --filter 'cudnn/*'
tests "parity bf16 (tolerance 1.6e-2)" parity-bf16 SD_TEST_PRECISION=bf16 -- "$P" --filter 'cudnn/*'
tests "every usable conv algorithm" conv-algos -- "$C" --filter 'cudnn_gpu/every_usable_conv_algorithm'
tests "every usable conv algorithm, fp16 and bf16" conv-algos-half -- "$C" \
  --filter 'cudnn_gpu/every_usable_conv_algorithm_*'
tests "fp16/bf16 kernels, loss scaling, training" mixed -- "$C" \
  --filter 'cudnn_gpu/@(half_conversions_on_device|loss_scale_on_device|fp16_training_tracks_fp32|bf16_training_tracks_fp32)'
tests "memory back to baseline" memory -- "$C" --filter 'cudnn_gpu/memory_returns_to_baseline'
tests "bad token ids and labels" bad-ids -- "$C" --filter 'contract/*'

# The CPU side: dnnl where it runs, else the reference.
cpu_be=dnnl
if [ $dry = 0 ]; then
  "$SHOWDOWN" bench --workload mnist_mlp --backend dnnl --data synthetic --epochs 1 --batches 1 --no-db \
    > "$logs/dnnl-probe.log" 2>&1 || cpu_be=ref
fi

# compare CUDNN_JSON CPU_JSON: every epoch's training loss (the first within 1%, later ones within 5%) and
# test accuracy (or mean ROC AUC) within 0.05 of the CPU run's; an inference workload has no epochs.
compare() {
  "${PYTHON:-python3}" - "$1" "$2" <<'PY'
import json, sys
def epochs(p):
    s = json.load(open(p))["runs"][0]["samples"][0]
    return s.get("epochs") or []
g, c = epochs(sys.argv[1]), epochs(sys.argv[2])
if not g and not c:
    print("PASS inference ran on both (outputs: parity fused_inference, resnet50_features)")
    sys.exit()
bad = []
for a, b in zip(g, c):
    tol = 0.01 if a["epoch"] == 1 else 0.05
    if abs(a["loss"] - b["loss"]) > tol * max(1.0, abs(b["loss"])) or abs(a["accuracy"] - b["accuracy"]) > 0.05:
        bad.append("epoch %d loss %.4f vs %.4f, accuracy %.4f vs %.4f" % (a["epoch"], a["loss"], b["loss"],
                                                                          a["accuracy"], b["accuracy"]))
if len(g) != len(c) or not g:
    bad.append("%d epochs vs %d" % (len(g), len(c)))
last = "final loss %.4f vs %.4f, accuracy %.4f vs %.4f" % (g[-1]["loss"], c[-1]["loss"], g[-1]["accuracy"],
                                                           c[-1]["accuracy"]) if g and c else ""
print(("FAIL " + "; ".join(bad)) if bad else ("PASS " + last))
PY
}

# train_check WORKLOAD [EXTRA-ARGS NAME]: cudnn against the CPU back-end with the same arguments. With --gpus,
# a missing second device is "not run" (a GPU answered the checks above).
train_check() {
  w=$1; extra=${2:-}; tag=$(echo "$w$extra" | tr -c 'A-Za-z0-9_\n' '-')
  check="training $w${3:+ $3} vs $cpu_be"
  args="--workload $w $TRAIN_ARGS${extra:+ $extra}"
  if [ $dry = 1 ]; then
    plan "$check" "$SHOWDOWN bench $args --backend cudnn, then --backend $cpu_be: loss and accuracy per epoch"
    return
  fi
  if [ -n "$nodev" ]; then skipped "$check"; return; fi
  # shellcheck disable=SC2086
  "$SHOWDOWN" bench $args --backend cudnn --json "$out/$tag.cudnn.json" > "$logs/train-$tag-cudnn.log" 2>&1
  j=$(gv_judge_bench $? "$logs/train-$tag-cudnn.log")
  st=${j%% *}
  if [ "$st" != PASS ]; then
    if [ "$st" = NODEV ] && [ -n "$extra" ]; then record NOTRUN "$check" "${j#* }"; return; fi
    [ "$st" = NODEV ] && nodev=${j#* }
    record "$st" "$check" "cudnn run: ${j#* } ($logs/train-$tag-cudnn.log)"; return
  fi
  # shellcheck disable=SC2086
  if ! "$SHOWDOWN" bench $args --backend "$cpu_be" --json "$out/$tag.cpu.json" > "$logs/train-$tag-cpu.log" 2>&1; then
    record FAIL "$check" "the $cpu_be run failed: $logs/train-$tag-cpu.log"; return
  fi
  cmp=$(compare "$out/$tag.cudnn.json" "$out/$tag.cpu.json")
  [ -n "$cmp" ] || cmp="FAIL could not compare the results files"
  record "${cmp%% *}" "$check" "${cmp#* }"
}

for f in "$WORKLOADS"/*.json; do
  [ -f "$f" ] || continue
  train_check "$(basename "$f" .json)"
done
for w in $DP_WORKLOADS; do train_check "$w" "$DP_ARGS" "--gpus 2"; done

# compute-sanitizer over a reduced suite: one training step of mnist_cnn (conv, pool, dense, dropout, loss,
# optimizer) and the GRU, through each tool, with cuDNN's heuristics (a Find search runs every algorithm under
# the tool: racecheck alone would pass Criterion's timeout).
san=$(command -v compute-sanitizer 2>/dev/null || true)
[ -z "$san" ] && [ -x "$CU/bin/compute-sanitizer" ] && san="$CU/bin/compute-sanitizer"
for tool in memcheck racecheck synccheck; do
  check="compute-sanitizer $tool"
  if [ $dry = 1 ]; then
    plan "$check" "SD_TEST_AUTOTUNE=0 compute-sanitizer --tool $tool $P --filter F, F in: $SAN_FILTERS"; continue
  fi
  if [ -n "$nodev" ]; then skipped "$check"; continue; fi
  if [ -z "$san" ]; then record NOTRUN "$check" "compute-sanitizer not found (CUDA toolkit's bin/)"; continue; fi
  st=PASS; detail=""
  for f in $SAN_FILTERS; do
    log="$logs/sanitizer-$tool-$(echo "$f" | tr / -).log"
    SD_TEST_AUTOTUNE=0 "$san" --tool "$tool" --target-processes all --error-exitcode 99 "$P" --filter "$f" \
      --jobs 1 --verbose > "$log" 2>&1
    j=$(gv_judge_tests $? "$log")
    if [ "${j%% *}" != PASS ]; then st=FAIL; detail="$f: ${j#* } ($log)"; break; fi
    detail="${detail:+$detail, }$f"
  done
  record "$st" "$check" "$detail"
done

# NCCL over two GPUs: its average of known buffers, two cudnn replicas against one reference model.
check="nccl reduction, 2 GPUs"
if [ $dry = 1 ]; then plan "$check" "$D --filter 'dp_gpu/*' --jobs 1 --verbose"
elif [ -n "$nodev" ]; then skipped "$check"
else
  "$D" --filter 'dp_gpu/*' --jobs 1 --verbose > "$logs/dp-gpu.log" 2>&1
  j=$(gv_judge_tests $? "$logs/dp-gpu.log")
  case $j in
    PASS*) record PASS "$check" "${j#* }" ;;
    NODEV*|SKIP*) record NOTRUN "$check" "${j#* }" ;;   # a GPU answered the checks above: one is too few here
    *) record "${j%% *}" "$check" "${j#* }" ;;
  esac
fi
if [ $dry = 1 ]; then echo "gpu-check: dry run: $ndry checks listed, none run"; exit 0; fi
finish
