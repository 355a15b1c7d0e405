// Helpers for the ZeRO equivalence tests: run N ranks as threads, compare with the reference
// bit for bit (never with a tolerance).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "collective/grid.h"
#include "collective/hybrid_group.h"
#include "collective/thread_ranks.h"
#include "predict/predicted_run.h"
#include "report/compare_runs.h"
#include "train/train_fixtures.h"
#include "zero/zero_plan.h"

namespace zt::test {

/// Every rank's outcome and rank 0's artifacts.
struct ZeroRun {
  std::vector<RankOutcome<zero::ZeroRunResult>> ranks;  ///< per rank
  train::RunArtifacts artifacts;                        ///< rank 0's
  std::string errors;                                   ///< concatenated rank errors
};

/// Run config.world_size ranks as threads on the embedded dataset; with config.mp_size > 1 or
/// hybrid sharding on the grid of collective/grid.h (as zero-train does). on_step runs on every
/// rank's thread after each step (no Catch2 assertions there).
inline ZeroRun run_zero(const train::TrainConfig& c, const train::StepCallback& on_step = {}) {
  auto data = addition_for(c);
  const int n = static_cast<int>(c.world_size);
  const bool compute = c.reduce_dtype == train::ReduceDtype::compute;
  ThreadGroup group =
      thread_group(n, c.collective_mode == train::CollectiveMode::fast ? ReduceMode::fast : ReduceMode::deterministic);
  if (compute) group.base.accumulation = Accumulation::storage;
  std::vector<train::RunArtifacts> arts(static_cast<std::size_t>(n));
  ZeroRun out;
  out.ranks = run_thread_ranks(n, [&](int r) {
    GlooCollective coll(group.for_rank(r));
    if (c.mp_size == 1 && !c.hybrid_sharding() && c.pp_size == 1)
      return predict::train_zero(c, *data, coll, on_step, &arts[static_cast<std::size_t>(r)]);
    Grid grid = make_grid(coll, GridDims{static_cast<int>(c.mp_size), static_cast<int>(c.pp_size),
                                         static_cast<int>(c.resolved_shard_group())});
    std::optional<HybridGroup> hybrid;
    if (grid.shard) hybrid.emplace(*grid.shard, *grid.replica, *grid.dp);
    return predict::train_zero(
        c, *data, {*grid.dp, c.mp_size > 1 ? grid.mp.get() : nullptr, hybrid ? &*hybrid : nullptr, grid.pp.get()},
        on_step, &arts[static_cast<std::size_t>(r)]);
  });
  for (int r = 0; r < n; ++r)
    if (!out.ranks[static_cast<std::size_t>(r)].ok())
      out.errors += "rank " + std::to_string(r) + ": " + out.ranks[static_cast<std::size_t>(r)].error + "\n";
  out.artifacts = std::move(arts[0]);
  return out;
}

/// Two ranks (threads) started with different settings, as a launcher with a typo would start
/// them: rank 0 with c0, rank 1 with c1. @return each rank's error ("" if it ran).
inline std::vector<std::string> run_two_configs(const train::TrainConfig& c0, const train::TrainConfig& c1) {
  auto data = addition_for(c0);
  ThreadGroup group = thread_group(2);
  auto out = run_thread_ranks(2, [&](int r) {
    GlooCollective coll(group.for_rank(r));
    return predict::train_zero(r == 0 ? c0 : c1, *data, coll, {}, nullptr);
  });
  return {out[0].ok() ? "" : out[0].error, out[1].ok() ? "" : out[1].error};
}

inline uint32_t bits(float x) { return std::bit_cast<uint32_t>(x); }

// the comparisons zero-train --verify makes (report/compare_runs.h): "" when bitwise equal
using report::compare_evals;
using report::compare_params;
using report::compare_steps;

/// A config of the tiny model with dumps on (so final params come back).
inline train::TrainConfig zero_config(int stage, int world, int micro_per_rank, const char* precision) {
  train::TrainConfig c = tiny_config();
  c.stage = stage;
  c.world_size = world;
  c.micro_batch = 2;
  c.global_batch = static_cast<int64_t>(world) * micro_per_rank * c.micro_batch;
  c.precision = word<model::Precision>(precision);
  c.norm_block = 32;
  c.dump_params = "unused";  // asks for final_params in the artifacts
  c.dump_grads = "unused";   // and for step 1's gathered FP32 gradient
  c.ranks_as = train::RanksAs::threads;
  return c;
}

/// The reference: one rank, stage 0, same global batch, micro-batch, precision, seed, and the
/// same tensor-parallel blocks (all of them on the one device; no pipeline).
inline train::TrainConfig reference_of(train::TrainConfig c) {
  c.mp_blocks = c.resolved_mp_blocks();
  c.stage = 0;
  c.world_size = 1;
  c.mp_size = 1;
  c.shard_group.reset();
  c.pp_size = 1;
  c.pp_split.clear();
  return c;
}

/// Run `c` sharded (run_zero) and its reference (reference_of); Catch2 checks that every rank's
/// step records and the final master weights and step-1 gradient (--dump-grads) are bitwise
/// equal. @param c the sharded run. @param zero if not null, receives the sharded run (for
/// further checks). @return the reference's result.
inline train::RunResult check_equal(const train::TrainConfig& c, ZeroRun* zero = nullptr) {
  train::RunArtifacts ref_art;
  const train::RunResult ref = run(reference_of(c), &ref_art);
  ZeroRun z = run_zero(c);
  INFO("stage " << c.stage << " N=" << c.world_size << " " << word_of(c.precision) << " " << word_of(c.optimizer)
                << " mb/rank=" << c.micro_batches_per_rank() << " sync=" << word_of(c.resolved_grad_sync())
                << " reduce=" << word_of(c.reduce_dtype));
  REQUIRE(z.errors == "");
  for (const auto& r : z.ranks) CHECK(compare_steps(r.value->run.steps, ref.steps) == "");
  CHECK(compare_params(z.artifacts.final_params, ref_art.final_params) == "");
  CHECK(compare_params(z.artifacts.step1_grad, ref_art.step1_grad) == "");  // --dump-grads
  if (zero) *zero = std::move(z);
  return ref;
}

/// The plan rank `rank` of `c` derives (layout, per-unit specs), built without training.
inline zero::ZeroPlan plan_of(const train::TrainConfig& c, int rank = 0, int mp_rank = 0) {
  return zero::make_zero_plan(c, addition_for(c)->vocab_size(), rank, mp_rank);
}

/// A --persist-below-mb that keeps every unit smaller than the largest one whole, read off the
/// model's units (independent of N): compute-dtype bytes of the largest unit, in MiB.
inline double persist_all_but_largest(const train::TrainConfig& c) {
  const auto p = plan_of(c);
  std::size_t largest = 0;
  for (const auto& u : p.layout.units) largest = std::max(largest, u.numel);
  return static_cast<double>(largest * (c.precision == model::Precision::fp32 ? 4 : 2)) / 1048576.0;
}

/// How many units of `c`'s plan keep their parameters whole.
inline std::size_t persistent_units(const train::TrainConfig& c) {
  const auto p = plan_of(c);
  std::size_t n = 0;
  for (std::size_t u = 0; u < p.layout.units.size(); ++u) n += p.persistent(u);
  return n;
}

}  // namespace zt::test
