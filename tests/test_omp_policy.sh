#!/bin/bash
# test_omp_policy — the OpenMP wait policy showdown chooses when it starts (src/main.c omp_wait_policy): a
# user's OMP_WAIT_POLICY is kept and named; with other processes busy it sleeps (passive) and says how many
# tasks it saw; and what it set for itself does not leak into the framework runners it starts.
set -u
SD=${SHOWDOWN:-./showdown}
PY=${PYTHON:-/usr/bin/python3}
fail=0; t=$(mktemp -d); busy=()
trap 'for p in "${busy[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$t"' EXIT
ok()  { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
policy() { "$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["environment"]["omp_wait_policy"])' "$1"; }
quick() { # json-out extra-args...
  local out=$1; shift
  $SD bench --workload mnist_mlp --data synthetic --epochs 1 --batches 2 --backend ref --threads 1 --quiet \
     --no-db --json "$out" "$@" > "$t/stdout" 2> "$t/stderr"
}

# 1. the user's setting is kept, and named in the results
OMP_WAIT_POLICY=active quick "$t/user.json"; rc=$?
got=$(policy "$t/user.json" 2>&1)
if [ $rc -eq 0 ] && [ "$got" = "OMP_WAIT_POLICY=active (from the environment)" ]; then ok "user setting kept: '$got'"
else bad "user setting: exit $rc, policy '$got'"; cat "$t/stderr"; fi

# 2. two busy processes on the machine: passive, with the count; a runner started by this run sees the
#    user's environment (no OMP_WAIT_POLICY), not the one showdown gave itself
for i in 1 2; do ( while :; do :; done ) & busy+=($!); done
sleep 0.5
cat > "$t/envdump" <<EOF2
#!/bin/sh
env > "$t/runner.env"
echo "not a protocol line"
exit 3
EOF2
chmod +x "$t/envdump"
env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT $SD bench --workload mnist_mlp --data synthetic --epochs 1 --batches 2 \
   --backend ref --threads 1 --quiet --no-db --impl native,pytorch --runner "pytorch=$t/envdump" \
   --json "$t/busy.json" > "$t/stdout" 2> "$t/stderr"
got=$(policy "$t/busy.json" 2>&1)
case "$got" in
  "passive: "[1-9]*" other runnable task"*" when showdown started") ok "busy machine: '$got'" ;;
  *) bad "busy machine: policy '$got', expected passive with the count"; cat "$t/stderr" ;;
esac
if [ ! -s "$t/runner.env" ]; then bad "the fake runner did not run"
elif grep -q '^OMP_WAIT_POLICY=' "$t/runner.env"; then bad "OMP_WAIT_POLICY leaked into the runner: $(grep '^OMP_WAIT_POLICY=' "$t/runner.env")"
else ok "the runner's environment has no OMP_WAIT_POLICY"; fi
if grep -q '^SHOWDOWN_OMP_POLICY=set:' "$t/runner.env"; then bad "the re-exec marker leaked into the runner"
else ok "no re-exec marker in the runner's environment"; fi
exit $fail
