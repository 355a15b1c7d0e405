// ops/attention_blocks.h — causal attention (kernels/attention.h) as three block ops
// (device/block_launch.h) over every (batch, head) at once: one launch forward, two backward, no
// host loop over sequences and heads, no FP32 score matrix in global memory.
//
// Forward, a block per query row r = (b H + h) T + i: the scores s_j = (q_i . k_j) scale for
// j <= i into shared memory, each the canonical GEMM's chain over the head width D
// (gemm/canonical_dot.h: fma in increasing k from +0); the first maximum, the exponentials, their
// canonical sum (ops/block_reduce.h); the probabilities rounded to T (stored, zeros above the
// diagonal, for the backward) and, widened back, the output row o_i[d] = the chain over j <= i of
// p_ij v_j[d], rounded once to T. Those are the CPU kernel's values in its order: its GEMM, its
// softmax row functions, its triangular product of the stored P, its one rounding of the output.
//
// Backward, in two launches because dQ needs rows of dS and dK, dV need its columns:
//   rows (a block per (b, h, i)): dp_j = dO_i . v_j (the chain over D), the canonical sum
//     r_i = sum_j p_ij dp_j (stored: one float per row), ds_j = p_ij (dp_j - r_i) scale, and
//     dQ_i[d] = the chain over k <= i of ds_k K_k[d];
//   keys (a block per (b, h, j)): for every query i >= j the same dp_ij and ds_ij again (the same
//     chain, the same bits: recomputing costs T^2 D fma per head and saves a [B H T T] FP32
//     matrix), then dV_j[d] = the chain over i >= j of p_ij dO_i[d] and dK_j[d] = the chain over
//     i >= j of ds_ij Q_i[d], the CPU's transposed triangular products.
// The r_i live in the caller's FP32 scratch (B H T floats: the Workspace's scratch is at least
// LayerNorm's 2 N C floats, which is more).
// They run under either `--gemm` setting: `--gemm blas` chooses the linear layers' GEMMs only.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "device/block_launch.h"
#include "fp/hd.h"
#include "kernels/cast.h"
#include "kernels/math.h"
#include "ops/block_reduce.h"

namespace zt::ops {

/// The shapes every attention block op shares, and where (b, h, position) rows live in qkv.
struct AttentionShape {
  int64_t B = 0;    ///< batch
  int64_t Tc = 0;   ///< context
  int64_t C = 0;    ///< width
  int64_t H = 0;    ///< heads
  float scale = 0;  ///< kernels::attention_scale(C / H)
  /// @return the head width D = C / H.
  ZT_HD int64_t D() const { return C / H; }
  /// @return B H T, the number of (batch, head, position) rows.
  ZT_HD int64_t rows() const { return B * H * Tc; }
  /// The multiply-adds of one product over the causal triangle of every (batch, head), as flops:
  /// 2 D T (T + 1) / 2 per head. @return that count.
  double triangle_flops() const {
    return static_cast<double>(B * H) * static_cast<double>(D()) * static_cast<double>(Tc) *
           static_cast<double>(Tc + 1);
  }
  /// Offset in a [B,T,width] tensor of (b, position t), column `col`.
  /// @param width the row width (3C for qkv, C for the output). @param b batch. @param t position.
  /// @param col column. @return the element's index.
  ZT_HD int64_t at(int64_t width, int64_t b, int64_t t, int64_t col) const { return (b * Tc + t) * width + col; }
};

/// The canonical chain sum_k a(k) b(k) over k in [k0, k1): fma in increasing k from +0 (the
/// canonical GEMM's definition, gemm/canonical_dot.h). @param k0 first k. @param k1 past the last.
/// @param a a(k). @param b b(k). @return the chain's value.
template <typename A, typename B>
ZT_HD float chain(int64_t k0, int64_t k1, const A& a, const B& b) {
  float c = 0.0f;
  for (int64_t k = k0; k < k1; ++k) c = fmaf(a(k), b(k), c);
  return c;
}

/// Forward: block r = (b H + h) T + i computes row i of head h of sequence b (see the file comment).
template <typename T>
struct AttentionForwardBlocks {
  T* out = nullptr;        ///< [B,T,C] (written: head h's D columns of row i)
  T* P = nullptr;          ///< [B,H,T,T] probabilities (written: row i, zeros above the diagonal)
  const T* qkv = nullptr;  ///< [B,T,3C]
  AttentionShape s;        ///< shapes and scale
  /// @return B H T, a block per query row.
  ZT_HD int64_t blocks() const { return s.rows(); }
  /// @return two triangle products: the scores and the output.
  double flops() const { return 2 * s.triangle_flops(); }
  /// @return the row's scores, then the reductions' room.
  ZT_HD std::size_t shared_floats() const { return static_cast<std::size_t>(s.Tc) + reduce_floats(); }
  /// @return the larger of the two reductions' shared memory.
  ZT_HD std::size_t reduce_floats() const {
    const std::size_t sum = canonical_sum_floats(static_cast<std::size_t>(s.Tc));
    const std::size_t max = first_max_floats(device::kBlockThreads);
    return sum > max ? sum : max;
  }
  /// @param blk the block. @param r its row.
  template <typename Block>
  ZT_HD void operator()(Block& blk, int64_t r) const {
    using kernels::to_f;
    const int64_t i = r % s.Tc, h = (r / s.Tc) % s.H, b = r / (s.Tc * s.H), D = s.D(), C3 = 3 * s.C;
    float* row = blk.shared();
    float* room = row + s.Tc;
    T* Prow = P + r * s.Tc;
    blk.each([&](uint32_t t) {
      for (int64_t j = t; j <= i; j += blk.threads())
        row[j] = chain(
                     0, D, [&](int64_t k) { return to_f(qkv[s.at(C3, b, i, h * D + k)]); },
                     [&](int64_t k) { return to_f(qkv[s.at(C3, b, j, s.C + h * D + k)]); }) *
                 s.scale;
    });
    const float m = block_first_max(blk, room, i + 1, [&](int64_t j) { return row[j]; });
    blk.each([&](uint32_t t) {
      for (int64_t j = t; j <= i; j += blk.threads()) row[j] = kernels::exp_f(row[j] - m);
    });
    const float sum =
        block_canonical_sum(blk, room, static_cast<std::size_t>(i + 1), [&](std::size_t j) { return row[j]; });
    blk.each([&](uint32_t t) {
      for (int64_t j = t; j < s.Tc; j += blk.threads()) {
        const T p = kernels::from_f<T>(j <= i ? row[j] / sum : 0.0f);
        Prow[j] = p;
        if (j <= i) row[j] = to_f(p);  // the product reads P as stored, widened (exact)
      }
    });
    blk.each([&](uint32_t t) {
      for (int64_t d = t; d < D; d += blk.threads())
        out[s.at(s.C, b, i, h * D + d)] = kernels::from_f<T>(chain(
            0, i + 1, [&](int64_t j) { return row[j]; },
            [&](int64_t j) { return to_f(qkv[s.at(C3, b, j, 2 * s.C + h * D + d)]); }));
    });
  }
};

/// dp_ij = dO_i . v_j over head h's D columns: the canonical chain (dO V^T's element).
/// @param s shapes. @param dout [B,T,C]. @param qkv [B,T,3C]. @param b batch. @param h head.
/// @param i query. @param j key. @return dp_ij.
template <typename T>
ZT_HD float attention_dp(const AttentionShape& s, const T* dout, const T* qkv, int64_t b, int64_t h, int64_t i,
                         int64_t j) {
  const int64_t D = s.D();
  return chain(
      0, D, [&](int64_t k) { return kernels::to_f(dout[s.at(s.C, b, i, h * D + k)]); },
      [&](int64_t k) { return kernels::to_f(qkv[s.at(3 * s.C, b, j, 2 * s.C + h * D + k)]); });
}

/// Backward by query rows: block r = (b H + h) T + i writes dQ's row i of head h and r_i.
template <typename T>
struct AttentionBackwardRowBlocks {
  T* dqkv = nullptr;        ///< [B,T,3C] (written: the q part of row i, head h)
  float* rsum = nullptr;    ///< [B H T] r_i = sum_j p_ij dp_ij (written; FP32 scratch)
  const T* dout = nullptr;  ///< [B,T,C]
  const T* qkv = nullptr;   ///< [B,T,3C]
  const T* P = nullptr;     ///< [B,H,T,T] forward probabilities
  AttentionShape s;         ///< shapes and scale
  /// @return B H T, a block per query row.
  ZT_HD int64_t blocks() const { return s.rows(); }
  /// @return two triangle products: dP and dQ.
  double flops() const { return 2 * s.triangle_flops(); }
  /// @return the row's dp then ds, then the sum's units.
  ZT_HD std::size_t shared_floats() const {
    return static_cast<std::size_t>(s.Tc) + canonical_sum_floats(static_cast<std::size_t>(s.Tc));
  }
  /// @param blk the block. @param r its row.
  template <typename Block>
  ZT_HD void operator()(Block& blk, int64_t r) const {
    using kernels::to_f;
    const int64_t i = r % s.Tc, h = (r / s.Tc) % s.H, b = r / (s.Tc * s.H), D = s.D();
    float* row = blk.shared();
    const T* Prow = P + r * s.Tc;
    blk.each([&](uint32_t t) {
      for (int64_t j = t; j <= i; j += blk.threads()) row[j] = attention_dp(s, dout, qkv, b, h, i, j);
    });
    const float ri = block_canonical_sum(blk, row + s.Tc, static_cast<std::size_t>(i + 1),
                                         [&](std::size_t j) { return to_f(Prow[j]) * row[j]; });
    blk.each([&](uint32_t t) {
      if (t == 0) rsum[r] = ri;
      for (int64_t j = t; j <= i; j += blk.threads()) row[j] = to_f(Prow[j]) * (row[j] - ri) * s.scale;
    });
    blk.each([&](uint32_t t) {
      for (int64_t d = t; d < D; d += blk.threads())
        dqkv[s.at(3 * s.C, b, i, h * D + d)] = kernels::from_f<T>(chain(
            0, i + 1, [&](int64_t k) { return row[k]; },
            [&](int64_t k) { return to_f(qkv[s.at(3 * s.C, b, k, s.C + h * D + d)]); }));
    });
  }
};

/// Backward by keys: block r = (b H + h) T + j writes dK's and dV's row j of head h.
template <typename T>
struct AttentionBackwardKeyBlocks {
  T* dqkv = nullptr;            ///< [B,T,3C] (written: the k and v parts of row j, head h)
  const float* rsum = nullptr;  ///< [B H T] from AttentionBackwardRowBlocks
  const T* dout = nullptr;      ///< [B,T,C]
  const T* qkv = nullptr;       ///< [B,T,3C]
  const T* P = nullptr;         ///< [B,H,T,T] forward probabilities
  AttentionShape s;             ///< shapes and scale
  /// @return B H T, a block per key row.
  ZT_HD int64_t blocks() const { return s.rows(); }
  /// @return three triangle products: dP again, dV and dK.
  double flops() const { return 3 * s.triangle_flops(); }
  /// @return the column's p_ij and ds_ij for i >= j.
  ZT_HD std::size_t shared_floats() const { return 2 * static_cast<std::size_t>(s.Tc); }
  /// @param blk the block. @param r its key row.
  template <typename Block>
  ZT_HD void operator()(Block& blk, int64_t r) const {
    using kernels::to_f;
    const int64_t j = r % s.Tc, h = (r / s.Tc) % s.H, b = r / (s.Tc * s.H), D = s.D(), C3 = 3 * s.C;
    const int64_t head = r - j;  // row 0 of this (b, h) in P and rsum
    float* p = blk.shared();
    float* ds = p + s.Tc;
    blk.each([&](uint32_t t) {
      for (int64_t i = j + t; i < s.Tc; i += blk.threads()) {
        p[i] = to_f(P[(head + i) * s.Tc + j]);
        ds[i] = p[i] * (attention_dp(s, dout, qkv, b, h, i, j) - rsum[head + i]) * s.scale;
      }
    });
    blk.each([&](uint32_t t) {
      for (int64_t d = t; d < D; d += blk.threads()) {
        dqkv[s.at(C3, b, j, 2 * s.C + h * D + d)] = kernels::from_f<T>(chain(
            j, s.Tc, [&](int64_t i) { return p[i]; },
            [&](int64_t i) { return to_f(dout[s.at(s.C, b, i, h * D + d)]); }));
        dqkv[s.at(C3, b, j, s.C + h * D + d)] = kernels::from_f<T>(chain(
            j, s.Tc, [&](int64_t i) { return ds[i]; },
            [&](int64_t i) { return to_f(qkv[s.at(C3, b, i, h * D + d)]); }));
      }
    });
  }
};

}  // namespace zt::ops
