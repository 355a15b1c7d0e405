// step_device/loop_threads.h — the loop's own element work (step/loop_ops.h) as item ops
// (device/item_grid.h): zeroing, widening and narrowing, the accumulator's merge, and the two integer counts of
// chapter 2's diagnostics. Each thread evaluates the expression HostLoopOps' loop evaluates for
// its element, so the bits are the host's; the counts are per group of kLoopCountGroup elements,
// integers that the host adds in any order exactly. Nothing here allocates, copies or
// synchronises (device_loop_ops.h does); items never cooperate.
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

/// dst[i] = T(src[i]) (round to nearest even, the 16-bit types' conversion).
template <typename T>
struct NarrowItems {
  T* dst = nullptr;            ///< [n] compute type
  const float* src = nullptr;  ///< [n] FP32
  int64_t n = 0;               ///< elements
  /// @return n, one thread per element.
  ZT_HD int64_t items() const { return n; }
  /// @param i the element.
  ZT_HD void operator()(int64_t i) const { dst[i] = T(src[i]); }
};

/// dst[i] = float(src[i]) (exact for the 16-bit types).
template <typename T>
struct WidenItems {
  float* dst = nullptr;    ///< [n] FP32
  const T* src = nullptr;  ///< [n] compute type
  int64_t n = 0;           ///< elements
  /// @return n, one thread per element.
  ZT_HD int64_t items() const { return n; }
  /// @param i the element.
  ZT_HD void operator()(int64_t i) const { dst[i] = static_cast<float>(src[i]); }
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

/// Elements per group of the loop's integer counts.
inline constexpr int64_t kLoopCountGroup = 1024;

/// Zeros counted per group: item j writes how many of g[jG, (j+1)G) compare equal to 0.
template <typename T>
struct ZeroCountItems {
  const T* g = nullptr;        ///< [n]
  int64_t n = 0;               ///< elements
  uint32_t* counts = nullptr;  ///< [ceil(n / G)]
  /// @return the number of groups, one thread per group.
  ZT_HD int64_t items() const { return (n + kLoopCountGroup - 1) / kLoopCountGroup; }
  /// @param j the group.
  ZT_HD void operator()(int64_t j) const {
    const int64_t first = j * kLoopCountGroup, last = first + kLoopCountGroup < n ? first + kLoopCountGroup : n;
    uint32_t c = 0;
    for (int64_t k = first; k < last; ++k) c += static_cast<float>(g[k]) == 0.0f ? 1u : 0u;
    counts[j] = c;
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
  ZT_HD int64_t items() const { return (n + kLoopCountGroup - 1) / kLoopCountGroup; }
  /// @param j the group.
  ZT_HD void operator()(int64_t j) const {
    const int64_t first = j * kLoopCountGroup, last = first + kLoopCountGroup < n ? first + kLoopCountGroup : n;
    uint32_t c = 0;
    for (int64_t k = first; k < last; ++k) c += a[k].bits == b[k].bits ? 1u : 0u;
    counts[j] = c;
  }
};

}  // namespace zt::step
