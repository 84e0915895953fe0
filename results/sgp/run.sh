#!/usr/bin/env bash
# Stochastic Gradient Push (Assran et al., ICML 2019), reduced to one machine: dense (allreduce,
# 25 MiB buckets overlapped with backward: the strong baseline), sgp and osgp (1 peer per
# iteration on the graph that the code which produced the paper's numbers, its sgp_pytorch0.5
# tag, runs: exponential-two-sided-distinct, r + 2^i and r - 2^i in turn, each peer once; osgp
# with 1 iteration of staleness, the paper's) and that code's D-PSGD baseline (dpsgd, an odd and
# an even rank averaging with each other: bipartite-exponential-pairs, its graph_type 1) train
# LeNet-5 on Fashion-MNIST (configs/fashion-mnist.toml, 4 epochs), 4 and 8 ranks on emulated
# hosts linked by 1gbit Ethernet (the cluster in a box). configs/papers/sgp/ and FIDELITY.md
# (S20, S30) say how these graphs differ from the repository's HEAD.
# Writes runs.sqlite, convergence.png and the page README.md (commsgd-report reproduce
# results/sgp/page.toml) into OUT (default: this directory).
# --quick: 8 ranks only, 24 iterations, no page (what tests/results/sgp_quick.sh runs).
# --tables-only: only write the figure and the page again from OUT/runs.sqlite.
# Needs root for the emulated hosts (network namespaces) and Debian's dataset-fashion-mnist
# (scripts/install-deps.sh). From a clean clone:
#   cmake --preset release && cmake --build --preset release && results/sgp/run.sh
set -euo pipefail
# shellcheck source=../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
workers=(4 8) length=()
quick() { workers=(8) length=(--max-steps 24); }
read_options "$@"
db=$out/runs.sqlite
# Ranks that wait yield the 2 cores instead of polling.
export OMPI_MCA_mpi_yield_when_idle=1

if [ "$train" = yes ]; then
  rm -f "$db"
  for p in "${workers[@]}"; do
    for algo in dense sgp osgp dpsgd; do
      echo "== $algo, $p ranks, emulated:1gbit"
      case $algo in
        sgp | osgp) graph=(--topology exponential-two-sided-distinct) ;;
        dpsgd) graph=(--topology bipartite-exponential-pairs --gossip-mixing directed) ;;
        *) graph=() ;;
      esac
      "$root/jobs/local/launch.sh" -n "$p" --network emulated:1gbit -- \
        "$build/trainer/commsgd-train" --config "$root/configs/fashion-mnist.toml" \
        --algo "$algo" "${graph[@]}" "${length[@]}" --threads 1 --db "$db" --quiet
    done
  done
fi

"$report" plot convergence "$db" -o "$out/convergence.png"
[ "$page" = no ] || write_page results/sgp/page.toml runs="$db"
