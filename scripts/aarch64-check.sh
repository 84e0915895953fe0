#!/usr/bin/env bash
# Builds commsgd's LibTorch-free part for 64-bit ARM (aarch64: Grace Hopper, Graviton, Ampere)
# and runs its tests under qemu-user: the kernels, algorithms, the communicator over Open MPI,
# the report and analysis, the job tools, with their unit tests and the multi-rank MPI tests
# (the build machine's mpirun starting ARM ranks under qemu). commsgd-train itself is not built:
# it needs LibTorch, which this check does not download.
#
# Debian's cross compiler (g++-aarch64-linux-gnu) and qemu-user-static build and run it; the ARM
# libraries (Debian 12's arm64 packages of Open MPI, SQLite, zlib, libjpeg, libpng and the C and
# C++ runtime) are downloaded with a private apt configuration (nothing is added to the system's
# sources or architectures, nothing is installed), cached in DIR, and unpacked into DIR/root,
# the root the ARM programs see. CLI11, fmt, nlohmann_json, toml++ and GoogleTest are built from
# Debian's copies of the pinned releases (scripts/dependency-sources.sh).
#
# Usage: scripts/aarch64-check.sh [--cache DIR] [--build DIR]
#   --cache DIR  the downloads and the unpacked root (default: .deb/aarch64)
#   --build DIR  the build tree (default: build/aarch64)
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: scripts/aarch64-check.sh [--cache DIR] [--build DIR]  (--help: what it checks)" >&2
  exit 2
}
cache=.deb/aarch64
build=build/aarch64
while [ $# -gt 0 ]; do
  case $1 in
    --cache) [ $# -ge 2 ] || usage; cache=$2; shift 2 ;;
    --build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) usage ;;
  esac
done
for tool in aarch64-linux-gnu-g++ qemu-aarch64-static; do
  command -v "$tool" >/dev/null || {
    echo "aarch64-check: no $tool (Debian: g++-aarch64-linux-gnu, qemu-user-static;" \
      "scripts/install-deps.sh installs them)" >&2
    exit 77
  }
done

# Open MPI's library and every library it and the others load, as an ARM machine's root has them.
packages=(
  libc6 libgcc-s1 libstdc++6 zlib1g zlib1g-dev libsqlite3-0 libsqlite3-dev
  libjpeg62-turbo libjpeg62-turbo-dev libpng16-16 libpng-dev
  libopenmpi-dev libopenmpi3 openmpi-common libhwloc15 libevent-2.1-7 libevent-core-2.1-7
  libevent-pthreads-2.1-7 libpmix2 libfabric1 libucx0 libibverbs1 librdmacm1 libnl-3-200
  libnl-route-3-200 libnuma1 libmunge2 libltdl7 libudev1 libxml2 libicu72 liblzma5 libcap2
  libssl3 libzstd1
)
mkdir -p "$cache/lists/partial" "$cache/apt/archives/partial" "$cache/debs"
cache=$(cd "$cache" && pwd)
uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
echo "deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
  "${uri:-http://deb.debian.org/debian} bookworm main" >"$cache/sources.list"
touch "$cache/status"  # an empty dpkg status: nothing counts as installed for arm64
apt=(-o "Dir::Etc::sourcelist=$cache/sources.list" -o Dir::Etc::sourceparts=-
     -o "Dir::State::Lists=$cache/lists" -o "Dir::Cache=$cache/apt"
     -o "Dir::State::status=$cache/status" -o APT::Architecture=arm64
     -o APT::Architectures::=arm64)
missing=()
for p in "${packages[@]}"; do
  compgen -G "$cache/debs/${p}_*.deb" >/dev/null || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "aarch64-check: downloading ${#missing[@]} arm64 packages"
  apt-get "${apt[@]}" -qq update
  chmod a+rwx "$cache/debs"  # apt-get downloads as the _apt user when it can
  (cd "$cache/debs" && apt-get "${apt[@]}" -qq download "${missing[@]}" 2>&1 |
    grep -v 'unsandboxed' || true)
  for p in "${missing[@]}"; do
    compgen -G "$cache/debs/${p}_*.deb" >/dev/null || {
      echo "aarch64-check: could not download $p (arm64)" >&2
      exit 1
    }
  done
fi
rm -rf "$cache/root" && mkdir -p "$cache/root"
for p in "${packages[@]}"; do
  for deb in "$cache/debs/${p}"_*.deb; do dpkg-deb -x "$deb" "$cache/root"; done
done

sources=$(scripts/dependency-sources.sh "$cache/sources")
mapfile -t sources <<<"$sources"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
start=$(date +%s)
cmake -S . -B "$build" -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
  -DCOMMSGD_AARCH64_ROOT="$cache/root" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOMMSGD_WERROR=ON \
  -DCOMMSGD_BUILD_TRAINER=OFF -DCOMMSGD_CUDA=OFF -DCOMMSGD_FETCH_MISSING=ON "${launcher[@]}" \
  "${sources[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)"
built=$(date +%s)
ctest --test-dir "$build" -j "$(nproc)" --output-on-failure
echo "aarch64-check: built in $((built - start)) s, tested under qemu in $(($(date +%s) - built)) s"
