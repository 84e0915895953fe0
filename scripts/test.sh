#!/usr/bin/env bash
# Builds commsgd and runs the whole test suite: the release build (unit, multi-rank MPI, bench
# smoke tests) and the unit tests again under ASan + UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

jobs=$(nproc)
# Paths relative to the checkout in the cache's keys, so that a build directory with the same
# flags as another (the cuda preset's here, beside release) reuses its objects.
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1

cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs"
ctest --preset release -j "$jobs"

# The cuda preset compiles with -Werror: what a GPU node builds (the CUDA kernels, the device
# back ends, commsgd-train's device path and the GPU tests), compiled here without a GPU. With
# release's architectures it has release's flags, so ccache serves its objects and this costs
# the links.
if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
  cmake --preset cuda -DCMAKE_CUDA_ARCHITECTURES="80;90" >/dev/null
  cmake --build --preset cuda -j "$jobs" --target commsgd-train commsgd-bench test_cuda_kernels \
    device_backends device_algorithms test_gpu_trainer
fi

cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs"
ctest --preset asan -j "$jobs"
