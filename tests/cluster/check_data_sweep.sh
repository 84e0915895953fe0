#!/usr/bin/env bash
# A sweep's data check on a real Slurm: a sweep config with check-data = true whose points read
# two CSV files, one with a bad row. commsgd-sweep queues one check task per file before the
# points' array; the bad file's task fails, Slurm cancels the array (no point starts, no database
# is written), the check's log names the file, line and column, and `submit --wait` exits 1
# pointing at that log. With the file mended, the same submission checks again and trains both.
#   check_data_sweep.sh COMMSGD_SWEEP DIGITS_CSV   (from the source tree; root; exit 77: skipped)
set -euo pipefail
sweep=${1:?usage: check_data_sweep.sh COMMSGD_SWEEP DIGITS_CSV}
digits=${2:?usage: check_data_sweep.sh COMMSGD_SWEEP DIGITS_CSV}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../support/script.sh
source "$here/../support/script.sh"
jobs=$here/../../jobs

require_root_and slurmctld "slurm-wlm (scripts/install-deps.sh installs it)"

work=$(mktemp -d /tmp/commsgd-test-check-data-sweep.XXXXXX)
remove_on_exit

zcat "$digits" >"$work/good.csv"
# Line 5's second pixel a word: the check names the file, the line and the column.
sed '5s/^\([^,]*\),[^,]*,/\1,seven,/' "$work/good.csv" >"$work/bad.csv"
cat >"$work/base.toml" <<TOML
model = "mlp"
mlp-hidden = [16]
dataset = "csv"
epochs = 1
batch-size = 32
lr = 0.05
quiet = true
TOML
cat >"$work/sweep.toml" <<TOML
[sweep]
name = "checked"
config = "base.toml"
check-data = true

[slurm]
tasks-per-node = 2
time = "00:10:00"

[axes]
algo = ["dense"]
data-path = ["$work/good.csv", "$work/bad.csv"]
workers = [2]
network = ["ethernet"]
TOML

start_local_slurm
out=$work/sweep

status=0
"$sweep" submit --wait "$work/sweep.toml" --output "$out" | tee "$work/submit" || status=$?
[ "$status" = 1 ] || fail "submit --wait with a bad file exited $status, not 1"
grep -qE "^submitted data check job [0-9]+$" "$work/submit" || fail "no data check job submitted"
grep -qF "# the data check's logs list any bad file: $out/logs/check_" "$work/submit" ||
  fail "submit did not point at the check's logs"
[ -z "$(ls "$out/runs")" ] || fail "a point ran although its data check failed: $(ls "$out/runs")"
echo "ok: the data check failed and no point started"
bad_lines=$(cat "$out"/logs/check_*.out | grep -c "^bad: ") || true
[ "$bad_lines" = 1 ] || fail "$bad_lines bad: lines in the check's logs, not 1"
grep -qF "bad: csv: $work/bad.csv: line 5: column 2: 'seven' is not a finite number" \
  "$out"/logs/check_*.out || fail "the check's log does not name the bad row: $(cat "$out"/logs/check_*.out)"
echo "ok: the check's log names the file, line and column"

cp "$work/good.csv" "$work/bad.csv"
"$sweep" submit --wait "$work/sweep.toml" --output "$out" | tee "$work/again" ||
  fail "the sweep did not complete once its file was mended"
[ "$(grep -c "^submitted data check job" "$work/again")" = 1 ] || fail "no check before the rerun"
db=$out/merged.sqlite
expect "completed runs, one per file" 2 \
  "SELECT count(DISTINCT json_extract(config, '\$.data_path')) FROM runs WHERE status = 'completed'"
