#!/bin/sh
# Runs every test executable and shell test given as arguments, one line per suite, and ends with the
# plain closing line "tests: N passed, N failed, N skipped" (suites). Exit code 0 only if none failed.
set -u
passed=0; failed=0; skipped=0; failures=""
mkdir -p "${BUILD:-build}/test-logs"
for t in "$@"; do
  name=$(basename "$t" .sh)
  log="${BUILD:-build}/test-logs/$name.log"
  case "$t" in
    *.sh) bash "$t" >"$log" 2>&1 ;;
    *)    "$t" --jobs 2 >"$log" 2>&1 ;;
  esac
  rc=$?
  # A sanitizer report fails the suite even where the runner (Criterion) would not notice it.
  if [ $rc -eq 0 ] && grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$log"; then
    echo "sanitizer report in $log:"; grep -m3 -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$log"; rc=1
  fi
  if [ $rc -eq 77 ]; then
    skipped=$((skipped+1)); echo "SKIP $name: $(grep -m1 'skipped:' "$log" || echo skipped)"
  elif [ $rc -eq 0 ]; then
    passed=$((passed+1)); echo "PASS $name $(grep -m1 'Synthesis' "$log" | sed 's/.*Synthesis: //')"
    grep -h 'skipped:' "$log" | sed 's/^/     /' | sort -u
  else
    failed=$((failed+1)); failures="$failures $name"; echo "FAIL $name (exit $rc), last lines of $log:"
    tail -n 25 "$log" | sed 's/^/   | /'
  fi
done
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
