#!/usr/bin/env bash
# Builds commsgd for this node's GPU (the `cuda` preset, in build/cuda) and runs what needs one:
# the tests labelled gpu (the CUDA kernels against the CPU ones, the NCCL communicator,
# `--device cuda` against `--device cpu`, the gpu-kernels smoke run), then
# `commsgd-bench gpu-kernels` at the acceptance point (d = 25M, ρ = 0.001) and around it, and
# ResNet-20 and VGG-16 on the GPU for the cost model's prediction of the gTop-k paper's table.
# The figures go to OUT (bench.sqlite, runs.sqlite, paper.md), the logs beside them. Without a
# GPU it builds, the tests skip, saying why, and the benchmark's "no CUDA device" makes the exit
# status 2.
#
# Usage: scripts/gpu-check.sh [--deps DIR] [--out DIR] [--jobs N]
#   --deps DIR  the .deb files of scripts/bundle-deps.sh, for a node without MPI and the other
#               libraries: unpacked into a private prefix that only this script's commands use
#   --out DIR   logs and bench.sqlite (default: build/cuda/gpu-check)
#   --jobs N    parallel build jobs (default: all cores)
# LibTorch is python3's PyTorch's when it has one, else whatever CMAKE_PREFIX_PATH leads to.
# CUDA_ARCHITECTURES in the environment replaces `native` (which needs a GPU at configure time).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: scripts/gpu-check.sh [--deps DIR] [--out DIR] [--jobs N]" >&2
  exit 2
}
deps="" out="build/cuda/gpu-check" jobs=$(nproc)
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || usage  # every option takes a value
  case $1 in
    --deps) deps=$2 ;;
    --out) out=$2 ;;
    --jobs) jobs=$2 ;;
    *) usage ;;
  esac
  shift 2
done
mkdir -p "$out"
out=$(cd "$out" && pwd)

if [ -n "$deps" ]; then
  compgen -G "$deps/*.deb" >/dev/null || { echo "gpu-check: no .deb files in $deps" >&2; exit 2; }
  prefix=${TMPDIR:-/tmp}/commsgd-deps
  rm -rf "$prefix"
  for deb in "$deps"/*.deb; do dpkg-deb -x "$deb" "$prefix"; done
  usr=$prefix/usr
  lib=$usr/lib/x86_64-linux-gnu
  # Debian names its Open MPI programs *.openmpi and links the plain names at install time.
  for tool in mpirun mpiexec mpicc mpicxx; do ln -sf "$tool.openmpi" "$usr/bin/$tool"; done
  export PATH=$usr/bin:$PATH
  export LD_LIBRARY_PATH=$lib:$lib/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # Open MPI finds its components, help texts and compiler wrapper data under the prefix.
  export OPAL_PREFIX=$usr
  export CMAKE_PREFIX_PATH=$usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
  # Debian's multiarch headers (libjpeg's jconfig.h), which a compiler looks for only in its own
  # /usr/include/x86_64-linux-gnu.
  export CPATH=$usr/include/x86_64-linux-gnu${CPATH:+:$CPATH}
fi

if torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null); then
  export CMAKE_PREFIX_PATH=$torch_prefix${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
fi
# The node's compilers may not be CI's, whose warnings the preset's -Werror is for.
configure=(--preset cuda -DCOMMSGD_WERROR=OFF)
[ -n "${CUDA_ARCHITECTURES:-}" ] && configure+=("-DCMAKE_CUDA_ARCHITECTURES=$CUDA_ARCHITECTURES")
digits=/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz
if [ ! -f "$digits" ] && digits=$(python3 -c 'import os, sklearn
print(os.path.join(os.path.dirname(sklearn.__file__), "datasets", "data", "digits.csv.gz"))' 2>/dev/null); then
  configure+=("-DCOMMSGD_DIGITS_CSV=$digits")
fi

{
  echo "commsgd $(git describe --always --dirty 2>/dev/null || echo unknown), $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 || true
  python3 -c 'import torch; print("PyTorch", torch.__version__, "CUDA", torch.version.cuda)' 2>&1 ||
    true
  { mpirun --version 2>&1 || echo "no mpirun on the PATH"; } | head -1
} | tee "$out/machine.txt"

cmake "${configure[@]}" 2>&1 | tee "$out/configure.log"
if ! cmake --build --preset cuda -j "$jobs" >"$out/build.log" 2>&1; then
  grep -E -A3 "error|FAILED" "$out/build.log" | head -n 60
  echo "gpu-check: the build failed; the whole log is $out/build.log" >&2
  exit 1
fi
echo "built; $(grep -c "warning:" "$out/build.log" || true) compiler warning(s) in $out/build.log"

tests=0
ctest --preset gpu -j "$jobs" 2>&1 | tee "$out/ctest-gpu.log" || tests=$?

benchmark=0
build/cuda/tests/bench/commsgd-bench gpu-kernels --sizes 1000000,25000000 --densities 0.001,0.01 \
  --db "$out/bench.sqlite" 2>&1 | tee "$out/gpu-kernels.txt" || benchmark=$?

# The papers' models on this GPU, one rank each: the time besides communication from which the
# cost model predicts the gTop-k paper's 32-worker 1 GbE table (results/costmodel/run.sh measures
# the same on CPUs). The first logged window, the warm-up, is not counted.
training=0
if [ "$benchmark" -eq 0 ]; then
  for model in resnet20 vgg16; do
    batch=32
    [ "$model" = vgg16 ] && batch=128
    for algo in dense topk gtopk; do
      build/cuda/trainer/commsgd-train --device cuda --algo "$algo" --model "$model" \
        --dataset synthetic --synthetic-shape 3,32,32 --synthetic-train $((batch * 30)) \
        --batch-size "$batch" --max-steps 30 --log-every 10 --db "$out/runs.sqlite" --quiet ||
        training=$?
    done
  done
  build/cuda/analysis/report/commsgd-report simulate paper -f markdown "$out/runs.sqlite" |
    tee "$out/paper.md" || training=$?
fi

echo "gpu-check: logs, bench.sqlite, runs.sqlite and paper.md in $out"
for status in "$tests" "$benchmark" "$training"; do [ "$status" -eq 0 ] || exit "$status"; done
