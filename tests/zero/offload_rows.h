// zero/offload_rows.h — the rows of chapter 14's two offload sweeps, written once for both suites:
// `make test` runs the pairwise tables (every pair of values of any two axes in some row), and
// `make test-full` (test_full.cc, label `full`) the full products, with the very same checks per
// row. Optimizer tier: stage x N x precision, each row bitwise the run without offload through the
// host and the file tier, with their ledgers, copies and file I/O as predicted. Parameter tier
// (stage 3): N x precision x prefetch x (micro-batches per rank, persistent units, the ring's B),
// each row bitwise through the parameter file, alone and beside the optimizer's file tier.
// Not a test itself; ranks are threads (zero_fixtures.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "offload/file_tier.h"
#include "predict/zero_comm.h"
#include "zero/offload_fixtures.h"
#include "zero/zero_fixtures.h"

namespace zt::test {

/// One row of the optimizer-tier sweep.
struct OptimizerTierRow {
  int stage, world;
  const char* precision;
  const char* optimizer;  // adamw (two moments) or sgd (one)
  int per_rank;           // micro-batches per rank
  std::string name() const {
    std::ostringstream s;
    s << "stage " << stage << ", N " << world << ", " << precision << ", " << optimizer << ", A " << per_rank;
    return s.str();
  }
};

/// Stages 0-3 x N = 1, 2, 4 x fp32, fp16, bf16 (36 rows); the optimizer and A rotate over them.
inline std::vector<OptimizerTierRow> optimizer_tier_full() {
  std::vector<OptimizerTierRow> rows;
  for (int stage = 0; stage <= 3; ++stage)
    for (int world : {1, 2, 4})
      for (const char* precision : {"fp32", "fp16", "bf16"}) {
        const int row = static_cast<int>(rows.size());
        rows.push_back({stage, world, precision, row % 2 ? "sgd" : "adamw", row % 3 == 2 ? 2 : 1});
      }
  return rows;
}

/// 12 rows holding every (stage, N) once, every (stage, precision) and (N, precision) pair, and
/// both optimizers and both A at every stage and every N.
inline std::vector<OptimizerTierRow> optimizer_tier_pairwise() {
  return {{0, 1, "fp32", "adamw", 1}, {0, 2, "fp16", "sgd", 2},   {0, 4, "bf16", "adamw", 1},
          {1, 1, "fp16", "sgd", 1},   {1, 2, "bf16", "adamw", 1}, {1, 4, "fp32", "sgd", 2},
          {2, 1, "bf16", "sgd", 2},   {2, 2, "fp32", "adamw", 1}, {2, 4, "fp16", "adamw", 1},
          {3, 1, "fp32", "adamw", 2}, {3, 2, "bf16", "sgd", 1},   {3, 4, "fp16", "sgd", 1}};
}

/// A row of the optimizer tier: the run without offload, then the host and the file tier, each
/// bitwise that run with every ledger, copy and file count as predicted.
inline void check_optimizer_tier_row(const OptimizerTierRow& row) {
  train::TrainConfig c = zero_config(row.stage, row.world, row.per_rank, row.precision);
  c.optimizer = word<train::Optimizer>(row.optimizer);
  const ZeroRun base = run_zero(c);
  REQUIRE(base.errors == "");
  const ScratchDir dir;
  for (const std::string& target : {std::string("host"), dir.file_target()}) {
    INFO(target);
    const train::TrainConfig o = offloaded(c, target);
    const ZeroRun z = run_zero(o);
    check_bitwise(z, base);
    check_offload_accounting(z, o);
    CHECK(dir.entries() == 0);  // the file tier's files are gone
  }
}

/// One row of the parameter-tier sweep (stage 3).
struct ParamTierRow {
  int world;
  const char* precision;
  int prefetch;
  int per_rank;     // micro-batches per rank
  bool persist;     // every unit but the largest persistent (--persist-below-mb)
  int64_t buffers;  // the ring's B (--offload-buffers)
  std::string name() const {
    std::ostringstream s;
    s << "N " << world << ", " << precision << ", prefetch " << prefetch << ", A " << per_rank << ", B " << buffers
      << (persist ? ", persistent units" : "");
    return s.str();
  }
};

/// N = 1, 2, 4 x fp32, bf16, fp16 x prefetch 0-2 (27 rows); A, persistence and B rotate over them.
inline std::vector<ParamTierRow> param_tier_full() {
  std::vector<ParamTierRow> rows;
  for (int world : {1, 2, 4})
    for (const char* precision : {"fp32", "bf16", "fp16"})
      for (int prefetch : {0, 1, 2}) {
        const int row = static_cast<int>(rows.size());
        rows.push_back({world, precision, prefetch, row % 3 == 1 ? 2 : 1, row % 4 == 3, row % 2 ? 1 : 3});
      }
  return rows;
}

/// 9 rows, an orthogonal array over four three-valued axes: N, precision, prefetch and the
/// fourth (A 1, B 3), (A 2, B 1), (A 1, B 1, persistent units); every pair of values of any two
/// axes is in exactly one row.
inline std::vector<ParamTierRow> param_tier_pairwise() {
  return {{1, "fp32", 0, 1, false, 3}, {1, "bf16", 1, 2, false, 1}, {1, "fp16", 2, 1, true, 1},
          {2, "fp32", 1, 1, true, 1},  {2, "bf16", 2, 1, false, 3}, {2, "fp16", 0, 2, false, 1},
          {4, "fp32", 2, 2, false, 1}, {4, "bf16", 0, 1, true, 1},  {4, "fp16", 1, 1, false, 3}};
}

/// The parameter tier's checks: the accelerator ledger holds no `params` bytes of sharded units
/// (only persistent ones), its ring is R = max(B, prefetch + 1) buffers of the largest shard, every
/// ledger is its prediction, and the file I/O per step is its closed form: a shard read per gather
/// of the acquire order per micro-batch, and one read and one write per sharded unit (the update),
/// plus the optimizer file tier's records when there is one.
inline void check_param_tier_accounting(const ZeroRun& z, const train::TrainConfig& c) {
  const std::size_t t = c.precision == model::Precision::fp32 ? 4 : 2;
  for (std::size_t r = 0; r < z.ranks.size(); ++r) {
    const zero::ZeroRunResult& res = *z.ranks[r].value;
    const zero::ZeroPlan plan = plan_of(c, static_cast<int>(r));
    const auto& m = res.run.memory.front();
    CHECK(m.by_category == m.by_category_predicted);
    CHECK(m.model_states_bytes == m.model_states_bytes_predicted);
    CHECK(m.host_by_category == m.host_by_category_predicted);
    std::size_t persistent = 0, largest = 0, sharded_bytes = 0, gathered_bytes = 0;
    uint64_t sharded_units = 0, gathers = 0;
    for (std::size_t u = 0; u < plan.layout.units.size(); ++u) {
      if (!plan.params_sharded(u)) {
        persistent += plan.layout.units[u].full * t;
        continue;
      }
      largest = std::max(largest, plan.layout.units[u].shard);
      sharded_bytes += plan.layout.units[u].shard * t;
      ++sharded_units;
    }
    for (std::size_t u : plan.acquire_order)
      if (plan.params_sharded(u)) {
        gathered_bytes += plan.layout.units[u].shard * t;
        ++gathers;
      }
    CHECK(sharded_units > 0);
    CHECK((m.by_category.count("params") ? m.by_category.at("params") : 0) == persistent);  // no sharded unit's
    const auto R =
        std::max<std::size_t>(static_cast<std::size_t>(c.offload_buffers), static_cast<std::size_t>(c.prefetch) + 1);
    CHECK(m.by_category.at("offload_param_buffers") == R * largest * t);
    const auto A = static_cast<uint64_t>(c.micro_batches_per_rank());
    zero::ZeroPlan no_params = plan;  // the optimizer tier's share of the closed form
    no_params.offload_params = false;
    const offload::TransferStats opt = predict::predict_file_io_per_step(no_params);
    const auto& io = res.file_io_per_step;
    REQUIRE(!res.run.steps.back().skipped);
    CHECK(io.read_bytes == opt.read_bytes + A * gathered_bytes + sharded_bytes);
    CHECK(io.read_calls == opt.read_calls + A * gathers + sharded_units);
    CHECK(io.write_bytes == opt.write_bytes + sharded_bytes);
    CHECK(io.write_calls == opt.write_calls + sharded_units);
    const auto& p = res.file_io_predicted_per_step;
    CHECK(io.read_bytes == p.read_bytes);
    CHECK(io.write_bytes == p.write_bytes);
    CHECK(io.read_calls == p.read_calls);
    CHECK(io.write_calls == p.write_calls);
    CHECK(res.file_io_total.read_bytes == applied_steps(res) * p.read_bytes);
    CHECK(res.file_io_total.write_bytes == applied_steps(res) * p.write_bytes);
  }
}

/// A row of the parameter tier: the run without offload, then the parameter file alone and beside
/// the optimizer's file tier, each bitwise that run (evaluations too) with its accounting as
/// predicted and no file left behind.
inline void check_param_tier_row(const ParamTierRow& row) {
  train::TrainConfig c = zero_config(3, row.world, row.per_rank, row.precision);
  c.prefetch = row.prefetch;
  c.eval_every = 2;
  c.layers = 2;
  if (row.persist) c.persist_below_mb = persist_all_but_largest(c);
  const ZeroRun base = run_zero(c);
  REQUIRE(base.errors == "");
  const ScratchDir dir, opt_dir;
  for (bool optimizer_file : {false, true}) {
    INFO("optimizer file tier " << optimizer_file);
    train::TrainConfig o = c;
    o.offload_params = train::parse_offload_target(dir.file_target(), "--offload-params", false);
    o.offload_buffers = row.buffers;
    if (optimizer_file)
      o.offload_optimizer = train::parse_offload_target(opt_dir.file_target(), "--offload-optimizer", true);
    const ZeroRun z = run_zero(o);
    check_bitwise(z, base);
    CHECK(compare_evals(z.ranks[0].value->run.evals, base.ranks[0].value->run.evals) == "");
    CHECK(!base.ranks[0].value->run.evals.empty());
    check_param_tier_accounting(z, o);
    CHECK(dir.entries() == 0);  // both tiers' files are gone
    CHECK(opt_dir.entries() == 0);
  }
}

}  // namespace zt::test
