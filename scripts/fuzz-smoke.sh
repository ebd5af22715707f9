#!/bin/sh
# fuzz-smoke — every libFuzzer target in build/fuzz (make fuzz), two at a time: first the regression inputs of
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
# One target: its line on stdout, "EXECUTIONS CRASHED" in $D/logs/TARGET.result.
fuzz_one() {
  t=$1; bin="$D/fuzz_$t"; log="$D/logs/$t.log"; res="$D/logs/$t.result"
  nreg=0
  if [ -d "fuzz/regress/$t" ] && [ -n "$(ls "fuzz/regress/$t")" ]; then
    nreg=$(ls "fuzz/regress/$t" | wc -l)
    if ! "$bin" -rss_limit_mb=2048 -timeout=20 fuzz/regress/"$t"/* >"$log.regress" 2>&1; then
      echo "FAIL fuzz_$t: a regression input of fuzz/regress/$t crashes again:"; tail -n 30 "$log.regress" | sed 's/^/   | /'
      echo "0 1" > "$res"; return
    fi
  fi
  [ -d "$D/seeds/$t" ] && cp -n "$D/seeds/$t"/* "$D/corpus/$t"/ 2>/dev/null
  dict=""; [ -f "$D/seeds/$t.dict" ] && dict="-dict=$D/seeds/$t.dict"
  "$bin" $dict -max_total_time="$S" -print_final_stats=1 -rss_limit_mb=2048 -timeout=20 -max_len=65536 \
         -close_fd_mask=1 -artifact_prefix="$D/crashes/$t/" "$D/corpus/$t" >"$log" 2>&1
  rc=$?
  execs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')
  execs=${execs:-0}
  if [ $rc -ne 0 ]; then
    art=$(ls -t "$D/crashes/$t"/* 2>/dev/null | head -1)
    echo "FAIL fuzz_$t: $execs executions, crash (exit $rc), input ${art:-?}; log $log:"
    grep -m3 -E 'ERROR: |runtime error:|SUMMARY' "$log" | sed 's/^/   | /'
    echo "$execs 1" > "$res"
  else
    echo "fuzz_$t: $execs executions in ${S} s, 0 crashes ($nreg regression input(s) replayed, corpus $(ls "$D/corpus/$t" | wc -l))"
    echo "$execs 0" > "$res"
  fi
}

for t in $targets; do
  [ -x "$D/fuzz_$t" ] || { echo "fuzz-smoke: no $D/fuzz_$t (run make fuzz)"; exit 1; }
  mkdir -p "$D/corpus/$t" "$D/crashes/$t" "$D/logs"; rm -f "$D/logs/$t.result" "$D/logs/$t.out"
done
# Two lanes (libFuzzer runs on one core, the machine has two): every other target in each; the lines in order after.
for l in 0 1; do
  ( i=0; for t in $targets; do [ $((i % 2)) -eq $l ] && fuzz_one "$t" > "$D/logs/$t.out" 2>&1; i=$((i+1)); done ) &
done
wait
total=0; crashes=0; failed=""
for t in $targets; do
  cat "$D/logs/$t.out" 2>/dev/null
  read -r execs crashed < "$D/logs/$t.result" 2>/dev/null || { execs=0; crashed=1; echo "FAIL fuzz_$t: no result"; }
  total=$((total+execs))
  [ "$crashed" -eq 0 ] || { crashes=$((crashes+1)); failed="$failed $t"; }
done
echo "fuzz-smoke: $(echo $targets | wc -w) targets, $total executions, $crashes crashing${failed:+:$failed}"
[ $crashes -eq 0 ]
