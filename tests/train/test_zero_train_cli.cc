// zero-train as a user meets it: bad input is one line on stderr and a non-zero exit; the JSON and
// raw outputs are complete and round-trip the float32 values. The program is the build's
// bin/zero-train, run by support/run_program.h (argv, no shell).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/atomic_file.h"
#include "support/run_program.h"

namespace {
const std::string kTiny = "--layers 1 --heads 2 --width 16 --context 16 --global-batch 4 --warmup-steps 0 ";
// zero-train with plain space-separated arguments
zt::test::ProgramOutput run_zero_train(const std::string& args) { return zt::test::run_program("zero-train", args); }
}  // namespace

TEST_CASE("zero-train rejects bad input with one line and a non-zero exit", "[ch2][train][cli]") {
  for (const std::string args :
       {"--bogus", "--width 30 --heads 4", "--layers 0", "--steps -1", "--lr abc", "--global-batch 6 --micro-batch 4",
        "--memory-budget-mb 0.01", "--data /nonexistent/file.txt", "--precision fp8", "--no-master-weights"}) {
    INFO(args);
    const auto out = run_zero_train("--steps 1 --warmup-steps 0 " + args);
    CHECK(out.status != 0);
    CHECK(out.status != -1);
    CHECK(zt::test::line_count(out.err) == 1);
    CHECK(out.err.rfind("zero-train: error: ", 0) == 0);
  }
}

TEST_CASE("zero-train summary JSON and dumps", "[ch2][train][cli]") {
  const std::string dir = "/tmp/zt_cli_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const auto out = run_zero_train(kTiny + "--steps 3 --precision fp16 --summary-json " + dir +
                                  "/s.json --dump-manifest " + dir + "/m.json --dump-params " + dir +
                                  "/p.bin --dump-grads " + dir + "/g.bin --dump-batch " + dir + "/b.bin");
  REQUIRE(out.status == 0);
  const auto summary = nlohmann::json::parse(zt::read_file(dir + "/s.json"));
  const auto manifest = nlohmann::json::parse(zt::read_file(dir + "/m.json"));
  const int64_t psi = summary["param_count"];
  CHECK(summary["steps"].size() == 3);
  CHECK(summary["steps"][0]["step"] == 1);
  CHECK(summary["steps"][0]["loss_scale"] == 65536.0);
  int64_t offset = 0;
  for (const auto& p : manifest) {  // dense offsets in canonical order
    CHECK(p["offset"] == offset);
    offset += p["numel"].get<int64_t>();
  }
  CHECK(offset == psi);
  CHECK(manifest.front()["name"] == "wte");
  CHECK(manifest.back()["name"] == "ln_f.bias");
  CHECK(zt::read_file(dir + "/p.bin").size() == static_cast<std::size_t>(psi) * 4);
  CHECK(zt::read_file(dir + "/g.bin").size() == static_cast<std::size_t>(psi) * 4);
  CHECK(zt::read_file(dir + "/b.bin").size() == 4u * 17u * 4u);
  // a loss written to JSON reads back as the same float32 bits the run printed
  const float loss = summary["steps"][2]["loss"].get<float>();
  CHECK(static_cast<double>(loss) == summary["steps"][2]["loss"].get<double>());
  const auto& rank0 = summary["memory"]["per_rank"][0];
  CHECK(rank0["by_category"] == rank0["by_category_predicted"]);
  // two runs: byte-identical parameter dumps
  REQUIRE(run_zero_train(kTiny + "--steps 3 --precision fp16 --dump-params " + dir + "/q.bin").status == 0);
  CHECK(zt::read_file(dir + "/p.bin") == zt::read_file(dir + "/q.bin"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("zero-train: short runs and a low peak with every other flag at its default", "[ch2][train][cli]") {
  // the defaults (warm-up 20 steps, floor lr / 10) must never make a valid explicit choice fail
  for (const std::string args : {"--steps 1", "--steps 3", "--steps 0", "--lr 1e-4"}) {
    const std::string json = "/tmp/zt_cli_defaults_" + std::to_string(::getpid()) + ".json";
    const auto out = run_zero_train(args + " --summary-json " + json);
    INFO(args << ": " << out.err);
    REQUIRE(out.status == 0);
    const auto j = nlohmann::json::parse(zt::read_file(json));
    std::remove(json.c_str());
    const auto& c = j["config"];
    const int64_t steps = c["steps"];
    CHECK(c["warmup_steps"] == std::min<int64_t>(20, steps));  // the warm-up fits the run
    CHECK(c["min_lr"].get<double>() == c["lr"].get<double>() / 10);
    CHECK(c["lr_peak_reached"] == true);
    CHECK(j["steps"].size() == static_cast<std::size_t>(steps));
    if (steps >= 1 && steps <= 20)  // a warm-up as long as the run reaches --lr at the last step
      CHECK(j["steps"][steps - 1]["lr"].get<double>() ==
            static_cast<double>(static_cast<float>(c["lr"].get<double>())));
  }
}

TEST_CASE("zero-train: a warm-up longer than the run is kept, and the summary says the peak was not reached",
          "[ch2][train][cli]") {
  const std::string json = "/tmp/zt_cli_warmup_" + std::to_string(::getpid()) + ".json";
  const auto out = run_zero_train("--steps 4 --warmup-steps 10 --lr 0.002 --eval-every 0 --summary-json " + json);
  INFO(out.err);
  REQUIRE(out.status == 0);
  CHECK(out.out.find("warm-up outlasts the run") != std::string::npos);
  const auto j = nlohmann::json::parse(zt::read_file(json));
  std::remove(json.c_str());
  CHECK(j["config"]["warmup_steps"] == 10);
  CHECK(j["config"]["lr_peak_reached"] == false);
  for (int t = 1; t <= 4; ++t)  // η(t) = η_max · t / W throughout (optim/lr_schedule.h)
    CHECK(j["steps"][t - 1]["lr"].get<double>() == static_cast<double>(static_cast<float>(0.002 * t / 10)));
}

TEST_CASE("zero-train: a peak below the default floor lowers the floor; explicit contradictions fail",
          "[ch2][train][cli]") {
  const std::string json = "/tmp/zt_cli_floor_" + std::to_string(::getpid()) + ".json";
  const auto ok = run_zero_train(kTiny + "--steps 5 --lr 1e-4 --eval-every 0 --summary-json " + json);
  REQUIRE(ok.status == 0);
  const auto j = nlohmann::json::parse(zt::read_file(json));
  std::remove(json.c_str());
  CHECK(j["config"]["min_lr"].get<double>() == 1e-4 / 10);
  // the last step of the cosine is the floor itself
  CHECK(j["steps"][4]["lr"].get<double>() == static_cast<double>(static_cast<float>(1e-4 / 10)));
  // a floor above the peak is refused only when the user gave the floor
  const auto bad = run_zero_train(kTiny + "--steps 5 --lr 1e-4 --min-lr 1e-3");
  CHECK(bad.status == 2);
  CHECK(zt::test::line_count(bad.err) == 1);
  CHECK(bad.err.find("--min-lr 0.001 is above the peak --lr 0.0001") != std::string::npos);
}
