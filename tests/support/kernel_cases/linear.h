// support/kernel_cases/linear.h — the linear layer's bias ops against the CPU kernel, bitwise (see
// env.h): the forward epilogue on the same FP32 GEMM result the CPU kernel computes (with and
// without a bias), and the bias gradient, 131 rows by 77 columns (fewer columns than a block).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/blas.h"
#include "kernels/linear.h"
#include "ops/linear_items.h"
#include "support/kernel_cases/env.h"

namespace zt::test {

/// Linear bias epilogue and bias gradient in T. @param env the environment (env.h).
template <typename T, typename Env>
void case_linear(const Env& env) {
  using V = typename Env::template vec<T>;
  using F = typename Env::template vec<float>;
  constexpr bool kNarrow = !std::is_same_v<T, float>;
  const int64_t N = 131, in = 19, out = 77;
  const int s = range_shift<T>();
  const V x = sensitive<V>(static_cast<std::size_t>(N * in), 20, s / 2 - 4),
          W = sensitive<V>(static_cast<std::size_t>(out * in), 21, s / 2 - 4),
          b = sensitive<V>(static_cast<std::size_t>(out), 22, s);
  F x_f(x.size()), W_f(W.size()), acc(static_cast<std::size_t>(N * out));
  for (std::size_t i = 0; i < x.size(); ++i) x_f[i] = kernels::to_f(x[i]);
  for (std::size_t i = 0; i < W.size(); ++i) W_f[i] = kernels::to_f(W[i]);
  kernels::gemm_f32(false, true, N, out, in, x_f.data(), in, W_f.data(), in, acc.data(), out);
  F scratch(static_cast<std::size_t>(kernels::linear_forward_scratch_floats(N, in, out, kNarrow)));
  for (const bool bias : {true, false}) {
    const T* bp = bias ? b.data() : nullptr;
    V y = sentinel<V>(acc.size()), y_op = sentinel<V>(acc.size());
    kernels::linear_forward(y.data(), x.data(), W.data(), bp, N, in, out, scratch.data());
    env.run(ops::LinearBiasElements<T>{y_op.data(), acc.data(), bp, N, out});
    env.check(same_bits(y, y_op),
              label(bias ? "linear bias epilogue" : "linear epilogue without bias", type_name<T>()));
  }
  const V dy = sensitive<V>(acc.size(), 23, s);
  V dx(x.size()), dW(W.size()), db = sentinel<V>(b.size()), db_op = sentinel<V>(b.size());
  F bscratch(static_cast<std::size_t>(kernels::linear_backward_scratch_floats(N, in, out, kNarrow)));
  kernels::linear_backward(dx.data(), dW.data(), db.data(), dy.data(), x.data(), W.data(), N, in, out, bscratch.data());
  F host_scratch(acc.size());  // the host form's widened dy (the host runtime's; items ignore it)
  env.run(ops::LinearBiasGradColumns<T>{db_op.data(), dy.data(), N, out, host_scratch.data()});
  env.check(same_bits(db, db_op), label("linear bias gradient", type_name<T>()));
}

}  // namespace zt::test
