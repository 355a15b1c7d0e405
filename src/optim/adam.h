// optim/adam.h — Adam and AdamW on one element, and on a flat FP32 span.
//
// The update is element-wise: element i's new (p, m, v) depend only on element i's (p, g, m, v)
// and on per-step scalars computed once on the host. So a rank that holds the shard [a, b) of
// the master weights runs exactly the same arithmetic on each of its elements as a single device
// running over everything: sharded and unsharded optimizer steps agree bit for bit (chapter 6).
// The scalar body is ZT_HD so that a CUDA kernel calls the very same function.
//
// Adam (Kingma & Ba 2015, Alg. 1) with bias correction, in the order PyTorch's torch.optim.Adam
// uses (so its values can be compared):
//   Adam only (L2 decay):     g ← g + λ·p
//   AdamW only (decoupled):   p ← p · (1 − η·λ)           (Loshchilov & Hutter 2019)
//   m ← β1·m + (1 − β1)·g;    v ← β2·v + (1 − β2)·(g·g)
//   p ← p − (η / (1 − β1^t)) · m / (√v / √(1 − β2^t) + ε)
// η is the learning rate, t the step count from 1. This is not a fused multi-tensor optimizer:
// callers loop over their flat spans.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "fp/hd.h"

namespace zt {

/// Adam/AdamW hyper-parameters (PyTorch defaults except weight decay, which is 0.01 for AdamW
/// there; set it explicitly).
struct AdamConfig {
  double beta1 = 0.9;         ///< first-moment decay β1 in [0, 1)
  double beta2 = 0.999;       ///< second-moment decay β2 in [0, 1)
  double eps = 1e-8;          ///< ε added to the denominator
  double weight_decay = 0.0;  ///< λ
  bool decoupled = true;      ///< true: AdamW (decoupled decay); false: Adam (L2 in the gradient)
};

/// Per-step scalars of one Adam step, rounded to float once on the host and shared by all
/// elements (and all ranks): the kernel does float arithmetic only.
struct AdamStepScalars {
  float beta1 = 0;                  ///< β1
  float one_minus_beta1 = 0;        ///< 1 − β1, rounded once from double
  float beta2 = 0;                  ///< β2
  float one_minus_beta2 = 0;        ///< 1 − β2, rounded once from double
  float step_size = 0;              ///< η / (1 − β1^t)
  float sqrt_bias_correction2 = 0;  ///< √(1 − β2^t)
  float eps = 0;                    ///< ε
  float l2 = 0;                     ///< λ for Adam, 0 for AdamW
  float decay_factor = 1;           ///< 1 − η·λ for AdamW, 1 for Adam
};

/// β^t by binary exponentiation in double: only IEEE multiplications, no libm pow, so every
/// platform gets the same bits. @param beta the base. @param t the exponent (>= 0).
/// @return β^t.
double power_by_squaring(double beta, int64_t t);

/// The scalars of step t (from 1) at learning rate lr; zt::Error on bad hyper-parameters.
/// @param config hyper-parameters. @param lr learning rate η for this step. @param step t >= 1.
/// @return the scalars.
AdamStepScalars adam_step_scalars(const AdamConfig& config, double lr, int64_t step);

/// One element's Adam/AdamW update, in place. The shared body of the CPU loop and the CUDA kernel.
/// @param p FP32 master weight. @param g FP32 gradient (unscaled, after clipping).
/// @param m first moment. @param v second moment. @param s this step's scalars.
ZT_HD void adam_update_element(float& p, float g, float& m, float& v, const AdamStepScalars& s) {
  if (s.l2 != 0.0f) g = g + s.l2 * p;                  // Adam: L2 term in the gradient
  if (s.decay_factor != 1.0f) p = p * s.decay_factor;  // AdamW: decay the weight itself
  m = s.beta1 * m + s.one_minus_beta1 * g;
  v = s.beta2 * v + s.one_minus_beta2 * (g * g);
  const float denom = std::sqrt(v) / s.sqrt_bias_correction2 + s.eps;
  p = p - s.step_size * (m / denom);
}

/// Adam/AdamW over a flat span of n elements (a whole buffer or one rank's shard).
/// @param p master weights. @param g gradients. @param m first moments. @param v second moments.
/// @param n element count. @param s this step's scalars.
void adam_update(float* p, const float* g, float* m, float* v, std::size_t n, const AdamStepScalars& s);

}  // namespace zt
