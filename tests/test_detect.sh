#!/bin/sh
# test_detect — feature detection really runs: it finds what is installed (checked against independent
# evidence) and reports "not found" when an input is broken on purpose.
set -u
fail=0
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
CU=${CU:-/usr/local/cuda}; PY=${PYTHON:-/usr/bin/python3}
check() { # file var expected
  got=$(sed -n "s/^$2 := //p" "$1")
  if [ "$got" != "$3" ]; then echo "FAIL: $2 = '$got', expected $3 ($4)"; fail=1; else echo "ok: $2 = $3 ($4)"; fi
}
CC=cc CU="$CU" PYTHON="$PY" sh scripts/detect.sh "$t/real.mk" > "$t/real.out"
cat "$t/real.out"
[ "$(grep -c '^feature ' "$t/real.out")" -eq 3 ] || { echo "FAIL: expected 3 feature lines"; fail=1; }
if [ -f /usr/include/dnnl.h ]; then check "$t/real.mk" HAVE_DNNL 1 "dnnl.h installed"; else check "$t/real.mk" HAVE_DNNL 0 "no dnnl.h"; fi
if [ -f "$CU/include/cudnn.h" ] && [ -x "$CU/bin/nvcc" ]; then check "$t/real.mk" HAVE_CUDNN 1 "cudnn.h and nvcc present"; else check "$t/real.mk" HAVE_CUDNN 0 "no CUDA"; fi
if "$PY" -c 'import torch' 2>/dev/null; then check "$t/real.mk" HAVE_TORCH 1 "torch imports"; else check "$t/real.mk" HAVE_TORCH 0 "torch does not import"; fi

CC=false CU=/nonexistent PYTHON=/bin/false sh scripts/detect.sh "$t/none.mk" > "$t/none.out"
cat "$t/none.out"
check "$t/none.mk" HAVE_DNNL 0 "compiler broken"
check "$t/none.mk" HAVE_CUDNN 0 "CU=/nonexistent"
check "$t/none.mk" HAVE_TORCH 0 "PYTHON=/bin/false"
grep -q "feature CUDA+cuDNN: not found (no nvcc at /nonexistent/bin/nvcc)" "$t/none.out" || { echo "FAIL: CUDA reason"; fail=1; }
grep -q "feature PyTorch: not found" "$t/none.out" || { echo "FAIL: torch reason"; fail=1; }
exit $fail
