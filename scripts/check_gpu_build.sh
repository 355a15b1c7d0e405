#!/usr/bin/env bash
# scripts/check_gpu_build.sh BUILD — fail when nvcc is installed but the GPU targets were not
# built: a CUDA build that silently disappears would let GPU code rot unnoticed.
set -euo pipefail
build=$1
if command -v nvcc >/dev/null 2>&1 || [[ -x /usr/local/cuda/bin/nvcc ]]; then
  if ! grep -q '^ZT_HAVE_CUDA_BUILT:INTERNAL=ON' "$build/CMakeCache.txt"; then
    echo "check_gpu_build: nvcc is present but the GPU targets were not configured" >&2; exit 1
  fi
  # every GPU library and program the tree defines, by name: one that stops building is a failure
  cuda_libs="lib/libzt_fp_cuda.a lib/libzt_gemm_cuda.a lib/libzt_ops_cuda.a lib/libzt_optim_cuda.a lib/libzt_step_device_cuda.a lib/libzt_collective_nccl.a"
  for f in $cuda_libs bin/test_gpu_fp bin/test_gpu_gemm bin/test_gpu_kernels bin/test_gpu_nccl bin/test_gpu_engine bin/bench-gpu-gemm; do
    [[ -e "$build/$f" ]] || { echo "check_gpu_build: nvcc is present but $f was not built" >&2; exit 1; }
  done
  libs=$(find "$build/lib" \( -name 'libzt_*_cuda.a' -o -name 'libzt_*_nccl.a' \) | wc -l)
  echo "check_gpu_build: GPU targets built ($libs CUDA libraries, the GPU tests and benchmark)"
else
  echo "check_gpu_build: no nvcc on this machine; GPU targets skipped"
fi
