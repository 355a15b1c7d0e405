// plan/rank_prediction.cc — every rank's predictions from the existing closed forms (see rank_prediction.h).
#include "plan/rank_prediction.h"

#include "data/dataset.h"
#include "model/manifest.h"
#include "predict/zero_comm.h"
#include "predict/zero_memory.h"
#include "predict/zero_trace.h"
#include "train/copy_plan.h"
#include "train/heldout.h"
#include "train/memory_plan.h"
#include "zero/zero_plan.h"

namespace zt::plan {

bool uses_reference_loop(const train::RunOptions& c) {
  // zero-train's run_mode calls this: one rank at stage 0 with none of the features that live in
  // the ZeRO engine (P_a, M_D, a memory trace, a timeline, a step trace, offload, checkpoints) runs
  // the reference loop (an explicit --collective nccl asks for a group, so the engine too)
  return !(c.world_size > 1 || c.stage > 0 || c.partition_activations != train::PartitionActivations::off ||
           c.allocator != train::Allocator::general || !c.memory_trace.empty() || !c.trace.empty() ||
           !c.step_trace.empty() || c.offloads_optimizer() || !c.save_dir.empty() || !c.resume.empty() ||
           c.collective == train::CollectiveBackend::nccl);
}

int64_t resolve_vocab(const train::RunOptions& c) {
  if (c.vocab) return c.vocab;
  return make_dataset(c.data, static_cast<std::size_t>(c.context), static_cast<int>(c.digits))->vocab_size();
}

namespace {

std::size_t model_states_of(const std::map<std::string, std::size_t>& device) {
  std::size_t total = 0;
  for (const char* const* name = step::model_state_categories(); *name; ++name)
    if (auto it = device.find(*name); it != device.end()) total += it->second;
  return total;
}

std::size_t sum_of(const std::map<std::string, std::size_t>& categories) {
  std::size_t total = 0;
  for (const auto& [name, bytes] : categories) total += bytes;
  return total;
}

/// The high-water mark of the rank's trace and whether it runs at the arena's capacity.
void finish_memory(RankPrediction& r, std::size_t capacity) {
  r.high_water_bytes = ledger_high_water(r.trace);
  r.fit = zero_r::fits(r.trace, capacity, r.regions);
}

}  // namespace

RunPrediction predict_run(const train::RunOptions& c, int64_t vocab) {
  RunPrediction out;
  out.vocab = vocab;
  out.reference_loop = uses_reference_loop(c);
  out.arena_capacity = static_cast<std::size_t>(c.memory_budget_mb * 1024.0 * 1024.0);  // as both loops build it
  const train::SingleRankShape shape = train::single_rank_shape(c, vocab);
  out.psi = shape.psi;
  if (out.reference_loop) {
    RankPrediction r;
    r.device = train::predict_single_rank(shape);
    r.host = train::predict_single_rank_host_side(shape);  // on a device: the token ids and predictions
    r.peak_bytes = sum_of(r.device);
    r.model_states_bytes = model_states_of(r.device);
    r.trace = train::predicted_single_rank_trace(shape);
    r.device_copies = train::predict_single_rank_copies_per_step(shape);  // zero on the host
    finish_memory(r, out.arena_capacity);
    out.ranks.push_back(std::move(r));
    return out;
  }
  // the engine evaluates the addition task's held-out split after the last step (none for --data)
  const std::size_t heldout_rounds =
      c.data.empty() ? static_cast<std::size_t>(train::heldout_rounds(c.micro_batch)) : 0;
  const int n_m = static_cast<int>(c.mp_size), n_d = static_cast<int>(c.dp_size()), n_p = static_cast<int>(c.pp_size);
  for (int pp = 0; pp < n_p; ++pp)
    for (int dp = 0; dp < n_d; ++dp)
      for (int mp = 0; mp < n_m; ++mp) {
        const zero::ZeroPlan p = zero::make_zero_plan(c, vocab, dp, mp, pp);
        RankPrediction r;
        r.rank = (pp * n_d + dp) * n_m + mp;
        r.dp_rank = dp;
        r.mp_rank = mp;
        r.pp_rank = pp;
        r.device = predict::predict_zero_memory(p, c.overlap, heldout_rounds);
        r.host = predict::predict_host_memory(p);
        r.peak_bytes = sum_of(r.device);
        r.model_states_bytes = model_states_of(r.device);
        r.trace = predict::predicted_trace(p, c.overlap, heldout_rounds);
        if (c.allocator == train::Allocator::zero) r.regions = predict::md_regions(p, c.overlap);
        finish_memory(r, out.arena_capacity);
        r.dp_comm = predict::predict_comm_per_step(p);
        const predict::DpCommByGroup by_group = predict::predict_dp_comm_by_group(p);
        r.dp_replica_comm = by_group.replica;
        r.dp_whole_comm = by_group.whole;
        r.mp_comm = predict::predict_mp_comm_per_step(p);
        r.pp_comm = predict::predict_pp_comm_per_step(p);
        r.transfers = predict::predict_transfers_per_step(p);
        r.file_io = predict::predict_file_io_per_step(p);
        if (c.device != device::Device::cpu) r.device_copies = predict::predict_device_copies_per_step(p);
        out.ranks.push_back(std::move(r));
      }
  return out;
}

}  // namespace zt::plan
