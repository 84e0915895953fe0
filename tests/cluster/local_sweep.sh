#!/usr/bin/env bash
# End to end on a real Slurm: start the local cluster (jobs/local/slurm.sh), submit the tiny sweep
# (every algorithm x 2 seeds) with commsgd-sweep, wait for its arrays and merge job, and check the
# merged database (every rank recorded, no run overlapping another); submit again and check
# nothing is submitted; submit the digits timing sweep and check that compare has a number from
# a run alone in every row; stop Slurm and check it is gone.
#   local_sweep.sh COMMSGD_SWEEP COMMSGD_REPORT   (from the source tree; root; exit 77: skipped)
set -euo pipefail
sweep=${1:?usage: local_sweep.sh COMMSGD_SWEEP COMMSGD_REPORT}
report=${2:?usage: local_sweep.sh COMMSGD_SWEEP COMMSGD_REPORT}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../support/script.sh
source "$here/../support/script.sh"
jobs=$here/../../jobs

require_root_and slurmctld "slurm-wlm (scripts/install-deps.sh installs it)"

work=$(mktemp -d /tmp/commsgd-test-sweep.XXXXXX)
remove_on_exit

start_local_slurm
out=$work/sweep

"$sweep" submit --wait "$here/tiny-sweep.toml" --output "$out" ||
  { tail -n 20 "$out"/logs/*.out >&2 || true; fail "the sweep did not complete"; }

db=$out/merged.sqlite
points=16
expect "runs in the merged database" "$points" "SELECT count(*) FROM runs"
expect "completed runs" "$points" "SELECT count(*) FROM runs WHERE status = 'completed'"
expect "one run per (algo, seed)" "$points" "SELECT count(DISTINCT algo || '/' || seed) FROM runs"
expect "algorithms" 8 "SELECT count(DISTINCT algo) FROM runs"
expect "every run has epochs and steps" "$points" \
  "SELECT count(*) FROM runs WHERE id IN (SELECT run_id FROM epochs) AND id IN (SELECT run_id FROM steps)"
expect "one array job id, recorded by every run" "1|$points" \
  "SELECT count(DISTINCT slurm_array_job_id), count(slurm_array_job_id) FROM runs"
expect "array task ids 0..15, one each" "$points|0|15" \
  "SELECT count(DISTINCT slurm_array_task_id), min(slurm_array_task_id + 0), max(slurm_array_task_id + 0) FROM runs"
expect "Slurm job ids, one per run" "$points" "SELECT count(DISTINCT slurm_job_id) FROM runs"
expect "network profile" "ethernet" "SELECT DISTINCT network FROM runs"
expect "every rank recorded, with its peak memory" "$((2 * points))" \
  "SELECT count(*) FROM ranks WHERE finished_at IS NOT NULL AND peak_rss_bytes > 0"
expect "no run overlapped another on the node (the array's tasks are --exclusive)" 0 \
  "SELECT count(*) FROM run_overlaps"
expect "network profile variables" "ob1|tcp,self,vader" \
  "SELECT DISTINCT json_extract(config, '\$.network_environment.OMPI_MCA_pml'),
          json_extract(config, '\$.network_environment.OMPI_MCA_btl') FROM runs"

expect_nothing_to_submit submit "$here/tiny-sweep.toml" --output "$out"

timing=$work/timing
"$sweep" submit --wait "$here/digits-timing-sweep.toml" --output "$timing" ||
  { tail -n 20 "$timing"/logs/*.out >&2 || true; fail "the timing sweep did not complete"; }
compare=$("$report" compare "$timing/merged.sqlite" -f csv)
echo "$compare"
# runs, samples_per_s and overlapping_runs of each row (by name: the options in which the rows
# differ are columns before them): one run alone, a throughput, none left out.
rows=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; next }
  $at["runs"] == 1 && $at["samples_per_s"] != "" && $at["overlapping_runs"] == 0' <<<"$compare" |
  wc -l)
[ "$rows" = 6 ] || fail "compare: $rows of 6 rows have a throughput from one run alone"
echo "ok: the timing sweep's compare has no number from overlapping runs"

pids=$(cat "$slurm_dir"/*.pid)
"$jobs/local/slurm.sh" stop "$slurm_dir"
for pid in $pids; do
  ! kill -0 "$pid" 2>/dev/null || fail "daemon $pid still runs after stop"
done
[ ! -e "$slurm_dir" ] || fail "$slurm_dir still exists after stop"
slurm_dir=
echo "ok: daemons and the temp dir are gone"
