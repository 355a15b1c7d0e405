// optim/loss_scaler.h — dynamic loss scaling for fp16 (and its no-op twin for bf16/fp32).
//
// fp16 gradients underflow: values below 2^-24 become 0. Multiplying the loss by a scale S before
// backward multiplies every gradient by S and lifts them into fp16's range; the FP32 gradient is
// divided by S again (unscale) before the optimizer (Micikevicius et al. 2018). S must be large
// but not so large that a gradient overflows to inf. The dynamic scaler looks for it:
//
//   state: scale S, good_steps g (finite steps since the last change)
//   after a step's gradients are known:
//     some gradient inf/NaN  → SKIP the step (no update, Adam's t does not advance),
//                              S ← max(S · backoff, min_scale), g ← 0
//     all finite             → APPLY the step, g ← g + 1;
//                              if g = growth_interval: S ← min(S · growth, max_scale), g ← 0
//
// With the defaults (2^16, ×2, ×0.5, 2000) S stays a power of two, so scaling and unscaling are
// exact multiplications (no rounding except overflow/underflow). The no-op mode (bf16, fp32)
// keeps S = 1 and never skips: bf16 has fp32's range, so underflow is not its problem.
// Every rank runs the same state machine on the same agreed flag (chapter 6: a max all-reduce of it).
#pragma once

#include <cstddef>
#include <cstdint>

#include "fp/hd.h"

namespace zt {

/// Settings of the dynamic loss scaler (the usual defaults).
struct LossScalerConfig {
  bool dynamic = true;             ///< false: the no-op scaler (scale 1, never skips)
  float initial_scale = 65536;     ///< 2^16
  float growth_factor = 2;         ///< S ← S · growth after growth_interval finite steps
  float backoff_factor = 0.5f;     ///< S ← S · backoff after a non-finite step
  int64_t growth_interval = 2000;  ///< finite steps between growths
  float min_scale = 1;             ///< S never drops below this
  float max_scale = 16777216;      ///< 2^24; S never grows above this
};

/// The scaler's state machine (see the file comment).
class LossScaler {
 public:
  /// @param config settings; zt::Error when they make no sense (e.g. backoff >= 1).
  explicit LossScaler(const LossScalerConfig& config = {});
  /// The no-op scaler for bf16/fp32. @return it.
  static LossScaler none();

  /// The scale S to multiply the loss by now. @return S.
  float scale() const { return scale_; }
  /// 1 / S in float, exact when S is a power of two. @return it.
  float inverse_scale() const { return 1.0f / scale_; }
  /// Finite steps since the last change of S. @return g.
  int64_t good_steps() const { return good_steps_; }
  /// Whether this is the dynamic scaler. @return true unless no-op.
  bool dynamic() const { return config_.dynamic; }

  /// Advance the state machine after a step's gradients are known.
  /// @param found_nonfinite whether any gradient element (on any rank) was inf or NaN.
  /// @return true if the optimizer step is to be applied, false if it is skipped.
  bool update(bool found_nonfinite);

  /// Continue from a saved state (a checkpoint, chapter 14): the scale and the clean-step count that
  /// scale() and good_steps() returned when it was saved. zt::Error for a scale that is not
  /// positive and finite or lies outside [min_scale, max_scale] of a dynamic scaler, a negative
  /// count, or anything but (1, 0) for the no-op scaler.
  /// @param scale S at the save. @param good_steps g at the save.
  void restore(float scale, int64_t good_steps);

 private:
  LossScalerConfig config_;
  float scale_;
  int64_t good_steps_ = 0;
};

/// One gradient element cast to FP32 and unscaled (shared by CPU and CUDA).
/// @param g the (scaled) gradient value in FP32. @param inverse_scale 1/S.
/// @return g / S.
ZT_HD float unscale_element(float g, float inverse_scale) { return g * inverse_scale; }

/// Whether a float is inf or NaN, from its bits (exponent all ones): an integer test, the same on
/// every host and device whatever the floating-point flags. @param x the value.
/// @return true if x is not finite.
ZT_HD bool nonfinite_bits(float x) { return (bit_cast_hd<uint32_t>(x) & 0x7f800000u) == 0x7f800000u; }

/// One element of the unscale + overflow check (the GPU thread's body; the CPU runs any_nonfinite
/// and unscale, which apply the same two functions): the flag is an integer set to 1 when the
/// scaled value is not finite — never cleared, so every writer writes the same value and no
/// float maximum or atomic is needed. @param g the scaled FP32 gradient (unscaled in place).
/// @param inverse_scale 1/S. @param flag set to 1 on inf or NaN.
ZT_HD void unscale_check_element(float& g, float inverse_scale, uint32_t& flag) {
  if (nonfinite_bits(g)) flag = 1;
  g = unscale_element(g, inverse_scale);
}

/// Whether any of n values is inf or NaN. @param x the values. @param n count.
/// @return true if one is not finite.
bool any_nonfinite(const float* x, std::size_t n);

/// g ← g · inverse_scale over n elements. @param g gradients (in place). @param n count.
/// @param inverse_scale 1/S.
void unscale(float* g, std::size_t n, float inverse_scale);

}  // namespace zt
