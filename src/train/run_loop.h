// train/run_loop.h — the loop around a run's steps, shared by the single-rank reference and the
// ZeRO engine: steps 1..T, each timed; held-out evaluations every --eval-every steps and after the
// last (once, at step 0, for --steps 0); the progress callback after each step.
//
// A loop supplies what one step and one evaluation are; this file owns the order in which they
// happen and the speed figures, so both loops evaluate at the same steps and report speed the same
// way. The time of evaluations is not in `seconds` (it measures training only). Not a scheduler.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "train/run_options.h"
#include "train/run_result.h"

namespace zt::train {

/// Called after every step (for a progress line). @param record the step just done.
/// @param result the run so far (memory is filled at the end only).
using StepCallback = std::function<void(const StepRecord& record, const RunResult& result)>;

/// What a loop does at each point of a run.
struct LoopBody {
  /// One optimizer step. @return its record.
  std::function<StepRecord(int64_t step)> step;
  /// One held-out evaluation after `step` steps. @return it, or nothing (no held-out split).
  std::function<std::optional<EvalRecord>(int64_t step)> evaluate;
  /// After a step and its evaluation: write a checkpoint if one is due (may be empty).
  std::function<void(int64_t step)> after_step;
};

/// Run steps first_step..config.steps of `body` into result.steps / evals / seconds /
/// tokens_per_s (a resumed run starts after its checkpoint's step; speed counts this process's
/// steps only).
/// @param c the settings. @param body the loop's step, evaluation and after-step hook.
/// @param on_step called after each step, after its evaluation and checkpoint (may be empty).
/// @param result filled in. @param first_step the first step to run (1 unless resumed).
void run_steps(const RunOptions& c, const LoopBody& body, const StepCallback& on_step, RunResult& result,
               int64_t first_step = 1);

}  // namespace zt::train
