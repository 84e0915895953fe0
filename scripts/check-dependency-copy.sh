#!/usr/bin/env bash
# Whether a local copy of one of the small dependencies (a release tarball unpacked, a
# distribution's source package) holds the files of the commit cmake/dependencies.cmake pins:
# every path cmake/dependency-trees.txt lists for NAME must have the same git object id in DIR as
# at that commit, so the copy is the pinned commit's byte for byte where the build reads it. For
# an air-gapped site's -DFETCHCONTENT_SOURCE_DIR_<NAME>=DIR; scripts/dependency-sources.sh checks
# its copies with it.
#
# Usage: scripts/check-dependency-copy.sh NAME DIR   (NAME as in dependencies.cmake: fmt, CLI11,
#        nlohmann_json, tomlplusplus, GTest). Silent and 0 when it is; a line for each path that
#        differs and 1 when not; 2 for a wrong call.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 2 ] || { echo "usage: scripts/check-dependency-copy.sh NAME DIR" >&2; exit 2; }
name=$1 copy=$2
[ -d "$copy" ] || { echo "check-dependency-copy: $copy is not a directory" >&2; exit 2; }

# commsgd_dependency(NAME RELEASE REPOSITORY COMMIT ...), whatever its line breaks.
pinned=$(tr -s ' \n' ' ' <"$root/cmake/dependencies.cmake" |
         sed -n "s/.*commsgd_dependency($name [^ ]* [^ ]* \([0-9a-f]\{40\}\).*/\1/p")
[ -n "$pinned" ] || { echo "check-dependency-copy: dependencies.cmake pins no $name" >&2; exit 2; }
mapfile -t rows < <(awk -v n="$name" '$1 == n { print $2, $3, $4 }' \
                         "$root/cmake/dependency-trees.txt")
[ ${#rows[@]} -gt 0 ] ||
  { echo "check-dependency-copy: dependency-trees.txt lists no $name" >&2; exit 2; }

# The git object id of DIR/PATH: a file's blob, or a directory's tree as `git add` would write it
# (a scratch object store; nothing is written to the copy; no line-ending conversion, whatever
# the user's git configuration says).
store=$(mktemp -d)
trap 'rm -rf "$store"' EXIT
git init -q --bare "$store"
object_id() {
  if [ -f "$copy/$1" ]; then
    git hash-object --no-filters "$copy/$1"
  elif [ -d "$copy/$1" ]; then
    GIT_DIR=$store GIT_INDEX_FILE=$store/index GIT_WORK_TREE=$copy \
      git -c core.autocrlf=false add -f -- "$1"
    GIT_DIR=$store GIT_INDEX_FILE=$store/index git write-tree --prefix="$1/"
  else
    echo missing
  fi
}

differs=0
for row in "${rows[@]}"; do
  read -r commit path want <<<"$row"
  if [ "$commit" != "$pinned" ]; then
    echo "check-dependency-copy: dependency-trees.txt lists $name at $commit, dependencies.cmake" \
         "pins $pinned" >&2
    exit 2
  fi
  got=$(object_id "$path")
  if [ "$got" != "$want" ]; then
    echo "check-dependency-copy: $name: $copy/$path is not the pinned commit's" \
         "($got, not $want)" >&2
    differs=1
  fi
done
exit $differs
