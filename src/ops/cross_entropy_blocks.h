// ops/cross_entropy_blocks.h — the cross-entropy forward (kernels/cross_entropy.h) as a block op
// (device/block_launch.h): a block per position, its threads sharing the row of V logits for the
// maximum and for the canonical sum of the exponentials (ops/block_reduce.h), where one thread used
// to walk all V = 50,304 logits of GPT-2's vocabulary alone. The values are the CPU kernel's, bit
// for bit: the row maximum is logits_row_max's scan (which starts from the first logit, so a NaN
// there is the answer), the leaves exp_f(l_j - m), the loss cross_entropy_loss_from.
// Not here: the backward, one thread per logit already (ops/cross_entropy_items.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "device/block_launch.h"
#include "fp/hd.h"
#include "kernels/cast.h"
#include "kernels/cross_entropy.h"
#include "kernels/math.h"
#include "kernels/tokens.h"
#include "ops/block_reduce.h"

namespace zt::ops {

/// Forward: block n computes position n's loss and its row's caches
/// (kernels::cross_entropy_forward_row's values).
template <typename T>
struct CrossEntropyForwardBlocks {
  float* loss = nullptr;       ///< [N] per-position losses (written)
  float* row_max = nullptr;    ///< [N] cache (written)
  float* row_sum = nullptr;    ///< [N] cache (written)
  const T* logits = nullptr;   ///< [N,V]
  kernels::TokenView targets;  ///< [B,T] ids (device memory), N = B T
  int64_t V = 0;               ///< classes
  /// @return N, a block per position.
  ZT_HD int64_t blocks() const { return targets.rows * targets.cols; }
  /// The host form: the CPU kernel, a row at a time (its exp a chunk at a time, the same bits).
  /// Host only.
  void host() const { kernels::cross_entropy_forward(loss, row_max, row_sum, logits, targets, V); }
  /// @return the arithmetic: 4 flops per logit (compare, subtract, exp counted as one, add).
  double flops() const { return 4.0 * static_cast<double>(blocks()) * static_cast<double>(V); }
  /// @return the row's canonical-sum units, or the maximum's slots if more.
  ZT_HD std::size_t shared_floats() const {
    const std::size_t sum = canonical_sum_floats(static_cast<std::size_t>(V));
    const std::size_t max = first_max_floats(device::kBlockThreads);
    return sum > max ? sum : max;
  }
  /// @param blk the block. @param n its position.
  template <typename Block>
  ZT_HD void operator()(Block& blk, int64_t n) const {
    using kernels::to_f;
    const T* l = logits + n * V;
    const float first = to_f(l[0]);
    const float scanned = block_first_max(blk, blk.shared(), V, [&](int64_t j) { return to_f(l[j]); });
    const float m = first != first ? first : scanned;  // the scan starts at l_0: a NaN there stays
    const float s = block_canonical_sum(blk, blk.shared(), static_cast<std::size_t>(V),
                                        [&](std::size_t j) { return kernels::exp_f(to_f(l[j]) - m); });
    const int32_t y = targets.flat(n);
    blk.each([&](uint32_t t) {
      if (t != 0) return;
      row_max[n] = m;
      row_sum[n] = s;
      loss[n] = y >= 0 && y < V ? kernels::cross_entropy_loss_from(m, s, to_f(l[y])) : bit_cast_hd<float>(0x7fc00000u);
    });
  }
};

}  // namespace zt::ops
