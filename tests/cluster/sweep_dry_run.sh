#!/usr/bin/env bash
# `commsgd-sweep submit --dry-run` on a paper sweep prints a shell script of valid sbatch
# commands: bash parses it, then runs it with `sbatch` replaced by a function that checks each
# command as bash split it into words: the options, the template, the manifest and its tasks,
# one array per network, and a merge job depending on every array.
#   sweep_dry_run.sh COMMSGD_SWEEP SWEEP_TOML
set -euo pipefail
sweep=${1:?usage: sweep_dry_run.sh COMMSGD_SWEEP SWEEP_TOML}
sweep_toml=${2:?}
# shellcheck source=../support/script.sh
source "$(dirname "${BASH_SOURCE[0]}")/../support/script.sh"

work=$(mktemp -d /tmp/commsgd-test-dry-run.XXXXXX)
trap 'rm -rf "$work"' EXIT
script=$("$sweep" submit --dry-run "$sweep_toml" --output "$work/out")
echo "$script"
bash -n <<<"$script" || fail "the dry run is not a valid shell script"

# Called as the printed script calls sbatch; prints a job id as `sbatch --parsable` would.
sbatch() {
  local array="" nodes="" per_node="" dependency="" exclusive="" positional=()
  [ "$1" = --parsable ] || fail "sbatch without --parsable: $*"
  shift
  for word in "$@"; do
    case $word in
      --array=*) array=${word#--array=} ;;
      --nodes=*) nodes=${word#--nodes=} ;;
      --ntasks-per-node=*) per_node=${word#--ntasks-per-node=} ;;
      --dependency=*) dependency=${word#--dependency=} ;;
      --job-name=* | --ntasks=* | --cpus-per-task=* | --gpus-per-node=* | --time=* | \
        --partition=* | --account=* | --output=*) ;;
      --exclusive) exclusive=yes ;;
      --*) fail "unexpected sbatch option $word" ;;
      *) positional+=("$word") ;;
    esac
  done
  local template=${positional[0]}
  [ -f "$template" ] && bash -n "$template" || fail "template $template missing or not bash"
  if [ -n "$dependency" ]; then
    [[ $template == */sweep-merge.sbatch ]] || fail "a dependent job that is not the merge"
    [ "$dependency" = "afterany:$(paste -sd: "$work/ids")" ] ||
      fail "merge depends on '$dependency', not on every array"
    [ "${#positional[@]}" -eq 4 ] && [ -x "${positional[1]}" ] || fail "merge arguments: $*"
    echo merge >>"$work/merge"
    echo 999
    return
  fi
  [[ $template == */sweep-point.sbatch ]] || fail "an array that does not run sweep-point.sbatch"
  [ -n "$exclusive" ] || fail "an array without --exclusive: its tasks would share nodes"
  [ "${#positional[@]}" -eq 5 ] || fail "sweep-point.sbatch takes 4 arguments: $*"
  local sweep_bin=${positional[1]} manifest=${positional[2]} network=${positional[3]}
  [ -x "$sweep_bin" ] && [ -f "$manifest" ] && [ -f "${positional[4]}" ] || fail "paths in: $*"
  [[ $network =~ ^(ethernet|infiniband)$ ]] || fail "network '$network'"
  [[ $array =~ ^0-([0-9]+)(%[0-9]+)?$ ]] || fail "--array=$array"
  local tasks=$((BASH_REMATCH[1] + 1))
  [ "$(jq '.tasks | length' "$manifest")" = "$tasks" ] || fail "$manifest does not hold $tasks tasks"
  [ "$(jq ".nodes == $nodes and .network == \"$network\"" "$manifest")" = true ] ||
    fail "$manifest does not match --nodes=$nodes and network $network"
  # Each task's step fits in the allocation and runs commsgd-train on its own database, with
  # its own checkpoints to resume from.
  for ((t = 0; t < tasks; t++)); do
    mapfile -d '' -t step < <("$sweep_bin" point "$manifest" "$t")
    local workers=${step[0]#--ntasks=}
    [ "$workers" -le $((nodes * per_node)) ] || fail "task $t: $workers ranks on $nodes nodes"
    [[ ${step[1]} == */commsgd-train && ${step[-3]} == --db=*.sqlite &&
      ${step[-2]} == --checkpoint-dir=*/checkpoints/* && ${step[-1]} == --resume=auto ]] ||
      fail "task $t: ${step[*]}"
  done
  echo "$network" >>"$work/networks"
  local id=$((100 + $(wc -l <"$work/networks")))
  echo "$id" >>"$work/ids"
  echo "$id"
}
command -v jq >/dev/null || fail "jq is needed (apt-get install jq)"
: >"$work/ids"
source <(echo "$script")

[ "$(sort -u "$work/networks" | paste -sd,)" = ethernet,infiniband ] ||
  fail "arrays for ethernet and infiniband expected, got $(sort -u "$work/networks" | paste -sd,)"
[ "$(wc -l <"$work/merge")" = 1 ] || fail "expected one merge job"
echo "ok: $(wc -l <"$work/ids") arrays over ethernet and infiniband and one merge job"
