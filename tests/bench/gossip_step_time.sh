#!/usr/bin/env bash
# osgp and adpsgd at P = 4 over an emulated 1 Gbit/s link, two builds side by side (e.g. the
# previous main and a change), alternated ROUNDS times in one run. Prints, per run, the wall time
# of the whole job (10 epochs of 64 iterations in all: adpsgd's ranks share that budget, so its
# job time is its speed), the median over steps 5.. of the slowest rank's step time, and rank
# means per step of the wait and of the bytes sent. (adpsgd's steps are rank 0's iterations, and
# its ranks run different numbers of them: its step figures depend on how the budget was shared.)
#   tests/bench/gossip_step_time.sh BUILD_A BUILD_B [ROUNDS]
set -euo pipefail
a=$1 b=$2 rounds=${3:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "algo build round job_s median_step_s mean_wait_s mean_bytes_sent"
for algo in osgp adpsgd; do
  for round in $(seq "$rounds"); do
    for build in "$a" "$b"; do
      db=$out/run.sqlite
      rm -f "$db"
      mpirun --oversubscribe -np 4 "$build/trainer/commsgd-train" --algo "$algo" --model mlp \
        --mlp-hidden 512,512 --synthetic-shape 3,16,16 --synthetic-train 16384 --batch-size 256 \
        --epochs 10 --emulate-link-mbps 1000 --db "$db" > "$out/log" 2>&1 ||
        { cat "$out/log"; exit 1; }
      job=$(sqlite3 "$db" "select round(max(wall_seconds), 3) from epochs")
      median=$(sqlite3 "$db" "select total_s_max from steps where step >= 5 order by total_s_max" |
        awk '{ v[NR] = $1 } END { printf "%.4f", v[int((NR + 1) / 2)] }')
      means=$(sqlite3 -separator ' ' "$db" \
        "select round(avg(wait_s_mean), 4), round(avg(bytes_sent_mean)) from steps where step >= 5")
      echo "$algo $build $round $job $median $means"
    done
  done
done
