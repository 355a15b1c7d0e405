// --offload-params file:DIR (chapter 14, offload/param_file_tier.h): stage 3's parameter shards in
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
#include "zero/offload_rows.h"
#include "zero/zero_fixtures.h"

using namespace zt;
using namespace zt::test;

TEST_CASE("offload-params file: stage 3 is bitwise the run without, N = 1, 2, 4, every precision, prefetch 0-2",
          "[ch14]") {
  // the pairwise table (zero/offload_rows.h); make test-full runs the full product
  for (const ParamTierRow& row : param_tier_pairwise()) DYNAMIC_SECTION(row.name()) {
      check_param_tier_row(row);
    }
}

TEST_CASE("offload-params file: one file per rank while training, removed after the run and after an error", "[ch14]") {
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

TEST_CASE("offload-params file: zero-train --verify compares with a reference that keeps its parameters in memory",
          "[ch14]") {
  // the reference is one device at stage 0, where a parameter tier has no meaning: --verify must
  // drop the setting for it, as it drops --offload-optimizer, and not refuse the run
  const ScratchDir dir;
  const ProgramOutput out =
      run_program("zero-train",
                  "--layers 1 --heads 2 --width 16 --context 16 --steps 2 --global-batch 8 --micro-batch 2 "
                  "--eval-every 0 --warmup-steps 0 --precision bf16 --stage 3 --world-size 2 --ranks-as threads "
                  "--offload-params " +
                      dir.file_target() + " --verify");
  INFO(out.out << out.err);
  REQUIRE(out.status == 0);
  CHECK(out.out.find("bitwise equal to the single-rank reference") != std::string::npos);
  CHECK(dir.entries() == 0);
}
