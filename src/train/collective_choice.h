// train/collective_choice.h — which library a rank's group uses (--collective): NCCL on the
// device's own buffers, or Gloo on the host (on a device, staged through pinned memory).
//
// Why a rule of its own: NCCL is the fast path between GPUs, but it serves only where each rank
// has a GPU to itself (one device twice in one communicator fails or hangs) and where this build
// has it. `--collective auto` takes NCCL exactly there; an explicit `--collective nccl` that
// cannot be served is one line naming the reason, before any rank waits on another, never a quiet
// fall-back to Gloo. The facts come from the caller (the probe, the launcher's local world size),
// so the rule is tested on a machine without a GPU.
// Not here: building the groups (apps/zero-train), the routing of a call by its buffers
// (collective/device_routed.h).
#pragma once

#include <cstdint>

#include "device/cuda_probe.h"
#include "train/settings_enums.h"

namespace zt::train {

/// What decides the library, as one rank sees it.
struct CollectiveFacts {
  device::Device device = device::Device::cpu;  ///< --device
  int64_t world_size = 1;                       ///< ranks in the job
  int64_t local_ranks = 1;                      ///< ranks on this machine
  int gpus = 0;                                 ///< GPUs this process sees (device/cuda_probe.h)
  bool nccl_built = false;                      ///< this build links NCCL
  bool plain_data_parallel = true;              ///< --mp-size 1, --pp-size 1, no --shard-group
};

/// Whether this rank's data-parallel group runs on NCCL.
/// @param asked --collective. @param f the facts. @return true: NCCL on device buffers (host values
/// on Gloo beside it); false: Gloo. @throws zt::Error (one line) for nccl where NCCL cannot serve.
bool use_nccl(CollectiveBackend asked, const CollectiveFacts& f);

/// The GPU a rank of this machine uses: its local rank where NCCL gives each rank its own, else
/// the first (ranks that share a GPU stage through Gloo). @param nccl use_nccl's answer.
/// @param local_rank the rank among this machine's ranks. @return the device index.
inline int gpu_of_rank(bool nccl, int64_t local_rank) { return nccl ? static_cast<int>(local_rank) : 0; }

}  // namespace zt::train
