#!/usr/bin/env bash
# A single-node SLURM on this machine, for the tests and for trying the
# batch scripts on a laptop: its own munged, slurmctld and slurmd, with
# every file (configuration, munge key and socket, state, logs, PIDs) in
# one folder, so it touches nothing of a SLURM or munge the machine may run.
#
#   deploy/slurm/local-cluster.sh start    # idempotent: a running one is kept
#   deploy/slurm/local-cluster.sh status   # up or down; prints the export line
#   deploy/slurm/local-cluster.sh stop     # stops the daemons by their PIDs
#   export SLURM_CONF=/tmp/cellgan-slurm/slurm.conf   # then sbatch, squeue, ...
#
# Variables:
#   CELLGAN_SLURM_DIR   the folder (default /tmp/cellgan-slurm); one cluster
#                       per folder, so several can run side by side
#   CELLGAN_SLURM_CPUS  CPUs the node declares (default 8, whatever nproc
#                       says, so that W + 1 ranks fit on 2 real cores; the
#                       ranks then share the cores)
#   CELLGAN_SLURM_PORT  slurmctld's port; slurmd takes the next one (default:
#                       the first free pair from 6817 up)
#   CELLGAN_SLURM_REQUEUE_DELAY  seconds a requeued job waits before it starts
#                       again (cred_expire; default 10, SLURM's own is 120)
#
# Needs root: slurmd starts every job as its user and munged runs as the
# `munge` user (Debian's slurm-wlm and munge, from deploy/install-deps.sh).
# As another user it stops with an error saying so. Exit: 0, or 1 with one
# line `local-cluster: error: ...` (the daemons' logs are in the folder).
set -euo pipefail

dir=${CELLGAN_SLURM_DIR:-/tmp/cellgan-slurm}
conf=$dir/slurm.conf
log() { echo "local-cluster: $*" >&2; }
die() { log "error: $*"; exit 1; }

# pid_alive NAME: the daemon's PID file names a live process of that name.
pid_alive() {
  local f=$dir/$1.pid pid
  [ -s "$f" ] || return 1
  pid=$(cat "$f")
  [ -r "/proc/$pid/comm" ] && [ "$(cat "/proc/$pid/comm")" = "$1" ]
}

# port_free PORT: nothing listens on it (a bind to it succeeds).
port_free() {
  python3 -c 'import socket, sys
s = socket.socket()
try:
    s.bind(("", int(sys.argv[1])))
except OSError:
    sys.exit(1)' "$1"
}

node_idle() {
  SLURM_CONF=$conf sinfo -h -o '%t' 2>/dev/null | grep -Eq '^(idle|mix|alloc)'
}

status() {
  local up=1 d
  for d in munged slurmctld slurmd; do
    if pid_alive "$d"; then log "$d running (pid $(cat "$dir/$d.pid"))"; else log "$d not running"; up=0; fi
  done
  if [ "$up" -eq 1 ] && node_idle; then
    log "up: $dir"
    echo "export SLURM_CONF=$conf"
    return 0
  fi
  log "down: $dir"
  return 1
}

write_config() {
  local host cpus port expire
  host=$(hostname -s)
  cpus=${CELLGAN_SLURM_CPUS:-8}
  port=${CELLGAN_SLURM_PORT:-}
  # The credential lifetime is also how long a requeued job waits before it
  # starts again (120 s by default). Starting it sooner by hand (scontrol
  # update StartTime=now) can make the start fail ("Job credential revoked").
  expire=${CELLGAN_SLURM_REQUEUE_DELAY:-10}
  if [ -z "$port" ]; then
    port=6817
    while ! port_free "$port" || ! port_free $((port + 1)); do
      port=$((port + 2))
      [ "$port" -lt 6917 ] || die "no free pair of ports in 6817..6916: set CELLGAN_SLURM_PORT"
    done
  fi
  cat >"$conf" <<EOF
# Written by deploy/slurm/local-cluster.sh: a single-node SLURM in $dir.
ClusterName=cellgan-local
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket,cred_expire=$expire
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# Look for startable jobs (a requeued one whose delay is over) every 2 s.
SchedulerParameters=sched_interval=2,bf_interval=2
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
KillWait=10
NodeName=$host CPUs=$cpus Boards=1 SocketsPerBoard=1 CoresPerSocket=$cpus ThreadsPerCore=1 RealMemory=16000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
}

start_munged() {
  pid_alive munged && return 0
  install -d -m 0700 -o munge -g munge "$dir/munge"
  if [ ! -s "$dir/munge/munge.key" ]; then
    dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
    chown munge:munge "$dir/munge/munge.key"
    chmod 0400 "$dir/munge/munge.key"
  fi
  # --force: the folder may sit under /tmp, whose sticky, world-writable
  # permissions munged would otherwise refuse.
  runuser -u munge -- /usr/sbin/munged --force --socket="$dir/munge/munge.socket" \
    --key-file="$dir/munge/munge.key" --pid-file="$dir/munge/munged.pid" \
    --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed" \
    || die "munged did not start: see $dir/munge/munged.log"
  cp "$dir/munge/munged.pid" "$dir/munged.pid"
}

start() {
  [ "$(id -u)" -eq 0 ] || die "needs root (slurmd starts jobs as their users, munged runs as munge): run it with sudo"
  local d
  for d in munged slurmctld slurmd; do
    command -v "$d" >/dev/null || [ -x "/usr/sbin/$d" ] || die "$d is not installed: run deploy/install-deps.sh (slurm-wlm, munge)"
  done
  if pid_alive munged && pid_alive slurmctld && pid_alive slurmd; then
    log "already running in $dir"
    status
    return
  fi
  mkdir -p "$dir/state" "$dir/spool"
  [ -f "$conf" ] && pid_alive slurmctld || write_config
  start_munged
  if ! pid_alive slurmctld; then
    /usr/sbin/slurmctld -f "$conf" || die "slurmctld did not start: see $dir/slurmctld.log"
  fi
  if ! pid_alive slurmd; then
    /usr/sbin/slurmd -f "$conf" || die "slurmd did not start: see $dir/slurmd.log"
  fi
  local i
  for i in $(seq 1 100); do
    if node_idle; then status; return; fi
    sleep 0.2
  done
  die "the node did not come up within 20 s: see $dir/slurmctld.log and $dir/slurmd.log"
}

stop() {
  local d pid i
  for d in slurmd slurmctld munged; do
    pid_alive "$d" || continue
    pid=$(cat "$dir/$d.pid")
    kill "$pid"
    for i in $(seq 1 50); do
      [ -e "/proc/$pid" ] || break
      sleep 0.2
    done
    if [ -e "/proc/$pid" ]; then log "$d (pid $pid) still there after 10 s: SIGKILL"; kill -9 "$pid" || true; fi
    log "stopped $d (pid $pid)"
  done
  rm -f "$dir/munged.pid"
}

case ${1:-} in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status   (folder: \$CELLGAN_SLURM_DIR, default /tmp/cellgan-slurm)" >&2; exit 2 ;;
esac
