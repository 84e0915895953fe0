#!/usr/bin/env bash
# The cluster in a box's network: emulated hosts whose links are shaped to 100 Mbit/s.
#  1. MPI ping-pong between two of them (commsgd-bench pingpong) reaches the configured rate
#     within 10% (TCP/IP headers take ~3%), and sees the links' token bucket: the burst it
#     measures is within 50%..120% of hosts.sh's, 25 000 bytes at 100 Mbit/s.
#  2. dense and gtopk (density 0.001) trained across 4 hosts on a 150k-parameter MLP (dense
#     allreduces 0.6 MB a step, so bandwidth, not CPU noise, decides): gtopk spends less time
#     communicating per step than dense; both runs are in the database.
#   emulated_hosts.sh COMMSGD_BENCH COMMSGD_TRAIN      (needs root; exit 77: skipped)
set -euo pipefail
bench=${1:?usage: emulated_hosts.sh COMMSGD_BENCH COMMSGD_TRAIN}
train=${2:?}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../support/script.sh
source "$here/../support/script.sh"
launch=$here/../../jobs/local/launch.sh

require_root_and ip "iproute2 (network namespaces)"

work=$(mktemp -d /tmp/commsgd-test-hosts.XXXXXX)
trap 'rm -rf "$work"' EXIT
namespaces_before=$(ip netns list | wc -l)

# Two ranks on two hosts, one per core: ranks that only wait still poll, and on these 2 cores
# would take them from the two that measure (the after-idle sweep then measured 0.9 ms
# scheduling gaps instead of the link).
output=$("$launch" -n 2 --network emulated:100mbit -- "$bench" \
  pingpong --max-bytes 2097152 --round-trips 7 --network emulated:100mbit --db "$work/bench.sqlite")
echo "$output"
mbit=$(sed -n 's/.*largest_mbit_per_s=\([0-9.]*\).*/\1/p' <<<"$output")
[ -n "$mbit" ] || fail "no bandwidth in the ping-pong output"
awk -v m="$mbit" 'BEGIN { exit !(m >= 90 && m <= 110) }' ||
  fail "measured $mbit Mbit/s on a 100 Mbit/s link (allowed: 90..110)"
echo "ok: ping-pong $mbit Mbit/s on a 100mbit link"
burst=$(sed -n 's/.*burst_bytes=\([0-9.]*\).*/\1/p' <<<"$output")
[ -n "$burst" ] || fail "no burst in the ping-pong output"
awk -v b="$burst" 'BEGIN { exit !(b >= 12500 && b <= 30000) }' ||
  fail "measured a burst of $burst bytes on links whose token bucket holds 25000"
echo "ok: ping-pong measured a burst of $burst bytes (the token bucket holds 25000)"

for algo in dense gtopk; do
  "$launch" -n 4 --network emulated:100mbit -- "$train" --config "$here/tiny.toml" \
    --algo "$algo" --density 0.001 --mlp-hidden 2048 --log-every 2 --threads 1 --db "$work/runs.sqlite"
done
query() { sqlite3 -batch -noheader "$work/runs.sqlite" "$1"; }
# Seconds communicating per step, on the training thread or overlapped with it (dense's buckets).
communicating="s.communicate_s_mean + s.overlapped_communicate_s_mean"
query "SELECT r.algo, r.network, r.status, count(*), avg($communicating)
       FROM runs r JOIN steps s ON s.run_id = r.id GROUP BY r.id ORDER BY r.algo"
[ "$(query "SELECT count(*) FROM runs WHERE status = 'completed' AND network = 'emulated:100mbit'")" = 2 ] ||
  fail "expected a completed dense and a completed gtopk run on emulated:100mbit"
faster=$(query "SELECT (SELECT avg($communicating) FROM steps s JOIN runs r ON s.run_id = r.id
                        WHERE r.algo = 'gtopk') <
                       (SELECT avg($communicating) FROM steps s JOIN runs r ON s.run_id = r.id
                        WHERE r.algo = 'dense')")
[ "$faster" = 1 ] || fail "gtopk did not communicate for less time per step than dense"
echo "ok: gtopk communicates for less time per step than dense across the emulated hosts"

[ "$(ip netns list | wc -l)" = "$namespaces_before" ] || fail "namespaces left behind: $(ip netns list)"
! ls -d /tmp/commsgd-hosts.* 2>/dev/null || fail "host dirs left behind"
echo "ok: emulated hosts torn down"
