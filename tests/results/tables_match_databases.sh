#!/usr/bin/env bash
# No drift between results/ and its databases: each results directory's run.sh, with
# --tables-only, writes its tables and page again from a copy of the committed databases, and
# every one it writes must be the committed one, byte for byte; so must the index,
# results/README.md, that `commsgd-report reproduce results/index.toml` writes. A figure typed
# into a page by hand, or a database replaced without its page (or the other way round), fails
# here.
#   tables_match_databases.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
source_dir=$1 build=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../support/script.sh"
work=$(mktemp -d /tmp/commsgd-results-tables.XXXXXX)
trap 'rm -rf "$work"' EXIT

compared=0
for dir in "$source_dir"/results/*/; do
  name=$(basename "$dir")
  grep -q -- '--tables-only' "$dir/run.sh" 2>/dev/null || fail "results/$name/run.sh has no --tables-only"
  mkdir -p "$work/$name"
  cp "$dir"/*.sqlite "$work/$name/"
  COMMSGD_BUILD=$build "$dir/run.sh" --tables-only --out "$work/$name" >"$work/$name.log" 2>&1 ||
    { tail -n 20 "$work/$name.log"; fail "results/$name/run.sh --tables-only"; }
  for table in "$work/$name"/*.md; do
    committed=$dir/$(basename "$table")
    [ -f "$committed" ] || fail "results/$name/run.sh writes $(basename "$table"), which is not committed"
    diff -u "$committed" "$table" || fail "results/$name/$(basename "$table") differs from its database"
    compared=$((compared + 1))
  done
done
(cd "$source_dir" && "$build/analysis/report/commsgd-report" reproduce results/index.toml \
  -o "$work/index.md") || fail "commsgd-report reproduce results/index.toml"
diff -u "$source_dir/results/README.md" "$work/index.md" ||
  fail "results/README.md differs from what results/index.toml and the databases give"
compared=$((compared + 1))
[ "$compared" -gt 0 ] || fail "no tables compared"
echo "tables_match_databases: $compared tables and pages, each what its database gives"
