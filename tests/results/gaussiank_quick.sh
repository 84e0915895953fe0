#!/usr/bin/env bash
# The Gaussian-k reproduction (results/gaussiank/run.sh), shortened with --quick (d = 1M, 2 epochs):
# its tables have the structure of the committed ones, torch::topk is the slowest selection, the
# exact selection leaves out less than 1 - k/d of the accumulated gradient at every measurement,
# and both figures are drawn. The timings themselves are not checked.
#   gaussiank_quick.sh BUILD_DIR      (needs root for the emulated hosts; exit 77: skipped)
set -euo pipefail
build=${1:?usage: gaussiank_quick.sh BUILD_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../support/script.sh
source "$here/../support/script.sh"
committed=$here/../../results/gaussiank

require_root_and ip "iproute2 (network namespaces)"
out=$(mktemp -d /tmp/commsgd-test-gaussiank.XXXXXX)
trap 'rm -rf "$out"' EXIT

COMMSGD_BUILD=$build "$committed/run.sh" --quick --out "$out"

for table in selection.md grad-stats.md; do
  [ "$(head -2 "$out/$table")" = "$(head -2 "$committed/$table")" ] ||
    fail "$table: the header differs from the committed one"
done
# Markdown rows "| a | b | ... |": fields 2.. are the columns.
awk -F' *\\| *' 'NR > 2 {
    gaussian = $4; dgc = $5; exact = $6; torch = $7
    if (!(torch > gaussian && torch > dgc && torch > exact)) { print "torch::topk is not the slowest: " $0; bad = 1 }
    rows++
  } END { exit bad || rows != 1 }' "$out/selection.md" || fail "selection.md: $(cat "$out/selection.md")"
awk -F' *\\| *' 'NR > 2 {
    algos = algos " " $3
    if ($4 == "exact" && $12 != $7) { print "exact: " $12 " of " $7 " below 1 - k/d"; bad = 1 }
  } END { exit bad || algos != " topk gaussiank" }' "$out/grad-stats.md" ||
  fail "grad-stats.md: $(cat "$out/grad-stats.md")"
for figure in contraction.png selection.png; do
  [ -s "$out/$figure" ] || fail "$figure was not drawn"
done
echo "gaussiank reproduction, shortened: tables, orderings and figures as expected"
