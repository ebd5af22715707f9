#!/bin/bash
# test_fuzz_smoke — `make fuzz-smoke` as part of `make test`: every libFuzzer target replays its regression
# inputs, then fuzzes for FUZZ_SECONDS under ASan + UBSan (scripts/fuzz-smoke.sh). Skipped, with the
# reason, where clang's libFuzzer is not available (make test builds the targets when it is).
set -u
D=${FUZZ_DIR:-build/fuzz}
n=0; have=0
for src in fuzz/fuzz_*.c; do n=$((n+1)); [ -x "$D/$(basename "$src" .c)" ] && have=$((have+1)); done
if [ "$have" -lt "$n" ]; then
  echo "skipped: fuzz smoke run: clang with libFuzzer not available, so build/fuzz has $have of $n targets (apt-get install clang libclang-rt-14-dev, then make fuzz)"
  exit 77
fi
sh scripts/fuzz-smoke.sh
