// zero/dp_calls.h — every data-parallel collective of one applied step, in the engine's order, as
// one enumeration that every count of them is derived from: the traffic model (predict/zero_comm.h),
// the copies a device stages around them, and the staging rooms those copies need (below).
//
// Why one enumeration: the engine's calls are decided by the plan (stage, buckets, gathers per
// acquire, persistent units), and each closed form that counts them would otherwise restate those
// rules; one visitor keeps them from drifting apart. The engine itself issues its calls from its
// own code (grad_reducer.h, unit_gatherer.h, train_zero.cc); the tests compare every closed form
// built on this with what the engine measured. Not here: the model-parallel group's calls (the
// block sums and P_a's gathers: mp_staging_rooms and predict_mp_comm_per_step count them).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "collective/staged_collective.h"
#include "optim/grad_norm.h"
#include "zero/zero_plan.h"

namespace zt::zero {

/// @param counts per-rank element counts. @return their sum (a call's whole extent).
inline std::size_t total_count(const std::vector<std::size_t>& counts) {
  std::size_t s = 0;
  for (std::size_t x : counts) s += x;
  return s;
}

/// Visit every data-parallel collective of one applied step at N > 1, in the engine's order, as
/// v.rs(counts, es, on_device), v.ag(counts, es, on_device) or v.ar(count, es, on_device): counts
/// per rank (or the all-reduce's count), es bytes per element, on_device whether its buffers are
/// the engine's tensors (a device's memory on a device) rather than host-side values. These run
/// on the group ZeRO shards over (N = G ranks with hybrid sharding: each a two-level call of
/// collective/hybrid_group.h). The one call over all N_d data-parallel ranks — the loss sums, A
/// floats from each — is v.loss(A).
/// @param p the rank's plan. @param v the visitor.
template <typename V>
void for_each_dp_call(const ZeroPlan& p, V& v) {
  const Layout& l = p.layout;
  const std::size_t N = l.world_size;
  const std::size_t A = p.micro_batches_per_rank;
  const std::size_t wt = p.shape.precision == model::Precision::fp32 ? 4 : 2;
  const std::size_t wg = p.reduce_in_compute_type ? 2 : 4;
  // stage 3: one gather per acquire of a sharded-parameter unit, every micro-batch (a pipeline
  // stage's acquire order is already the whole step's)
  for (std::size_t j = 0; j < (p.pipelined() ? 1 : A); ++j)
    for (std::size_t u : p.acquire_order)
      if (p.params_sharded(u)) v.ag(std::vector<std::size_t>(N, l.units[u].shard), wt, true);
  const std::size_t syncs = p.reduce_each_micro_batch ? A : 1;
  for (std::size_t k = 0; k < syncs; ++k)
    for (std::size_t unit : p.units_here) {  // a pipeline stage: its own units
      const UnitLayout& u = l.units[unit];
      if (!p.reduce_scatters_grad) {
        v.ar(u.full, wg, true);
        continue;
      }
      const std::size_t bucket = p.bucket_elements ? p.bucket_elements : u.full;
      for (std::size_t a = 0; a < u.full; a += bucket) {
        const std::size_t z = std::min(u.full, a + bucket);
        std::vector<std::size_t> counts(N);
        for (std::size_t q = 0; q < N; ++q) {
          const std::size_t lo = std::max(a, q * u.shard), hi = std::min(z, (q + 1) * u.shard);
          counts[q] = hi > lo ? hi - lo : 0;
        }
        v.rs(counts, wg, true);
      }
    }
  if (!p.pipelined() || p.pp_rank == p.pp_size - 1) v.loss(A);  // per-micro-batch loss sums, from all N_d ranks
  if (p.reduce_scatters_grad) {
    v.ar(1, 4, false);  // overflow flag (max)
    std::vector<std::size_t> blocks(N, 0);
    for (std::size_t q = 0; q < N; ++q)
      for (std::size_t u = 0; u < l.units.size(); ++u) blocks[q] += norm_block_count(l.shard_real(u, q), l.block);
    v.ag(blocks, 4, false);  // norm block sums
  }
  // updated 16-bit shards back to every rank holding the unit whole (stages 1-2, persistent units)
  for (std::size_t u : p.units_here)
    if (p.spec.optimizer && !p.params_sharded(u)) v.ag(std::vector<std::size_t>(N, l.units[u].shard), wt, true);
}

/// The data-parallel group's rooms on a device: the largest call of for_each_dp_call (0 at N = 1,
/// where the engine issues none). @param p the rank's plan. @return the rooms.
StagingRooms dp_staging_rooms(const ZeroPlan& p);

/// The model-parallel group's rooms on a device: the [B T, C] FP32 partial sums that complete the
/// split Linears' block sums (an all-reduce in place), and P_a's all-gather of the checkpoint
/// slices (one slice in, N_m slices out); 0 without a model-parallel group. @param p the plan.
/// @return the rooms.
StagingRooms mp_staging_rooms(const ZeroPlan& p);

/// On a device, the bytes of the engine's pinned host-side arena: the token ids and predictions
/// (train/memory_plan.h's host_side_bytes) and the parameter tier's bounce record (with
/// --offload-params), rounded up to the arena's alignment. (The staged groups' rooms are the
/// runtime's pinned memory, reported beside the arena: Placement::pinned_by_category.)
/// @param p the rank's plan. @return the bytes.
std::size_t pinned_host_side_bytes(const ZeroPlan& p);

}  // namespace zt::zero
