#!/usr/bin/env bash
# commsgd-train --version and --check-build against the build: the source tree's commit (as the
# build wrote it, so a commit after configuring is named too), the LibTorch version CMake found,
# the CUDA kernels and NCCL as CMake found them, the MPI library mpirun belongs to, and the SIMD
# paths of gTop-k's merge and QSGD's codes as this CPU has them; one rank prints under mpirun.
#   version.sh COMMSGD_TRAIN MPIRUN SOURCE_DIR TORCH_VERSION CUDA_KERNELS(built|not built) NCCL(built|not built)
set -euo pipefail
train=$1 mpirun=$2 source_dir=$3 torch=$4 kernels=$5 nccl=$6
source "$(dirname "$0")/../support/script.sh"

line() {  # NAME: the value of the line "NAME: value" of $report
  sed -n "s/^$1: //p" <<<"$report"
}

report=$("$train" --version)
# The commit, "-dirty" or not: an edit after the build is the test's business, not the binary's.
commit=$(git -C "$source_dir" describe --always --abbrev=12 2>/dev/null || echo unknown)
case $(head -1 <<<"$report") in
  "commsgd-train $commit" | "commsgd-train $commit-dirty") ;;
  *) fail "first line: $(head -1 <<<"$report"), the source tree is at $commit" ;;
esac
case $(line LibTorch) in "$torch"*) ;; *) fail "LibTorch: $(line LibTorch), built with $torch" ;; esac
[ "$(line 'CUDA kernels')" = "$kernels" ] || fail "CUDA kernels: $(line 'CUDA kernels'), not $kernels"
case $(line NCCL) in "$nccl"*) ;; *) fail "NCCL: $(line NCCL), not $nccl" ;; esac
# "mpirun (Open MPI) 4.1.4": the library's line names the same version.
mpi_version=$("$mpirun" --version 2>&1 | head -1 | awk '{ print $NF }')
case $(line MPI) in *"$mpi_version"*) ;; *) fail "MPI: $(line MPI), but mpirun is $mpi_version" ;; esac
[ -n "$(line 'CUDA-aware MPI')" ] || fail "no CUDA-aware MPI line"
# The merge's path: the widest this CPU has, capped by the environment.
flags=$(grep -m1 -E '^(flags|Features)' /proc/cpuinfo)
has() { for f in "$@"; do grep -qw "$f" <<<"$flags" || return 1; done; }
widest=portable
has avx2 popcnt && widest=AVX2
has avx512f avx512vl avx512bw popcnt && widest=AVX-512
merge_path() { env "$@" "$train" --version | sed -n "s/^SIMD: gTop-k's merge \([^,]*\),.*/\1/p"; }
[ "$(merge_path)" = "$widest" ] || fail "SIMD: $(line SIMD), CPU's widest: $widest"
capped=$widest
[ "$widest" = AVX-512 ] && capped=AVX2
[ "$(merge_path COMMSGD_NO_AVX512=1)" = "$capped" ] || fail "COMMSGD_NO_AVX512=1: not $capped"
[ "$(merge_path COMMSGD_NO_AVX2=1)" = portable ] || fail "COMMSGD_NO_AVX2=1: not portable"
# QSGD's codes' path (encoding and decoding): its AVX-512 version needs F alone.
codes_widest=portable
has avx2 && codes_widest=AVX2
has avx512f && codes_widest=AVX-512
codes_path() { env "$@" "$train" --version | sed -n "s/^SIMD: .*, QSGD's codes \([^,]*\),.*/\1/p"; }
[ "$(codes_path)" = "$codes_widest" ] || fail "SIMD: $(line SIMD), CPU's widest: $codes_widest"
[ "$(codes_path COMMSGD_NO_AVX2=1)" = portable ] || fail "COMMSGD_NO_AVX2=1: codes not portable"
[ "$(wc -l <<<"$report")" = 7 ] || fail "--version: $(wc -l <<<"$report") lines, expected 7"

# --check-build adds what the node gives at run time; under mpirun one rank prints.
as_root=()
[ "$(id -u)" = 0 ] && as_root=(--allow-run-as-root)
checked=$("$mpirun" --oversubscribe "${as_root[@]}" -np 2 "$train" --check-build)
[ "$(grep -c '^commsgd-train ' <<<"$checked")" = 1 ] || fail "--check-build under mpirun: $checked"
grep -qE '^GPUs LibTorch sees: [0-9]+$' <<<"$checked" || fail "no GPU line: $checked"
echo "--version and --check-build say what was built: $(line LibTorch); $(line MPI)"
