// support/kernel_cases/elementwise.h — the one-thread-per-element ops against the CPU kernels,
// bitwise (see env.h): GELU forward and backward (scalar tanh against the CPU's array tanh),
// residual add and join, and the casts between float and fp16/bf16 over special values and a
// strided sweep of float bit patterns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cast.h"
#include "kernels/gelu.h"
#include "kernels/residual.h"
#include "ops/elementwise_items.h"
#include "ops/gelu_items.h"
#include "support/kernel_cases/env.h"

namespace zt::test {

/// GELU forward and backward in T, counts around the block size and the CPU's 256-value chunk.
/// @param env the environment (env.h).
template <typename T, typename Env>
void case_gelu(const Env& env) {
  using V = typename Env::template vec<T>;
  for (const int64_t n : {int64_t{1000}, int64_t{129}, int64_t{1}}) {
    const std::string shape = std::string(type_name<T>()) + " n=" + std::to_string(n);
    const auto count = static_cast<std::size_t>(n);
    const V x = sensitive<V>(count, 5, -16), dy = sensitive<V>(count, 6, range_shift<T>());
    V y = sentinel<V>(count), y_op = sentinel<V>(count), dx = sentinel<V>(count), dx_op = sentinel<V>(count);
    kernels::gelu_forward(y.data(), x.data(), n);
    env.run(ops::GeluForwardElements<T>{y_op.data(), x.data(), n});
    env.check(same_bits(y, y_op), label("gelu forward", shape));
    kernels::gelu_backward(dx.data(), dy.data(), x.data(), n);
    env.run(ops::GeluBackwardElements<T>{dx_op.data(), dy.data(), x.data(), n});
    env.check(same_bits(dx, dx_op), label("gelu backward", shape));
  }
}

/// Residual add and the backward join in T. @param env the environment (env.h).
template <typename T, typename Env>
void case_residual(const Env& env) {
  using V = typename Env::template vec<T>;
  const int64_t n = 1000;
  const auto count = static_cast<std::size_t>(n);
  const V a = sensitive<V>(count, 7, range_shift<T>()), b = sensitive<V>(count, 8, range_shift<T>());
  V out = sentinel<V>(count), out_op = sentinel<V>(count);
  kernels::residual_forward(out.data(), a.data(), b.data(), n);
  env.run(ops::ResidualForwardElements<T>{out_op.data(), a.data(), b.data(), n});
  env.check(same_bits(out, out_op), label("residual forward", type_name<T>()));
  V skip = a, skip_op = a;
  kernels::residual_grad_join(skip.data(), b.data(), n);
  env.run(ops::ResidualForwardElements<T>{skip_op.data(), skip_op.data(), b.data(), n});  // ModelOps' join
  env.check(same_bits(skip, skip_op), label("residual grad join", type_name<T>()));
}

/// Casts float -> T (round to nearest even) and T -> float (exact) against kernels::narrow and
/// kernels::widen (F16C for fp16 where the CPU has it): zeros, infinities, NaNs with payloads,
/// subnormals, halfway cases, and every 65521st float bit pattern. @param env the environment.
template <typename T, typename Env>
void case_cast(const Env& env) {
  using V = typename Env::template vec<T>;
  using F = typename Env::template vec<float>;
  F src;
  for (uint32_t bits : {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc12345u, 0x7f800001u,
                        0x00000001u, 0x33800000u, 0x33000000u, 0x477fefffu, 0x477ff000u, 0x3f801000u, 0x3f808000u})
    src.push_back(bit_cast_hd<float>(bits));
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 65521) src.push_back(bit_cast_hd<float>(uint32_t(bits)));
  const auto n = static_cast<int64_t>(src.size());
  V narrow = sentinel<V>(src.size()), narrow_op = sentinel<V>(src.size());
  kernels::narrow(narrow.data(), src.data(), src.size());
  env.run(ops::CastElements<T, float>{narrow_op.data(), src.data(), n});
  env.check(same_bits(narrow, narrow_op), label("cast fp32 ->", type_name<T>()));
  F wide(src.size()), wide_op(src.size(), -7.0f);
  const float* w = kernels::widen(narrow.data(), src.size(), wide.data());
  if (w != wide.data()) std::memcpy(wide.data(), w, src.size() * sizeof(float));
  env.run(ops::CastElements<float, T>{wide_op.data(), narrow.data(), n});
  env.check(same_bits(wide, wide_op), label("cast -> fp32 from", type_name<T>()));
}

}  // namespace zt::test
