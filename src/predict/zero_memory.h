// predict/zero_memory.h — predicted per-rank ledger peaks of a ZeRO run, from its plan alone.
//
// Two kinds of category, predicted two ways:
//   persistent  allocated once at set-up (parameters, master, optimizer state, the workspace, ...)
//               and the step's gradient storage: the sharding description's closed forms (the
//               paper's S_p, S_g, S_o; per unit where stage 3 keeps small units' parameters whole),
//               listed in the engine's order by setup_allocations, which the predicted trace
//               replays too;
//   transient   the buffers a step allocates and frees (gradient staging, the canonical tree's
//               partial sums, reduction buffers, gathered units): their peaks are read off the
//               predicted trace (zero_trace.h), which replays the engine's schedules
//               (schedule/gather_window.h, schedule/buckets.h) — one description, not a second
//               closed form per category.
// The chapters' closed forms for C_B (bucket buffers) and the stage-3 gathered window are kept
// here, computed from the same schedules; tests check that they equal the trace's peaks. Tests
// compare every category with the arena's measured peak. It allocates nothing.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "memory/arena.h"
#include "memory/model_states.h"
#include "train/run_result.h"
#include "zero/zero_plan.h"

namespace zt::predict {

/// One allocation of the engine's set-up.
struct SetupAllocation {
  std::string category;   ///< its ledger category
  std::size_t bytes = 0;  ///< requested bytes (0: counted by the ledger, no block)
};

/// The buffers train_zero.cc's allocate() creates, in its order, sized from the sharding description
/// (S_p, S_o per unit), the model's workspace and the ZeRO-R / offload settings: what lives from
/// set-up to the end of the run. The predicted trace replays them; predict_zero_memory adds them up.
/// @param p the rank's plan. @return the allocations (P_a+cpu's two staging slices are two).
std::vector<SetupAllocation> setup_allocations(const zero::ZeroPlan& p);

/// Predicted peak bytes per ledger category of this rank: the persistent categories from
/// setup_allocations and S_g's gradient storage, the transient ones read off predicted_trace.
/// @param plan the rank's plan. @param overlap --overlap. @param heldout_rounds as for
/// predicted_trace. @return category -> bytes (categories never allocated absent).
std::map<std::string, std::size_t> predict_zero_memory(const zero::ZeroPlan& plan, bool overlap,
                                                       std::size_t heldout_rounds);

/// The paper-style model-state bytes of this rank (params, grads, master, optimizer) from the
/// sharding description, with gradients counted at the stored width.
/// @param plan the rank's plan. @return the breakdown and its padding.
ModelStateBytes predicted_model_states(const zero::ZeroPlan& plan);

/// C_B's closed form (ZeRO paper, Sec. 6.2) for the reductions after every micro-batch: one unit's
/// buffers at a time, its landing (schedule::Landing: a 16-bit wire shard, a whole unit for an
/// all-reduce, nothing for an FP32 reduce-scatter, which lands in the accumulator's leaf) plus its
/// largest kBucketsInFlight consecutive buckets (schedule::bucket_window).
struct ReductionBuffers {
  std::string category;   ///< reduce_wire (16-bit) or grad_leaf (FP32); empty: no such reduction
  std::size_t bytes = 0;  ///< the peak over units
};
/// @param p the rank's plan. @return the peak (none unless every micro-batch is reduced, N > 1).
ReductionBuffers reduction_buffers_peak(const zero::ZeroPlan& p);

/// The stage-3 gathered window's closed form (prefetch): the largest sum of the units in use and the
/// gathers issued ahead at any acquire (schedule::gathered_window_peak), in compute-dtype bytes.
/// @param p the rank's plan. @return bytes (0 without sharded parameters).
std::size_t gathered_window_bytes(const zero::ZeroPlan& p);

/// Predicted peaks of the host tier's ledger: P_a+cpu's checkpoint slices; ZeRO-Offload's master
/// and optimizer state (host) or the file tier's ring of B records (file), and its staging of one
/// unit's gradient and 16-bit values; on a device, the token ids and predictions the loop keeps on
/// the host (train::predict_single_rank_host_side); empty without any of these.
/// @param p the rank's plan. @return category -> bytes.
std::map<std::string, std::size_t> predict_host_memory(const zero::ZeroPlan& p);

}  // namespace zt::predict
