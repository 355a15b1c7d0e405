// train/run_loop.cc — the steps-and-evaluations loop (see run_loop.h).
#include "train/run_loop.h"

#include <algorithm>
#include <chrono>

namespace zt::train {

namespace {
// The run keeps one StepRecord a step (the summary's per-step records, --verify's comparison):
// the only memory that grows with the length of a run. Reserved up front, it is one block whose
// pages fill as the steps go, 48 bytes a step (bench/long_run/run.py subtracts exactly that when
// it looks for leaks), instead of a vector that doubles and leaves its old blocks behind.
// The reservation is capped so that a huge --steps does not ask for it all at start.
static_assert(sizeof(StepRecord) == 48, "bench/long_run/run.py counts 48 bytes of history a step");
constexpr int64_t kReservedSteps = int64_t{1} << 22;  // 192 MiB of records
}  // namespace

void run_steps(const RunOptions& c, const LoopBody& body, const StepCallback& on_step, RunResult& result,
               int64_t first_step) {
  const int64_t left = std::max<int64_t>(0, c.steps - first_step + 1);
  result.steps.reserve(result.steps.size() + static_cast<std::size_t>(std::min(left, kReservedSteps)));
  double seconds = 0;
  for (int64_t step = first_step; step <= c.steps; ++step) {
    const auto t0 = std::chrono::steady_clock::now();
    result.steps.push_back(body.step(step));
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    result.seconds = seconds;
    result.tokens_per_s =
        seconds > 0 ? static_cast<double>((step - first_step + 1) * c.global_batch * c.context) / seconds : 0;
    // every --eval-every steps and after the last, before the callback (so it can print both)
    if ((c.eval_every > 0 && step % c.eval_every == 0) || step == c.steps)
      if (auto e = body.evaluate(step)) result.evals.push_back(*e);
    if (body.after_step) body.after_step(step);
    if (on_step) on_step(result.steps.back(), result);
  }
  if (c.steps == 0)
    if (auto e = body.evaluate(0)) result.evals.push_back(*e);
}

}  // namespace zt::train
