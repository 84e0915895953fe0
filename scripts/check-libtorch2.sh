#!/usr/bin/env bash
# Checks that commsgd's LibTorch code and its CUDA and NCCL code compile against LibTorch 2.x:
# Debian 13 (trixie)'s CUDA LibTorch 2.6 (libtorch-cuda-dev, libtorch-cuda-2.6) and NCCL 2.22
# (libnccl-dev), on a Debian 12 machine whose own LibTorch is 1.13 (CPU only), with the CUDA
# toolkit at /usr/local/cuda. CI builds against 1.13; a GPU node's PyTorch is 2.x.
#
# The .deb files are downloaded with a private apt configuration (nothing is added to the
# system's sources, nothing is installed), cached in DIR, and unpacked into DIR/root. The project
# is configured against that prefix (the release preset, in build/libtorch2), and every
# translation unit CMake compiles with the 2.6 prefix's headers (LibTorch's or NCCL's) on its
# include path, and every .cu file, is compiled to an object file with ninja, one at a time.
# Each object's header list is then checked: one from the system's LibTorch 1.13 fails it, and so
# does an nccl.h other than the NCCL found (the CUDA toolkit ships one of its own, of another
# version, which must not come first).
#
# Nothing is linked: trixie's libtorch 2.6 needs glibc 2.38 and GCC 13's libstdc++ (GLIBC_2.38,
# GLIBCXX_3.4.32), its libnccl2 glibc 2.38; Debian 12 has glibc 2.36 and GCC 12's, and what they
# load (libcudart12, cuDNN, protobuf 32t64, ...) is not downloaded. So commsgd-train,
# commsgd-bench and the test executables are neither linked nor run: a link or symbol mismatch
# shows up only on a machine with LibTorch 2.x installed (scripts/gpu-check.sh on a GPU node).
#
# Usage: scripts/check-libtorch2.sh [--cache DIR]
#   --cache DIR  where the .deb files are downloaded to and unpacked (default: .deb/trixie);
#                they are downloaded only when missing
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: scripts/check-libtorch2.sh [--cache DIR]  (--help: what it checks)" >&2
  exit 2
}
cache=.deb/trixie
while [ $# -gt 0 ]; do
  case $1 in
    --cache) [ $# -ge 2 ] || usage; cache=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) usage ;;
  esac
done
packages=(libtorch-cuda-dev libtorch-cuda-2.6 libnccl-dev)
build=build/libtorch2
mkdir -p "$cache/lists/partial" "$cache/apt/archives/partial" "$build/check-logs"
cache=$(cd "$cache" && pwd)
root=$cache/root
start=$SECONDS

# Download: the system's archive (its first URI), trixie, through lists and a package cache of
# our own. apt-get download runs as the _apt user when it can, which must be able to write here.
missing=()
for p in "${packages[@]}"; do compgen -G "$cache/${p}_*.deb" >/dev/null || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
    "${uri:-http://deb.debian.org/debian} trixie main contrib" >"$cache/sources.list"
  apt=(-o "Dir::Etc::sourcelist=$cache/sources.list" -o Dir::Etc::sourceparts=-
       -o "Dir::State::Lists=$cache/lists" -o "Dir::Cache=$cache/apt")
  apt-get "${apt[@]}" -q update
  chmod a+rwx "$cache"
  (cd "$cache" && apt-get "${apt[@]}" -q download "${missing[@]}")
fi
debs=$(cd "$cache" && ls -- *.deb)
echo "packages: $(echo "$debs" | tr '\n' ' ')"

# Unpack (1.7 GB, mostly libtorch_cuda.so) unless the same .deb files already are.
if [ "$(cat "$root/.debs" 2>/dev/null)" != "$debs" ]; then
  rm -rf "$root"
  for deb in $debs; do dpkg-deb -x "$cache/$deb" "$root"; done
  echo "$debs" >"$root/.debs"
fi

# Configure against the prefix: CMAKE_PREFIX_PATH is searched before the system's paths, so
# find_package(Torch) and FindNCCL take trixie's. LibTorch 2.6's CMake files want
# CUDA::nvToolsExt, which CUDA 13 does not have (its NVTX 3 is header-only): an empty stand-in
# lets CMake generate, and nothing is linked here anyway.
echo 'add_library(CUDA::nvToolsExt INTERFACE IMPORTED GLOBAL)' >"$build/nvtoolsext.cmake"
cmake --preset release -B "$build" -Wno-dev -DCMAKE_PREFIX_PATH="$root/usr" \
  -DCMAKE_PROJECT_INCLUDE="$PWD/$build/nvtoolsext.cmake" \
  >"$build/check-logs/configure.log" 2>&1 ||
  { tail -n 40 "$build/check-logs/configure.log"; echo "check-libtorch2: configure failed" >&2; exit 1; }
grep -q "^Torch_DIR:PATH=$root/" "$build/CMakeCache.txt" ||
  { echo "check-libtorch2: CMake did not take trixie's LibTorch" >&2; exit 1; }

# One line per translation unit: each object file alone, one job (the machine is shared). An
# object whose headers came from the system's LibTorch 1.13, or whose nccl.h is not trixie's,
# has not been checked: it fails.
mapfile -t units < <(jq -r --arg inc "$root/usr/include" '[.[] | select(
    (.command | contains($inc)) or (.file | endswith(".cu")))] | unique_by(.file)[]
  | "\(.command | capture(" -o (?<o>\\S+)").o) \(.file)"' "$build/compile_commands.json")
failed=0
for unit in "${units[@]}"; do
  obj=${unit%% *} src=${unit#* } src=${src#"$PWD/"}
  log=$build/check-logs/${src//\//_}.log
  t=$SECONDS
  if ! ninja -C "$build" -j1 "$obj" >"$log" 2>&1; then
    echo "FAILED  $src  ($log)"
    grep -m 5 -E "error|Error" "$log" | sed 's/^/        /'
    failed=$((failed + 1))
    continue
  fi
  deps=$(ninja -C "$build" -t deps "$obj")
  if grep -qE '^ +/usr/include/(torch|ATen|c10|caffe2)/' <<<"$deps"; then
    echo "FAILED  $src  (compiled against the system's LibTorch 1.13 headers)"
    failed=$((failed + 1))
    continue
  fi
  # ninja names a header inside the source tree (the default cache is) relative to the build.
  nccl_headers=$(grep -E '/nccl\.h$' <<<"$deps" | (cd "$build" && xargs -r realpath -m) || true)
  if [ -n "$nccl_headers" ] && grep -qvF "$root/" <<<"$nccl_headers"; then
    echo "FAILED  $src  (compiled against another nccl.h than the NCCL found:" \
      "$(xargs <<<"$nccl_headers"))"
    failed=$((failed + 1))
    continue
  fi
  echo "ok      $src  ($((SECONDS - t)) s)"
done

echo "check-libtorch2: $((${#units[@]} - failed)) of ${#units[@]} translation units compiled," \
  "$failed failed, in $((SECONDS - start)) s (logs: $build/check-logs)"
echo "not linked: commsgd-train, commsgd-bench and the tests (trixie's LibTorch 2.6 needs" \
  "glibc 2.38 and GCC 13's libstdc++, its NCCL glibc 2.38; this is glibc $(ldd --version |
  sed -n '1s/.* //p'))"
[ "$failed" -eq 0 ]
