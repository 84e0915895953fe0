#!/usr/bin/env bash
# The GPU check: what CI cannot test without a GPU, on a lent one-GPU machine (PyTorch from pip,
# no MPI, no network, no package installs) in one call of under 8 minutes. scripts/gpu-prepare.sh
# builds beforehand, elsewhere, the tests that need neither LibTorch nor a GPU and bundles Open
# MPI and the build's libraries as Debian packages; here the probe unpacks those into a private
# prefix, the LibTorch parts build in the background against the node's PyTorch while the
# prebuilt tests run on the GPU, and the stages that need the build follow.
#
# The lent time is short and a rerun costs a second call, so every stage runs under its own
# timeout and a failed stage does not stop the others. summary.txt gets one line per stage as the
# stage ends (STAGE <TAB> passed|failed|skipped: REASON <TAB> FIGURE), so a run killed midway
# still says how far it got; logs.tar.gz holds every log at the end. Without a GPU the GPU stages
# are skipped. The exit status is 1 if a stage failed or was skipped. `--help` lists the stages.
#
# Each stage is this script again (`--stage NAME`, an internal option) under `timeout`, so that a
# timeout ends the stage's whole process group; the stages share what the probe found through an
# environment file in a private folder outside the output.
set -euo pipefail

order=(probe build kernels backends algorithms trainer-tests bench)
# Stages that run only when --stages names them: measurements for a second call on the warm
# machine, after the check.
extra=(models)
# Seconds each stage may take. The build runs beside kernels and backends (75 + 150 <= 225), on
# all but 4 of the cores (--jobs), which those stages' ranks and NCCL's threads need; so the
# longest path is probe + build + algorithms + trainer-tests + bench = 30 + 225 + 60 + 105 + 40
# = 460 s, under 8 minutes with the log tarball and the call's own start.
declare -A budget=([probe]=30 [build]=225 [kernels]=75 [backends]=150 [algorithms]=60
  [trainer-tests]=105 [bench]=40 [models]=200)
declare -A proves=(
  [probe]="what is there (GPU, driver, PyTorch with its CUDA and NCCL, nvcc, cores); fails \
without NCCL's library and header, nvcc, or a carried mpirun that runs"
  [build]="commsgd-train, commsgd-bench, commsgd-report and test_gpu_trainer build against the \
node's PyTorch, CUDA and NCCL (in the background)"
  [kernels]="the CUDA kernels select, merge, code (signs, QSGD's levels, PowerSGD's products) \
and compute what the CPU ones do (prebuilt test_cuda_kernels), a failed release leaves no error for the next launch \
(AFailedReleaseIsNotTheNextLaunchsError), and a subset is clean under compute-sanitizer memcheck"
  [backends]="the NCCL and staged device back ends at 2 and 1 ranks (2 NCCL ranks on the one \
GPU, told apart by NCCL_HOSTID): a wait that polled leaves no error behind \
(AWaitThatPolledLeavesNoErrorBehind), an abort from another thread ends a polling wait \
(AnAbortFromAnotherThreadEndsAPollingWait); the communication engine over each (operations in \
order on its stream, each following the caller's stream as it was at its start as dense's \
buckets need: AnEngineOperationFollowsTheCallersStreamAsItWasAtItsStart; a failed engine \
stopping at once with its back end aborted); the algorithms on device buffers at 1, 2 and 4 \
ranks (prebuilt, under the carried mpirun)"
  [algorithms]="commsgd-train --device cuda trains the digits set with every algorithm (the \
gossip ones at 2 ranks), dense also in small buckets and with fp16 on the wire; which back end \
each recorded"
  [trainer-tests]="--device cuda follows --device cpu's trajectory for every algorithm, osgp \
also with batch norm, whose statistics go through the host while an exchange is in flight; an \
emulated link takes the staged back end (test_gpu_trainer, 4 shards side by side, 2 threads a \
rank)"
  [bench]="the CUDA selectors' time at d = 25M, densities 0.001 and 0.01, against a device copy \
and torch::topk (commsgd-bench gpu-kernels)"
  [models]="ResNet-20 and VGG-16 as the gTop-k paper ran them (batch 32 and 128, density 0.001) \
at P = 1 on the GPU with dense, topk and gtopk, one after another, on synthetic data of CIFAR-10's \
shape: the time of an iteration, and commsgd-report simulate paper from those times beside the \
paper's 32-worker table (models.sqlite)"
)
build_dir=build/cuda-gpu-check
# Small cases of every kind of kernel (threshold selection, merge, scatter, the dense operations
# and half conversions, the sign and QSGD codes): memcheck multiplies a kernel's time many times
# over.
memcheck_filter=CudaKernels.EmptyInputSelectsNothing
memcheck_filter+=:CudaKernels.SelectionBeyondCapacityReportsItsTrueCount
memcheck_filter+=:CudaKernels.MergeKeepKIsTheCpuMerge
memcheck_filter+=:CudaKernels.ScatterAddAddAndZeroAppliedAreTheCpus
memcheck_filter+=:CudaCompressedKernels.PackedSignsAreTheCpus
memcheck_filter+=:CudaCompressedKernels.QsgdCodesAndNormsAreTheCpus
memcheck_filter+=:CudaKernels.DenseOperationsAreTheCpus

usage() {
  cat <<EOF
usage: scripts/gpu-check.sh [--prepared DIR] [--out DIR] [--jobs N] [--stages LIST]
  --prepared DIR  what scripts/gpu-prepare.sh wrote (default: gpu-carry)
  --out DIR       summary.txt, logs.tar.gz, logs/, runs.sqlite, bench.sqlite
                  (default: build/cuda/gpu-check; on a lent machine, \$OUT)
  --jobs N        parallel build jobs (default: all cores but 4, which the stages beside the
                  build need)
  --stages LIST   run only these, comma-separated (the probe always runs), e.g. to rerun failed ones

Stages, in order, with the seconds each may take:
EOF
  local stage
  for stage in "${order[@]}"; do describe "$stage"; done
  cat <<EOF
The build runs in the background from the end of the probe, beside kernels and backends; the
stages after it wait for it: at most $(longest_path) s in all. Without a GPU every GPU stage is
skipped.

Only when --stages names them (a second call on the warm machine, which keeps the build; with
build in the list on a fresh one):
EOF
  for stage in "${extra[@]}"; do describe "$stage"; done
  exit "${1:-2}"
}

describe() {
  printf '  %-14s %3d s  ' "$1" "${budget[$1]}"
  fold -s -w 74 <<<"${proves[$1]}" | sed -e 's/ *$//' -e '2,$s/^/                        /'
}

longest_path() {
  local stage total=0
  for stage in probe build algorithms trainer-tests bench; do
    total=$((total + budget[$stage]))
  done
  echo "$total"
}

# ---- Inside a stage (gpu-check.sh --stage NAME, under timeout) ------------------------------

# The stage's figure, reason and end: read by run_stage once the stage has ended.
one_line() { printf '%s' "$*" | tr '\t\n' '  '; }
figure() { one_line "$@" >"$logs/$stage.figure"; }
skip() {
  one_line "$@" >"$logs/$stage.reason"
  exit 77
}
fail() {
  one_line "$@" >"$logs/$stage.reason"
  exit 1
}

# The arguments joined by "; ".
joined() {
  local s
  s=$(printf '%s; ' "$@")
  echo "${s%; }"
}

# Seconds left of the stage's budget, less a margin to write the figure; at least 1 (0 would
# turn timeout off).
left() {
  local s=$((CHECK_BUDGET - SECONDS - 5))
  echo $((s > 1 ? s : 1))
}
within() {
  local l
  l=$(left)
  echo $(($1 < l ? $1 : l))
}

need_gpu() { [ -n "${CHECK_GPU:-}" ] || skip "no GPU"; }

# The path of a program gpu-prepare.sh built, or the stage fails.
prepared() {
  [ -x "$CHECK_PREPARED/bin/$1" ] ||
    fail "no prepared $1 (scripts/gpu-prepare.sh; $CHECK_PREPARED/manifest.txt says what it built)"
  echo "$CHECK_PREPARED/bin/$1"
}

# The path of a program the build stage builds; skipped if this run's build did not finish.
built() {
  if [[ ",$CHECK_STAGES," == *,build,* ]] && [ ! -e "$logs/build.done" ]; then
    skip "the build did not finish"
  fi
  [ -x "$build_dir/$1" ] || skip "no $build_dir/$1: run the build stage"
  echo "$build_dir/$1"
}

# "N passed[, N failed][, N skipped]" from GoogleTest's closing lines in the given logs.
gtest_counts() {
  awk '$1 == "[" && $3 == "]" && $4 ~ /^[0-9]+$/ {
         if ($2 == "PASSED") passed += $4
         else if ($2 == "FAILED" && $6 == "listed") failed += $4
         else if ($2 == "SKIPPED" && $6 == "listed") skipped += $4
         summaries++
       }
       END {
         if (!summaries) { printf "no GoogleTest summary"; exit }
         printf "%d passed", passed
         if (failed) printf ", %d failed", failed
         if (skipped) printf ", %d skipped", skipped
       }' "$@" || true
}

# With a GPU here, a test that skips says something is wrong (the runtime found no device):
# fails the stage, with GoogleTest's first skip message, if one of the logs has a skipped test.
no_skips() {
  local message
  if grep -q '^\[  SKIPPED \]' "$@"; then
    message=$(grep -h -m1 -A1 ' Skipped$' "$@" | sed -n 2p)
    fail "$(gtest_counts "$@"): ${message:-skipped}"
  fi
}

# Rows of an SQL query, fields separated by spaces.
query() {
  if command -v sqlite3 >/dev/null; then
    sqlite3 -separator ' ' "$1" "$2"
  else
    python3 -c 'import sqlite3, sys
for row in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]): print(*row)' "$1" "$2"
  fi
}

# PROGRAM on RANKS ranks under the carried mpirun, one app context per rank: each gets an
# NCCL_HOSTID of its own, and rank 0 a GoogleTest XML file. NCCL refuses two ranks of one host on
# one GPU; ranks with different host ids it takes for ranks on different hosts, which may share
# it, talking over sockets (on loopback: the machine has no network). Output in $logs/NAME.log;
# returns the launch's exit status.
run_ranks() {
  local name=$1 seconds=$2 ranks=$3 r
  shift 3
  local cmd=(mpirun --oversubscribe --bind-to none)
  for ((r = 0; r < ranks; r++)); do
    [ "$r" -eq 0 ] || cmd+=(:)
    cmd+=(-np 1 -x "NCCL_HOSTID=commsgd-check-rank$r")
    if [ "$r" -eq 0 ]; then cmd+=(-x "GTEST_OUTPUT=xml:$logs/$name.xml"); fi
    cmd+=("$@")
  done
  echo "$name: ${cmd[*]}"
  # Jobs side by side need session directories of their own (open-mpi/ompi#8510).
  mkdir -p "$CHECK_WORK/sessions/$name"
  env OMP_NUM_THREADS=1 NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 NCCL_DEBUG=INFO \
    NCCL_DEBUG_SUBSYS=INIT,NET OMPI_MCA_orte_tmpdir_base="$CHECK_WORK/sessions/$name" \
    timeout -k 5 "$seconds" "${cmd[@]}" >"$logs/$name.log" 2>&1
}

# Unpacks .deb files into DEST: dpkg-deb where there is one, else Python (a .deb is an ar archive
# holding data.tar.*).
unpack_debs() {
  local dest=$1
  shift
  if command -v dpkg-deb >/dev/null; then
    local deb
    for deb in "$@"; do dpkg-deb -x "$deb" "$dest"; done
  else
    python3 - "$dest" "$@" <<'EOF'
import io, sys, tarfile
for deb in sys.argv[2:]:
    with open(deb, "rb") as f:
        assert f.read(8) == b"!<arch>\n", deb
        while header := f.read(60):
            size = int(header[48:58])
            data = f.read(size + size % 2)
            if header[:16].strip().startswith(b"data.tar"):
                archive = tarfile.open(fileobj=io.BytesIO(data[:size]))
                # Debian's absolute symlinks are fine here: "tar", not the stricter "data".
                options = {"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}
                archive.extractall(sys.argv[1], **options)
EOF
  fi
}

# The carried packages in a private prefix that only this script's commands use (fixed, so that
# the paths the build records stay valid for a rerun).
use_carried_packages() {
  local usr=$CHECK_WORK/deps/usr lib tool
  lib=$usr/lib/x86_64-linux-gnu
  rm -rf "$CHECK_WORK/deps"
  mkdir -p "$CHECK_WORK/deps"
  unpack_debs "$CHECK_WORK/deps" "$CHECK_PREPARED"/deps/*.deb
  # Debian names its Open MPI programs *.openmpi and links the plain names at install time.
  for tool in mpirun mpiexec mpicc mpicxx; do ln -sf "$tool.openmpi" "$usr/bin/$tool"; done
  export PATH=$usr/bin:$PATH
  export LD_LIBRARY_PATH=$lib:$lib/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # Open MPI and PMIx find their components, help texts and compiler wrapper data under the
  # prefix.
  export OPAL_PREFIX=$usr PMIX_INSTALL_PREFIX=$lib/pmix2
  export CMAKE_PREFIX_PATH=$usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
  # Debian's multiarch headers (libjpeg's jconfig.h), which a compiler looks for only in its own
  # /usr/include/x86_64-linux-gnu.
  export CPATH=$usr/include/x86_64-linux-gnu${CPATH:+:$CPATH}
}

# "LABEL DIR" lines, in the order a library or header is looked for: NCCL_HOME, NCCL_ROOT,
# PyTorch's pip wheels (nvidia/*/lib; CUDA 13's own are all in nvidia/cu13), the CUDA toolkit,
# the system.
library_dirs() {
  local d
  for d in NCCL_HOME NCCL_ROOT; do
    if [ -n "${!d:-}" ]; then printf '%s %s\n' "$d" "${!d}/lib" "$d" "${!d}/lib64"; fi
  done
  python3 -c 'import os, nvidia
for base in nvidia.__path__:
    for d in sorted(os.listdir(base)): print("pip-wheel", os.path.join(base, d, "lib"))' \
    2>/dev/null || true
  if [ -n "$CHECK_CUDA_HOME" ]; then
    printf 'cuda-toolkit %s\n' "$CHECK_CUDA_HOME/lib64" \
      "$CHECK_CUDA_HOME/targets/x86_64-linux/lib"
  fi
  { ldconfig -p 2>/dev/null || true; } |
    awk '$NF ~ /^\// { sub(/\/[^\/]*$/, "", $NF); print "system", $NF }' | sort -u
}
include_dirs() {
  local d
  for d in NCCL_HOME NCCL_ROOT; do
    if [ -n "${!d:-}" ]; then echo "$d ${!d}/include"; fi
  done
  python3 -c 'import os, nvidia
for base in nvidia.__path__: print("pip-wheel", os.path.join(base, "nccl", "include"))' \
    2>/dev/null || true
  if [ -n "$CHECK_CUDA_HOME" ]; then
    printf 'cuda-toolkit %s\n' "$CHECK_CUDA_HOME/include" \
      "$CHECK_CUDA_HOME/targets/x86_64-linux/include"
  fi
  echo "system /usr/include"
}
# "LABEL DIR" of the first DIR holding FILE among the lines on stdin, nothing if none does; reads
# them all, so that the writer never meets a closed pipe.
first_holding() {
  local label dir found=""
  while read -r label dir; do
    if [ -z "$found" ] && [ -e "$dir/$1" ]; then found="$label $dir"; fi
  done
  if [ -n "$found" ]; then echo "$found"; fi
}

# The libraries the carried programs take from the node (manifest.txt's "lib SONAME node: ..."
# lines, less the driver's), linked into one folder on the library path, so that nothing else
# of the folders they come from (the toolkit's older cuBLAS, say) shadows PyTorch's own.
link_node_libraries() {
  local soname found from=()
  rm -rf "$CHECK_WORK/node-libs"
  mkdir -p "$CHECK_WORK/node-libs"
  for soname in $(awk '$1 == "lib" && $3 == "node:" && $2 !~ /^libcuda\.so/ { print $2 }' \
    "$CHECK_PREPARED/manifest.txt" 2>/dev/null || true); do
    found=$(library_dirs | first_holding "$soname")
    if [ -z "$found" ]; then
      problems+=("no $soname on this machine")
      continue
    fi
    ln -s "${found#* }/$soname" "$CHECK_WORK/node-libs/$soname"
    from+=("$soname from ${found%% *}")
  done
  facts+=("carried programs load $(joined "${from[@]}" | sed 's/; /, /g')")
  export LD_LIBRARY_PATH=$CHECK_WORK/node-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}

# NCCL for the build: the library the carried programs load and the header found, as one prefix
# that NCCL_ROOT names (cmake/FindNCCL.cmake looks there first), so that the build takes that
# NCCL even where its header and library lie apart.
use_nccl() {
  local lib header nccl=$CHECK_WORK/nccl
  lib=$(library_dirs | first_holding libnccl.so.2)
  header=$(include_dirs | first_holding nccl.h)
  facts+=("build takes libnccl.so.2 from ${lib%% *}, nccl.h from ${header%% *}")
  echo "NCCL library: ${lib:-not found}; header: ${header:-not found}"
  if [ -z "$lib" ] || [ -z "$header" ]; then
    problems+=("NCCL not found (libnccl.so.2: ${lib:-none}, nccl.h: ${header:-none})")
    return
  fi
  rm -rf "$nccl"
  mkdir -p "$nccl/lib"
  ln -s "${header#* }" "$nccl/include"
  ln -s "${lib#* }/libnccl.so.2" "$nccl/lib/libnccl.so.2"
  export NCCL_ROOT=$nccl
}

# nvcc's toolkit, put on the PATH for CMake if it was not.
find_cuda() {
  local nvcc candidate
  nvcc=$(command -v nvcc || true)
  for candidate in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
    if [ -z "$nvcc" ] && [ -n "$candidate" ] && [ -x "$candidate/bin/nvcc" ]; then
      nvcc=$candidate/bin/nvcc
    fi
  done
  CHECK_CUDA_HOME=""
  if [ -z "$nvcc" ]; then
    problems+=("no nvcc")
    return
  fi
  CHECK_CUDA_HOME=$(dirname "$(dirname "$(readlink -f "$nvcc")")")
  command -v nvcc >/dev/null || export PATH=$CHECK_CUDA_HOME/bin:$PATH
  facts+=("nvcc $("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')")
}

# PyTorch's versions and CMake prefix; the GPU, from nvidia-smi or else PyTorch.
probe_gpu_and_torch() {
  local torch gpu="" version cuda nccl devices=0
  torch=$(python3 -c 'import torch
nccl = torch.cuda.nccl.version() if torch.cuda.is_available() else "n/a"
nccl = ".".join(map(str, nccl)) if isinstance(nccl, tuple) else nccl
print(torch.__version__, torch.version.cuda, nccl, torch.cuda.device_count(),
      torch.utils.cmake_prefix_path)') || torch=""
  echo "PyTorch: ${torch:-none}"
  CHECK_TORCH_PREFIX=""
  if [ -n "$torch" ]; then
    read -r version cuda nccl devices CHECK_TORCH_PREFIX <<<"$torch"
    facts+=("torch $version (CUDA $cuda, NCCL $nccl)")
  else
    facts+=("no PyTorch in python3")
  fi
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi || true
    gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
      2>/dev/null | sed -n 1p) || gpu=""
  fi
  if [ -z "$gpu" ] && [ "$devices" -gt 0 ]; then gpu="a GPU PyTorch sees (no nvidia-smi)"; fi
  CHECK_GPU=${gpu%%,*}
  facts=("${gpu:-no GPU}" "${facts[@]}")
}

# The carried programs' newest glibc symbol version (manifest.txt) against this machine's.
check_glibc() {
  local need have
  need=$(awk '$1 == "requires" && $2 ~ /^GLIBC_/ { sub(/GLIBC_/, "", $2); print $2 }' \
    "$CHECK_PREPARED/manifest.txt" 2>/dev/null || true)
  have=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{ print $2 }') || have=""
  facts+=("glibc ${have:-unknown} (carried programs need ${need:-?})")
  if [ -n "$need" ] && [ -n "$have" ] &&
    [ "$(printf '%s\n' "$need" "$have" | sort -V | sed -n 1p)" != "$need" ]; then
    problems+=("glibc $have is older than the $need the carried programs need")
  fi
}

# The scikit-learn digits set: Debian's, else the pip scikit-learn's.
find_digits() {
  CHECK_DIGITS=/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz
  [ -f "$CHECK_DIGITS" ] || CHECK_DIGITS=$(python3 -c 'import os, sklearn
print(os.path.join(os.path.dirname(sklearn.__file__), "datasets", "data", "digits.csv.gz"))' \
    2>/dev/null) || CHECK_DIGITS=""
  [ -f "$CHECK_DIGITS" ] || CHECK_DIGITS=""
  facts+=("digits: ${CHECK_DIGITS:-none}")
}

stage_probe() {
  local problems=() facts=() v
  rm -f "$CHECK_WORK/env.sh"
  echo "commsgd $(git describe --always --dirty 2>/dev/null || echo "(no git)"), $(date -u +%FT%TZ)"
  head -5 "$CHECK_PREPARED/manifest.txt" 2>/dev/null ||
    problems+=("no $CHECK_PREPARED/manifest.txt")
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  if compgen -G "$CHECK_PREPARED/deps/*.deb" >/dev/null; then
    use_carried_packages
  else
    problems+=("no carried packages in $CHECK_PREPARED/deps")
  fi
  find_cuda
  probe_gpu_and_torch
  facts+=("$(nproc) cores")
  link_node_libraries
  use_nccl
  check_glibc
  find_digits
  for v in PATH LD_LIBRARY_PATH OPAL_PREFIX PMIX_INSTALL_PREFIX CMAKE_PREFIX_PATH CPATH \
    OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM NCCL_HOME NCCL_ROOT CHECK_GPU \
    CHECK_DIGITS CHECK_CUDA_HOME CHECK_TORCH_PREFIX; do
    if [ -n "${!v+x}" ]; then printf 'export %s=%q\n' "$v" "${!v}"; fi
  done >"$CHECK_WORK/env.sh"
  cat "$CHECK_WORK/env.sh"
  if command -v mpirun >/dev/null; then
    facts+=("$(mpirun --version 2>&1 | sed -n 1p)")
    timeout 20 mpirun -np 1 true || problems+=("the carried mpirun does not run")
  else
    problems+=("no mpirun")
  fi
  figure "$(joined "${facts[@]}")"
  [ ${#problems[@]} -eq 0 ] || fail "$(joined "${problems[@]}")"
}

stage_build() {
  local configure=(--preset cuda -B "$build_dir" -DCOMMSGD_WERROR=OFF -DCOMMSGD_FETCH_MISSING=OFF)
  local nccl warnings
  # The node's compilers may not be CI's, whose warnings the preset's -Werror is for; `native`
  # needs a GPU at configure time. The preset requires NCCL (COMMSGD_REQUIRE_NCCL). The machine
  # reaches no network: the small libraries are the carried packages', and one missing is named
  # by find_package rather than fetched.
  if [ -n "${CUDA_ARCHITECTURES:-}" ]; then
    configure+=("-DCMAKE_CUDA_ARCHITECTURES=$CUDA_ARCHITECTURES")
  elif [ -n "${CHECK_GPU:-}" ]; then
    configure+=(-DCMAKE_CUDA_ARCHITECTURES=native)
  else
    configure+=(-DCMAKE_CUDA_ARCHITECTURES=90)
  fi
  if [ -n "${CHECK_DIGITS:-}" ]; then configure+=("-DCOMMSGD_DIGITS_CSV=$CHECK_DIGITS"); fi
  if [ -n "${CHECK_TORCH_PREFIX:-}" ]; then
    export CMAKE_PREFIX_PATH=$CHECK_TORCH_PREFIX${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
  fi
  cmake "${configure[@]}" >"$logs/build.configure.log" 2>&1 ||
    fail "cmake did not configure: $(grep -m1 -A3 'CMake Error' "$logs/build.configure.log")"
  nccl="NCCL $(sed -n 's/^NCCL_LIBRARY:FILEPATH=//p' "$build_dir/CMakeCache.txt")"
  if ! cmake --build "$build_dir" -j "$CHECK_JOBS" --target commsgd-train commsgd-bench \
    commsgd-report test_gpu_trainer >"$logs/build.ninja.log" 2>&1; then
    figure "$nccl; stopped at $(grep -o '^\[[0-9]*/[0-9]*\]' "$logs/build.ninja.log" | tail -1)"
    fail "the build failed: $(grep -m1 -E 'error|FAILED' "$logs/build.ninja.log")"
  fi
  touch "$logs/build.done"
  warnings=$(grep -c "warning:" "$logs/build.ninja.log" || true)
  figure "$nccl; LibTorch $(sed -n 's/^Torch_DIR:PATH=//p' "$build_dir/CMakeCache.txt");" \
    "$warnings compiler warnings; $(tail -1 "$logs/build.ninja.log")"
}

stage_kernels() {
  need_gpu
  local tests sanitizer="" status=0 counts matched candidate
  tests=$(prepared test_cuda_kernels)
  timeout -k 5 "$(within 30)" "$tests" --gtest_output="xml:$logs/kernels.gtest.xml" \
    >"$logs/kernels.gtest.log" 2>&1 || status=$?
  counts=$(gtest_counts "$logs/kernels.gtest.log")
  figure "$counts"
  for candidate in "$(command -v compute-sanitizer || true)" \
    "${CHECK_CUDA_HOME:-}/bin/compute-sanitizer" \
    "${CHECK_CUDA_HOME:-}/compute-sanitizer/compute-sanitizer"; do
    if [ -z "$sanitizer" ] && [ -x "$candidate" ]; then sanitizer=$candidate; fi
  done
  if [ -z "$sanitizer" ]; then
    figure "$counts; memcheck not run: no compute-sanitizer"
  else
    matched=$("$tests" --gtest_list_tests --gtest_filter="$memcheck_filter" | grep -c '^  ' || true)
    [ "$matched" -gt 0 ] || fail "the memcheck filter matches no test of test_cuda_kernels"
    local log=$logs/kernels.memcheck.log
    if timeout -k 5 "$(left)" "$sanitizer" --tool memcheck --error-exitcode 99 \
      "$tests" --gtest_filter="$memcheck_filter" >"$log" 2>&1; then
      figure "$counts; memcheck on $matched tests: $(grep -m1 'ERROR SUMMARY' "$log")"
    else
      figure "$counts; memcheck on $matched tests FAILED:" \
        "$(grep -m1 'ERROR SUMMARY' "$log" || tail -1 "$log")"
      status=1
    fi
  fi
  [ "$status" -eq 0 ] || fail "test_cuda_kernels: $counts"
  no_skips "$logs/kernels.gtest.log"
}

# Whether device_backends' NCCL cases (the first value of its instantiation: /0) passed in LOG.
nccl_verdict() {
  local ok failed skipped
  read -r ok failed skipped < <(awk '
    $1 == "[" && $3 == "]" && $4 ~ /^BackEnds\/DeviceBackends\.[A-Za-z]+\/0,?$/ {
      name = $4; sub(/,$/, "", name); seen[$2 " " name] = 1 }
    END {
      for (k in seen) { split(k, p, " "); n[p[1]]++ }
      print n["OK"] + 0, n["FAILED"] + 0, n["SKIPPED"] + 0 }' "$1")
  if [ "$failed" -gt 0 ]; then
    echo "FAILED ($failed of $((ok + failed)) cases)"
  elif [ "$ok" -gt 0 ]; then
    echo "worked ($ok cases)"
  elif [ "$skipped" -gt 0 ]; then
    echo "skipped ($(grep -m1 -A1 'Skipped$' "$1" | sed -n 2p))"
  else
    echo "did not run"
  fi
}

stage_backends() {
  need_gpu
  local backends algorithms results=() status=0 ranks idle
  backends=$(prepared device_backends)
  algorithms=$(prepared device_algorithms)
  command -v mpirun >/dev/null || fail "no mpirun (the probe unpacks the carried Open MPI)"
  # First, with most of the budget: each case makes a 2-rank NCCL communicator over sockets, the
  # slowest launch here; the quicker ones after it keep time of their own.
  run_ranks backends.device_backends.P2 "$(within 70)" 2 "$backends" || status=1
  results+=("device_backends P2: $(gtest_counts "$logs/backends.device_backends.P2.log")"
    "NCCL with 2 ranks on the one GPU: $(nccl_verdict "$logs/backends.device_backends.P2.log")")
  run_ranks backends.device_backends.P1 "$(within 20)" 1 "$backends" || status=1
  results+=("device_backends P1: $(gtest_counts "$logs/backends.device_backends.P1.log")")
  for ranks in 1 2 4; do
    run_ranks "backends.device_algorithms.P$ranks" "$(within $((10 + 5 * ranks)))" "$ranks" \
      "$algorithms" || status=1
    results+=("device_algorithms P$ranks: $(gtest_counts \
      "$logs/backends.device_algorithms.P$ranks.log")")
  done
  figure "$(joined "${results[@]}")"
  [ "$status" -eq 0 ] || fail "a launch failed (logs/backends.*.log)"
  # Some cases skip by design (adpsgd at odd P); none passing in a launch does not.
  idle=$(grep -L '^\[       OK \]' "$logs"/backends.*.log || true)
  [ -z "$idle" ] || fail "no test passed in $(xargs -n1 basename <<<"$idle" | xargs)"
}

stage_algorithms() {
  need_gpu
  local train report db=$CHECK_OUT/runs.sqlite common data run name ranks options pid pids=()
  local passed=0 total=0
  train=$(built trainer/commsgd-train)
  report=$(built analysis/report/commsgd-report)
  command -v mpirun >/dev/null || fail "no mpirun (the probe unpacks the carried Open MPI)"
  rm -f "$db" "$db-wal" "$db-shm"
  if [ -n "${CHECK_DIGITS:-}" ]; then
    data=(--dataset csv --data-path "$CHECK_DIGITS")
  else
    data=(--dataset synthetic)
  fi
  common=(--device cuda --model mlp "${data[@]}" --epochs 1 --max-steps 20 --batch-size 16
    --lr 0.05 --density 0.01 --log-every 5 --threads 1 --db "$db" --quiet)
  # NAME RANKS OPTIONS: the gossip algorithms need 2 workers (dpsgd and adpsgd an even number).
  local runs=("dense 1" "dense-buckets 1 --algo dense --bucket-mb 0.01"
    "dense-fp16 1 --algo dense --wire-dtype fp16" "topk 1" "gtopk 1" "gaussiank 1"
    "sgp 2" "osgp 2" "dpsgd 2" "adpsgd 2" "signsgd 1" "ef-signsgd 1" "qsgd 1" "powersgd 1")
  # Side by side: each is seconds of start-up for a few milliseconds of training.
  for run in "${runs[@]}"; do
    read -r name ranks options <<<"$run"
    [ -n "$options" ] || options="--algo $name"
    # shellcheck disable=SC2086  # options are words
    run_ranks "algorithms.$name" "$(left)" "$ranks" "$train" "${common[@]}" $options &
    pids+=("$!")
  done
  for pid in "${pids[@]}"; do
    total=$((total + 1))
    if wait "$pid"; then passed=$((passed + 1)); fi
  done
  figure "$passed/$total runs passed"
  [ -s "$db" ] || fail "no run recorded (logs/algorithms.*.log)"
  "$report" runs "$db" || true
  figure "$passed/$total runs passed; recorded: $(query "$db" "select group_concat(run, ', ') from (
    select algo || '/P' || workers || ' ' || backend || ' ' || status
           || case when count(*) > 1 then ' x' || count(*) else '' end as run
    from runs group by algo, workers, backend, status order by min(created_at))")"
  [ "$passed" -eq "$total" ] ||
    fail "$((total - passed)) of $total runs failed (logs/algorithms.*.log)"
}

stage_trainer_tests() {
  need_gpu
  local tests shard shards=4 status=0 pids=()
  tests=$(built tests/test_gpu_trainer)
  # In shards side by side: each case trains twice, and most of that is start-up.
  for ((shard = 0; shard < shards; shard++)); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$shard timeout -k 5 "$(left)" "$tests" \
      --gtest_output="xml:$logs/trainer-tests.shard$shard.xml" \
      >"$logs/trainer-tests.shard$shard.log" 2>&1 &
    pids+=("$!")
  done
  for shard in "${pids[@]}"; do wait "$shard" || status=1; done
  figure "$(gtest_counts "$logs"/trainer-tests.shard*.log)"
  [ "$status" -eq 0 ] || fail "test_gpu_trainer: $(gtest_counts "$logs"/trainer-tests.shard*.log)"
  no_skips "$logs"/trainer-tests.shard*.log
}

stage_bench() {
  need_gpu
  local bench db=$CHECK_OUT/bench.sqlite
  bench=$(built tests/bench/commsgd-bench)
  rm -f "$db" "$db-wal" "$db-shm"
  timeout -k 5 "$(left)" "$bench" gpu-kernels --sizes 25000000 --densities 0.001,0.01 \
    --db "$db" >"$logs/bench.gpu-kernels.txt" 2>&1 ||
    fail "commsgd-bench gpu-kernels: $(tail -1 "$logs/bench.gpu-kernels.txt")"
  # The acceptance point's row: d density k | copy floor exact dgc gaussian random torch |
  # torch/exact gaussian/copy, in ms and ratios.
  figure "$(awk '$1 == 25000000 && $2 == 0.001 {
    printf "d 25M density 0.001: copy %s ms, exact %s ms, gaussian %s ms, torch::topk %s ms; ", \
      $5, $7, $9, $11
    printf "torch/exact %s (target >= 3), gaussian/copy %s (target <= 4)", $13, $14 }' \
    "$logs/bench.gpu-kernels.txt")"
}

stage_models() {
  need_gpu
  local train report db=$CHECK_OUT/models.sqlite run model batch algo name failed=()
  train=$(built trainer/commsgd-train)
  report=$(built analysis/report/commsgd-report)
  command -v mpirun >/dev/null || fail "no mpirun (the probe unpacks the carried Open MPI)"
  rm -f "$db" "$db-wal" "$db-shm"
  # configs/papers/gtopk's CIFAR-10 settings on synthetic data (no data set on the machine), each
  # run alone on the GPU; 100 iterations, of which the first window is start-up.
  for run in "resnet20 32" "vgg16 128"; do
    read -r model batch <<<"$run"
    for algo in dense topk gtopk; do
      name=models.$model.$algo
      run_ranks "$name" "$(within 60)" 1 "$train" --device cuda --model "$model" --algo "$algo" \
        --batch-size "$batch" --lr 0.1 --momentum 0.9 --density 0.001 --dataset synthetic \
        --synthetic-shape 3,32,32 --synthetic-train $((100 * batch)) --epochs 1 \
        --max-steps 100 --log-every 25 --db "$db" --quiet || failed+=("$model $algo")
    done
  done
  [ -s "$db" ] || fail "no run recorded (logs/models.*.log)"
  "$report" simulate paper "$db" >"$logs/models.simulate-paper.txt" 2>&1 ||
    fail "commsgd-report simulate paper: $(tail -1 "$logs/models.simulate-paper.txt")"
  "$report" simulate paper "$db" -f csv >"$logs/models.simulate-paper.csv"
  figure "ms an iteration: $(iteration_ms "$report" "$db"); efficiency at 32 workers," \
    "predicted (paper's): $(predicted_efficiency "$logs/models.simulate-paper.csv")"
  [ ${#failed[@]} -eq 0 ] || fail "$(joined "${failed[@]}") failed (logs/models.*.log)"
}
# "MODEL ALGO MS, ...; MODEL ..." from the runs' throughput.
iteration_ms() {
  "$1" sql "select group_concat(line, '; ') from (select model || ' ' || group_concat(algo || ' '
    || printf('%.1f', 1000.0 * batch_size / samples_per_s), ', ') as line from run_summary
    group by model)" "$2" -f csv | tail -n +2 | tr -d '"'
}
# "MODEL ALGO PREDICTED (PAPER), ..." of simulate paper's CSV rows that have a prediction.
predicted_efficiency() {
  python3 - "$1" <<'EOF'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["predicted"]]
print(", ".join(f"{r['model']} {r['algo']} {float(r['predicted']):.3f} ({r['paper']})" for r in rows))
EOF
}

# ---- The stages' driver ---------------------------------------------------------------------

# Runs one stage under its budget and appends its summary line. The stage is a session of its
# own, ended as a whole afterwards: what it started in process groups of their own (the trainer
# tests' mpirun, say) would outlive a timeout and hold the GPU through the next stages.
run_stage() {
  local name=$1 start=$SECONDS status=0 line figure session=()
  rm -f "$logs/$name".*
  if command -v setsid >/dev/null; then session=(setsid -w); fi
  CHECK_BUDGET=${budget[$name]} timeout -k 5 "${budget[$name]}" "${session[@]}" "$self" \
    --stage "$name" >"$logs/$name.log" 2>&1 </dev/null || status=$?
  if command -v pkill >/dev/null && [ -s "$logs/$name.session" ]; then
    pkill -KILL -s "$(cat "$logs/$name.session")" || true
  fi
  figure="$((SECONDS - start)) s"
  if [ -s "$logs/$name.figure" ]; then figure+="; $(cat "$logs/$name.figure")"; fi
  case $status in
    0) line=passed ;;
    77) line="skipped: $(reason "$name" "$status")" ;;
    124 | 137) line="failed: timed out after ${budget[$name]} s; log ends: $(last_line "$name")" ;;
    *) line="failed: $(reason "$name" "$status")" ;;
  esac
  printf '%s\t%s\t%s\n' "$name" "$line" "$figure" | tee -a "$summary"
}
# What the stage gave as its reason, else its exit status and the end of its log.
reason() {
  if [ -s "$logs/$1.reason" ]; then
    cat "$logs/$1.reason"
  else
    echo "exit status $2; log ends: $(last_line "$1")"
  fi
}
last_line() {
  { grep -v '^[[:space:]]*$' "$logs/$1.log" || true; } | tail -1 | cut -c1-160 | tr '\t' ' '
}

selected() { [[ ",$CHECK_STAGES," == *,$1,* ]]; }

main() {
  local prepared=gpu-carry out=build/cuda/gpu-check stage build_pid=""
  CHECK_JOBS=$(($(nproc) > 5 ? $(nproc) - 4 : 1)) CHECK_STAGES=$(IFS=,; echo "${order[*]}")
  while [ $# -gt 0 ]; do
    case $1 in
      -h | --help) usage 0 ;;
      --prepared | --out | --jobs | --stages) [ $# -ge 2 ] || usage ;;&
      --prepared) prepared=$2 ;;
      --out) out=$2 ;;
      --jobs) CHECK_JOBS=$2 ;;
      --stages) CHECK_STAGES=probe,$2 ;;
      *) usage ;;
    esac
    shift 2
  done
  for stage in ${CHECK_STAGES//,/ }; do
    if [ -z "${budget[$stage]:-}" ]; then
      echo "gpu-check: no stage $stage" >&2
      usage
    fi
  done
  mkdir -p "$out/logs"
  CHECK_OUT=$(cd "$out" && pwd) CHECK_PREPARED=$(realpath -m "$prepared")
  cd "$(dirname "$self")/.."
  CHECK_WORK=${TMPDIR:-/tmp}/commsgd-gpu-check
  mkdir -p "$CHECK_WORK"
  export CHECK_OUT CHECK_PREPARED CHECK_WORK CHECK_JOBS CHECK_STAGES
  logs=$CHECK_OUT/logs summary=$CHECK_OUT/summary.txt
  : >"$summary"

  run_stage probe
  if selected build; then
    run_stage build &
    build_pid=$!
  fi
  for stage in kernels backends; do
    if selected "$stage"; then run_stage "$stage"; fi
  done
  [ -z "$build_pid" ] || wait "$build_pid"
  for stage in algorithms trainer-tests bench "${extra[@]}"; do
    if selected "$stage"; then run_stage "$stage"; fi
  done

  tar -czf "$CHECK_OUT/logs.tar.gz" -C "$CHECK_OUT" logs
  echo "gpu-check: $summary, logs.tar.gz and the databases in $CHECK_OUT"
  awk -F'\t' '$2 != "passed" { bad = 1 } END { exit bad }' "$summary"
}

self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
if [ "${1:-}" = --stage ]; then
  stage=$2 logs=$CHECK_OUT/logs
  echo $$ >"$logs/$stage.session"
  cd "$(dirname "$self")/.."
  # GoogleTest colours its lines on a terminal, and mpirun gives ranks one: plain lines to count.
  export GTEST_COLOR=no
  # shellcheck disable=SC1091  # written by the probe
  [ "$stage" = probe ] || . "$CHECK_WORK/env.sh"
  "stage_${stage//-/_}"
else
  main "$@"
fi
