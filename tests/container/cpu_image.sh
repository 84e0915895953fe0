#!/usr/bin/env bash
# Builds the CPU image (Containerfile) from a Debian 12 base made here with mmdebstrap (no
# registry is reachable), then runs the unit tests inside it and trains on digits under mpirun
# with the installed commsgd-train. Long (the whole build inside the image): ctest -L container,
# which scripts/test.sh leaves out; its last run is in results/container.md.
#   cpu_image.sh SOURCE_DIR      (root, podman, mmdebstrap; exit 77: skipped)
# The Debian packages it needs, which scripts/install-deps.sh leaves out (CI does not run it):
#   apt-get install podman mmdebstrap runc uidmap
set -euo pipefail
src=$1
source "$src/tests/support/script.sh"
require_root_and podman "podman (Debian package podman)"
require_root_and mmdebstrap "mmdebstrap (Debian package mmdebstrap)"
work=$(mktemp -d /tmp/commsgd-image.XXXXXX)
trap 'rm -rf "$work"' EXIT

base=localhost/commsgd-base:bookworm
if ! podman image exists "$base"; then
  mmdebstrap --variant=minbase --include=ca-certificates bookworm "$work/base.tar" \
    http://deb.debian.org/debian >"$work/mmdebstrap.log" 2>&1 ||
    { cat "$work/mmdebstrap.log"; fail "mmdebstrap"; }
  podman import "$work/base.tar" "$base" >/dev/null
fi

# Some hosts' cgroups and limits are refused by podman's default runtime, crun (this VM's
# hybrid cgroups): there runc with the limits given explicitly works.
limits=(--ulimit nofile=1024:20000 --ulimit nproc=4096:4096)
podman_args=()
if ! podman run --rm "${limits[@]}" "$base" true >/dev/null 2>&1 && command -v runc >/dev/null; then
  podman_args=(--runtime runc)
fi
podman "${podman_args[@]}" build "${limits[@]}" --network host --build-arg BASE="$base" \
  -t localhost/commsgd:cpu "$src" >"$work/build.log" 2>&1 || { tail -50 "$work/build.log"; fail "podman build"; }
run() { podman "${podman_args[@]}" run --rm "${limits[@]}" --network host localhost/commsgd:cpu "$@"; }
run ctest --test-dir /opt/commsgd/src/build/release -L unit -j "$(nproc)" >"$work/ctest.log" 2>&1 ||
  { tail -40 "$work/ctest.log"; fail "unit tests in the image"; }
grep -E '^[0-9]+% tests passed' "$work/ctest.log"
run sh -c 'mpirun --oversubscribe -np 4 commsgd-train --config /opt/commsgd/share/commsgd/configs/digits.toml \
  --algo gtopk --density 0.01 --db /tmp/runs.sqlite --quiet && commsgd-report runs /tmp/runs.sqlite -f csv' |
  grep -q ',completed,gtopk,' || fail "training in the image"
echo "the CPU image builds, passes its unit tests and trains"
