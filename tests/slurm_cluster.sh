# slurm_cluster.sh — sourced by tests/test_slurm.sh: a private one-node Slurm cluster on this machine
# (munged on its own socket and key, slurmctld and slurmd with a generated slurm.conf, all state and logs
# under $SC_DIR). slurm_cluster_start returns 77 with "skipped: WHY" when Slurm cannot run here;
# slurm_cluster_stop stops exactly the daemons it started (by their pids).
# Every Slurm command must see SLURM_CONF (exported by slurm_cluster_start).

SC_PIDS=""

sc_skip() { echo "skipped: $*"; return 77; }

# A TCP port nobody listens on, from a range derived from our pid.
sc_free_port() {
  local p=$1
  while [ "$p" -lt 65000 ]; do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
    p=$((p + 1))
  done
  return 1
}

slurm_cluster_start() {
  SC_DIR=$1
  for b in munged mungekey slurmctld slurmd sbatch sinfo squeue scontrol; do
    command -v "$b" >/dev/null 2>&1 || [ -x "/usr/sbin/$b" ] || { sc_skip "$b not installed (make deps installs slurm-wlm and munge)"; return 77; }
  done
  [ "$(id -u)" = 0 ] || { sc_skip "the private cluster runs slurmd, which needs root"; return 77; }
  export PATH="$PATH:/usr/sbin"
  mkdir -p "$SC_DIR/munge" "$SC_DIR/state" "$SC_DIR/spool" "$SC_DIR/log"
  chmod 700 "$SC_DIR/munge"
  # munge: our own key and socket, so nothing outside this directory is used or changed
  if ! mungekey --create --keyfile="$SC_DIR/munge/munge.key" >"$SC_DIR/log/mungekey.log" 2>&1; then
    dd if=/dev/urandom of="$SC_DIR/munge/munge.key" bs=1024 count=1 2>/dev/null
  fi
  chmod 400 "$SC_DIR/munge/munge.key"
  SC_SOCK="$SC_DIR/munge/munge.socket"
  munged --force --socket="$SC_SOCK" --key-file="$SC_DIR/munge/munge.key" --pid-file="$SC_DIR/munge/munged.pid" \
    --log-file="$SC_DIR/log/munged.log" --seed-file="$SC_DIR/munge/munged.seed" >"$SC_DIR/log/munged.out" 2>&1 \
    || { cat "$SC_DIR/log/munged.out" "$SC_DIR/log/munged.log" 2>/dev/null | tail -5; sc_skip "munged does not start"; return 77; }
  SC_PIDS="$SC_PIDS $(cat "$SC_DIR/munge/munged.pid")"

  local host cpus mem ctlport dport
  host=$(hostname -s)
  cpus=$(nproc)
  mem=$(awk '/MemTotal/ {print int($2 / 1024 / 2)}' /proc/meminfo)
  ctlport=$(sc_free_port $((20000 + $$ % 20000)))
  dport=$(sc_free_port $((ctlport + 1)))
  export SLURM_CONF="$SC_DIR/slurm.conf"   # addresses are 127.0.0.1: no reliance on the hostname resolving
  cat >"$SLURM_CONF" <<EOF
ClusterName=showdowntest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctlport
SlurmdPort=$dport
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SC_SOCK
StateSaveLocation=$SC_DIR/state
SlurmdSpoolDir=$SC_DIR/spool/%n
SlurmctldPidFile=$SC_DIR/slurmctld.pid
SlurmdPidFile=$SC_DIR/slurmd.pid
SlurmctldLogFile=$SC_DIR/log/slurmctld.log
SlurmdLogFile=$SC_DIR/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
MinJobAge=3600
InactiveLimit=0
KillWait=5
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  slurmctld -D -i -f "$SLURM_CONF" >"$SC_DIR/log/slurmctld.out" 2>&1 &
  SC_PIDS="$SC_PIDS $!"
  slurmd -D -f "$SLURM_CONF" -N "$host" >"$SC_DIR/log/slurmd.out" 2>&1 &
  SC_PIDS="$SC_PIDS $!"
  local i state=""
  for i in $(seq 1 60); do
    state=$(sinfo -h -n "$host" -o '%T' 2>/dev/null | head -1)
    case "$state" in idle|idle*) return 0 ;; esac
    sleep 1
  done
  echo "slurm: node state '$state' after 60 s; logs:"
  tail -n 15 "$SC_DIR"/log/slurmctld.log "$SC_DIR"/log/slurmd.log "$SC_DIR"/log/*.out 2>/dev/null
  sc_skip "the one-node Slurm cluster did not come up (see the logs above)"
  return 77
}

slurm_cluster_stop() {
  local p
  for p in $SC_PIDS; do kill "$p" 2>/dev/null; done
  for p in $SC_PIDS; do
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$p" 2>/dev/null
  done
  SC_PIDS=""
}
