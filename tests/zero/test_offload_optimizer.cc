// ZeRO-Offload's optimizer tier in the engine (chapter 14): with --offload-optimizer host or
// file:DIR the FP32 master, the optimizer state and the update move to the host tier (or a file
// streamed through it), and the run stays bitwise the run without offload; the accelerator tier's
// ledger holds no master and no optimizer state; the copies between the tiers and the file's reads
// and writes are their closed forms; bad settings are one line, and ranks that disagree about them
// fail at start-up. Ranks are threads (zero_fixtures.h); comparisons are bit for bit.

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
#include "train/train_flags.h"
#include "zero/config_check.h"
#include "zero/offload_fixtures.h"
#include "zero/offload_rows.h"
#include "zero/zero_fixtures.h"

using namespace zt;
using namespace zt::test;

TEST_CASE("ZeRO-Offload: host and file tiers are bitwise the run without offload, stages 0-3, N = 1, 2, 4", "[ch14]") {
  // the pairwise table (zero/offload_rows.h); make test-full runs the full product
  for (const OptimizerTierRow& row : optimizer_tier_pairwise()) DYNAMIC_SECTION(row.name()) {
      check_optimizer_tier_row(row);
    }
}

TEST_CASE("ZeRO-Offload with 16-bit gradients (--reduce-dtype compute): 2 bytes down per element, the paper's 2psi",
          "[ch14]") {
  for (int stage : {1, 3})
    for (const char* precision : {"fp16", "bf16"}) DYNAMIC_SECTION("stage " << stage << ", " << precision) {
        train::TrainConfig c = zero_config(stage, 2, 1, precision);
        c.reduce_dtype = train::ReduceDtype::compute;
        const ZeroRun base = run_zero(c);
        REQUIRE(base.errors == "");
        const ScratchDir dir;
        for (const std::string& target : {std::string("host"), dir.file_target()}) {
          const train::TrainConfig o = offloaded(c, target);
          const ZeroRun z = run_zero(o);
          check_bitwise(z, base);
          check_offload_accounting(z, o);  // s_g = 2: Σ_r bytes down == 2ψ == bytes up
          CHECK(z.ranks[0].value->transfers_per_step.to_host_bytes ==
                z.ranks[0].value->transfers_per_step.to_device_bytes);
        }
      }
}

TEST_CASE("ZeRO-Offload with fp16 overflow: a skipped step moves nothing, the bits stay equal", "[ch14]") {
  train::TrainConfig c = zero_config(2, 2, 1, "fp16");
  c.loss_scale_init = 16777216;  // 2^24: step 1's scaled gradients overflow, it is skipped
  c.steps = 8;
  const ZeroRun base = run_zero(c);
  REQUIRE(base.errors == "");
  REQUIRE(base.ranks[0].value->run.steps[0].skipped);
  const ScratchDir dir;
  for (const std::string& target : {std::string("host"), dir.file_target()}) {
    const train::TrainConfig o = offloaded(c, target);
    const ZeroRun z = run_zero(o);
    check_bitwise(z, base);
    check_offload_accounting(z, o);  // totals == applied steps x the closed form
    CHECK(applied_steps(*z.ranks[0].value) < static_cast<uint64_t>(c.steps));
  }
}

TEST_CASE("ZeRO-Offload beside P_a+cpu: one host tier, one transfer thread, both closed forms added", "[ch14]") {
  train::TrainConfig c = zero_config(2, 2, 2, "bf16");
  c.checkpoint_activations = true;
  c.partition_activations = train::PartitionActivations::cpu;
  const ZeroRun base = run_zero(c);
  REQUIRE(base.errors == "");
  const ScratchDir dir;
  const ZeroRun z = run_zero(offloaded(c, dir.file_target()));
  check_bitwise(z, base);
  for (std::size_t r = 0; r < 2; ++r) {
    const auto& res = *z.ranks[r].value;
    const auto& m = res.run.memory.front();
    CHECK(m.by_category == m.by_category_predicted);
    CHECK(m.host_by_category == m.host_by_category_predicted);
    CHECK(m.host_by_category.contains("activation_checkpoints"));
    CHECK(m.host_by_category.contains("offload_buffers"));
    const auto& alone = base.ranks[r].value->transfers_per_step;  // P_a+cpu's copies without offload
    CHECK(res.transfers_per_step.to_host_bytes == res.transfers_predicted_per_step.to_host_bytes);
    CHECK(res.transfers_per_step.to_device_bytes == res.transfers_predicted_per_step.to_device_bytes);
    const zero::ZeroPlan p = plan_of(c, static_cast<int>(r));
    std::size_t owned = 0;
    for (std::size_t u = 0; u < p.layout.units.size(); ++u) owned += p.owned_real(u);
    const std::size_t units = p.layout.units.size();
    CHECK(res.transfers_per_step.to_host_calls == alone.to_host_calls + units);  // + one per unit each way
    CHECK(res.transfers_per_step.to_device_calls == alone.to_device_calls + units);
    CHECK(res.transfers_per_step.to_host_bytes == alone.to_host_bytes + 4 * owned);      // FP32 gradients down
    CHECK(res.transfers_per_step.to_device_bytes == alone.to_device_bytes + 2 * owned);  // bf16 parameters up
  }
  CHECK(dir.entries() == 0);
}

TEST_CASE(
    "zero-train --offload-optimizer: bad input is one line, and the summary holds the transfers and the file I/O "
    "beside their closed forms",
    "[ch14]") {
  const std::string tiny =
      "--layers 1 --heads 2 --width 16 --context 16 --steps 2 --global-batch 8 --micro-batch 2 --eval-every 0 "
      "--warmup-steps 0 --norm-block 32 ";
  const ScratchDir dir;
  const std::string not_a_dir = (dir.path / "plain-file").string();
  std::ofstream(not_a_dir) << "x";
  const std::string bad[] = {"--offload-optimizer disk",
                             "--offload-optimizer file:",
                             "--offload-optimizer file:" + not_a_dir + "/zt-offload",
                             "--offload-optimizer file:" + not_a_dir,
                             "--offload-optimizer host --no-master-weights --precision bf16",
                             "--offload-buffers 2",
                             "--offload-read-ahead off --offload-optimizer host",
                             "--offload-optimizer " + dir.file_target() + " --offload-buffers 0",
                             "--offload-optimizer " + dir.file_target() + " --offload-read-ahead maybe",
                             "--offload-params file:/tmp",
                             "--offload-params file:" + not_a_dir + "/zt-params --stage 3",
                             "--offload-params host --stage 3"};
  for (const std::string& args : bad) {
    const auto out = run_program("zero-train", tiny + args);
    INFO(args << ": " << out.err);
    CHECK(out.status == 2);
    CHECK(line_count(out.err) == 1);
    CHECK(out.err.rfind("zero-train: error: ", 0) == 0);
  }
  // a place that cannot be created names the flag and what is in the way (tests/train walks
  // every output flag; a missing directory is created, as --save-dir's is)
  CHECK(run_program("zero-train", tiny + "--offload-params file:" + not_a_dir + "/zt-params --stage 3")
            .err.find("--offload-params file: " + not_a_dir + "/zt-params: cannot create directory " + not_a_dir +
                      "/zt-params: " + not_a_dir + " is a file, in the way") != std::string::npos);
  if (::geteuid() != 0) {  // root writes anywhere: the check cannot fail for it
    fs::permissions(dir.path, fs::perms::owner_read | fs::perms::owner_exec);
    const auto out = run_program("zero-train", tiny + "--offload-optimizer " + dir.file_target());
    fs::permissions(dir.path, fs::perms::owner_all);
    CHECK(out.status == 2);
    CHECK(out.err.find("cannot write into") != std::string::npos);
  }
  fs::remove(not_a_dir);
  // a good run: processes, --verify, the summary's host_transfers and offload_file_io sections
  const std::string json = (dir.path / "s.json").string();
  const auto out =
      run_program("zero-train", tiny + "--stage 2 --world-size 2 --precision bf16 --verify --summary-json " + json +
                                    " --offload-optimizer " + dir.file_target());
  INFO(out.err);
  REQUIRE(out.status == 0);
  CHECK(out.out.find("bitwise equal to the single-rank reference") != std::string::npos);
  CHECK(out.out.find("file tier:") != std::string::npos);
  const auto j = nlohmann::json::parse(read_file(json));
  fs::remove(json);
  CHECK(j["config"]["offload_optimizer"] == dir.file_target());
  CHECK(j["config"]["offload_buffers"] == 3);
  CHECK(j["host_transfers"]["per_step"] == j["host_transfers"]["predicted_per_step"]);
  CHECK(j["offload_file_io"]["per_step"] == j["offload_file_io"]["predicted_per_step"]);
  for (const auto& m : j["memory"]["per_rank"]) {
    CHECK(m["host"]["by_category"] == m["host"]["by_category_predicted"]);
    CHECK(!m["by_category"].contains("master"));
    CHECK(!m["by_category"].contains("optimizer"));
  }
  CHECK(dir.entries() == 0);
}

TEST_CASE("ZeRO-Offload settings are in the config hash: ranks that disagree fail at start-up", "[ch14]") {
  const train::TrainConfig c0 = zero_config(1, 2, 1, "bf16");
  for (const auto change : {+[](train::TrainConfig& c) {
                              c.offload_optimizer = {train::OffloadKind::host, ""};
                            },
                            +[](train::TrainConfig& c) { c.offload_buffers = 5; },
                            +[](train::TrainConfig& c) { c.offload_read_ahead = false; }}) {
    train::TrainConfig c1 = c0;
    change(c1);
    CHECK(train::config_hash(c1) != train::config_hash(c0));
  }
  train::TrainConfig c1 = c0;
  c1.offload_optimizer = {train::OffloadKind::host, ""};  // rank 1 was started with the flag, rank 0 without
  for (const std::string& error : run_two_configs(c0, c1))
    CHECK(error.find("configuration mismatch") != std::string::npos);
}
