// step/element_optimizer.h — the optimizer as one function per element, with this step's scalars.
//
// The ZT_HD bodies of optim/adam.h and optim/sgd.h with the step's scalars computed once. The
// single-rank reference loop and the ZeRO engine both update through it; the state arrays are
// indexed by the caller's own element index, so a ZeRO rank's shard of m, v (or momentum) sees
// exactly the updates the reference applies to those elements. Not a second optimizer.
#pragma once

#include <cstddef>

#include "fp/hd.h"
#include "optim/adam.h"
#include "optim/sgd.h"

namespace zt::step {

/// Per-element optimizer for one step.
struct ElementOptimizer {
  bool adam = true;              ///< Adam/AdamW, else SGD with momentum
  AdamStepScalars adam_scalars;  ///< this step's Adam scalars
  SgdStepScalars sgd_scalars;    ///< this step's SGD scalars
  float* state = nullptr;        ///< adam: m[n] then v[n]; sgd: momentum[n]
  std::size_t n = 0;             ///< elements of state per moment

  /// Update one element. @param p parameter (FP32, in place). @param g unscaled, clipped
  /// gradient. @param i the element's index in the state arrays.
  /// ZT_HD: the device's update kernel (step_device/step_threads.h) calls this same function.
  ZT_HD void update(float& p, float g, std::size_t i) const {
    if (adam)
      adam_update_element(p, g, state[i], state[n + i], adam_scalars);
    else
      sgd_update_element(p, g, state[i], sgd_scalars);
  }
};

/// Which optimizer a run uses and its hyper-parameters (train/train_config.h fills it from the
/// flags; this module knows nothing of flags).
struct OptimizerSettings {
  bool adam = true;        ///< Adam/AdamW, else SGD with momentum
  AdamConfig adam_config;  ///< Adam's betas, epsilon, weight decay (decoupled: AdamW)
  SgdConfig sgd_config;    ///< SGD's momentum and weight decay
};

/// The optimizer of a run at one step.
/// @param s the optimizer and its hyper-parameters. @param lr this step's learning rate.
/// @param step optimizer steps applied so far, this one included (Adam's bias correction).
/// @param state the state arrays. @param n elements per moment. @return the per-element optimizer.
inline ElementOptimizer element_optimizer(const OptimizerSettings& s, double lr, int64_t step, float* state,
                                          std::size_t n) {
  ElementOptimizer opt;
  opt.adam = s.adam;
  opt.state = state;
  opt.n = n;
  if (opt.adam)
    opt.adam_scalars = adam_step_scalars(s.adam_config, lr, step);
  else
    opt.sgd_scalars = sgd_step_scalars(s.sgd_config, lr);
  return opt;
}

}  // namespace zt::step
