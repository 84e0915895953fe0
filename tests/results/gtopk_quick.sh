#!/usr/bin/env bash
# The gTop-k reproduction (results/gtopk/run.sh), shortened with --quick (8 ranks, 12 iterations):
# its table has the structure of the committed one, each rank sends fewer bytes with gtopk than
# with topk and fewer with topk than with dense (log2 P · 8k, (P − 1) · 8k and 2 (P − 1)/P · 4d),
# both sparse exchanges take less time than dense's allreduce, and both figures are drawn. The
# full run's gtopk < topk in time is read from the committed table, not asserted on 12 iterations.
#   gtopk_quick.sh BUILD_DIR      (needs root for the emulated hosts; exit 77: skipped)
set -euo pipefail
build=${1:?usage: gtopk_quick.sh BUILD_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../support/script.sh
source "$here/../support/script.sh"
committed=$here/../../results/gtopk

require_root_and ip "iproute2 (network namespaces)"
out=$(mktemp -d /tmp/commsgd-test-gtopk.XXXXXX)
trap 'rm -rf "$out"' EXIT

COMMSGD_BUILD=$build "$committed/run.sh" --quick --out "$out"

[ "$(head -2 "$out/communication.md")" = "$(head -2 "$committed/communication.md")" ] ||
  fail "communication.md: the header differs from the committed one"
# Markdown rows "| workers | algo | communicate_ms | bytes_sent | ... |": fields 2.. are the columns.
awk -F' *\\| *' 'NR > 2 { order = order " " $3; ms[$3] = $4; bytes[$3] = $5 }
  END {
    if (order != " dense topk gtopk") { print "rows: " order; exit 1 }
    if (!(bytes["gtopk"] < bytes["topk"] && bytes["topk"] < bytes["dense"])) {
      print "bytes sent not ordered gtopk < topk < dense"; exit 1
    }
    if (!(ms["topk"] < ms["dense"] && ms["gtopk"] < ms["dense"])) {
      print "a sparse exchange is not faster than the dense allreduce"; exit 1
    }
  }' "$out/communication.md" || fail "communication.md: $(cat "$out/communication.md")"
for figure in convergence.png breakdown.png; do
  [ -s "$out/$figure" ] || fail "$figure was not drawn"
done
echo "gtopk reproduction, shortened: table, orderings and figures as expected"
