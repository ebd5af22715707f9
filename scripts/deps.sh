#!/bin/sh
# deps — installs the Debian packages showdown needs, then writes the signature of everything feature
# detection depends on (those packages' versions, the CUDA toolkit's files) to SIGFILE. The Makefile redoes
# build/config.mk whenever the signature changes, so installing or removing a package needs no `make config`.
# Usage: deps.sh MODE SIGFILE PKG...
#   MODE install: install what is missing (make report/test/deps); first: only on the first build (no
#   SIGFILE yet), later builds detect what is there and say what is missing; check: never install.
# QUIET=1 leaves out the "all present" line (make's restart after remaking build/config.mk).
set -u
mode=${1:?usage: deps.sh install|first|check SIGFILE PKG...}; sig=${2:?SIGFILE}; shift 2
CU=${CU:-/usr/local/cuda}
# One dpkg-query for all: "PACKAGE VERSION STATUS" for each known package (unknown ones are left out).
status() { dpkg-query -W -f='${Package} ${Version} ${Status}\n' "$@" 2>/dev/null; }
have=$(status "$@" | awk '/ install ok installed$/ {print $1}')
missing=""
for p in "$@"; do echo "$have" | grep -qx -- "$p" || missing="$missing $p"; done
install=0
case $mode in
  install) install=1 ;;
  first) [ -f "$sig" ] || install=1 ;;
  check) ;;
  *) echo "deps.sh: unknown mode '$mode' (expected install, first or check)" >&2; exit 2 ;;
esac
if [ -z "$missing" ]; then
  [ $install = 1 ] && [ "${QUIET:-}" != 1 ] && echo "deps: all $# Debian packages present"
elif [ $install = 1 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "deps: not root, cannot install:$missing (as root: apt-get install$missing)" >&2
    [ "$mode" = install ] && exit 1
  else
    mkdir -p "$(dirname "$sig")"
    log=$(dirname "$sig")/deps-install.log
    n=$(echo $missing | wc -w)
    echo "deps: installing $n Debian packages:$missing"
    echo "deps: (on a fresh Debian 12 with 2 cores this took 2-5 minutes; log: $log)"
    start=$(date +%s)
    if apt-get update -q >"$log" 2>&1 &&
       DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >>"$log" 2>&1; then
      echo "deps: installed $n packages in $(( $(date +%s) - start )) s"
    else
      echo "deps: apt-get failed, last lines of $log:" >&2; tail -n 15 "$log" >&2; exit 1
    fi
  fi
elif [ "$mode" = first ]; then
  echo "deps: not installed:$missing (building without them; \`make deps\` installs them)"
fi

# The signature: what detect.sh's answers depend on. Written only when it changes (make compares times).
{
  status "$@"
  for f in "$CU/bin/nvcc" "$CU/include/cudnn_version.h" "$CU/include/nccl.h" "$CU/lib64/libcudnn.so"; do
    if [ -e "$f" ]; then echo "$f $(stat -L -c '%s %Y' "$f")"; else echo "$f absent"; fi
  done
} > "$sig.new"
if cmp -s "$sig.new" "$sig"; then rm -f "$sig.new"; else mv "$sig.new" "$sig"; fi
