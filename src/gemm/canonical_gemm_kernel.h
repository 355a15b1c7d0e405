// gemm/canonical_gemm_kernel.h — the canonical GEMM's per-thread bodies for the GPU: one thread,
// one output element, the definition's chain (gemm/canonical_dot.h). ZT_HD, so the same source is
// the CUDA kernel's body (gemm/cuda/canonical_gemm_cuda.cu) and, run by the host launch layer
// (device/host_launch.h) over the same grid, a CPU test's subject: tests/gemm checks the
// host-executed body bitwise against the CPU paths without a GPU.
// The faster shared-memory tiled kernel in the .cu file cooperates across threads, so it cannot be
// run this way; it is tested only on a device, against this body's output.
#pragma once

#include <cstdint>

#include "device/host_launch.h"
#include "gemm/canonical_dot.h"

namespace zt::gemm {

/// One GEMM launch: C[M,N] = op(A) op(B).
struct GemmArgs {
  Operand a;           ///< op(A), [M,K]
  Operand b;           ///< op(B), [K,N]
  int64_t m = 0;       ///< rows of C
  int64_t n = 0;       ///< columns of C
  int64_t k = 0;       ///< the summed dimension
  float* c = nullptr;  ///< the result
  int64_t ldc = 0;     ///< its row stride
};

/// The thread block of the one-thread-per-element kernels: 16 x 16 threads.
inline constexpr uint32_t kElementBlock = 16;

/// Thread (x = column, y = row) computes C[row, column] if it lies inside C.
/// @param t the thread's index. @param g the launch.
ZT_HD void canonical_gemm_thread(const device::ThreadIndex& t, const GemmArgs& g) {
  const int64_t i = t.global_y(), j = t.global_x();
  if (i < g.m && j < g.n) g.c[i * g.ldc + j] = canonical_dot(g.a, g.b, i, j, 0, g.k);
}

/// The grid of the one-thread-per-element kernels for an [M,N] output.
/// @param m rows. @param n columns. @return blocks in x (columns) and y (rows).
inline device::Dim3 element_grid(int64_t m, int64_t n) {
  return {device::blocks_for(static_cast<uint64_t>(n), kElementBlock),
          device::blocks_for(static_cast<uint64_t>(m), kElementBlock), 1};
}

}  // namespace zt::gemm
