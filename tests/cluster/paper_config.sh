#!/usr/bin/env bash
# A paper config (configs/papers/*.toml) is one commsgd-train accepts: every key is an option and
# every value passes its check, so the only error left, on a machine without the data set, is the
# missing data at the config's data-path (exit 2, one line naming it).
#   paper_config.sh COMMSGD_TRAIN CONFIG_TOML
set -euo pipefail
train=${1:?usage: paper_config.sh COMMSGD_TRAIN CONFIG_TOML}
config=${2:?}
# shellcheck source=../support/script.sh
source "$(dirname "${BASH_SOURCE[0]}")/../support/script.sh"

work=$(mktemp -d /tmp/commsgd-test-paper-config.XXXXXX)
trap 'rm -rf "$work"' EXIT
data_path=$(sed -n 's/^data-path = "\(.*\)"$/\1/p' "$config")
[ -n "$data_path" ] || fail "$config sets no data-path"
cd "$work"  # the relative data-path does not exist here
status=0
output=$("$train" --config "$config" --db "$work/runs.sqlite" --quiet 2>&1) || status=$?
echo "$output"
[ "$status" -eq 2 ] || fail "exit code $status, expected 2 (the missing data)"
[ "$(grep -c 'commsgd-train: error:' <<<"$output")" -eq 1 ] || fail "not exactly one error line"
grep -q "error: .*$data_path" <<<"$output" || fail "the error does not name $data_path"
[ ! -e "$work/runs.sqlite" ] || fail "a database was created for a run that never started"
echo "ok: $config"
