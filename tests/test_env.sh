#!/bin/bash
# test_env — `showdown env` tells what can run here: the back-ends as the registry creates them, framework
# runners probed through their interpreters (fake venvs here: one whose import works, one whose import fails,
# one missing), --require's verdict and exit codes, and the JSON form.
set -u
S=${SHOWDOWN:-./showdown}
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

mkdir -p "$t/v/tensorflow/bin" "$t/v/jax/bin"
# a framework's import writes log noise on both streams (as TensorFlow's absl and MindSpore's do): the version is
# the probe's own line, never that noise
printf '#!/bin/sh\necho "WARNING: All log messages before absl::InitializeLog()" >&2\necho "[WARNING] ME(1):noise"\nprintf "\\nshowdown-version: 9.9.1\\n"\n' > "$t/v/tensorflow/bin/python"
printf '#!/bin/sh\necho "Traceback (most recent call last):" >&2\necho "ModuleNotFoundError: No module named jax" >&2\nexit 1\n' > "$t/v/jax/bin/python"
chmod +x "$t/v/tensorflow/bin/python" "$t/v/jax/bin/python"
printf '#!/bin/sh\nprintf "\\nshowdown-version: 0.0.7\\n"\n' > "$t/py"; chmod +x "$t/py"
printf '#!/bin/sh\nprintf 0.0.9\n' > "$t/py-old"; chmod +x "$t/py-old"

"$S" env --venvs "$t/v" --python "$t/py" > "$t/out" 2>&1; rc=$?
[ $rc -eq 0 ] && ok "env exits 0" || bad "env exit $rc"
grep -qE '^  ref +built +runnable' "$t/out" && ok "ref built and runnable" || bad "ref line: $(grep '^  ref' "$t/out")"
grep -qE '^  tensorflow +runnable +tensorflow 9\.9\.1' "$t/out" && ok "fake tensorflow venv probed: 9.9.1" || bad "tensorflow line: $(grep '^  tensorflow ' "$t/out")"
grep -qE '^  jax +not runnable +import jax failed: ModuleNotFoundError: No module named jax' "$t/out" && ok "failing import gives its last line" || bad "jax line: $(grep '^  jax ' "$t/out")"
grep -qE '^  paddle +not runnable +not installed' "$t/out" && ok "missing venv: not installed" || bad "paddle line: $(grep '^  paddle' "$t/out")"
grep -qE '^  pytorch +runnable +pytorch 0\.0\.7' "$t/out" && ok "pytorch through --python" || bad "pytorch line: $(grep '^  pytorch' "$t/out")"
grep -q 'WARNING\|ME(1)' "$t/out" && bad "import noise printed as a version: $(grep -n 'WARNING\|ME(1)' "$t/out")" || ok "import noise not read"
"$S" env --venvs "$t/v" --python "$t/py-old" > "$t/out2" 2>&1
grep -qE '^  pytorch +not runnable +import torch: no version line' "$t/out2" && ok "no version line: not runnable, says why" || bad "no version line: $(grep '^  pytorch' "$t/out2")"
grep -q "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)" "$t/out" && ok "names the CPU model" || bad "CPU model missing"

"$S" env --venvs "$t/v" --python "$t/py" --json - > "$t/j" 2>"$t/e"; rc=$?
python3 - "$t/j" <<'PY' && ok "--json -: backends, frameworks, data, environment" || { bad "--json -"; fail=1; }
import json, sys
d = json.load(open(sys.argv[1]))
b = {x["name"]: x for x in d["backends"]}
assert b["ref"]["built"] is True and b["ref"]["runnable"] is True, b["ref"]
f = {x["name"]: x for x in d["frameworks"]}
assert f["tensorflow"]["runnable"] is True and f["tensorflow"]["version"] == "9.9.1", f["tensorflow"]
assert f["jax"]["runnable"] is False and "No module named jax" in f["jax"]["why"], f["jax"]
assert "cpu_model" in d["environment"] and d["data"][0]["name"] == "fashion-mnist"
PY

"$S" env --venvs "$t/v" --python "$t/py" --require ref,tensorflow >/dev/null 2>&1 && ok "--require ref,tensorflow: 0" || bad "--require ref,tensorflow"
"$S" env --venvs "$t/v" --python "$t/py" --require ref,jax >/dev/null 2>"$t/e"; rc=$?
[ $rc -eq 4 ] && grep -q "required but not runnable: jax: import jax failed" "$t/e" && ok "--require jax: exit 4, says why" || bad "--require jax: exit $rc: $(cat "$t/e")"
"$S" env --require nosuch >/dev/null 2>"$t/e"; rc=$?
[ $rc -eq 2 ] && ok "--require nosuch: exit 2" || bad "--require nosuch: exit $rc"
# cudnn: built or not, it cannot run without a device; the reason is given either way.
"$S" env --no-probe --require cudnn >/dev/null 2>"$t/e"; rc=$?
if nvidia-smi -L >/dev/null 2>&1; then [ $rc -eq 0 ] && ok "cudnn runnable with a GPU" || bad "cudnn with a GPU: exit $rc"
else [ $rc -eq 4 ] && grep -qE "cudnn: (no CUDA device|not built)" "$t/e" && ok "cudnn without a GPU: exit 4 ($(cat "$t/e"))" || bad "cudnn: exit $rc: $(cat "$t/e")"; fi
"$S" env --help | grep -q -- '--require' && ok "--help" || bad "--help"

# The installed framework venvs (`make deps-frameworks`): --require with every runnable one exits 0 and each version
# line names the version alone, from the package metadata.
V=${VENVS:-.venv-frameworks}
if [ -d "$V" ]; then
  "$S" env --venvs "$V" --json - > "$t/real.json" 2>/dev/null
  names=$(python3 -c 'import json,sys; print(",".join(f["name"] for f in json.load(open(sys.argv[1]))["frameworks"] if f["runnable"]))' "$t/real.json")
  if [ -z "$names" ]; then echo "skipped: no framework runnable in $V"
  else
    "$S" env --venvs "$V" --require "$names" > "$t/real" 2>&1; rc=$?
    [ $rc -eq 0 ] && ok "--require $names: exit 0" || bad "--require $names: exit $rc: $(tail -2 "$t/real")"
    python3 - "$t/real.json" <<'PY' && ok "every version is a version alone" || bad "a version line is not a version"
import json, re, sys
for f in json.load(open(sys.argv[1]))["frameworks"]:
    if f["runnable"]:
        assert re.fullmatch(r"[0-9][0-9A-Za-z.+_-]*", f["version"]), (f["name"], f["version"])
PY
  fi
else
  echo "skipped: no framework venvs in $V (make deps-frameworks)"
fi
exit $fail
