// optim/lr_schedule.h — linear warmup, then cosine decay to a floor.
//
// For step t counted from 1, warmup W >= 0 steps, total T steps, peak η_max, floor η_min:
//   t <= W:        η(t) = η_max · t / W                                   (linear warmup)
//   W < t <= T:    η(t) = η_min + ½ (η_max − η_min) (1 + cos(π (t − W) / (T − W)))
//   t > T:         η(t) = η_min
// so η(W) = η_max, η(T) = η_min and the midpoint of the decay is (η_max + η_min) / 2 (Loshchilov &
// Hutter 2017, SGDR, without restarts). T = 0 means no decay: η_max after warmup.
// A warmup longer than the run (W > T) is allowed: the run ends inside the warmup, at
// η_max · T / W, and never reaches the peak (the summary says so). Only η_min > η_max is refused.
// Computed in double and rounded to float by the optimizer's scalars; cos comes from libm, the
// same binary on every rank, so every rank gets the same bits.
#pragma once

#include <cstdint>

namespace zt {

/// Warmup + cosine schedule settings.
struct LrSchedule {
  double max_lr = 1e-3;      ///< η_max, reached at the end of warmup
  double min_lr = 0.0;       ///< η_min, reached at total_steps
  int64_t warmup_steps = 0;  ///< W
  int64_t total_steps = 0;   ///< T (0: constant η_max after warmup)
};

/// Check the settings (zt::Error unless 0 <= min <= max, W >= 0 and T >= 0).
/// @param s the settings.
void validate(const LrSchedule& s);

/// The learning rate of step t. @param s the settings. @param step t >= 1. @return η(t).
double lr_at(const LrSchedule& s, int64_t step);

/// Whether a run of the schedule's T steps reaches η_max (false when the warmup outlasts it).
/// @param s the settings. @return W <= T (or T = 0, which never stops).
inline bool reaches_peak(const LrSchedule& s) { return s.total_steps == 0 || s.warmup_steps <= s.total_steps; }

}  // namespace zt
