#!/bin/sh
# test_lazy_cuda — CUDA, cuDNN, cuBLAS and NCCL are loaded on first use, never at start-up: the binary lists
# none of them as NEEDED, `--help` and a CPU run work in 512 MB of address space (libcublasLt alone maps
# 540 MB) and map none of them, and the cuDNN back-end still answers "no CUDA device" on a machine without one.
set -u
SHOWDOWN=${SHOWDOWN:-./showdown}
[ -x "$SHOWDOWN" ] || { echo "missing $SHOWDOWN"; exit 1; }
fail=0
needed=$(readelf -d "$SHOWDOWN" | awk '/NEEDED/ {print $NF}' | tr -d '[]')
[ -n "$needed" ] || { echo "FAIL: readelf read no NEEDED entries from $SHOWDOWN"; exit 1; }
bad=$(printf '%s\n' "$needed" | grep -E '^lib(cudnn|cublas|cublasLt|cudart|nccl|cuda)\.so' || true)
if [ -n "$bad" ]; then echo "FAIL: NEEDED at start-up:" $bad; fail=1; else echo "ok: no CUDA library NEEDED"; fi

# AddressSanitizer reserves terabytes of address space for its shadow: no address-space limit with it
limit="ulimit -v 524288"
if printf '%s\n' "$needed" | grep -q '^libasan'; then
  echo "skipped: ulimit -v 524288 under AddressSanitizer (its shadow memory needs the address space); run unlimited"
  limit=true
fi
out=$( ($limit; "$SHOWDOWN" --help) 2>&1 >/dev/null ); rc=$?
if [ $rc -ne 0 ]; then echo "FAIL: --help under $limit exited $rc: $out"; fail=1; else echo "ok: --help ($limit)"; fi

log=$(mktemp); trap 'rm -f "$log"' EXIT
($limit; LD_DEBUG=files "$SHOWDOWN" bench --workload mnist_mlp --data synthetic --batches 2 --epochs 1 --no-db) \
    >"$log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then echo "FAIL: CPU run under $limit exited $rc:"; grep -v 'file=\|^ *[0-9]*:' "$log" | tail -5
  fail=1
elif ! grep -qE '^mnist_mlp +native +(dnnl|ref) ' "$log"; then echo "FAIL: CPU run printed no result row"; fail=1
else echo "ok: CPU run ($limit)"; fi
mapped=$(grep -oE 'file=lib(cudnn|cublas|cublasLt|nccl)[^ ]*' "$log" | sort -u | tr '\n' ' ')
if [ -n "$mapped" ]; then echo "FAIL: the CPU run loaded $mapped"; fail=1; else echo "ok: the CPU run loaded no GPU library"; fi

if grep -q 'libcudnn\.so\.' "$SHOWDOWN"; then   # the loader's soname: the cuDNN back-end is built
  "$SHOWDOWN" bench --workload mnist_mlp --backend cudnn --data synthetic --batches 2 --epochs 1 --no-db >"$log" 2>&1
  rc=$?
  if grep -q 'FAILED: no CUDA device' "$log"; then echo "ok: cudnn back-end: no CUDA device (exit $rc)"
  elif grep -qE '^mnist_mlp +native +cudnn +[0-9]' "$log"; then echo "ok: cudnn back-end ran (a GPU is here)"
  else echo "FAIL: cudnn back-end neither ran nor said 'no CUDA device' (exit $rc):"; tail -3 "$log"; fail=1; fi
fi
exit $fail
