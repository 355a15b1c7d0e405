// train/single_rank.h — the mixed-precision training loop on one rank: the reference.
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
#include "optim/loss_scaler.h"
#include "train/run_loop.h"
#include "train/run_options.h"
#include "train/run_result.h"

namespace zt::train {

/// Values a run hands back for the --dump-* flags (filled only when asked for).
struct RunArtifacts {
  std::vector<float> step1_grad;     ///< FP32 gradient the optimizer got at step 1 (unscaled, averaged, unclipped)
  std::vector<float> final_params;   ///< FP32 master weights after the last step (canonical order)
  std::vector<int32_t> step1_batch;  ///< step 1's global batch, [global_batch, T+1]
};

/// The loss scaler a run's settings ask for: dynamic for fp16, the no-op scaler otherwise.
/// Every loop (single-rank and sharded) builds its scaler here, so they step it identically.
/// @param config the settings. @return the scaler in its initial state.
LossScaler loss_scaler_for(const RunOptions& config);

/// Run a whole training job on one rank.
/// @param config validated settings. @param data the dataset (its context must equal
/// config.context). @param on_step called after each step (may be empty).
/// @param artifacts filled for the dump flags set in config (may be null).
/// @return the run's records, evaluations, memory and speed.
RunResult train_single_rank(const RunOptions& config, const Dataset& data, const StepCallback& on_step,
                            RunArtifacts* artifacts);

}  // namespace zt::train
