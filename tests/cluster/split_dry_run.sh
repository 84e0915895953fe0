#!/usr/bin/env bash
# A sweep too large for one job array (split-sweep.toml: 6,000 points, two (nodes, network) groups
# of 3,000) planned by `commsgd-sweep submit --dry-run` against Slurm's default MaxArraySize 1001:
# each group splits into arrays of at most 1,001 tasks with indices 0..n-1, every point is in
# exactly one array's manifest, --max-running N ends every array spec with %N, and the merge
# depends on every array. A sweep above MaxJobCount, and bad limits, are refused with one line.
#   split_dry_run.sh COMMSGD_SWEEP           no Slurm (scontrol not on PATH): Slurm's defaults
#   split_dry_run.sh COMMSGD_SWEEP --slurm   the cluster in a box at Slurm's defaults (root;
#                                            exit 77: skipped): the limits come from scontrol and
#                                            `sbatch --test-only` accepts every array
set -euo pipefail
sweep=${1:?usage: split_dry_run.sh COMMSGD_SWEEP [--slurm]}
mode=${2:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../support/script.sh
source "$here/../support/script.sh"
jobs=$here/../../jobs
toml=$here/split-sweep.toml
command -v jq >/dev/null || fail "jq is needed (apt-get install jq)"

work=$(mktemp -d /tmp/commsgd-test-split.XXXXXX)
remove_on_exit

if [ "$mode" = --slurm ]; then
  require_root_and slurmctld "slurm-wlm (scripts/install-deps.sh installs it)"
  start_local_slurm
  limits_from="scontrol show config"
  plan() { "$sweep" "$@"; }
  # The check has teeth: --test-only refuses an array one task above MaxArraySize.
  sbatch --test-only --array=0-1000 --wrap true 2>/dev/null ||
    fail "sbatch --test-only refuses an array of 1,001 tasks"
  ! sbatch --test-only --array=0-1001 --wrap true 2>/dev/null ||
    fail "sbatch --test-only accepts an array of 1,002 tasks: it would not check the plan"
else
  [ -z "$mode" ] || fail "unknown mode $mode"
  # A machine without Slurm: scontrol is not found, so the plan uses Slurm's defaults.
  mkdir "$work/no-slurm"
  limits_from="Slurm's default, no scontrol"
  plan() { PATH=$work/no-slurm "$sweep" "$@"; }
fi

script=$(plan submit --dry-run --max-running 50 "$toml" --output "$work/out")
grep -v '^array_\|^sbatch' <<<"$script"
bash -n <<<"$script" || fail "the dry run is not a valid shell script"
grep -qxF "# cluster limits: MaxArraySize 1001 ($limits_from), MaxJobCount 10000 ($limits_from)" \
  <<<"$script" || fail "the plan does not state the limits it used, from $limits_from"
grep -qxF "# at most 50 tasks of each array running at once (%50), 300 in all" <<<"$script" ||
  fail "the plan does not state the throttle"

# Called as the printed script calls sbatch; prints a job id as `sbatch --parsable` would.
sbatch() {
  local array="" network="" dependency="" manifest=""
  for word in "$@"; do
    case $word in
      --array=*) array=${word#--array=} ;;
      --dependency=*) dependency=${word#--dependency=} ;;
      */arrays/*.json) manifest=$word ;;
      ethernet | infiniband) network=$word ;;
    esac
  done
  if [ -n "$dependency" ]; then
    [ "$dependency" = "afterany:$(paste -sd: "$work/ids")" ] ||
      fail "merge depends on '$dependency', not on every array ($(paste -sd: "$work/ids"))"
    echo merge >>"$work/merge"
    echo 999
    return
  fi
  [[ $array =~ ^0-([0-9]+)%50$ ]] || fail "--array=$array: not 0-N%50"
  local tasks=$((BASH_REMATCH[1] + 1))
  [ "$tasks" -le 1001 ] || fail "--array=$array: $tasks tasks, above MaxArraySize 1001"
  [ "$(jq '.tasks | length' "$manifest")" = "$tasks" ] || fail "$manifest does not hold $tasks tasks"
  [ "$(jq -r .network "$manifest")" = "$network" ] || fail "$manifest is not network $network"
  jq -r '.tasks[].point' "$manifest" >>"$work/points"
  if [ -n "$slurm_dir" ]; then
    command sbatch --test-only "$@" 2>>"$work/test-only.log" ||
      fail "sbatch --test-only refused --array=$array: $(tail -n 1 "$work/test-only.log")"
  fi
  echo "$network $tasks" >>"$work/arrays"
  local id=$((100 + $(wc -l <"$work/arrays")))
  echo "$id" >>"$work/ids"
  echo "$id"
}
: >"$work/ids"
: >"$work/points"
# shellcheck source=/dev/null
source <(echo "$script")

[ "$(wc -l <"$work/merge")" = 1 ] || fail "expected one merge job"
[ "$(sort "$work/arrays" | uniq -c | awk '{print $1, $2, $3}' | paste -sd,)" = \
  "3 ethernet 1000,3 infiniband 1000" ] ||
  fail "expected 3 arrays of 1,000 tasks per network, got: $(paste -sd, "$work/arrays")"
[ -z "$(sort "$work/points" | uniq -d)" ] || fail "a point is in two arrays"
plan status "$toml" --output "$work/out" | tail -n +2 | cut -d, -f1 | sort >"$work/all"
[ "$(wc -l <"$work/all")" = 6000 ] || fail "status lists $(wc -l <"$work/all") points, not 6,000"
sort "$work/points" | cmp -s - "$work/all" || fail "the arrays' points are not the sweep's points"
echo "ok: 6 arrays of 1,000 tasks (0-999%50), each point in one, the merge after all of them"
[ -z "$slurm_dir" ] || echo "ok: sbatch --test-only accepts every array on a Slurm at its defaults"

# Exit code 2, the reason on the first line of standard error, nothing written. (A command-line
# error is followed by CLI11's "Run with --help" line.)
refused() {  # refused WHAT EXPECTED_TEXT ARGS...
  local what=$1 expected=$2 rc=0
  shift 2
  plan "$@" "$toml" --output "$work/refused" >/dev/null 2>"$work/err" || rc=$?
  [ "$rc" = 2 ] || fail "$what: exit code $rc, not 2"
  head -n 1 "$work/err" | grep -qF -- "$expected" ||
    fail "$what: expected '$expected' first, got: $(cat "$work/err")"
  [ ! -e "$work/refused" ] || fail "$what: wrote $work/refused"
  echo "ok: $what refused: $(head -n 1 "$work/err")"
}
refused "6,001 jobs above MaxJobCount 6000" \
  "6001 jobs (6000 array tasks and the merge) exceed the cluster's MaxJobCount of 6000" \
  submit --dry-run --max-job-count 6000
[ "$(wc -l <"$work/err")" = 1 ] || fail "more than one line: $(cat "$work/err")"
grep -qF -- "--max-running does not help" "$work/err" || fail "the line does not say what to do"
refused "--max-running -1" "--max-running: must be >= 0 (got -1)" \
  submit --dry-run --max-running=-1
refused "--max-array-size 0" "--max-array-size: must be >= 1 (got 0)" \
  submit --dry-run --max-array-size 0
