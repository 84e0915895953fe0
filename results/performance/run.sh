#!/usr/bin/env bash
# commsgd's speed and memory against their anchors, on this machine: every benchmark of the
# performance page (commsgd-bench, recorded in bench.sqlite with the machine it ran on), then the
# page, README.md (commsgd-report reproduce results/performance/page.toml):
#   kernels           each selector against torch::topk and the one-pass floor, one thread
#   sign-bits         the sign packing and decoding against a memory pass, one thread
#   collectives       gTop-k's exchange against the allgather and the allreduce, 2, 4 and 8
#                     ranks over shared memory
#   merge-paths       gTop-k's exchange with its merge on each SIMD path this CPU has, against
#                     the allgather, 2 ranks bound to cores and 4
#   trainer-overhead  commsgd-train's iteration against a bare LibTorch loop, one process
#   peak-memory       each algorithm's peak resident memory over dense's, 2 ranks
#   dense-overlap     dense's buckets overlapped with backward against one allreduce after it,
#                     2 ranks, every transfer slowed to 1 Gbit/s
#   DDP               the same dense training, as is, against PyTorch's DistributedDataParallel
#                     (tests/bench/ddp_baseline.py, Debian's python3-torch), alternated 3 times
#   PowerSGD          commsgd-train's powersgd against DDP with PyTorch's powerSGD_hook, ResNet-20,
#                     2 ranks, rank 2 (tests/bench/powersgd_vs_hook.py), alternated 15 times
#   loader            the image-folder loader against torchvision's ImageFolder and DataLoader on
#                     the same ImageNet-sized JPEGs, one core each (loader_vs_torchvision.py)
# Run it alone on the machine: the figures are times. --tables-only: only write the page again
# from OUT/bench.sqlite. Writes into OUT (default: this directory).
# From a clean clone: cmake --preset release && cmake --build --preset release &&
#   results/performance/run.sh
set -euo pipefail
# shellcheck source=../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
read_options "$@"
bench=$build/tests/bench/commsgd-bench
db=$out/bench.sqlite
# peak-memory starts mpirun jobs of its own, so root's permission goes by the environment.
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun --oversubscribe --bind-to none -x OMP_NUM_THREADS=1)
python=${COMMSGD_PYTHON:-/usr/bin/python3}  # Debian's, with python3-torch

if [ "$train" = yes ]; then
  rm -f "$db"
  echo "== kernels"
  "$bench" kernels --db "$db"
  echo "== sign-bits"
  "$bench" sign-bits --db "$db"
  for p in 2 4 8; do
    echo "== collectives, $p ranks"
    "${mpi[@]}" -np "$p" "$bench" collectives --repeats 3 --db "$db"
  done
  echo "== gTop-k's merge on each SIMD path, 2 and 4 ranks"
  "${mpi[0]}" --bind-to core -x OMP_NUM_THREADS=1 -np 2 "$bench" merge-paths --repeats 11 \
    --db "$db"
  "${mpi[@]}" -np 4 "$bench" merge-paths --repeats 11 --db "$db"
  echo "== trainer-overhead"
  "$bench" trainer-overhead --model resnet20 --batch-size 32 --threads 1 --db "$db"
  echo "== peak-memory"
  "$bench" peak-memory --repeats 3 --db "$db"
  echo "== dense-overlap"
  "${mpi[@]}" -np 2 "$bench" dense-overlap --db "$db"
  for repeat in 1 2 3; do
    echo "== dense against PyTorch DDP, $repeat of 3"
    "$python" "$root/tests/bench/ddp_baseline.py" --db "$db"
    "${mpi[@]}" -np 2 "$bench" dense-overlap --link-mbps 0 --network shared-memory --repeats 1 \
      --db "$db"
  done
  echo "== powersgd against DDP with PyTorch's powerSGD_hook"
  "$python" "$root/tests/bench/powersgd_vs_hook.py" --db "$db" --train "$build/trainer/commsgd-train"
  echo "== the image-folder loader against torchvision's"
  "$python" "$root/tests/bench/loader_vs_torchvision.py" --db "$db" --bench "$bench"
fi

write_page results/performance/page.toml bench="$db"
