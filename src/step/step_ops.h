// step/step_ops.h — protocol steps 4-6 behind one seam: the non-finite check, the norm's block
// sums and unscale + clip + update + refresh, as three virtual calls that a loop makes without
// knowing where the slice's bytes live.
//
// Why a seam: the loops (the single-rank reference, the ZeRO engine) run the same step code on
// the host and on a device runtime, whose memory host code must not touch. HostStepOps is the
// host's answer and calls owned_slice.h's functions unchanged, so the host path keeps its bits
// and its speed; the device's answer (step_device/device_step_ops.h) runs the same per-element
// functions as kernels, one thread per element or per norm block, and hands back the same bits.
// Not here: the decisions between the steps (skip, global norm, clipping coefficient), which stay
// the loop's; any kernel or runtime.
#pragma once

#include <cstddef>
#include <vector>

#include "step/owned_slice.h"

namespace zt::step {

/// Protocol steps 4-6 on slices whose pointers belong to one memory (host or a device).
template <typename T>
class StepOps {
 public:
  virtual ~StepOps() = default;

  /// Whether any of `count` gradient values is inf or NaN (step 4, the loss scaler's test).
  /// @param g the gradient. @param count elements to look at. @return true on any non-finite value.
  virtual bool any_nonfinite(GradSpan<T> g, std::size_t count) = 0;

  /// Append the norm block sums of the unscaled gradient of `real` elements that start at a block
  /// boundary of their unit (optim/grad_norm.h), in block order, to a host vector.
  /// @param g the gradient. @param real non-padding elements. @param block b (a power of two).
  /// @param inv_scale 1/S. @param sums the block sums so far (appended to).
  virtual void append_norm_block_sums(GradSpan<T> g, std::size_t real, std::size_t block, float inv_scale,
                                      std::vector<float>& sums) = 0;

  /// Unscale, clip, update the FP32 master (or the 16-bit copy with --no-master-weights) and the
  /// optimizer state, refresh the compute copy (steps 5-6).
  /// @param s the slice. @param inv_scale 1/S. @param clip the step's clipping decision.
  /// @param opt the step's optimizer, its state arrays in the slice's memory.
  /// @return how many compute-copy values kept their bits (0 for fp32 precision).
  virtual std::size_t apply_update(const OwnedSlice<T>& s, float inv_scale, const ClipDecision& clip,
                                   const ElementOptimizer& opt) = 0;
};

/// The steps on host memory: owned_slice.h's functions, split over the rank's threads.
template <typename T>
class HostStepOps final : public StepOps<T> {
 public:
  bool any_nonfinite(GradSpan<T> g, std::size_t count) override { return step::any_nonfinite(g, count); }
  void append_norm_block_sums(GradSpan<T> g, std::size_t real, std::size_t block, float inv_scale,
                              std::vector<float>& sums) override {
    step::append_norm_block_sums(g, real, block, inv_scale, sums);
  }
  std::size_t apply_update(const OwnedSlice<T>& s, float inv_scale, const ClipDecision& clip,
                           const ElementOptimizer& opt) override {
    return step::apply_update(s, inv_scale, clip, opt);
  }
};

}  // namespace zt::step
