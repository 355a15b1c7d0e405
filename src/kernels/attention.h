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
// kernels/math_array.h (the same bits).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/blas.h"
#include "kernels/cast.h"
#include "kernels/math.h"
#include "kernels/math_array.h"
#include "kernels/row_sum.h"

namespace zt::kernels {

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

/// Causal self-attention forward.
/// @param out [B,T,C] (written). @param P [B,H,T,T] probabilities (written; zeros above the
/// diagonal). @param qkv [B,T,3C]. @param B batch. @param Tc context. @param C width.
/// @param H heads (C % H == 0). @param scratch attention_forward_scratch_floats() floats.
template <typename T>
void attention_forward(T* out, T* P, const T* qkv, int64_t B, int64_t Tc, int64_t C, int64_t H, float* scratch) {
  const int64_t D = C / H, C3 = 3 * C;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  float* out_f = scratch;                // [T,C]
  float* S = out_f + Tc * C;             // [T,T] raw scores
  float* qkv_stage = S + Tc * Tc;        // [T,3C] (16-bit only)
  float* P_stage = qkv_stage + C3 * Tc;  // [T,T] (16-bit only)
  for (int64_t b = 0; b < B; ++b) {
    const float* qkv_f = widen(qkv + b * Tc * C3, static_cast<std::size_t>(Tc * C3), qkv_stage);
    for (int64_t h = 0; h < H; ++h) {
      const float* q = qkv_f + h * D;
      const float* k = qkv_f + C + h * D;
      const float* v = qkv_f + 2 * C + h * D;
      gemm_f32(false, true, Tc, Tc, D, q, C3, k, C3, S, Tc);
      T* Pbh = P + (b * H + h) * Tc * Tc;
      for (int64_t i = 0; i < Tc; ++i) {
        float* s = S + i * Tc;
        float m = -INFINITY;
        for (int64_t j = 0; j <= i; ++j) {
          s[j] = s[j] * scale;
          m = s[j] > m ? s[j] : m;
        }
        for (int64_t j = 0; j <= i; ++j) s[j] = s[j] - m;
        exp_f_n(s, s, static_cast<std::size_t>(i + 1));  // exp_f's bits, vectorised
        const float sum = canonical_sum_f(static_cast<std::size_t>(i + 1), [&](std::size_t j) { return s[j]; });
        for (int64_t j = 0; j <= i; ++j) Pbh[i * Tc + j] = from_f<T>(s[j] / sum);
        for (int64_t j = i + 1; j < Tc; ++j) Pbh[i * Tc + j] = from_f<T>(0.0f);
      }
      const float* P_f = widen(static_cast<const T*>(Pbh), static_cast<std::size_t>(Tc * Tc), P_stage);
      for (int64_t i = 0; i < Tc; ++i) std::memcpy(out_f + i * C + h * D, v + i * C3, D * sizeof(float));
      trmm_lower_left_f32(false, Tc, D, P_f, Tc, out_f + h * D, C);
    }
    narrow(out + b * Tc * C, out_f, static_cast<std::size_t>(Tc * C));
  }
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
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  float* dqkv_f = scratch;                  // [T,3C]
  float* dP = dqkv_f + Tc * C3;             // [T,T]
  float* dS = dP + Tc * Tc;                 // [T,T]
  float* qkv_stage = dS + Tc * Tc;          // [T,3C] (16-bit only)
  float* dout_stage = qkv_stage + Tc * C3;  // [T,C] (16-bit only)
  float* P_stage = dout_stage + Tc * C;     // [T,T] (16-bit only)
  for (int64_t b = 0; b < B; ++b) {
    const float* qkv_f = widen(qkv + b * Tc * C3, static_cast<std::size_t>(Tc * C3), qkv_stage);
    const float* dout_f = widen(dout + b * Tc * C, static_cast<std::size_t>(Tc * C), dout_stage);
    for (int64_t h = 0; h < H; ++h) {
      const int64_t q = h * D, k = C + h * D, v = 2 * C + h * D;
      const float* P_f = widen(P + (b * H + h) * Tc * Tc, static_cast<std::size_t>(Tc * Tc), P_stage);
      gemm_f32(false, true, Tc, Tc, D, dout_f + h * D, C, qkv_f + v, C3, dP, Tc);
      for (int64_t i = 0; i < Tc; ++i) {
        const float* p = P_f + i * Tc;
        const float* dp = dP + i * Tc;
        const float r = canonical_sum_f(static_cast<std::size_t>(i + 1), [&](std::size_t j) { return p[j] * dp[j]; });
        for (int64_t j = 0; j <= i; ++j) dS[i * Tc + j] = p[j] * (dp[j] - r) * scale;
      }
      for (int64_t i = 0; i < Tc; ++i) {
        std::memcpy(dqkv_f + i * C3 + v, dout_f + i * C + h * D, D * sizeof(float));
        std::memcpy(dqkv_f + i * C3 + q, qkv_f + i * C3 + k, D * sizeof(float));
        std::memcpy(dqkv_f + i * C3 + k, qkv_f + i * C3 + q, D * sizeof(float));
      }
      trmm_lower_left_f32(true, Tc, D, P_f, Tc, dqkv_f + v, C3);  // dV = P^T dO
      trmm_lower_left_f32(false, Tc, D, dS, Tc, dqkv_f + q, C3);  // dQ = dS K
      trmm_lower_left_f32(true, Tc, D, dS, Tc, dqkv_f + k, C3);   // dK = dS^T Q
    }
    narrow(dqkv + b * Tc * C3, dqkv_f, static_cast<std::size_t>(Tc * C3));
  }
}

}  // namespace zt::kernels
