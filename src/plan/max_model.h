// plan/max_model.h — the largest model that fits: at paper scale the largest ψ whose per-rank
// model states fit a budget; for a runnable shape the largest --layers whose predicted arena peak
// fits --memory-budget-mb.
//
// Paper scale: model states are linear in ψ (paper_model_states), so ψ_max = floor(budget /
// bytes per parameter), checked against the formula at ψ_max and ψ_max + 1. Activations and
// buffers are not counted: the paper's "largest model" questions count model states only.
// Runnable shape: a --layers fits when every rank's predicted arena trace (predict/zero_trace.h: the
// engine's allocations and releases of set-up, one step and one evaluation, in order) replays
// through a first-fit arena of --memory-budget-mb with the run's M_D regions, so the answer
// accounts for the moment the categories peak together, each block's round-up to 256 bytes and
// fragmentation. The sum of the category peaks would only bound the high-water mark from above
// (at stage 3 the step's gradient storage is not complete while the gathered units, the model's
// output and the reduction buffers peak). Tests run zero-train at the answer and one layer more.
#pragma once

#include <cstdint>

#include "plan/paper_scale.h"
#include "train/run_options.h"
#include "zero_r/allocation_replay.h"

namespace zt::plan {

/// The largest ψ whose paper model states fit. @param q the question (its psi is ignored).
/// @param budget_bytes the per-rank budget. @return ψ_max (0 if nothing fits).
double max_paper_psi(const PaperQuestion& q, double budget_bytes);

/// The result of the search over --layers.
struct MaxLayers {
  int64_t layers = 0;               ///< the largest L that fits (0: not even one layer)
  std::size_t peak_bytes = 0;       ///< its predicted high-water mark (highest rank)
  std::size_t next_peak_bytes = 0;  ///< the predicted high-water mark at L + 1 (the first that does not fit)
  std::size_t capacity = 0;         ///< the arena's capacity in bytes
  int next_rank = 0;                ///< at L + 1: the first rank whose replay fails
  zero_r::ReplayResult next_fit;    ///< ... and how it fails (the allocation, free bytes, largest free block)
};

/// Search L = 1, 2, ... up to --layers' limit for the largest whose predicted traces fit.
/// @param c validated settings (its layers is replaced). @param vocab V. @return the answer.
MaxLayers max_layers(const train::RunOptions& c, int64_t vocab);

}  // namespace zt::plan
