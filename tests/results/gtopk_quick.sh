#!/usr/bin/env bash
# The gTop-k reproduction (results/gtopk/run.sh), shortened with --quick (8 ranks, 12 iterations
# of LeNet-5 on Fashion-MNIST): each rank sends fewer bytes with gtopk than with topk and fewer with
# topk than with dense (log2 P · 8k, (P − 1) · 8k and 2 (P − 1)/P · 4d), every exchange was
# timed, the norm study was recorded, and the figures are drawn. Which exchange is faster is not
# asserted: at LeNet-5's size the messages are latency-bound and 12 iterations on a loaded
# machine cannot order them; the page decides it from the full run
# (results_tables_match_databases checks the page).
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

# One line per algorithm: algo,exchange_s,bytes_sent.
per_algo=$("$build/analysis/report/commsgd-report" sql -f csv "
  SELECT r.algo, avg(s.communicate_s_mean), avg(s.bytes_sent_mean)
  FROM steady_steps s JOIN runs r ON r.id = s.run_id GROUP BY r.algo
  ORDER BY CASE r.algo WHEN 'dense' THEN 0 WHEN 'topk' THEN 1 ELSE 2 END" "$out/runs.sqlite")
awk -F, 'NR > 1 { order = order " " $1; s[$1] = $2; bytes[$1] = $3 }
  END {
    if (order != " dense topk gtopk") { print "rows: " order; exit 1 }
    if (!(bytes["gtopk"] < bytes["topk"] && bytes["topk"] < bytes["dense"])) {
      print "bytes sent not ordered gtopk < topk < dense"; exit 1
    }
    for (a in s) if (!(s[a] > 0)) { print a ": no exchange time"; exit 1 }
  }' <<<"$per_algo" || fail "per algorithm: $per_algo"
studied=$("$build/analysis/report/commsgd-report" sql -f csv \
  "SELECT count(DISTINCT run_id) FROM norm_study" "$out/runs.sqlite" | tail -n 1)
[ "$studied" = 2 ] || fail "the norm study was recorded for $studied runs, not topk's and gtopk's"
for figure in convergence.png breakdown.png norm-study.png; do
  [ -s "$out/$figure" ] || fail "$figure was not drawn"
done
echo "gtopk reproduction, shortened: bytes, timings, norm study and figures as expected"
