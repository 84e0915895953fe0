#!/usr/bin/env bash
# gTop-k S-SGD (Shi et al., ICDCS 2019), reduced to one machine: dense, topk and gtopk on the
# digits set, 4 and 8 ranks on emulated hosts linked by 1gbit Ethernet (the cluster in a box),
# density 0.001 after the code's warm-up (0.004 in the first epoch), with its lr recipe scaled to
# 6 epochs (linear warm-up from lr/P over the first, as dl_trainer.py does, ×0.1 at epochs 3
# and 5). topk and gtopk also take the paper's norm study every 10 iterations (the distance of
# the applied update to the dense aggregate, against random-k's and the bound). The model is an mlp 64-8192-4096-10 (d = 34.1M, so k = 34 137): large enough
# that the sparse exchanges move hundreds of kB, where gTop-k's log2 P messages of 8k bytes
# against Top-k's P - 1 show.
# The ranks share 2 cores, so each waits for the slowest one's computation before every exchange;
# --barrier-before-communicate records that wait apart (wait_s) and communicate_s is the exchange
# alone. Dense runs with --bucket-mb 0 for the same reason: one allreduce after backward, timed.
# Writes communication.md (per iteration after the density warm-up: exchange time, bytes, wait,
# selection, iteration time; and the final accuracy), norm-study.md, convergence.png,
# breakdown.png, norm-study.png and runs.sqlite into OUT (default: this directory).
# --quick: 8 ranks only, 12 iterations at density 0.001 throughout (what
# tests/results/gtopk_quick.sh runs). --tables-only: only redraw the tables and figures from
# OUT/runs.sqlite.
# Needs root for the emulated hosts (network namespaces) and python3-sklearn for the digits set.
# From a clean clone: scripts/install-deps.sh, then
#   cmake --preset release && cmake --build --preset release && results/gtopk/run.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${COMMSGD_BUILD:-$root/build/release}
out=$here workers=(4 8) from_epoch=1 train=yes
length=(--epochs 6 --density-schedule 0:0.004,1:0.001 --warmup-epochs 1
  --warmup-start lr-over-workers --lr-schedule 3:0.1,5:0.1)
while [ $# -gt 0 ]; do
  case $1 in
    --quick) workers=(8) length=(--max-steps 12) from_epoch=0; shift ;;
    --tables-only) train=no; shift ;;
    --out) out=${2:?--out DIR}; shift 2 ;;
    *) echo "usage: $0 [--quick] [--tables-only] [--out DIR]" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
report=$build/analysis/report/commsgd-report
db=$out/runs.sqlite
if [ "$train" = yes ]; then
  rm -f "$db"
  # Ranks that wait yield the 2 cores instead of polling.
  export OMPI_MCA_mpi_yield_when_idle=1

  for p in "${workers[@]}"; do
    for algo in dense topk gtopk; do
      echo "== $algo, $p ranks, emulated:1gbit"
      study=()
      [ "$algo" = dense ] || study=(--norm-study-every 10)
      "$root/jobs/local/launch.sh" -n "$p" --network emulated:1gbit -- \
        "$build/trainer/commsgd-train" --config "$root/configs/digits.toml" --algo "$algo" \
        --density 0.001 --mlp-hidden 8192,4096 "${length[@]}" --bucket-mb 0 \
        --barrier-before-communicate --threads 1 --log-every 1 "${study[@]}" --db "$db" --quiet
    done
  done
fi

"$report" sql -f markdown "
  WITH b AS (
    SELECT run_id, avg(communicate_s_mean) AS communicate_s, avg(bytes_sent_mean) AS bytes_sent,
           avg(wait_s_mean) AS wait_s, avg(select_s_mean) AS select_s, avg(total_s_mean) AS total_s
    FROM steady_steps WHERE epoch >= $from_epoch GROUP BY run_id)
  SELECT r.workers, r.algo,
         round(1e3 * b.communicate_s, 2) AS communicate_ms,
         CAST(round(b.bytes_sent) AS INTEGER) AS bytes_sent,
         round(1e3 * b.wait_s, 1) AS barrier_wait_ms,
         round(1e3 * b.select_s, 1) AS select_ms,
         round(b.total_s, 3) AS iteration_s,
         round(100 * f.final_val_top1, 2) AS val_top1
  FROM runs r
  JOIN b ON b.run_id = r.id
  JOIN final_metrics f ON f.run_id = r.id
  ORDER BY r.workers, CASE r.algo WHEN 'dense' THEN 0 WHEN 'topk' THEN 1 ELSE 2 END" "$db" |
  tee "$out/communication.md"
"$report" norm-study -f markdown "$db" | tee "$out/norm-study.md"
"$report" plot convergence "$db" -o "$out/convergence.png"
"$report" plot breakdown "$db" -o "$out/breakdown.png"
"$report" plot norm-study "$db" -o "$out/norm-study.png"
