// zero/train_zero.h — data-parallel training with ZeRO stages 0-3 on one rank of a Collective.
//
// One step engine, parameterised by the stage's ShardSpec (S_p, S_g, S_o), runs the reference
// loop's arithmetic (reference/single_rank.h, its oracle) on the rank's part of the flat padded units
// (zero/layout.h). With ReduceMode::deterministic, FP32 reduction and one micro-batch per rank
// (or the schedule conditions of chapter 6: --grad-sync step with A a power of two,
// --grad-sync micro-batch with N a power of two) the FP32 master weights and every step's loss,
// grad_norm, loss_scale and skipped equal the single-rank reference bit for bit.
// Held-out evaluations run at the reference's steps, their rounds split over the ranks
// (zero/heldout_eval.h), and equal the reference's bit for bit whenever the weights do.
// Every rank calls train_zero with the same config; it is not a launcher (src/launch is).
#pragma once

#include "collective/collective.h"
#include "collective/hybrid_group.h"
#include "collective/staged_groups.h"
#include "collective/stats.h"
#include "data/dataset.h"
#include "memory/arena.h"
#include "offload/transfer_thread.h"
#include "train/run_loop.h"
#include "train/run_options.h"
#include "train/run_result.h"
#include "train/step_decision.h"
#include "zero/config_check.h"
#include "zero/step_counters.h"
#include "zero/timeline.h"
#include "zero_r/allocation_replay.h"

namespace zt::zero {

/// One group's collective counters.
struct GroupComm {
  CommStats total;               ///< over all training steps (not evaluations)
  CommStats per_step;            ///< the last step alone
  CommStats predicted_per_step;  ///< closed form of one applied step (predict/zero_comm.h)
};

/// What one rank reports besides the usual run records.
struct ZeroRunResult {
  train::RunResult run;               ///< steps and evals (identical on every rank), this rank's memory, speed
  CommStats comm_total;               ///< this rank's collective counters over all training steps, both groups
  CommStats comm_per_step;            ///< the counters of the last step alone, both groups
  CommStats comm_predicted_per_step;  ///< closed form of one applied step, both groups
  GroupComm dp;                       ///< the data-parallel group's share
  GroupComm mp;                       ///< the model-parallel group's share (zero without model parallelism)
  /// Hybrid sharding: dp's share across shard groups (the replica groups' all-reduces); the rest
  /// of dp but dp_whole stays inside the shard groups. Zero otherwise.
  GroupComm dp_replica;
  GroupComm dp_whole;                      ///< hybrid sharding: dp's share over all N_d ranks at once (the loss sums)
  GroupComm pp;                            ///< the pipeline group's share (zero without a pipeline)
  offload::TransferStats transfers_total;  ///< P_a+cpu, ZeRO-Offload: host-tier transfers over all training steps
  offload::TransferStats transfers_per_step;            ///< the last step's
  offload::TransferStats transfers_predicted_per_step;  ///< closed form of one step (bytes and calls)
  offload::TransferStats file_io_total;               ///< --offload-optimizer file:DIR: file I/O of all training steps
  offload::TransferStats file_io_per_step;            ///< the last step's
  offload::TransferStats file_io_predicted_per_step;  ///< closed form of one applied step (bytes and calls)
  int dp_rank = 0;                                    ///< this rank in its data-parallel group
  int mp_rank = 0;                                    ///< this rank in its model-parallel group
  int pp_rank = 0;                                    ///< this rank's pipeline stage
  std::vector<TimelineEvent> timeline;                ///< compute and blocked spans (with config.trace set)
  std::vector<ArenaEvent> arena_trace;                ///< every allocation and release (with config.memory_trace set)

  /// Record the measured counters. @param last the last step's. @param training every training step's.
  void set_counters(const StepCounters& last, const StepCounters& training) {
    dp.per_step = last.dp, dp.total = training.dp;
    dp_replica.per_step = last.dp_replica, dp_replica.total = training.dp_replica;
    dp_whole.per_step = last.dp_whole, dp_whole.total = training.dp_whole;
    pp.per_step = last.pp, pp.total = training.pp;
    mp.per_step = last.mp, mp.total = training.mp;
    comm_per_step = last.dp + last.mp, comm_total = training.dp + training.mp;
    transfers_per_step = last.transfers, transfers_total = training.transfers;
    file_io_per_step = last.file_io, file_io_total = training.file_io;
    run.device_copies_per_step = last.device, run.device_copies_total = training.device;
  }
};

/// The groups one rank trains in (collective/grid.h builds them from the world).
struct RankGroups {
  Collective& dp;            ///< its data-parallel group (N_d ranks): ZeRO shards over it
  Collective* mp = nullptr;  ///< its model-parallel group (N_m ranks), null when N_m = 1
  /// With hybrid sharding (--shard-group G < N_d): the data-parallel group seen as its shard group
  /// of G ranks with two-level reductions (collective/hybrid_group.h). ZeRO shards over it; the
  /// loss still combines all N_d ranks' micro-batches (over its whole(), which is `dp`). Null:
  /// ZeRO shards over `dp`.
  HybridGroup* shards = nullptr;
  /// Its pipeline group (N_p ranks, rank s = stage s; pipeline/stage_runner.h), null when N_p = 1.
  Collective* pp = nullptr;
  /// On a device, the data-parallel group on device buffers (NCCL), made once the rank's runtime
  /// and compute stream exist; empty: `dp` staged through pinned memory (collective/staged_groups.h).
  DeviceGroupMaker device_dp = {};
  /// On a device, the rank's GPU (train/collective_choice.h's gpu_of_rank).
  int gpu = 0;
};

/// Train on this rank: the engine alone. It measures and predicts nothing; predict::train_zero
/// (predict/predicted_run.h) is the job's entry, which sizes the M_D regions from the plan and adds
/// every prediction beside the measurement. Every rank of the job must call it with an identical
/// config (config.dp_size() == groups.dp.size(), config.mp_size == groups.mp's size or 1; a
/// differing config is detected and reported).
/// @param config validated settings (stage, grad sync, buckets, ...).
/// @param data the dataset (same on every rank).
/// @param groups this rank's data-parallel and model-parallel groups; their reduce mode decides
/// the reduction order.
/// @param md_regions with --allocator zero, the contiguous regions M_D sets aside (ignored otherwise).
/// @param on_step called after each step (may be empty).
/// @param artifacts filled for the dump flags set in config; final_params and step1_grad are
/// gathered in canonical order with padding stripped, on every rank (may be null).
/// @return the records, every predicted field empty.
ZeroRunResult train_zero(const train::RunOptions& config, const Dataset& data, RankGroups groups,
                         const std::vector<zero_r::ReplayRegion>& md_regions, const train::StepCallback& on_step,
                         train::RunArtifacts* artifacts);

}  // namespace zt::zero
