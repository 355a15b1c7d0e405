// plan/print_step.h — zero-plan --print-step: a rank's training step as its program
// (zero/step_program.h), printed one operation per line for a reader.
//
// The program is the one the memory prediction walks, so the live bytes it prints after each
// operation are the predicted arena's (the set-up's allocations first). It is a plan, not a run:
// nothing is allocated or sent.
#pragma once

#include <string>

#include "train/run_options.h"

namespace zt::plan {

/// Rank 0's step (data-parallel, model-parallel and pipeline rank 0) as its program.
/// @param c the settings, after resolve_micro_batch and validate. @return the text: a header
/// naming the rank and the set-up's live bytes, then one line per operation; for a configuration
/// the single-rank reference loop runs, one line saying so.
std::string printed_step(const train::RunOptions& c);

}  // namespace zt::plan
