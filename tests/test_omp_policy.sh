#!/bin/bash
# test_omp_policy — the OpenMP wait policy showdown chooses when it starts (src/core/omp_policy.c): a user's
# OMP_WAIT_POLICY is kept and named; verify --rerun measures under the published policy (or names the
# difference); with other processes busy it sleeps (passive) and says how many tasks it saw, runnable tasks of the
# lowest priority (SCHED_IDLE, nice 19) not counted; and what it set for itself does not leak into the framework
# runners it starts.
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

# 2. verify --rerun measures the native cells under the policy they were published with: it re-executes itself
#    under a published OMP_WAIT_POLICY=active (a policy showdown never picks on its own, busy machine or not) and
#    the cells are compared; a user's own setting stands, and the difference is NOT-COMPARABLE, named
setpol() { "$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); d["environment"]["omp_wait_policy"] = sys.argv[2]
json.dump(d, open(sys.argv[3], "w"))' "$@"; }
here() { "$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["environment_here"]["omp_wait_policy"])' "$1"; }
quick "$t/pub.json"
setpol "$t/pub.json" "OMP_WAIT_POLICY=active (from the environment)" "$t/pub-active.json"
env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT $SD verify "$t/pub-active.json" --rerun --host-wait 0 --tolerance 100000 \
   --json "$t/v-active.json" > "$t/stdout" 2> "$t/stderr"; rc=$?
got=$(here "$t/v-active.json" 2>&1)
if [ "$got" = "OMP_WAIT_POLICY=active: as the published results (verify --rerun)" ] \
   && grep -q "published with OpenMP wait policy OMP_WAIT_POLICY=active" "$t/stderr"; then ok "verify --rerun adopts the published policy: '$got'"
else bad "adopting the published policy: exit $rc, here '$got'"; cat "$t/stdout" "$t/stderr"; fi
if [ $rc -eq 0 ] && grep -q "mnist_mlp .* REPRODUCED" "$t/stdout" && ! grep -q "openmp wait policy" "$t/stdout"; then
  ok "the cells measured under it are compared"
else bad "cells under the adopted policy: exit $rc"; cat "$t/stdout"; fi
# a run without a status (a crafted or older document: measured, as verify judges it) is adopted the same
"$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); [r.pop("status", None) for r in d["runs"]]
json.dump(d, open(sys.argv[2], "w"))' "$t/pub-active.json" "$t/pub-active-nostatus.json"
env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT $SD verify "$t/pub-active-nostatus.json" --rerun --host-wait 0 \
   --tolerance 100000 --json "$t/v-nostatus.json" > "$t/stdout" 2> "$t/stderr"; rc=$?
got=$(here "$t/v-nostatus.json" 2>&1)
if [ $rc -eq 0 ] && [ "$got" = "OMP_WAIT_POLICY=active: as the published results (verify --rerun)" ] \
   && ! grep -q "openmp wait policy" "$t/stdout"; then ok "a published run without a status: its policy adopted too"
else bad "a run without a status: exit $rc, here '$got'"; cat "$t/stdout" "$t/stderr"; fi
setpol "$t/pub.json" "spin (libgomp default): no other runnable task when showdown started" "$t/pub-spin.json"
OMP_WAIT_POLICY=passive $SD verify "$t/pub-spin.json" --rerun --host-wait 0 > "$t/stdout" 2> "$t/stderr"; rc=$?
if [ $rc -eq 9 ] && grep -q "mnist_mlp .* NOT-COMPARABLE .*openmp wait policy: published spin, here passive" "$t/stdout"; then
  ok "a user's other policy: NOT-COMPARABLE, named"
else bad "user policy against a published spin: exit $rc"; cat "$t/stdout" "$t/stderr"; fi

# 3. two busy processes on the machine: passive, with the count; a runner started by this run sees the
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

# 4. what counts as a competing task, on a /proc tree written here (SHOWDOWN_PROC): runnable tasks at the lowest
#    priority (SCHED_IDLE, nice 19) and sleeping ones do not, so spin; one runnable at normal priority does
task() { # pid name state nice policy: a task's stat line with fields 3..41 of proc(5)
  local f=() i
  for i in $(seq 1 38); do f+=(0); done
  f[15]=$4; f[37]=$5
  mkdir -p "$t/proc/$1/task/$1"
  echo "$1 ($2) $3 ${f[*]}" > "$t/proc/$1/task/$1/stat"
}
mkdir -p "$t/proc"; echo "procs_running 4" > "$t/proc/stat"
task 101 "chrt) (idle loop" R 0 5
task 102 "nice19 loop" R 19 0
task 103 "sleeper" S 0 0
got=$( (unset OMP_WAIT_POLICY GOMP_SPINCOUNT; SHOWDOWN_PROC="$t/proc" quick "$t/idle.json"); policy "$t/idle.json" 2>&1)
if [ "$got" = "spin (libgomp default): no other runnable task when showdown started" ]; then
  ok "runnable SCHED_IDLE and nice-19 tasks and a sleeping one do not compete: '$got'"
else bad "low-priority tasks: policy '$got', expected spin"; cat "$t/stderr"; fi
task 104 "busy" R 0 0
got=$( (unset OMP_WAIT_POLICY GOMP_SPINCOUNT; SHOWDOWN_PROC="$t/proc" quick "$t/normal.json"); policy "$t/normal.json" 2>&1)
if [ "$got" = "passive: 1 other runnable task when showdown started" ]; then ok "a runnable task at normal priority: '$got'"
else bad "one competing task: policy '$got', expected passive with 1"; cat "$t/stderr"; fi
exit $fail
