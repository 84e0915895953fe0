#!/usr/bin/env bash
# cmake/FindNCCL.cmake finds NCCL where GPU nodes keep it with only the versioned library
# (libnccl.so.2, as the nvidia-nccl-cu* wheel ships it): under NCCL_ROOT, and in the wheel of the
# Python that has PyTorch; takes the library of the header's own installation; and finds nothing
# where nothing is. Empty stand-ins: finding needs
# only the files to be there.
# Usage: find_nccl.sh SOURCE_DIR WORK_DIR
set -euo pipefail
source_dir=$1 work=$2
rm -rf "$work"
# A prefix holding NCCL as it is laid out at `root` (include/nccl.h, lib/libnccl.so.2).
lay_out() {
  local root=$1 minor=$2
  mkdir -p "$root/include" "$root/lib"
  printf '#define NCCL_MAJOR 2\n#define NCCL_MINOR %s\n#define NCCL_PATCH 5\n' "$minor" \
    >"$root/include/nccl.h"
  : >"$root/lib/libnccl.so.2"
}
configure() {
  local name=$1
  shift
  echo "== $name"
  cmake -S "$source_dir/tests/cmake/find_nccl" -B "$work/$name" \
    -DCOMMSGD_SOURCE_DIR="$source_dir" -DPython3_EXECUTABLE=/usr/bin/python3 "$@"
}

lay_out "$work/prefix" 21
configure nccl_root -DNCCL_ROOT="$work/prefix" \
  -DEXPECT_LIBRARY="$work/prefix/lib/libnccl.so.2" -DEXPECT_VERSION=2.21.5
NCCL_HOME="$work/prefix" configure nccl_home_environment \
  -DEXPECT_LIBRARY="$work/prefix/lib/libnccl.so.2" -DEXPECT_VERSION=2.21.5

# pip's layout: site-packages/nvidia/nccl/{include,lib}, nvidia and nvidia.nccl namespace packages.
lay_out "$work/site-packages/nvidia/nccl" 27
PYTHONPATH="$work/site-packages" configure wheel \
  -DEXPECT_LIBRARY="$work/site-packages/nvidia/nccl/lib/libnccl.so.2" -DEXPECT_VERSION=2.27.5

# Two installations: one earlier on the path with only a library, the wheel with both. The
# library must be the header's own.
mkdir -p "$work/library-only/lib"
: >"$work/library-only/lib/libnccl.so.2"
PYTHONPATH="$work/site-packages" configure header_and_library_together \
  -DCMAKE_PREFIX_PATH="$work/library-only" \
  -DEXPECT_LIBRARY="$work/site-packages/nvidia/nccl/lib/libnccl.so.2" -DEXPECT_VERSION=2.27.5

configure nowhere -DEXPECT_LIBRARY=
echo "FindNCCL: 5 of 5 layouts as expected"
