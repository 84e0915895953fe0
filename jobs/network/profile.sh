#!/usr/bin/env bash
# Network profiles: the transport settings of Open MPI, UCX and NCCL for one kind of network.
#
#   source jobs/network/profile.sh ethernet     # in a job script: exports the profile's variables
#   jobs/network/profile.sh infiniband          # prints them (NAME=VALUE lines), changes nothing
#
# ethernet    Open MPI over TCP between nodes (shared memory within one), NCCL over sockets,
#             on the first interface that is up named en* or eth* (override: COMMSGD_ETH_IFACE).
# infiniband  Open MPI over UCX, NCCL over IB verbs, on the HCA behind the first ib* interface that
#             is up (override: COMMSGD_IB_HCA, e.g. mlx5_0; port COMMSGD_IB_PORT, default 1).
# local       nothing set: Open MPI and NCCL choose (one machine, or a launcher that sets them).
# Every profile exports COMMSGD_NETWORK=<profile>, which commsgd-train records as the run's
# network; the variables themselves are recorded in the run's config under network_environment.

# First network interface that is up whose name matches the pattern (interfaces that are not
# physical report "unknown" rather than "up" and are skipped).
commsgd_first_up_interface() {
  local pattern=$1 path name
  for path in /sys/class/net/*; do
    name=${path##*/}
    # shellcheck disable=SC2053  # the pattern is a glob on purpose
    [[ $name == $pattern ]] && [ "$(cat "$path/operstate" 2>/dev/null)" = up ] && {
      echo "$name"
      return 0
    }
  done
  return 1
}

commsgd_network_profile() {
  local profile=$1 iface hca port
  case $profile in
    ethernet)
      iface=${COMMSGD_ETH_IFACE:-$(commsgd_first_up_interface 'en*' ||
        commsgd_first_up_interface 'eth*')} || {
        echo "network profile ethernet: no en* or eth* interface is up; set COMMSGD_ETH_IFACE" >&2
        return 2
      }
      export OMPI_MCA_pml=ob1 OMPI_MCA_btl=tcp,self,vader OMPI_MCA_btl_tcp_if_include=$iface
      export OMPI_MCA_oob_tcp_if_include=$iface NCCL_IB_DISABLE=1 NCCL_SOCKET_IFNAME=$iface
      ;;
    infiniband)
      port=${COMMSGD_IB_PORT:-1}
      hca=${COMMSGD_IB_HCA:-}
      if [ -z "$hca" ]; then
        iface=$(commsgd_first_up_interface 'ib*') &&
          hca=$(ls "/sys/class/net/$iface/device/infiniband" 2>/dev/null | head -n 1)
        [ -n "$hca" ] || {
          echo "network profile infiniband: no ib* interface with an HCA is up; set COMMSGD_IB_HCA" >&2
          return 2
        }
      fi
      export OMPI_MCA_pml=ucx OMPI_MCA_osc=ucx UCX_NET_DEVICES=$hca:$port
      export NCCL_IB_HCA=$hca:$port NCCL_IB_DISABLE=0
      ;;
    local) ;;
    *)
      echo "network profile '$profile': expected ethernet, infiniband or local" >&2
      return 2
      ;;
  esac
  export COMMSGD_NETWORK=$profile
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  [ $# -eq 1 ] || { echo "usage: $0 ethernet|infiniband|local" >&2; exit 2; }
  commsgd_network_profile "$1"
  env | grep -E '^(OMPI_MCA_|UCX_|NCCL_|COMMSGD_NETWORK=)' | sort
fi
