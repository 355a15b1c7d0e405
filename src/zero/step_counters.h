// zero/step_counters.h — every counter a ZeRO rank's step moves, read as one snapshot: the
// data-parallel, model-parallel and pipeline groups' collectives, the copies between the tiers, the file
// tiers' reads and writes, and on a device the copies between host and device memory. A step's figures are the
// difference of the snapshots around it, and a run's training figures the sum of its steps' (evaluations and
// checkpoints, which happen between steps, are in neither). It reads counters; it does not keep them (their owners do).
#pragma once

#include "collective/hybrid_group.h"
#include "collective/stats.h"
#include "device/runtime.h"
#include "offload/transfer_thread.h"

namespace zt::zero {

/// One snapshot of a rank's counters.
struct StepCounters {
  CommStats dp;                      ///< the data-parallel group's collectives (all of them)
  CommStats mp;                      ///< the model-parallel group's (empty: N_m = 1)
  offload::TransferStats transfers;  ///< copies between the accelerator and host tiers
  offload::TransferStats file_io;    ///< reads and writes of the file tiers (optimizer and parameters)
  device::CopyStats device;          ///< copies enqueued on the device runtime, by kind (zero on the host)
  CommStats dp_replica{};            ///< hybrid sharding: dp's share across shard groups (replica groups)
  CommStats dp_whole{};              ///< hybrid sharding: dp's share over all N_d ranks at once (the loss)
  CommStats pp{};                    ///< the pipeline group's: send/recv and the stages' agreement (N_p > 1)

  /// @param b an earlier snapshot. @return what moved between b and this.
  StepCounters operator-(const StepCounters& b) const {
    return {dp - b.dp,
            mp - b.mp,
            transfers - b.transfers,
            file_io - b.file_io,
            device - b.device,
            dp_replica - b.dp_replica,
            dp_whole - b.dp_whole,
            pp - b.pp};
  }
  /// @param b more counts. @return both together.
  StepCounters operator+(const StepCounters& b) const {
    return {dp + b.dp,
            mp + b.mp,
            transfers + b.transfers,
            file_io + b.file_io,
            device + b.device,
            dp_replica + b.dp_replica,
            dp_whole + b.dp_whole,
            pp + b.pp};
  }
};

/// Hybrid sharding's parts of a snapshot: the data-parallel traffic is the shard groups' view
/// (both levels) plus the whole group's calls (the loss sums); the across part is the view's
/// replica level. And the pipeline group's counters. @param s the snapshot without them.
/// @param view the two-level view (null without hybrid sharding: then dp stays as it is).
/// @param pp the pipeline group (null without a pipeline). @return the snapshot with dp,
/// dp_replica, dp_whole and pp.
inline StepCounters with_hybrid_parts(StepCounters s, const HybridGroup* view, const Collective* pp = nullptr) {
  if (pp) s.pp = pp->stats();
  if (!view) return s;
  s.dp_whole = view->whole().stats();
  s.dp_replica = view->inter();
  s.dp = s.dp + s.dp_whole;
  return s;
}

}  // namespace zt::zero
