// step_device/step_ops.h — protocol steps 4-6 (the non-finite check, the norm's block sums,
// unscale + clip + update + refresh) on a runtime (device/runtime.h), so a loop makes them without
// knowing where the slice's bytes live: a device's memory, which host code never touches, or the
// host's (device/host_runtime.h: the same item ops run at once, split over the rank's CPU pool).
// Either way each element is the host loop's own ZT_HD functions (step/owned_slice.h), so the bits
// are the same everywhere.
//
// Each call enqueues item kernels (step_threads.h) on one stream and, where it has an answer for
// the host, copies that answer into pinned memory and synchronises the stream: the non-finite
// flag (one integer, zeroed by a copy before the kernel), the block sums (appended in block
// order), the per-group counts of kept 16-bit values (summed on the host). Every launch names the
// device bytes it reads and writes, so the emulated device's race checker sees all of them. The
// caller orders its own work on other streams before these calls (an event on this stream).
// Not here: the decisions between the steps, the state's placement, any allocation of the
// slices themselves; this object allocates only its few bytes of scratch, grown on demand.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "device/runtime.h"
#include "fp/bf16.h"
#include "fp/fp16.h"
#include "step/owned_slice.h"

namespace zt::step {

/// Protocol steps 4-6 on a runtime, all work on one stream (see the file comment).
template <typename T>
class StepOps final {
 public:
  /// @param runtime the device (outlives this object). @param stream where the work runs.
  StepOps(device::Runtime& runtime, device::Stream stream);
  /// Frees the scratch (the runtime waits for queued work first).
  ~StepOps();
  StepOps(const StepOps&) = delete;
  StepOps& operator=(const StepOps&) = delete;

  /// Flag zeroed, one thread per element, flag read back (synchronises the stream).
  /// @param g the gradient (device memory). @param count elements. @return true on inf or NaN.
  bool any_nonfinite(GradSpan<T> g, std::size_t count);

  /// One thread per block, sums read back (synchronises the stream) and appended in block order.
  /// @param g the gradient (device memory). @param real non-padding elements. @param block b.
  /// @param inv_scale 1/S. @param sums appended to (host memory).
  void append_norm_block_sums(GradSpan<T> g, std::size_t real, std::size_t block, float inv_scale,
                              std::vector<float>& sums);

  /// One thread per element; for 16-bit T the kept flags are counted per group on the device and
  /// the counts read back (synchronises the stream); for fp32 nothing is read back.
  /// @param s the slice (device memory). @param inv_scale 1/S. @param clip the decision.
  /// @param opt the optimizer, its state in device memory. @return values that kept their bits.
  std::size_t apply_update(const OwnedSlice<T>& s, float inv_scale, const ClipDecision& clip,
                           const ElementOptimizer& opt);

 private:
  device::Runtime& rt_;
  device::Stream stream_;
  // device scratch, each with its pinned read-back where it has one
  device::Room flag_, flag_back_{.pinned = true};    // one uint32; the pinned side holds 0 (upload) and the answer
  device::Room sums_, sums_back_{.pinned = true};    // block sums
  device::Room kept_;                                // one uint8 per element
  device::Room count_, count_back_{.pinned = true};  // one uint32 per group of kept flags
};

extern template class StepOps<float>;
extern template class StepOps<fp16>;
extern template class StepOps<bf16>;

}  // namespace zt::step
