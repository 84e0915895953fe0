# shellcheck shell=bash
# What every results/*/run.sh shares. Each sources it after `set -euo pipefail`:
#   source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
#   quick() { ...; }    # a script with --quick: what it shortens
#   read_options "$@"
# Sets here (the script's directory), root, build (COMMSGD_BUILD, default build/release) and
# report (its commsgd-report); read_options sets out (--out DIR, default here; created), train
# (no with --tables-only: only the tables and the page are written again) and page (no with
# --quick: a shortened run writes no page). write_page SPEC NAME=DATABASE... writes the page of
# SPEC (a path from the repository root) into $out/README.md from the databases given.
here=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${COMMSGD_BUILD:-$root/build/release}
report=$build/analysis/report/commsgd-report

# shellcheck disable=SC2034  # out, train and page are the sourcing script's
read_options() {
  local usage="usage: $0 [--tables-only] [--out DIR]"
  declare -F quick >/dev/null && usage="usage: $0 [--quick] [--tables-only] [--out DIR]"
  out=$here train=yes page=yes
  while [ $# -gt 0 ]; do
    case $1 in
      --quick)
        declare -F quick >/dev/null || { echo "$usage" >&2; exit 2; }
        quick
        page=no
        shift
        ;;
      --tables-only) train=no; shift ;;
      --out) out=${2:?--out DIR}; shift 2 ;;
      *) echo "$usage" >&2; exit 2 ;;
    esac
  done
  mkdir -p "$out"
}

write_page() {
  local spec=$1 databases=() database
  shift
  for database in "$@"; do databases+=(--database "$database"); done
  (cd "$root" && "$report" reproduce "$spec" "${databases[@]}" -o "$out/README.md")
}
