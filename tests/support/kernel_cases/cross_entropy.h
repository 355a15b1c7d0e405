// support/kernel_cases/cross_entropy.h — cross-entropy against the CPU kernel, bitwise (see env.h):
// a block per position forward (ops/cross_entropy_blocks.h), one thread per logit backward
// (ops/cross_entropy_items.h); V below and above the CPU's 256-logit exp chunk and the
// block's 128 threads, logits spread over 2^-38 .. 2^3 so that the sums of exponentials depend on
// their order; a row whose maximum is tied between +0 and -0, and rows with NaN logits first and
// later, so the block's maximum is held to the scan's answer.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/check.h"
#include "kernels/cross_entropy.h"
#include "kernels/tokens.h"
#include "ops/cross_entropy_blocks.h"
#include "ops/cross_entropy_items.h"
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

/// The forward's maximum at its edges: rows of 300 logits where the largest value is +0 and -0 at
/// several places (the first one's sign must win), where logit 0 is NaN (the scan's answer is that
/// NaN), and where a later logit is NaN (skipped by the maximum, NaN in the sum). @param env the environment (env.h).
template <typename T, typename Env>
void case_cross_entropy_edges(const Env& env) {
  using V = typename Env::template vec<T>;
  using F = typename Env::template vec<float>;
  typename Env::template vec<int32_t> ids;
  const int64_t classes = 300, N = 4;
  const kernels::TokenView targets = token_grid(ids, 1, N, classes, 13);
  V logits = sensitive<V>(static_cast<std::size_t>(N * classes), 14, -18);
  for (auto& l : logits) l = kernels::from_f<T>(-std::fabs(kernels::to_f(l)) - 1.0f);  // all below 0
  const float nan = std::nanf("");
  for (const int64_t j : {int64_t{131}, int64_t{3}, int64_t{259}})
    logits[j] = kernels::from_f<T>(j == 3 ? -0.0f : 0.0f);
  for (const int64_t j : {int64_t{5}, int64_t{140}}) logits[classes + j] = kernels::from_f<T>(j == 140 ? -0.0f : 0.0f);
  logits[2 * classes] = kernels::from_f<T>(nan);
  logits[3 * classes + 200] = kernels::from_f<T>(nan);
  const auto n = static_cast<std::size_t>(N);
  F loss(n), rmax(n), rsum(n), loss_op(n, -7.0f), rmax_op(n, -7.0f), rsum_op(n, -7.0f);
  std::vector<int32_t> host_ids(ids.begin(), ids.end());
  const kernels::TokenView host_targets{host_ids.data() + 1, 1, N, N + 1};
  kernels::cross_entropy_forward(loss.data(), rmax.data(), rsum.data(), logits.data(), host_targets, classes);
  env.run(ops::CrossEntropyForwardBlocks<T>{loss_op.data(), rmax_op.data(), rsum_op.data(), logits.data(), targets,
                                            classes});
  // rows 0 and 1 bit for bit; rows 2 and 3 hold a NaN, whose payload after arithmetic is the
  // machine's (a GPU makes its own), so there the maximum is compared bit for bit and the sum and
  // the loss must be NaN
  const auto first_two = [](const F& v) { return std::vector<float>(v.begin(), v.begin() + 2); };
  env.check(same_bits(rmax, rmax_op) && same_bits(first_two(loss), first_two(loss_op)) &&
                same_bits(first_two(rsum), first_two(rsum_op)),
            label("cross-entropy forward, signed zeros and NaN", type_name<T>()));
  env.check(std::isnan(rsum_op[2]) && std::isnan(loss_op[2]) && std::isnan(rsum_op[3]) && std::isnan(loss_op[3]),
            label("cross-entropy forward, NaN rows stay NaN", type_name<T>()));
}

/// Cross-entropy forward and backward in T. @param env the environment (env.h).
template <typename T, typename Env>
void case_cross_entropy(const Env& env) {
  using V = typename Env::template vec<T>;
  using F = typename Env::template vec<float>;
  typename Env::template vec<int32_t> ids;
  for (const int64_t classes : {int64_t{77}, int64_t{300}, int64_t{1031}}) {
    const int64_t B = 3, Tc = 45, N = B * Tc;
    const std::string shape = std::string(type_name<T>()) + " N=" + std::to_string(N) + " V=" + std::to_string(classes);
    const kernels::TokenView targets = token_grid(ids, B, Tc, classes, 9);
    const auto n = static_cast<std::size_t>(N);
    const V logits = sensitive<V>(n * static_cast<std::size_t>(classes), 10, -18);
    F loss(n), rmax(n), rsum(n), loss_op(n, -7.0f), rmax_op(n, -7.0f), rsum_op(n, -7.0f);
    kernels::cross_entropy_forward(loss.data(), rmax.data(), rsum.data(), logits.data(), targets, classes);
    env.run(ops::CrossEntropyForwardBlocks<T>{loss_op.data(), rmax_op.data(), rsum_op.data(), logits.data(), targets,
                                              classes});
    env.check(same_bits(loss, loss_op) && same_bits(rmax, rmax_op) && same_bits(rsum, rsum_op),
              label("cross-entropy forward", shape));

    const float grad_scale = 1.0f / static_cast<float>(N);
    V d = sentinel<V>(logits.size()), d_op = sentinel<V>(logits.size());
    kernels::cross_entropy_backward(d.data(), logits.data(), rmax.data(), rsum.data(), targets, classes, grad_scale);
    env.run(ops::CrossEntropyBackwardElements<T>{d_op.data(), logits.data(), rmax.data(), rsum.data(), targets, classes,
                                                 grad_scale});
    env.check(same_bits(d, d_op), label("cross-entropy backward", shape));
  }
  // a target outside [0, V) is an error on the CPU (and so on the host runtime, whose host form is
  // the CPU kernel); on a device it gives a NaN loss, not a read out of bounds
  const kernels::TokenView bad = token_grid(ids, 1, 2, 5, 11);
  ids[2] = 5;
  const V logits = sensitive<V>(10, 12, -16);
  F loss(2, -7.0f), rmax(2), rsum(2);
  const ops::CrossEntropyForwardBlocks<T> bad_op{loss.data(), rmax.data(), rsum.data(), logits.data(), bad, 5};
  if constexpr (requires { Env::kHostForms; }) {
    bool refused = false;
    try {
      env.run(bad_op);
    } catch (const Error& e) {
      refused = std::string(e.what()).find("target 5 at position 1 is outside [0,5)") != std::string::npos;
    }
    env.check(refused, label("cross-entropy bad target is the CPU's error", type_name<T>()));
  } else {
    env.run(bad_op);
    env.check(std::isnan(loss[1]) && !std::isnan(loss[0]), label("cross-entropy bad target is NaN", type_name<T>()));
  }
  case_cross_entropy_edges<T>(env);
}

}  // namespace zt::test
