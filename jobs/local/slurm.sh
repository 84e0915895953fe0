#!/usr/bin/env bash
# A real Slurm cluster on this machine: munged, slurmctld and slurmd started from a temp dir that
# holds everything they write (config, key, socket, state, logs, pid files).
#
#   dir=$(jobs/local/slurm.sh start [--cpus N] [--max-array-size N])  # the state dir, node idle
#   export SLURM_CONF=$dir/slurm.conf    # then sbatch, srun, squeue, commsgd-sweep ...
#   jobs/local/slurm.sh stop "$dir"      # stops those daemons and removes the dir
#
# Needs root (slurmd starts jobs as their users) and Debian's slurm-wlm and munge. The node
# declares --cpus CPUs (default 8, more than this machine may have: the point is to run several
# small ranks per core, as the tests do). Ports: COMMSGD_SLURMCTLD_PORT (6817) and
# COMMSGD_SLURMD_PORT (6818). Nothing outside the temp dir is touched; a failed start cleans up.
#
# Limits stay at Slurm's defaults unless asked, so that what runs here runs on a site that kept
# them: MaxArraySize 1001 (array task indices 0..1000; --max-array-size N sets it, e.g. 5 for a
# test whose sweep must split into several arrays) and MaxJobCount 10000. What differs from
# Slurm's defaults, and why: one node with more CPUs than the machine may have (above);
# KillWait=5 (not 30) so that a cancelled test job is gone in seconds; ReturnToService=2 (a node
# that went down returns when its slurmd registers again); no accounting storage (no slurmdbd).
set -euo pipefail

usage() {
  echo "usage: $0 start [--cpus N] [--max-array-size N] | stop DIR" >&2
  exit 2
}

die() {
  echo "slurm.sh: $*" >&2
  exit 1
}

# Signals the pid in each pid file, then waits (up to 10 s) for them all to be gone.
stop_daemons() {
  local dir=$1 pids=() pid
  for f in "$dir"/slurmd.pid "$dir"/slurmctld.pid "$dir"/munged.pid; do
    [ -s "$f" ] && pid=$(<"$f") && kill -0 "$pid" 2>/dev/null && kill "$pid" && pids+=("$pid")
  done
  for _ in $(seq 100); do
    local alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" -eq 0 ] && return 0
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
}

# True when the pid file names a process that is gone (false while it is not written yet).
exited() {
  [ -s "$1" ] && ! kill -0 "$(<"$1")" 2>/dev/null
}

stop() {
  local dir=$1
  # Only a dir this script made: it holds our marker, so a typo cannot remove anything else.
  [ -f "$dir/commsgd-local-slurm" ] || die "$dir is not a local Slurm started by this script"
  stop_daemons "$dir"
  rm -rf "$dir"
}

write_config() {
  local dir=$1 cpus=$2 max_array_size=$3 host
  host=$(hostname -s)
  cat >"$dir/slurm.conf" <<CONF
ClusterName=commsgd-local
SlurmctldHost=$host
SlurmctldPort=${COMMSGD_SLURMCTLD_PORT:-6817}
SlurmdPort=${COMMSGD_SLURMD_PORT:-6818}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.socket
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
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
KillWait=5
MaxArraySize=$max_array_size
NodeName=$host CPUs=$cpus RealMemory=4000 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
}

start() {
  local cpus=8 max_array_size=1001
  while [ $# -gt 0 ]; do
    case $1 in
      --cpus) cpus=${2:?--cpus needs a number}; shift 2 ;;
      --max-array-size) max_array_size=${2:?--max-array-size needs a number}; shift 2 ;;
      *) usage ;;
    esac
  done
  [[ $max_array_size =~ ^[0-9]+$ ]] ||
    { echo "slurm.sh: --max-array-size: '$max_array_size' is not a number" >&2; exit 2; }
  [ "$(id -u)" -eq 0 ] || die "must run as root (slurmd runs jobs as their users)"
  for tool in munged mungekey slurmctld slurmd sinfo; do
    command -v "$tool" >/dev/null || die "$tool not found: apt-get install slurm-wlm munge"
  done

  local dir
  dir=$(mktemp -d /tmp/commsgd-slurm.XXXXXX)
  touch "$dir/commsgd-local-slurm"
  # Any failure from here on stops what was started and removes the dir.
  trap 'stop "$dir"' ERR
  mkdir -p "$dir/state" "$dir/spool"
  chmod 700 "$dir"

  mungekey --create --keyfile="$dir/munge.key" >/dev/null
  munged --key-file="$dir/munge.key" --socket="$dir/munge.socket" --pid-file="$dir/munged.pid" \
    --log-file="$dir/munged.log" --seed-file="$dir/munge.seed" --force

  write_config "$dir" "$cpus" "$max_array_size"
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -f "$SLURM_CONF"
  slurmd -f "$SLURM_CONF"

  # Up when the node reports idle; a daemon that cannot start says why in its log. Each sinfo is
  # bounded, as a controller that never answers would make it retry for minutes, and a daemon
  # that exited (its port taken by another Slurm, say) ends the wait at once.
  local deadline=$((SECONDS + 30)) why="the node did not become idle within 30 s"
  while [ "$SECONDS" -lt "$deadline" ]; do
    if [ "$(timeout 5 sinfo -h -o %t 2>/dev/null)" = idle ]; then
      trap - ERR
      echo "$dir"
      return 0
    fi
    if exited "$dir/slurmctld.pid" || exited "$dir/slurmd.pid"; then
      why="a daemon exited (its log says why)"
      break
    fi
    sleep 0.1
  done
  tail -n 5 "$dir"/slurmctld.log "$dir"/slurmd.log >&2 || true
  stop "$dir"
  die "$why"
}

case ${1:-} in
  start) shift; start "$@" ;;
  stop) [ $# -eq 2 ] || usage; stop "$2" ;;
  *) usage ;;
esac
