#!/bin/sh
# test_gpu_verdict — gpu-check's verdict logic (scripts/gpu-verdict.sh) on recorded outputs in
# tests/fixtures/gpu-check/ (NAME.rcN.log: what a check printed and its exit code N). Recorded here: the cuDNN
# suites and a cudnn bench without a device, a passing parity run; crafted: a failure among no-device skips, a
# broken install (cuDNN does not load), a crash, a cudnn bench that cannot load cuBLAS. A failing log must give
# FAIL, never CANNOT RUN; then the verdict over several checks and its exit code.
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
exit $bad
