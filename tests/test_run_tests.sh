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

SHOWDOWN="$t/good-showdown" BUILD="$t/b" CU=/nonexistent sh scripts/run-tests.sh "$t/test_parts.sh" "$t/test_whole.sh" "$t/test_plain.sh" > "$t/out" 2>&1; rc=$?
sed "s/skipped:/(skip)/" "$t/out"   # this suite's own log must not look like skips
closing=$(tail -n 1 "$t/out")
[ "$closing" = "tests: 3 passed, 0 failed, 3 skipped" ] && ok "closing line: $closing" || bad "closing line: '$closing', expected 3 passed, 0 failed, 3 skipped"
[ "$(grep -c 'skipped:' "$t/out")" -eq 3 ] && ok "3 skip lines printed" || bad "skip lines: $(grep -c 'skipped:' "$t/out")"
[ $rc -eq 0 ] && ok "exit 0" || bad "exit $rc"

SHOWDOWN="$t/good-showdown" BUILD="$t/b" CU=/nonexistent sh scripts/run-tests.sh "$t/test_plain.sh" "$t/test_broken.sh" > "$t/out" 2>&1; rc=$?
[ "$(tail -n 1 "$t/out")" = "tests: 2 passed, 1 failed, 0 skipped" ] && [ $rc -ne 0 ] && ok "a failing suite fails the run" || bad "failing suite: exit $rc, $(tail -n 1 "$t/out")"

SHOWDOWN="$t/bad-showdown" BUILD="$t/b" CU=/nonexistent sh scripts/run-tests.sh "$t/test_plain.sh" > "$t/out" 2>&1; rc=$?
grep -q '^FAIL features' "$t/out" && [ $rc -ne 0 ] && ok "features check fails when the build cannot run what is installed" ||
  bad "features: exit $rc: $(cat "$t/out")"
exit $fail
