// predict/predicted_run.cc — the engine with its M_D regions and its predictions (see predicted_run.h).
#include "predict/predicted_run.h"

#include "predict/zero_comm.h"
#include "predict/zero_memory.h"
#include "predict/zero_trace.h"
#include "train/heldout.h"
#include "train/rank_memory.h"

namespace zt::predict {

void add_predictions(zero::ZeroRunResult& r, const train::RunOptions& c, const Dataset& data) {
  const zero::ZeroPlan plan = zero::make_zero_plan(c, data.vocab_size(), r.dp_rank, r.mp_rank, r.pp_rank);
  r.dp.predicted_per_step = predict_comm_per_step(plan);
  const DpCommByGroup by_group = predict_dp_comm_by_group(plan);
  r.dp_replica.predicted_per_step = by_group.replica;
  r.dp_whole.predicted_per_step = by_group.whole;
  r.mp.predicted_per_step = predict_mp_comm_per_step(plan);
  r.pp.predicted_per_step = predict_pp_comm_per_step(plan);
  r.comm_predicted_per_step = r.dp.predicted_per_step + r.mp.predicted_per_step;
  r.transfers_predicted_per_step = predict_transfers_per_step(plan);
  r.file_io_predicted_per_step = predict_file_io_per_step(plan);
  if (c.device != device::Device::cpu) r.run.device_copies_predicted_per_step = predict_device_copies_per_step(plan);
  // the held-out evaluation's gathers are part of the predicted trace (none without the split)
  const auto rounds = data.heldout() ? static_cast<std::size_t>(train::heldout_rounds(c.micro_batch)) : 0;
  for (train::RankMemory& m : r.run.memory) {
    train::add_memory_predictions(m, predict_zero_memory(plan, c.overlap, rounds), predicted_model_states(plan),
                                  ledger_high_water(predicted_trace(plan, c.overlap, rounds)));
    if (m.host_capacity) m.host_by_category_predicted = predict_host_memory(plan);
  }
}

zero::ZeroRunResult train_zero(const train::RunOptions& config, const Dataset& data, zero::RankGroups groups,
                               const train::StepCallback& on_step, train::RunArtifacts* artifacts) {
  train::validate(config);
  std::vector<zero_r::ReplayRegion> md;
  if (config.allocator == train::Allocator::zero)
    md = md_regions(zero::make_zero_plan(config, data.vocab_size(), groups.dp.rank(), groups.mp ? groups.mp->rank() : 0,
                                         groups.pp ? groups.pp->rank() : 0),  // this rank's stage's units
                    config.overlap);
  zero::ZeroRunResult r = zero::train_zero(config, data, groups, md, on_step, artifacts);
  add_predictions(r, config, data);
  return r;
}

}  // namespace zt::predict
