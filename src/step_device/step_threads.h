// step_device/step_threads.h — protocol steps 4-6 as item ops (device/item_grid.h): the
// non-finite flag, the norm block sums and the update of an owned slice, each thread running the
// ZT_HD element functions the host loop of step/owned_slice.h runs, in the same order.
//
// Why it gives the host's bits: each element's update is the same unscale_element, clip_element
// and adam_update_element / sgd_update_element calls, then the same rounding to T; a norm block's
// sum is canonical_sum_f (kernels/row_sum.h), the canonical tree that block_sum_of_squares
// evaluates with canonical_reduce (tests/kernels checks the two trees bit for bit); the overflow
// answer is an integer flag that every writer sets to 1 (never a float maximum or a race on a
// float). Nothing here allocates, copies or synchronises (step_ops.h does); items never
// cooperate. The CUDA launcher of these ops is step_device/cuda/ (built only with CUDA).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "fp/hd.h"
#include "kernels/row_sum.h"
#include "optim/grad_norm.h"
#include "optim/loss_scaler.h"
#include "step/element_optimizer.h"
#include "step/owned_slice.h"
#include "step_device/loop_threads.h"

namespace zt::step {

/// Overflow check: item i sets *flag to 1 when gradient i is inf or NaN (nonfinite_bits). The
/// caller zeroes *flag first; afterwards it is 1 exactly when any_nonfinite is true.
template <typename T>
struct NonfiniteFlagItems {
  GradSpan<T> g;             ///< the gradient
  int64_t n = 0;             ///< elements
  uint32_t* flag = nullptr;  ///< one integer, set to 1 on a non-finite value, never cleared
  /// @return n, one thread per element.
  ZT_HD int64_t items() const { return n; }
  /// @param i the element.
  ZT_HD void operator()(int64_t i) const {
    if (nonfinite_bits(g[static_cast<std::size_t>(i)])) *flag = 1;
  }
};

/// Norm block sums: item b writes block_sum_of_squares of the unscaled values of block b (blocks
/// of `block` elements from the span's first, the last one partial) to sums[b].
template <typename T>
struct NormBlockItems {
  GradSpan<T> g;          ///< the gradient, from a block boundary of its unit
  int64_t real = 0;       ///< non-padding elements
  int64_t block = 0;      ///< b
  float inv_scale = 1;    ///< 1/S
  float* sums = nullptr;  ///< [ceil(real / b)] block sums
  /// @return the number of blocks, one thread per block.
  ZT_HD int64_t items() const { return (real + block - 1) / block; }
  /// @param b the block.
  ZT_HD void operator()(int64_t b) const {
    const int64_t first = b * block;
    const int64_t count = real - first < block ? real - first : block;
    const GradSpan<T> x = g;
    const float inv = inv_scale;
    sums[b] = kernels::canonical_sum_f(static_cast<std::size_t>(count), [x, inv, first](std::size_t k) {
      const float u = unscale_element(x[static_cast<std::size_t>(first) + k], inv);
      return u * u;
    });
  }
};

/// Steps 5-6 on a slice: item i unscales and clips gradient i, updates the master (or, without
/// one, the widened 16-bit value) and the state, refreshes params[i] = T(master), and for 16-bit
/// T sets kept[i] to whether params[i] kept its bits (apply_update's count, element by element).
template <typename T>
struct UpdateItems {
  T* params = nullptr;          ///< [n] compute copy (for fp32: the master itself)
  float* master = nullptr;      ///< [n] FP32 master, or null
  GradSpan<T> g;                ///< [n] the summed, still scaled gradient
  int64_t n = 0;                ///< elements
  std::size_t state_index = 0;  ///< element 0's index in the state arrays
  float inv_scale = 1;          ///< 1/S
  bool clipped = false;         ///< the step's clipping decision
  float coefficient = 1;        ///< its coefficient
  ElementOptimizer opt;         ///< the step's optimizer, state in device memory
  uint8_t* kept = nullptr;      ///< [n] 1 where params kept its bits (16-bit T only)
  /// @return n, one thread per element.
  ZT_HD int64_t items() const { return n; }
  /// @param i the element.
  ZT_HD void operator()(int64_t i) const {
    float grad = unscale_element(g[static_cast<std::size_t>(i)], inv_scale);
    if (clipped) grad = clip_element(grad, coefficient);
    const std::size_t at = state_index + static_cast<std::size_t>(i);
    if constexpr (std::is_same_v<T, float>) {
      opt.update(params[i], grad, at);
    } else {
      const uint16_t before = params[i].bits;
      if (master) {
        opt.update(master[i], grad, at);
        params[i] = T(master[i]);
      } else {
        float p = static_cast<float>(params[i]);
        opt.update(p, grad, at);
        params[i] = T(p);
      }
      kept[i] = params[i].bits == before ? 1 : 0;
    }
  }
};

/// Elements per group of the kept-flag count: the loop's count groups (loop_threads.h).
inline constexpr int64_t kKeptGroup = kLoopCountGroup;

/// The kept flags counted per group: item j writes the number of ones among kept[j·G, (j+1)·G)
/// to counts[j] (integers: the host's total of the groups is exact in any order).
struct KeptCountItems {
  const uint8_t* kept = nullptr;  ///< [n] flags
  int64_t n = 0;                  ///< flags
  uint32_t* counts = nullptr;     ///< [ceil(n / G)] per-group counts
  /// @return the number of groups, one thread per group.
  ZT_HD int64_t items() const { return count_groups(n); }
  /// @param j the group.
  ZT_HD void operator()(int64_t j) const {
    const uint8_t* flags = kept;
    counts[j] = group_count(j, n, [flags](int64_t k) -> uint32_t { return flags[k]; });
  }
};

}  // namespace zt::step
