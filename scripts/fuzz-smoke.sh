#!/bin/sh
# fuzz-smoke — every libFuzzer target in build/fuzz (make fuzz) in turn: first the regression inputs of
# fuzz/regress/<target>/ (each must run clean), then FUZZ_SECONDS (default 20) of fuzzing from the seed
# corpus (scripts/fuzz-corpus.py) plus what earlier runs kept in build/fuzz/corpus/<target>/, under ASan and
# UBSan. Prints one line per target (executions, crashes) and a total. A crash leaves its input in
# build/fuzz/crashes/<target>/ and fails the run: copy it into fuzz/regress/<target>/ with the fix.
# Usage: fuzz-smoke.sh [TARGET...]   (FUZZ_SECONDS, FUZZ_DIR=build/fuzz, PYTHON, SHARED)
set -u
S=${FUZZ_SECONDS:-20}
D=${FUZZ_DIR:-build/fuzz}
PY=${PYTHON:-python3}
targets=${*:-$(ls fuzz/fuzz_*.c | sed 's|fuzz/fuzz_||; s|\.c$||')}
rm -rf "$D/seeds"
"$PY" scripts/fuzz-corpus.py "$D/seeds" || { echo "fuzz-smoke: cannot assemble the seed corpus"; exit 1; }
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
total=0; crashes=0; failed=""
for t in $targets; do
  bin="$D/fuzz_$t"
  [ -x "$bin" ] || { echo "fuzz-smoke: no $bin (run make fuzz)"; exit 1; }
  mkdir -p "$D/corpus/$t" "$D/crashes/$t" "$D/logs"
  log="$D/logs/$t.log"
  nreg=0
  if [ -d "fuzz/regress/$t" ] && [ -n "$(ls "fuzz/regress/$t")" ]; then
    nreg=$(ls "fuzz/regress/$t" | wc -l)
    if ! "$bin" -rss_limit_mb=2048 -timeout=20 fuzz/regress/"$t"/* >"$log.regress" 2>&1; then
      echo "FAIL fuzz_$t: a regression input of fuzz/regress/$t crashes again:"; tail -n 30 "$log.regress" | sed 's/^/   | /'
      crashes=$((crashes+1)); failed="$failed $t"; continue
    fi
  fi
  [ -d "$D/seeds/$t" ] && cp -n "$D/seeds/$t"/* "$D/corpus/$t"/ 2>/dev/null
  dict=""; [ -f "$D/seeds/$t.dict" ] && dict="-dict=$D/seeds/$t.dict"
  "$bin" $dict -max_total_time="$S" -print_final_stats=1 -rss_limit_mb=2048 -timeout=20 -max_len=65536 \
         -close_fd_mask=1 -artifact_prefix="$D/crashes/$t/" "$D/corpus/$t" >"$log" 2>&1
  rc=$?
  execs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')
  execs=${execs:-0}
  total=$((total+execs))
  if [ $rc -ne 0 ]; then
    crashes=$((crashes+1)); failed="$failed $t"
    art=$(ls -t "$D/crashes/$t"/* 2>/dev/null | head -1)
    echo "FAIL fuzz_$t: $execs executions, crash (exit $rc), input ${art:-?}; log $log:"
    grep -m3 -E 'ERROR: |runtime error:|SUMMARY' "$log" | sed 's/^/   | /'
  else
    echo "fuzz_$t: $execs executions in ${S} s, 0 crashes ($nreg regression input(s) replayed, corpus $(ls "$D/corpus/$t" | wc -l))"
  fi
done
echo "fuzz-smoke: $(echo $targets | wc -w) targets, $total executions, $crashes crashing${failed:+:$failed}"
[ $crashes -eq 0 ]
