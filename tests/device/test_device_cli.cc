// `zero-train --device cuda` where it cannot run: one line on stderr and exit 2, on every rank,
// before any rank waits on another. Which line depends on the build and the machine, and the
// test asks the same probe the program asks (device/cuda_probe.h), so it holds on a laptop and on
// a CUDA build without a device; on a GPU machine there is nothing to refuse.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "core/atomic_file.h"
#include "device/cuda_probe.h"
#include "support/run_program.h"

namespace {
const std::string kTiny = "--layers 1 --heads 2 --width 16 --context 16 --global-batch 4 --steps 1 ";

// the reason the program must give for refusing --device cuda on this machine (empty: it runs
// here, and the GPU tests check that it trains: tests/gpu/test_gpu_engine.cc)
std::string expected_reason() {
  const auto p = zt::device::probe_cuda();
  if (!p.compiled) return "this build has no CUDA support";
  if (p.devices == 0) return "no CUDA device is visible to this process";
  return "";
}
}  // namespace

TEST_CASE("zero-train --device cuda where it cannot run: one line, exit 2", "[ch13]") {
  const std::string reason = expected_reason();
  if (reason.empty()) {
    WARN("a CUDA device is visible: --device cuda runs here (make test-gpu checks it)");
    return;
  }
  for (const std::string extra : {"", "--world-size 2 --ranks-as threads ", "--world-size 2 "}) {
    const auto out = zt::test::run_program("zero-train", kTiny + extra + "--device cuda");
    INFO(extra << ": " << out.err);
    CHECK(out.status == 2);
    CHECK(zt::test::line_count(out.err) == 1);
    CHECK(out.err.rfind("zero-train: error: --device cuda: ", 0) == 0);
    CHECK(out.err.find(reason) != std::string::npos);
  }
  // started by a launcher: each rank refuses on its own (one rank at a time here, so that no
  // launcher stops a rank before it has said why)
  for (const char* rank : {"0", "1"}) {
    zt::test::RunOptions o;
    o.env = {
        {"RANK", rank}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", rank}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "1"}};
    const auto out = zt::test::run_program("zero-train", kTiny + "--device cuda", o);
    INFO("rank " << rank << ": " << out.err);
    CHECK(out.status == 2);
    CHECK(zt::test::line_count(out.err) == 1);
    CHECK(out.err.find(reason) != std::string::npos);
  }
}

TEST_CASE("zero-train --device cpu is the default and is named in the summary", "[ch13]") {
  const std::string json = "/tmp/zt_device_" + std::to_string(::getpid()) + ".json";
  const auto out = zt::test::run_program("zero-train", kTiny + "--device cpu --summary-json " + json);
  INFO(out.err);
  REQUIRE(out.status == 0);
  const auto j = nlohmann::json::parse(zt::read_file(json));
  std::remove(json.c_str());
  CHECK(j["config"]["device"] == "cpu");
  CHECK(j["config"]["gemm"] == "canonical");
}
