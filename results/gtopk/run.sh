#!/usr/bin/env bash
# gTop-k S-SGD (Shi et al., ICDCS 2019), reduced to one machine: dense, topk and gtopk train
# LeNet-5 on Fashion-MNIST (configs/fashion-mnist.toml, 4 epochs) with 4 and 8 ranks on emulated
# hosts linked by 1gbit Ethernet (the cluster in a box), with the code's recipe: density 0.004 in
# the first epoch, then 0.001; lr warmed up linearly from lr/P over the first epoch, as
# dl_trainer.py starts it, and x0.1 at epoch 3. topk and gtopk also take the paper's norm study
# every 25 iterations (the distance of the applied update to the dense aggregate, against
# random-k's and the bound).
# The ranks share 2 cores, so each waits for the slowest one's computation before every exchange;
# --barrier-before-communicate records that wait apart (wait_s) and communicate_s is the exchange
# alone. Dense runs with --bucket-mb 0 for the same reason: one allreduce after backward, timed.
# Writes runs.sqlite, convergence.png, breakdown.png, norm-study.png and the page README.md
# (commsgd-report reproduce results/gtopk/page.toml) into OUT (default: this directory).
# --quick: 8 ranks only, 12 iterations at density 0.001 throughout, no page (what
# tests/results/gtopk_quick.sh runs). --tables-only: only write the figures and the page again
# from OUT/runs.sqlite.
# Needs root for the emulated hosts (network namespaces) and Debian's dataset-fashion-mnist
# (scripts/install-deps.sh). From a clean clone:
#   cmake --preset release && cmake --build --preset release && results/gtopk/run.sh
set -euo pipefail
# shellcheck source=../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
workers=(4 8)
length=(--density-schedule 0:0.004,1:0.001 --warmup-epochs 1 --warmup-start lr-over-workers
  --lr-schedule 3:0.1)
quick() { workers=(8) length=(--max-steps 12); }
read_options "$@"
db=$out/runs.sqlite
if [ "$train" = yes ]; then
  rm -f "$db"
  # Ranks that wait yield the 2 cores instead of polling.
  export OMPI_MCA_mpi_yield_when_idle=1

  for p in "${workers[@]}"; do
    for algo in dense topk gtopk; do
      echo "== $algo, $p ranks, emulated:1gbit"
      study=()
      [ "$algo" = dense ] || study=(--norm-study-every 25)
      "$root/jobs/local/launch.sh" -n "$p" --network emulated:1gbit -- \
        "$build/trainer/commsgd-train" --config "$root/configs/fashion-mnist.toml" \
        --algo "$algo" --density 0.001 "${length[@]}" --bucket-mb 0 \
        --barrier-before-communicate --threads 1 --log-every 10 "${study[@]}" --db "$db" --quiet
    done
  done
fi

"$report" plot convergence "$db" -o "$out/convergence.png"
"$report" plot breakdown "$db" -o "$out/breakdown.png"
"$report" plot norm-study "$db" -o "$out/norm-study.png"
[ "$page" = no ] || write_page results/gtopk/page.toml runs="$db"
