// support/kernel_cases/attention.h — the fused attention block ops against the CPU kernel,
// bitwise (see env.h): the output and P forward, dqkv backward. The CPU kernel's products are the
// canonical chains whatever `--gemm` says, so the case runs under both settings.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/attention.h"
#include "kernels/blas.h"
#include "ops/attention_blocks.h"
#include "support/kernel_cases/env.h"

namespace zt::test {

/// The fused attention block ops (ops/attention_blocks.h) against the CPU kernel, under `--gemm
/// canonical` and `--gemm blas` alike (attention's products ignore it): the output and P forward,
/// dqkv backward, bit for bit, for a context below and one above the block's 128 threads and a
/// head width D below and above 8.
/// @param env the environment (env.h).
template <typename T, typename Env>
void case_attention_blocks(const Env& env) {
  using V = typename Env::template vec<T>;
  using F = typename Env::template vec<float>;
  constexpr bool kNarrow = !std::is_same_v<T, float>;
  const kernels::GemmBackend was = kernels::gemm_backend();
  for (const auto backend : {kernels::GemmBackend::canonical, kernels::GemmBackend::blas})
    for (const auto& [B, H, Tc, D] : {std::array<int64_t, 4>{2, 3, 45, 5}, std::array<int64_t, 4>{1, 2, 131, 12}}) {
      kernels::set_gemm_backend(backend);
      const int64_t C = H * D, C3 = 3 * C;
      const std::string shape = std::string(type_name<T>()) + " B=" + std::to_string(B) + " H=" + std::to_string(H) +
                                " T=" + std::to_string(Tc) + " D=" + std::to_string(D) +
                                (backend == kernels::GemmBackend::blas ? " --gemm blas" : "");
      const ops::AttentionShape s{B, Tc, C, H, kernels::attention_scale(D)};
      const V qkv = sensitive<V>(static_cast<std::size_t>(B * Tc * C3), 15, -18);
      V out = sentinel<V>(static_cast<std::size_t>(B * Tc * C)),
        P = sentinel<V>(static_cast<std::size_t>(s.rows() * Tc));
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
