// kernels/blas.h — the two BLAS calls the model makes (GEMM, triangular multiply), FP32 only.
//
// Why OpenBLAS. Its single-core sgemm runs near the machine's peak (bench/model/sgemm_rate), far
// beyond a teaching kernel, and for a fixed shape, CPU kernel selection and thread count it runs
// a fixed sequence of fused multiply-adds: deterministic (tested in
// tests/model/test_gpt_precisions.cc). What can change the bits: another OpenBLAS version,
// another CPU model (OpenBLAS picks its kernel per CPU at run time; OPENBLAS_CORETYPE pins it),
// and, with some kernels, the thread count: Debian's OpenBLAS 0.3.21 with its Haswell kernels
// (also AMD Zen's) changes about 5% of a 1024^3 sgemm's outputs between 1 and 2 threads, its
// SkylakeX and Sandybridge kernels do not (measured). So --blas-threads is hashed with the other
// settings that every rank must share (zero/config_check.h).
//
// Threads are pinned explicitly: one per rank unless set_blas_threads() says otherwise, applied
// before the first call whatever OPENBLAS_NUM_THREADS says. Row-major everywhere; beta is 0.
// By default both calls go to the project's own canonical GEMM instead (gemm/, `--gemm
// canonical`), whose bits do not depend on the CPU at all, so every number the chapters quote is
// reproducible on any x86-64 machine; `--gemm blas` asks for OpenBLAS. set_gemm_backend() is the
// switch, process-wide; it routes the linear layers' GEMMs, while attention names the canonical
// GEMM itself (kernels/attention.h: the device fuses those products into block ops). The canonical GEMM splits C over
// the calling rank's threads (`--threads`, core/cpu_pool.h) without changing a bit; the thread pinning below applies to
// OpenBLAS alone, whose bits may depend on its thread count, so `--blas-threads` stays a flag of its own. Not here:
// 16-bit GEMMs (callers widen 16-bit inputs to float, exact, then round the output).
#pragma once

#include <array>
#include <cstdint>

#include "core/words.h"

namespace zt::kernels {

/// Which GEMM the model's calls go to (`--gemm`).
enum class GemmBackend {
  blas,      ///< OpenBLAS: fast; bits depend on the CPU model's kernel (OPENBLAS_CORETYPE)
  canonical  ///< gemm/canonical_gemm.h: one fma chain per element, the same bits on every CPU and the GPU
};

/// @return the words of --gemm, in the order --help lists them.
constexpr auto words(GemmBackend) {
  return std::array{Word{"canonical", GemmBackend::canonical}, Word{"blas", GemmBackend::blas}};
}

/// Route this process's gemm_f32 / trmm_lower_left_f32 calls to a backend (default: canonical).
/// @param backend the backend.
void set_gemm_backend(GemmBackend backend);

/// The backend in use.
/// @return it.
GemmBackend gemm_backend();

/// Pin OpenBLAS to n threads (n >= 1) for this process.
/// @param n the number of threads.
void set_blas_threads(int n);

/// The number of threads OpenBLAS is pinned to (1 until set_blas_threads is called).
/// @return that count.
int blas_threads();

/// C[M,N] = op(A) op(B) in FP32, row-major, overwriting C.
/// @param trans_a use A^T (A stored [K,M]) instead of A ([M,K]).
/// @param trans_b use B^T (B stored [N,K]) instead of B ([K,N]).
/// @param m rows of C. @param n columns of C. @param k the summed dimension.
/// @param a first operand. @param lda its row stride. @param b second operand.
/// @param ldb its row stride. @param c the result (written). @param ldc its row stride.
void gemm_f32(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
              int64_t ldb, float* c, int64_t ldc);

/// B[M,N] = op(A) B in place, A [M,M] lower triangular (its upper part is never read).
/// @param trans use A^T (upper triangular) instead of A.
/// @param m rows of B and order of A. @param n columns of B.
/// @param a the triangular matrix. @param lda its row stride.
/// @param b the matrix multiplied in place. @param ldb its row stride.
void trmm_lower_left_f32(bool trans, int64_t m, int64_t n, const float* a, int64_t lda, float* b, int64_t ldb);

/// gemm_f32 on a named backend rather than the process's (a device kernel captures the backend
/// when it is enqueued and runs later, on its stream's thread). @param backend the backend; the
/// other parameters as gemm_f32's.
void gemm_f32_on(GemmBackend backend, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                 int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc);

/// trmm_lower_left_f32 on a named backend rather than the process's. @param backend the backend;
/// the other parameters as trmm_lower_left_f32's.
void trmm_lower_left_f32_on(GemmBackend backend, bool trans, int64_t m, int64_t n, const float* a, int64_t lda,
                            float* b, int64_t ldb);

}  // namespace zt::kernels
