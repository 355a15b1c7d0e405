// optim/loss_scaler.cc — the loss-scale state machine (see loss_scaler.h).
#include "optim/loss_scaler.h"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "core/check.h"
#include "core/cpu_pool.h"

namespace zt {

LossScaler::LossScaler(const LossScalerConfig& c) : config_(c), scale_(c.initial_scale) {
  if (!c.dynamic) {
    scale_ = 1.0f;
    return;
  }
  ZT_CHECK(std::isfinite(c.initial_scale) && c.initial_scale > 0, "loss scale: initial scale ", c.initial_scale,
           " must be positive and finite");
  ZT_CHECK(c.growth_factor > 1, "loss scale: growth factor ", c.growth_factor, " must be > 1");
  ZT_CHECK(c.backoff_factor > 0 && c.backoff_factor < 1, "loss scale: backoff factor ", c.backoff_factor,
           " must lie in (0, 1)");
  ZT_CHECK(c.growth_interval >= 1, "loss scale: growth interval ", c.growth_interval, " must be >= 1");
  ZT_CHECK(
      c.min_scale > 0 && c.min_scale <= c.initial_scale && c.initial_scale <= c.max_scale && std::isfinite(c.max_scale),
      "loss scale: need 0 < min_scale <= initial_scale <= max_scale < inf (", c.min_scale, ", ", c.initial_scale, ", ",
      c.max_scale, ")");
}

LossScaler LossScaler::none() {
  LossScalerConfig c;
  c.dynamic = false;
  return LossScaler(c);
}

bool LossScaler::update(bool found_nonfinite) {
  if (!config_.dynamic) return true;
  if (found_nonfinite) {
    scale_ = std::max(scale_ * config_.backoff_factor, config_.min_scale);
    good_steps_ = 0;
    return false;
  }
  if (++good_steps_ == config_.growth_interval) {
    scale_ = std::min(scale_ * config_.growth_factor, config_.max_scale);
    good_steps_ = 0;
  }
  return true;
}

bool any_nonfinite(const float* x, std::size_t n) {
  // an OR of per-element flags: any split of the elements gives the same answer
  std::atomic<bool> bad{false};
  parallel_for(static_cast<int64_t>(n), kCpuElementGrain, [&](int64_t lo, int64_t hi) {
    bool part = false;
    for (int64_t i = lo; i < hi; ++i) part |= nonfinite_bits(x[i]);
    if (part) bad.store(true, std::memory_order_relaxed);
  });
  return bad.load(std::memory_order_relaxed);
}

void unscale(float* g, std::size_t n, float inverse_scale) {
  parallel_for(static_cast<int64_t>(n), kCpuElementGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) g[i] = unscale_element(g[i], inverse_scale);
  });
}

void LossScaler::restore(float scale, int64_t good_steps) {
  ZT_CHECK(std::isfinite(scale) && scale > 0 && good_steps >= 0, "loss scaler: cannot restore scale ", scale, " after ",
           good_steps, " clean steps");
  if (!config_.dynamic)
    ZT_CHECK(scale == 1.0f && good_steps == 0, "loss scaler: a run without loss scaling cannot continue from scale ",
             scale);
  else
    ZT_CHECK(scale >= config_.min_scale && scale <= config_.max_scale, "loss scaler: scale ", scale, " lies outside [",
             config_.min_scale, ", ", config_.max_scale, "]");
  scale_ = scale;
  good_steps_ = good_steps;
}

}  // namespace zt
