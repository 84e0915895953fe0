#!/usr/bin/env bash
# Prepares, on a build machine, what scripts/gpu-check.sh needs on a lent GPU machine that has
# no MPI, no network and only minutes to spend: the GPU tests that need neither LibTorch nor a
# GPU to build (test_cuda_kernels; device_backends and device_algorithms, which the cuda preset
# has only where CMake found NCCL), built with the cuda preset and stripped, and the packages of
# scripts/bundle-deps.sh. It checks that every library those programs load is in that bundle or
# on the GPU machine (its driver and CUDA toolkit, PyTorch's pip wheels, the base system), and
# describes DIR in DIR/manifest.txt, which gpu-check.sh reads too.
#
# DIR travels to the GPU machine as a carried path, and carried paths hold 64 MiB in all: the
# script fails above 60 MiB.
#
# Usage: scripts/gpu-prepare.sh [--jobs N] [DIR]     (DIR: gpu-carry)
set -euo pipefail

usage() {
  echo "usage: scripts/gpu-prepare.sh [--jobs N] [DIR]  (DIR: gpu-carry)" >&2
  exit "${1:-2}"
}
die() {
  echo "gpu-prepare: $*" >&2
  exit 1
}

dir=gpu-carry jobs=$(nproc)
while [ $# -gt 0 ]; do
  case $1 in
    --jobs) [ $# -ge 2 ] || usage; jobs=$2; shift 2 ;;
    -h | --help) usage 0 ;;
    -*) usage ;;
    *) dir=$1; shift ;;
  esac
done
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
cd "$(dirname "$0")/.."

build=build/cuda
targets=(test_cuda_kernels device_backends device_algorithms)
limit_mib=60
built=() missing=()

# The cuda preset as scripts/test.sh configures it, so that both share build/cuda and ccache
# serves each the other's objects; 80 and 90 cover the A100 and the H100/H200.
build_tests() {
  command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || die "no CUDA toolkit (nvcc)"
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
  cmake --preset cuda -DCMAKE_CUDA_ARCHITECTURES="80;90" >/dev/null
  local all t
  all=$(ninja -C "$build" -t targets all | cut -d: -f1)
  for t in "${targets[@]}"; do
    if grep -qx "$t" <<<"$all"; then built+=("$t"); else missing+=("$t"); fi
  done
  [ ${#built[@]} -gt 0 ] || die "the cuda preset has none of ${targets[*]}"
  cmake --build --preset cuda -j "$jobs" --target "${built[@]}"
  rm -rf "${dir:?}/bin"
  mkdir -p "$dir/bin"
  for t in "${built[@]}"; do strip --strip-unneeded -o "$dir/bin/$t" "$build/tests/$t"; done
}

bundle_deps() {
  rm -rf "$dir/deps"
  scripts/bundle-deps.sh "$dir/deps" >/dev/null
}

# Who provides each library a program loads (what ldd resolves, the bundle unpacked first on the
# path as gpu-check.sh puts it): the bundle, the GPU machine's CUDA, or the base system every
# Linux has (bundle-deps.sh leaves those out on purpose). Anything else would be missing there.
provider() {
  local soname=$1 path=$2
  case $path in "$unpacked"/*) echo deps; return ;; esac
  case $soname in
    libcudart.so.*) echo "node: CUDA runtime (PyTorch's nvidia wheel, or the CUDA toolkit)" ;;
    libnccl.so.*) echo "node: NCCL (PyTorch's nvidia-nccl wheel, or NCCL_HOME)" ;;
    libcuda.so.*) echo "node: the NVIDIA driver" ;;
    linux-vdso.so.1 | ld-linux-x86-64.so.2 | libc.so.6 | libm.so.6 | libdl.so.2 | \
      libpthread.so.0 | librt.so.1 | libstdc++.so.6 | libgcc_s.so.1 | libatomic.so.1 | \
      libz.so.1 | libudev.so.1)
      echo "base system" ;;
    *) echo "MISSING" ;;
  esac
}

# Writes "SONAME<TAB>PROVIDER" for every library the prepared programs and the bundled MPI
# launcher load, to $libraries; fails if one would be missing on the GPU machine.
check_libraries() {
  local deb lib programs=("$dir"/bin/*) soname path
  for deb in "$dir"/deps/*.deb; do dpkg-deb -x "$deb" "$unpacked"; done
  lib=$unpacked/usr/lib/x86_64-linux-gnu
  programs+=("$unpacked/usr/bin/orterun" "$unpacked/usr/bin/orted")
  LD_LIBRARY_PATH=$lib:$lib/openmpi/lib ldd "${programs[@]}" |
    awk '/=>/ { print $1, $3; next } /^\t/ { n = split($1, p, "/"); print p[n], $1 }' |
    sort -u -k1,1 | while read -r soname path; do
      printf '%s\t%s\n' "$soname" "$(provider "$soname" "$path")"
    done >"$libraries"
  if grep -q MISSING "$libraries"; then
    die "no provider on the GPU machine for: $(grep MISSING "$libraries" | cut -f1 | xargs)"
  fi
}

# The newest version of the C or C++ runtime (GLIBC, GLIBCXX) the programs and the bundle ask for,
# and a file that asks for it: the GPU machine's must be at least that (gpu-check.sh's probe
# compares glibc).
newest_version() {
  local f
  find "$dir/bin" "$unpacked" -type f \( -name '*.so*' -o -perm -u+x \) | while read -r f; do
    objdump -T "$f" 2>/dev/null | grep -o "$1_[0-9.]*[0-9]" | sort -Vu | tail -1 |
      sed "s|\$| ${f##*/}|"
  done | sort -V | tail -1
}

describe() {
  case $1 in
    bin/test_cuda_kernels) echo "GoogleTest: the CUDA kernels against the CPU ones" ;;
    bin/device_backends) echo "GoogleTest under mpirun: the NCCL and staged device back ends" ;;
    bin/device_algorithms) echo "GoogleTest under mpirun: the algorithms on device buffers" ;;
    deps/*.deb) dpkg-deb -f "$dir/$1" Package Version | paste -sd' ' |
      sed 's/^Package: \(.*\) Version: \(.*\)$/Debian 12 package \1 \2/' ;;
  esac
}

nvcc_version() {
  local nvcc
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  "$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/CUDA \1/p'
}

write_manifest() {
  local f revision
  revision=$(git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
  {
    echo "commsgd GPU carry for scripts/gpu-check.sh, prepared $(date -u +%FT%TZ)"
    echo "revision $revision ($(git status --porcelain 2>/dev/null | wc -l) paths changed" \
      "in the working tree)"
    echo "built cuda preset, CMAKE_CUDA_ARCHITECTURES=80;90, $(nvcc_version)"
    echo "missing ${missing[*]:-none} (targets the cuda preset does not have here)"
    echo "requires $(newest_version GLIBC)"
    echo "requires $(newest_version GLIBCXX)"
    echo
    echo "# bytes, file, what it is"
    (cd "$dir" && find bin deps -type f | sort) | while read -r f; do
      printf '%10d  %s  %s\n' "$(stat -c %s "$dir/$f")" "$f" "$(describe "$f")"
    done
    echo
    echo "# libraries they load (ldd, deps/ unpacked first on the path), and who provides each"
    sed 's/^/lib /' "$libraries"
  } >"$dir/manifest.txt"
}

mib() { du -sb "$1" | awk '{ printf "%.1f MiB", $1 / 1048576 }'; }

check_size() {
  [ "$(du -sb "$dir" | cut -f1)" -le $((limit_mib * 1024 * 1024)) ] ||
    die "$dir is $(mib "$dir"), over the $limit_mib MiB a carried path may take"
  echo "gpu-prepare: $dir: $(mib "$dir/bin") in bin (${built[*]}), $(mib "$dir/deps") in deps" \
    "($(find "$dir/deps" -name '*.deb' | wc -l) packages), $(mib "$dir") in all;" \
    "missing: ${missing[*]:-none}"
}

unpacked=$(mktemp -d)
libraries=$unpacked.libraries
trap 'rm -rf "$unpacked" "$libraries"' EXIT
build_tests
bundle_deps
check_libraries
write_manifest
check_size
