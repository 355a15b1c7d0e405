// predict/zero_memory.cc — a ZeRO rank's ledger: the persistent categories' closed forms, the
// transient ones read off the predicted trace, and the chapters' closed forms of C_B and of the
// stage-3 gathered window (see zero_memory.h).
#include "predict/zero_memory.h"

#include <algorithm>
#include <set>
#include <vector>

#include "collective/staged_collective.h"
#include "model/workspace.h"
#include "offload/param_file_tier.h"
#include "offload/tier.h"
#include "predict/zero_trace.h"
#include "schedule/buckets.h"
#include "schedule/gather_window.h"
#include "train/memory_plan.h"
#include "zero/dp_calls.h"
#include "zero_r/partitioned_checkpoints.h"

namespace zt::predict {

using namespace zt::zero;

std::vector<SetupAllocation> setup_allocations(const ZeroPlan& p) {
  std::vector<SetupAllocation> out;
  const Layout& l = p.layout;
  const bool fp32 = p.shape.precision == model::Precision::fp32;
  const std::size_t t = model::bytes_of(p.shape.precision);
  if (p.params_layout.total)  // Σ_u shard_u or full_u (per-unit S_p); --offload-params: persistent units only
    out.push_back({train::category::params, p.params_layout.total * t});
  if (p.offload_params)  // the parameter tier's ring: R buffers of the largest shard
    out.push_back({offload::kParamBuffersCategory, p.param_buffers * p.largest_param_record() * t});
  if (!p.offload_optimizer) {  // ZeRO-Offload: both in the host tier (predict_host_memory)
    if (!fp32) out.push_back({train::category::master, l.total(p.spec.optimizer) * 4});  // S_o
    out.push_back(
        {train::category::optimizer, l.total(p.spec.optimizer) * static_cast<std::size_t>(p.shape.optimizer_k - 4)});
  }
  const auto B = static_cast<int64_t>(p.shape.micro_batch);
  const model::ModelOptions o = p.model_options();
  out.push_back({train::category::activations, model::activation_bytes(p.shape.model, B, p.shape.precision, o)});
  if (o.checkpoint_activations && !p.partition_activations)
    out.push_back(
        {train::category::activation_checkpoints, model::checkpoint_bytes(p.shape.model, B, p.shape.precision, o)});
  out.push_back({train::category::scratch, model::scratch_bytes(p.shape.model, B, p.shape.precision, o)});
  const auto tokens = p.shape.micro_batch * static_cast<std::size_t>(p.shape.model.context);
  // the token ids and the held-out argmax ids (heldout_eval.h): on a device, host-side memory
  // (predict_host_memory)
  if (!p.shape.host_side) out.push_back({train::category::batch, (tokens + p.shape.micro_batch) * sizeof(int32_t)});
  // a pipeline stage (train_zero.cc's allocate_pipeline): a workspace and token ids per further
  // micro-batch in flight, the input gradient it sends (after the first stage), the last stage's
  // copy of wte
  for (std::size_t k = 1; k < p.pipe_slots; ++k) {
    out.push_back({train::category::activations, model::activation_bytes(p.shape.model, B, p.shape.precision, o)});
    if (o.checkpoint_activations)
      out.push_back(
          {train::category::activation_checkpoints, model::checkpoint_bytes(p.shape.model, B, p.shape.precision, o)});
    out.push_back({train::category::batch, (tokens + p.shape.micro_batch) * sizeof(int32_t)});
  }
  if (p.pipelined() && p.pp_rank > 0)
    out.push_back({zero_category::pipe_boundary, tokens * static_cast<std::size_t>(p.shape.model.width) * t});
  if (p.pipelined() && p.pp_rank == p.pp_size - 1)
    out.push_back(
        {zero_category::pipe_boundary, static_cast<std::size_t>(p.shape.model.vocab * p.shape.model.width) * t});
  out.push_back({train::category::norm_blocks, p.norm_floats * sizeof(float)});
  if (!p.shape.host_side) out.push_back({train::category::eval, tokens * sizeof(int32_t)});
  // ZeRO-R (zero_r/partitioned_checkpoints.h): P_a keeps L slices of S values here; P_a+cpu keeps
  // two staging slices here and the L slices on the host
  const std::size_t slice = checkpoint_slice_of(p) * t;
  if (p.partition_activations && !p.offload_activations)
    out.push_back({train::category::activation_checkpoints, static_cast<std::size_t>(p.shape.model.layers) * slice});
  if (p.offload_activations)
    for (int i = 0; i < 2; ++i) out.push_back({zero_r::category::staging, slice});
  return out;
}

ModelStateBytes predicted_model_states(const ZeroPlan& p) {
  const bool fp32 = p.shape.precision == model::Precision::fp32;
  StateWidths widths = state_widths(fp32, p.grad_storage_16bit ? 2 : 4, p.shape.optimizer_k);
  if (p.offload_optimizer) widths.master = widths.optimizer = 0;  // the accelerator tier holds neither
  // the run's (S_p, S_g, S_o), with stage 3's persistent units: exactly what the engine allocates
  ModelStateBytes b = model_states_bytes(p.sharding(), widths, p.layout.rank);
  if (p.offload_params) {  // the sharded units' compute copy is in the parameter tier's file
    for (std::size_t u = 0; u < p.layout.units.size(); ++u) {
      if (!p.params_sharded(u)) continue;
      const std::size_t shard = p.layout.units[u].shard, real = p.layout.shard_real(u, p.layout.rank);
      b.params -= widths.param * shard;
      b.padding -= widths.param * (shard - real);
    }
    b.total = b.params + b.grads + b.master + b.optimizer;
  }
  return b;
}

std::map<std::string, std::size_t> predict_zero_memory(const ZeroPlan& p, bool overlap, std::size_t heldout_rounds) {
  std::map<std::string, std::size_t> m;
  for (const auto& a : setup_allocations(p)) m[a.category] += a.bytes;  // live from set-up on
  // S_g: the step's gradient storage, one buffer of grad_extent(u) per unit at the stored width
  std::size_t grads = 0;
  for (std::size_t u = 0; u < p.layout.units.size(); ++u) grads += p.grad_extent(u) * (p.grad_storage_16bit ? 2 : 4);
  m[train::category::grads] = grads;
  // the transient categories: their peaks over the trace that replays the engine's schedules
  for (const auto& [category, bytes] : ledger_peaks(predicted_trace(p, overlap, heldout_rounds)))
    m.emplace(category, bytes);  // a persistent category keeps its closed form
  return m;
}

ReductionBuffers reduction_buffers_peak(const ZeroPlan& p) {
  ReductionBuffers r;
  if (!p.reduce_each_micro_batch || p.layout.world_size == 1) return r;
  const std::size_t width = schedule::wire16(p.landing) ? model::bytes_of(p.shape.precision) : 4;
  r.category = schedule::wire16(p.landing) ? zero_category::reduce_wire : zero_category::grad_leaf;
  for (std::size_t u = 0; u < p.layout.units.size(); ++u) {
    // a reduce-scatter's buckets are their own buffers; an all-reduce works on its landing alone
    const std::size_t buckets = schedule::scatters(p.landing) ? schedule::bucket_window(p.buckets[u]) : 0;
    const std::size_t landing = p.landing == schedule::Landing::leaf32_shard ? 0 : p.reduced_extent(u);
    r.bytes = std::max(r.bytes, (landing + buckets) * width);
  }
  return r;
}

std::size_t gathered_window_bytes(const ZeroPlan& p) {
  if (!p.spec.params) return 0;
  // per acquire position, the first position still held: the model releases a unit (or a split
  // block's units, acquired together) before it acquires the next (model/param_provider.h)
  std::vector<std::size_t> held_from, unit_elements;
  std::set<std::size_t> held;                                  // positions acquired, not released
  std::vector<std::size_t> held_at(p.layout.units.size(), 0);  // per unit: its held position
  for (const auto& c : p.calls) {
    const auto u = static_cast<std::size_t>(c.unit);
    if (c.kind == model::ProviderCall::Kind::acquire) {
      held.insert(held_at[u] = held_from.size());
      held_from.push_back(*held.begin());
    } else if (c.kind == model::ProviderCall::Kind::release) {
      held.erase(held_at[u]);
    }
  }
  for (const auto& unit : p.layout.units) unit_elements.push_back(unit.full);
  const schedule::GatherWindow w = schedule::gather_window(p.acquire_order, p.params_layout.sharded, p.prefetch);
  return schedule::gathered_window_peak(w, held_from, unit_elements) * model::bytes_of(p.shape.precision);
}

std::map<std::string, std::size_t> predict_host_memory(const ZeroPlan& p) {
  std::map<std::string, std::size_t> m = train::predict_single_rank_host_side(p.shape);  // on a device: ids
  if (p.shape.host_side && p.offload_params)  // on a device: the parameter tier's bounce record (pinned)
    m[offload::kParamStagingCategory] = p.largest_param_record() * model::bytes_of(p.shape.precision);
  if (p.shape.host_side) {  // on a device: the staged groups' rooms, sized for their largest calls
    const std::size_t rooms = dp_staging_rooms(p).total() + mp_staging_rooms(p).total();
    if (rooms) m[kCollectiveStagingCategory] = rooms;
  }
  if (p.offload_activations)
    m[train::category::activation_checkpoints] =
        static_cast<std::size_t>(p.shape.model.layers) * checkpoint_slice_of(p) * model::bytes_of(p.shape.precision);
  if (p.offload_optimizer) {  // ZeRO-Offload (offload/optimizer_tier.h)
    const Layout& l = p.layout;
    const auto K = static_cast<std::size_t>(p.shape.optimizer_k);
    std::size_t largest_record = 0, largest_owned = 0;  // e_u, and the real owned elements
    for (std::size_t u = 0; u < l.units.size(); ++u) {
      largest_record = std::max(largest_record, l.extent(u, p.spec.optimizer));
      largest_owned = std::max(largest_owned, p.owned_real(u));
    }
    if (p.offload_to_file) {  // B records of the largest unit, K bytes per element: master and moments
      m[offload::category::buffers] = p.offload_buffers * largest_record * K;
    } else {  // master (FP32 in every precision: with fp32 it is the host's copy) and moments, S_o extent
      m[train::category::master] = l.total(p.spec.optimizer) * 4;
      m[train::category::optimizer] = l.total(p.spec.optimizer) * (K - 4);
    }
    m[offload::category::grads] = largest_owned * (p.grad_storage_16bit ? 2 : 4);
    if (p.shape.precision != model::Precision::fp32) m[offload::category::params] = largest_owned * 2;
  }
  return m;
}

}  // namespace zt::predict
