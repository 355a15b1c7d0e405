// optim/optimizers.cc — host-side scalars and CPU loops of Adam/AdamW and SGD (see adam.h, sgd.h).
#include <cmath>

#include "core/check.h"
#include "core/cpu_pool.h"
#include "optim/adam.h"
#include "optim/sgd.h"

namespace zt {

double power_by_squaring(double beta, int64_t t) {
  ZT_CHECK(t >= 0, "power_by_squaring: negative exponent ", t);
  double result = 1.0, base = beta;
  for (; t > 0; t >>= 1) {
    if (t & 1) result *= base;
    base *= base;
  }
  return result;
}

AdamStepScalars adam_step_scalars(const AdamConfig& c, double lr, int64_t step) {
  ZT_CHECK(step >= 1, "Adam: the step count starts at 1, got ", step);
  ZT_CHECK(c.beta1 >= 0 && c.beta1 < 1 && c.beta2 >= 0 && c.beta2 < 1, "Adam: betas must lie in [0, 1), got ", c.beta1,
           " and ", c.beta2);
  ZT_CHECK(c.eps > 0 && c.weight_decay >= 0 && lr >= 0 && std::isfinite(lr),
           "Adam: eps must be > 0, weight decay and lr >= 0 (eps ", c.eps, ", weight decay ", c.weight_decay, ", lr ",
           lr, ")");
  AdamStepScalars s;
  s.beta1 = static_cast<float>(c.beta1);
  s.beta2 = static_cast<float>(c.beta2);
  s.one_minus_beta1 = static_cast<float>(1.0 - c.beta1);
  s.one_minus_beta2 = static_cast<float>(1.0 - c.beta2);
  s.step_size = static_cast<float>(lr / (1.0 - power_by_squaring(c.beta1, step)));
  s.sqrt_bias_correction2 = static_cast<float>(std::sqrt(1.0 - power_by_squaring(c.beta2, step)));
  s.eps = static_cast<float>(c.eps);
  s.l2 = c.decoupled ? 0.0f : static_cast<float>(c.weight_decay);
  s.decay_factor = c.decoupled ? static_cast<float>(1.0 - lr * c.weight_decay) : 1.0f;
  return s;
}

void adam_update(float* p, const float* g, float* m, float* v, std::size_t n, const AdamStepScalars& s) {
  // element-wise: the rank's threads take blocks of elements (core/cpu_pool.h), the bits unchanged
  parallel_for(static_cast<int64_t>(n), kCpuElementGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) adam_update_element(p[i], g[i], m[i], v[i], s);
  });
}

SgdStepScalars sgd_step_scalars(const SgdConfig& c, double lr) {
  ZT_CHECK(c.momentum >= 0 && c.momentum < 1, "SGD: momentum must lie in [0, 1), got ", c.momentum);
  ZT_CHECK(c.weight_decay >= 0 && lr >= 0 && std::isfinite(lr), "SGD: weight decay and lr must be >= 0 (",
           c.weight_decay, ", ", lr, ")");
  return SgdStepScalars{static_cast<float>(lr), static_cast<float>(c.momentum), static_cast<float>(c.weight_decay),
                        c.nesterov};
}

void sgd_update(float* p, const float* g, float* b, std::size_t n, const SgdStepScalars& s) {
  parallel_for(static_cast<int64_t>(n), kCpuElementGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) sgd_update_element(p[i], g[i], b[i], s);
  });
}

}  // namespace zt
