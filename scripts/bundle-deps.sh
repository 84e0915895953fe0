#!/usr/bin/env bash
# Downloads, without installing, the Debian 12 packages commsgd builds and runs with that a GPU
# node's image usually lacks, for a machine that cannot reach a package archive (a lent GPU node,
# an air-gapped cluster): Open MPI with the libraries it loads, and the headers and libraries of
# CLI11, fmt, SQLite, nlohmann-json, toml++, libjpeg-turbo, GoogleTest and zlib. The compiler,
# CMake, Ninja, CUDA and LibTorch are the node's own. scripts/gpu-prepare.sh puts them in the
# folder it carries to a GPU machine, where scripts/gpu-check.sh unpacks them into a private
# prefix; nothing is installed into the system.
#
# Base libraries every Linux has (libc, libstdc++, zlib, libudev, libatomic) are left out on
# purpose: the node's own are newer, and an older copy first on the library path breaks them.
#
# Usage: scripts/bundle-deps.sh DIR
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: scripts/bundle-deps.sh DIR  (downloads the .deb files into DIR)" >&2
  exit 2
fi
dir=$1

packages=(
  # Open MPI 4.1: the launcher, the library, the compiler wrappers CMake's FindMPI asks, and what
  # they load (PMIx, libevent, hwloc, and the network libraries its components open).
  libopenmpi-dev libopenmpi3 openmpi-bin openmpi-common
  libpmix2 libevent-core-2.1-7 libevent-pthreads-2.1-7 libhwloc15 libhwloc-plugins
  libfabric1 libucx0 libibverbs1 ibverbs-providers librdmacm1 libnl-3-200 libnl-route-3-200
  libpsm-infinipath1 libpsm2-2 libmunge2 libnuma1
  # The rest of the build: headers, CMake package files, and the shared libraries behind them.
  libcli11-dev libfmt-dev libfmt9 libsqlite3-dev libsqlite3-0 nlohmann-json3-dev
  libtomlplusplus-dev libtomlplusplus3 libjpeg62-turbo-dev libjpeg62-turbo
  libgtest-dev googletest zlib1g-dev
)

mkdir -p "$dir"
cd "$dir"
# apt-get download runs as the _apt user when it can, which must be able to write here.
chmod a+rwx . 2>/dev/null || true
apt-get download "${packages[@]}"
echo "commsgd: $(ls -1 ./*.deb | wc -l) packages, $(du -sh . | cut -f1), in $(pwd)"
