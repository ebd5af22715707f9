#!/bin/sh
# Installs the framework runners' packages (workloads/runners/requirements-frameworks.txt) from PyPI into
# one virtual environment per framework under .venv-frameworks/<venv>/ and records what each got
# (.venv-frameworks/<venv>/installed.txt, pip freeze). A venv that fails to install is reported, its reason left
# in <venv>/install-failed.txt (bench then reports its cells "unavailable: ... failed to install: reason"), and
# the others still install. Where `showdown env` sees a CUDA device the `gpu` requirements replace the `cpu` ones.
# Before installing it says how much it will install and roughly how long; with too little disk it says so in one
# line, installs nothing and exits 0 (what is installed is used).
# Usage: sh scripts/deps-frameworks.sh [--plan] [VENV...]   (default: every venv named in the requirements file)
#   --plan: print "venv<TAB>device<TAB>MB<TAB>requirements" per venv that would be installed, install nothing.
# Environment: PYTHON, REQ, VENV_ROOT, SHOWDOWN (the binary asked for the device, default ./showdown),
#   DEVICE (cpu|gpu: skip the detection), STRICT=1 (exit 1 when a venv failed; default for `make deps-frameworks`).
set -u
PYTHON=${PYTHON:-/usr/bin/python3}
REQ=${REQ:-workloads/runners/requirements-frameworks.txt}
ROOT=${VENV_ROOT:-.venv-frameworks}
SHOWDOWN=${SHOWDOWN:-./showdown}
STRICT=${STRICT:-1}
plan=0
[ "${1:-}" = --plan ] && { plan=1; shift; }
venvs=$*
[ -n "$venvs" ] || venvs=$(grep -v '^ *#' "$REQ" | sed -n 's/.*# *venv: *\([A-Za-z0-9_-]*\).*/\1/p' | awk '!seen[$0]++')

# cpu or gpu: a CUDA device that `showdown env` can see (environment.gpu.count), else cpu
device=${DEVICE:-}
if [ -z "$device" ]; then
  device=cpu
  n=$("$SHOWDOWN" env --no-probe --json - 2>/dev/null | "$PYTHON" -c \
      'import json,sys; print(json.load(sys.stdin)["environment"]["gpu"].get("count", 0))' 2>/dev/null)
  [ "${n:-0}" -gt 0 ] 2>/dev/null && device=gpu
fi

# requirements of venv $1 for $device: untagged lines and lines tagged with the device
reqs_of() {
  sed -n "s/^\([^#]*[^# ]\) *# *venv: *$1 *\$/\1/p; s/^\([^#]*[^# ]\) *# *venv: *$1 *$device *\$/\1/p" "$REQ"
}
# installed size in MB of venv $1 (the requirements file's measured figures; 1000 when it has none)
size_of() {
  mb=""
  [ "$device" = gpu ] && mb=$(sed -n "s/^# *size-mb-gpu:.* $1=\([0-9]*\).*/\1/p" "$REQ")
  [ -n "$mb" ] || mb=$(sed -n "s/^# *size-mb:.* $1=\([0-9]*\).*/\1/p" "$REQ")
  echo "${mb:-1000}"
}

todo=""; total=0
for v in $venvs; do
  reqs=$(reqs_of "$v")
  [ -n "$reqs" ] || { echo "deps-frameworks: no requirement for venv $v in $REQ" >&2; continue; }
  dir=$ROOT/$v
  if [ -f "$dir/installed.txt" ] && [ "$(cat "$dir/requirements.txt" 2>/dev/null)" = "$reqs" ]; then
    [ $plan = 1 ] || echo "deps-frameworks: $v up to date ($dir/installed.txt)"
    continue
  fi
  mb=$(size_of "$v")
  # shellcheck disable=SC2086
  [ $plan = 1 ] && printf '%s\t%s\t%s\t%s\n' "$v" "$device" "$mb" "$(echo $reqs)"
  todo="$todo $v"; total=$((total + mb))
done
[ $plan = 1 ] && exit 0
[ -n "$todo" ] || exit 0

"$PYTHON" -m venv --help >/dev/null 2>&1 || { echo "deps-frameworks: $PYTHON has no venv module (apt-get install python3-venv)" >&2; exit 1; }
mkdir -p "$ROOT"
# pip unpacks each wheel beside its cache copy: half as much again is needed while it installs
need=$((total * 3 / 2))
free=$(df -Pm "$ROOT" | awk 'NR == 2 {print $4}')
# about 17 s a GB measured on a quiet 2-core machine with a fast link, one install at a time (twice that with
# other work running); two at a time take ~2/3 of it
secs=$((total * 12 / 1000))
if [ "${free:-0}" -lt "$need" ]; then
  echo "deps-frameworks: too little disk: $((free / 1024)) GB free in $ROOT, the install of$todo needs ~$((need / 1024)) GB: not installing; going on with what is installed"
  exit 0
fi
echo "deps-frameworks: installing$todo ($device builds): ~$(awk "BEGIN {printf \"%.1f\", $total / 1024}") GB, about $(((secs + 59) / 60 + 1)) min ($((free / 1024)) GB free)"
# one venv: its own log and, when it fails, install-failed.txt with pip's reason (bench reads it)
install_one() {
  v=$1; reqs=$(reqs_of "$v"); dir=$ROOT/$v
  echo "deps-frameworks: $v: installing $(echo $reqs)"
  rm -f "$dir/installed.txt" "$dir/install-failed.txt"
  if ! { [ -x "$dir/bin/python" ] || "$PYTHON" -m venv "$dir"; }; then
    mkdir -p "$dir" && echo "python -m venv $dir failed" > "$dir/install-failed.txt"
    return
  fi
  # shellcheck disable=SC2086
  if "$dir/bin/python" -m pip install -q --disable-pip-version-check $reqs >"$dir/pip.log" 2>&1; then
    echo "$reqs" > "$dir/requirements.txt"
    "$dir/bin/python" -m pip freeze > "$dir/installed.txt"
    echo "deps-frameworks: $v: installed ($(wc -l < "$dir/installed.txt") packages, $dir/installed.txt)"
  else
    # the reason: pip's last ERROR line (or its last line), kept for bench and the report
    why=$(grep '^ERROR' "$dir/pip.log" | tail -1)
    [ -n "$why" ] || why=$(tail -1 "$dir/pip.log")
    echo "pip install $(echo $reqs): ${why:-no message} (see $dir/pip.log)" > "$dir/install-failed.txt"
    echo "deps-frameworks: $v: FAILED: $(cat "$dir/install-failed.txt")" >&2
  fi
}
# Two installs at a time (download, unpack and byte-compile leave a core idle in one pip): the venvs largest first,
# each to the lane with less to install so far; a lane installs its venvs one after another.
lane1="" lane2="" mb1=0 mb2=0
for v in $(for v in $todo; do echo "$(size_of "$v") $v"; done | sort -rn | awk '{print $2}'); do
  if [ $mb1 -le $mb2 ]; then lane1="$lane1 $v"; mb1=$((mb1 + $(size_of "$v")))
  else lane2="$lane2 $v"; mb2=$((mb2 + $(size_of "$v"))); fi
done
( for v in $lane1; do install_one "$v"; done ) &
( for v in $lane2; do install_one "$v"; done ) &
wait
failed=""
for v in $todo; do [ ! -f "$ROOT/$v/install-failed.txt" ] || failed="$failed $v"; done
[ -z "$failed" ] && exit 0
echo "deps-frameworks: failed:$failed (the others are installed)" >&2
[ "$STRICT" = 1 ] && exit 1
exit 0
