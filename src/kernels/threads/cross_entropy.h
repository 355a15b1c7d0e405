// kernels/threads/cross_entropy.h — softmax cross-entropy as item ops (device/item_grid.h): one
// thread per position forward (its row's max, canonical sum of exponentials and loss), one thread
// per logit backward (from the forward's caches). The bodies are kernels/cross_entropy.h's, with
// the scalar exp (the CPU kernel's array exp has the same bits).
#pragma once

#include <cstdint>

#include "fp/hd.h"
#include "kernels/cross_entropy.h"
#include "kernels/tokens.h"

namespace zt::kernels {

/// Forward: item n computes position n's loss and caches (kernels::cross_entropy_forward_row).
template <typename T>
struct CrossEntropyForwardRows {
  float* loss = nullptr;      ///< [N] (written)
  float* row_max = nullptr;   ///< [N] cache (written)
  float* row_sum = nullptr;   ///< [N] cache (written)
  const T* logits = nullptr;  ///< [N,V]
  TokenView targets;          ///< [B,T] ids, N = B T
  int64_t V = 0;              ///< classes
  /// @return N, one thread per position.
  ZT_HD int64_t items() const { return targets.rows * targets.cols; }
  /// @param n the position.
  ZT_HD void operator()(int64_t n) const {
    cross_entropy_forward_row(loss[n], row_max[n], row_sum[n], logits + n * V, targets.flat(n), V);
  }
};

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
  /// @param e the logit's flat index.
  ZT_HD void operator()(int64_t e) const {
    const int64_t n = e / V, j = e % V;
    cross_entropy_backward_element(dlogits[e], logits[e], row_max[n], row_sum[n], j == targets.flat(n), grad_scale);
  }
};

}  // namespace zt::kernels
