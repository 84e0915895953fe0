#!/usr/bin/env bash
# The Gaussian-k reproduction (results/gaussiank/run.sh), shortened with --quick (d = 1M, 24
# iterations of LeNet-5 on Fashion-MNIST): torch::topk is the slowest selection, the exact
# selection leaves out less than 1 - k/d of the accumulated gradient at every measurement, both
# algorithms were measured, and both figures are drawn. The timings themselves are not checked.
#   gaussiank_quick.sh BUILD_DIR      (needs root for the emulated hosts; exit 77: skipped)
set -euo pipefail
build=${1:?usage: gaussiank_quick.sh BUILD_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../support/script.sh
source "$here/../support/script.sh"
committed=$here/../../results/gaussiank
report=$build/analysis/report/commsgd-report

require_root_and ip "iproute2 (network namespaces)"
out=$(mktemp -d /tmp/commsgd-test-gaussiank.XXXXXX)
trap 'rm -rf "$out"' EXIT

COMMSGD_BUILD=$build "$committed/run.sh" --quick --out "$out"

slowest=$("$report" sql -f csv "
  SELECT name FROM bench WHERE suite = 'kernels' AND unit = 's'
    AND name IN ('gaussian', 'dgc', 'exact', 'torch_topk')
  ORDER BY value DESC LIMIT 1" "$out/bench.sqlite" | tail -n 1)
[ "$slowest" = torch_topk ] || fail "the slowest selection is $slowest, not torch::topk"
measured=$("$report" sql -f csv "
  SELECT group_concat(algo || ':' || below || '/' || total, ' ') FROM (
    SELECT r.algo, sum(g.contraction < g.bound_linear) AS below, count(*) AS total
    FROM grad_stats g JOIN runs r ON r.id = g.run_id GROUP BY r.algo ORDER BY r.algo DESC)" \
  "$out/runs.sqlite" | tail -n 1)
awk '{
    if (NF != 2 || $1 !~ /^topk:/ || $2 !~ /^gaussiank:/) exit 1
    split(substr($1, 6), t, "/"); if (t[1] != t[2] || t[2] == 0) exit 1
  }' <<<"$measured" || fail "grad-stats (algo:below 1 - k/d/measurements): $measured"
for figure in contraction.png selection.png; do
  [ -s "$out/$figure" ] || fail "$figure was not drawn"
done
echo "gaussiank reproduction, shortened: orderings and figures as expected"
