// plan/print_step.cc — zero-plan --print-step (see print_step.h).
#include "plan/print_step.h"

#include "plan/rank_prediction.h"
#include "predict/zero_memory.h"
#include "zero/step_program.h"
#include "zero/zero_plan.h"

namespace zt::plan {

std::string printed_step(const train::RunOptions& c) {
  if (uses_reference_loop(c))
    return "one rank at stage 0 runs the single-rank reference loop (reference/single_rank.cc), not a ZeRO "
           "step; give --stage 1-3 or --world-size N to see one\n";
  const zero::ZeroPlan p = zero::make_zero_plan(c, resolve_vocab(c), 0, 0, 0);
  std::size_t live = 0;  // the set-up's allocations, alive through the step
  for (const auto& a : predict::setup_allocations(p)) live += a.bytes;
  const zero::StepProgram step = zero::step_program(p, c.overlap);
  std::string out = "step of rank 0: " + std::to_string(step.ops.size()) + " operations, " +
                    std::to_string(step.buffers.size()) +
                    " buffers; live at the start (set-up): " + std::to_string(live) + " B\n";
  out += "    #  operation                      moves (B) / allocates (+) / frees (-)                 live bytes\n";
  return out + zero::print_program(step, live);
}

}  // namespace zt::plan
