// support/kernel_cases/attention.h — the attention softmax's item ops against the CPU kernel,
// bitwise (see env.h). The CPU kernel does the GEMMs itself; the case computes the same FP32
// score matrices with the same gemm_f32 calls (kernels/blas.h: deterministic for a shape), runs
// the row op, and for the backward finishes with the CPU kernel's triangular products, so what is
// compared is the CPU kernel's own output: P forward, dqkv backward.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/attention.h"
#include "kernels/blas.h"
#include "ops/attention_blocks.h"
#include "ops/attention_items.h"
#include "support/kernel_cases/env.h"

namespace zt::test {

/// Attention forward (P) and backward (dqkv) in T, B = 2, H = 3, T = 45, D = 5.
/// @param env the environment (env.h).
template <typename T, typename Env>
void case_attention(const Env& env) {
  using V = typename Env::template vec<T>;
  using F = typename Env::template vec<float>;
  constexpr bool kNarrow = !std::is_same_v<T, float>;
  const int64_t B = 2, H = 3, Tc = 45, D = 5, C = H * D, C3 = 3 * C, TT = Tc * Tc;
  const float scale = kernels::attention_scale(D);
  const std::string shape = type_name<T>();
  const V qkv = sensitive<V>(static_cast<std::size_t>(B * Tc * C3), 13, -18);
  F qkv_f(qkv.size());
  for (std::size_t i = 0; i < qkv.size(); ++i) qkv_f[i] = kernels::to_f(qkv[i]);

  V out(static_cast<std::size_t>(B * Tc * C)), P = sentinel<V>(static_cast<std::size_t>(B * H * TT));
  F scratch(static_cast<std::size_t>(kernels::attention_forward_scratch_floats(Tc, C, kNarrow)));
  kernels::attention_forward(out.data(), P.data(), qkv.data(), B, Tc, C, H, scratch.data());
  F S(static_cast<std::size_t>(B * H * TT));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const float* q = qkv_f.data() + b * Tc * C3 + h * D;
      kernels::gemm_f32(false, true, Tc, Tc, D, q, C3, q + C, C3, S.data() + (b * H + h) * TT, Tc);
    }
  V P_op = sentinel<V>(P.size());
  env.run(ops::AttentionSoftmaxRows<T>{P_op.data(), S.data(), B * H, Tc, scale});
  env.check(same_bits(P, P_op), label("attention softmax forward", shape));

  // fp16 stops at 65504: its output gradients take range_shift's 2^-8 as well, or some are inf
  // and most of dS becomes NaN (sensitive() refuses that).
  const int dout_shift = std::is_same_v<T, fp16> ? -4 + range_shift<T>() : -4;
  const V dout = sensitive<V>(out.size(), 14, dout_shift);
  F dout_f(dout.size());
  for (std::size_t i = 0; i < dout.size(); ++i) dout_f[i] = kernels::to_f(dout[i]);
  V dqkv = sentinel<V>(qkv.size());
  F bscratch(static_cast<std::size_t>(kernels::attention_backward_scratch_floats(Tc, C, kNarrow)));
  kernels::attention_backward(dqkv.data(), dout.data(), qkv.data(), P.data(), B, Tc, C, H, bscratch.data());
  F dP(S.size()), dS(S.size(), 0.0f);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      kernels::gemm_f32(false, true, Tc, Tc, D, dout_f.data() + b * Tc * C + h * D, C,
                        qkv_f.data() + b * Tc * C3 + 2 * C + h * D, C3, dP.data() + (b * H + h) * TT, Tc);
  env.run(ops::AttentionDscoresRows<T>{dS.data(), P.data(), dP.data(), B * H, Tc, scale});
  // the CPU kernel's products after dS: dV = P^T dO, dQ = dS K, dK = dS^T Q, then one rounding
  V dqkv_op(qkv.size());
  std::vector<float> acc(static_cast<std::size_t>(Tc * C3)), Pf(static_cast<std::size_t>(TT));
  for (int64_t b = 0; b < B; ++b) {
    const float* x = qkv_f.data() + b * Tc * C3;
    for (int64_t h = 0; h < H; ++h) {
      const int64_t q = h * D, k = C + h * D, v = 2 * C + h * D, bh = (b * H + h) * TT;
      for (int64_t i = 0; i < TT; ++i) Pf[i] = kernels::to_f(P[bh + i]);
      for (int64_t i = 0; i < Tc; ++i) {
        std::memcpy(&acc[i * C3 + v], dout_f.data() + b * Tc * C + i * C + h * D, D * sizeof(float));
        std::memcpy(&acc[i * C3 + q], x + i * C3 + k, D * sizeof(float));
        std::memcpy(&acc[i * C3 + k], x + i * C3 + q, D * sizeof(float));
      }
      kernels::trmm_lower_left_f32(true, Tc, D, Pf.data(), Tc, &acc[v], C3);
      kernels::trmm_lower_left_f32(false, Tc, D, dS.data() + bh, Tc, &acc[q], C3);
      kernels::trmm_lower_left_f32(true, Tc, D, dS.data() + bh, Tc, &acc[k], C3);
    }
    for (int64_t i = 0; i < Tc * C3; ++i) dqkv_op[b * Tc * C3 + i] = kernels::from_f<T>(acc[i]);
  }
  env.check(same_bits(dqkv, dqkv_op), label("attention softmax backward (dqkv)", shape));
}

/// The fused attention block ops (ops/attention_blocks.h) against the CPU kernel with the
/// canonical GEMM: the output and P forward, dqkv backward, bit for bit, for a context below and
/// one above the block's 128 threads and a head width D below and above 8.
/// @param env the environment (env.h).
template <typename T, typename Env>
void case_attention_blocks(const Env& env) {
  using V = typename Env::template vec<T>;
  using F = typename Env::template vec<float>;
  constexpr bool kNarrow = !std::is_same_v<T, float>;
  const kernels::GemmBackend was = kernels::gemm_backend();
  kernels::set_gemm_backend(kernels::GemmBackend::canonical);
  for (const auto& [B, H, Tc, D] : {std::array<int64_t, 4>{2, 3, 45, 5}, std::array<int64_t, 4>{1, 2, 131, 12}}) {
    const int64_t C = H * D, C3 = 3 * C;
    const std::string shape = std::string(type_name<T>()) + " B=" + std::to_string(B) + " H=" + std::to_string(H) +
                              " T=" + std::to_string(Tc) + " D=" + std::to_string(D);
    const ops::AttentionShape s{B, Tc, C, H, kernels::attention_scale(D)};
    const V qkv = sensitive<V>(static_cast<std::size_t>(B * Tc * C3), 15, -18);
    V out = sentinel<V>(static_cast<std::size_t>(B * Tc * C)), P = sentinel<V>(static_cast<std::size_t>(s.rows() * Tc));
    V out_op = out, P_op = P;
    F scratch(static_cast<std::size_t>(kernels::attention_forward_scratch_floats(Tc, C, kNarrow)));
    kernels::attention_forward(out.data(), P.data(), qkv.data(), B, Tc, C, H, scratch.data());
    env.run(ops::AttentionForwardBlocks<T>{out_op.data(), P_op.data(), qkv.data(), s});
    env.check(same_bits(out, out_op) && same_bits(P, P_op), label("attention blocks forward (out, P)", shape));

    const int dout_shift = std::is_same_v<T, fp16> ? -4 + range_shift<T>() : -4;
    const V dout = sensitive<V>(out.size(), 16, dout_shift);
    V dqkv = sentinel<V>(qkv.size()), dqkv_op = sentinel<V>(qkv.size());
    F bscratch(static_cast<std::size_t>(kernels::attention_backward_scratch_floats(Tc, C, kNarrow)));
    kernels::attention_backward(dqkv.data(), dout.data(), qkv.data(), P.data(), B, Tc, C, H, bscratch.data());
    F rsum(static_cast<std::size_t>(s.rows()), -7.0f);
    env.run(ops::AttentionBackwardRowBlocks<T>{dqkv_op.data(), rsum.data(), dout.data(), qkv.data(), P.data(), s});
    env.run(ops::AttentionBackwardKeyBlocks<T>{dqkv_op.data(), rsum.data(), dout.data(), qkv.data(), P.data(), s});
    env.check(same_bits(dqkv, dqkv_op), label("attention blocks backward (dqkv)", shape));
  }
  kernels::set_gemm_backend(was);
}

}  // namespace zt::test
