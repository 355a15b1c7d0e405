// zero/micro_batch_order.h — which of the step's global micro-batches a ZeRO rank computes, and
// the step's loss summed over all of them in the one-device order (chapter 6).
//
// The reference loop computes micro-batches 0 .. M-1 of the global batch in order and sums their
// losses (and gradients) by the canonical tree. Spread over N ranks with A = M / N micro-batches
// each, the same tree needs the micro-batches dealt so that every reduction is a subtree:
//   strided     m = j·N + r  when every micro-batch's gradient is reduced as it is produced
//               (stages 2-3): each reduction over ranks is then one level of the tree;
//   contiguous  m = r·A + j  when a rank sums its own micro-batches first (stages 0-1): its local
//               sum is then a subtree, and the step's one reduction the levels above it.
// Not here: the gradient tree itself (optim/grad_accumulator.h; the step's accumulate and add
// operations, zero/step_program.h).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "collective/collective.h"
#include "reduce/canonical_tree.h"
#include "zero/zero_plan.h"

namespace zt::zero {

/// The global micro-batch index of rank r's j-th micro-batch of a step (see the file comment; N
/// is the data-parallel group's N_d, also with hybrid sharding: with a shard group of G = 2^k,
/// each reduction over the N_d ranks is the shard group's subtree, then the replica group's levels).
/// @param plan the rank's plan. @param r a data-parallel rank (0..N_d-1). @param j its micro-step.
/// @return m in [0, M).
inline std::size_t global_micro_batch(const ZeroPlan& plan, std::size_t r, std::size_t j) {
  const std::size_t N = plan.dp_size;
  return plan.reduce_each_micro_batch ? j * N + r : r * plan.micro_batches_per_rank + j;
}

/// The canonical tree over all M micro-batch loss sums of the step, in global order: every rank's
/// sums are all-gathered, put in place and summed as one device would.
/// @param plan the rank's plan. @param dp the data-parallel group (all N_d ranks, also with hybrid
/// sharding). @param local_sums this rank's A sums, by micro-step. @return the step's summed loss
/// (before dividing by the token count).
inline float global_loss(const ZeroPlan& plan, Collective& dp, const std::vector<float>& local_sums) {
  const std::size_t N = plan.dp_size;
  if (N == 1) return canonical_sum(local_sums);
  const std::size_t A = local_sums.size();
  std::vector<float> all(A * N);
  dp.all_gather(std::span<const float>(local_sums), std::span<float>(all));
  std::vector<float> ordered(all.size());
  for (std::size_t r = 0; r < N; ++r)
    for (std::size_t j = 0; j < A; ++j) ordered[global_micro_batch(plan, r, j)] = all[r * A + j];
  return canonical_sum(ordered);
}

}  // namespace zt::zero
