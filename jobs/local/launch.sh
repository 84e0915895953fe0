#!/usr/bin/env bash
# Launches an MPI program (commsgd-train, commsgd-bench) on this machine with mpirun, either
# plainly or across emulated hosts whose links are shaped to a bandwidth:
#
#   jobs/local/launch.sh -n 4 --network emulated:1gbit -- build/release/trainer/commsgd-train ...
#   jobs/local/launch.sh -n 4 --network local -- PROGRAM ARGS...
#
# --network emulated:RATE  one emulated host per rank (jobs/local/hosts.sh; root), Open MPI over
#                          TCP between them; RATE as tc writes it (100mbit, 1gbit, 10gbit).
# --network local          plain mpirun on this machine (shared memory between the ranks).
# The hosts are torn down when the program ends, fails or is interrupted. COMMSGD_NETWORK is set
# to the --network value, so commsgd-train records it as the run's network.
#
# A host whose link fails: mpirun only ends the job once it declares that host's daemon lost,
# which Open MPI does by TCP keepalive on its control connections, by default after 5 to 8
# minutes. Here a host is declared lost after 20 to 25 s without an answer (keepalive after 5 s
# idle, then 4 probes 5 s apart; OMPI_MCA_oob_tcp_keepalive_* in the environment override it):
# sooner than the trainer's stall watchdog gives the launcher (commsgd-train --help,
# --comm-timeout), and long enough that a link that drops for a few seconds comes back first.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() {
  echo "usage: $0 -n RANKS [--network local|emulated:RATE] -- PROGRAM [ARGS...]" >&2
  exit 2
}

ranks=
network=local
while [ $# -gt 0 ]; do
  case $1 in
    -n) ranks=${2:-}; shift 2 || usage ;;
    --network) network=${2:-}; shift 2 || usage ;;
    --) shift; break ;;
    *) usage ;;
  esac
done
[[ $ranks =~ ^[1-9][0-9]*$ ]] || usage
[ $# -ge 1 ] || usage

export COMMSGD_NETWORK=$network OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
# Ranks get 3 s between mpirun's SIGTERM and SIGKILL (default 1 s) to record how their run ended.
mpirun=(mpirun -np "$ranks" --oversubscribe --bind-to none --mca odls_base_sigkill_timeout 3)
[ "$(id -u)" -eq 0 ] && mpirun+=(--allow-run-as-root)

case $network in
  local)
    exec "${mpirun[@]}" "$@"
    ;;
  emulated:*)
    export OMPI_MCA_oob_tcp_keepalive_time=${OMPI_MCA_oob_tcp_keepalive_time:-5} \
      OMPI_MCA_oob_tcp_keepalive_intvl=${OMPI_MCA_oob_tcp_keepalive_intvl:-5} \
      OMPI_MCA_oob_tcp_keepalive_probes=${OMPI_MCA_oob_tcp_keepalive_probes:-4}
    hosts_dir=$("$here/hosts.sh" up "$ranks" "${network#emulated:}")
    trap '"$here/hosts.sh" down "$hosts_dir"' EXIT
    trap 'exit 130' INT TERM
    subnet=$(<"$hosts_dir/subnet")
    host_list=$(awk '{ printf "%s%s:1", sep, $1; sep = "," }' "$hosts_dir/hosts")
    export COMMSGD_HOSTS_DIR=$hosts_dir
    # The hosts share this machine's /tmp and its host name, so Open MPI would give them all one
    # session dir: mpirun and each host get a TMPDIR of their own (netns-rsh.sh sets the hosts').
    # Otherwise another mpirun's clean-up can remove theirs, and daemons creating the same
    # directories at once fail with "File exists". A session base set for Open MPI would take
    # precedence over TMPDIR, and give them all one again.
    unset OMPI_MCA_orte_tmpdir_base
    mkdir -p "$hosts_dir/tmp/launcher"
    TMPDIR=$hosts_dir/tmp/launcher "${mpirun[@]}" --host "$host_list" \
      --mca plm_rsh_agent "$here/netns-rsh.sh" \
      --mca btl tcp,self --mca btl_tcp_if_include "$subnet" --mca oob_tcp_if_include "$subnet" \
      -x COMMSGD_NETWORK -x OMP_NUM_THREADS "$@"
    ;;
  *)
    echo "launch.sh: --network '$network': expected local or emulated:RATE (e.g. emulated:1gbit)" >&2
    exit 2
    ;;
esac
