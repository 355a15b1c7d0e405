// reference/single_rank.h — the mixed-precision training loop on one rank: the reference.
//
// The six steps of the protocol (chapter 2), once per optimizer step:
//   1. forward with the 16-bit compute copy θ16 (the loss times the loss scale S seeds backward);
//   2. backward produces 16-bit gradients g16 (one micro-batch at a time);
//   3. g16 is cast to FP32 and micro-batches are summed along the canonical tree;
//   4. the FP32 gradient is unscaled (×1/S), checked for inf/NaN (skip + back off), its global
//      norm is taken from fixed blocks, and it is clipped;
//   5. the optimizer updates the FP32 master θ32 and its FP32 state;
//   6. θ16 ← round(θ32).
// Every sharded run of the ZeRO stages is compared with this loop bit for bit, so every sum in it
// whose order matters follows the canonical tree, and no collective or sharding code is on its
// path. With --precision fp32 the compute copy is the master and steps 3 and 6 are identities.
#pragma once

#include <vector>

#include "data/dataset.h"
#include "train/run_loop.h"
#include "train/run_options.h"
#include "train/run_result.h"

namespace zt::reference {

using train::RunArtifacts;
using train::RunOptions;
using train::RunResult;
using train::StepCallback;

/// Run a whole training job on one rank.
/// @param config validated settings. @param data the dataset (its context must equal
/// config.context). @param on_step called after each step (may be empty).
/// @param artifacts filled for the dump flags set in config (may be null).
/// @return the run's records, evaluations, memory and speed.
RunResult train_single_rank(const RunOptions& config, const Dataset& data, const StepCallback& on_step,
                            RunArtifacts* artifacts);

}  // namespace zt::reference
