#!/usr/bin/env bash
# Installs the Debian 12 packages commsgd builds and tests with, if any are missing.
# As root it runs apt-get; otherwise it prints the command for someone who can.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache git pkg-config
  libtorch-dev libopenblas0-pthread        # LibTorch (CPU) and a fast BLAS for it
  libopenmpi-dev openmpi-bin               # MPI, with PMIx and Slurm support
  libcli11-dev libfmt-dev libsqlite3-dev sqlite3 nlohmann-json3-dev zlib1g-dev
  libtomlplusplus-dev                      # commsgd-sweep reads sweep configs
  libjpeg62-turbo-dev                      # ImageNet JPEG folders (trainer/data/jpeg_decode)
  libpng-dev                               # their PNG files, whatever their name (png_decode)
  googletest libgtest-dev
  python3-sklearn                          # ships the digits data set used by the tests
  dataset-fashion-mnist                    # the reduced-scale experiments' data (results/)
  python3-matplotlib                       # commsgd-report plot
  python3-torch                            # tools/export_torchscript.py (--model torchscript)
  python3-torchvision                      # the loader's peer (tests/bench/loader_vs_torchvision.py)
  slurm-wlm munge iproute2 jq              # the cluster in a box and its tests (jobs/local)
  strace                                   # which files the ranks open (tests/mpi/test_nonfinite)
  g++-aarch64-linux-gnu qemu-user-static   # the aarch64 build and its tests (ctest -L aarch64)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "commsgd: missing packages: ${missing[*]}" >&2
  echo "install them with: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "commsgd: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
