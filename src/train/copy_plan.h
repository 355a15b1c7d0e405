// train/copy_plan.h — the reference loop's copies between host and device memory in one applied
// step on a device (--device emulated|cuda), in closed form: what zero-plan prints for a one-rank
// run and what zero-train measures beside it (summary JSON `device_copies`). The ZeRO engine's
// own closed form adds its collectives' staging (predict/zero_comm.h); this one has none.
// It computes; it copies nothing. Device-to-device copies are not host traffic and are not counted.
#pragma once

#include "device/runtime.h"
#include "train/memory_plan.h"

namespace zt::train {

/// Per micro-batch: the token ids staged in four times (inputs and targets, in forward and again
/// in backward: model/model_ops.h), the per-token losses read back, and with 16-bit compute the
/// per-group counts of zero gradients (chapter 2's underflow count: step_device/loop_ops.h). Per unit
/// u of ψ_u parameters: the overflow flag zeroed up and read down, its ⌈ψ_u / b⌉ norm block sums
/// read down, and with 16-bit parameters the per-group counts of values the update kept
/// (step_device/step_ops.h). Nothing else crosses: the parameters, gradients, master and
/// moments never leave the device during a step.
/// @param shape the run (its host_side is set on a device). @return copies and bytes by kind
/// (all zero for a host run).
device::CopyStats predict_single_rank_copies_per_step(const SingleRankShape& shape);

}  // namespace zt::train
