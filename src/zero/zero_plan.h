// zero/zero_plan.h — everything a rank derives from the settings before training: the layout,
// the stage's ShardSpec, the schedule, bucket size, and what each gradient buffer spans.
//
// The step engine (train_zero.cc) and the memory prediction (zero_memory.h) both read this one
// plan, so measured and predicted bytes come from one description. It allocates nothing.
#pragma once

#include <cstddef>
#include <vector>

#include "memory/model_states.h"
#include "model/manifest.h"
#include "model/param_provider.h"
#include "model/tensor_parallel.h"
#include "model/workspace.h"
#include "offload/tier.h"
#include "schedule/buckets.h"
#include "schedule/pipeline.h"
#include "train/memory_plan.h"
#include "train/run_options.h"
#include "zero/layout.h"

namespace zt::zero {

/// Ledger categories the ZeRO engine adds to the single-rank ones (train/memory_plan.h).
namespace zero_category {
inline constexpr const char* gathered_params = "gathered_params";  ///< stage 3: units gathered for use
inline constexpr const char* grad_leaf = "grad_leaf";              ///< FP32 micro-batch gradient before its reduction
inline constexpr const char* reduce_wire = "reduce_wire";          ///< 16-bit copy reduced with --reduce-dtype compute
/// A pipeline stage's own transfer buffers: the input gradient being sent, the last stage's wte copy.
inline constexpr const char* pipe_boundary = "pipe_boundary";
}  // namespace zero_category

/// A pipeline stage's part of a plan (schedule/pipeline.h, pipeline/stage_runner.h).
struct PipelinePlan {
  int pp_size = 1;                         ///< N_p, pipeline stages
  int pp_rank = 0;                         ///< this rank's stage
  model::PipeStage pipe;                   ///< its blocks (every block when N_p = 1)
  std::vector<int64_t> pp_offsets{0, -1};  ///< every stage's first block, and L (N_p + 1 entries)
  schedule::PipeSchedule pp_schedule{};    ///< the order of the step's passes
  /// Per unit: held by this stage. A unit another stage holds stays in the layout with 0
  /// elements, so unit indices are the manifest's on every stage.
  std::vector<bool> held;
  std::vector<std::size_t> units_here;  ///< the held units, in order: the ones a step touches
  /// Workspaces (activations, checkpoints, token ids) held at once: the micro-batches in flight on
  /// this stage (schedule::peak_in_flight: GPipe M, 1F1B min(N_p - s, M)); 1 without a pipeline.
  std::size_t pipe_slots = 1;
  /// Whether this rank runs a pipeline stage of several. @return N_p > 1.
  bool pipelined() const { return pp_size > 1; }
};

/// Where a plan keeps what is not in the rank's arena: ZeRO-R's partitioned activations and the
/// offload tiers (zero_r/, offload/).
struct TierPlan {
  /// ZeRO-R: activation checkpoints as 1/N_m slices (P_a, zero_r/partitioned_checkpoints.h)
  bool partition_activations = false;
  bool offload_activations = false;  ///< P_a+cpu: the slices in the host tier
  // ZeRO-Offload (chapter 14, offload/optimizer_tier.h): --offload-optimizer host or file:DIR
  bool offload_optimizer = false;   ///< FP32 master, optimizer state and the update in the host tier
  bool offload_to_file = false;     ///< ... kept in a file per rank, streamed through the host tier
  std::size_t offload_buffers = 0;  ///< the file tier's ring: min(--offload-buffers, units)
  /// --offload-params file:DIR (stage 3): the sharded units' compute-dtype shards live in a file
  /// per rank (offload/param_file_tier.h), not in params_layout (their extent there is 0)
  bool offload_params = false;
  std::size_t param_buffers = 0;  ///< the parameter tier's ring: max(--offload-buffers, --prefetch + 1)
};

/// The derived plan of one rank: its sharding (below), composed with its pipeline stage's part
/// (PipelinePlan) and where its tiers keep what is not in the arena (TierPlan).
///
/// The stage is the paper's (S_p, S_g, S_o) in `spec` — what a rank keeps of each model state
/// across a step — and everything else the step engine reads is derived from it and the schedule
/// in make_zero_plan, in one place:
///   reduce_each_micro_batch  the schedule: --grad-sync micro-batch (default: the stage's S_g —
///                            a gradient can only be kept as a shard if every micro-batch's is
///                            reduced before the next one is added to it)
///   reduce_scatters_grad     the reduction delivers only this rank's shard: S_o (a rank updates
///                            only its shard, so that is all it needs of the summed gradient)
///   spec.grads (S_g)         what the run actually keeps: reduce_scatters_grad and
///                            reduce_each_micro_batch (see make_zero_plan for when this differs
///                            from the stage's own S_g)
struct ZeroPlan : PipelinePlan, TierPlan {
  train::SingleRankShape shape;  ///< model, precision, ψ, K, b (micro_batches = the global M)
  model::MpPlacement mp;         ///< this rank's model-parallel placement (N_m = 1: none)
  model::Manifest manifest;      ///< the units this model-parallel rank stores (model/manifest.h)
  Layout layout;                 ///< its padded units over the shard group (G ranks), this rank's offsets
  /// The data-parallel group: N_d ranks, each computing its own micro-batches. ZeRO shards over
  /// all of them (layout.world_size = N_d), or, with hybrid sharding (--shard-group G), over
  /// groups of G consecutive ones (layout.world_size = G, layout.rank = dp_rank mod G), the states
  /// replicated across the N_d / G groups.
  std::size_t dp_size = 1;
  std::size_t dp_rank = 0;  ///< this rank in the data-parallel group
  int stage = 0;            ///< 0..3
  ShardSpec spec;           ///< S_p, S_g, S_o this run keeps, and N
  /// Per unit: what is sharded of it. `spec` for every unit, except in stage 3 with
  /// --persist-below-mb, where a unit whose compute-dtype parameters are smaller than the
  /// threshold keeps them whole (S_p = 0: a ZeRO-2 unit in a ZeRO-3 run, never gathered per use).
  std::vector<ShardSpec> unit_specs;
  StateLayout params_layout;  ///< the parameter storage: shard_u or full_u per unit (S_p per unit)
  // ---- derived from spec and the schedule (make_zero_plan) ----
  bool reduce_each_micro_batch = false;  ///< reduce every micro-batch's gradient (--grad-sync micro-batch)
  bool reduce_scatters_grad = false;     ///< the reduced gradient is this rank's S_o shard (reduce-scatter)
  bool reduce_in_compute_type = false;   ///< gradients travel and are summed as 16-bit values
  /// The gradient storage is 16-bit (s_g = 2): --reduce-dtype compute with one micro-batch per
  /// rank, as in the reference loop; otherwise it is the FP32 accumulator (s_g = 4).
  bool grad_storage_16bit = false;
  std::size_t micro_batches_per_rank = 1;  ///< A
  std::size_t bucket_elements = 0;         ///< stage 2: elements per reduce-scatter call (0: one per unit)
  std::size_t norm_floats = 0;             ///< FP32 window of the norm and the initialiser (b)
  /// Where a unit's per-micro-batch reduction lands (schedule/buckets.h): from reduce_scatters_grad
  /// and reduce_in_compute_type.
  schedule::Landing landing = schedule::Landing::all_reduce_unit32;
  /// Per unit: its reduction's buckets in issue order (C_B: --bucket-mb when reduce-scattered with
  /// buckets, else the whole unit).
  std::vector<schedule::UnitBuckets> buckets;
  /// The model's provider calls of one micro-batch (model/param_provider.h): the memory
  /// prediction replays them.
  std::vector<model::ProviderCall> calls;
  std::size_t forward_calls = 0;  ///< how many of `calls` are the forward's (the rest: backward's)
  /// Units in the order one micro-batch acquires them: forward 0, each block's units, ln_f, 0
  /// (tied head), backward 0 (head), ln_f, each block's units from the last block. Stage 3 gathers
  /// in this order. With a pipeline: the whole step's acquires on this stage, pass after pass in
  /// the schedule's order (the first stage's send of wte first; a last stage's reads of wte come
  /// from the copy it receives and are not here), one gather window of the step program.
  std::vector<std::size_t> acquire_order;
  std::size_t prefetch = 0;  ///< stage 3: gathers issued ahead of the unit in use
  /// Whether unit u's compute-dtype shard is in the parameter tier's file. @param u unit.
  /// @return S_p of the unit with --offload-params.
  bool params_in_file(std::size_t u) const { return offload_params && params_sharded(u); }
  /// The parameter tier's largest record: the largest shard of a unit in the file, in elements
  /// (each of the ring's buffers holds one; 0 without --offload-params). @return it.
  std::size_t largest_param_record() const {
    std::size_t largest = 0;
    for (std::size_t u = 0; u < layout.units.size(); ++u)
      if (params_in_file(u) && layout.units[u].shard > largest) largest = layout.units[u].shard;
    return largest;
  }

  /// The model options of this rank: its placement and the run's checkpointing. @return them.
  model::ModelOptions model_options() const { return {mp, shape.checkpoint_activations, partition_activations, pipe}; }
  /// Which copy of the states this rank's shard group holds (0 without hybrid sharding).
  /// @return dp_rank / G.
  std::size_t replica_rank() const { return dp_rank / layout.world_size; }
  /// Whether unit u's parameters are sharded (gathered before each use). @param u unit.
  /// @return S_p of the unit.
  bool params_sharded(std::size_t u) const { return unit_specs[u].params; }
  /// Whether unit u is a persistent unit of stage 3 (parameters kept whole). @param u unit.
  /// @return true when the stage shards parameters and this unit does not.
  bool persistent(std::size_t u) const { return spec.params && !unit_specs[u].params; }
  /// The sharding description of this plan: the spec and the per-unit exceptions.
  /// @return the description.
  ShardingDescription sharding() const { return sharding_description(layout, spec, unit_specs); }
  /// Elements a rank holds of unit u after its gradient is reduced. @param u unit.
  /// @return shard_u when reduce-scattered, else full_u.
  std::size_t reduced_extent(std::size_t u) const { return layout.extent(u, reduce_scatters_grad); }
  /// Elements of unit u's gradient storage (each buffer of its accumulator). @param u unit.
  /// @return shard_u with S_g, else full_u.
  std::size_t grad_extent(std::size_t u) const { return layout.extent(u, spec.grads); }
  /// Real elements of unit u this rank's optimizer updates (its owned slice). @param u unit.
  /// @return the shard's real elements with S_o, else numel_u.
  std::size_t owned_real(std::size_t u) const {
    return spec.optimizer ? layout.shard_real(u, layout.rank) : layout.units[u].numel;
  }
};

/// The units one forward pass gathers, in order (stage 3; model/param_provider.h): 0, the blocks'
/// units, ln_f, 0 for the tied head — on a pipeline stage the parts it runs, without the tied
/// head's read on a last stage of several (it reads the received copy). @param p the plan.
/// @return unit indices.
std::vector<std::size_t> forward_acquire_order(const ZeroPlan& p);

/// Whether a unit keeps its parameters whole under --persist-below-mb (stage 3 only).
/// @param numel the unit's real elements. @param param_width bytes per compute-dtype parameter.
/// @param persist_below_mb the threshold in MiB (0: off). @return numel · width < threshold.
bool persistent_unit(std::size_t numel, std::size_t param_width, double persist_below_mb);

/// One unit's share of the model's gradient norm: its index among the whole model's units and its
/// number of norm blocks (optim/grad_norm.h).
struct NormContribution {
  int global_unit = 0;     ///< UnitInfo::global_index
  std::size_t blocks = 0;  ///< norm_block_count(numel, b)
};

/// Per model-parallel rank q: the units whose norm block sums q contributes to the whole model's
/// norm — its tensor-parallel units, and for q = 0 also the replicated ones (the same on every
/// rank) — in the one-device unit order. One rank, q = 0, without model parallelism. On a pipeline,
/// the units of one stage (a shard boundary is a multiple of the block, so the shards' blocks add
/// up to the unit's). @param p a rank's plan. @param stage the stage (a rank's own: p.pipe).
/// @return one list per model-parallel rank.
std::vector<std::vector<NormContribution>> mp_norm_contributions(const ZeroPlan& p, const model::PipeStage& stage);

/// The owned elements a state store (offload/state_store.h: this arena, the host tier, a file)
/// keeps for this rank: e_u (S_o extent), the real count, (K − 4)/4 moments, the gradient width.
/// @param p a plan. @return the shape.
offload::TierShape offload_tier_shape(const ZeroPlan& p);

/// Values of one P_a checkpoint slice: ceil(B T C / N_m) (zero_r/partitioned_checkpoints.h).
/// @param p a plan. @return S.
std::size_t checkpoint_slice_of(const ZeroPlan& p);

/// The step's reduction rules, the part of the plan the settings alone decide: the stage, its
/// (S_p, S_g, S_o) over N ranks with S_g as the run keeps it, reduce_each_micro_batch,
/// reduce_scatters_grad, reduce_in_compute_type, micro_batches_per_rank and grad_storage_16bit.
/// make_zero_plan starts from them; the run summary (report/run_summary.h) reads them.
/// @param p the plan to fill. @param c validated settings. @param N the ranks ZeRO shards over.
void plan_reduction(ZeroPlan& p, const train::RunOptions& c, std::size_t N);

/// Build the plan. @param c validated settings. @param dataset_vocab the dataset's alphabet
/// (used when --vocab is 0). @param dp_rank this rank in its data-parallel group (all N_d ranks,
/// also with hybrid sharding).
/// @param mp_rank this rank in its model-parallel group (0 without model parallelism).
/// @param pp_rank this rank's pipeline stage (0 without a pipeline).
/// @return the plan.
ZeroPlan make_zero_plan(const train::RunOptions& c, int64_t dataset_vocab, int dp_rank, int mp_rank = 0,
                        int pp_rank = 0);

}  // namespace zt::zero
