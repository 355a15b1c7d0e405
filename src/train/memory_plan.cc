// train/memory_plan.cc — closed-form predictions of the single-rank ledger (see memory_plan.h).
#include "train/memory_plan.h"

#include "memory/model_states.h"
#include "model/manifest.h"
#include "model/workspace.h"
#include "optim/grad_norm.h"
#include "reduce/canonical_tree.h"

namespace zt::train {

namespace {

// What the loop fills and reads on the host: one micro-batch's token ids (B sequences of T + 1)
// and the evaluation's predictions (B T ids).
std::map<std::string, std::size_t> host_side_categories(const SingleRankShape& s) {
  const auto tokens = s.micro_batch * static_cast<std::size_t>(s.model.context);
  return {{category::batch, (tokens + s.micro_batch) * sizeof(int32_t)}, {category::eval, tokens * sizeof(int32_t)}};
}

}  // namespace

SingleRankShape single_rank_shape(const RunOptions& c, int64_t vocab) {
  SingleRankShape s;
  s.model = {vocab, c.context, c.layers, c.heads, c.width, c.resolved_mp_blocks()};
  s.checkpoint_activations = c.checkpoint_activations;
  model::validate(s.model);
  s.precision = c.precision;
  const model::Manifest manifest = model::make_storage_manifest(s.model, {});  // the units a run stores
  s.psi = static_cast<std::size_t>(manifest.param_count);
  s.context = static_cast<std::size_t>(c.context);
  s.micro_batch = static_cast<std::size_t>(c.micro_batch);
  s.micro_batches = static_cast<std::size_t>(c.micro_batches());
  const bool fp32 = s.precision == model::Precision::fp32;
  // s_g: the reduce dtype's width; with FP32 compute both choices are 4 bytes.
  s.grad_width = (fp32 || c.reduce_dtype == ReduceDtype::fp32) ? 4 : 2;
  s.optimizer_k = zt::optimizer_k(word_of(c.optimizer));
  s.master_weights = !c.no_master_weights;
  s.norm_block = static_cast<std::size_t>(c.norm_block);
  s.host_side = c.device != device::Device::cpu;
  for (const auto& u : manifest.units)
    s.norm_blocks += zt::norm_block_count(static_cast<std::size_t>(u.numel), s.norm_block);
  return s;
}

std::map<std::string, std::size_t> predict_single_rank(const SingleRankShape& s) {
  std::map<std::string, std::size_t> p;
  const bool fp32 = s.precision == model::Precision::fp32;
  const std::size_t psi = s.psi;
  p[category::params] = psi * model::bytes_of(s.precision);
  if (!fp32 && s.master_weights) p[category::master] = psi * 4;
  p[category::optimizer] = psi * static_cast<std::size_t>(s.optimizer_k - 4);
  p[category::grads] = psi * s.grad_width;
  if (!fp32 && s.grad_width == 4) p[category::grad_staging] = psi * 2;
  if (s.micro_batches > 1)  // the binary counter holds at most floor(log2 A) + 1 FP32 buffers
    p[category::accum_partials] = canonical_max_live_partials(s.micro_batches) * psi * 4;
  const auto B = static_cast<int64_t>(s.micro_batch);
  p[category::activations] = model::activation_bytes(s.model, B, s.precision, model_options(s));
  if (s.checkpoint_activations)
    p[category::activation_checkpoints] = model::checkpoint_bytes(s.model, B, s.precision, model_options(s));
  p[category::scratch] = model::scratch_bytes(s.model, B, s.precision, model_options(s));
  p[category::norm_blocks] = (s.norm_blocks + s.norm_block) * sizeof(float);
  if (!fp32) p[category::diagnostics] = psi * 2;
  if (!s.host_side) p.merge(host_side_categories(s));
  return p;
}

std::map<std::string, std::size_t> predict_single_rank_host_side(const SingleRankShape& s) {
  return s.host_side ? host_side_categories(s) : std::map<std::string, std::size_t>{};
}

std::size_t host_side_bytes(const SingleRankShape& s) {
  std::size_t bytes = 0;
  for (const auto& [name, b] : predict_single_rank_host_side(s)) bytes += Arena::aligned_size(b);
  return bytes;
}

std::vector<ArenaEvent> predicted_single_rank_trace(const SingleRankShape& s) {
  const std::map<std::string, std::size_t> m = predict_single_rank(s);
  std::vector<ArenaEvent> events;
  uint64_t next = 0;
  const auto allocate = [&](std::size_t bytes, const std::string& category) {
    events.push_back({true, next, bytes, category});
    return ArenaEvent{false, next++, bytes, category};  // its release, for later
  };
  // single_rank.cc's allocate(), in order (grad_staging before grads: the model's 16-bit output
  // first, then the FP32 storage it is widened into)
  for (const char* name : {category::params, category::master, category::optimizer, category::grad_staging,
                           category::grads, category::activations, category::activation_checkpoints, category::scratch,
                           category::batch, category::norm_blocks, category::eval, category::diagnostics})
    if (auto it = m.find(name); it != m.end() && it->second) allocate(it->second, name);
  if (s.micro_batches > 1) {  // the step's canonical accumulator: one FP32 leaf per micro-batch
    const auto merge = [&](ArenaEvent&, ArenaEvent&& right) { events.push_back(right); };
    CanonicalAccumulator<ArenaEvent, decltype(merge)> acc(merge);
    for (std::size_t j = 0; j < s.micro_batches; ++j)
      acc.push(allocate(s.psi * 4, step::accumulator_category(acc.live_partials(), /*holds_storage=*/false)));
    events.push_back(acc.finish());  // the sum lives to the step's end
  }
  return events;
}

}  // namespace zt::train
