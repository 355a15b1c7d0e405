// optim/sgd.h — SGD with momentum on one element, and on a flat FP32 span.
//
// Element-wise like Adam (see adam.h), so a shard's update equals the whole's bit for bit.
// PyTorch's torch.optim.SGD with dampening 0:
//   g ← g + λ·p;   b ← μ·b + g   (b starts at 0, so the first step gives b = g exactly)
//   p ← p − η·b              or, with Nesterov,   p ← p − η·(g + μ·b)
// State: the momentum buffer b, FP32 — with the master copy, K = 8 bytes per parameter.
#pragma once

#include <cstddef>

#include "fp/hd.h"

namespace zt {

/// SGD hyper-parameters.
struct SgdConfig {
  double momentum = 0.9;      ///< μ in [0, 1)
  double weight_decay = 0.0;  ///< λ (L2, added to the gradient)
  bool nesterov = false;      ///< Nesterov momentum
};

/// Per-step scalars of one SGD step, rounded to float once.
struct SgdStepScalars {
  float lr = 0;           ///< η
  float momentum = 0;     ///< μ
  float l2 = 0;           ///< λ
  bool nesterov = false;  ///< use g + μ·b as the direction
};

/// The scalars of a step at learning rate lr; zt::Error on bad hyper-parameters.
/// @param config hyper-parameters. @param lr learning rate η. @return the scalars.
SgdStepScalars sgd_step_scalars(const SgdConfig& config, double lr);

/// One element's SGD-momentum update, in place (shared by CPU and CUDA).
/// @param p FP32 master weight. @param g FP32 gradient. @param b momentum buffer.
/// @param s this step's scalars.
ZT_HD void sgd_update_element(float& p, float g, float& b, const SgdStepScalars& s) {
  if (s.l2 != 0.0f) g = g + s.l2 * p;
  b = s.momentum * b + g;
  const float direction = s.nesterov ? g + s.momentum * b : b;
  p = p - s.lr * direction;
}

/// SGD-momentum over a flat span of n elements. @param p master weights. @param g gradients.
/// @param b momentum buffers. @param n element count. @param s this step's scalars.
void sgd_update(float* p, const float* g, float* b, std::size_t n, const SgdStepScalars& s);

}  // namespace zt
