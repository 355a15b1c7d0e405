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
// Nothing here allocates or communicates.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

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
  /// @param k element index. @return the value widened to FP32 (exact).
  float operator[](std::size_t k) const { return fp32 ? fp32[k] : static_cast<float>(compute[k]); }
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

/// Whether any of `count` gradient values is inf or NaN (the loss scaler's overflow test).
/// @param g the gradient. @param count elements to look at. @return true on any non-finite value.
template <typename T>
bool any_nonfinite(GradSpan<T> g, std::size_t count) {
  bool nonfinite = false;
  for (std::size_t k = 0; k < count; ++k) nonfinite |= !std::isfinite(g[k]);
  return nonfinite;
}

/// Append the norm block sums of the unscaled gradient of `real` elements that start at a block
/// boundary of their unit (optim/grad_norm.h: blocks of b, the last one partial).
/// @param g the gradient. @param real non-padding elements. @param block b. @param inv_scale 1/S.
/// @param window b floats of scratch. @param sums the block sums so far (appended to).
template <typename T>
void append_norm_block_sums(GradSpan<T> g, std::size_t real, std::size_t block, float inv_scale, float* window,
                            std::vector<float>& sums) {
  for (std::size_t first = 0; first < real; first += block) {
    const std::size_t n = std::min(block, real - first);
    for (std::size_t k = 0; k < n; ++k) window[k] = unscale_element(g[first + k], inv_scale);
    sums.push_back(block_sum_of_squares(window, n));
  }
}

/// Protocol steps 4-6 on one slice: unscale (×1/S), clip, update the FP32 master and the
/// optimizer state, refresh the compute copy (θ16 ← round(θ32)).
/// @param s the slice. @param inv_scale 1/S. @param clip the step's clipping decision.
/// @param opt the step's optimizer. @return how many compute-copy values kept their bits
/// (the stall diagnostic of chapter 2; always 0 for fp32 precision).
template <typename T>
std::size_t apply_update(const OwnedSlice<T>& s, float inv_scale, const ClipDecision& clip,
                         const ElementOptimizer& opt) {
  std::size_t unchanged = 0;
  for (std::size_t k = 0; k < s.count; ++k) {
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
      unchanged += s.params[k].bits == before;
    }
  }
  return unchanged;
}

}  // namespace zt::step
