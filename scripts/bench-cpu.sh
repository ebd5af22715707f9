#!/bin/sh
# bench-cpu — the native engine (`showdown perf --backend dnnl`) against PyTorch on every workload of
# workloads/*.json, interleaved in one run, with PyTorch as shipped and at its best setting found per workload
# (scripts/bench_table.py runs and times the cells, scripts/torch_perf.py is one PyTorch cell).
# PyTorch: the newest installed, .venv-frameworks/torch (PyPI, `make deps-frameworks`) when it imports,
# else $PYTHON's (Debian's python3-torch); none: native columns only. TensorFlow and JAX (scripts/tf_perf.py,
# scripts/jax_perf.py): VENVS/tensorflow and VENVS/jax when they import, a second table; absent: no columns.
# Prints the table and writes OUT/cpu.json. Usage: scripts/bench-cpu.sh [SHOWDOWN] [OUT]
# Environment: WORKLOADS (comma list, default all), ROUNDS (2), SECONDS_PER_CELL (3), THREADS (all cores),
# PEERS (torch,tensorflow,jax,paddle,mindspore,tinygrad: the frameworks compared), COMPILE (workloads whose torch.compile candidate is tried), BATCH ("w=n ..." batch overrides), VENVS,
# PROFILE (per-layer profiles of the N workloads furthest below 2x the best peer; 1), CONFIRM (extra rounds of an
# unconfirmed cell, 3), REPEAT (timed windows per phase, 7), HOST_WAIT_TOTAL (s), TIMEOUT (s a cell), PRECISION
# (fp32, or bf16: both sides in bf16 mixed precision, docs/precision.md), GROUPED (1: a framework's candidates of a
# workload in one process, one canary per workload: the default report's quick pass), GIVE_UP (1: a framework that
# timed out runs none of the later workloads), SKIP ("side=setting ...": settings not measured).
set -eu
SHOWDOWN=${1:-./showdown}
OUT=${2:-out/bench}
PYTHON=${PYTHON:-/usr/bin/python3}
VENVS=${VENVS:-.venv-frameworks}
WORKLOADS=${WORKLOADS:-$(ls workloads/*.json | sed 's|.*/||; s|\.json$||' | paste -sd, -)}
# PEERS: the frameworks compared (comma list of torch, tensorflow, jax, paddle, mindspore, tinygrad; default all
# where installed)
PEERS=${PEERS:-torch,tensorflow,jax,paddle,mindspore,tinygrad}
has_peer() { case ",$PEERS," in *,"$1",*) return 0;; esac; return 1; }
torch_py=""
if ! has_peer torch; then
  :
elif [ -x "$VENVS/torch/bin/python" ] && "$VENVS/torch/bin/python" -c 'import torch, numpy' 2>/dev/null; then
  torch_py=$VENVS/torch/bin/python
elif "$PYTHON" -c 'import torch, numpy' 2>/dev/null; then
  torch_py=$PYTHON
else
  echo "bench-cpu: no Python here imports torch ($VENVS/torch, $PYTHON): PyTorch columns skipped" >&2
fi
set -- --showdown "$SHOWDOWN" --out "$OUT" --workload "$WORKLOADS" --torch-python "$torch_py" \
       --precision "${PRECISION:-fp32}" --rounds "${ROUNDS:-2}" --seconds "${SECONDS_PER_CELL:-3}" --threads "${THREADS:-$(nproc)}" --venvs "$VENVS"
[ -z "${COMPILE+x}" ] || set -- "$@" --compile "$COMPILE"
has_peer tensorflow || set -- "$@" --tf-python ""
has_peer jax || set -- "$@" --jax-python ""
for p in paddle mindspore tinygrad; do has_peer $p && set -- "$@" --peer-python "$p=auto"; done
[ -z "${PROFILE:-}" ] || set -- "$@" --profile "$PROFILE"
# the default report's quick pass: one round, no confirmation rounds, a short wait for a quiet host
[ -z "${CONFIRM:-}" ] || set -- "$@" --confirm "$CONFIRM"
[ -z "${REPEAT:-}" ] || set -- "$@" --repeat "$REPEAT"
[ -z "${HOST_WAIT_TOTAL:-}" ] || set -- "$@" --host-wait-total "$HOST_WAIT_TOTAL"
[ -z "${TIMEOUT:-}" ] || set -- "$@" --timeout "$TIMEOUT"
[ "${GROUPED:-0}" = 0 ] || set -- "$@" --grouped
[ "${GIVE_UP:-0}" = 0 ] || set -- "$@" --give-up
for s in ${SKIP:-}; do set -- "$@" --skip "$s"; done
# densenet121_xray trains at batch 64 in ~25 GB natively (~384 MiB an example; PyTorch ~200): both sides run
# it at a batch that fits beside other work on a 24 GB machine. BATCH="w=n ..." replaces the list.
for b in ${BATCH-densenet121_xray=16}; do set -- "$@" --batch "$b"; done
exec "$PYTHON" scripts/bench_table.py "$@"
