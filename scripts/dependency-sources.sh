#!/usr/bin/env bash
# Local copies of the releases cmake/dependencies.cmake pins (CLI11, fmt, nlohmann_json, toml++,
# GoogleTest), for a build that takes them from disk instead of downloading them: Debian 12's
# source packages of the same upstream releases, from the Debian archive the system already uses,
# through a private apt configuration (nothing is added to the system's sources, nothing is
# installed). Each is checked to be the pinned release (the upstream version in its file name),
# unpacked into DIR/NAME, and checked to hold the pinned commit's files where the build reads them
# (scripts/check-dependency-copy.sh); then the CMake arguments that point FetchContent at them are
# printed, one a line.
#
# Where the archive has no source package of toml++ (some mirrors answer 404 for it), DIR/
# tomlplusplus holds the headers of Debian's binary package of the same release (toml++ is
# header-only; they are checked to be the pinned commit's include/toml++ as any copy is) under a
# CMakeLists.txt written here that declares the library's target as toml++'s own does
# (tomlplusplus::tomlplusplus), and says so on stderr.
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
                           [tomlplusplus]=tomlplusplus [GTest]=googletest)
pinned_release() {  # commsgd_dependency(NAME RELEASE ...
  sed -n "s/^ *commsgd_dependency(\($1\) \([^ ]*\) .*/\2/p" "$root/cmake/dependencies.cmake"
}
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

uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
for type in deb-src deb; do
  echo "$type [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
    "${uri:-http://deb.debian.org/debian} bookworm main"
done >"$cache/sources.list"
apt=(-o "Dir::Etc::sourcelist=$cache/sources.list" -o Dir::Etc::sourceparts=-
     -o "Dir::State::Lists=$cache/lists" -o "Dir::Cache=$cache/apt")
updated=no
download() {  # apt-get ARGS..., in the cache; whether it worked
  if [ "$updated" = no ]; then
    apt-get "${apt[@]}" -qq update
    chmod a+rwx "$cache"  # apt-get runs as the _apt user when it can
    updated=yes
  fi
  (cd "$cache" && apt-get "${apt[@]}" -qq "$@" >/dev/null 2>&1)
}
cached() { compgen -G "$cache/$1" | head -n 1 || true; }

for name in "${!source_package[@]}"; do
  package=${source_package[$name]}
  rm -rf "${dir:?}/$name" && mkdir -p "$dir/$name"
  orig=$(cached "${package}_*.orig.tar.*")
  if [ -z "$orig" ] && download source --download-only "$package"; then
    orig=$(cached "${package}_*.orig.tar.*")
  fi
  if [ -n "$orig" ]; then
    check_release "$name" "$orig"
    tar -xf "$orig" -C "$dir/$name" --strip-components=1
  elif [ "$name" = tomlplusplus ]; then
    deb=$(cached "libtomlplusplus-dev_*.deb")
    if [ -z "$deb" ] && download download libtomlplusplus-dev; then
      deb=$(cached "libtomlplusplus-dev_*.deb")
    fi
    [ -n "$deb" ] || { echo "dependency-sources: no toml++ to be had" >&2; exit 1; }
    check_release "$name" "$deb"
    echo "dependency-sources: no source package of toml++ here: its binary package's headers" >&2
    dpkg-deb -x "$deb" "$dir/$name.deb"
    mv "$dir/$name.deb/usr/include" "$dir/$name/include" && rm -rf "$dir/$name.deb"
    cat >"$dir/$name/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.14)
project(tomlplusplus LANGUAGES CXX)
add_library(tomlplusplus_tomlplusplus INTERFACE)
add_library(tomlplusplus::tomlplusplus ALIAS tomlplusplus_tomlplusplus)
target_include_directories(tomlplusplus_tomlplusplus INTERFACE "${PROJECT_SOURCE_DIR}/include")
target_compile_features(tomlplusplus_tomlplusplus INTERFACE cxx_std_17)
EOF
  else
    echo "dependency-sources: could not download the source package $package" >&2
    exit 1
  fi
  "$root/scripts/check-dependency-copy.sh" "$name" "$dir/$name" || exit 1
  echo "-DFETCHCONTENT_SOURCE_DIR_${name^^}=$dir/$name"
done
