// train/memory_plan.h — the ledger categories of a single-rank run, their predicted peaks and the
// run's predicted arena trace.
//
// Every buffer the training loop allocates comes from the arena under one of these categories,
// and this file predicts each category's peak from the settings alone (closed forms in ψ, the
// micro-batch count A, the model's workspace sizes). Tests assert measured == predicted exactly.
// Model states follow the paper's accounting (widths 2, s_g, 4, K−4 bytes per element); the rest
// are the residual states. It is the single-rank plan; the ZeRO stages have their own. The categories
// themselves, and the rule that names a gradient accumulator's buffers, are step/categories.h.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "memory/arena.h"
#include "model/gpt_config.h"
#include "model/precision.h"
#include "model/workspace.h"
#include "step/categories.h"
#include "train/run_options.h"

namespace zt::train {

namespace category = step::category;  // the ledger categories every loop shares

/// Steps over which the stall metric compares the 16-bit copy (or all steps, if fewer).
inline constexpr int64_t kFrozenWindowSteps = 20;

/// Sizes that determine a single-rank run's memory.
struct SingleRankShape {
  model::GptConfig model;               ///< the model
  model::Precision precision;           ///< compute type
  std::size_t psi = 0;                  ///< parameter count
  std::size_t context = 0;              ///< T, tokens per sequence
  std::size_t micro_batch = 0;          ///< sequences per micro-batch
  std::size_t micro_batches = 0;        ///< A, micro-batches per step
  std::size_t grad_width = 4;           ///< s_g in bytes
  int optimizer_k = 12;                 ///< K bytes per parameter of master + optimizer state
  bool master_weights = true;           ///< false with --no-master-weights
  std::size_t norm_blocks = 0;          ///< gradient-norm blocks over all units
  std::size_t norm_block = 256;         ///< b
  bool checkpoint_activations = false;  ///< forward keeps only block inputs (model/workspace.h)
  /// On a device (--device emulated|cuda): the token ids and the predictions, which the loop
  /// fills and reads on the host, live in a pinned host-side arena instead of the device arena.
  bool host_side = false;
};

/// The model options of a one-rank run (no model parallelism; the run's checkpointing).
/// @param shape the run. @return the options.
inline model::ModelOptions model_options(const SingleRankShape& shape) { return {{}, shape.checkpoint_activations}; }

/// Derive the shape of a run from its settings (the dataset fixes V when --vocab is 0).
/// @param config the settings. @param vocab the vocabulary size to use. @return the shape.
SingleRankShape single_rank_shape(const RunOptions& config, int64_t vocab);

/// Predicted peak bytes of every category a run allocates in its arena (categories it never
/// allocates there are absent). @param shape the run. @return category name -> bytes.
std::map<std::string, std::size_t> predict_single_rank(const SingleRankShape& shape);

/// Predicted peak bytes of the host-side arena's categories (empty unless shape.host_side).
/// @param shape the run. @return category name -> bytes.
std::map<std::string, std::size_t> predict_single_rank_host_side(const SingleRankShape& shape);

/// The host-side arena's capacity: its categories, each rounded up to the arena's granule.
/// @param shape the run. @return bytes (0 unless shape.host_side).
std::size_t host_side_bytes(const SingleRankShape& shape);

/// The arena events of the reference loop's set-up and one step, predicted (as predict/zero_trace.h
/// for the ZeRO engine): single_rank.cc's allocations in its order with predict_single_rank's
/// sizes, then with A > 1 the step's FP32 leaves through the canonical tree (a merge frees its
/// right operand) and the sum's release. Everything else is allocated once, so the running sum's
/// peak equals the sum of the category peaks here; the trace still matters for a first-fit replay.
/// @param shape the run. @return the events (ids from 0 in allocation order).
std::vector<ArenaEvent> predicted_single_rank_trace(const SingleRankShape& shape);

}  // namespace zt::train
