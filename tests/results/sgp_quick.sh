#!/usr/bin/env bash
# The SGP reproduction (results/sgp/run.sh), shortened with --quick (8 ranks, 2 epochs): its table
# has the structure of the committed one, a gossip rank sends one model a iteration (4d bytes)
# against the allreduce's 2 (P − 1)/P · 4d, an epoch of sgp and of osgp trains in less time than
# one of dense, only the gossip runs' replicas differ (consensus distance), and the figure is
# drawn. dpsgd (the SGP code's D-PSGD) is checked for its bytes and its consensus distance. Whether osgp is faster than sgp is read from the committed table, not asserted on 2
# short epochs.
#   sgp_quick.sh BUILD_DIR      (needs root for the emulated hosts; exit 77: skipped)
set -euo pipefail
build=${1:?usage: sgp_quick.sh BUILD_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../support/script.sh
source "$here/../support/script.sh"
committed=$here/../../results/sgp

require_root_and ip "iproute2 (network namespaces)"
out=$(mktemp -d /tmp/commsgd-test-sgp.XXXXXX)
trap 'rm -rf "$out"' EXIT

COMMSGD_BUILD=$build "$committed/run.sh" --quick --out "$out"

[ "$(head -2 "$out/epochs.md")" = "$(head -2 "$committed/epochs.md")" ] ||
  fail "epochs.md: the header differs from the committed one"
# Markdown rows "| workers | algo | train_epoch_s | wall_epoch_s | iteration_s | communicate_ms |
# wait_ms | bytes_sent | val_top1 | consensus_distance |": fields 2.. are the columns.
awk -F' *\\| *' 'NR > 2 { order = order " " $3; epoch[$3] = $4; bytes[$3] = $9; consensus[$3] = $11 }
  END {
    if (order != " dense sgp osgp dpsgd") { print "rows: " order; exit 1 }
    if (!(bytes["sgp"] < bytes["dense"] && bytes["osgp"] < bytes["dense"] &&
          bytes["dpsgd"] < bytes["dense"])) {
      print "a gossip rank sends as much as the allreduce"; exit 1
    }
    if (!(epoch["sgp"] < epoch["dense"] && epoch["osgp"] < epoch["dense"])) {
      print "a gossip epoch is not faster than a dense one"; exit 1
    }
    if (!(consensus["dense"] == 0 && consensus["sgp"] > 0 && consensus["osgp"] > 0 &&
          consensus["dpsgd"] > 0)) {
      print "consensus distance: dense " consensus["dense"] ", sgp " consensus["sgp"] \
            ", osgp " consensus["osgp"] ", dpsgd " consensus["dpsgd"]; exit 1
    }
  }' "$out/epochs.md" || fail "epochs.md: $(cat "$out/epochs.md")"
[ -s "$out/convergence.png" ] || fail "convergence.png was not drawn"
echo "sgp reproduction, shortened: table, orderings and figure as expected"
