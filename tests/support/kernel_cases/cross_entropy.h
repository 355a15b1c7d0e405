// support/kernel_cases/cross_entropy.h — cross-entropy's item ops against the CPU kernel, bitwise
// (see env.h): one thread per position forward, one per logit backward; V below and above the
// CPU's 256-logit exp chunk, logits spread over 2^-38 .. 2^3 so that the sums of exponentials
// depend on their order.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cross_entropy.h"
#include "kernels/threads/cross_entropy.h"
#include "kernels/tokens.h"
#include "support/kernel_cases/env.h"

namespace zt::test {

/// A [B, T+1] grid of ids in [0, V) with row stride T+1, as a batch arrives; the view of its
/// columns 1..T (the targets). @param ids the storage (filled). @param B rows. @param Tc columns.
/// @param V the id range. @param seed the stream. @return the view.
template <typename I>
kernels::TokenView token_grid(I& ids, int64_t B, int64_t Tc, int64_t V, uint32_t seed) {
  ids.assign(static_cast<std::size_t>(B * (Tc + 1)), 0);
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& id : ids) {
    s = s * 1664525u + 1013904223u;
    id = static_cast<int32_t>((s >> 8) % static_cast<uint32_t>(V));
  }
  return {ids.data() + 1, B, Tc, Tc + 1};
}

/// Cross-entropy forward and backward in T. @param env the environment (env.h).
template <typename T, typename Env>
void case_cross_entropy(const Env& env) {
  using V = typename Env::template vec<T>;
  using F = typename Env::template vec<float>;
  typename Env::template vec<int32_t> ids;
  for (const int64_t classes : {int64_t{77}, int64_t{300}}) {
    const int64_t B = 3, Tc = 45, N = B * Tc;
    const std::string shape = std::string(type_name<T>()) + " N=" + std::to_string(N) + " V=" + std::to_string(classes);
    const kernels::TokenView targets = token_grid(ids, B, Tc, classes, 9);
    const auto n = static_cast<std::size_t>(N);
    const V logits = sensitive<V>(n * static_cast<std::size_t>(classes), 10, -18);
    F loss(n), rmax(n), rsum(n), loss_op(n, -7.0f), rmax_op(n, -7.0f), rsum_op(n, -7.0f);
    kernels::cross_entropy_forward(loss.data(), rmax.data(), rsum.data(), logits.data(), targets, classes);
    env.run(kernels::CrossEntropyForwardRows<T>{loss_op.data(), rmax_op.data(), rsum_op.data(), logits.data(), targets,
                                                classes});
    env.check(same_bits(loss, loss_op) && same_bits(rmax, rmax_op) && same_bits(rsum, rsum_op),
              label("cross-entropy forward", shape));

    const float grad_scale = 1.0f / static_cast<float>(N);
    V d = sentinel<V>(logits.size()), d_op = sentinel<V>(logits.size());
    kernels::cross_entropy_backward(d.data(), logits.data(), rmax.data(), rsum.data(), targets, classes, grad_scale);
    env.run(kernels::CrossEntropyBackwardElements<T>{d_op.data(), logits.data(), rmax.data(), rsum.data(), targets,
                                                     classes, grad_scale});
    env.check(same_bits(d, d_op), label("cross-entropy backward", shape));
  }
  // a target outside [0, V) is an error on the CPU; on the device it gives a NaN loss, not a read
  // out of bounds
  const kernels::TokenView bad = token_grid(ids, 1, 2, 5, 11);
  ids[2] = 5;
  const V logits = sensitive<V>(10, 12, -16);
  F loss(2, -7.0f), rmax(2), rsum(2);
  env.run(kernels::CrossEntropyForwardRows<T>{loss.data(), rmax.data(), rsum.data(), logits.data(), bad, 5});
  env.check(std::isnan(loss[1]) && !std::isnan(loss[0]), label("cross-entropy bad target is NaN", type_name<T>()));
}

}  // namespace zt::test
