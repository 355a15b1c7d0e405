// zero/zero_plan.h — everything a rank derives from the settings before training: the layout,
// the stage's ShardSpec, the schedule, bucket size, and what each gradient buffer spans.
//
// The step engine (train_zero.cc) and the memory prediction (zero_memory.h) both read this one
// plan, so measured and predicted bytes come from one description. It allocates nothing.
#pragma once

#include <cstddef>
#include <vector>

#include "memory/model_states.h"
#include "train/memory_plan.h"
#include "train/train_config.h"
#include "zero/layout.h"

namespace zt::zero {

/// Ledger categories the ZeRO engine adds to the single-rank ones (train/memory_plan.h).
namespace zero_category {
inline constexpr const char* gathered_params = "gathered_params";  ///< stage 3: units gathered for use
inline constexpr const char* grad_leaf = "grad_leaf";      ///< FP32 micro-batch gradient before its reduction
inline constexpr const char* reduce_wire = "reduce_wire";  ///< 16-bit copy reduced with --reduce-dtype compute
}  // namespace zero_category

/// The derived plan of one rank.
struct ZeroPlan {
  train::SingleRankShape shape;  ///< model, precision, ψ, K, b (micro_batches = the global M)
  Layout layout;                 ///< padded units, this rank's offsets
  ShardSpec spec;                ///< S_p, S_g, S_o of the stage, N
  /// Per unit: what is sharded of it. `spec` for every unit, except in stage 3 with
  /// --persist-below-mb, where a unit whose compute-dtype parameters are smaller than the
  /// threshold keeps them whole (S_p = 0: a ZeRO-2 unit in a ZeRO-3 run, never gathered per use).
  std::vector<ShardSpec> unit_specs;
  StateLayout params_layout;     ///< the parameter storage: shard_u or full_u per unit
  int stage = 0;                 ///< 0..3
  bool micro_sync = false;       ///< --grad-sync micro-batch
  bool grad_shard = false;       ///< the reduced gradient is this rank's shard (reduce-scatter)
  bool reduce_compute = false;   ///< reduce in the 16-bit compute type (16-bit precision only)
  /// The gradient storage is 16-bit (s_g = 2): --reduce-dtype compute with one micro-batch per
  /// rank, as in the reference loop; otherwise it is the FP32 accumulator (s_g = 4).
  bool grads_in_compute_type = false;
  std::size_t micro_batches_per_rank = 1;  ///< A
  std::size_t bucket_elements = 0;  ///< stage 2: elements per bucket (0: one call per unit)
  std::size_t norm_floats = 0;      ///< FP32 window of the norm and the initialiser (b)
  /// Units in the order one micro-batch acquires them (model/param_provider.h): forward
  /// 0, 1..L, L+1, 0 (tied head), backward 0 (head), L+1, L..1. Stage 3 gathers in this order.
  std::vector<std::size_t> acquire_order;
  std::size_t prefetch = 0;  ///< stage 3: gathers issued ahead of the unit in use

  /// Whether unit u's parameters are sharded (gathered before each use). @param u unit.
  /// @return S_p of the unit.
  bool params_sharded(std::size_t u) const { return unit_specs[u].params; }
  /// Whether unit u is a persistent unit of stage 3 (parameters kept whole). @param u unit.
  /// @return true when the stage shards parameters and this unit does not.
  bool persistent(std::size_t u) const { return spec.params && !unit_specs[u].params; }
  /// The sharding description of this plan: the stage's spec and the per-unit exceptions.
  /// @return the description.
  ShardingDescription sharding() const { return sharding_description(layout, spec, unit_specs); }
  /// Elements a rank holds of unit u after its gradient is reduced. @param u unit.
  /// @return shard_u when reduce-scattered, else full_u.
  std::size_t reduced_extent(std::size_t u) const { return layout.extent(u, grad_shard); }
  /// Elements of each buffer in unit u's micro-batch accumulator. @param u unit.
  /// @return the reduced extent under micro-batch sync (N > 1), else full_u.
  std::size_t accumulator_extent(std::size_t u) const {
    return micro_sync && layout.world_size > 1 ? reduced_extent(u) : layout.units[u].full;
  }
};

/// Whether a unit keeps its parameters whole under --persist-below-mb (stage 3 only).
/// @param numel the unit's real elements. @param param_width bytes per compute-dtype parameter.
/// @param persist_below_mb the threshold in MiB (0: off). @return numel · width < threshold.
bool persistent_unit(std::size_t numel, std::size_t param_width, double persist_below_mb);

/// Build the plan. @param c validated settings. @param dataset_vocab the dataset's alphabet
/// (used when --vocab is 0). @param rank this rank. @return the plan.
ZeroPlan make_zero_plan(const train::TrainConfig& c, int64_t dataset_vocab, int rank);

}  // namespace zt::zero
