// train/stall_diagnostic.h — chapter 2's stall metric: how many 16-bit parameters no update moves
// any more, over the last step and over the last min(20, T) steps ("The stall").
//
// Without an FP32 master an update much smaller than a parameter's spacing rounds back to the same
// 16-bit value; this counts how often that happens to the compute copy. It keeps one 16-bit
// snapshot (ledger category `diagnostics`) taken at the start of the window, and compares bit
// patterns — no tolerance — through the loop's ops (step_device/loop_ops.h), so the snapshot and the
// comparison stay where the parameters are. For FP32 compute it holds nothing and reports nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "memory/arena.h"
#include "memory/buffer.h"
#include "step_device/loop_ops.h"
#include "train/memory_plan.h"
#include "train/run_result.h"

namespace zt::train {

/// The stall metric of one run on compute type T.
template <typename T>
class StallDiagnostic {
  static constexpr bool kTracked = !std::is_same_v<T, float>;

 public:
  /// @param arena where the snapshot lives. @param ops the loop's ops on that memory.
  /// @param psi parameters. @param steps the run's T.
  StallDiagnostic(Arena& arena, step::LoopOps<T>& ops, std::size_t psi, int64_t steps)
      : ops_(ops), psi_(psi), steps_(steps), window_(std::min(kFrozenWindowSteps, steps)) {
    if constexpr (kTracked) snapshot_ = make_buffer<T>(arena, psi, category::diagnostics);
  }

  /// Before a step: take the snapshot when the window starts.
  /// @param step the step about to run. @param params the compute copy.
  void before_step(int64_t step, const T* params) {
    if constexpr (kTracked)
      if (step == steps_ - window_ + 1) ops_.copy(snapshot_.data(), params, psi_ * sizeof(T));
  }
  /// After an applied update. @param step the step. @param unchanged parameters whose bits it did
  /// not move.
  void after_update(int64_t step, std::size_t unchanged) {
    if (step == steps_) last_step_ = static_cast<double>(unchanged) / static_cast<double>(psi_);
  }
  /// Fill the run's frozen_* fields (16-bit compute, at least one step). @param params the compute
  /// copy after the last step. @param result the run.
  void report(const T* params, RunResult& result) {
    if constexpr (kTracked) {
      if (steps_ == 0) return;
      const auto unchanged = ops_.count_same_bits(snapshot_.data(), params, psi_);
      result.frozen_fraction = last_step_;
      result.frozen_window_fraction = static_cast<double>(unchanged) / static_cast<double>(psi_);
      result.frozen_window_steps = window_;
    }
  }

 private:
  step::LoopOps<T>& ops_;
  std::size_t psi_;
  int64_t steps_, window_;
  TypedBuffer<T> snapshot_;  // 16-bit copy at the start of the window
  double last_step_ = -1;    // fraction unchanged by the last step (-1: it was skipped)
};

}  // namespace zt::train
