#!/usr/bin/env bash
# Stochastic Gradient Push (Assran et al., ICML 2019), reduced to one machine: dense (allreduce,
# 25 MiB buckets overlapped with backward: the strong baseline), sgp and osgp (1 peer per
# iteration on the graph that the code which produced the paper's numbers, its sgp_pytorch0.5
# tag, runs: exponential-two-sided-distinct, r + 2^i and r - 2^i in turn, each peer once; osgp
# with 1 iteration of staleness, the paper's) and that code's D-PSGD baseline (dpsgd, an odd and
# an even rank averaging with each other: bipartite-exponential-pairs, its graph_type 1) on the
# digits set, 4 and 8 ranks on emulated hosts linked by 1gbit Ethernet (the cluster in a box).
# configs/papers/sgp/ and FIDELITY.md (S20, S30) say how these graphs differ from the
# repository's HEAD.
# The model is an mlp 64-2048-2048-10 (d = 4.35M): each gossip message is 17 MB, so the link,
# not the 2 shared cores, decides how long an exchange takes.
# Writes epochs.md, convergence.png and runs.sqlite into OUT (default: this directory). In
# epochs.md, train_epoch_s is an epoch's iterations times the mean seconds per iteration: the
# paper's time per epoch, where an epoch is 5 000 iterations. Here it is only 11 to 22, so the
# end of an epoch (evaluating the consensus model, which costs an allreduce) would weigh as much
# as the iterations; wall_epoch_s, evaluation included, is beside it.
# --quick: 8 ranks only, 2 epochs (what tests/results/sgp_quick.sh runs). --tables-only: only
# redraw the tables and figure from OUT/runs.sqlite.
# Needs root for the emulated hosts (network namespaces) and python3-sklearn for the digits set.
# From a clean clone: scripts/install-deps.sh, then
#   cmake --preset release && cmake --build --preset release && results/sgp/run.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${COMMSGD_BUILD:-$root/build/release}
out=$here workers=(4 8) epochs=8 train=yes
while [ $# -gt 0 ]; do
  case $1 in
    --quick) workers=(8) epochs=2; shift ;;
    --tables-only) train=no; shift ;;
    --out) out=${2:?--out DIR}; shift 2 ;;
    *) echo "usage: $0 [--quick] [--tables-only] [--out DIR]" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
report=$build/analysis/report/commsgd-report
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
        "$build/trainer/commsgd-train" --config "$root/configs/digits.toml" --algo "$algo" \
        "${graph[@]}" --mlp-hidden 2048,2048 --epochs "$epochs" --threads 1 --db "$db" --quiet
    done
  done
fi

"$report" sql -f markdown "
  SELECT r.workers, r.algo,
         round((SELECT max(s.step) + 1 FROM steps s WHERE s.run_id = r.id) * b.total_s
               / f.epochs_done, 2) AS train_epoch_s,
         round(f.wall_seconds / f.epochs_done, 2) AS wall_epoch_s,
         round(b.total_s, 3) AS iteration_s,
         round(1e3 * b.communicate_s, 1) AS communicate_ms,
         round(1e3 * b.wait_s, 1) AS wait_ms,
         (SELECT CAST(round(avg(s.bytes_sent_mean)) AS INTEGER) FROM steady_steps s
          WHERE s.run_id = r.id) AS bytes_sent,
         round(100 * f.final_val_top1, 2) AS val_top1,
         (SELECT printf('%.3g', e.consensus_distance) FROM epochs e
          WHERE e.run_id = r.id ORDER BY e.epoch DESC LIMIT 1) AS consensus_distance
  FROM runs r
  JOIN time_breakdown b ON b.run_id = r.id
  JOIN final_metrics f ON f.run_id = r.id
  ORDER BY r.workers,
           CASE r.algo WHEN 'dense' THEN 0 WHEN 'sgp' THEN 1 WHEN 'osgp' THEN 2 ELSE 3 END" "$db" |
  tee "$out/epochs.md"
"$report" plot convergence "$db" -o "$out/convergence.png"
