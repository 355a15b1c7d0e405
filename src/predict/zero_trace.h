// predict/zero_trace.h — the arena events of a ZeRO rank, predicted from its plan alone: what
// zero-train --memory-trace records for a one-step run, in the same order, with the same sizes.
//
// Why a whole trace and not only per-category peaks (zero_memory.h): the categories need not peak
// at the same moment. At stage 3 the gathered units, the model's gradient outputs, the reduction
// buffers and the step's gradient storage rise and fall at different points of the backward, so
// the sum of their peaks overstates the arena's high-water mark; and whether a run fits depends on
// that mark, on each block's round-up to 256 bytes and on first-fit fragmentation. Replaying this
// trace through an Arena of the run's capacity (zero_r::replay) answers all three exactly.
//
// What it walks, in the engine's order:
//   set-up      train_zero.cc's allocate(), as zero_memory.h's setup_allocations lists it: params,
//               the parameter tier's ring, master, optimizer, activations, checkpoints, scratch,
//               batch, norm blocks, the evaluator's ids, P_a's slices (or P_a+cpu's two staging
//               slices);
//   one step    its program (zero/step_program.h): each micro-batch's provider calls and the
//               engine's answers (gathers issued --prefetch ahead, buckets issued at
//               param_grad_done, at most kBucketsInFlight, completed when the next unit opens or
//               at once without --overlap, the canonical accumulators' leaves and adds), then the
//               step's sums, 16-bit wires, and their release: each operation's allocations, then
//               its releases;
//   evaluation  the held-out forward passes of this rank (stage 3: their gathers), also a program.
// The transient categories' predicted peaks (zero_memory.h) are read off this trace, and M_D's
// gradient events are its `grads` and `accum_partials` events.
// Not here: the host tier's arena (everything in it is allocated at set-up, so its high-water
// mark is the sum of its categories), and the single-rank reference loop
// (train::predicted_single_rank_trace in train/memory_plan.h).
// The engine is the truth: tests compare this trace with --memory-trace event by event.
#pragma once

#include <cstddef>
#include <vector>

#include "memory/arena.h"
#include "zero/zero_plan.h"
#include "zero_r/allocation_replay.h"

namespace zt::predict {

/// The predicted events of set-up, one training step and one held-out evaluation of this rank.
/// @param p the rank's plan. @param overlap --overlap on (a unit's reduction completes when the
/// next unit opens; off: at once). @param heldout_rounds R, the held-out rounds of an evaluation
/// (train::heldout_rounds; 0 when the dataset has no held-out split). @return the events, ids
/// numbered from 0 in allocation order as the arena numbers them (zero-byte requests are not events).
std::vector<ArenaEvent> predicted_trace(const zero::ZeroPlan& p, bool overlap, std::size_t heldout_rounds);

/// The allocations and releases of one step's gradient storage and partial sums, in the engine's
/// order: predicted_trace's `grads` and `accum_partials` events (ids as there). M_D sizes its
/// gradient region by replaying them alone (zero_r/allocation_replay.h).
/// @param p the rank's plan. @param overlap as for predicted_trace. @return the events.
std::vector<ArenaEvent> gradient_events(const zero::ZeroPlan& p, bool overlap);

/// M_D's regions for --allocator zero (ZeRO paper, Sec. 6.3): the gradients (the step's storage and
/// the canonical tree's partial sums), sized by replaying gradient_events alone, and the
/// activation checkpoints. The engine sets these aside; a replay of the trace uses the same.
/// @param p the rank's plan. @param overlap as for predicted_trace. @return the regions, in the
/// order they are set aside.
std::vector<zero_r::ReplayRegion> md_regions(const zero::ZeroPlan& p, bool overlap);

}  // namespace zt::predict
