// train/run_result.h — what a training run reports: per-step records, evaluation, memory, speed.
//
// Plain data shared by the trainer, the summary JSON writer and the tests. Losses and norms are
// kept as the FP32 values the loop computed, so two runs can be compared bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "device/runtime.h"

namespace zt::train {

/// One optimizer step as the loop saw it.
struct StepRecord {
  int64_t step = 0;                ///< from 1
  float loss = 0;                  ///< forward loss of the step, before its update (mean over tokens)
  float loss_scale = 1;            ///< the loss scale used for this step's backward
  bool skipped = false;            ///< true when a non-finite gradient made the loop skip the update
  std::optional<float> grad_norm;  ///< global norm of the unscaled gradient; empty if not finite
  bool clipped = false;            ///< whether clipping fired (norm above the threshold)
  float lr = 0;                    ///< learning rate of the step
  /// 16-bit gradient elements (g16, the model's output before any widening) that are exactly
  /// zero, summed over the step's micro-batches; -1 where not counted (FP32, or the ZeRO engine).
  int64_t grad16_zeros = -1;
};

/// A held-out evaluation.
struct EvalRecord {
  int64_t step = 0;          ///< after this many steps
  float loss = 0;            ///< mean held-out loss per token
  double accuracy = 0;       ///< fraction of held-out problems solved exactly (addition task)
  std::size_t problems = 0;  ///< how many problems the accuracy is over (0 for text data)
};

/// Memory of one rank: measured ledger peaks and their predictions.
struct RankMemory {
  int rank = 0;                                  ///< the rank in the whole job
  int dp_rank = 0;                               ///< its data-parallel rank
  int mp_rank = 0;                               ///< its model-parallel rank
  std::size_t model_states_bytes = 0;            ///< measured: params+grads+master+optimizer
  std::size_t model_states_bytes_predicted = 0;  ///< from the sharding description
  std::size_t peak_bytes = 0;                    ///< peak of the whole arena ledger
  std::size_t peak_bytes_predicted = 0;          ///< sum of the categories' predicted peaks
  /// The predicted arena trace's high-water mark (predict/zero_trace.h, train::predicted_single_rank_trace):
  /// when the categories do not peak together, lower than peak_bytes_predicted; equal to peak_bytes.
  std::size_t high_water_bytes_predicted = 0;
  std::size_t padding_bytes = 0;                                  ///< model-state bytes holding padding
  std::map<std::string, std::size_t> by_category;                 ///< measured peak per category
  std::map<std::string, std::size_t> by_category_predicted;       ///< predicted peak per category
  std::size_t arena_capacity = 0;                                 ///< the budget
  std::map<std::string, std::size_t> host_by_category;            ///< the host tier's ledger peaks (P_a+cpu)
  std::map<std::string, std::size_t> host_by_category_predicted;  ///< their predictions
  std::size_t host_capacity = 0;                                  ///< the host tier's capacity (0: no host tier)
};

/// Values a run hands back for the --dump-* flags (filled only when asked for).
struct RunArtifacts {
  std::vector<float> step1_grad;     ///< FP32 gradient the optimizer got at step 1 (unscaled, averaged, unclipped)
  std::vector<float> final_params;   ///< FP32 master weights after the last step (canonical order)
  std::vector<int32_t> step1_batch;  ///< step 1's global batch, [global_batch, T+1]
};

/// Everything a run reports.
struct RunResult {
  std::vector<StepRecord> steps;                       ///< one per optimizer step
  std::vector<EvalRecord> evals;                       ///< held-out evaluations
  std::vector<RankMemory> memory;                      ///< one per rank
  int64_t param_count = 0;                             ///< psi
  double seconds = 0;                                  ///< wall time of the training steps
  double tokens_per_s = 0;                             ///< global_batch * T * steps / seconds
  double frozen_fraction = -1;                         ///< 16-bit params unchanged by the last step (-1: not tracked)
  double frozen_window_fraction = -1;                  ///< 16-bit params unchanged over the last frozen_window_steps
  int64_t frozen_window_steps = 0;                     ///< the window: min(20, steps)
  std::string dataset;                                 ///< dataset description
  device::CopyStats device_copies_total;               ///< on a device: host-device copies of all training steps
  device::CopyStats device_copies_per_step;            ///< the last step's
  device::CopyStats device_copies_predicted_per_step;  ///< closed form of one applied step (host<->device kinds)
};

}  // namespace zt::train
