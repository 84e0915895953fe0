#!/usr/bin/env bash
# The α-β cost model (commsgd-report simulate) against measurement, on one machine:
#   1. α and β of each emulated network, one way and exchanged both ways, back to back and after
#      computation, two exchanges as a collective's steps, and its token bucket's burst
#      (commsgd-bench pingpong, five times); gTop-k's merge by k (commsgd-bench merge, three
#      times). The model takes the medians
#      (`commsgd-report simulate calibration` lists them);
#   2. the emulated-network sweep: dense, topk, gtopk, gaussiank, sgp, osgp and dpsgd on the
#      digits set (mlp 64-2048-10, d = 153 610, ρ = 0.001), 2 and 4 ranks on emulated hosts
#      with 100mbit and 1gbit links, 110 iterations each (ten steady windows of ten);
#   3. ResNet-20 (batch 32) and VGG-16 (batch 128) at P = 1, dense, topk and gtopk: the time
#      besides communication (compute, selection) the scaling predictions start from.
# Writes runs.sqlite and the page README.md (commsgd-report reproduce results/costmodel/page.toml:
# the medians the model takes, predicted against measured seconds of communication and per
# iteration for every run of the sweep, scaling up to P = 1024 on the papers' 1 GbE, and the
# 32-worker predictions beside the gTop-k paper's) into OUT (default: this directory), and prints
# a summary of the check's errors. --quick: 100mbit only, 2 ranks, dense/topk/gtopk, VGG-16 at
# batch 16, no page. --tables-only: only write the page again from OUT/runs.sqlite.
# Needs root for the emulated hosts (network namespaces) and python3-sklearn for the digits set.
# From a clean clone: scripts/install-deps.sh, then
#   cmake --preset release && cmake --build --preset release && results/costmodel/run.sh
set -euo pipefail
# shellcheck source=../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
networks=(100mbit 1gbit) workers=(2 4) vgg_batch=128
# The sweep's MLP width, which the calibrations compute between their messages too: the first
# message after a step costs more the more of the caches the step displaced.
hidden=2048
algos=(dense topk gtopk gaussiank sgp osgp dpsgd)
quick() { networks=(100mbit) workers=(2) algos=(dense topk gtopk) vgg_batch=16; }
read_options "$@"
train=$build/trainer/commsgd-train
db=$out/runs.sqlite
if [ "$train" = yes ]; then
  rm -f "$db"
  # Ranks that wait yield the 2 cores instead of polling.
  export OMPI_MCA_mpi_yield_when_idle=1

  # gTop-k's merge after computation, by k: the software cost of each of its rounds. Three runs,
  # of which the model takes the median, as of the ping-pong's below.
  for run in 1 2 3; do
    "$build/tests/bench/commsgd-bench" merge --compute-hidden "$hidden" --db "$db" | grep alpha_s
  done

  for net in "${networks[@]}"; do
    # Five calibrations, 4 s each: a process can run in a slow mode (the first message after
    # computation at 42 µs where others took 16–28 µs), and the model takes the median.
    echo "== alpha-beta of emulated:$net"
    for run in 1 2 3 4 5; do
      "$root/jobs/local/launch.sh" -n 2 --network "emulated:$net" -- \
        "$build/tests/bench/commsgd-bench" pingpong --max-bytes 2097152 --round-trips 7 \
        --compute-hidden "$hidden" --network "emulated:$net" --db "$db" | grep alpha_s
    done
    for p in "${workers[@]}"; do
      for algo in "${algos[@]}"; do
        # Every rank starts the exchange together, so that communicate_s is the exchange, not the
        # wait for the slowest rank: a barrier first, for every algorithm whose exchange blocks
        # training (dense with its gradient in one allreduce). osgp exchanges on its own thread.
        case $algo in
          dense) timing=(--bucket-mb 0 --barrier-before-communicate) ;;
          osgp) timing=() ;;
          *) timing=(--barrier-before-communicate) ;;
        esac
        # Ten steady windows (the first of eleven is warm-up): one window that a process spends in
        # a slow mode (twice the others' time, now and then on this 2-core machine) moves the
        # run's mean by a tenth, where with five it moved it by a fifth.
        echo "== $algo, $p ranks, emulated:$net"
        "$root/jobs/local/launch.sh" -n "$p" --network "emulated:$net" -- \
          "$train" --config "$root/configs/digits.toml" --algo "$algo" --mlp-hidden "$hidden" \
          --max-steps 110 --log-every 10 --threads 1 "${timing[@]}" --db "$db" --quiet
      done
    done
  done

  for model in resnet20 vgg16; do
    batch=32
    [ "$model" = vgg16 ] && batch=$vgg_batch
    for algo in dense topk gtopk; do
      echo "== $model, batch $batch, $algo, 1 rank: compute and selection time"
      "$train" --algo "$algo" --model "$model" --dataset synthetic --synthetic-shape 3,32,32 \
        --synthetic-train $((batch * 8)) --batch-size "$batch" --max-steps 6 --log-every 2 \
        --threads 2 --db "$db" --quiet
    done
  done
fi

# Against the communication time, by placement: dense, topk, gtopk, sgp and dpsgd with a core per
# rank (the target: within 25% of the median of their steady windows), the other algorithms with
# a core per rank, and runs with more ranks than cores (reported, not targeted). Each against the
# median and against the mean, which one window that a rank was held up in moves
# (docs/design.md, "Checking it").
"$report" simulate check -f csv -w 'network~emulated:%' "$db" |
  awk -F, -v cores="$(nproc)" 'NR > 1 && $13 != "" {
             w = $4 > cores ? "more ranks than cores" \
               : $2 ~ /^(dense|topk|gtopk|sgp|dpsgd)$/ ? "the target, a core per rank" \
               : "the others, a core per rank"
             n[w]++
             for (c = 13; c <= 15; c += 2) {
               e = $c < 0 ? -$c : $c; if (e > 0.25) over[w, c]++; if (e > worst[w, c]) worst[w, c] = e
             } }
           END { for (w in n) for (c = 15; c >= 13; c -= 2)
                   printf "%s: %d runs, against the windows %s: largest |communication error| %.3f, %d above 0.25\n",
                          w, n[w], c == 13 ? "mean" : "median", worst[w, c], over[w, c] }'
[ "$page" = no ] || write_page results/costmodel/page.toml runs="$db"
