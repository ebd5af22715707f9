# gpu-verdict — how scripts/gpu-check.sh judges one check from its exit code and log, and the verdict over
# all checks; sourced by gpu-check.sh and by tests/test_gpu_verdict.sh, which feeds it recorded logs.
# Failures are judged first: a check that exited non-zero, crashed, or whose log shows a failed assertion is
# FAIL even when other tests in it printed "skipped: ... no CUDA device". Only a clean run whose device tests
# all skipped for want of a device is NODEV; other skips (a build without oneDNN or NCCL) are named, never
# read as "no device". Each judge prints one line: "PASS detail", "FAIL what", "NODEV why" or "SKIP why".

# Skips that mean "no usable device here"; any other skip is a feature this build or machine lacks (no oneDNN,
# no NCCL) and says nothing about the GPU.
GV_NODEV_RE='no CUDA device|GPUs requested|visible|fewer than two CUDA devices'

# gv_judge_tests RC LOG: a Criterion test binary (one job) that reports "skipped: <why>" for device tests. A
# clean run with other skips is PASS naming the first skip, or SKIP when no test ran at all (not run).
gv_judge_tests() {
  rc=$1; log=$2
  if [ "$rc" -gt 128 ]; then echo "FAIL crashed (signal $((rc - 128)))"; return; fi
  fails=$(grep -cE '^\[(FAIL|ERR )\]|Assertion Failed|^\[----\] .*: (Crash|Timed out)' "$log")
  if [ "$rc" -ne 0 ] || [ "$fails" -gt 0 ]; then
    what=$(grep -m1 -E '^\[FAIL\]' "$log" | sed 's/^\[FAIL\] //; s/: *(.*//')
    msg=$(grep -m1 -A2 'Assertion Failed' "$log" | sed -n '3p' | sed 's/^\[----\] *//')
    echo "FAIL exit $rc${what:+, first: $what}${msg:+: $msg}"
    return
  fi
  why=$(grep -m1 -E "^skipped: .*($GV_NODEV_RE)" "$log" | sed 's/^skipped: //')
  if [ -n "$why" ]; then echo "NODEV $why"; return; fi
  syn=$(grep -m1 'Synthesis' "$log" | sed 's/.*Synthesis: //; s/ *$//')
  if [ -z "$syn" ]; then echo "FAIL exit 0 but no Criterion synthesis in the log (did it run?)"; return; fi
  other=$(grep -m1 '^skipped: ' "$log" | sed 's/^skipped: //')
  nskip=$(grep -c '^skipped: ' "$log")
  case "$syn" in *"Tested: 0 "*)
    if [ -n "$other" ]; then echo "SKIP $other"; else echo "FAIL no test ran ($syn)"; fi
    return;;
  esac
  echo "PASS $syn${other:+ ($nskip skipped: $other)}"
}

# gv_judge_bench RC LOG: a `showdown bench` run; exit 4 with "no CUDA device" is NODEV, anything else non-zero
# (including 4 for another reason, e.g. a library that does not load) is FAIL.
gv_judge_bench() {
  rc=$1; log=$2
  if [ "$rc" -eq 0 ]; then echo "PASS"; return; fi
  if [ "$rc" -gt 128 ]; then echo "FAIL crashed (signal $((rc - 128)))"; return; fi
  if [ "$rc" -eq 4 ] && grep -q 'no CUDA device' "$log" && ! grep -qE 'cannot load|HINT: install' "$log"; then
    echo "NODEV $(grep -m1 -o 'no CUDA device[^|]*' "$log" | sed 's/ *$//')"; return
  fi
  echo "FAIL exit $rc: $(grep -m1 -iE 'FAILED|error' "$log" | cut -c1-160)"
}

# Lines of stdin joined by "; " (check names contain commas).
gv_join() { awk 'BEGIN { ORS = "" } { print (NR > 1 ? "; " : "") $0 }'; }

# gv_verdict RESULTS: RESULTS holds one "STATUS<TAB>check<TAB>detail" line per check (STATUS PASS, FAIL, NODEV,
# NOTRUN for an optional check this machine cannot do, such as 2-GPU NCCL on one GPU). Prints the verdict and
# returns its exit code: 0 PASS, 1 FAIL (any check failed), 4 CANNOT RUN (no failure, but a required check
# had no device).
gv_verdict() {
  res=$1
  nf=$(grep -c '^FAIL' "$res"); nn=$(grep -c '^NODEV' "$res"); np=$(grep -c '^PASS' "$res")
  if [ "$nf" -gt 0 ]; then
    echo "gpu-check: FAIL ($(grep '^FAIL' "$res" | cut -f2 | gv_join))"
    return 1
  fi
  if [ "$nn" -gt 0 ]; then
    echo "gpu-check: CANNOT RUN ($(grep -m1 '^NODEV' "$res" | cut -f3))"
    return 4
  fi
  if [ "$np" -eq 0 ]; then echo "gpu-check: FAIL (no check ran)"; return 1; fi
  notrun=$(grep '^NOTRUN' "$res" | cut -f2 | gv_join)
  echo "gpu-check: PASS ($np checks${notrun:+; not run here: $notrun})"
  return 0
}
