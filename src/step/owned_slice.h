// step/owned_slice.h — the elements one loop updates, and the per-element arithmetic of protocol
// steps 4-6 on them: the non-finite check, the norm's block sums, unscale + clip + optimizer +
// refresh of the 16-bit copy.
//
// A slice is a run of consecutive elements of one unit with everything the update reads and
// writes about them, already offset: the compute copy, the FP32 master, the index of the first
// element in the optimizer state, and the summed, still scaled gradient. The single-rank
// reference hands over each whole unit; a ZeRO rank hands over the part of each unit its
// optimizer owns (S_o, zero/train_zero.cc). Both then run the functions below, so the update of
// an element is one piece of code — the reason a shard's update equals the whole's, bit for bit.
// The rank's threads (core/cpu_pool.h) split the elements, never a sum. Nothing here communicates.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/cpu_pool.h"
#include "fp/hd.h"
#include "optim/grad_norm.h"
#include "optim/loss_scaler.h"
#include "step/element_optimizer.h"

namespace zt::step {

/// A gradient span stored either in FP32 (the accumulator, s_g = 4) or in the compute type T
/// (--reduce-dtype compute with one micro-batch per rank, s_g = 2); read as FP32 either way.
template <typename T>
struct GradSpan {
  const float* fp32 = nullptr;  ///< FP32 storage, or null
  const T* compute = nullptr;   ///< compute-type storage when fp32 is null
  /// @param k element index. @return the value widened to FP32 (exact). ZT_HD: the host's loops
  /// and the device's item ops (step_device/step_threads.h) read a gradient through it alike.
  ZT_HD float operator[](std::size_t k) const { return fp32 ? fp32[k] : static_cast<float>(compute[k]); }
  /// @param k elements to skip. @return the span starting k elements later.
  GradSpan after(std::size_t k) const { return fp32 ? GradSpan{fp32 + k, nullptr} : GradSpan{nullptr, compute + k}; }
};

/// Consecutive elements of one unit as an update sees them.
template <typename T>
struct OwnedSlice {
  T* params = nullptr;          ///< compute copy (for fp32 precision: the master itself)
  float* master = nullptr;      ///< FP32 master; null for fp32 precision and --no-master-weights
  std::size_t state_index = 0;  ///< the first element's index in the optimizer state arrays
  GradSpan<T> grad;             ///< the summed, still scaled gradient of these elements
  std::size_t count = 0;        ///< how many elements
};

/// Whether any of `count` gradient values is inf or NaN (the loss scaler's overflow test). The
/// rank's threads each look at a contiguous part; an OR has no order to keep.
/// @param g the gradient. @param count elements to look at. @return true on any non-finite value.
template <typename T>
bool any_nonfinite(GradSpan<T> g, std::size_t count) {
  std::atomic<bool> nonfinite{false};
  parallel_for(static_cast<int64_t>(count), kCpuElementGrain, [&](int64_t lo, int64_t hi) {
    bool part = false;
    for (auto k = static_cast<std::size_t>(lo); k < static_cast<std::size_t>(hi); ++k) part |= !std::isfinite(g[k]);
    if (part) nonfinite.store(true, std::memory_order_relaxed);
  });
  return nonfinite.load(std::memory_order_relaxed);
}

/// Append the norm block sums of the unscaled gradient of `real` elements that start at a block
/// boundary of their unit (optim/grad_norm.h: blocks of b, the last one partial). Each block is
/// its own canonical tree, so the rank's threads take whole blocks (never part of one) and the
/// sums land in block order whatever the thread count.
/// @param g the gradient. @param real non-padding elements. @param block b. @param inv_scale 1/S.
/// @param sums the block sums so far (appended to).
template <typename T>
void append_norm_block_sums(GradSpan<T> g, std::size_t real, std::size_t block, float inv_scale,
                            std::vector<float>& sums) {
  const std::size_t at = sums.size();
  const std::size_t blocks = norm_block_count(real, block);
  sums.resize(at + blocks);
  float* out = sums.data() + at;
  const auto grain = static_cast<int64_t>(std::max<std::size_t>(1, static_cast<std::size_t>(kCpuElementGrain) / block));
  parallel_for(static_cast<int64_t>(blocks), grain, [&](int64_t b0, int64_t b1) {
    std::vector<float> window(block);  // this part's unscaled values of one block
    for (auto b = static_cast<std::size_t>(b0); b < static_cast<std::size_t>(b1); ++b) {
      const std::size_t first = b * block;
      const std::size_t n = std::min(block, real - first);
      for (std::size_t k = 0; k < n; ++k) window[k] = unscale_element(g[first + k], inv_scale);
      out[b] = block_sum_of_squares(window.data(), n);
    }
  });
}

/// Protocol steps 4-6 on one slice: unscale (×1/S), clip, update the FP32 master and the
/// optimizer state, refresh the compute copy (θ16 ← round(θ32)). Every element's update reads
/// and writes that element's values only, so the rank's threads split the slice into contiguous
/// parts; the count of kept values is a sum of integers, exact in any order.
/// @param s the slice. @param inv_scale 1/S. @param clip the step's clipping decision.
/// @param opt the step's optimizer. @return how many compute-copy values kept their bits
/// (the stall diagnostic of chapter 2; always 0 for fp32 precision).
template <typename T>
std::size_t apply_update(const OwnedSlice<T>& s, float inv_scale, const ClipDecision& clip,
                         const ElementOptimizer& opt) {
  std::atomic<std::size_t> unchanged{0};
  parallel_for(static_cast<int64_t>(s.count), kCpuElementGrain, [&](int64_t lo, int64_t hi) {
    std::size_t part = 0;
    for (auto k = static_cast<std::size_t>(lo); k < static_cast<std::size_t>(hi); ++k) {
      float g = unscale_element(s.grad[k], inv_scale);
      if (clip.clipped) g = clip_element(g, clip.coefficient);
      if constexpr (std::is_same_v<T, float>) {
        opt.update(s.params[k], g, s.state_index + k);
      } else {
        const uint16_t before = s.params[k].bits;
        if (s.master) {  // protocol steps 5 and 6: FP32 update, then refresh the copy
          opt.update(s.master[k], g, s.state_index + k);
          s.params[k] = T(s.master[k]);
        } else {  // --no-master-weights: the update is rounded straight back to 16 bits
          float p = static_cast<float>(s.params[k]);
          opt.update(p, g, s.state_index + k);
          s.params[k] = T(p);
        }
        part += s.params[k].bits == before;
      }
    }
    unchanged.fetch_add(part, std::memory_order_relaxed);
  });
  return unchanged.load(std::memory_order_relaxed);
}

}  // namespace zt::step
