// train/step_decision.cc — protocol step 4's decision (see step_decision.h).
#include "train/step_decision.h"

#include <cmath>

#include "core/check.h"

namespace zt::train {

LossScaler loss_scaler_for(const RunOptions& c) {
  if (c.precision != model::Precision::fp16 || c.loss_scale == LossScale::none) return LossScaler::none();
  return LossScaler(LossScalerConfig{.dynamic = true,
                                     .initial_scale = static_cast<float>(c.loss_scale_init),
                                     .growth_factor = static_cast<float>(c.loss_scale_growth_factor),
                                     .backoff_factor = static_cast<float>(c.loss_scale_backoff),
                                     .growth_interval = c.loss_scale_growth_interval});
}

StepDecision decide_step(const RunOptions& c, LossScaler& scaler, bool nonfinite,
                         std::span<const float> norm_block_sums, StepRecord& rec) {
  StepDecision d;
  d.apply = scaler.update(nonfinite);
  ZT_CHECK(d.apply || scaler.dynamic(), "step ", rec.step, ": non-finite gradient with --precision ",
           word_of(c.precision), " (no loss scaling to back off); lower --lr");
  const float norm = std::sqrt(combine_norm_blocks(norm_block_sums));
  if (std::isfinite(norm)) rec.grad_norm = norm;
  rec.skipped = !d.apply;
  if (d.apply) {
    d.clip = clip_decision(norm, static_cast<float>(c.clip_grad_norm));
    rec.clipped = d.clip.clipped;
  }
  return d;
}

}  // namespace zt::train
