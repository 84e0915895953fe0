#!/usr/bin/env bash
# A site without CLI11, fmt, nlohmann_json, toml++ and GoogleTest: with all five hidden from CMake
# (CMAKE_DISABLE_FIND_PACKAGE_*), a fresh build directory configures by fetching the pinned
# releases (from local copies: scripts/dependency-sources.sh, each checked to hold the pinned
# commit's files; a copy with one byte changed is refused), builds, and passes the unit tests;
# installed, the fetched libraries go with it, and its CMake package gives commsgd::algorithms to
# a project that finds them there.
#   fetched_dependencies.sh SOURCE_DIR WORK_DIR   (WORK_DIR is kept: the sources are cached there)
set -euo pipefail
source_dir=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../support/script.sh"
mkdir -p "$work"
work=$(cd "$work" && pwd)
mapfile -t local_copies < <("$source_dir/scripts/dependency-sources.sh" "$work/sources")
[ ${#local_copies[@]} -eq 5 ] || fail "dependency-sources.sh gave ${#local_copies[@]} copies, not 5"

altered=$work/altered-tomlplusplus
rm -rf "$altered" && cp -r "$work/sources/tomlplusplus" "$altered"
printf ' ' >>"$altered/include/toml++/toml.h"
! "$source_dir/scripts/check-dependency-copy.sh" tomlplusplus "$altered" 2>"$work/altered.log" ||
  fail "a toml++ copy with a header changed passed as the pinned commit's"
grep -q "^check-dependency-copy: tomlplusplus: $altered/include/toml++ is not the pinned commit's" \
  "$work/altered.log" || fail "the refusal of the changed copy: $(cat "$work/altered.log")"

hidden=()
for name in CLI11 fmt nlohmann_json tomlplusplus GTest; do
  hidden+=("-DCMAKE_DISABLE_FIND_PACKAGE_$name=ON")
done

build=$work/build
rm -rf "$build" "$work/prefix" "$work/consumer"
cmake -S "$source_dir" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOMMSGD_WERROR=ON \
  -DCOMMSGD_BUILD_TRAINER=OFF -DCOMMSGD_CUDA=OFF "${hidden[@]}" "${local_copies[@]}" \
  >"$work/configure.log" 2>&1 || { tail -n 30 "$work/configure.log"; fail "configure"; }
for name in CLI11 fmt nlohmann_json tomlplusplus GTest; do
  grep -q "^-- $name: not installed; built from release " "$work/configure.log" ||
    fail "$name was not fetched (configure.log)"
done

cmake --build "$build" -j 2 >"$work/build.log" 2>&1 || { tail -n 30 "$work/build.log"; fail "build"; }
ctest --test-dir "$build" -L unit -j 2 --output-on-failure >"$work/ctest.log" 2>&1 ||
  { tail -n 30 "$work/ctest.log"; fail "unit tests"; }
grep -E "tests passed" "$work/ctest.log"

# Installed, the fetched libraries go with it, and find_package(commsgd) takes them from there.
cmake --install "$build" --prefix "$work/prefix" >/dev/null
mkdir -p "$work/consumer"
cat >"$work/consumer/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.25)
project(consumer LANGUAGES CXX)
find_package(commsgd REQUIRED)
add_executable(list_algorithms list_algorithms.cpp)
target_link_libraries(list_algorithms PRIVATE commsgd::algorithms)
EOF
cat >"$work/consumer/list_algorithms.cpp" <<'EOF'
#include <iostream>

#include "algorithms/catalog.hpp"

int main() {
  for (const auto& row : commsgd::algorithms::algorithm_table()) std::cout << row.name << '\n';
}
EOF
# CMAKE_PREFIX_PATH comes before the system's paths: the copies installed with commsgd win.
cmake -S "$work/consumer" -B "$work/consumer/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  >"$work/consumer.log" 2>&1 && cmake --build "$work/consumer/build" >>"$work/consumer.log" 2>&1 ||
  { tail -n 30 "$work/consumer.log"; fail "a project using the installed package"; }
for name in CLI11 fmt nlohmann_json; do
  grep -q "^${name}_DIR:PATH=$work/prefix/" "$work/consumer/build/CMakeCache.txt" ||
    fail "the consumer did not take the $name installed with commsgd"
done
"$work/consumer/build/list_algorithms" | grep -qx gtopk || fail "the consumer's algorithms"
echo "fetched_dependencies: configured, built and unit-tested with all five fetched; installed"
