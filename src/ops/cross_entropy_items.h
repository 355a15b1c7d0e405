// ops/cross_entropy_items.h — the softmax cross-entropy backward as an item op
// (device/item_grid.h): one thread per logit, from the forward's caches, the body
// kernels/cross_entropy.h's with the scalar exp (the CPU kernel's array exp has the same bits).
// The forward is a block per position (ops/cross_entropy_blocks.h).
#pragma once

#include <cstdint>

#include "fp/hd.h"
#include "kernels/cross_entropy.h"
#include "kernels/tokens.h"

namespace zt::ops {

using kernels::cross_entropy_backward_element;
using kernels::TokenView;

/// Backward: item e = n V + j computes dlogits[n, j] (kernels::cross_entropy_backward_element).
template <typename T>
struct CrossEntropyBackwardElements {
  T* dlogits = nullptr;            ///< [N,V] (written)
  const T* logits = nullptr;       ///< [N,V]
  const float* row_max = nullptr;  ///< [N] forward cache
  const float* row_sum = nullptr;  ///< [N] forward cache
  TokenView targets;               ///< [B,T] ids
  int64_t V = 0;                   ///< classes
  float grad_scale = 0;            ///< the seed gradient of every position's loss
  /// @return N V, one thread per logit.
  ZT_HD int64_t items() const { return targets.rows * targets.cols * V; }
  /// The host form: the CPU kernel, a row at a time (the same bits). Host only.
  void host() const { kernels::cross_entropy_backward(dlogits, logits, row_max, row_sum, targets, V, grad_scale); }
  /// @param e the logit's flat index.
  ZT_HD void operator()(int64_t e) const {
    const int64_t n = e / V, j = e % V;
    cross_entropy_backward_element(dlogits[e], logits[e], row_max[n], row_sum[n], j == targets.flat(n), grad_scale);
  }
};

}  // namespace zt::ops
