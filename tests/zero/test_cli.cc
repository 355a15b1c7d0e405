// zero-train with --stage / --world-size as a user meets it: ranks as processes and as threads,
// --verify, the comm object, the start-up config check, and bad input. Programs are the build's
// bin/zero-train and bin/zero-launch, run by support/run_program.h (argv, no shell).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "support/run_program.h"
#include "train/train_flags.h"
#include "zero/config_check.h"
#include "zero/zero_fixtures.h"

using namespace zt;
using namespace zt::test;

namespace {
const std::string kTiny =
    "--layers 1 --heads 2 --width 16 --context 16 --steps 2 --global-batch 8 "
    "--micro-batch 2 --eval-every 0 --warmup-steps 0 --norm-block 32 ";
// zero-train with plain space-separated arguments
ProgramOutput zero_train(const std::string& args) { return run_program("zero-train", args); }
// zero-launch -n N -- zero-train ARGS
ProgramOutput launched(int n, const std::string& args) {
  return run_program(argv_of({bin("zero-launch"), "-n", std::to_string(n), "--", bin("zero-train")}, args));
}
}  // namespace

TEST_CASE("zero-train --verify: processes and threads, stages 1-3, bitwise equal", "[ch6]") {
  for (const char* how : {"", "--ranks-as threads "})
    for (int stage : {1, 2, 3}) {
      const std::string json = "/tmp/zt_zero_cli_" + std::to_string(::getpid()) + ".json";
      const auto out = zero_train(kTiny + how + "--precision bf16 --world-size 2 --verify --stage " +
                                  std::to_string(stage) + " --summary-json " + json);
      INFO(out.out << out.err);
      REQUIRE(out.status == 0);
      CHECK(out.out.find("bitwise equal to the single-rank reference") != std::string::npos);
      std::ifstream f(json);
      const auto j = nlohmann::json::parse(f);
      std::remove(json.c_str());
      CHECK(j["verify"]["bitwise_equal"] == true);
      CHECK(j["memory"]["per_rank"].size() == 2);
      for (const auto& m : j["memory"]["per_rank"]) CHECK(m["by_category"] == m["by_category_predicted"]);
      CHECK(j["comm"]["bytes_sent_per_step"] == j["comm"]["predicted_bytes_sent_per_step"]);
      CHECK(j["comm"]["calls_per_step"]["reduce_scatter"].get<int>() > 0);
    }
}

TEST_CASE("zero-train --verify reports the first differing parameter outside the conditions", "[ch6]") {
  // 2 ranks x 3 micro-batches under step sync: A = 3 is not a power of two
  const auto out = zero_train(
      "--layers 1 --heads 2 --width 16 --context 16 --steps 2 --global-batch 12 "
      "--micro-batch 2 --eval-every 0 --warmup-steps 0 --ranks-as threads --world-size 2 --grad-sync step --verify");
  CHECK(out.status == 1);
  CHECK(out.out.find("first differing parameter") != std::string::npos);
}

TEST_CASE("zero-train: bad ZeRO input is one clear line and a non-zero exit", "[ch6]") {
  for (const char* args :
       {"--stage 4", "--world-size 3", "--grad-sync sometimes", "--overlap maybe", "--world-size 0"}) {
    const auto out = zero_train(kTiny + args);
    INFO(args << ": " << out.err);
    CHECK(out.status != 0);
    CHECK(out.err.rfind("zero-train: error: ", 0) == 0);
  }
}

TEST_CASE("mismatched configs across ranks: every rank fails with a clear message", "[ch6]") {
  auto c0 = zero_config(1, 2, 1, "fp32");
  auto c1 = c0;
  c1.lr = c0.lr * 2;  // rank 1 was started with different flags
  for (const std::string& error : run_two_configs(c0, c1)) {
    INFO(error);
    CHECK(error.find("configuration mismatch") != std::string::npos);  // non-empty: the rank failed
  }
}

TEST_CASE("config hash: every floating-point setting is compared by its exact bits", "[ch6]") {
  // six-decimal text would hash eps = 1e-8 and 2e-8 alike: ranks would train with different eps
  const auto base = zero_config(2, 2, 1, "fp32");
  using Field = double& (*)(train::TrainConfig&);  // the settings live in several option structs
  for (Field field : std::vector<Field>{[](train::TrainConfig& c) -> double& { return c.lr; },
                                        [](train::TrainConfig& c) -> double& { return c.weight_decay; },
                                        [](train::TrainConfig& c) -> double& { return c.beta1; },
                                        [](train::TrainConfig& c) -> double& { return c.beta2; },
                                        [](train::TrainConfig& c) -> double& { return c.eps; },
                                        [](train::TrainConfig& c) -> double& { return c.momentum; },
                                        [](train::TrainConfig& c) -> double& { return c.clip_grad_norm; },
                                        [](train::TrainConfig& c) -> double& { return c.loss_scale_init; },
                                        [](train::TrainConfig& c) -> double& { return c.loss_scale_growth_factor; },
                                        [](train::TrainConfig& c) -> double& { return c.loss_scale_backoff; },
                                        [](train::TrainConfig& c) -> double& { return c.bucket_mb; },
                                        [](train::TrainConfig& c) -> double& { return c.persist_below_mb; }}) {
    auto next = base;
    field(next) = std::nextafter(field(next), 1e300);  // the smallest possible difference
    INFO("value " << field(next));
    CHECK(train::config_hash(next) != train::config_hash(base));
  }
  auto floor = base;  // the floor is derived (lr / 10) unless given: its resolved bits are hashed
  floor.min_lr = std::nextafter(base.resolved_min_lr(), 1e300);
  CHECK(train::config_hash(floor) != train::config_hash(base));
}

TEST_CASE("zero-train under zero-launch (torchrun variables): ranks from the environment", "[ch6]") {
  const auto out = launched(2, kTiny + "--stage 2 --verify");
  INFO(out.out << out.err);
  CHECK(out.status == 0);
  CHECK(out.out.find("bitwise equal to the single-rank reference") != std::string::npos);
  // a --world-size that contradicts the launcher's WORLD_SIZE is an error on every rank
  const auto bad = launched(2, kTiny + "--world-size 4");
  CHECK(bad.status != 0);
}

TEST_CASE("zero-train --trace: a Chrome trace with every rank's compute and blocked spans", "[ch9]") {
  const std::string trace = "/tmp/zt_zero_trace_" + std::to_string(::getpid()) + ".json";
  const auto out = zero_train(kTiny + "--ranks-as threads --world-size 2 --stage 3 --prefetch 1 --trace " + trace);
  REQUIRE(out.status == 0);
  std::ifstream f(trace);
  const auto j = nlohmann::json::parse(f);
  std::remove(trace.c_str());
  std::size_t compute[2] = {0, 0}, waits[2] = {0, 0};
  for (const auto& e : j["traceEvents"]) {
    const int pid = e["pid"].get<int>();
    REQUIRE((pid == 0 || pid == 1));
    if (e["ph"] == "M") continue;  // a track's name
    CHECK(e["dur"].get<double>() >= 0);
    compute[pid] += e["cat"] == "compute";
    waits[pid] += e["cat"] == "wait";
  }
  // 2 steps x 2 micro-batches x (forward L+3 + backward L+2 unit spans), L = 1
  CHECK(compute[0] == 2 * 2 * 7);
  CHECK(compute[1] == compute[0]);
  CHECK(waits[0] > 0);
}

// Regression: one rank at stage 0 ran the reference loop, which keeps no timeline, and --trace
// wrote nothing while exiting 0. A timeline now sends the run to the engine (plan/rank_prediction.h).
TEST_CASE("zero-train --trace on one rank at stage 0 writes its timeline", "[ch9]") {
  const std::string trace = "/tmp/zt_zero_trace1_" + std::to_string(::getpid()) + ".json";
  std::remove(trace.c_str());
  const auto out = zero_train(kTiny + "--trace " + trace);
  REQUIRE(out.status == 0);
  std::ifstream f(trace);
  REQUIRE(f.good());
  const auto j = nlohmann::json::parse(f);
  std::remove(trace.c_str());
  std::size_t compute = 0;
  for (const auto& e : j["traceEvents"]) compute += e["ph"] != "M" && e["cat"] == "compute";
  CHECK(compute == 2 * 4 * 7);  // 2 steps x 4 micro-batches (8 / 2 on one rank) x 7 unit spans, as above
}

// Regression: an out-of-memory error while a prefetched all-gather was in flight used to unwind
// the step and free the gather buffer under the communication thread (SIGSEGV in 2 of 3 runs).
// The step interpreter waits for every call in flight before its buffers go.
TEST_CASE("stage 3: out of memory during prefetch is one clean error, never a crash", "[ch9][zero][cli]") {
  for (int run = 0; run < 3; ++run) {
    const auto out = zero_train(
        "--stage 3 --world-size 4 --ranks-as threads --layers 8 --heads 4 --width 192 "
        "--precision fp16 --global-batch 4 --micro-batch 1 --steps 1 --warmup-steps 0 --eval-every 0 "
        "--memory-budget-mb 16 --prefetch 1");
    INFO(out.err);
    CHECK(out.status == 2);  // a rank's own error (core/error_report.h)
    CHECK(out.err.find("out of memory") != std::string::npos);
  }
}

TEST_CASE("persist-below-mb: a negative size is one clear line, and the setting is in the config hash", "[ch9]") {
  for (const char* args : {"--stage 3 --world-size 2 --ranks-as threads --persist-below-mb -1",
                           "--persist-below-mb -0.5", "--persist-below-mb lots"}) {
    const auto out = zero_train(kTiny + args);
    INFO(args << ": " << out.err);
    CHECK(out.status != 0);
    CHECK(out.err.rfind("zero-train: error: ", 0) == 0);
    CHECK(out.err.find("persist-below-mb") != std::string::npos);
    CHECK(std::count(out.err.begin(), out.err.end(), '\n') == 1);
  }
  auto c = zero_config(3, 2, 1, "fp32");
  c.persist_below_mb = -1;  // set in code, past the flag parser
  CHECK_THROWS_WITH(train::validate(c), Catch::Contains("--persist-below-mb -1 is negative"));
  auto a = zero_config(3, 2, 1, "fp32"), b = a;
  b.persist_below_mb = 1e-7;  // differs from 0 below to_string's six decimals
  CHECK(train::config_hash(a) != train::config_hash(b));
  // ranks started with different thresholds fail at start-up instead of issuing different gathers
  for (const std::string& error : run_two_configs(a, b)) {
    INFO(error);
    CHECK(error.find("configuration mismatch") != std::string::npos);  // non-empty: the rank failed
  }
}

TEST_CASE("zero-train --mp-size: a DP x MP grid of processes and threads, bitwise equal, JSON per group", "[ch11]") {
  const std::string mp_model =
      "--layers 2 --heads 4 --width 32 --context 8 --steps 2 --global-batch 4 --micro-batch 2 --eval-every 2 "
      "--warmup-steps 0 --norm-block 32 --precision bf16 ";
  for (const char* how : {"", "--ranks-as threads "})
    for (const char* ckpt : {"", "--checkpoint-activations "}) {
      const std::string json = "/tmp/zt_zero_mp_" + std::to_string(::getpid()) + ".json";
      const auto out =
          zero_train(mp_model + how + ckpt + "--world-size 4 --mp-size 2 --stage 2 --verify --summary-json " + json);
      INFO(how << ckpt << out.out << out.err);
      REQUIRE(out.status == 0);
      CHECK(out.out.find("bitwise equal to the single-rank reference") != std::string::npos);
      std::ifstream f(json);
      const auto j = nlohmann::json::parse(f);
      std::remove(json.c_str());
      CHECK(j["mp_size"] == 2);
      CHECK(j["dp_size"] == 2);
      CHECK(j["config"]["mp_blocks"] == 2);  // --mp-blocks defaults to --mp-size
      REQUIRE(j["memory"]["per_rank"].size() == 4);
      for (int r = 0; r < 4; ++r) {  // rank = dp_rank * N_m + mp_rank
        const auto& m = j["memory"]["per_rank"][r];
        CHECK(m["rank"] == r);
        CHECK(m["dp_rank"] == r / 2);
        CHECK(m["mp_rank"] == r % 2);
        CHECK(m["by_category"] == m["by_category_predicted"]);
      }
      const auto& comm = j["comm"];
      for (const char* g : {"dp", "mp"})
        CHECK(comm["groups"][g]["bytes_sent_per_step"] == comm["groups"][g]["predicted_bytes_sent_per_step"]);
      CHECK(comm["groups"]["mp"]["calls_per_step"]["all_reduce"].get<int>() > 0);
      // the top-level fields stay the sum over the groups
      for (const auto& [kind, bytes] : comm["bytes_sent_per_step"].items()) {
        uint64_t sum = 0;
        for (const char* g : {"dp", "mp"})
          if (comm["groups"][g]["bytes_sent_per_step"].contains(kind))
            sum += comm["groups"][g]["bytes_sent_per_step"][kind].get<uint64_t>();
        CHECK(bytes.get<uint64_t>() == sum);
      }
    }
}

TEST_CASE("zero-train: bad model-parallel input is one line and a non-zero exit on every rank", "[ch11]") {
  for (const char* args : {"--world-size 6 --mp-size 4", "--world-size 3 --mp-size 3", "--mp-blocks 3",
                           "--world-size 4 --mp-size 4 --mp-blocks 2", "--heads 2 --mp-blocks 4"}) {
    const auto out = zero_train(kTiny + args);
    INFO(args << ": " << out.err);
    CHECK(out.status == 2);
    CHECK(zt::test::line_count(out.err) == 1);
    CHECK(out.err.rfind("zero-train: error: ", 0) == 0);
  }
  // started by a launcher, each rank checks its flags against WORLD_SIZE itself, before any
  // rendezvous: every rank fails with the same line (run here one rank at a time, so that no
  // launcher stops a rank before it has said why)
  for (const char* rank : {"0", "1"}) {
    RunOptions o;
    o.env = {
        {"RANK", rank}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", rank}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "1"}};
    const auto out = run_program("zero-train", kTiny + "--mp-size 2 --mp-blocks 3", o);
    INFO("rank " << rank << ": " << out.err);
    CHECK(out.status == 2);
    CHECK(out.err == "zero-train: error: --mp-blocks 3 is not a power of two\n");
    const auto bad_world = run_program("zero-train", kTiny + "--mp-size 4", o);
    CHECK(bad_world.err.find("--world-size 2 is not a multiple of --mp-size 4") != std::string::npos);
  }
}

TEST_CASE("default --micro-batch: one per data-parallel rank, also when a launcher sets the world", "[ch6]") {
  // no --micro-batch: global batch / N_d, so `--world-size N` alone is a valid run (a default of the
  // whole global batch made every N > 1 fail)
  const std::string args = "--layers 1 --heads 2 --width 16 --context 16 --steps 1 --global-batch 8 --eval-every 0 ";
  const std::string json = "/tmp/zt_microbatch_" + std::to_string(::getpid()) + ".json";
  for (const auto& [world, mp] : {std::pair{2, 1}, std::pair{4, 2}, std::pair{4, 1}}) {
    const auto out = zero_train(args + "--ranks-as threads --world-size " + std::to_string(world) + " --mp-size " +
                                std::to_string(mp) + " --summary-json " + json);
    INFO(out.err);
    REQUIRE(out.status == 0);
    const auto j = nlohmann::json::parse(zt::read_file(json));
    CHECK(j["config"]["micro_batch"] == 8 / (world / mp));
  }
  std::remove(json.c_str());
  const auto launched_run = launched(2, args + "--stage 1");
  INFO(launched_run.err);
  CHECK(launched_run.status == 0);
  // a global batch that does not split over the ranks: one line naming the fix
  const auto bad = zero_train(args + "--world-size 3");
  CHECK(bad.status == 2);
  CHECK(bad.err.find("--global-batch 8 does not split over 3 data-parallel ranks: make it a multiple of 3") !=
        std::string::npos);
}
