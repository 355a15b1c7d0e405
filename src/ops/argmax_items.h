// ops/argmax_items.h — the argmax of each row of logits as an item op (device/item_grid.h),
// one thread per row: the predictions of a model whose logits are in device memory.
//
// The row's scan is kernels::argmax_rows's, comparison for comparison: left to right, a later
// logit replaces the best only when strictly greater (widened to FP32), so among equal logits the
// lowest index wins and a NaN never does. There is no arithmetic, so no rounding to agree on.
#pragma once

#include <cstdint>

#include "fp/hd.h"
#include "kernels/cast.h"

namespace zt::ops {

using kernels::to_f;

/// Item n writes the index of row n's largest logit.
template <typename T>
struct ArgmaxRows {
  int32_t* out = nullptr;     ///< [N] ids (written)
  const T* logits = nullptr;  ///< [N,V]
  int64_t N = 0;              ///< rows
  int64_t V = 0;              ///< classes
  /// @return N, one thread per row.
  ZT_HD int64_t items() const { return N; }
  /// @param n the row.
  ZT_HD void operator()(int64_t n) const {
    const T* l = logits + n * V;
    int64_t best = 0;
    for (int64_t j = 1; j < V; ++j) best = to_f(l[j]) > to_f(l[best]) ? j : best;
    out[n] = static_cast<int32_t>(best);
  }
};

}  // namespace zt::ops
