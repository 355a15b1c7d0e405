// kernels/attention.h — causal multi-head self-attention (Vaswani et al. 2017, GPT-2 masking) as
// one fused op over the c_attn output qkv [B,T,3C] (q, k, v in that order; head h owns columns
// h*D .. h*D+D-1 of each, D = C/H): forward and backward.
//
//   s_ij = (q_i . k_j) / sqrt(D)   for j <= i     p_ij = exp(s_ij - max_j s) / sum_{j<=i} exp(...)
//   o_i  = sum_{j<=i} p_ij v_j
// backward (per head, with dp = dO V^T):
//   ds_ij = p_ij (dp_ij - sum_{k<=i} p_ik dp_ik) / sqrt(D)
//   dQ = dS K      dK = dS^T Q      dV = P^T dO
// Like a fused GPU attention kernel, the score matrices S, dP, dS stay in FP32 scratch; only
// stored results are rounded to T: the output, the probabilities P (cached for the backward, with
// exact zeros above the diagonal) and dqkv. Products with the triangular P and dS use a triangular
// multiply, so masked entries never enter a sum (an inf in a future v cannot leak into the past).
// Softmax sums are canonical trees in FP32; exp is kernels/math.h's, a row at a time through
// kernels/math_array.h (the same bits). The products are the canonical GEMM's whatever `--gemm`
// says (kAttentionGemm below), so the device's fused block ops give the same bits.
// On a device the block ops of ops/attention_blocks.h compute the same rows, a block per (batch,
// head, query), with the same chains and trees.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/cpu_pool.h"
#include "fp/hd.h"
#include "kernels/blas.h"
#include "kernels/cast.h"
#include "kernels/math.h"
#include "kernels/math_array.h"
#include "kernels/row_sum.h"

namespace zt::kernels {

/// Attention's products are always the canonical chains (gemm/canonical_dot.h), whatever `--gemm`
/// says: they are per-head products that a device fuses into the block ops of
/// ops/attention_blocks.h (scores in shared memory, no per-head launches), which form the same
/// chains; so attention's bits are the same on every CPU and GPU, and `--gemm` chooses the linear
/// layers' GEMMs, where the flops are.
inline constexpr GemmBackend kAttentionGemm = GemmBackend::canonical;

/// 1/sqrt(D), the scores' scale, rounded as every attention kernel uses it (float sqrt of float D,
/// then a float division). @param D the head width. @return the scale.
inline float attention_scale(int64_t D) { return 1.0f / std::sqrt(static_cast<float>(D)); }

/// Softmax step 1 of query row i: s_j = s_j * scale, then s_j - max, for the causal j <= i.
/// @param s [>= i+1] the row's raw scores (updated in place). @param i the query position.
/// @param scale 1/sqrt(D).
ZT_HD void attention_shift_scores(float* s, int64_t i, float scale) {
  float m = -INFINITY;
  for (int64_t j = 0; j <= i; ++j) {
    s[j] = s[j] * scale;
    m = s[j] > m ? s[j] : m;
  }
  for (int64_t j = 0; j <= i; ++j) s[j] = s[j] - m;
}

/// Softmax step 3 of query row i, after s_j = exp(s_j): the canonical sum of the i+1 terms, the
/// probabilities rounded to T, exact zeros above the diagonal.
/// @param P [Tc] the row of probabilities (written). @param s [>= i+1] the exponentials.
/// @param i the query position. @param Tc context.
template <typename T>
ZT_HD void attention_normalise_row(T* P, const float* s, int64_t i, int64_t Tc) {
  const float sum = canonical_sum_f(static_cast<std::size_t>(i + 1), [&](std::size_t j) { return s[j]; });
  for (int64_t j = 0; j <= i; ++j) P[j] = from_f<T>(s[j] / sum);
  for (int64_t j = i + 1; j < Tc; ++j) P[j] = from_f<T>(0.0f);
}

/// The softmax backward of query row i: ds_j = p_j (dp_j - sum_k p_k dp_k) scale for j <= i (the
/// sum a canonical tree; entries above the diagonal are not written, never read).
/// @param ds [>= i+1] (written). @param p [>= i+1] the row's
/// probabilities (float or T: widened exactly). @param dp [>= i+1] dO V^T's row.
/// @param i the query position. @param scale 1/sqrt(D).
template <typename PT>
ZT_HD void attention_dscores_row(float* ds, const PT* p, const float* dp, int64_t i, float scale) {
  const float r = canonical_sum_f(static_cast<std::size_t>(i + 1), [&](std::size_t j) { return to_f(p[j]) * dp[j]; });
  for (int64_t j = 0; j <= i; ++j) ds[j] = to_f(p[j]) * (dp[j] - r) * scale;
}

/// Floats of scratch attention_forward needs.
/// @param Tc context. @param C width. @param narrow_type true for a 16-bit compute type.
/// @return the count.
inline int64_t attention_forward_scratch_floats(int64_t Tc, int64_t C, bool narrow_type) {
  return Tc * C + Tc * Tc + (narrow_type ? 3 * Tc * C + Tc * Tc : 0);
}
/// Floats of scratch attention_backward needs.
/// @param Tc context. @param C width. @param narrow_type true for a 16-bit compute type.
/// @return the count.
inline int64_t attention_backward_scratch_floats(int64_t Tc, int64_t C, bool narrow_type) {
  return 3 * Tc * C + 2 * Tc * Tc + (narrow_type ? 3 * Tc * C + Tc * C + Tc * Tc : 0);
}

/// Run one_sequence(b, scratch) for b = 0..B-1, the rank's threads taking blocks of sequences
/// (core/cpu_pool.h): a sequence's attention reads and writes only its own rows, so the split
/// changes no bits. The block holding b = 0 works in the caller's scratch; the others in scratch
/// of their thread's own (`floats` each), which the memory ledger does not count, as it does not
/// count the GEMM's packing buffers. @param B sequences. @param floats scratch one sequence needs.
/// @param scratch the caller's. @param one_sequence callable (int64_t b, float* scratch).
template <typename F>
void for_each_sequence(int64_t B, int64_t floats, float* scratch, const F& one_sequence) {
  parallel_for(B, 1, [&](int64_t b0, int64_t b1) {
    float* own = scratch;
    if (b0 > 0) {
      thread_local std::vector<float> private_scratch;
      if (private_scratch.size() < static_cast<std::size_t>(floats))
        private_scratch.resize(static_cast<std::size_t>(floats));
      own = private_scratch.data();
    }
    for (int64_t b = b0; b < b1; ++b) one_sequence(b, own);
  });
}

/// Causal self-attention forward.
/// @param out [B,T,C] (written). @param P [B,H,T,T] probabilities (written; zeros above the
/// diagonal). @param qkv [B,T,3C]. @param B batch. @param Tc context. @param C width.
/// @param H heads (C % H == 0). @param scratch attention_forward_scratch_floats() floats.
template <typename T>
void attention_forward(T* out, T* P, const T* qkv, int64_t B, int64_t Tc, int64_t C, int64_t H, float* scratch) {
  const int64_t D = C / H, C3 = 3 * C;
  const float scale = attention_scale(D);
  const auto one_sequence = [&](int64_t b, float* scratch) {
    float* out_f = scratch;                // [T,C]
    float* S = out_f + Tc * C;             // [T,T] raw scores
    float* qkv_stage = S + Tc * Tc;        // [T,3C] (16-bit only)
    float* P_stage = qkv_stage + C3 * Tc;  // [T,T] (16-bit only)
    const float* qkv_f = widen(qkv + b * Tc * C3, static_cast<std::size_t>(Tc * C3), qkv_stage);
    for (int64_t h = 0; h < H; ++h) {
      const float* q = qkv_f + h * D;
      const float* k = qkv_f + C + h * D;
      const float* v = qkv_f + 2 * C + h * D;
      gemm_f32_on(kAttentionGemm, false, true, Tc, Tc, D, q, C3, k, C3, S, Tc);
      T* Pbh = P + (b * H + h) * Tc * Tc;
      for (int64_t i = 0; i < Tc; ++i) {
        float* s = S + i * Tc;
        attention_shift_scores(s, i, scale);
        exp_f_n(s, s, static_cast<std::size_t>(i + 1));  // exp_f's bits, vectorised
        attention_normalise_row(Pbh + i * Tc, s, i, Tc);
      }
      const float* P_f = widen(static_cast<const T*>(Pbh), static_cast<std::size_t>(Tc * Tc), P_stage);
      for (int64_t i = 0; i < Tc; ++i) std::memcpy(out_f + i * C + h * D, v + i * C3, D * sizeof(float));
      trmm_lower_left_f32_on(kAttentionGemm, false, Tc, D, P_f, Tc, out_f + h * D, C);
    }
    narrow(out + b * Tc * C, out_f, static_cast<std::size_t>(Tc * C));
  };
  for_each_sequence(B, attention_forward_scratch_floats(Tc, C, !std::is_same_v<T, float>), scratch, one_sequence);
}

/// Causal self-attention backward.
/// @param dqkv [B,T,3C] (written). @param dout [B,T,C] gradient of the output.
/// @param qkv [B,T,3C] forward input. @param P [B,H,T,T] forward probabilities.
/// @param B batch. @param Tc context. @param C width. @param H heads.
/// @param scratch attention_backward_scratch_floats() floats.
template <typename T>
void attention_backward(T* dqkv, const T* dout, const T* qkv, const T* P, int64_t B, int64_t Tc, int64_t C, int64_t H,
                        float* scratch) {
  const int64_t D = C / H, C3 = 3 * C;
  const float scale = attention_scale(D);
  const auto one_sequence = [&](int64_t b, float* scratch) {
    float* dqkv_f = scratch;                  // [T,3C]
    float* dP = dqkv_f + Tc * C3;             // [T,T]
    float* dS = dP + Tc * Tc;                 // [T,T]
    float* qkv_stage = dS + Tc * Tc;          // [T,3C] (16-bit only)
    float* dout_stage = qkv_stage + Tc * C3;  // [T,C] (16-bit only)
    float* P_stage = dout_stage + Tc * C;     // [T,T] (16-bit only)
    const float* qkv_f = widen(qkv + b * Tc * C3, static_cast<std::size_t>(Tc * C3), qkv_stage);
    const float* dout_f = widen(dout + b * Tc * C, static_cast<std::size_t>(Tc * C), dout_stage);
    for (int64_t h = 0; h < H; ++h) {
      const int64_t q = h * D, k = C + h * D, v = 2 * C + h * D;
      const float* P_f = widen(P + (b * H + h) * Tc * Tc, static_cast<std::size_t>(Tc * Tc), P_stage);
      gemm_f32_on(kAttentionGemm, false, true, Tc, Tc, D, dout_f + h * D, C, qkv_f + v, C3, dP, Tc);
      for (int64_t i = 0; i < Tc; ++i) attention_dscores_row(dS + i * Tc, P_f + i * Tc, dP + i * Tc, i, scale);
      for (int64_t i = 0; i < Tc; ++i) {
        std::memcpy(dqkv_f + i * C3 + v, dout_f + i * C + h * D, D * sizeof(float));
        std::memcpy(dqkv_f + i * C3 + q, qkv_f + i * C3 + k, D * sizeof(float));
        std::memcpy(dqkv_f + i * C3 + k, qkv_f + i * C3 + q, D * sizeof(float));
      }
      trmm_lower_left_f32_on(kAttentionGemm, true, Tc, D, P_f, Tc, dqkv_f + v, C3);  // dV = P^T dO
      trmm_lower_left_f32_on(kAttentionGemm, false, Tc, D, dS, Tc, dqkv_f + q, C3);  // dQ = dS K
      trmm_lower_left_f32_on(kAttentionGemm, true, Tc, D, dS, Tc, dqkv_f + k, C3);   // dK = dS^T Q
    }
    narrow(dqkv + b * Tc * C3, dqkv_f, static_cast<std::size_t>(Tc * C3));
  };
  for_each_sequence(B, attention_backward_scratch_floats(Tc, C, !std::is_same_v<T, float>), scratch, one_sequence);
}

}  // namespace zt::kernels
