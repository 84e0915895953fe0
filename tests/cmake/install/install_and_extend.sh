#!/usr/bin/env bash
# As a user without root: install a build to a prefix, move the prefix, and from the moved tree
# run the programs (each must find what it ships with there: the sweep its job templates and
# commsgd-train, the report its plot script), build examples/local_sgd against the moved CMake
# package with find_package(commsgd), and train it on digits under mpirun within 2 points of
# dense.
#   install_and_extend.sh BUILD_DIR MPIRUN
set -euo pipefail
build=$1 mpirun=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../support/script.sh"
work=$(mktemp -d /tmp/commsgd-install.XXXXXX)
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" >/dev/null
mv "$work/prefix" "$work/moved"
prefix=$work/moved share=$work/moved/share/commsgd

# The programs, from the moved tree.
"$prefix/bin/commsgd-train" --version | grep -q '^commsgd-train ' || fail "commsgd-train --version"
plan=$("$prefix/bin/commsgd-sweep" submit --dry-run --output "$work/sweep" \
  "$share/configs/sweeps/cifar10-resnet20.toml" 2>/dev/null)
grep -q "$share/jobs/templates/sweep-point.sbatch" <<<"$plan" ||
  fail "the sweep's job templates are not the moved tree's: $plan"
grep -q "$prefix/bin/commsgd-report" <<<"$plan" || fail "the sweep's merge is not the moved report"
grep -rqF "$prefix/bin/commsgd-train" "$work/sweep/arrays" ||
  fail "the sweep's points do not run the moved commsgd-train"

# An algorithm of one's own, against the moved package.
cmake -S "$share/examples/local_sgd" -B "$work/example" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log" || { cat "$work/configure.log"; fail "configure"; }
cmake --build "$work/example" -j 2 >"$work/build.log" || { cat "$work/build.log"; fail "build"; }

as_root=()
[ "$(id -u)" = 0 ] && as_root=(--allow-run-as-root)
train() {  # PROGRAM ALGO [OPTION...]: 4 ranks on digits, recorded in $work/ALGO.sqlite
  "$mpirun" --oversubscribe "${as_root[@]}" --bind-to none -x OMP_NUM_THREADS=1 -np 4 "$1" \
    --config "$share/configs/digits.toml" --algo "$2" --db "$work/$2.sqlite" --quiet "${@:3}"
}
train "$prefix/bin/commsgd-train" dense
# The example's own option: in its --help, and in the run record.
help=$("$work/example/local-sgd-train" --help)
grep -q -- "--local-steps" <<<"$help" || fail "local-sgd-train --help does not list --local-steps"
train "$work/example/local-sgd-train" local-sgd --local-steps 3
steps=$(sqlite3 -batch -noheader "$work/local-sgd.sqlite" \
  "SELECT json_extract(config, '$.local_steps') FROM runs")
[ "$steps" = 3 ] || fail "the run record holds --local-steps '$steps', not 3"
top1() { sqlite3 -batch -noheader "$work/$1.sqlite" "SELECT final_val_top1 FROM run_summary"; }
dense=$(top1 dense) local=$(top1 local-sgd)
awk -v d="$dense" -v l="$local" 'BEGIN { exit !(d - l <= 0.02 && l - d <= 0.02) }' ||
  fail "local-sgd's top-1 $local is more than 2 points from dense's $dense"

"$prefix/bin/commsgd-report" plot convergence "$work/local-sgd.sqlite" -o "$work/convergence.png" \
  >/dev/null
[ -s "$work/convergence.png" ] || fail "the moved commsgd-report drew no figure"
echo "installed, moved, extended: local-sgd $local against dense $dense top-1 on digits"
