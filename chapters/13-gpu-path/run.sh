#!/usr/bin/env bash
# Chapter 13's demonstration (part 1): the canonical GEMM. The same 20-step run under four OpenBLAS
# CPU kernels, with --gemm blas (bits may differ) and --gemm canonical (one hash), then under each
# path of the canonical GEMM this CPU has; the canonical GEMM's speed beside OpenBLAS on one core;
# and, where a CUDA device is present, the GPU kernels checked bit for bit against the CPU.
set -euo pipefail
build=${1:-build}
params=$(mktemp /tmp/zt-ch13-XXXXXX.params)
trap 'rm -f "$params"' EXIT
run=(--steps 20 --eval-every 0 --dump-params "$params")
hash_of() { md5sum "$params" | cut -c1-12; }
for gemm in blas canonical; do
  echo "--- --gemm $gemm: final FP32 weights after 20 steps, by OPENBLAS_CORETYPE"
  for core in Haswell SkylakeX Zen Prescott; do
    # a kernel for instructions this CPU lacks (SkylakeX without AVX-512) dies of SIGILL: say so
    if out=$(OPENBLAS_CORETYPE=$core "$build/bin/zero-train" "${run[@]}" --gemm "$gemm" 2>&1); then
      loss=$(grep -oE "step 20: [0-9]+\.[0-9]+" <<<"$out" | tail -1)
      printf '  %-9s %s  weights md5 %s\n' "$core" "$loss" "$(hash_of)"
    else
      printf '  %-9s cannot run on this CPU (exit status %d)\n' "$core" $?
    fi
  done
done
echo "--- --gemm canonical by path (ZT_GEMM_ISA; paths this CPU lacks are left out)"
for isa in avx512 avx2 scalar; do
  if ZT_GEMM_ISA=$isa "$build/bin/zero-train" "${run[@]}" --gemm canonical >/dev/null 2>&1; then
    printf '  %-7s weights md5 %s\n' "$isa" "$(hash_of)"
  fi
done
echo "--- the canonical GEMM against OpenBLAS, one core (GFLOP/s)"
"$build/bin/bench-gemm" 5
if [[ -x "$build/bin/test_gpu_gemm" ]]; then
  echo "--- on the GPU (skipped without a device)"
  "$build/bin/test_gpu_gemm" | tail -1 || true
fi
