#!/usr/bin/env bash
# Writes the end of docs/usage.md, "Every option", from the --help of commsgd-train,
# commsgd-sweep and commsgd-report and of each of their subcommands, as a build prints them:
#   scripts/update-usage.sh [BUILD_DIR]           rewrite the block (default build/release)
#   scripts/update-usage.sh --check [BUILD_DIR]   exit 1, showing the difference, if it is stale
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
check=no
if [ "${1:-}" = --check ]; then check=yes; shift; fi
build=$(cd "${1:-$root/build/release}" && pwd)
doc=$root/docs/usage.md
begin='<!-- BEGIN --help -->' end='<!-- END --help -->'

# The subcommands a --help lists under "Subcommands:", one a line.
subcommands() {
  awk '/^Subcommands:/ { in_list = 1; next } in_list && /^  [a-z]/ { print $1 } in_list && /^$/ { exit }'
}

# "### PROGRAM SUB..." and its --help, then each subcommand's, depth first. Defaults that name
# this checkout (commsgd-sweep's --trainer, --report, --jobs-dir) read <build> and <source>, so
# that the text is the same in every checkout.
help_of() {
  local text
  text=$("$@" --help | sed -e "s|$build|<build>|g" -e "s|$root|<source>|g")
  printf '### %s\n\n```\n%s\n```\n\n' "$(basename "$1")${2:+ ${*:2}}" "$text"
  local sub
  for sub in $(subcommands <<<"$text"); do help_of "$@" "$sub"; done
}

block() {
  echo "$begin"
  help_of "$build/trainer/commsgd-train"
  help_of "$build/jobs/sweep/commsgd-sweep"
  help_of "$build/analysis/report/commsgd-report"
  echo "$end"
}

generated=$(mktemp)
trap 'rm -f "$generated"' EXIT
awk -v begin="$begin" -v end="$end" -v block="$(block)" '
  $0 == begin { print block; skipping = 1; next }
  $0 == end { skipping = 0; next }
  !skipping { print }' "$doc" >"$generated"

if [ "$check" = yes ]; then
  if ! diff -u "$doc" "$generated"; then
    echo "docs/usage.md: \"Every option\" is not what the programs print; run scripts/update-usage.sh" >&2
    exit 1
  fi
  echo "docs/usage.md: every option, as the programs print it"
else
  cp "$generated" "$doc"
fi
