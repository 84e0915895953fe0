#!/usr/bin/env bash
# Installs what is missing, builds commsgd-train, and trains a small model on the digits data
# set with Dense S-SGD on 1 and on 4 MPI ranks (the same global batch), then compares the runs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

# As scripts/test.sh builds: paths relative to the checkout in ccache's keys, so that the test
# command after this one, and a checkout in another folder, reuse these objects.
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target commsgd-train commsgd-report

# In the build tree, beside what it made: results/ holds only what results/*/run.sh writes and
# the test suite checks against its databases.
out=build/quickstart
db="$out/digits.sqlite"
mkdir -p "$out"
rm -f "$db" "$db-wal" "$db-shm"

mpi=(mpirun --oversubscribe --bind-to none -x OMP_NUM_THREADS=1)
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
train=(build/release/trainer/commsgd-train --config configs/digits.toml --db "$db" --quiet)
report=build/release/analysis/report/commsgd-report

echo "== dense S-SGD on 1 worker (the scaling baseline)"
"${mpi[@]}" -np 1 "${train[@]}" --algo dense
for algo in dense topk gtopk gaussiank signsgd ef-signsgd qsgd powersgd sgp osgp dpsgd adpsgd; do
  echo "== $algo on 4 workers"
  # A sign step moves every entry by the learning rate: signSGD takes a hundredth of dense's.
  lr=()
  [ "$algo" = signsgd ] && lr=(--lr 0.0005)
  "${mpi[@]}" -np 4 "${train[@]}" --algo "$algo" --density 0.01 "${lr[@]}"
done

echo
echo "== comparison at 4 workers (commsgd-report compare $db --workers 4)"
"$report" compare "$db" --workers 4
echo
echo "4-worker dense accuracy: $("$report" sql "SELECT printf('%.2f%%', 100 * final_val_top1)
  FROM run_summary WHERE algo = 'dense' AND workers = 4" "$db" -f csv | tail -n 1) on the held-out digits"
echo "database: $db   (try: $report runs $db, or sqlite3 $db 'select * from runs')"
