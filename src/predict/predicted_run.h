// predict/predicted_run.h — zero-train's job on one rank: the ZeRO engine, set up and checked by
// its own predictions.
//
// The engine (zero/train_zero.h) only trains and measures. This is where the planner meets it:
// before the run, the M_D regions are sized from the plan's replayed gradient allocations
// (predict/zero_trace.h); after it, every measured counter and ledger peak gets its prediction
// beside it (predict/zero_memory.h, predict/zero_comm.h), which the summary prints and the tests
// compare. Not a launcher (src/launch is), and it adds nothing to what the engine does.
#pragma once

#include "data/dataset.h"
#include "train/run_options.h"
#include "train/run_result.h"
#include "zero/train_zero.h"

namespace zt::predict {

/// Add to a rank's result every prediction of its plan: collective traffic per group, host-tier
/// transfers, file I/O, and the rank's memory (ledger categories, model states, high-water mark;
/// the host tier's categories when it has one).
/// @param r the engine's result for one rank (its dp_rank, mp_rank name the plan).
/// @param config the run's settings. @param data the dataset (its vocabulary, its held-out split).
void add_predictions(zero::ZeroRunResult& r, const train::RunOptions& config, const Dataset& data);

/// Train on this rank (zero::train_zero's contract), with the M_D regions of this plan and every
/// prediction added to the result.
/// @param config settings. @param data the dataset. @param groups this rank's groups.
/// @param on_step called after each step (may be empty). @param artifacts dumps (may be null).
/// @return the records, measured and predicted.
zero::ZeroRunResult train_zero(const train::RunOptions& config, const Dataset& data, zero::RankGroups groups,
                               const train::StepCallback& on_step, train::RunArtifacts* artifacts);

/// Without model parallelism: `collective` is the data-parallel group.
/// @param config settings (mp_size 1). @param data the dataset. @param collective the group.
/// @param on_step called after each step (may be empty). @param artifacts as above (may be null).
/// @return the records.
inline zero::ZeroRunResult train_zero(const train::RunOptions& config, const Dataset& data, Collective& collective,
                                      const train::StepCallback& on_step, train::RunArtifacts* artifacts) {
  return train_zero(config, data, zero::RankGroups{collective, nullptr}, on_step, artifacts);
}

}  // namespace zt::predict
