#!/bin/bash
# test_deps — scripts/deps.sh (never installing here: check and first modes) writes the signature that
# build/config.mk is remade from: it changes when a package or the CUDA toolkit changes and is left untouched
# otherwise; detect.sh says when a feature appeared or went since the last detection.
set -u
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
missing=showdown-no-such-package

CU="$t/cuda" sh scripts/deps.sh check "$t/sig" bash $missing > "$t/out" 2>&1
[ ! -s "$t/out" ] && ok "check mode prints nothing" || bad "check mode printed: $(cat "$t/out")"
grep -q "^bash $(dpkg-query -W -f='${Version}' bash) install ok installed$" "$t/sig" && ok "signature has bash's version" || bad "signature: $(cat "$t/sig")"
grep -q "^$t/cuda/bin/nvcc absent$" "$t/sig" && ok "signature records the CUDA toolkit's absence" || bad "no CUDA line"
m1=$(stat -c %Y "$t/sig"); sleep 1.1
CU="$t/cuda" sh scripts/deps.sh check "$t/sig" bash $missing
[ "$(stat -c %Y "$t/sig")" = "$m1" ] && ok "unchanged inputs leave the signature's time alone" || bad "signature rewritten without a change"
mkdir -p "$t/cuda/bin"; printf '#!/bin/sh\n' > "$t/cuda/bin/nvcc"
CU="$t/cuda" sh scripts/deps.sh check "$t/sig" bash $missing
[ "$(stat -c %Y "$t/sig")" != "$m1" ] && grep -q "^$t/cuda/bin/nvcc [0-9]" "$t/sig" && ok "a CUDA toolkit appearing changes the signature" || bad "nvcc did not change the signature"
CU="$t/cuda" sh scripts/deps.sh first "$t/sig" bash $missing > "$t/out" 2>&1; rc=$?
grep -q "^deps: not installed: $missing (building without them" "$t/out" && [ $rc -eq 0 ] && ok "after the first build, plain make says what is missing and goes on" || bad "first mode: exit $rc: $(cat "$t/out")"
sh scripts/deps.sh sideways "$t/sig" bash > /dev/null 2>&1; [ $? -eq 2 ] && ok "unknown mode: exit 2" || bad "unknown mode accepted"

# detect.sh: the change since the last detection is said, once.
printf 'HAVE_DNNL := 1\nHAVE_CUDNN := 0\nHAVE_TORCH := 0\n' > "$t/cfg.mk"
CC=false CU=/nonexistent PYTHON=/bin/false sh scripts/detect.sh "$t/cfg.mk" > "$t/out"
grep -q '^config: oneDNN was built before and is not available now: rebuilding without it$' "$t/out" && ok "oneDNN gone: said" || bad "oneDNN gone: $(cat "$t/out")"
[ "$(grep -c '^config:' "$t/out")" -eq 1 ] && ok "only the changed feature is said" || bad "config lines: $(grep '^config:' "$t/out")"
CC=false CU=/nonexistent PYTHON=/bin/false sh scripts/detect.sh "$t/cfg.mk" > "$t/out"
! grep -q '^config:' "$t/out" && ok "no change: nothing said" || bad "said a change that did not happen"
if [ -f /usr/include/dnnl.h ]; then
  CC=cc CU=/nonexistent PYTHON=/bin/false sh scripts/detect.sh "$t/cfg.mk" > "$t/out"
  grep -q '^config: oneDNN is now available: rebuilding with it$' "$t/out" && ok "oneDNN back: said" || bad "oneDNN back: $(cat "$t/out")"
else
  echo "skipped: libdnnl-dev not installed (oneDNN appearing not checked)"
fi
exit $fail
