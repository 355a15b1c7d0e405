// optim/lr_schedule.h — linear warmup, then cosine decay to a floor.
//
// For step t counted from 1, warmup W >= 0 steps, total T steps, peak η_max, floor η_min:
//   t <= W:        η(t) = η_max · t / W                                   (linear warmup)
//   W < t <= T:    η(t) = η_min + ½ (η_max − η_min) (1 + cos(π (t − W) / (T − W)))
//   t > T:         η(t) = η_min
// so η(W) = η_max, η(T) = η_min and the midpoint of the decay is (η_max + η_min) / 2 (Loshchilov &
// Hutter 2017, SGDR, without restarts). T = 0 means no decay: η_max after warmup.
// Computed in double and rounded to float by the optimizer's scalars; cos comes from libm, the
// same binary on every rank, so every rank gets the same bits.
#pragma once

#include <cstdint>

namespace zt {

/// Warmup + cosine schedule settings.
struct LrSchedule {
  double max_lr = 1e-3;       ///< η_max, reached at the end of warmup
  double min_lr = 0.0;        ///< η_min, reached at total_steps
  int64_t warmup_steps = 0;   ///< W
  int64_t total_steps = 0;    ///< T (0: constant η_max after warmup)
};

/// Check the settings (zt::Error when 0 <= min <= max, 0 <= W, and T = 0 or W <= T do not hold).
/// @param s the settings.
void validate(const LrSchedule& s);

/// The learning rate of step t. @param s the settings. @param step t >= 1. @return η(t).
double lr_at(const LrSchedule& s, int64_t step);

}  // namespace zt
