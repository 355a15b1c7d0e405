// --offload-params file:DIR (chapter 12, offload/param_file_tier.h): stage 3's parameter shards in
// a file per rank, read ahead of each gather; bitwise the run without, its ledger and file I/O
// their closed forms, and no file left behind after a run or an error.

#include <catch2/catch.hpp>

#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/atomic_file.h"
#include "fp/bf16.h"
#include "offload/file_tier.h"
#include "offload/optimizer_tier.h"
#include "predict/zero_comm.h"
#include "predict/zero_memory.h"
#include "support/run_program.h"
#include "zero/config_check.h"
#include "zero/offload_fixtures.h"
#include "zero/zero_fixtures.h"

using namespace zt;
using namespace zt::test;

namespace {

/// The parameter tier's checks: the accelerator ledger holds no `params` bytes of sharded units
/// (only persistent ones), its ring is R = max(B, prefetch + 1) buffers of the largest shard, every
/// ledger is its prediction, and the file I/O per step is its closed form: a shard read per gather
/// of the acquire order per micro-batch, and one read and one write per sharded unit (the update),
/// plus the optimizer file tier's records when there is one.
void check_param_tier_accounting(const ZeroRun& z, const train::TrainConfig& c) {
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
    const offload::FileIoStats opt = predict::predict_file_io_per_step(no_params);
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

}  // namespace

TEST_CASE("offload-params file: stage 3 is bitwise the run without, N = 1, 2, 4, every precision, prefetch 0-2",
          "[ch12]") {
  int row = 0;
  for (int world : {1, 2, 4})
    for (const char* precision : {"fp32", "bf16", "fp16"})
      for (int prefetch : {0, 1, 2}) {
        // rotating axes: micro-batches per rank, persistent units, the ring's B
        const int per_rank = row % 3 == 1 ? 2 : 1;
        const bool persist = row % 4 == 3;
        const int64_t buffers = row % 2 ? 1 : 3;
        ++row;
        DYNAMIC_SECTION("N " << world << ", " << precision << ", prefetch " << prefetch << ", A " << per_rank << ", B "
                             << buffers << (persist ? ", persistent units" : "")) {
          train::TrainConfig c = zero_config(3, world, per_rank, precision);
          c.prefetch = prefetch;
          c.eval_every = 2;
          c.layers = 2;
          if (persist) c.persist_below_mb = persist_all_but_largest(c);
          const ZeroRun base = run_zero(c);
          REQUIRE(base.errors == "");
          const ScratchDir dir, opt_dir;
          for (bool optimizer_file : {false, true}) {
            INFO("optimizer file tier " << optimizer_file);
            train::TrainConfig o = c;
            o.offload_params = train::parse_offload_target(dir.file_target(), "--offload-params", false);
            o.offload_buffers = buffers;
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
      }
}

TEST_CASE("offload-params file: one file per rank while training, removed after the run and after an error", "[ch12]") {
  const train::TrainConfig c = zero_config(3, 2, 1, "bf16");
  const ScratchDir dir;
  train::TrainConfig o = c;
  o.offload_params = train::parse_offload_target(dir.file_target(), "--offload-params", false);
  const std::uintmax_t bytes = plan_of(c).layout.shard_total * 2;  // every unit's shard, 2 bytes each
  std::atomic<int> right{0};
  const ZeroRun z = run_zero(o, [&](const train::StepRecord& s, const train::RunResult&) {
    if (s.step != 1) return;
    for (int r = 0; r < 2; ++r) {
      const fs::path f = offload::file_tier_path(dir.path.string(), r, "params");
      right += fs::exists(f) && fs::file_size(f) == bytes;
    }
  });
  REQUIRE(z.errors == "");
  CHECK(right == 4);
  CHECK(dir.entries() == 0);
  const ZeroRun failed = run_zero(o, [&](const train::StepRecord& s, const train::RunResult&) {
    if (s.step == 2) throw std::runtime_error("induced failure at step 2");
  });
  CHECK(failed.errors.find("induced failure at step 2") != std::string::npos);
  CHECK(dir.entries() == 0);
  // a stage other than 3 is refused, as before
  train::TrainConfig bad = zero_config(2, 2, 1, "bf16");
  bad.offload_params = train::parse_offload_target(dir.file_target(), "--offload-params", false);
  CHECK_THROWS_WITH(train::validate(bad), Catch::Contains("it needs --stage 3"));
}
