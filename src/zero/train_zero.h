// zero/train_zero.h — data-parallel training with ZeRO stages 0-3 on one rank of a Collective.
//
// One step engine, parameterised by the stage's ShardSpec (S_p, S_g, S_o), runs the reference
// loop's arithmetic (train/single_rank.h) on the rank's part of the flat padded units
// (zero/layout.h). With ReduceMode::deterministic, FP32 reduction and one micro-batch per rank
// (or the schedule conditions of chapter 5: --grad-sync step with A a power of two,
// --grad-sync micro-batch with N a power of two) the FP32 master weights and every step's loss,
// grad_norm, loss_scale and skipped equal the single-rank reference bit for bit.
// Held-out evaluations run at the reference's steps, their rounds split over the ranks
// (zero/heldout_eval.h), and equal the reference's bit for bit whenever the weights do.
// Every rank calls train_zero with the same config; it is not a launcher (src/launch is).
#pragma once

#include "collective/collective.h"
#include "collective/stats.h"
#include "data/dataset.h"
#include "train/run_result.h"
#include "train/single_rank.h"
#include "train/train_config.h"
#include "zero/config_check.h"
#include "zero/timeline.h"

namespace zt::zero {

/// What one rank reports besides the usual run records.
struct ZeroRunResult {
  train::RunResult run;                 ///< steps and evals (identical on every rank), this rank's memory, speed
  CommStats comm_total;                 ///< this rank's collective counters over all training steps (not evaluations)
  CommStats comm_per_step;              ///< the counters of the last step alone
  CommStats comm_predicted_per_step;    ///< closed form of one applied step (zero/zero_comm.h)
  std::vector<TimelineEvent> timeline;  ///< compute and blocked spans (with config.trace set)
};

/// Train on this rank. Every rank of `collective` must call it with an identical config
/// (config.world_size == collective.size(); a differing config is detected and reported).
/// @param config validated settings (stage, grad sync, buckets, ...).
/// @param data the dataset (same on every rank).
/// @param collective this rank's group; its reduce mode decides the reduction order.
/// @param on_step called after each step (may be empty).
/// @param artifacts filled for the dump flags set in config; final_params and step1_grad are
/// gathered in canonical order with padding stripped, on every rank (may be null).
/// @return the records.
ZeroRunResult train_zero(const train::TrainConfig& config, const Dataset& data, Collective& collective,
                         const train::StepCallback& on_step, train::RunArtifacts* artifacts);

}  // namespace zt::zero
