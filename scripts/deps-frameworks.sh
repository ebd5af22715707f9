#!/bin/sh
# Installs the framework runners' packages (workloads/runners/requirements-frameworks.txt) from PyPI into
# one virtual environment per framework under .venv-frameworks/<venv>/ and records what each got
# (.venv-frameworks/<venv>/installed.txt, pip freeze). A venv that fails to install is reported and left
# without installed.txt (its runners then report "unavailable"); the others still install.
# Usage: sh scripts/deps-frameworks.sh [VENV...]   (default: every venv named in the requirements file)
set -u
PYTHON=${PYTHON:-/usr/bin/python3}
REQ=${REQ:-workloads/runners/requirements-frameworks.txt}
ROOT=${VENV_ROOT:-.venv-frameworks}
venvs=$*
[ -n "$venvs" ] || venvs=$(grep -v '^ *#' "$REQ" | sed -n 's/.*# *venv: *\([A-Za-z0-9_-]*\).*/\1/p' | awk '!seen[$0]++')
"$PYTHON" -m venv --help >/dev/null 2>&1 || { echo "deps-frameworks: $PYTHON has no venv module (apt-get install python3-venv)" >&2; exit 1; }
mkdir -p "$ROOT"
failed=""
for v in $venvs; do
  reqs=$(sed -n "s/^\([^#]*[^# ]\) *# *venv: *$v *\$/\1/p" "$REQ")
  [ -n "$reqs" ] || { echo "deps-frameworks: no requirement for venv $v in $REQ" >&2; failed="$failed $v"; continue; }
  dir=$ROOT/$v
  if [ -f "$dir/installed.txt" ] && [ "$(cat "$dir/requirements.txt" 2>/dev/null)" = "$reqs" ]; then
    echo "deps-frameworks: $v up to date ($dir/installed.txt)"; continue
  fi
  echo "deps-frameworks: $v: installing $(echo $reqs)"
  rm -f "$dir/installed.txt"
  [ -x "$dir/bin/python" ] || "$PYTHON" -m venv "$dir" || { failed="$failed $v"; continue; }
  # shellcheck disable=SC2086
  if "$dir/bin/python" -m pip install -q --disable-pip-version-check $reqs >"$dir/pip.log" 2>&1; then
    echo "$reqs" > "$dir/requirements.txt"
    "$dir/bin/python" -m pip freeze > "$dir/installed.txt"
    echo "deps-frameworks: $v: installed ($(wc -l < "$dir/installed.txt") packages, $dir/installed.txt)"
  else
    echo "deps-frameworks: $v: FAILED, see $dir/pip.log:" >&2; tail -5 "$dir/pip.log" >&2
    failed="$failed $v"
  fi
done
[ -z "$failed" ] || { echo "deps-frameworks: failed:$failed" >&2; exit 1; }
