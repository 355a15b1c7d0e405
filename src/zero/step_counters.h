// zero/step_counters.h — every counter a ZeRO rank's step moves, read as one snapshot: the
// data-parallel and model-parallel groups' collectives, the copies between the tiers, the file
// tiers' reads and writes, and on a device the copies between host and device memory. A step's figures are the
// difference of the snapshots around it, and a run's training figures the sum of its steps' (evaluations and
// checkpoints, which happen between steps, are in neither). It reads counters; it does not keep them (their owners do).
#pragma once

#include "collective/stats.h"
#include "device/runtime.h"
#include "offload/io_thread.h"
#include "zero_r/copy_engine.h"

namespace zt::zero {

/// One snapshot of a rank's counters.
struct StepCounters {
  CommStats dp;                     ///< the data-parallel group's collectives
  CommStats mp;                     ///< the model-parallel group's (empty: N_m = 1)
  zero_r::TransferStats transfers;  ///< copies between the accelerator and host tiers
  offload::FileIoStats file_io;     ///< reads and writes of the file tiers (optimizer and parameters)
  device::CopyStats device;         ///< copies enqueued on the device runtime, by kind (zero on the host)

  /// @param b an earlier snapshot. @return what moved between b and this.
  StepCounters operator-(const StepCounters& b) const {
    return {dp - b.dp, mp - b.mp, transfers - b.transfers, file_io - b.file_io, device - b.device};
  }
  /// @param b more counts. @return both together.
  StepCounters operator+(const StepCounters& b) const {
    return {dp + b.dp, mp + b.mp, transfers + b.transfers, file_io + b.file_io, device + b.device};
  }
};

}  // namespace zt::zero
