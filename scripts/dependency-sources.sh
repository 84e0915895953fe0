#!/usr/bin/env bash
# Local copies of the releases cmake/dependencies.cmake pins (CLI11, fmt, nlohmann_json, toml++,
# GoogleTest), for a build that takes them from disk instead of downloading them: Debian 12's
# source packages of the same upstream releases, from the Debian archive the system already uses,
# through a private apt configuration (nothing is added to the system's sources, nothing is
# installed). Each is checked to be the pinned release (the upstream version in its file name),
# then unpacked into DIR/NAME, and the CMake arguments that point FetchContent at them are
# printed, one a line.
#
# toml++ is the exception: this archive mirror answers 404 for its source package, so DIR/
# tomlplusplus holds the headers of Debian's binary package (toml++ is header-only) under a
# CMakeLists.txt written here that declares the library's target as toml++'s own does
# (tomlplusplus::tomlplusplus). That copy exercises commsgd's side of the fetch, not toml++'s
# CMake files.
#
# Usage: scripts/dependency-sources.sh DIR   (the downloads are cached in DIR/downloads)
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: scripts/dependency-sources.sh DIR" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1/downloads/lists/partial" "$1/downloads/apt/archives/partial"
dir=$(cd "$1" && pwd)
cache=$dir/downloads

# NAME in dependencies.cmake, then its Debian source package.
declare -A source_package=([fmt]=fmtlib [nlohmann_json]=nlohmann-json3 [CLI11]=cli11
                           [GTest]=googletest)
pinned_release() {  # commsgd_dependency(NAME RELEASE ...
  sed -n "s/^ *commsgd_dependency(\($1\) \([^ ]*\) .*/\2/p" "$root/cmake/dependencies.cmake"
}

uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
  "${uri:-http://deb.debian.org/debian} bookworm main" >"$cache/sources.list"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
  "${uri:-http://deb.debian.org/debian} bookworm main" >>"$cache/sources.list"
apt=(-o "Dir::Etc::sourcelist=$cache/sources.list" -o Dir::Etc::sourceparts=-
     -o "Dir::State::Lists=$cache/lists" -o "Dir::Cache=$cache/apt")
wanted=("${source_package[@]}")
missing=()
for p in "${wanted[@]}"; do compgen -G "$cache/${p}_*.orig.tar.*" >/dev/null || missing+=("$p"); done
compgen -G "$cache/libtomlplusplus-dev_*.deb" >/dev/null || missing+=(libtomlplusplus-dev)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get "${apt[@]}" -qq update
  chmod a+rwx "$cache"  # apt-get runs as the _apt user when it can
  sources=() binaries=()
  for p in "${missing[@]}"; do
    if [ "$p" = libtomlplusplus-dev ]; then binaries+=("$p"); else sources+=("$p"); fi
  done
  (cd "$cache" && { [ ${#sources[@]} -eq 0 ] || apt-get "${apt[@]}" -qq source --download-only "${sources[@]}"; } &&
    { [ ${#binaries[@]} -eq 0 ] || apt-get "${apt[@]}" -qq download "${binaries[@]}"; }) >/dev/null
fi

# The upstream version of a Debian file name: NAME_1.2.3+ds1.orig.tar.gz -> 1.2.3.
upstream_version() { basename "$1" | sed -E 's/^[^_]+_([0-9.]+)[^0-9.].*$/\1/; s/\.$//'; }
check_release() {  # NAME FILE
  local want got
  want=$(pinned_release "$1")
  got=$(upstream_version "$2")
  [ -n "$want" ] && [ "$want" = "$got" ] || {
    echo "dependency-sources: $1: Debian has $got, dependencies.cmake pins ${want:-nothing}" >&2
    exit 1
  }
}

for name in "${!source_package[@]}"; do
  orig=$(compgen -G "$cache/${source_package[$name]}_*.orig.tar.*" | head -n 1)
  check_release "$name" "$orig"
  rm -rf "${dir:?}/$name" && mkdir -p "$dir/$name"
  tar -xf "$orig" -C "$dir/$name" --strip-components=1
  echo "-DFETCHCONTENT_SOURCE_DIR_${name^^}=$dir/$name"
done

deb=$(compgen -G "$cache/libtomlplusplus-dev_*.deb" | head -n 1)
check_release tomlplusplus "$deb"
rm -rf "${dir:?}/tomlplusplus" "$dir/tomlplusplus.deb" && mkdir -p "$dir/tomlplusplus"
dpkg-deb -x "$deb" "$dir/tomlplusplus.deb"
mv "$dir/tomlplusplus.deb/usr/include" "$dir/tomlplusplus/include" && rm -rf "$dir/tomlplusplus.deb"
cat >"$dir/tomlplusplus/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.14)
project(tomlplusplus LANGUAGES CXX)
add_library(tomlplusplus_tomlplusplus INTERFACE)
add_library(tomlplusplus::tomlplusplus ALIAS tomlplusplus_tomlplusplus)
target_include_directories(tomlplusplus_tomlplusplus INTERFACE "${PROJECT_SOURCE_DIR}/include")
target_compile_features(tomlplusplus_tomlplusplus INTERFACE cxx_std_17)
EOF
echo "-DFETCHCONTENT_SOURCE_DIR_TOMLPLUSPLUS=$dir/tomlplusplus"
