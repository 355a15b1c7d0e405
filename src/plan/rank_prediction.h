// plan/rank_prediction.h — what every rank of a zero-train run will allocate and send, predicted
// from the run's settings alone.
//
// It picks the path zero-train itself takes: one rank at stage 0 with nothing that needs the
// ZeRO engine runs the single-rank reference loop (train/memory_plan.h predicts it, no
// communication); everything else runs the ZeRO engine, one ZeroPlan per (dp, mp) rank
// (zero/zero_plan.h), whose predictions are predict/zero_memory.h and predict/zero_comm.h. Nothing is
// re-derived here: this file only calls those functions and collects their answers per rank.
// It allocates no arena and starts no rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "collective/stats.h"
#include "device/runtime.h"
#include "offload/transfer_thread.h"
#include "train/run_options.h"
#include "zero_r/allocation_replay.h"

namespace zt::plan {

/// One rank's predictions.
struct RankPrediction {
  int rank = 0;     ///< global rank: (pp · N_d + dp) · N_m + mp (collective/grid.h)
  int dp_rank = 0;  ///< rank in its data-parallel group
  int mp_rank = 0;  ///< rank in its model-parallel group
  int pp_rank = 0;  ///< its pipeline stage
  /// Device arena: predicted peak bytes per ledger category (the measured ledger's categories).
  std::map<std::string, std::size_t> device;
  /// Host tier (P_a+cpu, ZeRO-Offload): peak bytes per category; empty without one.
  std::map<std::string, std::size_t> host;
  /// Sum of the device categories' peaks: zero-train's peak_bytes_predicted. It bounds the
  /// ledger's real high-water mark from above (categories need not peak at the same moment).
  std::size_t peak_bytes = 0;
  /// The device arena's events for set-up, one step and one evaluation, in the engine's order
  /// (predict/zero_trace.h; the reference loop: train::predicted_single_rank_trace): what
  /// zero-train --memory-trace writes for this rank with --steps 1.
  std::vector<ArenaEvent> trace;
  /// M_D's regions with --allocator zero (predict::md_regions), else none.
  std::vector<zero_r::ReplayRegion> regions;
  /// The ledger's high-water mark: the peak of the trace's running sum (zero-train's measured
  /// peak_bytes). At most peak_bytes; the arena also rounds each block up to 256 bytes and can
  /// fragment, which fit (a replay of the trace at the run's capacity) accounts for.
  std::size_t high_water_bytes = 0;
  /// The trace replayed through a first-fit arena of the run's capacity with these regions.
  zero_r::ReplayResult fit;
  /// params + grads + master + optimizer peaks: what zero-train measures as model_states_bytes.
  std::size_t model_states_bytes = 0;
  CommStats dp_comm;                 ///< data-parallel group, one applied step
  CommStats dp_replica_comm;         ///< hybrid sharding: dp's share across shard groups
  CommStats dp_whole_comm;           ///< hybrid sharding: dp's share over all N_d ranks (the loss sums)
  CommStats mp_comm;                 ///< model-parallel group, one applied step (zero if N_m = 1)
  CommStats pp_comm;                 ///< pipeline group, one applied step (zero if N_p = 1)
  offload::TransferStats transfers;  ///< host-tier copies per step (zero without a host tier)
  offload::TransferStats file_io;    ///< file-tier I/O per step (zero without a file tier)
  device::CopyStats device_copies;   ///< --device emulated|cuda: host<->device copies per step
};

/// The predictions of a whole run.
struct RunPrediction {
  bool reference_loop = false;        ///< the single-rank reference loop (no ZeRO engine, no collectives)
  int64_t vocab = 0;                  ///< V used (the dataset's alphabet when --vocab is 0)
  std::size_t psi = 0;                ///< parameters of the whole model
  std::size_t arena_capacity = 0;     ///< bytes of --memory-budget-mb, as the arena is built
  std::vector<RankPrediction> ranks;  ///< rank 0 .. world_size − 1
};

/// Whether zero-train runs these settings in its single-rank reference loop (its run_mode): one
/// rank, stage 0, and nothing that lives in the ZeRO engine. @param c validated settings.
/// @return true for the reference loop.
bool uses_reference_loop(const train::RunOptions& c);

/// The vocabulary a run uses: --vocab, or its dataset's alphabet (the embedded addition task, or
/// the byte-level file of --data). @param c the settings. @return V.
int64_t resolve_vocab(const train::RunOptions& c);

/// Predict every rank. @param c settings after resolve_micro_batch and validate.
/// @param vocab V (resolve_vocab). @return the predictions.
RunPrediction predict_run(const train::RunOptions& c, int64_t vocab);

}  // namespace zt::plan
