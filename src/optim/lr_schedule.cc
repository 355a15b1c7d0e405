// optim/lr_schedule.cc — warmup + cosine (formula in lr_schedule.h).
#include "optim/lr_schedule.h"

#include <cmath>
#include <numbers>

#include "core/check.h"

namespace zt {

void validate(const LrSchedule& s) {
  ZT_CHECK(std::isfinite(s.max_lr) && s.min_lr >= 0 && s.min_lr <= s.max_lr,
           "lr schedule: need 0 <= min lr <= max lr (", s.min_lr, ", ", s.max_lr, ")");
  ZT_CHECK(s.warmup_steps >= 0 && s.total_steps >= 0, "lr schedule: negative step count");
}

double lr_at(const LrSchedule& s, int64_t step) {
  validate(s);
  ZT_CHECK(step >= 1, "lr schedule: steps count from 1, got ", step);
  if (step <= s.warmup_steps) return s.max_lr * static_cast<double>(step) / static_cast<double>(s.warmup_steps);
  if (s.total_steps == 0) return s.max_lr;
  if (step >= s.total_steps) return s.min_lr;
  const double progress =
      static_cast<double>(step - s.warmup_steps) / static_cast<double>(s.total_steps - s.warmup_steps);
  return s.min_lr + 0.5 * (s.max_lr - s.min_lr) * (1.0 + std::cos(std::numbers::pi * progress));
}

}  // namespace zt
