// gemm/canonical_gemm.h — the project's canonical FP32 GEMM and triangular multiply on the CPU:
// the definition of gemm/canonical_dot.h computed fast, with the same bits on every x86-64 CPU.
//
// Three paths compute the same sequence of IEEE operations per output element: AVX-512 (16 lanes),
// AVX2+FMA (8 lanes) and scalar (fmaf). A vector lane is one output element, so a lane runs the
// element's fma chain over k exactly as the scalar loop does; register blocking, packing and
// K-blocking change which elements are computed together and when, never the operations on one.
// The path is chosen at run time from the CPU (cpuid), or forced: ZT_GEMM_ISA=scalar|avx2|avx512
// in the environment, or set_canonical_isa() (tests force each and compare bits).
// Threads: C is split over the calling rank's pool (core/cpu_pool.h) in whole register tiles, rows
// or columns, never along k, so each element's chain and bits are the same at any thread count.
// It is the GEMM behind `--gemm canonical` (kernels/blas.h dispatches); OpenBLAS stays available
// as `--gemm blas`, faster on some shapes and with bits that depend on the CPU model.
// Not here: 16-bit inputs (callers widen to FP32, exact), alpha/beta (the model needs C = AB only).
#pragma once

#include <cstdint>
#include <string>

namespace zt::gemm {

/// An instruction-set path of the canonical GEMM.
enum class Isa {
  scalar,  ///< one fmaf per element and k: the definition, literally
  avx2,    ///< 8-lane AVX2 + FMA3 microkernel
  avx512   ///< 16-lane AVX-512F microkernel
};

/// The path's name: "scalar", "avx2" or "avx512".
/// @param isa the path. @return its name.
const char* isa_name(Isa isa);

/// Whether this CPU can run a path.
/// @param isa the path. @return true if it can.
bool isa_supported(Isa isa);

/// The path in use: the one forced by set_canonical_isa() or ZT_GEMM_ISA, else the widest this CPU
/// supports. A ZT_GEMM_ISA naming an unknown or unsupported path is an error (zt::Error).
/// @return that path.
Isa canonical_isa();

/// Force a path for this process (tests); an unsupported one is an error.
/// @param isa the path.
void set_canonical_isa(Isa isa);

/// C[M,N] = op(A) op(B) in FP32, row-major, overwriting C, each element by the canonical chain.
/// @param trans_a use A^T (A stored [K,M]) instead of A ([M,K]).
/// @param trans_b use B^T (B stored [N,K]) instead of B ([K,N]).
/// @param m rows of C. @param n columns of C. @param k the summed dimension.
/// @param a first operand. @param lda its row stride. @param b second operand.
/// @param ldb its row stride. @param c the result (written). @param ldc its row stride.
void gemm_canonical_f32(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                        const float* b, int64_t ldb, float* c, int64_t ldc);

/// B[M,N] = op(A) B in place, A [M,M] lower triangular (its upper part never read): element (i, j)
/// is the canonical chain over the triangle's k in increasing order — k in [0, i] for A, k in
/// [i, M) for A^T.
/// @param trans use A^T (upper triangular) instead of A.
/// @param m rows of B and order of A. @param n columns of B.
/// @param a the triangular matrix. @param lda its row stride.
/// @param b the matrix multiplied in place. @param ldb its row stride.
void trmm_canonical_f32(bool trans, int64_t m, int64_t n, const float* a, int64_t lda, float* b, int64_t ldb);

}  // namespace zt::gemm
