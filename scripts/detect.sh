#!/bin/sh
# Detects showdown's optional features and writes them as make variables to $1 (build/config.mk),
# printing one line per feature: found (with how) or not found (with why). Inputs: CC, CU, PYTHON.
# tests/test_detect.sh runs it against real and deliberately broken inputs: detection must really run.
set -u
out=${1:?usage: detect.sh OUTFILE}
CC=${CC:-cc}
CU=${CU:-/usr/local/cuda}
PYTHON=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

dnnl=0; cudnn=0; torch=0

cat > "$tmp/d.c" <<'C'
#include <dnnl.h>
int main(void) { const dnnl_version_t *v = dnnl_version(); return v->major > 0 ? 0 : 1; }
C
if $CC "$tmp/d.c" -o "$tmp/d" -ldnnl >"$tmp/d.log" 2>&1; then
  dnnl=1; echo "feature oneDNN: found ($("$tmp/d" >/dev/null 2>&1 && echo runs || echo links))"
else
  echo "feature oneDNN: not found (no dnnl.h/-ldnnl: install libdnnl-dev)"
fi

cat > "$tmp/c.c" <<'C'
#include <cuda_runtime.h>
#include <cudnn.h>
#include <cublas_v2.h>
int main(void) { return (int)(cudnnGetVersion() == 0); }
C
if [ ! -x "$CU/bin/nvcc" ]; then
  echo "feature CUDA+cuDNN: not found (no nvcc at $CU/bin/nvcc)"
elif $CC -I"$CU/include" "$tmp/c.c" -o "$tmp/c" -L"$CU/lib64" -Wl,-rpath,"$CU/lib64" \
        -lcudnn -lcublas -lcudart >"$tmp/c.log" 2>&1; then
  cudnn=1; echo "feature CUDA+cuDNN: found ($CU, $("$CU/bin/nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/CUDA \1/p'))"
else
  echo "feature CUDA+cuDNN: not found (headers or libraries missing under $CU: $(grep -m1 -i error "$tmp/c.log"))"
fi

if v=$("$PYTHON" -c 'import torch; print(torch.__version__)' 2>/dev/null); then
  torch=1; echo "feature PyTorch: found ($PYTHON, torch $v)"
else
  echo "feature PyTorch: not found ($PYTHON cannot import torch: install python3-torch)"
fi

# A feature that changed since the last detection is said once, with what follows from it.
if [ -f "$out" ]; then
  for f in "DNNL oneDNN" "CUDNN CUDA+cuDNN" "TORCH PyTorch"; do
    var=${f%% *}; name=${f#* }
    was=$(sed -n "s/^HAVE_$var := //p" "$out")
    eval now=\$$(echo "$var" | tr 'A-Z' 'a-z')
    [ -n "$was" ] && [ "$was" != "$now" ] || continue
    if [ "$now" = 1 ]; then echo "config: $name is now available: rebuilding with it"
    else echo "config: $name was built before and is not available now: rebuilding without it"; fi
  done
fi
{ echo "HAVE_DNNL := $dnnl"; echo "HAVE_CUDNN := $cudnn"; echo "HAVE_TORCH := $torch"; } > "$out.tmp" && mv "$out.tmp" "$out"
