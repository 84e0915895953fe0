#!/usr/bin/env bash
# A paper config (configs/papers/*.toml) is one commsgd-train accepts: every key is an option and
# every value passes its check, so the only error left, on a machine without the data set, is the
# missing data at the config's data-path (exit 2, one line naming it).
# With further arguments (--algo dense), the config runs another algorithm its paper compares: the
# options of the config that algorithm does not take are left out, and one note line says so;
# --expect-note TEXT is what that line must hold. Without it, no note may be printed.
#   paper_config.sh COMMSGD_TRAIN CONFIG_TOML [--expect-note TEXT] [ARG...]
set -euo pipefail
train=${1:?usage: paper_config.sh COMMSGD_TRAIN CONFIG_TOML [--expect-note TEXT] [ARG...]}
config=${2:?}
shift 2
# shellcheck source=../support/script.sh
source "$(dirname "${BASH_SOURCE[0]}")/../support/script.sh"

expected_note="" args=()
while [ $# -gt 0 ]; do
  if [ "$1" = --expect-note ]; then
    expected_note=${2:?--expect-note needs the text}
    shift 2
  else
    args+=("$1")
    shift
  fi
done

work=$(mktemp -d /tmp/commsgd-test-paper-config.XXXXXX)
trap 'rm -rf "$work"' EXIT
data_path=$(sed -n 's/^data-path = "\(.*\)"$/\1/p' "$config")
[ -n "$data_path" ] || fail "$config sets no data-path"
cd "$work"  # the relative data-path does not exist here
status=0
output=$("$train" --config "$config" "${args[@]}" --db "$work/runs.sqlite" --quiet 2>&1) ||
  status=$?
echo "$output"
[ "$status" -eq 2 ] || fail "exit code $status, expected 2 (the missing data)"
[ "$(grep -c 'commsgd-train: error:' <<<"$output")" -eq 1 ] || fail "not exactly one error line"
grep -q "error: .*$data_path" <<<"$output" || fail "the error does not name $data_path"
[ ! -e "$work/runs.sqlite" ] || fail "a database was created for a run that never started"
notes=$(grep 'commsgd-train: note:' <<<"$output" || true)
if [ -z "$expected_note" ]; then
  [ -z "$notes" ] || fail "a note where none was expected: $notes"
else
  [ "$(wc -l <<<"$notes")" -eq 1 ] && grep -qF "$expected_note" <<<"$notes" ||
    fail "expected one note line holding '$expected_note', got: $notes"
fi
echo "ok: $config ${args[*]}"
