// support/kernel_cases/layernorm.h — LayerNorm's block ops (ops/layernorm_blocks.h) against the
// CPU kernel, bitwise (see env.h): a block per row forward and backward, tiles of columns for the
// gain and bias gradients; widths on both sides of the 128-thread block and of the 8-leaf unit,
// row counts that fill a tile, split it, and leave one column.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/layernorm.h"
#include "ops/layernorm_blocks.h"
#include "support/kernel_cases/env.h"

namespace zt::test {

/// LayerNorm forward (rows) and backward (rows, then tiles of columns) in T.
/// @param env the environment (env.h).
template <typename T, typename Env>
void case_layernorm(const Env& env) {
  using V = typename Env::template vec<T>;
  using F = typename Env::template vec<float>;
  const int s = range_shift<T>();
  for (const auto& [N, C] : {std::pair<int64_t, int64_t>{131, 77}, {5, 259}, {1, 1}, {70, 1031}, {2049, 3}}) {
    const std::string shape = std::string(type_name<T>()) + " " + std::to_string(N) + "x" + std::to_string(C);
    const auto n = static_cast<std::size_t>(N * C), c = static_cast<std::size_t>(C);
    const V x = sensitive<V>(n, 1, s), w = sensitive<V>(c, 2, s - 4), b = sensitive<V>(c, 3, s - 4);
    V y = sentinel<V>(n), y_op = sentinel<V>(n);
    F mean(N), rstd(N), mean_op(N), rstd_op(N);
    kernels::layernorm_forward(y.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N, C);
    env.run(ops::LayerNormForwardBlocks<T>{y_op.data(), mean_op.data(), rstd_op.data(), x.data(), w.data(), b.data(), N,
                                           C});
    env.check(same_bits(y, y_op) && same_bits(mean, mean_op) && same_bits(rstd, rstd_op),
              label("layernorm forward", shape));

    const V dy = sensitive<V>(n, 4, s);
    V dx = sentinel<V>(n), dw = sentinel<V>(c), db = sentinel<V>(c);
    V dx_op = sentinel<V>(n), dw_op = sentinel<V>(c), db_op = sentinel<V>(c);
    F scratch(static_cast<std::size_t>(kernels::layernorm_backward_scratch_floats(N, C)));
    kernels::layernorm_backward(dx.data(), dw.data(), db.data(), dy.data(), x.data(), mean.data(), rstd.data(),
                                w.data(), N, C, scratch.data());
    env.run(
        ops::LayerNormBackwardBlocks<T>{dx_op.data(), dy.data(), x.data(), mean.data(), rstd.data(), w.data(), N, C});
    F host_scratch(scratch.size());  // the host form's leaves (the host runtime's; blocks ignore it)
    env.run(ops::LayerNormParamGradTiles<T>{dw_op.data(), db_op.data(), dy.data(), x.data(), mean.data(), rstd.data(),
                                            N, C, host_scratch.data()});
    env.check(same_bits(dx, dx_op), label("layernorm backward dx", shape));
    env.check(same_bits(dw, dw_op) && same_bits(db, db_op), label("layernorm backward dw db", shape));
  }
}

}  // namespace zt::test
