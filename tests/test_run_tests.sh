#!/bin/bash
# test_run_tests — the test runner's closing line is honest: every "skipped:" line it prints is counted (a
# whole suite that skips, and each distinct part of a passing suite that skips), failures fail, and the
# features check fails the run when the binary cannot run what the machine has installed.
set -u
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
printf '#!/bin/sh\nexit 0\n' > "$t/good-showdown"; printf '#!/bin/sh\necho "required but not runnable: dnnl: not built" >&2; exit 4\n' > "$t/bad-showdown"
chmod +x "$t/good-showdown" "$t/bad-showdown"
printf 'echo "skipped: dnnl: not compiled"\necho "skipped: dnnl: not compiled"\necho "skipped: no CUDA device"\nexit 0\n' > "$t/test_parts.sh"
printf 'echo "skipped: no CUDA device"\nexit 77\n' > "$t/test_whole.sh"
printf 'echo fine\nexit 0\n' > "$t/test_plain.sh"
printf 'echo broken\nexit 1\n' > "$t/test_broken.sh"

SHOWDOWN="$t/good-showdown" BUILD="$t/b" CU=/nonexistent bash scripts/run-tests.sh "$t/test_parts.sh" "$t/test_whole.sh" "$t/test_plain.sh" > "$t/out" 2>&1; rc=$?
sed "s/skipped:/(skip)/" "$t/out"   # this suite's own log must not look like skips
closing=$(tail -n 1 "$t/out")
[ "$closing" = "tests: 3 passed, 0 failed, 3 skipped" ] && ok "closing line: $closing" || bad "closing line: '$closing', expected 3 passed, 0 failed, 3 skipped"
[ "$(grep -c 'skipped:' "$t/out")" -eq 3 ] && ok "3 skip lines printed" || bad "skip lines: $(grep -c 'skipped:' "$t/out")"
[ $rc -eq 0 ] && ok "exit 0" || bad "exit $rc"

SHOWDOWN="$t/good-showdown" BUILD="$t/b" CU=/nonexistent bash scripts/run-tests.sh "$t/test_plain.sh" "$t/test_broken.sh" > "$t/out" 2>&1; rc=$?
[ "$(tail -n 1 "$t/out")" = "tests: 2 passed, 1 failed, 0 skipped" ] && [ $rc -ne 0 ] && ok "a failing suite fails the run" || bad "failing suite: exit $rc, $(tail -n 1 "$t/out")"

SHOWDOWN="$t/bad-showdown" BUILD="$t/b" CU=/nonexistent bash scripts/run-tests.sh "$t/test_plain.sh" > "$t/out" 2>&1; rc=$?
grep -q '^FAIL features' "$t/out" && [ $rc -ne 0 ] && ok "features check fails when the build cannot run what is installed" ||
  bad "features: exit $rc: $(cat "$t/out")"
# Two suites at once (TEST_JOBS=2): the first waits for a file only the second writes, so it passes only when
# they overlap; with TEST_JOBS=1 the same pair fails. Every suite is still reported once.
printf 'for i in $(seq 30); do [ -e "%s/flag" ] && exit 0; sleep 0.1; done; echo "no flag"; exit 1\n' "$t" > "$t/test_waits.sh"
printf 'touch "%s/flag"\necho "skipped: no CUDA device"\nexit 0\n' "$t" > "$t/test_flags.sh"
TEST_JOBS=2 SHOWDOWN="$t/good-showdown" BUILD="$t/b" CU=/nonexistent bash scripts/run-tests.sh "$t/test_waits.sh" "$t/test_flags.sh" "$t/test_plain.sh" > "$t/out" 2>&1; rc=$?
[ "$(tail -n 1 "$t/out")" = "tests: 4 passed, 0 failed, 1 skipped" ] && [ $rc -eq 0 ] &&
  [ "$(grep -c '^PASS test_' "$t/out")" -eq 3 ] && ok "TEST_JOBS=2 runs suites at once, each reported once" ||
  bad "TEST_JOBS=2: exit $rc: $(cat "$t/out")"
rm -f "$t/flag"
TEST_JOBS=1 SHOWDOWN="$t/good-showdown" BUILD="$t/b" CU=/nonexistent bash scripts/run-tests.sh "$t/test_waits.sh" "$t/test_flags.sh" > "$t/out" 2>&1; rc=$?
grep -q '^FAIL test_waits' "$t/out" && [ $rc -ne 0 ] && ok "TEST_JOBS=1 runs them one after another" ||
  bad "TEST_JOBS=1: exit $rc: $(cat "$t/out")"
exit $fail
