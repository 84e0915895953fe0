#!/usr/bin/env bash
# Where the sparse and gossip algorithms trail dense, and by how much, at reduced scale: every
# algorithm trains LeNet-5 on Fashion-MNIST (configs/fashion-mnist.toml: 4 epochs, batch 32 per
# rank, lr 0.05, momentum 0.9) with 4 ranks, twice (seeds 1 and 2), on one machine. Accuracy
# does not depend on the link, so the ranks talk over shared memory; the papers' settings where
# they decide accuracy:
#   topk, gtopk, gaussiank  density 0.001 after the gTop-k code's warm-up (0.004 in epoch 1)
#   sgp, osgp               1 peer per iteration on the SGP code's exponential graph, osgp with
#                           1 iteration of staleness (results/sgp/run.sh says why this graph)
#   dpsgd                   that code's D-PSGD baseline: bipartite pairs, directed mixing
#   adpsgd                  its defaults (bipartite graph, symmetric pairwise averaging)
#   signsgd, ef-signsgd     no momentum, as the papers' updates (x - lr * vote; x - Delta); lr
#                           5e-4 and 0.2, the best of a sweep on seed 1 (signsgd 1e-4, 2e-4,
#                           5e-4, 1e-3; ef-signsgd 0.05, 0.1, 0.2, 0.3, 0.5); a sign step moves
#                           every entry by the learning rate. With the config's momentum 0.9 the
#                           best of such a sweep (signsgd 2e-5, ef-signsgd 0.01) ended about 3
#                           points lower each
#   qsgd                    4 levels, buckets of 512 (unbiased: the config's lr)
#   powersgd                rank 2, compressing from the first iteration
# The sparse algorithms, ef-signsgd, qsgd and powersgd also take the gTop-k paper's norm study
# every 25 iterations (--norm-study-every: how far each update lands from the dense mean, against
# random-k at the same k or, for the compressed ones, the same bytes); it changes no update.
# Writes accuracy.md (each seed's final validation top-1, the mean, the difference from dense in
# points) and runs.sqlite into OUT (default: this directory). About 12 minutes on 2 cores.
# --tables-only: only redraw accuracy.md from OUT/runs.sqlite.
# Needs Debian's dataset-fashion-mnist (scripts/install-deps.sh). From a clean clone:
#   cmake --preset release && cmake --build --preset release && results/accuracy/run.sh
set -euo pipefail
# shellcheck source=../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
read_options "$@"
db=$out/runs.sqlite
as_root=()
[ "$(id -u)" = 0 ] && as_root=(--allow-run-as-root)

if [ "$train" = yes ]; then
  rm -f "$db"
  for seed in 1 2; do
    for algo in dense topk gtopk gaussiank signsgd ef-signsgd qsgd powersgd sgp osgp dpsgd adpsgd; do
      case $algo in
        topk | gtopk | gaussiank) setting=(--density-schedule 0:0.004,1:0.001) ;;
        sgp) setting=(--topology exponential-two-sided-distinct) ;;
        osgp) setting=(--topology exponential-two-sided-distinct --max-staleness 1) ;;
        dpsgd) setting=(--topology bipartite-exponential-pairs --gossip-mixing directed) ;;
        signsgd) setting=(--lr 5e-4 --momentum 0) ;;
        ef-signsgd) setting=(--lr 0.2 --momentum 0) ;;
        powersgd) setting=(--powersgd-rank 2) ;;
        *) setting=() ;;
      esac
      case $algo in
        topk | gtopk | gaussiank | ef-signsgd | qsgd | powersgd) setting+=(--norm-study-every 25) ;;
      esac
      echo "== $algo, seed $seed"
      mpirun "${as_root[@]}" --oversubscribe --bind-to none -x OMP_NUM_THREADS=1 -np 4 \
        "$build/trainer/commsgd-train" --config "$root/configs/fashion-mnist.toml" \
        --algo "$algo" "${setting[@]}" --seed "$seed" --threads 1 --db "$db" --quiet
    done
  done
fi

"$report" sql -f markdown "
  WITH runs_of AS (
    SELECT r.algo, r.seed, 100 * f.final_val_top1 AS top1
    FROM runs r JOIN final_metrics f ON f.run_id = r.id WHERE r.status = 'completed'),
  per_algo AS (
    SELECT algo, count(*) AS runs, avg(top1) AS mean,
           group_concat(printf('%.2f', top1), ', ') AS each_seed
    FROM (SELECT * FROM runs_of ORDER BY seed) GROUP BY algo),
  dense AS (SELECT mean FROM per_algo WHERE algo = 'dense')
  SELECT p.algo, p.runs, p.each_seed AS val_top1_by_seed, printf('%.2f', p.mean) AS val_top1_mean,
         printf('%+.2f', p.mean - d.mean) AS vs_dense_points
  FROM per_algo p, dense d
  ORDER BY CASE p.algo WHEN 'dense' THEN 0 WHEN 'topk' THEN 1 WHEN 'gtopk' THEN 2
           WHEN 'gaussiank' THEN 3 WHEN 'signsgd' THEN 4 WHEN 'ef-signsgd' THEN 5
           WHEN 'qsgd' THEN 6 WHEN 'powersgd' THEN 7 WHEN 'sgp' THEN 8 WHEN 'osgp' THEN 9
           WHEN 'dpsgd' THEN 10 ELSE 11 END" "$db" >"$out/accuracy.md"
cat "$out/accuracy.md"
