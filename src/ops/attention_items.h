// ops/attention_items.h — the non-GEMM part of attention as item ops (device/item_grid.h):
// the causal softmax of each (batch, head, query) row forward, and its backward (dS from P and
// dP) — one thread per row, running kernels/attention.h's ZT_HD row functions with the scalar exp.
//
// The score matrices are laid out as the CPU kernel's per-head scratch, stacked: S and dP are
// [B*H, T, T] FP32 (row r = (b H + h) T + i), P is [B, H, T, T] in T, as the CPU caches it. The
// GEMMs that produce S (Q K^T) and dP (dO V^T) and the triangular products after them are the
// GEMM kernels' business (gemm/), not these.
#pragma once

#include <cstdint>

#include "fp/hd.h"
#include "kernels/attention.h"

namespace zt::ops {

using kernels::attention_dscores_row;
using kernels::attention_softmax_row;

/// Forward softmax: item r turns row r of raw scores into row r of P
/// (kernels::attention_softmax_row; the scores are overwritten with exponentials).
template <typename T>
struct AttentionSoftmaxRows {
  T* P = nullptr;      ///< [B*H, T, T] probabilities (written, zeros above the diagonal)
  float* S = nullptr;  ///< [B*H, T, T] raw scores q_i . k_j (clobbered)
  int64_t BH = 0;      ///< batch times heads
  int64_t Tc = 0;      ///< context
  float scale = 0;     ///< kernels::attention_scale(D)
  /// @return B H T, one thread per query row.
  ZT_HD int64_t items() const { return BH * Tc; }
  /// @param r the row, (b H + h) T + i.
  ZT_HD void operator()(int64_t r) const { attention_softmax_row(P + r * Tc, S + r * Tc, r % Tc, Tc, scale); }
};

/// Backward softmax: item r computes row r of dS (kernels::attention_dscores_row; entries above
/// the diagonal are not written).
template <typename T>
struct AttentionDscoresRows {
  float* dS = nullptr;        ///< [B*H, T, T] (written on and below the diagonal)
  const T* P = nullptr;       ///< [B*H, T, T] forward probabilities
  const float* dP = nullptr;  ///< [B*H, T, T] dO V^T
  int64_t BH = 0;             ///< batch times heads
  int64_t Tc = 0;             ///< context
  float scale = 0;            ///< kernels::attention_scale(D)
  /// @return B H T, one thread per query row.
  ZT_HD int64_t items() const { return BH * Tc; }
  /// @param r the row, (b H + h) T + i.
  ZT_HD void operator()(int64_t r) const { attention_dscores_row(dS + r * Tc, P + r * Tc, dP + r * Tc, r % Tc, scale); }
};

}  // namespace zt::ops
