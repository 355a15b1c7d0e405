// train/step_start.h — what every training loop derives first in a step, from the settings alone:
// the step's learning rate and the seed of backward.
//
// Every token's loss seeds backward with S / (global tokens), S the loss scale, so the
// micro-batch gradients add up to S times the gradient of the mean loss over the global batch,
// whichever rank holds which micro-batch. The single-rank reference and the ZeRO engine both call
// this, so the learning rate and the seed are the same bits in both (one division each).
// Not the step itself: forward, backward and the update stay in the loops.
#pragma once

#include <cstdint>

#include "optim/lr_schedule.h"
#include "train/run_options.h"
#include "train/run_result.h"

namespace zt::train {

/// The opening of one optimizer step.
struct StepStart {
  StepRecord rec;        ///< step, loss_scale and lr filled in
  double lr = 0;         ///< the schedule's learning rate at this step
  float tokens = 0;      ///< tokens in the global batch (the loss is their mean)
  float grad_scale = 0;  ///< backward's seed per token: loss_scale / tokens
};

/// The learning-rate schedule of a run, its derived defaults resolved (train_config.h).
/// @param c the settings. @return peak, floor, warmup and total steps.
inline LrSchedule lr_schedule(const RunOptions& c) {
  return LrSchedule{c.lr, c.resolved_min_lr(), c.resolved_warmup_steps(), c.steps};
}

/// Open step `step` of a run. @param c the settings. @param step 1-based step.
/// @param loss_scale the loss scale in force for this step (1 without scaling).
/// @return the record's first fields, the learning rate and the backward seed.
inline StepStart start_step(const RunOptions& c, int64_t step, float loss_scale) {
  StepStart s;
  s.rec.step = step;
  s.rec.loss_scale = loss_scale;
  s.lr = lr_at(lr_schedule(c), step);
  s.rec.lr = static_cast<float>(s.lr);
  s.tokens = static_cast<float>(c.global_batch * c.context);
  s.grad_scale = loss_scale / s.tokens;
  return s;
}

}  // namespace zt::train
