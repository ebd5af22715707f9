#!/bin/bash
# test_deps_frameworks — scripts/deps-frameworks.sh without the network: the GPU builds chosen where a (fake)
# `showdown env` sees a CUDA device and the CPU builds where it does not; a venv whose pip install fails leaves its
# reason in install-failed.txt while the others install; too little disk is one line and nothing is installed.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

# 1. device selection from `showdown env --json -`'s environment.gpu.count (a fake binary)
for n in 0 2; do
  printf '#!/bin/sh\necho "{\\"environment\\": {\\"gpu\\": {\\"count\\": %s}}}"\n' $n > "$t/sd$n"; chmod +x "$t/sd$n"
  SHOWDOWN=$t/sd$n VENV_ROOT=$t/none sh scripts/deps-frameworks.sh --plan tensorflow jax torch > "$t/plan$n"
done
grep -qP '^tensorflow\tgpu\t\d+\ttensorflow\[and-cuda\]==' "$t/plan2" && grep -qP '^jax\tgpu\t\d+\tjax\[cuda13\]==' "$t/plan2" \
  && grep -qP '^torch\tgpu\t\d+\ttorch==' "$t/plan2" && ok "CUDA device: tensorflow[and-cuda], jax[cuda13], torch" \
  || bad "gpu plan: $(cat "$t/plan2")"
grep -qP '^tensorflow\tcpu\t\d+\ttensorflow-cpu==' "$t/plan0" && grep -qP '^jax\tcpu\t\d+\tjax\[cpu\]==' "$t/plan0" \
  && ! grep -q 'cuda' "$t/plan0" && ok "no CUDA device: tensorflow-cpu, jax[cpu]" || bad "cpu plan: $(cat "$t/plan0")"

# 2. a failing install beside a good one: a fake interpreter whose venv's pip fails for 'bad=='
cat > "$t/vpy" <<'PY'
#!/bin/sh
case "$*" in
  "-m pip freeze") echo "good==1" ;;
  "-m pip install"*bad==*) echo "ERROR: No matching distribution found for bad==1"; exit 1 ;;
  "-m pip install"*) exit 0 ;;
  *) exit 2 ;;
esac
PY
cat > "$t/py" <<EOF2
#!/bin/sh
[ "\$1 \$2" = "-m venv" ] || exit 2
[ "\$3" = --help ] && exit 0
mkdir -p "\$3/bin" && cp "$t/vpy" "\$3/bin/python" && chmod +x "\$3/bin/python"
EOF2
chmod +x "$t/vpy" "$t/py"
printf '# size-mb: okv=1 badv=1\ngood==1  # venv: okv\nbad==1  # venv: badv\n' > "$t/req"
DEVICE=cpu PYTHON=$t/py REQ=$t/req VENV_ROOT=$t/v sh scripts/deps-frameworks.sh > "$t/out" 2>&1; rc=$?
[ $rc -eq 1 ] && ok "a failed venv: exit 1 (STRICT)" || bad "exit $rc: $(cat "$t/out")"
[ -f "$t/v/okv/installed.txt" ] && ok "the other venv installed" || bad "okv not installed: $(cat "$t/out")"
grep -q 'No matching distribution found for bad==1' "$t/v/badv/install-failed.txt" 2>/dev/null \
  && ok "install-failed.txt: $(cat "$t/v/badv/install-failed.txt")" || bad "no install-failed.txt: $(cat "$t/out")"
grep -qE 'installing okv badv \(cpu builds\): ~0\.0 GB, about 1 min' "$t/out" && ok "says size and time first" || bad "no announcement: $(cat "$t/out")"
rm -rf "$t/v/okv"
STRICT=0 DEVICE=cpu PYTHON=$t/py REQ=$t/req VENV_ROOT=$t/v sh scripts/deps-frameworks.sh > "$t/out" 2>&1; rc=$?
[ $rc -eq 0 ] && ok "STRICT=0: exit 0 with a failed venv" || bad "STRICT=0: exit $rc"
# two venvs install at a time: each fake pip sees the other one running
cat > "$t/vpy2" <<EOF2
#!/bin/sh
case "\$*" in
  "-m pip freeze") echo "good==1" ;;
  "-m pip install"*) touch "$t/run.\$\$"; sleep 1; ls "$t"/run.* | wc -l >> "$t/overlap"; sleep 1; rm -f "$t/run.\$\$" ;;
  *) exit 2 ;;
esac
EOF2
sed "s|$t/vpy|$t/vpy2|" "$t/py" > "$t/py2"; chmod +x "$t/vpy2" "$t/py2"
printf '# size-mb: g1=2 g2=1\ngood==1  # venv: g1\ngood==2  # venv: g2\n' > "$t/req3"
DEVICE=cpu PYTHON=$t/py2 REQ=$t/req3 VENV_ROOT=$t/v3 sh scripts/deps-frameworks.sh > "$t/out" 2>&1; rc=$?
[ $rc -eq 0 ] && [ -f "$t/v3/g1/installed.txt" ] && [ -f "$t/v3/g2/installed.txt" ] && [ "$(sort -u "$t/overlap" | tr -d ' ')" = 2 ] \
  && ok "two venvs install at once, both installed" || bad "parallel install: exit $rc, pips running together: $(tr -d ' ' < "$t/overlap" | paste -sd,): $(cat "$t/out")"
# bench names the failure in the venv's cells
if [ -x "${SHOWDOWN:-./showdown}" ]; then
  mkdir -p "$t/fv/paddle/bin" && cp "$t/vpy" "$t/fv/paddle/bin/python" && cp "$t/v/badv/install-failed.txt" "$t/fv/paddle/"
  "${SHOWDOWN:-./showdown}" bench --workload mnist_mlp --impl paddle --batches 1 --epochs 1 --no-db --venvs "$t/fv" \
    --json "$t/r.json" > /dev/null 2>&1
  python3 - "$t/r.json" <<'PY' && ok "bench: unavailable, paddle failed to install, with pip's reason" || bad "bench cell: $(cat "$t/r.json")"
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
assert r["status"] == "unavailable" and "paddle failed to install" in r["error"] and "bad==1" in r["error"], r
PY
fi

# 3. too little disk: one line, nothing installed, exit 0
printf '# size-mb: huge=900000000\ngood==1  # venv: huge\n' > "$t/req2"
DEVICE=cpu PYTHON=$t/py REQ=$t/req2 VENV_ROOT=$t/v sh scripts/deps-frameworks.sh > "$t/out" 2>&1; rc=$?
[ $rc -eq 0 ] && [ "$(wc -l < "$t/out")" -eq 1 ] && grep -q 'too little disk' "$t/out" && [ ! -d "$t/v/huge" ] \
  && ok "too little disk: $(cat "$t/out")" || bad "disk check: exit $rc: $(cat "$t/out")"
exit $fail
