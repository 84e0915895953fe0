#!/usr/bin/env bash
# A dead link fails the run within --comm-timeout instead of hanging it until the time limit.
# 4 emulated hosts on 1 Gbit/s links, an MLP on the digits set:
#  1. For dense, gtopk and sgp, host 4's link goes down mid-run (a dead NIC, cable or switch port):
#     every process of the job (the ranks, Open MPI's daemons, mpirun, the launcher) is gone
#     within --comm-timeout + 30 s, the run row is `failed` naming the stall, and the emulated
#     hosts are torn down.
#  2. The link drops for 3 s and comes back, well inside --comm-timeout: the run completes.
#   dead_link.sh COMMSGD_TRAIN DIGITS_CSV      (needs root; exit 77: skipped)
set -euo pipefail
train=${1:?usage: dead_link.sh COMMSGD_TRAIN DIGITS_CSV}
digits=${2:?}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../support/script.sh
source "$here/../support/script.sh"
launch=$here/../../jobs/local/launch.sh
hosts=$here/../../jobs/local/hosts.sh

require_root_and ip "iproute2 (network namespaces)"

stall_timeout=12
work=$(mktemp -d /tmp/commsgd-test-dead-link.XXXXXX)
job=
cleanup() {
  [ -n "$job" ] && kill "$job" 2>/dev/null && wait "$job" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
namespaces_before=$(ip netns list | wc -l)

query() { sqlite3 -batch -noheader "$1" "$2"; }

# Starts one run across 4 emulated hosts in the background: $job is its launcher, $hosts_dir and
# $subnet its hosts, once the run's row says it is training.
start_run() {  # NAME ALGO EPOCHS
  local db=$work/$1.sqlite
  "$launch" -n 4 --network emulated:1gbit -- "$train" --model mlp --mlp-hidden 64 \
    --dataset csv --data-path "$digits" --epochs "$3" --batch-size 8 --lr 0.05 --algo "$2" \
    --density 0.01 --log-every 5 --threads 1 --comm-timeout "$stall_timeout" --db "$db" \
    --quiet >"$work/$1.log" 2>&1 &
  job=$!
  local training="SELECT count(*) FROM runs WHERE status = 'running'"
  until [ "$(query "$db" "$training" 2>/dev/null)" = 1 ]; do
    kill -0 "$job" 2>/dev/null || { cat "$work/$1.log"; fail "$1: the run ended before training"; }
    sleep 0.2
  done
  hosts_dir=$(ls -td /tmp/commsgd-hosts.* | head -1)
  subnet=$(<"$hosts_dir/subnet")
}

# The processes of the job: ranks (their --db), Open MPI's daemons and mpirun (their subnet).
job_processes() {  # NAME
  { pgrep -f -- "--db $work/$1.sqlite" || true; pgrep -f -- "if_include $subnet" || true; } | wc -l
}

# 1. The link goes down and stays down.
for algo in dense gtopk sgp; do
  start_run "$algo" "$algo" 1000
  sleep 3  # mid-run: some steps done
  "$hosts" link "$hosts_dir" 4 down
  down_at=$SECONDS
  deadline=$((down_at + stall_timeout + 30))
  while kill -0 "$job" 2>/dev/null && [ "$SECONDS" -le "$deadline" ]; do sleep 0.5; done
  kill -0 "$job" 2>/dev/null &&
    fail "$algo: the launcher still runs $((SECONDS - down_at)) s after the link went down"
  status=0
  wait "$job" || status=$?
  job=
  gone_after=$((SECONDS - down_at))
  [ "$status" -ne 0 ] || fail "$algo: the launcher exited 0 after the link went down"
  left=$(job_processes "$algo")
  if [ "$left" != 0 ]; then
    ps -ef | grep -E "commsgd-train|orted|mpirun" >&2
    fail "$algo: $left processes of the job are left"
  fi
  reason=$(query "$work/$algo.sqlite" "SELECT status || ': ' || exit_reason FROM runs")
  case $reason in
    failed:*stalled*) ;;
    *) cat "$work/$algo.log"; fail "$algo: the row says '$reason', not failed naming the stall" ;;
  esac
  [ -d "$hosts_dir" ] && fail "$algo: the emulated hosts in $hosts_dir are left"
  echo "ok: $algo: every process gone ${gone_after} s after the link went down" \
    "(limit $((stall_timeout + 30)) s); $reason"
done

# 2. The link drops for a few seconds and comes back.
start_run drop gtopk 40
sleep 3
"$hosts" link "$hosts_dir" 4 down
sleep 3
kill -0 "$job" 2>/dev/null || fail "a 3 s drop: the run ended while the link was down"
"$hosts" link "$hosts_dir" 4 up
status=0
wait "$job" || status=$?
job=
[ "$status" = 0 ] || { cat "$work/drop.log"; fail "a 3 s drop failed the run (exit $status)"; }
[ "$(query "$work/drop.sqlite" "SELECT status FROM runs")" = completed ] ||
  fail "a 3 s drop: the run is not completed"
echo "ok: a link down for 3 s and back: the run completed"

[ "$(ip netns list | wc -l)" = "$namespaces_before" ] ||
  fail "namespaces left behind: $(ip netns list)"
echo "ok: emulated hosts torn down"
