// gemm/canonical_dot.h — the definition of the project's canonical GEMM, one output element at a
// time, as a function both the host and a CUDA device compile (ZT_HD).
//
// The definition. For C = op(A) op(B) with op(A) [M,K] and op(B) [K,N], every output element is
//
//     c = +0;  for k = 0, 1, ..., K-1:  c = fma(op(A)[i,k], op(B)[k,j], c)
//
// one fused multiply-add per k, in increasing k, each rounded once to FP32 (round to nearest
// even), starting from +0. IEEE 754 defines fma exactly (the product and the sum rounded once), so
// this sequence has one correct result on every conforming machine: the AVX-512, AVX2 and scalar
// CPU paths (gemm/canonical_gemm.h) and the CUDA kernels (fmaf is fma.rn.f32) all compute it.
// Why a sequential chain and not a tree: a chain is what register-blocked kernels compute anyway
// (each accumulator runs over k in order), so the fast CPU and GPU kernels keep it without extra
// cost; K-blocking for caches continues the chain from the stored FP32 partial, exactly. The cost
// is accuracy for very long K (error growing like K rather than log K); the model's K are at most
// a few thousand, and a reader comparing numbers needs one answer more than the last bit of one.
// The triangular product (trmm) is the same chain over the triangle's k only.
// Not here: the fast kernels themselves (gemm/canonical_gemm.cc, gemm/cuda/).
#pragma once

#include <cmath>
#include <cstdint>

#include "fp/hd.h"

namespace zt::gemm {

/// A row-major operand with an optional transpose: element (r, c) of op(X).
struct Operand {
  const float* data = nullptr;  ///< the stored matrix
  int64_t ld = 0;               ///< its row stride
  bool trans = false;           ///< op(X) = X^T
  /// Element (r, c) of op(X).
  /// @param r row of op(X). @param c column of op(X). @return the value.
  ZT_HD float at(int64_t r, int64_t c) const { return trans ? data[c * ld + r] : data[r * ld + c]; }
};

/// The canonical dot product of the definition: fma over k in [k0, k1), in increasing k, from +0.
/// @param a op(A). @param b op(B). @param i output row. @param j output column.
/// @param k0 first k. @param k1 one past the last k. @return C[i, j].
ZT_HD float canonical_dot(const Operand& a, const Operand& b, int64_t i, int64_t j, int64_t k0, int64_t k1) {
  float c = 0.0f;
  for (int64_t k = k0; k < k1; ++k) c = fmaf(a.at(i, k), b.at(k, j), c);
  return c;
}

}  // namespace zt::gemm
