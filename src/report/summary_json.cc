// report/summary_json.cc — JSON writers for zero-train's outputs (see summary_json.h).
#include "report/summary_json.h"

#include <nlohmann/json.hpp>

#include "gemm/canonical_gemm.h"
#include "model/manifest.h"
#include "train/step_start.h"

namespace zt::report {
namespace {

using nlohmann::ordered_json;

// A float widened to double is exact, and the JSON writer prints the shortest decimal that reads
// back as that double, so the float32 bits survive the round trip.
double exact(float x) { return static_cast<double>(x); }

ordered_json config_object(const RunOptions& c) {
  ordered_json j;
  j["model"] = word_of(c.model);
  j["layers"] = c.layers;
  j["heads"] = c.heads;
  j["width"] = c.width;
  j["context"] = c.context;
  j["vocab"] = c.vocab;
  j["precision"] = word_of(c.precision);
  j["optimizer"] = word_of(c.optimizer);
  j["reduce_dtype"] = word_of(c.reduce_dtype);
  j["no_master_weights"] = c.no_master_weights;
  j["lr"] = c.lr;
  j["min_lr"] = c.resolved_min_lr();
  j["warmup_steps"] = c.resolved_warmup_steps();
  j["lr_peak_reached"] = reaches_peak(lr_schedule(c));
  j["weight_decay"] = c.weight_decay;
  j["beta1"] = c.beta1;
  j["beta2"] = c.beta2;
  j["eps"] = c.eps;
  j["momentum"] = c.momentum;
  j["clip_grad_norm"] = c.clip_grad_norm;
  j["norm_block"] = c.norm_block;
  j["loss_scale"] = word_of(c.loss_scale);
  j["loss_scale_init"] = c.loss_scale_init;
  j["loss_scale_growth_interval"] = c.loss_scale_growth_interval;
  j["loss_scale_growth_factor"] = c.loss_scale_growth_factor;
  j["loss_scale_backoff"] = c.loss_scale_backoff;
  j["steps"] = c.steps;
  j["global_batch"] = c.global_batch;
  j["micro_batch"] = c.micro_batch;
  j["micro_batches"] = c.micro_batches();
  j["seed"] = c.seed;
  j["memory_budget_mb"] = c.memory_budget_mb;
  j["blas_threads"] = c.blas_threads;
  j["threads"] = c.threads;
  j["gemm"] = word_of(c.gemm);
  j["device"] = word_of(c.device);
  if (c.gemm == kernels::GemmBackend::canonical) j["gemm_isa"] = gemm::isa_name(gemm::canonical_isa());
  j["data"] = c.data;
  j["digits"] = c.digits;
  j["eval_every"] = c.eval_every;
  // data parallelism and ZeRO (a single-rank run: stage 0, world size 1)
  j["stage"] = c.stage;
  j["world_size"] = c.world_size;
  j["mp_size"] = c.mp_size;
  j["shard_group"] = c.resolved_shard_group();  // G: ZeRO's shard group (hybrid sharding when G < N_d)
  j["dp_size"] = c.dp_size();
  j["pp_size"] = c.pp_size;
  j["pp_schedule"] = word_of(c.pp_schedule);
  j["pp_split"] = c.resolved_pp_split();
  j["mp_blocks"] = c.resolved_mp_blocks();
  j["checkpoint_activations"] = c.checkpoint_activations;
  j["partition_activations"] = word_of(c.partition_activations);
  j["allocator"] = word_of(c.allocator);
  j["zero_config"] = c.zero_config ? word_of(*c.zero_config) : std::string();
  j["grad_sync"] = word_of(c.resolved_grad_sync());
  j["stage1_reduce"] = word_of(c.stage1_reduce);
  j["bucket_mb"] = c.bucket_mb;
  j["prefetch"] = c.prefetch;
  j["persist_below_mb"] = c.persist_below_mb;
  j["overlap"] = c.overlap;
  j["collective_mode"] = word_of(c.collective_mode);
  j["offload_optimizer"] = c.offload_optimizer.text();
  j["offload_params"] = c.offload_params.text();
  j["offload_buffers"] = c.offload_buffers;
  j["offload_read_ahead"] = c.offload_read_ahead ? "on" : "off";
  return j;
}

}  // namespace

std::string rank_memory_json(const RankMemory& m) {
  ordered_json e;
  e["rank"] = m.rank;
  e["dp_rank"] = m.dp_rank;
  e["mp_rank"] = m.mp_rank;
  e["model_states_bytes"] = m.model_states_bytes;
  e["model_states_bytes_predicted"] = m.model_states_bytes_predicted;
  e["peak_bytes"] = m.peak_bytes;
  e["peak_bytes_predicted"] = m.peak_bytes_predicted;
  e["high_water_bytes_predicted"] = m.high_water_bytes_predicted;
  e["padding_bytes"] = m.padding_bytes;
  e["by_category"] = m.by_category;
  e["by_category_predicted"] = m.by_category_predicted;
  e["arena_capacity"] = m.arena_capacity;
  if (m.host_capacity)  // the host tier (P_a+cpu): its own arena and ledger
    e["host"] = {{"by_category", m.host_by_category},
                 {"by_category_predicted", m.host_by_category_predicted},
                 {"capacity", m.host_capacity}};
  return e.dump();
}

std::string summary_json(const RunOptions& config, const RunResult& r, const std::vector<JsonSection>& sections) {
  ordered_json j;
  j["config"] = config_object(config);
  j["param_count"] = r.param_count;
  j["dataset"] = r.dataset;
  j["steps"] = ordered_json::array();
  for (const auto& s : r.steps) {
    ordered_json e;
    e["step"] = s.step;
    e["loss"] = exact(s.loss);
    e["loss_scale"] = exact(s.loss_scale);
    e["skipped"] = s.skipped;
    e["grad_norm"] = s.grad_norm ? ordered_json(exact(*s.grad_norm)) : ordered_json(nullptr);
    e["clipped"] = s.clipped;
    e["lr"] = exact(s.lr);
    if (s.grad16_zeros >= 0) e["grad16_zeros"] = s.grad16_zeros;
    j["steps"].push_back(e);
  }
  j["evals"] = ordered_json::array();
  for (const auto& e : r.evals)
    j["evals"].push_back(
        {{"step", e.step}, {"loss", exact(e.loss)}, {"accuracy", e.accuracy}, {"problems", e.problems}});
  ordered_json ranks = ordered_json::array();
  for (const auto& m : r.memory) ranks.push_back(ordered_json::parse(rank_memory_json(m)));
  j["memory"] = {{"per_rank", ranks}};
  j["tokens_per_s"] = r.tokens_per_s;
  j["seconds"] = r.seconds;
  j["frozen_fraction"] = r.frozen_fraction >= 0 ? ordered_json(r.frozen_fraction) : ordered_json(nullptr);
  j["frozen_window_fraction"] =
      r.frozen_window_fraction >= 0 ? ordered_json(r.frozen_window_fraction) : ordered_json(nullptr);
  j["frozen_window_steps"] = r.frozen_window_steps;
  for (const auto& [key, text] : sections) j[key] = ordered_json::parse(text);
  return j.dump(2) + "\n";
}

std::string manifest_json(const RunOptions& c, int64_t vocab) {
  const model::GptConfig cfg{vocab, c.context, c.layers, c.heads, c.width, c.resolved_mp_blocks()};
  const model::Manifest m = model::make_manifest(cfg);
  // which canonical tensors tensor parallelism splits: those stored in a block's unit
  std::vector<bool> split(m.params.size(), false);
  const model::Manifest stored = model::make_storage_manifest(cfg, {});
  for (const auto& p : stored.params)
    if (stored.units[static_cast<std::size_t>(p.unit)].block >= 0)
      for (const auto& r : p.runs) split[static_cast<std::size_t>(r.param)] = true;
  ordered_json list = ordered_json::array();
  for (std::size_t i = 0; i < m.params.size(); ++i) {
    const auto& p = m.params[i];
    const bool row = p.name.size() >= 13 && p.name.compare(p.name.size() - 13, 13, "c_proj.weight") == 0;
    const char* tp = !split[i] ? "replicated" : row ? "row" : "column";  // each MP rank: 1/N_m of a split one
    list.push_back(
        {{"name", p.name}, {"shape", p.shape}, {"offset", p.offset}, {"numel", p.numel}, {"tensor_parallel", tp}});
  }
  return list.dump(1) + "\n";
}

}  // namespace zt::report
