#!/usr/bin/env bash
# Open MPI's remote shell for emulated hosts (--mca plm_rsh_agent): called as `netns-rsh.sh HOST
# CMD...` like ssh, it runs CMD in the namespace of HOST, found in $COMMSGD_HOSTS_DIR/hosts.
# Like ssh, it hands the command line to a shell: the command is Open MPI's daemon launch.
set -euo pipefail
host=$1
shift
namespace=$(awk -v host="$host" '$1 == host { print $2 }' "${COMMSGD_HOSTS_DIR:?}/hosts")
[ -n "$namespace" ] || { echo "netns-rsh.sh: no emulated host $host" >&2; exit 255; }
# Its own TMPDIR, where Open MPI puts the host's session dir (see launch.sh).
export TMPDIR=$COMMSGD_HOSTS_DIR/tmp/$host
mkdir -p "$TMPDIR"
exec ip netns exec "$namespace" /bin/sh -c "$*"
