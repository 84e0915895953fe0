#!/usr/bin/env bash
# A sweep that asks Slurm for GPUs trains on them. `commsgd-sweep submit --dry-run` of a sweep of
# tiny.toml's run with slurm.gpus-per-node = 2 and no device asks sbatch for the GPUs, gives every
# task's commsgd-train --device=cuda (auto could fall back to the CPU) and says so in its plan;
# the same sweep without GPUs leaves the device to commsgd-train (auto). With GPUs and a CPU
# device, from the base config or an axis, it is refused: exit code 2, one line, nothing written.
#   gpu_sweep_dry_run.sh COMMSGD_SWEEP
set -euo pipefail
sweep=${1:?usage: gpu_sweep_dry_run.sh COMMSGD_SWEEP}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../support/script.sh
source "$here/../support/script.sh"

work=$(mktemp -d /tmp/commsgd-test-gpu-sweep.XXXXXX)
trap 'rm -rf "$work"' EXIT
# The limits given, so that no scontrol is asked.
plan() { "$sweep" submit --dry-run --max-array-size 1001 --max-job-count 10000 "$@"; }

# sweep_config FILE GPUS_PER_NODE BASE_CONFIG [AXIS_LINE]
sweep_config() {
  cat >"$1" <<EOF
[sweep]
name = "gpu"
config = "$3"
[slurm]
tasks-per-node = 2
gpus-per-node = $2
[axes]
algo = ["dense", "gtopk"]
workers = [2, 4]
network = ["local"]
${4:-}
EOF
}

# Every task's step, one argument a line, for each manifest under $1/arrays.
steps_of() {
  local manifest tasks t
  for manifest in "$1"/arrays/*.json; do
    tasks=$(grep -c '"point":' "$manifest")
    for ((t = 0; t < tasks; t++)); do
      "$sweep" point "$manifest" "$t" | tr '\0' '\n'
      echo "--- end of task $t of $manifest"
    done
  done
}

sweep_config "$work/gpu.toml" 2 "$here/tiny.toml"
script=$(plan "$work/gpu.toml" --output "$work/gpu")
echo "$script"
grep -q -- ' --gpus-per-node=2 ' <<<"$script" || fail "sbatch is not asked for the GPUs"
grep -qxF "# 2 GPUs per node, trained on with --device cuda" <<<"$script" ||
  fail "the plan does not say what the tasks train on"
steps_of "$work/gpu" >"$work/gpu.steps"
tasks=$(grep -c '^--- end of task' "$work/gpu.steps")
[ "$tasks" = 4 ] || fail "$tasks tasks, not 4"
[ "$(grep -cx -- --device=cuda "$work/gpu.steps")" = "$tasks" ] ||
  fail "not every task trains with --device=cuda: $(cat "$work/gpu.steps")"
echo "ok: each of $tasks tasks of a GPU sweep runs commsgd-train --device=cuda"

sweep_config "$work/cpu.toml" 0 "$here/tiny.toml"
plan "$work/cpu.toml" --output "$work/cpu" >/dev/null
steps_of "$work/cpu" >"$work/cpu.steps"
! grep -q -- '^--device' "$work/cpu.steps" || fail "a sweep without GPUs set a device"
echo "ok: a sweep without GPUs leaves the device to commsgd-train"

# Exit code 2, the reason on the one line of standard error, nothing written.
refused() {  # refused WHAT SWEEP_TOML
  local rc=0
  plan "$2" --output "$work/refused" >/dev/null 2>"$work/err" || rc=$?
  [ "$rc" = 2 ] || fail "$1: exit code $rc, not 2"
  [ "$(wc -l <"$work/err")" = 1 ] || fail "$1: not one line: $(cat "$work/err")"
  grep -qF "slurm.gpus-per-node = 2 asks for GPUs, but it trains with --device cpu" "$work/err" ||
    fail "$1: $(cat "$work/err")"
  [ ! -e "$work/refused" ] || fail "$1: wrote $work/refused"
  echo "ok: $1 refused: $(cat "$work/err")"
}
{
  cat "$here/tiny.toml"
  echo 'device = "cpu"'
} >"$work/cpu-base.toml"
sweep_config "$work/base-cpu.toml" 2 "$work/cpu-base.toml"
refused "GPUs with the base config's device = \"cpu\"" "$work/base-cpu.toml"
sweep_config "$work/axis-cpu.toml" 2 "$here/tiny.toml" 'device = ["cpu"]'
refused "GPUs with axes.device = [\"cpu\"]" "$work/axis-cpu.toml"
