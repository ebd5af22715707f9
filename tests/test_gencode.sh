#!/bin/sh
# test_gencode — the GPU code inside the binary, read from its fat binary (no cuobjdump here): machine code
# (SASS) for sm_75 (T4, RTX 20xx: the oldest architecture CUDA 13 supports), sm_80, sm_90 and sm_100, and PTX
# for the lowest of them so that any newer GPU can JIT-compile showdown's kernels. Without sm_75 SASS or PTX
# old enough, a T4 runs cuDNN but fails every showdown kernel with "no kernel image is available".
set -u
SHOWDOWN=${SHOWDOWN:-./showdown}
PYTHON=${PYTHON:-python3}
[ -x "$SHOWDOWN" ] || { echo "missing $SHOWDOWN"; exit 1; }
# the loader's soname string is in the binary only when the cuDNN back-end was built
if ! grep -q 'libcudnn\.so\.' "$SHOWDOWN"; then
  echo "skipped: this build has no cuDNN back-end (no GPU code to check)"; exit 77
fi
"$PYTHON" - "$SHOWDOWN" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
MAGIC = struct.pack("<I", 0xBA55ED50)   # fatbin container header: magic, version, header size, payload size
elf, ptx = set(), set()
i = data.find(MAGIC)
while i >= 0:
    _magic, _ver, hsize, fsize = struct.unpack_from("<IHHQ", data, i)
    p, end = i + hsize, i + hsize + fsize
    while p < end:                      # entries: kind (1 PTX, 2 ELF), header size, payload size; arch at +28
        kind, _u, ehs, size = struct.unpack_from("<HHIQ", data, p)
        arch = struct.unpack_from("<I", data, p + 28)[0]
        (ptx if kind == 1 else elf).add(arch)
        p += ehs + size
    i = data.find(MAGIC, end)
print("SASS:", " ".join(f"sm_{a}" for a in sorted(elf)), "| PTX:", " ".join(f"compute_{a}" for a in sorted(ptx)))
fail = []
want = {75, 80, 90, 100}
if not want <= elf:
    fail.append("SASS missing for " + ", ".join(f"sm_{a}" for a in sorted(want - elf)))
if not ptx:
    fail.append("no PTX: GPUs newer than sm_%d cannot JIT the kernels" % max(elf or {0}))
elif elf and min(ptx) > min(elf):
    fail.append("PTX only for compute_%d: not the lowest architecture (sm_%d)" % (min(ptx), min(elf)))
for f in fail:
    print("FAIL:", f)
sys.exit(1 if fail else 0)
PY
