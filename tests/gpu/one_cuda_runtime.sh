#!/usr/bin/env bash
# Each program given links the shared CUDA runtime and holds no copy of the static one: two
# runtimes in one process keep two current devices (CMakeLists.txt, CMAKE_CUDA_RUNTIME_LIBRARY).
# Usage: one_cuda_runtime.sh PROGRAM...
set -euo pipefail
status=0
for program in "$@"; do
  if ! readelf -d "$program" | grep -q 'NEEDED.*\[libcudart\.so'; then
    echo "$program: does not load the shared CUDA runtime (libcudart.so)"
    status=1
  fi
  # The static runtime brings its entry points into the program as defined symbols.
  if nm --defined-only "$program" | grep -qw 'cudaMallocAsync'; then
    echo "$program: defines cudaMallocAsync itself: the static CUDA runtime is linked in"
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "one CUDA runtime, the shared one, in: $*"
exit "$status"
