#!/usr/bin/env bash
# LibTorch from a prefix of its own, outside the system's paths, as a pip or conda PyTorch gives
# it (CMAKE_PREFIX_PATH from torch.utils.cmake_prefix_path): the system's LibTorch is laid out
# again in a scratch prefix (its CMake package files copied, which find the rest relative to
# themselves; its libraries and headers linked), and a fresh configure with
# -DCMAKE_PREFIX_PATH=PREFIX must take that one: Torch_DIR, the headers the trainer compiles
# with and the libraries commsgd-train links are the prefix's. Configure only: compiling against
# the same headers again would say nothing new.
#   libtorch_elsewhere.sh SOURCE_DIR TORCH_DIR   (TORCH_DIR: the system's, from a build's cache)
set -euo pipefail
source_dir=$1 torch_dir=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../support/script.sh"
work=$(mktemp -d /tmp/commsgd-libtorch.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The system's package: PREFIX/lib/<arch>/cmake/Torch beside ../Caffe2, libraries in lib/<arch>.
system_prefix=$(cd "$torch_dir/../../../.." && pwd)
package=${torch_dir#"$system_prefix"/}  # lib/x86_64-linux-gnu/cmake/Torch
libraries=$(cd "$torch_dir/../.." && pwd)
[ -f "$torch_dir/TorchConfig.cmake" ] && [ -d "$torch_dir/../Caffe2" ] ||
  fail "no LibTorch CMake package at $torch_dir"
prefix=$work/libtorch
mkdir -p "$prefix/$package/.."
cp -r "$torch_dir" "$torch_dir/../Caffe2" "$prefix/$package/.."
ln -s "$system_prefix/include" "$prefix/include"
for library in "$libraries"/lib{torch,c10,caffe2,shm}*.so*; do
  [ -e "$library" ] && ln -s "$library" "$prefix/${package%/cmake/Torch}/"
done

build=$work/build
cmake -S "$source_dir" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOMMSGD_CUDA=OFF \
  -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log" 2>&1 ||
  { tail -n 30 "$work/configure.log"; fail "configure"; }
grep -q "^Torch_DIR:PATH=$prefix/$package\$" "$build/CMakeCache.txt" ||
  fail "CMake took $(grep '^Torch_DIR' "$build/CMakeCache.txt"), not the prefix's"
jq -e --arg inc "$prefix/include/torch/csrc/api/include" \
  '[.[] | select(.file | endswith("trainer/trainer.cpp")) | .command | contains($inc)] | any' \
  "$build/compile_commands.json" >/dev/null || fail "the trainer does not compile with the prefix's headers"
grep -A 3 "^build trainer/commsgd-train:" "$build/build.ninja" |
  grep -q "$prefix/${package%/cmake/Torch}/libtorch" || fail "commsgd-train does not link the prefix's LibTorch"
echo "libtorch_elsewhere: configured against the LibTorch in $prefix"
