// step_device/loop_threads.h — the loop's own element work (loop_ops.h) as item ops
// (device/item_grid.h): zeroing, the accumulator's merge, and the two integer counts of chapter
// 2's diagnostics (widening and narrowing are the model's casts, ops/elementwise_items.h).
// Each thread evaluates the expression a plain host loop evaluates for its element, so the bits
// are the host's; the counts are per group of kLoopCountGroup elements, integers that the host
// adds in any order exactly. Nothing here allocates, copies or synchronises (loop_ops.h
// does); items never cooperate.
#pragma once

#include <cstdint>

#include "fp/hd.h"

namespace zt::step {

/// dst[i] = 0 for each byte.
struct ZeroItems {
  uint8_t* dst = nullptr;  ///< [n] bytes
  int64_t n = 0;           ///< bytes
  /// @return n, one thread per byte.
  ZT_HD int64_t items() const { return n; }
  /// @param i the byte.
  ZT_HD void operator()(int64_t i) const { dst[i] = 0; }
};

/// left[i] = left[i] + right[i]: one merge of the canonical accumulator (optim/grad_accumulator.h).
struct AddItems {
  float* left = nullptr;         ///< [n] updated
  const float* right = nullptr;  ///< [n]
  int64_t n = 0;                 ///< elements
  /// @return n, one thread per element.
  ZT_HD int64_t items() const { return n; }
  /// @param i the element.
  ZT_HD void operator()(int64_t i) const { left[i] = left[i] + right[i]; }
};

/// Elements per group of every per-group integer count (these, and the step's kept flags).
inline constexpr int64_t kLoopCountGroup = 1024;

/// The groups of n elements: ceil(n / G), one thread each. @param n elements. @return groups.
ZT_HD int64_t count_groups(int64_t n) { return (n + kLoopCountGroup - 1) / kLoopCountGroup; }

/// Group j's count: one(k), 0 or 1, summed over k in [jG, (j+1)G) below n.
/// @param j the group. @param n elements. @param one k -> 0 or 1. @return the count.
template <typename One>
ZT_HD uint32_t group_count(int64_t j, int64_t n, const One& one) {
  const int64_t first = j * kLoopCountGroup, last = first + kLoopCountGroup < n ? first + kLoopCountGroup : n;
  uint32_t c = 0;
  for (int64_t k = first; k < last; ++k) c += one(k);
  return c;
}

/// Zeros counted per group: item j writes how many of g[jG, (j+1)G) compare equal to 0.
template <typename T>
struct ZeroCountItems {
  const T* g = nullptr;        ///< [n]
  int64_t n = 0;               ///< elements
  uint32_t* counts = nullptr;  ///< [ceil(n / G)]
  /// @return the number of groups, one thread per group.
  ZT_HD int64_t items() const { return count_groups(n); }
  /// @param j the group.
  ZT_HD void operator()(int64_t j) const {
    const T* x = g;
    counts[j] = group_count(j, n, [x](int64_t k) { return static_cast<float>(x[k]) == 0.0f ? 1u : 0u; });
  }
};

/// Equal bit patterns counted per group: item j counts k in [jG, (j+1)G) with a[k] == b[k]
/// bitwise. For the 16-bit types only (chapter 2's stall counter has nothing to count in FP32).
template <typename T>
struct SameBitsItems {
  static_assert(sizeof(T) == 2, "bit patterns of the 16-bit types");
  const T* a = nullptr;        ///< [n]
  const T* b = nullptr;        ///< [n]
  int64_t n = 0;               ///< elements
  uint32_t* counts = nullptr;  ///< [ceil(n / G)]
  /// @return the number of groups, one thread per group.
  ZT_HD int64_t items() const { return count_groups(n); }
  /// @param j the group.
  ZT_HD void operator()(int64_t j) const {
    const T *x = a, *y = b;
    counts[j] = group_count(j, n, [x, y](int64_t k) { return x[k].bits == y[k].bits ? 1u : 0u; });
  }
};

}  // namespace zt::step
