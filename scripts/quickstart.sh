#!/usr/bin/env bash
# Installs what is missing, builds commsgd-train, and trains a small model on the digits data
# set with Dense S-SGD on 1 and on 4 MPI ranks (the same global batch), then compares the runs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target commsgd-train

out=results/quickstart
db="$out/digits.sqlite"
mkdir -p "$out"
rm -f "$db" "$db-wal" "$db-shm"

mpi=(mpirun --oversubscribe --bind-to none -x OMP_NUM_THREADS=1)
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
train=(build/release/trainer/commsgd-train --config configs/digits.toml --db "$db")

echo "== dense S-SGD, 1 worker, batch 64"
"${mpi[@]}" -np 1 "${train[@]}" --batch-size 64
echo "== dense S-SGD, 4 workers, batch 16 each"
"${mpi[@]}" -np 4 "${train[@]}" --batch-size 16

echo
echo "== comparison (from $db)"
sqlite3 -header -column "$db" "
  SELECT r.algo, r.workers, r.batch_size AS batch_per_worker,
         printf('%.2f%%', 100 * e.val_top1) AS val_top1,
         printf('%.4f', e.val_loss) AS val_loss,
         printf('%.0f', r.workers * r.batch_size / avg(s.total_s_mean)) AS samples_per_s,
         printf('%.2f', avg(s.communicate_s_mean) / avg(s.total_s_mean)) AS comm_share,
         r.status
  FROM runs r
  JOIN epochs e ON e.run_id = r.id AND e.epoch = (SELECT max(epoch) FROM epochs WHERE run_id = r.id)
  JOIN steps s ON s.run_id = r.id
  GROUP BY r.id ORDER BY r.workers"
echo
echo "4-worker accuracy: $(sqlite3 "$db" "SELECT printf('%.2f%%', 100 * e.val_top1) FROM runs r
  JOIN epochs e ON e.run_id = r.id WHERE r.workers = 4 ORDER BY e.epoch DESC LIMIT 1") on the held-out digits"
echo "database: $db   (try: sqlite3 $db 'select * from runs')"
