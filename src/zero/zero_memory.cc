// zero/zero_memory.cc — closed forms of a ZeRO rank's ledger (see zero_memory.h).
#include "zero/zero_memory.h"

#include <algorithm>
#include <vector>

#include "model/workspace.h"
#include "offload/param_file_tier.h"
#include "offload/tier.h"
#include "reduce/canonical_tree.h"

namespace zt::zero {

namespace {

std::size_t popcount(std::size_t x) {
  std::size_t n = 0;
  for (; x; x &= x - 1) ++n;
  return n;
}

/// The units whose gradient is final, in the order of one micro-batch's grad_done calls: the order
/// in which each unit's accumulator receives a leaf.
std::vector<std::size_t> push_order(const ZeroPlan& p) {
  std::vector<std::size_t> order;
  for (const auto& c : p.calls)
    if (c.kind == model::ProviderCall::Kind::grad_done) order.push_back(static_cast<std::size_t>(c.unit));
  return order;
}

/// Peak bytes of the accumulators' extra partial sums (beyond each unit's first buffer): units
/// push in grad_done order every micro-batch; after j pushes a unit holds popcount(j) buffers
/// (binary counter), and while pushing leaf j it briefly holds popcount(j-1)+1.
std::size_t partials_peak(const ZeroPlan& p) {
  const std::vector<std::size_t> order = push_order(p);
  std::size_t peak = 0;
  for (std::size_t j = 1; j <= p.micro_batches_per_rank; ++j) {
    const std::size_t before = popcount(j - 1), after = popcount(j);
    for (std::size_t i = 0; i < order.size(); ++i) {  // order[i] is being pushed; order[0, i) already were
      std::size_t bytes = before * p.grad_extent(order[i]) * 4;
      for (std::size_t k = 0; k < order.size(); ++k) {
        if (k == i) continue;
        const std::size_t live = k < i ? after : before;
        bytes += (live > 0 ? live - 1 : 0) * p.grad_extent(order[k]) * 4;
      }
      peak = std::max(peak, bytes);
    }
  }
  return peak;
}

/// Peak bytes of the model's gradient outputs: grad(u) takes a full unit until grad_done(u)
/// (unit 0's slot spans the backward; a split block's units are all open at once).
std::size_t staging_peak(const ZeroPlan& p, std::size_t width) {
  std::size_t live = 0, peak = 0;
  for (const auto& c : p.calls) {
    const std::size_t bytes = p.layout.units[static_cast<std::size_t>(c.unit)].full * width;
    if (c.kind == model::ProviderCall::Kind::grad) peak = std::max(peak, live += bytes);
    if (c.kind == model::ProviderCall::Kind::grad_done) live -= bytes;
  }
  return peak;
}

/// Peak bytes of stage 3's gathered units: replays one micro-batch of UnitGatherer — at the i-th
/// acquire the gathers of this use and of the next --prefetch sharded uses are in flight, a
/// gathered unit is freed at its release; persistent units are never gathered.
std::size_t gathered_peak(const ZeroPlan& p, std::size_t width) {
  std::vector<std::size_t> gather_positions, gathers_before;
  for (std::size_t i = 0; i < p.acquire_order.size(); ++i) {
    gathers_before.push_back(gather_positions.size());
    if (p.params_sharded(p.acquire_order[i])) gather_positions.push_back(i);
  }
  if (gather_positions.empty()) return 0;
  std::vector<std::size_t> in_use(p.layout.units.size(), 0);
  std::size_t live = 0, peak = 0, issued = 0, at = 0;
  for (const auto& c : p.calls) {
    const auto u = static_cast<std::size_t>(c.unit);
    if (c.kind == model::ProviderCall::Kind::acquire) {
      const std::size_t last =
          std::min(gather_positions.size(), gathers_before[at] + (p.params_sharded(u) ? 1 : 0) + p.prefetch);
      for (; issued < last; ++issued) live += p.layout.units[p.acquire_order[gather_positions[issued]]].full * width;
      peak = std::max(peak, live);
      if (p.params_sharded(u)) in_use[u] = p.layout.units[u].full * width;
      ++at;
    } else if (c.kind == model::ProviderCall::Kind::release) {
      live -= in_use[u];
      in_use[u] = 0;
    }
  }
  return peak;
}

}  // namespace

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

std::map<std::string, std::size_t> predict_zero_memory(const ZeroPlan& p) {
  std::map<std::string, std::size_t> m;
  const Layout& l = p.layout;
  const bool fp32 = p.shape.precision == model::Precision::fp32;
  const std::size_t t = model::bytes_of(p.shape.precision);
  if (p.params_layout.total)  // Σ_u shard_u or full_u (per-unit S_p); --offload-params: persistent units only
    m[train::category::params] = p.params_layout.total * t;
  if (p.offload_params) {  // the parameter tier's ring: R buffers of the largest shard
    std::size_t largest_shard = 0;
    for (std::size_t u = 0; u < l.units.size(); ++u)
      if (p.params_sharded(u)) largest_shard = std::max(largest_shard, l.units[u].shard);
    m[offload::kParamBuffersCategory] = p.param_buffers * largest_shard * t;
  }
  if (!p.offload_optimizer) {  // ZeRO-Offload: both in the host tier (predict_host_memory)
    if (!fp32) m[train::category::master] = l.total(p.spec.optimizer) * 4;
    m[train::category::optimizer] = l.total(p.spec.optimizer) * static_cast<std::size_t>(p.shape.optimizer_k - 4);
  }
  const auto B = static_cast<int64_t>(p.shape.micro_batch);
  const model::ModelOptions o = p.model_options();
  m[train::category::activations] = model::activation_bytes(p.shape.model, B, p.shape.precision, o);
  const std::size_t slices = checkpoint_slice_of(p) * model::bytes_of(p.shape.precision);
  if (o.checkpoint_activations && !p.partition_activations)
    m[train::category::activation_checkpoints] = model::checkpoint_bytes(p.shape.model, B, p.shape.precision, o);
  else if (p.partition_activations && !p.offload_activations)  // P_a: L slices of S values
    m[train::category::activation_checkpoints] = static_cast<std::size_t>(p.shape.model.layers) * slices;
  else if (p.offload_activations)  // P_a+cpu: two staging slices here, the L slices on the host
    m["checkpoint_staging"] = 2 * slices;
  m[train::category::scratch] = model::scratch_bytes(p.shape.model, B, p.shape.precision, o);
  const auto tokens = p.shape.micro_batch * static_cast<std::size_t>(p.shape.model.context);
  m[train::category::batch] = (tokens + p.shape.micro_batch) * sizeof(int32_t);
  m[train::category::norm_blocks] = p.norm_floats * sizeof(float);
  m[train::category::eval] = tokens * sizeof(int32_t);  // held-out argmax ids (zero/heldout_eval.h), as the reference
  // gradient storage: one FP32 accumulator buffer per unit; the canonical tree's extra partials
  std::size_t grads = 0;
  for (std::size_t u = 0; u < l.units.size(); ++u) grads += p.grad_extent(u) * (p.grad_storage_16bit ? 2 : 4);
  m[train::category::grads] = grads;
  if (p.micro_batches_per_rank > 1) m[train::category::accum_partials] = partials_peak(p);
  // the model's 16-bit (or FP32) output: unit 0's slot spans the backward, one block's units at a time
  m[train::category::grad_staging] = staging_peak(p, t);
  std::size_t largest_unit = 0;
  for (const auto& u : l.units) largest_unit = std::max(largest_unit, u.full);
  const bool reduces = l.world_size > 1;
  // reduced after every micro-batch (grad_reducer.h): one unit at a time (the next grad_done
  // completes the previous one); an all-reduce holds the whole unit, a reduce-scatter the shard it
  // lands in plus at most two bucket buffers (C_B), issued from the unit's last bucket
  if (reduces && p.reduce_each_micro_batch) {
    std::size_t peak = 0;
    for (const auto& u : l.units) {
      const std::size_t b = p.bucket_elements ? std::min(p.bucket_elements, u.full) : u.full;
      const std::size_t buckets = (u.full + b - 1) / b, last = u.full - (buckets - 1) * b;
      const std::size_t in_flight = buckets == 1 ? u.full : buckets == 2 ? last + b : 2 * b;
      // FP32: the reduce-scatters land in the unit's next accumulator leaf (grads or
      // accum_partials), only the buckets are temporary; 16 bits: the shard is a wire buffer too
      const std::size_t landing = p.reduce_in_compute_type ? u.shard : 0;
      peak = std::max(peak, p.reduce_scatters_grad ? landing + in_flight : u.full);
    }
    m[p.reduce_in_compute_type ? zero_category::reduce_wire : zero_category::grad_leaf] =
        peak * (p.reduce_in_compute_type ? 2 : 4);
  }
  // the step's sum reduced once on a 16-bit wire: a copy of each unit (unless the 16-bit gradient
  // storage is itself the wire)
  if (reduces && !p.reduce_each_micro_batch && p.reduce_in_compute_type && !p.grad_storage_16bit)
    m[zero_category::reduce_wire] = largest_unit * 2;
  // stage 3: the units in use and up to --prefetch gathered ahead, along the acquire order
  if (const std::size_t peak = gathered_peak(p, t)) m[zero_category::gathered_params] = peak;
  return m;
}

std::map<std::string, std::size_t> predict_host_memory(const ZeroPlan& p) {
  std::map<std::string, std::size_t> m;
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

std::vector<ArenaEvent> gradient_events(const ZeroPlan& p) {
  struct Token {
    uint64_t id = 0;
    std::size_t bytes = 0;
    std::string category;
  };
  std::vector<ArenaEvent> events;
  uint64_t next = 0;
  const auto merge = [&](Token& left, Token&& right) {
    (void)left;
    events.push_back({false, right.id, right.bytes, right.category});
  };
  std::vector<CanonicalAccumulator<Token, decltype(merge)>> acc(p.layout.units.size(),
                                                                CanonicalAccumulator<Token, decltype(merge)>(merge));
  const std::size_t width = p.grad_storage_16bit ? 2 : 4;
  for (std::size_t j = 0; j < p.micro_batches_per_rank; ++j)
    for (std::size_t u : push_order(p)) {
      // the first live buffer of a step is the unit's gradient storage, the others partial sums
      Token leaf{next++, p.grad_extent(u) * width,
                 acc[u].live_partials() == 0 ? train::category::grads : train::category::accum_partials};
      events.push_back({true, leaf.id, leaf.bytes, leaf.category});
      acc[u].push(std::move(leaf));
    }
  for (auto& a : acc) {  // finish() merges what is left; the sums live until the step's end
    Token sum = a.finish();
    events.push_back({false, sum.id, sum.bytes, sum.category});
  }
  return events;
}

}  // namespace zt::zero
