#!/usr/bin/env bash
# End to end through split job arrays on a real Slurm: the local cluster with MaxArraySize=5 (task
# indices 0..4), the tiny sweep (16 points, one (nodes, network) group) submitted with
# --max-running 2: commsgd-sweep reads the limit from scontrol and submits 4 arrays of 4 tasks,
# each throttled to 2 at once, and a merge job after all 4. Every run completes and records its
# array and task; `status` says completed for all; submitting again runs nothing; with points
# removed, the next plan splits just those.
#   split_arrays.sh COMMSGD_SWEEP   (from the source tree; root; exit 77: skipped)
set -euo pipefail
sweep=${1:?usage: split_arrays.sh COMMSGD_SWEEP}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../support/script.sh
source "$here/../support/script.sh"
jobs=$here/../../jobs
toml=$here/tiny-sweep.toml

require_root_and slurmctld "slurm-wlm (scripts/install-deps.sh installs it)"

work=$(mktemp -d /tmp/commsgd-test-split-arrays.XXXXXX)
remove_on_exit

start_local_slurm --max-array-size 5
[ "$(scontrol show config | awk '$1 == "MaxArraySize" {print $3}')" = 5 ] ||
  fail "the local Slurm does not run with MaxArraySize=5"
out=$work/sweep

"$sweep" submit --wait --max-running 2 "$toml" --output "$out" | tee "$work/submit" ||
  { tail -n 20 "$out"/logs/*.out >&2 || true; fail "the sweep did not complete"; }
grep -qF "16 to run in 4 job arrays" "$work/submit" || fail "expected 4 job arrays"
grep -qF "MaxArraySize 5 (scontrol show config)" "$work/submit" ||
  fail "the plan did not take MaxArraySize from scontrol"
mapfile -t arrays < <(awk '/^submitted job array/ {print $4}' "$work/submit")
[ "${#arrays[@]}" = 4 ] || fail "${#arrays[@]} arrays submitted, not 4"
echo "ok: 4 arrays submitted: ${arrays[*]}"

# Slurm holds finished jobs for MinJobAge (300 s): each array as Slurm saw it, 4 tasks, 2 at once.
for id in "${arrays[@]}"; do
  record=$(scontrol show job "$id")
  grep -qE "ArrayTaskThrottle=2( |$)" <<<"$record" || fail "array $id is not throttled to 2"
  tasks=$(grep -oE "ArrayTaskId=[0-9]+" <<<"$record" | cut -d= -f2 | sort -n | paste -sd,)
  [ "$tasks" = 0,1,2,3 ] || fail "array $id has tasks $tasks, not 0,1,2,3"
done
echo "ok: every array has tasks 0-3, throttled to 2"
# The merge waited for all 4 (afterany on each): it started when the last task had ended.
merge=$(awk '/^submitted merge job/ {print $4}' "$work/submit")
last_end=$(for id in "${arrays[@]}"; do scontrol show job "$id"; done |
  grep -oE "EndTime=[^ ]+" | cut -d= -f2 | sort | tail -n 1)
merge_start=$(scontrol show job "$merge" | grep -oE "StartTime=[^ ]+" | cut -d= -f2)
[[ ! $merge_start < $last_end ]] || fail "merge job started $merge_start, a task ended $last_end"
echo "ok: the merge job started ($merge_start) after the last task ended ($last_end)"

db=$out/merged.sqlite
expect "completed runs in the merged database" 16 \
  "SELECT count(*) FROM runs WHERE status = 'completed'"
expect "runs from the 4 submitted arrays" "$(printf '%s\n' "${arrays[@]}" | sort | paste -sd,)" \
  "SELECT group_concat(id, ',') FROM (SELECT DISTINCT slurm_array_job_id AS id FROM runs ORDER BY id)"
expect "4 runs per array, task ids 0..3" "4|0|3|4|0|3|4|0|3|4|0|3" \
  "SELECT group_concat(n || '|' || lo || '|' || hi, '|') FROM (SELECT count(DISTINCT slurm_array_task_id) AS n,
          min(slurm_array_task_id + 0) AS lo, max(slurm_array_task_id + 0) AS hi
     FROM runs GROUP BY slurm_array_job_id)"

status=$("$sweep" status "$toml" --output "$out")
[ "$(grep -c ',completed$' <<<"$status")" = 16 ] || fail "status: not 16 completed: $status"
echo "ok: status says completed for all 16 points"

expect_nothing_to_submit submit --max-running 2 "$toml" --output "$out"

# Six points lose their run: the next plan has just them, in 2 arrays of 3 (not 5 + 1).
find "$out/runs" -name '*.sqlite' | sort | head -n 6 | xargs rm
plan=$("$sweep" submit --dry-run "$toml" --output "$out")
grep -qF "10 completed, 6 to run in 2 job arrays" <<<"$plan" || fail "replan: $plan"
[ "$(grep -oE -- "--array=[^ ]+" <<<"$plan" | paste -sd,)" = "--array=0-2,--array=0-2" ] ||
  fail "replan: $(grep -oE -- "--array=[^ ]+" <<<"$plan")"
[ "$("$sweep" status "$toml" --output "$out" | grep -c ',pending$')" = 6 ] ||
  fail "status does not list the 6 pending points"
echo "ok: with 6 points to run again, 2 arrays of 3 are planned"
