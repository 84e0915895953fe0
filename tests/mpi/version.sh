#!/usr/bin/env bash
# commsgd-train --version and --check-build against the build: the commit and LibTorch version
# CMake configured, the CUDA kernels and NCCL as CMake found them, the MPI library mpirun
# belongs to, and AVX-512 as this CPU has it; one rank prints under mpirun.
#   version.sh COMMSGD_TRAIN MPIRUN COMMIT TORCH_VERSION CUDA_KERNELS(built|not built) NCCL(built|not built)
set -euo pipefail
train=$1 mpirun=$2 commit=$3 torch=$4 kernels=$5 nccl=$6
source "$(dirname "$0")/../support/script.sh"

line() {  # NAME: the value of the line "NAME: value" of $report
  sed -n "s/^$1: //p" <<<"$report"
}

report=$("$train" --version)
[ "$(head -1 <<<"$report")" = "commsgd-train $commit" ] || fail "first line: $(head -1 <<<"$report")"
case $(line LibTorch) in "$torch"*) ;; *) fail "LibTorch: $(line LibTorch), built with $torch" ;; esac
[ "$(line 'CUDA kernels')" = "$kernels" ] || fail "CUDA kernels: $(line 'CUDA kernels'), not $kernels"
case $(line NCCL) in "$nccl"*) ;; *) fail "NCCL: $(line NCCL), not $nccl" ;; esac
# "mpirun (Open MPI) 4.1.4": the library's line names the same version.
mpi_version=$("$mpirun" --version 2>&1 | head -1 | awk '{ print $NF }')
case $(line MPI) in *"$mpi_version"*) ;; *) fail "MPI: $(line MPI), but mpirun is $mpi_version" ;; esac
[ -n "$(line 'CUDA-aware MPI')" ] || fail "no CUDA-aware MPI line"
flags=$(grep -m1 '^flags' /proc/cpuinfo)
avx512=yes
for f in avx512f avx512vl avx512bw; do grep -qw "$f" <<<"$flags" || avx512=no; done
case $avx512:$(line AVX-512) in yes:yes* | no:no*) ;; *) fail "AVX-512: $(line AVX-512), CPU: $avx512" ;; esac
case $(COMMSGD_NO_AVX512=1 "$train" --version | sed -n 's/^AVX-512: //p') in
  no*) ;; *) fail "AVX-512 with COMMSGD_NO_AVX512 set: not no" ;;
esac
[ "$(wc -l <<<"$report")" = 7 ] || fail "--version: $(wc -l <<<"$report") lines, expected 7"

# --check-build adds what the node gives at run time; under mpirun one rank prints.
as_root=()
[ "$(id -u)" = 0 ] && as_root=(--allow-run-as-root)
checked=$("$mpirun" --oversubscribe "${as_root[@]}" -np 2 "$train" --check-build)
[ "$(grep -c '^commsgd-train ' <<<"$checked")" = 1 ] || fail "--check-build under mpirun: $checked"
grep -qE '^GPUs LibTorch sees: [0-9]+$' <<<"$checked" || fail "no GPU line: $checked"
echo "--version and --check-build say what was built: $(line LibTorch); $(line MPI)"
