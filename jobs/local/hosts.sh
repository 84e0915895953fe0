#!/usr/bin/env bash
# Emulated hosts on one machine: each host is a network namespace with one veth link to a shared
# bridge, shaped in both directions to RATE by a token bucket, like a full-duplex switch port.
#
#   dir=$(jobs/local/hosts.sh up N RATE)   # RATE as tc writes it: 100mbit, 1gbit, 10gbit
#   cat "$dir/hosts"                         # one line per host: ADDRESS NAMESPACE
#   jobs/local/hosts.sh link "$dir" I down   # host I's link fails (a dead NIC, cable or port)
#   jobs/local/hosts.sh link "$dir" I up     # and comes back
#   jobs/local/hosts.sh down "$dir"          # removes the namespaces, links and the dir
#
# Open MPI reaches the hosts through jobs/local/netns-rsh.sh (see launch.sh). Needs root and
# iproute2. Addresses come from the first 10.77.X.0/24 not already on this machine; only the
# namespaces and links listed in $dir are ever removed. Latency cannot be added (no netem here).
set -euo pipefail

die() {
  echo "hosts.sh: $*" >&2
  exit 1
}

# What still runs on a host when its job has ended is killed, as Slurm kills a job's processes on
# every node at its end: e.g. the daemon of a host whose link failed, which waits for a launcher
# that has already gone. Killed until none is left: a daemon that has not yet ended may still
# write its session dir under $dir (its TMPDIR), and would make it again after it is removed.
end_processes() {
  local ns=$1 pids round
  for round in $(seq 1 100); do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -n "$pids" ] || return 0
    kill -KILL $pids 2>/dev/null || true
    [ "$round" -eq 1 ] || sleep 0.05
  done
  echo "hosts.sh: processes still on $ns after 5 s: $pids" >&2
}

down() {
  local dir=$1
  [ -f "$dir/commsgd-local-hosts" ] || die "$dir is not a set of hosts made by this script"
  local ns
  while read -r _ ns; do
    end_processes "$ns"
    ip netns delete "$ns" 2>/dev/null || true  # takes the namespace's veth end, and so the pair
  done <"$dir/hosts"
  [ -s "$dir/bridge" ] && ip link delete "$(<"$dir/bridge")" 2>/dev/null || true
  rm -rf "$dir"
}

free_subnet() {
  local used x
  used=$(ip -o -4 addr show)
  for x in $(seq 1 254); do
    grep -q " 10\.77\.$x\." <<<"$used" || { echo "10.77.$x"; return 0; }
  done
  die "no free 10.77.X.0/24 subnet"
}

# Token-bucket burst: 2 ms at the line rate, and never less than a few full frames.
burst_for() {
  local rate=$1 number unit bits
  [[ $rate =~ ^([0-9]+)(kbit|mbit|gbit)$ ]] || die "rate '$rate': expected e.g. 100mbit, 1gbit"
  number=${BASH_REMATCH[1]}
  unit=${BASH_REMATCH[2]}
  case $unit in
    kbit) bits=$((number * 1000)) ;;
    mbit) bits=$((number * 1000000)) ;;
    gbit) bits=$((number * 1000000000)) ;;
  esac
  local bytes=$((bits / 8 / 500))
  [ "$bytes" -lt 16384 ] && bytes=16384
  echo "$bytes"
}

up() {
  local n=$1 rate=$2
  [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 64 ] || die "host count '$n': expected 1..64"
  [ "$(id -u)" -eq 0 ] || die "must run as root (network namespaces)"
  local burst
  burst=$(burst_for "$rate")

  local dir
  dir=$(mktemp -d /tmp/commsgd-hosts.XXXXXX)
  touch "$dir/commsgd-local-hosts" "$dir/hosts"
  trap 'down "$dir"' ERR
  # Interface names have at most 15 characters: "cs" + the dir's random suffix + a suffix.
  local id=cs${dir##*.}
  local subnet
  subnet=$(free_subnet)
  echo "$subnet.0/24" >"$dir/subnet"

  ip link add "${id}br" type bridge
  echo "${id}br" >"$dir/bridge"
  ip addr add "$subnet.254/24" dev "${id}br"
  ip link set "${id}br" up

  local i ns address
  for i in $(seq 1 "$n"); do
    ns=commsgd-${dir##*.}-$i
    address=$subnet.$i
    ip netns add "$ns"
    echo "$address $ns" >>"$dir/hosts"
    ip link add "${id}h$i" type veth peer name "${id}n$i"
    ip link set "${id}n$i" netns "$ns"
    ip link set "${id}h$i" master "${id}br" up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$address/24" dev "${id}n$i"
    ip -n "$ns" link set "${id}n$i" up
    # Upload: the host's end; download: the bridge's end towards the host.
    ip netns exec "$ns" tc qdisc add dev "${id}n$i" root tbf rate "$rate" burst "$burst" latency 100ms
    tc qdisc add dev "${id}h$i" root tbf rate "$rate" burst "$burst" latency 100ms
  done
  trap - ERR
  echo "$dir"
}

# Host I's end of its link, inside its namespace, set up or down.
link() {
  local dir=$1 i=$2 state=$3
  [ -f "$dir/commsgd-local-hosts" ] || die "$dir is not a set of hosts made by this script"
  [[ $state == up || $state == down ]] || die "link state '$state': expected up or down"
  local ns
  ns=$(awk -v i="$i" 'NR == i { print $2 }' "$dir/hosts")
  [ -n "$ns" ] || die "no host $i in $dir/hosts"
  ip -n "$ns" link set "cs${dir##*.}n$i" "$state"
}

case ${1:-} in
  up) [ $# -eq 3 ] || die "usage: $0 up N RATE"; up "$2" "$3" ;;
  link) [ $# -eq 4 ] || die "usage: $0 link DIR I up|down"; link "$2" "$3" "$4" ;;
  down) [ $# -eq 2 ] || die "usage: $0 down DIR"; down "$2" ;;
  *) die "usage: $0 up N RATE | link DIR I up|down | down DIR" ;;
esac
