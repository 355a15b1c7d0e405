// train/step_decision.h — what a step does with its gradient, decided once from two facts: is any
// element non-finite, and what are the norm's block sums (protocol step 4, chapter 2).
//
//   non-finite → the loss scaler backs off and the step is skipped (fp16), or the run fails
//                (no scaler to back off: fp32/bf16)
//   finite     → the norm is the canonical tree over the block sums, clipping compares it with
//                --clip-grad-norm, and the update is applied
//
// The single-rank reference and every ZeRO stage call this with the same two facts — a ZeRO rank
// after agreeing on the first and gathering the second — so the decision (skip, scale, norm, clip)
// is the same bits everywhere. It touches no gradient; the update itself is owned_slice.h.
#pragma once

#include <cstdint>
#include <span>

#include "optim/grad_norm.h"
#include "optim/loss_scaler.h"
#include "train/run_options.h"
#include "train/run_result.h"

namespace zt::train {

/// The step's decision.
struct StepDecision {
  bool apply = true;  ///< false: skip the update (the scaler has backed off)
  ClipDecision clip;  ///< norm and clipping coefficient
};

/// Decide step `rec.step` and record it in `rec` (grad_norm when finite, skipped, clipped).
/// @param c the settings (clip threshold, precision for the error text).
/// @param scaler the run's loss scaler (updated: backoff or growth count).
/// @param nonfinite whether any element of the step's summed gradient is inf/NaN, on any rank.
/// @param norm_block_sums the block sums of the unscaled gradient in canonical order.
/// @param rec the step's record (loss_scale is the S this step used).
/// @return the decision; zt::Error for a non-finite gradient without loss scaling.
/// The loss scaler a run's settings ask for: dynamic for fp16, the no-op scaler otherwise.
/// Every loop (single-rank and sharded) builds its scaler here, so they step it identically.
/// @param config the settings. @return the scaler in its initial state.
LossScaler loss_scaler_for(const RunOptions& config);

StepDecision decide_step(const RunOptions& c, LossScaler& scaler, bool nonfinite,
                         std::span<const float> norm_block_sums, StepRecord& rec);

}  // namespace zt::train
