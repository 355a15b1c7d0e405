// zero/dp_calls.h — every data-parallel collective of one applied step, read from the step program
// the engine runs (zero/step_program.h): the traffic model (predict/zero_comm.h), the copies a
// device stages around them, and the staging rooms those copies need (below) count the same
// calls the engine issues, so no rule of the plan (stage, buckets, gathers per acquire,
// persistent units) is restated here; the tests compare every figure built on this with what the
// engine measured. Not here: the model-parallel group's calls (the
// block sums and P_a's gathers: mp_staging_rooms and predict_mp_comm_per_step count them).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "collective/padding.h"
#include "collective/staged_collective.h"
#include "optim/grad_norm.h"
#include "schedule/buckets.h"
#include "zero/step_program.h"
#include "zero/zero_plan.h"

namespace zt::zero {

/// Visit every data-parallel collective of one applied step at N > 1, in the order the step
/// program issues them (zero/step_program.h), as v.rs(counts, es, on_device), v.ag(counts, es,
/// on_device) or v.ar(count, es, on_device): counts per rank (or the all-reduce's count), es bytes
/// per element, on_device whether its buffers are the engine's tensors (a device's memory on a
/// device) rather than host-side values. These run on the group ZeRO shards over (N = G ranks
/// with hybrid sharding: each a two-level call of collective/hybrid_group.h). The one call over
/// all N_d data-parallel ranks — the loss sums, A floats from each — is v.loss(A).
/// @param p the rank's plan. @param v the visitor.
template <typename V>
void for_each_dp_call(const ZeroPlan& p, V& v) {
  const Layout& l = p.layout;
  const std::size_t N = l.world_size;
  const auto scatter = [&](std::size_t u, schedule::Range r, std::size_t es) {
    v.rs(schedule::reduce_scatter_counts(r, l.units[u].shard, N, l.rank).counts, es, true);
  };
  for (const Op& o : step_program(p, /*overlap=*/true).ops) {
    const auto u = static_cast<std::size_t>(o.unit);
    switch (o.kind) {
      case OpKind::all_gather:  // stage 3's gather of a unit, or an updated shard shared in place
        v.ag(std::vector<std::size_t>(N, l.units[u].shard), o.bytes / (N * l.units[u].shard), true);
        break;
      case OpKind::reduce_scatter:
        scatter(u, p.buckets[u].issue_order[static_cast<std::size_t>(o.bucket)], o.bytes / o.count);
        break;
      case OpKind::all_reduce:
        v.ar(o.count, o.bytes / o.count, true);
        break;
      case OpKind::step_sync:  // the whole unit at once: an all-reduce, or every bucket in the unit's order
        if (!schedule::scatters(p.landing)) {
          v.ar(l.units[u].full, o.bytes / l.units[u].full, true);
          break;
        }
        for (const schedule::Range& r : schedule::sync_order(p.buckets[u])) scatter(u, r, o.bytes / l.units[u].full);
        break;
      case OpKind::loss:  // per-micro-batch loss sums, from all N_d ranks (a pipeline's last stage)
        if (!p.pipelined() || p.pp_rank == p.pp_size - 1) v.loss(p.micro_batches_per_rank);
        break;
      case OpKind::agree:  // with S_g or S_o: the overflow flag (max) and the norm block sums
        if (p.reduce_scatters_grad) {
          v.ar(1, 4, false);
          std::vector<std::size_t> blocks(N, 0);
          for (std::size_t q = 0; q < N; ++q)
            for (std::size_t k = 0; k < l.units.size(); ++k) blocks[q] += norm_block_count(l.shard_real(k, q), l.block);
          v.ag(blocks, 4, false);
        }
        break;
      default:
        break;
    }
  }
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
/// runtime's pinned memory, reported beside the arena: StagedGroups::pinned_by_category.)
/// @param p the rank's plan. @return the bytes.
std::size_t pinned_host_side_bytes(const ZeroPlan& p);

}  // namespace zt::zero
