#!/bin/bash
# fresh-check — the README's two commands on a truly fresh Debian 12 root (debootstrap, minbase plus make; no
# CUDA inside, so the no-CUDA path), from a clean clone of this repository's HEAD. Asserts that the first
# `make report` builds oneDNN and PyTorch in and the report ran on dnnl; that `make test` there passes and its
# closing line counts every "skipped:" line, and that only what the root truly lacks (a GPU, CUDA, the
# optional PyPI frameworks, bf16 instructions on a CPU without them) is skipped; and that removing libdnnl-dev then `make` rebuilds without it and says so, installing it again
# and `make` rebuilds with it. Needs root and Debian's package mirror. Exit 0 only if every check holds.
# FRESH_DIR (default build/fresh) holds the root and the logs; FRESH_KEEP=1 keeps the root afterwards.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
work=${FRESH_DIR:-$top/build/fresh}
root=$work/root
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
start=$(date +%s)
failed=0
say() { echo "fresh-check: [$(( $(date +%s) - start )) s] $*"; }
fail() { say "FAIL: $*"; failed=1; }

[ "$(id -u)" = 0 ] || { echo "fresh-check: needs root (debootstrap, chroot)" >&2; exit 2; }
if ! command -v debootstrap >/dev/null; then
  say "installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null || { echo "fresh-check: cannot install debootstrap" >&2; exit 2; }
fi

# Daemons a test started inside the root (munged, slurmd) would hold its mounts: end every process whose root
# directory is the fresh root, then unmount. The root is deleted only when nothing is mounted below it any more
# (/dev and /sys are the host's, bind-mounted: deleting through them would delete the host's).
mounted() { awk -v r="$root/" 'index($2, r) == 1' /proc/mounts | grep -q .; }
unmount() {
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && kill -9 "${p#/proc/}" 2>/dev/null
  done
  for m in proc sys dev; do mountpoint -q "$root/$m" 2>/dev/null && { umount -R "$root/$m" || umount -R -l "$root/$m"; }; done
  ! mounted
}
cleanup() {
  if ! unmount; then echo "fresh-check: still mounted below $root, not deleting it" >&2; return; fi
  if [ "${FRESH_KEEP:-0}" != 1 ] && [ -d "$root" ]; then rm -rf --one-file-system "$root"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

unmount || { echo "fresh-check: $root still has mounts from an earlier run; unmount them first" >&2; exit 2; }
rm -rf --one-file-system "$root"
mkdir -p "$work"
say "debootstrap bookworm (minbase + make) into $root"
if ! debootstrap --variant=minbase --include=make bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1; then
  tail -n 20 "$work/debootstrap.log"; echo "fresh-check: debootstrap failed" >&2; exit 2
fi
# The same package sources as a Debian 12 install (and this host): the release, its updates and security.
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/"; : > "$root/etc/apt/sources.list"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
# The host's way to PyPI, as a machine on its network has it: a pip.conf whose certificate bundle includes a local
# (intercepting proxy's) CA is given the host's bundle, under a path the root's packages never rewrite.
if [ -f /etc/pip.conf ]; then
  cert=$(sed -n 's/^ *cert *= *//p' /etc/pip.conf | head -1)
  if [ -n "$cert" ] && [ -f "$cert" ]; then
    cp "$cert" "$root/etc/ssl-host-ca-bundle.crt"
    sed "s|^ *cert *=.*|cert = /etc/ssl-host-ca-bundle.crt|" /etc/pip.conf > "$root/etc/pip.conf"
  else
    cp /etc/pip.conf "$root/etc/pip.conf"
  fi
fi
size=$(du -sh "$root" | cut -f1)
# /sys with its submounts: slurmd (tests/test_slurm.sh) needs the cgroup file system, as on a booted machine.
mount -t proc proc "$root/proc" && mount --rbind /sys "$root/sys" && mount --make-rslave "$root/sys" &&
  mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev" ||
  { echo "fresh-check: cannot mount proc/sys/dev in the root" >&2; exit 2; }
[ -z "$(git -C "$top" status --porcelain --untracked-files=no)" ] ||
  say "note: uncommitted changes are not in the fresh copy (it is a clone of HEAD)"
git clone -q "$top" "$root/root/showdown" || { echo "fresh-check: git clone failed" >&2; exit 2; }
# CI has shared/ (the recorded GitHub exchanges the HTTP tests replay) beside the clone: so does the root.
[ -d "$top/../shared" ] && cp -r "$top/../shared" "$root/root/shared"
say "fresh root ready ($size), tree $(git -C "$top" rev-parse --short=12 HEAD)"

# Run a command in the root as a new user would: a login-like clean environment, in the clone.
in_root() {
  env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 TERM=dumb \
    chroot "$root" /bin/bash -c "cd /root/showdown && $1"
}
timed() { # name command: runs it in the root, output to $work/NAME.log, prints the wall time
  local t0=$(date +%s) rc
  in_root "$2" >"$work/$1.log" 2>&1; rc=$?
  say "$1: exit $rc in $(( $(date +%s) - t0 )) s (log: $work/$1.log)"
  return $rc
}

# 1. make report on the fresh root. The frameworks' install (12 GB from PyPI) and their cells take longer than CI's
# budget allows beside make test, so CI checks the path from nothing with the native cells
# (FRESH_FRAMEWORKS=all runs the whole default, docs/showdown.md).
timed make-report "make report REPORT_FRAMEWORKS=${FRESH_FRAMEWORKS:-none}" ||
  { fail "make report failed:"; tail -n 30 "$work/make-report.log"; }
grep -E '^(deps|feature|config):' "$work/make-report.log" | sed 's/^/    /'
grep -q '^HAVE_DNNL := 1' "$root/root/showdown/build/config.mk" || fail "the first build has no oneDNN (build/config.mk)"
grep -q '^HAVE_TORCH := 1' "$root/root/showdown/build/config.mk" || fail "the first build found no PyTorch (build/config.mk)"
if in_root "./showdown env --require ref,dnnl,pytorch" >"$work/env.log" 2>&1; then
  say "showdown env: ref, dnnl and pytorch runnable"; sed -n '/^back-ends/,/^data sets/p' "$work/env.log" | grep -v '^$' | sed 's/^/    /'
else
  fail "showdown env --require ref,dnnl,pytorch: $(tail -n 1 "$work/env.log")"
fi
backends=$(in_root "python3 -c 'import json; d=json.load(open(\"out/bench/report-bench.json\")); print(\" \".join(sorted({r[\"backend\"] for r in d[\"runs\"] if r[\"implementation\"] == \"native\"})))'" 2>&1)
if [ "$backends" = dnnl ]; then say "the report's native runs ran on: $backends"
else fail "the report's native runs ran on '$backends', expected dnnl"; fi
[ -s "$root/root/showdown/out/showdown.pdf" ] && say "out/showdown.pdf: $(stat -c %s "$root/root/showdown/out/showdown.pdf") bytes" ||
  fail "no out/showdown.pdf"

# 2. make test: passes, its skipped count is the number of "skipped:" lines, only the GPU is skipped.
timed make-test "make test" || fail "make test failed"
closing=$(grep -E '^tests: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$work/make-test.log" | tail -n 1)
say "make test: $closing"
nskip=$(echo "$closing" | sed -n 's/.* \([0-9]*\) skipped$/\1/p')
nlines=$(grep -c 'skipped:' "$work/make-test.log")
[ -n "$closing" ] || fail "make test printed no closing line"
[ "${nskip:-x}" = "$nlines" ] || fail "the closing line says ${nskip:-?} skipped, the log has $nlines skipped: lines"
grep 'skipped:' "$work/make-test.log" | sed 's/^/    /'
# The root lacks a GPU, the CUDA toolkit and the PyPI frameworks (`make deps-frameworks`, optional by design);
# bf16 skips are what the root lacks only on a CPU without AVX512_BF16 and AMX (the host's CPU is the root's).
nobf16='^$'
grep -qwE 'avx512_bf16|amx_bf16' /proc/cpuinfo || nobf16='no avx512_bf16 on this CPU'
other=$(grep 'skipped:' "$work/make-test.log" | grep -viE 'cuda|gpu|cudnn|nccl|device' |
        grep -vE 'make deps-frameworks|\.venv-frameworks' | grep -vE "$nobf16" || true)
[ -z "$other" ] || fail "skipped for a reason other than the missing GPU/CUDA/PyPI frameworks: $(echo "$other" | head -n 3)"

# 3. Removing and reinstalling libdnnl-dev: each `make` redoes the detection and says so.
in_root "DEBIAN_FRONTEND=noninteractive apt-get remove -y -q libdnnl-dev" >"$work/dnnl-remove.log" 2>&1 ||
  fail "apt-get remove libdnnl-dev"
timed make-without-dnnl "make" || fail "make after removing libdnnl-dev failed"
grep -q '^config: oneDNN was built before and is not available now' "$work/make-without-dnnl.log" &&
  grep -q '^HAVE_DNNL := 0' "$root/root/showdown/build/config.mk" &&
  in_root "./showdown env --no-probe" | grep -qE '^  dnnl +not built' &&
  say "libdnnl-dev removed: make rebuilt without oneDNN and said: $(grep '^config: oneDNN' "$work/make-without-dnnl.log")" ||
  fail "make after removing libdnnl-dev did not rebuild without it (see $work/make-without-dnnl.log)"
in_root "DEBIAN_FRONTEND=noninteractive apt-get install -y -q libdnnl-dev" >"$work/dnnl-install.log" 2>&1 ||
  fail "apt-get install libdnnl-dev"
timed make-with-dnnl "make" || fail "make after reinstalling libdnnl-dev failed"
grep -q '^config: oneDNN is now available' "$work/make-with-dnnl.log" &&
  in_root "./showdown env --require dnnl --no-probe" >/dev/null 2>&1 &&
  say "libdnnl-dev installed again: make rebuilt with oneDNN and said: $(grep '^config: oneDNN' "$work/make-with-dnnl.log")" ||
  fail "make after reinstalling libdnnl-dev did not rebuild with it (see $work/make-with-dnnl.log)"

say "wall time $(( $(date +%s) - start )) s: $([ $failed = 0 ] && echo PASS || echo FAIL)"
exit $failed
