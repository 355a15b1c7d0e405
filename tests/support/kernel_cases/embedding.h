// support/kernel_cases/embedding.h — the embedding's item ops against the CPU kernel, bitwise
// (see env.h): the lookup, then the backward's three launches (position table, grouping, token
// table), with a vocabulary of 13 of which 3 never occur (their rows must keep the head's part)
// and a position table longer than the context (its extra rows must stay untouched).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/embedding.h"
#include "ops/embedding_items.h"
#include "support/kernel_cases/cross_entropy.h"
#include "support/kernel_cases/env.h"

namespace zt::test {

/// Embedding forward and backward in T, B = 3, T = 43, C = 37, V = 13.
/// @param env the environment (env.h).
template <typename T, typename Env>
void case_embedding(const Env& env) {
  using V = typename Env::template vec<T>;
  using F = typename Env::template vec<float>;
  using I = typename Env::template vec<int32_t>;
  const int64_t B = 3, Tc = 43, C = 37, vocab = 13, N = B * Tc;
  const int s = range_shift<T>();
  I ids;
  const kernels::TokenView tokens = token_grid(ids, B, Tc, vocab - 3, 15);
  const V wte = sensitive<V>(static_cast<std::size_t>(vocab * C), 16, s),
          wpe = sensitive<V>(static_cast<std::size_t>((Tc + 2) * C), 17, s);
  V out = sentinel<V>(static_cast<std::size_t>(N * C)), out_op = sentinel<V>(out.size());
  kernels::embedding_forward(out.data(), tokens, wte.data(), wpe.data(), vocab, C);
  env.run(ops::EmbeddingForwardElements<T>{out_op.data(), tokens, wte.data(), wpe.data(), vocab, C});
  env.check(same_bits(out, out_op), label("embedding forward", type_name<T>()));

  const V dx = sensitive<V>(out.size(), 18, s);
  const V head = sensitive<V>(wte.size(), 19, s);
  V dwte = head, dwte_op = head, dwpe = sentinel<V>(wpe.size()), dwpe_op = sentinel<V>(wpe.size());
  F scratch(static_cast<std::size_t>(kernels::embedding_backward_scratch_floats(B, Tc, C)));
  I iscratch(static_cast<std::size_t>(kernels::embedding_backward_scratch_ints(B, Tc, vocab)));
  kernels::embedding_backward(dwte.data(), dwpe.data(), dx.data(), tokens, vocab, C, scratch.data(), iscratch.data());
  I start(static_cast<std::size_t>(vocab + 1)), order(static_cast<std::size_t>(N));
  env.run(ops::EmbeddingDwpeElements<T>{dwpe_op.data(), dx.data(), B, Tc, C});
  env.run(ops::EmbeddingGroupPositions{start.data(), order.data(), tokens, vocab});
  env.run(ops::EmbeddingDwteElements<T>{dwte_op.data(), dx.data(), start.data(), order.data(), vocab, C});
  env.check(same_bits(dwpe, dwpe_op), label("embedding backward dwpe", type_name<T>()));
  env.check(same_bits(dwte, dwte_op), label("embedding backward dwte", type_name<T>()));
}

}  // namespace zt::test
