#!/bin/sh
# test_gpu_verdict — gpu-check's verdict logic (scripts/gpu-verdict.sh) on recorded outputs in
# tests/fixtures/gpu-check/ (NAME.rcN.log: what a check printed and its exit code N). Recorded here: the cuDNN
# suites and a cudnn bench without a device, a passing parity run; crafted: a failure among no-device skips, a
# broken install (cuDNN does not load), a crash, a cudnn bench that cannot load cuBLAS, a build without oneDNN
# or NCCL and bf16 on a GPU older than Ampere (skips that are not "no device"). A failing log must give FAIL,
# never CANNOT RUN; a skip for a missing feature must not read as "no device"; then the verdict over several checks and its exit code, and the whole
# script with stand-ins: every workload trained, the two --gpus 2 runs, compute-sanitizer with autotune off.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../scripts/gpu-verdict.sh"
fx="$here/fixtures/gpu-check"
bad=0
expect() {   # expect JUDGE FIXTURE STATUS [substring of the detail]
  f="$fx/$2"; rc=${2##*.rc}; rc=${rc%.log}
  [ -f "$f" ] || { echo "FAIL: missing fixture $2"; bad=1; return; }
  got=$($1 "$rc" "$f")
  case "$got" in
    "$3"*"${4:-}"*) echo "ok   $2 -> $got" ;;
    *) echo "FAIL: $2: expected $3${4:+ ...$4...}, got: $got"; bad=1 ;;
  esac
}
expect gv_judge_tests parity-nodev.rc0.log NODEV "no CUDA device"
expect gv_judge_tests cudnn-nodev.rc0.log NODEV "no CUDA device"
expect gv_judge_tests pass-dnnl-gru.rc0.log PASS "Passing: 1"
expect gv_judge_tests parity-fail-among-skips.rc1.log FAIL "cudnn::conv2d: cudnn: conv n2 3->50"
expect gv_judge_tests broken-install.rc2.log FAIL "cannot load libcudnn.so.9"
expect gv_judge_tests crash.rc139.log FAIL "signal 11"
expect gv_judge_tests parity-nodnnl.rc0.log PASS "1 skipped: dnnl: not compiled"
expect gv_judge_tests dp-nonccl.rc0.log SKIP "this build has no NCCL"
# parity bf16 on a GPU older than Ampere (crafted): every test skips for the compute capability: not run, no device
# is missing
expect gv_judge_tests parity-bf16-old-gpu.rc0.log SKIP "compute capability 7.5"
expect gv_judge_bench bench-nodev.rc4.log NODEV "no CUDA device"
expect gv_judge_bench bench-broken.rc1.log FAIL "cannot load libcublas.so.13"
# the same failing log with exit code 0 (a runner that lost the code): the failed assertion still decides
cp "$fx/parity-fail-among-skips.rc1.log" "${TMPDIR:-/tmp}/gv-fail.rc0.log"
got=$(gv_judge_tests 0 "${TMPDIR:-/tmp}/gv-fail.rc0.log"); rm -f "${TMPDIR:-/tmp}/gv-fail.rc0.log"
case "$got" in FAIL*) echo "ok   failing log, exit 0 -> $got";; *) echo "FAIL: failing log with exit 0 gave: $got"; bad=1;; esac

verdict() {   # verdict EXPECTED_RC EXPECTED_PREFIX LINES...
  want=$1; prefix=$2; shift 2
  res=$(mktemp); printf '%s\n' "$@" > "$res"
  out=$(gv_verdict "$res"); rc=$?; rm -f "$res"
  if [ $rc -eq "$want" ] && case "$out" in "$prefix"*) true;; *) false;; esac; then echo "ok   verdict $rc: $out"
  else echo "FAIL: verdict: expected exit $want '$prefix...', got exit $rc: $out"; bad=1; fi
}
T=$(printf '\t')
verdict 0 "gpu-check: PASS (2 checks; not run here: nccl 2-GPU" "PASS${T}parity fp32${T}ok" "PASS${T}training${T}ok" \
  "NOTRUN${T}nccl 2-GPU${T}one GPU"
verdict 4 "gpu-check: CANNOT RUN (no CUDA device" "NODEV${T}parity fp32${T}no CUDA device: insufficient driver" \
  "NODEV${T}training${T}no CUDA device"
verdict 1 "gpu-check: FAIL (parity fp32)" "FAIL${T}parity fp32${T}exit 1" "NODEV${T}training${T}no CUDA device"
verdict 1 "gpu-check: FAIL (no check ran)" "NOTRUN${T}sanitizer${T}no compute-sanitizer"

# The whole of scripts/gpu-check.sh with stand-ins for the test binaries and showdown that replay recorded logs:
# a parity failure gives exit 1 and FAIL even though the other suites say "no CUDA device"; all suites without a
# device give 4; all passing (one GPU, no compute-sanitizer) gives 0 with the checks not run named.
stubs() {   # stubs DIR PARITY_LOG PARITY_RC OTHER_LOG OTHER_RC DP_LOG: fake BUILD/tests, showdown, compute-sanitizer
  mkdir -p "$1/build/tests" "$1/cu/bin"
  printf '#!/bin/sh\ncat "%s"; exit %s\n' "$fx/$2" "$3" > "$1/build/tests/test_parity"
  printf '#!/bin/sh\ncat "%s"; exit %s\n' "$fx/$4" "$5" > "$1/build/tests/test_cudnn"
  printf '#!/bin/sh\ncat "%s"; exit 0\n' "$6" > "$1/build/tests/test_dp"
  # the sanitizer passes only with autotune off (a Find search under racecheck would time out)
  cat > "$1/cu/bin/compute-sanitizer" <<SH
#!/bin/sh
[ "\${SD_TEST_AUTOTUNE:-}" = 0 ] || { echo "[FAIL] autotune on under the sanitizer"; exit 1; }
cat "$fx/pass-dnnl-gru.rc0.log"
SH
  cat > "$1/showdown" <<'SH'
#!/bin/sh
[ "$2" = --help ] && { echo "--backend ref,dnnl,cudnn"; exit 0; }
echo "showdown $*" >> calls.log
while [ $# -gt 0 ]; do [ "$1" = --json ] && json=$2; [ "$1" = --backend ] && be=$2; [ "$1" = --gpus ] && g=$2; shift; done
if [ "$be" = cudnn ] && [ -n "${STUB_NODEV:-}" ]; then
  echo "showdown bench: mnist_mlp on cudnn failed: no CUDA device: cudaGetDeviceCount returned no device"; exit 4; fi
if [ "$be" = cudnn ] && [ -n "${g:-}" ] && [ -n "${STUB_ONE_GPU:-}" ]; then
  echo "showdown bench: imdb_gru on cudnn failed: cudnn: no CUDA device 1 (this machine has 1)"; exit 4; fi
[ -n "${json:-}" ] || exit 0
printf '{"runs": [{"samples": [{"epochs": [{"epoch": 1, "loss": 1.0, "accuracy": 0.5}, {"epoch": 2, "loss": 0.5, "accuracy": 0.75}]}]}]}\n' > "$json"
SH
  chmod +x "$1/build/tests/"* "$1/showdown" "$1/cu/bin/compute-sanitizer"
}
run_check() {   # run_check WANT_RC WANT_LINE DIR [ENV]
  want=$1; line=$2; d=$3; shift 3
  out=$(cd "$d" && env HAVE_CUDNN=1 BUILD=build SHOWDOWN=./showdown CU=/nonexistent PATH=/usr/bin:/bin \
        WORKLOADS="$here/../workloads" "$@" sh "$here/../scripts/gpu-check.sh" 2>&1); rc=$?
  if [ $rc -eq "$want" ] && printf '%s\n' "$out" | grep -qF "$line"; then
    echo "ok   gpu-check.sh exit $rc: $(printf '%s\n' "$out" | grep '^gpu-check: [A-Z]' | tail -1)"
  else echo "FAIL: gpu-check.sh: expected exit $want and '$line', got exit $rc:"; printf '%s\n' "$out" | sed 's/^/   | /'
    bad=1; fi
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
nw=$(ls "$here/../workloads/"*.json | wc -l)
printf 'skipped: data parallel on GPUs: cudnn: no CUDA device 1 (this machine has 1)\n[====] Synthesis: Tested: 0 | Passing: 0 | Failing: 0 | Crashing: 0 \n' > "$tmp/dp-one-gpu.log"
stubs "$tmp/fail" parity-fail-among-skips.rc1.log 1 cudnn-nodev.rc0.log 0 "$fx/parity-nodev.rc0.log"
run_check 1 "gpu-check: FAIL (parity fp32, Find algorithms; parity fp32, heuristic algorithms; parity tf32" "$tmp/fail" STUB_NODEV=1
stubs "$tmp/nodev" parity-nodev.rc0.log 0 cudnn-nodev.rc0.log 0 "$fx/parity-nodev.rc0.log"
run_check 4 "gpu-check: CANNOT RUN (cudnn: no CUDA device" "$tmp/nodev" STUB_NODEV=1
# one GPU, no compute-sanitizer: every single-GPU check passes, the --gpus 2 runs and NCCL are not run
stubs "$tmp/pass" pass-dnnl-gru.rc0.log 0 pass-dnnl-gru.rc0.log 0 "$tmp/dp-one-gpu.log"
run_check 0 "gpu-check: PASS ($((10 + nw)) checks; not run here: training imdb_gru --gpus 2 vs dnnl; training densenet121_xray --gpus 2 vs dnnl; compute-sanitizer memcheck; compute-sanitizer racecheck; compute-sanitizer synccheck; nccl reduction, 2 GPUs)" "$tmp/pass" STUB_ONE_GPU=1
n=$(grep -c -- '--backend cudnn' "$tmp/pass/calls.log")
if [ "$n" -eq $((nw + 2)) ]; then echo "ok   cudnn trained each of the $nw workloads, then 2 with --gpus 2"
else echo "FAIL: $n cudnn training runs, expected $((nw + 2))"; bad=1; fi
# a build without oneDNN on a GPU box (a parity test skips for it), two GPUs, compute-sanitizer there: PASS
stubs "$tmp/nodnnl" parity-nodnnl.rc0.log 0 pass-dnnl-gru.rc0.log 0 "$fx/pass-dnnl-gru.rc0.log"
# (all 16 + nw checks pass: the sanitizer stand-in fails unless autotune is off)
run_check 0 "gpu-check: PASS ($((16 + nw)) checks)" "$tmp/nodnnl" CU="$tmp/nodnnl/cu"

# --dry-run: every workload of workloads/*.json, the two --gpus 2 runs, nothing run, exit 0
out=$(cd "$tmp" && env PATH=/usr/bin:/bin WORKLOADS="$here/../workloads" sh "$here/../scripts/gpu-check.sh" --dry-run 2>&1)
rc=$?
miss=""
for f in "$here/../workloads/"*.json; do
  w=$(basename "$f" .json)
  printf '%s\n' "$out" | grep -q "training $w vs " || miss="$miss $w"
done
for w in imdb_gru densenet121_xray; do
  printf '%s\n' "$out" | grep -q "training $w --gpus 2" || miss="$miss $w--gpus2"
done
printf '%s\n' "$out" | grep -q 'SD_TEST_AUTOTUNE=0 compute-sanitizer --tool racecheck' || miss="$miss sanitizer-autotune-off"
for prec in tf32 fp16 bf16; do   # one parity check per precision the cudnn back-end takes
  printf '%s\n' "$out" | grep -q "parity $prec .*SD_TEST_PRECISION=$prec " || miss="$miss parity-$prec"
done
if [ $rc -eq 0 ] && [ -z "$miss" ] && [ ! -e "$tmp/out/gpu-check/results.tsv" ]; then
  echo "ok   --dry-run: $(printf '%s\n' "$out" | tail -1)"
else echo "FAIL: --dry-run (exit $rc) misses:$miss"; printf '%s\n' "$out" | sed 's/^/   | /'; bad=1; fi
exit $bad
