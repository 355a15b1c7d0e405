// zero/zero_plan.cc — derive a rank's plan from the settings (see zero_plan.h).
#include "zero/zero_plan.h"

#include <algorithm>

#include "core/check.h"
#include "model/manifest.h"
#include "model/precision.h"

namespace zt::zero {

bool persistent_unit(std::size_t numel, std::size_t param_width, double persist_below_mb) {
  // DeepSpeed's stage3_param_persistence_threshold idea: a tiny unit costs a whole all-gather's
  // latency at every use for almost no memory; keeping it whole costs (N−1)/N · 2ψ_u bytes
  return static_cast<double>(numel * param_width) < persist_below_mb * 1048576.0;
}

ZeroPlan make_zero_plan(const train::TrainConfig& c, int64_t dataset_vocab, int rank) {
  ZeroPlan p;
  p.shape = train::single_rank_shape(c, c.vocab ? c.vocab : dataset_vocab);
  ZT_CHECK(p.shape.model.vocab >= dataset_vocab, "--vocab ", p.shape.model.vocab,
           " is smaller than the dataset's alphabet of ", dataset_vocab, " tokens");
  const auto N = static_cast<std::size_t>(c.world_size);
  p.layout = make_layout(model::make_manifest(p.shape.model), N, static_cast<std::size_t>(rank),
                         static_cast<std::size_t>(c.norm_block));
  p.stage = static_cast<int>(c.stage);
  p.spec = shard_spec_for_stage(p.stage, N);
  const std::size_t param_width = model::bytes_of(p.shape.precision);
  std::vector<bool> params_sharded;
  for (const auto& u : p.layout.units) {
    ShardSpec s = p.spec;
    if (s.params && persistent_unit(u.numel, param_width, c.persist_below_mb)) s.params = false;
    p.unit_specs.push_back(s);
    params_sharded.push_back(s.params);
  }
  p.params_layout = state_layout(p.layout, params_sharded);
  p.micro_sync = c.resolved_grad_sync() == "micro-batch";
  // stage 1 reduce-scatters by default (the paper's P_os); the all-reduce variant keeps a full
  // reduced gradient on every rank, as plain data parallelism does
  p.grad_shard = p.stage >= 2 || (p.stage == 1 && c.stage1_reduce == "reduce-scatter");
  p.reduce_compute = c.precision != "fp32" && c.reduce_dtype == "compute";
  p.micro_batches_per_rank = static_cast<std::size_t>(c.micro_batches_per_rank());
  p.grads_in_compute_type = p.reduce_compute && p.micro_batches_per_rank == 1;
  if (p.stage == 2) {
    const std::size_t width = p.reduce_compute ? 2 : 4;
    p.bucket_elements = std::max<std::size_t>(1, static_cast<std::size_t>(c.bucket_mb * 1048576.0) / width);
  }
  p.norm_floats = static_cast<std::size_t>(c.norm_block);
  p.prefetch = static_cast<std::size_t>(c.prefetch);
  const auto L = static_cast<std::size_t>(c.layers);
  for (std::size_t u = 0; u <= L + 1; ++u) p.acquire_order.push_back(u);
  p.acquire_order.push_back(0);
  p.acquire_order.push_back(0);
  p.acquire_order.push_back(L + 1);
  for (std::size_t l = L; l >= 1; --l) p.acquire_order.push_back(l);
  return p;
}

}  // namespace zt::zero
