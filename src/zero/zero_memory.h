// zero/zero_memory.h — predicted per-rank ledger peaks of a ZeRO run, from its plan alone.
//
// The persistent model states follow the sharding description (extent shard or full per state,
// per unit where stage 3 keeps small units' parameters whole);
// the transient buffers (gradient staging, accumulator partials, gathered units) follow the
// documented order of the model's provider calls (model/param_provider.h). Tests compare each
// category with the arena's measured peak. It allocates nothing.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "memory/arena.h"
#include "memory/model_states.h"
#include "train/run_result.h"
#include "zero/zero_plan.h"

namespace zt::zero {

/// Predicted peak bytes per ledger category of this rank.
/// @param plan the rank's plan. @return category -> bytes (categories never allocated absent).
std::map<std::string, std::size_t> predict_zero_memory(const ZeroPlan& plan);

/// The paper-style model-state bytes of this rank (params, grads, master, optimizer) from the
/// sharding description, with gradients counted at the stored width.
/// @param plan the rank's plan. @return the breakdown and its padding.
ModelStateBytes predicted_model_states(const ZeroPlan& plan);

/// The allocations and releases of one step's gradient storage and partial sums, in order: each
/// unit's leaf per micro-batch in grad_done order, the canonical tree's merges releasing the right
/// partial (reduce/canonical_tree.h, run here on tokens), the step's sums released at its end. M_D
/// sizes its gradient region by replaying them (zero_r/allocation_replay.h).
/// @param p the rank's plan. @return the events (ids local to them).
std::vector<ArenaEvent> gradient_events(const ZeroPlan& p);

/// Predicted peaks of the host tier's ledger: P_a+cpu's checkpoint slices; ZeRO-Offload's master
/// and optimizer state (host) or the file tier's ring of B records (file), and its staging of one
/// unit's gradient and 16-bit values; empty without either.
/// @param p the rank's plan. @return category -> bytes.
std::map<std::string, std::size_t> predict_host_memory(const ZeroPlan& p);

}  // namespace zt::zero
