// train/run_loop.cc — the steps-and-evaluations loop (see run_loop.h).
#include "train/run_loop.h"

#include <chrono>

namespace zt::train {

void run_steps(const TrainConfig& c, const LoopBody& body, const StepCallback& on_step, RunResult& result,
               int64_t first_step) {
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
