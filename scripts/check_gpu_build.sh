#!/usr/bin/env bash
# scripts/check_gpu_build.sh BUILD — fail when nvcc is installed but the GPU targets were not
# built: a CUDA build that silently disappears would let GPU code rot unnoticed.
#
# The targets are read from the tree itself (every zt_*_cuda and zt_*_nccl library in src/, every
# test_gpu_* and bench-gpu* program in tests/ and bench/), not listed here: a renamed or new GPU
# target is checked without an edit, and one that stops building is a failure.
set -euo pipefail
build=$1
root=$(cd "$(dirname "$0")/.." && pwd)
if command -v nvcc >/dev/null 2>&1 || [[ -x /usr/local/cuda/bin/nvcc ]]; then
  if ! grep -q '^ZT_HAVE_CUDA_BUILT:INTERNAL=ON' "$build/CMakeCache.txt"; then
    echo "check_gpu_build: nvcc is present but the GPU targets were not configured" >&2; exit 1
  fi
  libs=$(grep -rhoE 'add_library\(zt_[a-z_]+_(cuda|nccl)' "$root/src" --include=CMakeLists.txt | sed 's/add_library(//' | sort -u)
  programs=$(grep -rhoE 'add_executable\((test_gpu_[a-z_]+|bench-gpu[a-z-]*)' "$root/tests" "$root/bench" \
    --include=CMakeLists.txt | sed 's/add_executable(//' | sort -u)
  [[ -n "$libs" && -n "$programs" ]] || { echo "check_gpu_build: found no GPU targets in the tree" >&2; exit 1; }
  for lib in $libs; do
    [[ -e "$build/lib/lib$lib.a" ]] || { echo "check_gpu_build: nvcc is present but lib/lib$lib.a was not built" >&2; exit 1; }
  done
  for program in $programs; do
    [[ -e "$build/bin/$program" ]] || { echo "check_gpu_build: nvcc is present but bin/$program was not built" >&2; exit 1; }
  done
  echo "check_gpu_build: GPU targets built ($(wc -w <<<"$libs") CUDA libraries, $(wc -w <<<"$programs") GPU programs)"
else
  echo "check_gpu_build: no nvcc on this machine; GPU targets skipped"
fi
