#!/bin/sh
# test_symbols — no global symbol of libshowdown may collide with one exported by a library the tests or
# the binary load (Criterion pulls in nanomsg, whose 500+ exported nn_* names share our engine's prefix:
# an nn_dev_free of ours once replaced nanomsg's and crashed every test run).
set -u
lib="${BUILD:-build/rel}/libshowdown.a"
[ -f "$lib" ] || { echo "missing $lib"; exit 1; }
ours=$(mktemp); theirs=$(mktemp); trap 'rm -f "$ours" "$theirs"' EXIT
nm "$lib" 2>/dev/null | awk '$2 ~ /^[TDBR]$/ {print $3}' | sort -u > "$ours"
for so in /lib/x86_64-linux-gnu/libnanomsg.so.5 /lib/x86_64-linux-gnu/libcriterion.so.3; do
  [ -f "$so" ] && nm -D --defined-only "$so" | awk '{print $3}'
done | sort -u > "$theirs"
n=$(wc -l < "$ours")
[ "$n" -gt 50 ] || { echo "only $n symbols read from $lib"; exit 1; }
clash=$(comm -12 "$ours" "$theirs")
if [ -n "$clash" ]; then echo "symbols clashing with Criterion/nanomsg: $clash"; exit 1; fi
echo "no clash among $n global symbols"
