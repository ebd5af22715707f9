#!/bin/bash
# Runs every test executable and shell test given as arguments, one line per suite as each ends, and ends with
# the plain closing line "tests: N passed, N failed, N skipped". Passed and failed count suites; skipped counts every
# "skipped:" line printed above it: whole suites that skipped, and the parts of passing suites that did (a
# back-end, a tool, a data set). Each suite's line gives its wall time in brackets, so a slow suite shows where
# CI's time goes. Exit code 0 only if none failed.
# TEST_JOBS suites (default 2) run at once: most suites wait on processes they start, not on the CPU, and CI runs
# the whole list twice. Suites in the same SERIAL group (the Slurm ones: each starts daemons) run one after another.
# First comes the "features" check: what this machine has installed must be built in and runnable
# (libdnnl-dev -> the dnnl back-end, python3-torch -> the pytorch runner, a CUDA toolkit -> the cudnn
# back-end built); a build without them fails here instead of skipping their tests. Only a GPU may be missing.
set -u
passed=0; failed=0; skipped=0; failures=""
mkdir -p "${BUILD:-build}/test-logs"
SHOWDOWN=${SHOWDOWN:-./showdown}
CU=${CU:-/usr/local/cuda}

pkg_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
features() {
  need=ref; why=""
  if pkg_installed libdnnl-dev; then need="$need,dnnl"; why="$why libdnnl-dev"; fi
  if pkg_installed python3-torch; then need="$need,pytorch"; why="$why python3-torch"; fi
  echo "installed:${why:- nothing optional}; required runnable: $need"
  "$SHOWDOWN" env --require "$need" || return 1
  if [ -x "$CU/bin/nvcc" ] && [ -f "$CU/include/cudnn.h" ]; then
    "$SHOWDOWN" env --json - --no-probe | grep -A2 '"name": "cudnn"' | grep -q '"built": true' ||
      { echo "showdown env: the CUDA toolkit is at $CU but the cudnn back-end is not built in"; return 1; }
  fi
}

report() { # name rc log seconds
  name=$1; rc=$2; log=$3; took=${4:+ [$4 s]}
  # A sanitizer report fails the suite even where the runner (Criterion) would not notice it.
  if [ "$rc" -eq 0 ] && grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$log"; then
    echo "sanitizer report in $log:"; grep -m3 -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$log"; rc=1
  fi
  if [ "$rc" -eq 77 ]; then
    reason=$(grep -m1 'skipped:' "$log" | sed 's/.*skipped: *//')
    skipped=$((skipped+1)); echo "SKIP $name$took: skipped: ${reason:-no reason given}"
  elif [ "$rc" -eq 0 ]; then
    passed=$((passed+1)); echo "PASS $name$took $(grep -m1 'Synthesis' "$log" | sed 's/.*Synthesis: //')"
    n=$(grep -h 'skipped:' "$log" | sed 's/.*skipped: */skipped: /' | sort -u | tee "$log.skips" | wc -l)
    sed 's/^/     /' "$log.skips"; rm -f "$log.skips"
    skipped=$((skipped+n))
  else
    failed=$((failed+1)); failures="$failures $name"; echo "FAIL $name$took (exit $rc), last lines of $log:"
    tail -n 25 "$log" | sed 's/^/   | /'
  fi
}

log="${BUILD:-build}/test-logs/features.log"
features >"$log" 2>&1; report features $? "$log"

run_one() { # test log: runs one suite, then writes "rc seconds" to log.rc
  local t0 rc
  t0=$(date +%s)
  case "$1" in
    *.sh) bash "$1" >"$2" 2>&1 ;;
    *)    "$1" --jobs 2 >"$2" 2>&1 ;;
  esac
  rc=$?
  echo "$rc $(( $(date +%s) - t0 ))" > "$2.rc"
}
logof() { echo "${BUILD:-build}/test-logs/$(basename "$1" .sh).log"; }
finish() { # the suites a finished job ran, reported in their order
  local t rc secs
  for t in $1; do
    read -r rc secs < "$(logof "$t").rc" 2>/dev/null || { rc=1; secs=; }
    report "$(basename "$t" .sh)" "$rc" "$(logof "$t")" $secs
  done
}
# Jobs: each suite alone, except the members of a SERIAL group, which share one job.
serial=" test_slurm test_slurm_states "
jobs=(); group=""
for t in "$@"; do
  case "$serial" in *" $(basename "$t" .sh) "*) group="$group $t"; continue ;; esac
  jobs+=("$t")
done
[ -n "$group" ] && jobs+=("$group")
declare -A running=()
trap 'kill ${!running[*]} 2>/dev/null; exit 130' INT TERM
reap() { # waits for one job to end and reports its suites
  wait -n -p done_pid "${!running[@]}"
  finish "${running[$done_pid]}"; unset "running[$done_pid]"
}
max=${TEST_JOBS:-2}
for job in "${jobs[@]}"; do
  while [ ${#running[@]} -ge "$max" ]; do reap; done
  ( for t in $job; do rm -f "$(logof "$t").rc"; run_one "$t" "$(logof "$t")"; done ) &
  running[$!]=$job
done
while [ ${#running[@]} -gt 0 ]; do reap; done
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
