// gemm/cuda/blas_gemm_cuda.h — cuBLAS as the training engine's GEMM on a CUDA device, for
// `--gemm blas` (the device's counterpart of OpenBLAS on the host, kernels/blas.h).
//
// Why it is allowed at all: the canonical kernels (canonical_gemm_cuda.h) give the CPU's bits on
// any GPU, at a cost; cuBLAS is what a GPU user measures speed against. Its bits are not the CPU's
// and not another GPU model's, but they repeat run after run under the conditions cuBLAS states
// for bitwise reproducibility: the same toolkit version, the same architecture and SM count, and
// a workspace that no two streams share. So each host thread keeps one handle per device (its own
// workspace), bound to the launch's stream before each call, and the arithmetic is pinned to
// FP32 without tensor-core shortcuts (CUBLAS_COMPUTE_32F_PEDANTIC: no TF32, no reduced-precision
// reductions), so an environment variable such as NVIDIA_TF32_OVERRIDE cannot change the bits.
// With 16-bit compute types the model hands the 16-bit tensors themselves to blas_half_gemm_async:
// the tensor cores, FP32 accumulation, on a second handle per thread in the default math mode.
// Not here: the canonical kernels; the host BLAS; anything that runs without a CUDA device.
#pragma once

#include "gemm/canonical_gemm_kernel.h"
#include "gemm/half_gemm.h"

namespace zt::gemm::cuda {

/// Enqueue C = op(A) op(B) with cuBLAS (cublasGemmEx, FP32 in and out, pedantic FP32 compute),
/// every pointer device memory; returns at once. @param g the operands and result (row-major,
/// as the canonical kernels take them). @param stream the cudaStream_t to enqueue on.
void blas_gemm_async(const GemmArgs& g, void* stream);

/// Enqueue C = op(A) op(B) with 16-bit operands on the tensor cores (cublasGemmEx, bf16 or fp16
/// in, FP32 out, FP32 accumulation: CUBLAS_COMPUTE_32F on a handle in the default math mode) under
/// cuBLAS's default algorithm, which uses no atomics: the same bits run after run on one GPU model
/// and toolkit, not the CPU's (gemm/half_gemm.h). @param g the operands and result (row-major).
/// @param stream the cudaStream_t to enqueue on.
void blas_half_gemm_async(const HalfGemmArgs& g, void* stream);

}  // namespace zt::gemm::cuda
