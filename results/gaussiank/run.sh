#!/usr/bin/env bash
# "Understanding Top-k Sparsification" / Gaussian-k (Shi et al., 2019), reduced to one machine:
#   1. selection time of the gaussian, dgc and exact selectors and torch::topk, one thread
#      (commsgd-bench kernels), at ρ = 0.001;
#   2. topk (exact selection) and gaussiank training on the digits set, 4 ranks on emulated 1gbit
#      hosts (the cluster in a box), rank 0's accumulated gradient measured every 5 iterations:
#      how much of it the selection leaves out, beside the bounds 1 - k/d and (1 - k/d)².
#      As the GaussianK-SGD code trains: its own Gaussian threshold (--selector gaussian-gksgd)
#      and its density warm-up, 0.015625 in the first epoch, 0.004 in the second, then 0.001.
# Writes selection.md, grad-stats.md, contraction.png and selection.png, and the databases they
# come from (bench.sqlite, runs.sqlite), into OUT (default: this directory). --quick: d = 1M
# only, 2 epochs (what tests/results/gaussiank_quick.sh runs). --tables-only: only redraw the
# tables and figures from OUT's databases.
# Needs root for the emulated hosts (network namespaces), python3-sklearn for the digits set and
# python3-matplotlib for the figures. From a clean clone: scripts/install-deps.sh, then
#   cmake --preset release && cmake --build --preset release && results/gaussiank/run.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${COMMSGD_BUILD:-$root/build/release}
out=$here sizes=(1000000 25000000) epochs=8 train=yes
while [ $# -gt 0 ]; do
  case $1 in
    --quick) sizes=(1000000) epochs=2; shift ;;
    --tables-only) train=no; shift ;;
    --out) out=${2:?--out DIR}; shift 2 ;;
    *) echo "usage: $0 [--quick] [--tables-only] [--out DIR]" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
report=$build/analysis/report/commsgd-report
bench_db=$out/bench.sqlite runs_db=$out/runs.sqlite
if [ "$train" = yes ]; then
  rm -f "$bench_db" "$runs_db"

  echo "== selection time, one thread, N(0,1) data"
  "$build/tests/bench/commsgd-bench" kernels --sizes "${sizes[@]}" --densities 0.001 --repeats 5 \
    --db "$bench_db"

  echo "== topk and gaussiank on digits, 4 emulated hosts on 1gbit, --grad-stats-every 5"
  for algo in topk gaussiank; do
    selector=()
    [ "$algo" = gaussiank ] && selector=(--selector gaussian-gksgd)
    "$root/jobs/local/launch.sh" -n 4 --network emulated:1gbit -- \
      "$build/trainer/commsgd-train" --config "$root/configs/digits.toml" --algo "$algo" \
      "${selector[@]}" --density 0.001 --density-schedule 0:0.015625,1:0.004,2:0.001 \
      --mlp-hidden 512 --epochs "$epochs" --grad-stats-every 5 \
      --db "$runs_db" --quiet
  done
fi

"$report" sql -f markdown "
  SELECT json_extract(params, '\$.d') AS d, json_extract(params, '\$.density') AS density,
         round(1e3 * max(CASE name WHEN 'gaussian' THEN value END), 3) AS gaussian_ms,
         round(1e3 * max(CASE name WHEN 'dgc' THEN value END), 3) AS dgc_ms,
         round(1e3 * max(CASE name WHEN 'exact' THEN value END), 3) AS exact_ms,
         round(1e3 * max(CASE name WHEN 'torch_topk' THEN value END), 3) AS torch_topk_ms,
         round(1e3 * max(CASE name WHEN 'floor' THEN value END), 3) AS one_pass_floor_ms
  FROM bench WHERE suite = 'kernels' AND unit = 's'
  GROUP BY d, density ORDER BY d, density" "$bench_db" | tee "$out/selection.md"
"$report" grad-stats -f markdown "$runs_db" | tee "$out/grad-stats.md"
"$report" plot grad-stats "$runs_db" -o "$out/contraction.png"
"$report" plot selection "$bench_db" -o "$out/selection.png"
