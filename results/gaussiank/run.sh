#!/usr/bin/env bash
# "Understanding Top-k Sparsification" / Gaussian-k (Shi et al., 2019), reduced to one machine:
#   1. selection time of the gaussian, dgc and exact selectors and torch::topk, one thread
#      (commsgd-bench kernels), at rho = 0.001;
#   2. topk (exact selection) and gaussiank train LeNet-5 on Fashion-MNIST
#      (configs/fashion-mnist.toml, 4 epochs), 4 ranks on emulated 1gbit hosts (the cluster in a
#      box), rank 0's accumulated gradient measured every 25 iterations: how much of it the
#      selection leaves out, beside the bounds 1 - k/d and (1 - k/d)^2. As the GaussianK-SGD
#      code trains: its own Gaussian threshold (--selector gaussian-gksgd) and its density
#      warm-up, 0.015625 in the first epoch, 0.004 in the second, then 0.001.
# Writes the databases (bench.sqlite, runs.sqlite), contraction.png, selection.png and the page
# README.md (commsgd-report reproduce results/gaussiank/page.toml) into OUT (default: this
# directory). --quick: d = 1M only, 24 iterations, no page (what tests/results/gaussiank_quick.sh
# runs). --tables-only: only write the figures and the page again from OUT's databases.
# Needs root for the emulated hosts (network namespaces), Debian's dataset-fashion-mnist and
# python3-matplotlib for the figures. From a clean clone: scripts/install-deps.sh, then
#   cmake --preset release && cmake --build --preset release && results/gaussiank/run.sh
set -euo pipefail
# shellcheck source=../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
sizes=(1000000 25000000) length=()
quick() { sizes=(1000000) length=(--max-steps 24); }
read_options "$@"
bench_db=$out/bench.sqlite runs_db=$out/runs.sqlite
if [ "$train" = yes ]; then
  rm -f "$bench_db" "$runs_db"

  echo "== selection time, one thread, N(0,1) data"
  "$build/tests/bench/commsgd-bench" kernels --sizes "${sizes[@]}" --densities 0.001 --repeats 5 \
    --db "$bench_db"

  echo "== topk and gaussiank on Fashion-MNIST, 4 emulated hosts on 1gbit, --grad-stats-every 25"
  for algo in topk gaussiank; do
    selector=()
    [ "$algo" = gaussiank ] && selector=(--selector gaussian-gksgd)
    "$root/jobs/local/launch.sh" -n 4 --network emulated:1gbit -- \
      "$build/trainer/commsgd-train" --config "$root/configs/fashion-mnist.toml" --algo "$algo" \
      "${selector[@]}" --density 0.001 --density-schedule 0:0.015625,1:0.004,2:0.001 \
      "${length[@]}" --grad-stats-every 25 --threads 1 --db "$runs_db" --quiet
  done
fi

"$report" plot grad-stats "$runs_db" -o "$out/contraction.png"
"$report" plot selection "$bench_db" -o "$out/selection.png"
[ "$page" = no ] || write_page results/gaussiank/page.toml runs="$runs_db" bench="$bench_db"
