// zero/zero_memory.cc — closed forms of a ZeRO rank's ledger (see zero_memory.h).
#include "zero/zero_memory.h"

#include <algorithm>
#include <vector>

#include "model/workspace.h"

namespace zt::zero {

namespace {

std::size_t popcount(std::size_t x) {
  std::size_t n = 0;
  for (; x; x &= x - 1) ++n;
  return n;
}

/// Peak bytes of the accumulators' extra partial sums (beyond each unit's first buffer): units
/// push in backward order (L+1, L, ..., 0) every micro-batch; after j pushes a unit holds
/// popcount(j) buffers (binary counter), and while pushing leaf j it briefly holds popcount(j-1)+1.
std::size_t partials_peak(const ZeroPlan& p) {
  const std::size_t U = p.layout.units.size();
  std::size_t peak = 0;
  for (std::size_t j = 1; j <= p.micro_batches_per_rank; ++j) {
    const std::size_t before = popcount(j - 1), after = popcount(j);
    for (std::size_t x = U; x-- > 0;) {  // x is being pushed; units above it already were
      std::size_t bytes = before * p.grad_extent(x) * 4;
      for (std::size_t v = 0; v < U; ++v) {
        if (v == x) continue;
        const std::size_t live = v > x ? after : before;
        bytes += (live > 0 ? live - 1 : 0) * p.grad_extent(v) * 4;
      }
      peak = std::max(peak, bytes);
    }
  }
  return peak;
}

}  // namespace

ModelStateBytes predicted_model_states(const ZeroPlan& p) {
  const bool fp32 = p.shape.precision == model::Precision::fp32;
  const StateWidths widths = state_widths(fp32, p.grad_storage_16bit ? 2 : 4, p.shape.optimizer_k);
  // the run's (S_p, S_g, S_o), with stage 3's persistent units: exactly what the engine allocates
  return model_states_bytes(p.sharding(), widths, p.layout.rank);
}

std::map<std::string, std::size_t> predict_zero_memory(const ZeroPlan& p) {
  std::map<std::string, std::size_t> m;
  const Layout& l = p.layout;
  const bool fp32 = p.shape.precision == model::Precision::fp32;
  const std::size_t t = model::bytes_of(p.shape.precision);
  m[train::category::params] = p.params_layout.total * t;  // Σ_u shard_u or full_u (per-unit S_p)
  if (!fp32) m[train::category::master] = l.total(p.spec.optimizer) * 4;
  m[train::category::optimizer] = l.total(p.spec.optimizer) * static_cast<std::size_t>(p.shape.optimizer_k - 4);
  const auto B = static_cast<int64_t>(p.shape.micro_batch);
  m[train::category::activations] = model::activation_bytes(p.shape.model, B, p.shape.precision);
  m[train::category::scratch] = model::scratch_bytes(p.shape.model, B, p.shape.precision);
  const auto tokens = p.shape.micro_batch * static_cast<std::size_t>(p.shape.model.context);
  m[train::category::batch] = (tokens + p.shape.micro_batch) * sizeof(int32_t);
  m[train::category::norm_blocks] = p.norm_floats * sizeof(float);
  m[train::category::eval] = tokens * sizeof(int32_t);  // held-out argmax ids (zero/heldout_eval.h), as the reference
  // gradient storage: one FP32 accumulator buffer per unit; the canonical tree's extra partials
  std::size_t grads = 0, largest_full = 0, largest_leaf = 0;
  for (std::size_t u = 0; u < l.units.size(); ++u) {
    grads += p.grad_extent(u) * (p.grad_storage_16bit ? 2 : 4);
    if (u > 0) largest_full = std::max(largest_full, l.units[u].full);
    largest_leaf = std::max(largest_leaf, l.units[u].full + (p.reduce_scatters_grad ? l.units[u].shard : 0));
  }
  m[train::category::grads] = grads;
  if (p.micro_batches_per_rank > 1) m[train::category::accum_partials] = partials_peak(p);
  // the model's 16-bit (or FP32) output: unit 0's slot spans the backward, one other at a time
  m[train::category::grad_staging] = (l.units[0].full + largest_full) * t;
  std::size_t largest_unit = 0;
  for (const auto& u : l.units) largest_unit = std::max(largest_unit, u.full);
  const bool reduces = l.world_size > 1;
  // one reduction in flight at a time: the next grad_done completes it before starting its own
  if (reduces && p.reduce_each_micro_batch && !p.reduce_in_compute_type) m[zero_category::grad_leaf] = largest_leaf * 4;
  // the 16-bit wire: a copy of each unit, except when the 16-bit gradient storage is reduced in place
  if (reduces && p.reduce_in_compute_type && (p.reduce_each_micro_batch || !p.grad_storage_16bit))
    m[zero_category::reduce_wire] = largest_unit * 2;
  // stage 3: the unit in use and up to --prefetch gathered ahead of it, along the acquire order
  // without the persistent units (they are never gathered; prefetch looks past them)
  std::vector<std::size_t> gathered;
  for (std::size_t u : p.acquire_order)
    if (p.params_sharded(u)) gathered.push_back(u);
  if (!gathered.empty()) {
    std::size_t peak = 0;
    for (std::size_t i = 0; i < gathered.size(); ++i) {
      std::size_t bytes = 0;
      for (std::size_t k = i; k < gathered.size() && k <= i + p.prefetch; ++k) bytes += l.units[gathered[k]].full * t;
      peak = std::max(peak, bytes);
    }
    m[zero_category::gathered_params] = peak;
  }
  return m;
}

}  // namespace zt::zero
