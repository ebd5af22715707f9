#!/bin/bash
# test_fuzz_regress — every crash the fuzzers found stays fixed: the fuzz targets built without libFuzzer
# (fuzz/replay_main.c, this build's compiler and flags, ASan under SANITIZE=1) run each input of
# fuzz/regress/<target>/ and of the seed corpus once; any crash or sanitizer report fails the suite.
set -u
B=${BUILD:-build/rel}
PY=${PYTHON:-python3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$PY" scripts/fuzz-corpus.py "$T/seeds" || { echo "FAIL: cannot assemble the seed corpus"; exit 1; }
fail=0; total=0
for src in fuzz/fuzz_*.c; do
  t=$(basename "$src" .c); t=${t#fuzz_}
  bin="$B/fuzz/replay_$t"
  [ -x "$bin" ] || { echo "FAIL: no $bin (make test builds it)"; exit 1; }
  files=$(ls fuzz/regress/"$t"/* "$T/seeds/$t"/* 2>/dev/null)
  [ -n "$files" ] || continue
  n=$(echo "$files" | wc -l)
  total=$((total+n))
  if ! "$bin" $files >"$T/$t.log" 2>&1 || grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$T/$t.log"; then
    echo "FAIL $t: an input crashes:"; tail -n 20 "$T/$t.log"; fail=1
  else
    echo "ok $t: $n input(s) ($(ls fuzz/regress/"$t" 2>/dev/null | wc -l) regression)"
  fi
done
echo "replayed $total inputs"
exit $fail
