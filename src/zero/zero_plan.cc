// zero/zero_plan.cc — derive a rank's plan from the settings (see zero_plan.h).
#include "zero/zero_plan.h"

#include <algorithm>

#include "core/check.h"
#include "model/manifest.h"
#include "model/precision.h"
#include "optim/grad_norm.h"

namespace zt::zero {

bool persistent_unit(std::size_t numel, std::size_t param_width, double persist_below_mb) {
  // DeepSpeed's stage3_param_persistence_threshold idea: a tiny unit costs a whole all-gather's
  // latency at every use for almost no memory; keeping it whole costs (N−1)/N · 2ψ_u bytes
  return static_cast<double>(numel * param_width) < persist_below_mb * 1048576.0;
}

std::vector<std::size_t> forward_acquire_order(const ZeroPlan& p) {
  std::vector<std::size_t> order = p.units_here;  // wte, the blocks' units, ln_f: the stage's, in order
  if (!p.pipelined()) order.push_back(0);         // the tied head; a last stage of several reads its received copy
  return order;
}

namespace {

// The step's acquires on a pipeline stage: per pass of its order, the forward's or the backward's
// (model/param_provider.h), the first stage's read of wte for the last stage first; the last
// stage's reads of wte are served from the copy it receives, never gathered.
std::vector<std::size_t> pipeline_acquire_order(const ZeroPlan& p) {
  const std::vector<std::size_t> fwd = forward_acquire_order(p);
  const model::Manifest& m = p.manifest;
  const bool first = p.pp_rank == 0, last = p.pp_rank == p.pp_size - 1;
  std::vector<std::size_t> bwd, order;
  if (last) bwd.push_back(m.units.size() - 1);  // ln_f (the head's wte is the received copy)
  for (int64_t l = model::stage_end(p.shape.model, p.pipe) - 1; l >= p.pipe.begin; --l)
    for (int u : m.layer_units[static_cast<std::size_t>(l)]) bwd.push_back(static_cast<std::size_t>(u));
  if (first) order.push_back(0);  // wte's values, sent to the last stage
  for (const auto& op :
       schedule::stage_order(p.pp_schedule, p.pp_size, p.pp_rank, static_cast<int>(p.micro_batches_per_rank))) {
    const auto& pass = op.kind == schedule::PipeOp::Kind::forward ? fwd : bwd;
    order.insert(order.end(), pass.begin(), pass.end());
  }
  return order;
}

/// ZeRO-R's P_a and the offload tiers: where activations, optimizer states and parameter shards
/// live besides the arena.
void plan_tiers(ZeroPlan& p, const train::RunOptions& c) {
  p.partition_activations = c.partition_activations != train::PartitionActivations::off;
  p.offload_activations = c.partition_activations == train::PartitionActivations::cpu;
  p.offload_optimizer = c.offloads_optimizer();
  p.offload_to_file = !c.offload_optimizer_dir().empty();
  if (p.offload_to_file)
    p.offload_buffers = std::min(static_cast<std::size_t>(c.offload_buffers), p.layout.units.size());
  p.offload_params = !c.offload_params_dir().empty() && p.spec.params;
  if (p.offload_params) {  // the sharded units' shards go to the file: nothing of them in params_
    p.param_buffers = std::max(static_cast<std::size_t>(c.offload_buffers), p.prefetch + 1);
    p.params_layout.total = 0;
    for (std::size_t u = 0; u < p.layout.units.size(); ++u) {
      p.params_layout.offsets[u] = p.params_layout.total;
      if (!p.params_sharded(u)) p.params_layout.total += p.layout.units[u].full;
    }
  }
}

/// The model's calls of one micro-batch and the acquire order the gathers follow (a pipeline
/// stage's: the whole step's, in its schedule).
void plan_calls(ZeroPlan& p) {
  p.calls = model::provider_calls(p.manifest, p.pipe);
  p.forward_calls = model::forward_call_count(p.manifest, p.pipe);
  if (p.pipelined())
    p.pipe_slots = static_cast<std::size_t>(schedule::peak_in_flight(
        schedule::stage_order(p.pp_schedule, p.pp_size, p.pp_rank, static_cast<int>(p.micro_batches_per_rank))));
  if (p.pipelined()) {
    p.acquire_order = pipeline_acquire_order(p);
  } else {
    for (const auto& call : p.calls)
      if (call.kind == model::ProviderCall::Kind::acquire)
        p.acquire_order.push_back(static_cast<std::size_t>(call.unit));
  }
}

}  // namespace

ZeroPlan make_zero_plan(const train::RunOptions& c, int64_t dataset_vocab, int dp_rank, int mp_rank, int pp_rank) {
  ZeroPlan p;
  p.shape = train::single_rank_shape(c, c.vocab ? c.vocab : dataset_vocab);
  ZT_CHECK(p.shape.model.vocab >= dataset_vocab, "--vocab ", p.shape.model.vocab,
           " is smaller than the dataset's alphabet of ", dataset_vocab, " tokens");
  // ZeRO shards each model-parallel rank's own units over its data-parallel group, or with hybrid
  // sharding over its shard group: G consecutive data-parallel ranks (collective/grid.h)
  p.dp_size = static_cast<std::size_t>(c.dp_size());
  p.dp_rank = static_cast<std::size_t>(dp_rank);
  const auto N = static_cast<std::size_t>(c.resolved_shard_group());
  p.mp = {c.mp_size, mp_rank};
  p.manifest = model::make_storage_manifest(p.shape.model, p.mp);
  // a pipeline stage holds its run of blocks' units (and the embeddings or ln_f at the ends)
  p.pp_size = static_cast<int>(c.pp_size);
  p.pp_rank = pp_rank;
  p.pp_schedule = c.pp_schedule;
  const auto offsets = schedule::split_offsets(c.resolved_pp_split());
  p.pp_offsets.assign(offsets.begin(), offsets.end());
  if (p.pipelined())
    p.pipe = {offsets[static_cast<std::size_t>(pp_rank)], offsets[static_cast<std::size_t>(pp_rank) + 1]};
  p.held.assign(p.manifest.units.size(), false);
  for (int u : model::stage_units(p.manifest, p.pipe)) p.held[static_cast<std::size_t>(u)] = true;
  for (std::size_t u = 0; u < p.held.size(); ++u)
    if (p.held[u]) p.units_here.push_back(u);
  p.layout = make_layout(p.manifest, N, p.dp_rank % N, static_cast<std::size_t>(c.norm_block), p.held);
  plan_reduction(p, c, N);
  const std::size_t param_width = model::bytes_of(p.shape.precision);
  std::vector<bool> params_sharded;
  for (const auto& u : p.layout.units) {
    ShardSpec s = p.spec;
    if (s.params && persistent_unit(u.numel, param_width, c.persist_below_mb)) s.params = false;
    p.unit_specs.push_back(s);
    params_sharded.push_back(s.params);
  }
  p.params_layout = state_layout(p.layout, params_sharded);
  if (p.stage == 2) {
    const std::size_t width = p.reduce_in_compute_type ? 2 : 4;
    p.bucket_elements = std::max<std::size_t>(1, static_cast<std::size_t>(c.bucket_mb * 1048576.0) / width);
  }
  p.landing = schedule::landing(p.reduce_scatters_grad, p.reduce_in_compute_type);
  for (const auto& u : p.layout.units)  // buckets cut a reduce-scatter; an all-reduce takes the whole unit
    p.buckets.push_back(schedule::unit_buckets(u.full, p.reduce_scatters_grad ? p.bucket_elements : 0));
  p.norm_floats = static_cast<std::size_t>(c.norm_block);
  p.prefetch = static_cast<std::size_t>(c.prefetch);
  plan_tiers(p, c);
  plan_calls(p);
  return p;
}

void plan_reduction(ZeroPlan& p, const train::RunOptions& c, std::size_t N) {
  p.stage = static_cast<int>(c.stage);
  p.spec = shard_spec_for_stage(p.stage, N);  // the paper's (S_p, S_g, S_o) of the stage
  // The schedule: S_g asks for a reduction after every micro-batch (resolved_grad_sync's default).
  p.reduce_each_micro_batch = c.resolved_grad_sync() == train::GradSync::micro_batch;
  // S_o: a rank updates only its shard, so the reduction need deliver only that (stage 1's
  // all-reduce variant keeps the whole reduced gradient, as plain data parallelism does).
  p.reduce_scatters_grad = p.spec.optimizer && !(p.stage == 1 && c.stage1_reduce == train::Stage1Reduce::all_reduce);
  // S_g as the run keeps it: a shard of the gradient survives the step only when each micro-batch
  // is reduce-scattered before the next is added. This differs from the stage's S_g in two cases:
  // stage 1 with --grad-sync micro-batch keeps only shards (S_g = 1 though the stage says 0), and
  // stages 2-3 with --grad-sync step accumulate the whole gradient before one reduce-scatter
  // (S_g = 0: stage 1's gradient memory). Stage 1's default reduce-scatter is not S_g: the step's
  // whole gradient is stored (S_g = 0) and only the reduction's result is a shard.
  p.spec.grads = p.reduce_scatters_grad && p.reduce_each_micro_batch;
  p.reduce_in_compute_type = c.precision != model::Precision::fp32 && c.reduce_dtype == train::ReduceDtype::compute;
  p.micro_batches_per_rank = static_cast<std::size_t>(c.micro_batches_per_rank());
  p.grad_storage_16bit = p.reduce_in_compute_type && p.micro_batches_per_rank == 1;
}

std::vector<std::vector<NormContribution>> mp_norm_contributions(const ZeroPlan& p, const model::PipeStage& stage) {
  std::vector<std::vector<NormContribution>> out(static_cast<std::size_t>(p.mp.size));
  for (int64_t q = 0; q < p.mp.size; ++q) {
    const model::Manifest m = model::make_storage_manifest(p.shape.model, {p.mp.size, q});
    for (int k : model::stage_units(m, stage)) {  // ascending; the same units on every q
      const auto& u = m.units[static_cast<std::size_t>(k)];
      if (u.block >= 0 || q == 0)
        out[static_cast<std::size_t>(q)].push_back(
            {u.global_index, norm_block_count(static_cast<std::size_t>(u.numel), p.layout.block)});
    }
  }
  return out;
}

offload::TierShape offload_tier_shape(const ZeroPlan& p) {
  offload::TierShape s;
  for (std::size_t u = 0; u < p.layout.units.size(); ++u) {
    s.extents.push_back(p.layout.extent(u, p.spec.optimizer));
    s.counts.push_back(p.owned_real(u));
  }
  s.moments = static_cast<std::size_t>(p.shape.optimizer_k - 4) / 4;
  s.grad_16bit = p.grad_storage_16bit;
  return s;
}

std::size_t checkpoint_slice_of(const ZeroPlan& p) {
  const std::size_t count = p.shape.micro_batch * p.shape.context * static_cast<std::size_t>(p.shape.model.width);
  const auto n = static_cast<std::size_t>(p.mp.size);
  return (count + n - 1) / n;
}

}  // namespace zt::zero
