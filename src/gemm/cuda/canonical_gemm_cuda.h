// gemm/cuda/canonical_gemm_cuda.h — the canonical GEMM on a CUDA device, and cuBLAS beside it.
//
// Two kernels compute the definition (gemm/canonical_dot.h): `element`, one thread per output
// element running gemm/canonical_gemm_kernel.h's body (the body CPU tests run on the host), and
// `tiled`, 64 x 64 outputs per block staged through shared memory, 4 x 4 per thread, each
// output's chain still over k in increasing order — same bits, tested only on a device (against
// `element` and the CPU). cuBLAS (FP32 sgemm) is here to measure the canonical kernels against:
// its bits depend on the GPU, the cuBLAS version and its heuristics, so it is never compared bitwise.
// Host-pointer entry points copy in and out (tests and benchmarks); the stream entry points take
// device memory and return at once (the training engine's GEMMs on --device cuda:
// model/launch.h).
#pragma once

#include <cstdint>

#include "gemm/canonical_gemm_kernel.h"

namespace zt::gemm::cuda {

/// Which device GEMM.
enum class DeviceGemm {
  element,  ///< canonical, one thread per output (host-testable body)
  tiled,    ///< canonical, shared-memory tiles (device-only)
  cublas    ///< cuBLAS sgemm (not canonical; for speed comparisons)
};

/// C[M,N] = op(A) op(B) on the device, operands and result in host memory (copied both ways).
/// @param kind which kernel. @param trans_a use A^T. @param trans_b use B^T.
/// @param m rows of C. @param n columns of C. @param k the summed dimension.
/// @param a first operand. @param lda its row stride. @param b second operand. @param ldb its row
/// stride. @param c the result (written). @param ldc its row stride.
void gemm_f32_host(DeviceGemm kind, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                   int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc);

/// Enqueue C = op(A) op(B) with the tiled kernel (each output the element kernel's chain, which the
/// emulated device runs: the same bits), every pointer in device memory; returns at once.
/// @param g the operands and result. @param stream the cudaStream_t to enqueue on.
void canonical_gemm_async(const GemmArgs& g, void* stream);

/// Milliseconds per GEMM of one kind on device-resident random operands (C = A B^T, the model's
/// forward shape), the mean of `reps` launches after two warm-ups, timed with CUDA events.
/// @param kind which kernel. @param m rows. @param n columns. @param k the summed dimension.
/// @param reps timed launches. @return milliseconds per launch.
double time_gemm_ms(DeviceGemm kind, int64_t m, int64_t n, int64_t k, int reps);

}  // namespace zt::gemm::cuda
