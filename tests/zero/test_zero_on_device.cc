// The ZeRO engine on the emulated device (device/emulated_runtime.h) trains bit for bit as on the
// host: stages 0-3 × N = 1, 2, 4 ranks × fp32 / fp16 / bf16, two micro-batches per rank, every
// rank's step records, the held-out evaluations, step 1's gradient and the final master weights
// equal to the same run with --device cpu. Each rank's arena is device memory that host code
// cannot touch (a host dereference kills the process), its collectives are staged through pinned
// host memory around Gloo, and its ledger equals the closed-form prediction on every rank, the
// token ids and predictions in a host-side arena with a prediction of its own; the last step's
// copies between host and device memory equal their closed form by kind. A checkpoint saved
// on either device resumes on the other with the bits of an unbroken run.
// Each row runs in its own Catch2 section named after it.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/run_program.h"
#include "zero/zero_fixtures.h"

using namespace zt;
using namespace zt::test;

namespace {

void check_device_equals_host(train::TrainConfig c) {
  c.eval_every = 2;
  c.device = device::Device::cpu;
  const ZeroRun host = run_zero(c);
  c.device = device::Device::emulated;
  const ZeroRun dev = run_zero(c);
  REQUIRE(host.errors == "");
  REQUIRE(dev.errors == "");
  REQUIRE(host.ranks.size() == dev.ranks.size());
  for (std::size_t r = 0; r < dev.ranks.size(); ++r) {
    INFO("rank " << r);
    const train::RunResult& h = host.ranks[r].value->run;
    const train::RunResult& d = dev.ranks[r].value->run;
    CHECK(compare_steps(d.steps, h.steps) == "");
    CHECK(compare_evals(d.evals, h.evals) == "");
    REQUIRE(d.memory.size() == 1);
    const train::RankMemory& m = d.memory[0];
    CHECK(m.by_category == m.by_category_predicted);  // the device arena: ledger == prediction
    CHECK(m.peak_bytes == m.high_water_bytes_predicted);
    CHECK(m.host_by_category == m.host_by_category_predicted);  // the host side: ids and predictions
    CHECK(m.host_by_category.size() == 2);
    auto on_host = h.memory[0].by_category;  // the device holds what the host run's arena holds, less those
    for (const auto& [name, bytes] : m.host_by_category) on_host.erase(name);
    CHECK(m.by_category == on_host);
    // the last step's copies between host and device memory, by kind, equal their closed form
    // (predict/zero_comm.h); device-to-device copies are not host traffic and are not predicted
    const zero::ZeroRunResult& z = *dev.ranks[r].value;
    REQUIRE(!d.steps.back().skipped);
    for (const auto kind : {device::CopyKind::host_to_device, device::CopyKind::device_to_host}) {
      INFO(word_of(kind));
      CHECK(z.device_copies_per_step.copies_of(kind) == z.device_copies_predicted_per_step.copies_of(kind));
      CHECK(z.device_copies_per_step.bytes_of(kind) == z.device_copies_predicted_per_step.bytes_of(kind));
      CHECK(z.device_copies_per_step.bytes_of(kind) > 0);
    }
    CHECK(host.ranks[r].value->device_copies_total == device::CopyStats{});  // none on the host
  }
  CHECK(compare_params(dev.artifacts.final_params, host.artifacts.final_params) == "");
  CHECK(compare_params(dev.artifacts.step1_grad, host.artifacts.step1_grad) == "");
}

}  // namespace

TEST_CASE("ZeRO on the emulated device: stages 0-3 x N = 1, 2, 4 x fp32 / fp16 / bf16, bitwise the host's", "[ch9]") {
  for (const char* precision : {"fp32", "fp16", "bf16"})
    for (const int world : {1, 2, 4})
      for (const int stage : {0, 1, 2, 3}) {
        const std::string row =
            std::string(precision) + " N=" + std::to_string(world) + " stage " + std::to_string(stage);
        SECTION(row) { check_device_equals_host(zero_config(stage, world, 2, precision)); }
      }
}

TEST_CASE("ZeRO on the emulated device: a 16-bit wire, buckets and prefetch, bitwise the host's", "[ch9]") {
  SECTION("bf16 stage 1, --reduce-dtype compute (the sum narrowed on the device)") {
    train::TrainConfig c = zero_config(1, 2, 2, "bf16");
    c.reduce_dtype = train::ReduceDtype::compute;
    check_device_equals_host(c);
  }
  SECTION("fp16 stage 2, --reduce-dtype compute, one micro-batch per rank (the wire is the gradient)") {
    train::TrainConfig c = zero_config(2, 2, 1, "fp16");
    c.reduce_dtype = train::ReduceDtype::compute;
    check_device_equals_host(c);
  }
  SECTION("fp32 stage 2 with small buckets, stage 3 with prefetch 2") {
    train::TrainConfig c = zero_config(2, 2, 2, "fp32");
    c.bucket_mb = 0.0005;
    check_device_equals_host(c);
    c = zero_config(3, 4, 1, "bf16");
    c.prefetch = 2;
    check_device_equals_host(c);
  }
}

TEST_CASE("ZeRO on the emulated device: a checkpoint saved on one device resumes on the other, bitwise", "[ch9]") {
  struct Case {
    int stage;
    const char* precision;
    device::Device save_on, resume_on;
  };
  const Case cases[] = {{1, "fp32", device::Device::emulated, device::Device::cpu},
                        {3, "fp16", device::Device::cpu, device::Device::emulated},
                        {2, "bf16", device::Device::emulated, device::Device::emulated}};
  for (const Case& k : cases) {
    const std::string row = "stage " + std::to_string(k.stage) + " " + k.precision + ", saved on " +
                            word_of(k.save_on) + ", resumed on " + word_of(k.resume_on);
    SECTION(row) {
      const std::string dir = "/tmp/zt_device_ckpt_" + std::to_string(::getpid()) + "_" + std::to_string(k.stage);
      std::filesystem::remove_all(dir);
      train::TrainConfig c = zero_config(k.stage, 2, 2, k.precision);
      c.steps = 4;
      const ZeroRun whole = run_zero(c);  // on the host, without a break
      train::TrainConfig first = c;       // the same run, saved after steps 2 and 4
      first.device = k.save_on;
      first.save_dir = dir;
      first.save_every = 2;
      REQUIRE(run_zero(first).errors == "");
      train::TrainConfig rest = c;
      rest.device = k.resume_on;
      rest.resume = dir + "/step-00000002";
      const ZeroRun resumed = run_zero(rest);
      std::filesystem::remove_all(dir);
      REQUIRE(whole.errors == "");
      REQUIRE(resumed.errors == "");
      CHECK(compare_params(resumed.artifacts.final_params, whole.artifacts.final_params) == "");
      const auto& all = whole.ranks[0].value->run.steps;
      const std::vector<train::StepRecord> last_two(all.end() - 2, all.end());
      CHECK(compare_steps(resumed.ranks[0].value->run.steps, last_two) == "");
    }
  }
}

TEST_CASE("zero-train --device emulated: ranks as processes, --verify against the reference on the device", "[ch9]") {
  const auto out = run_program("zero-train",
                               "--layers 1 --heads 2 --width 16 --context 16 --global-batch 8 --steps 3 "
                               "--world-size 2 --stage 3 --precision bf16 --device emulated --verify");
  INFO(out.err);
  CHECK(out.status == 0);
  CHECK(out.out.find("bitwise equal to the single-rank reference") != std::string::npos);
}

TEST_CASE("zero-train --device emulated: what does not run on a device yet is one line, on every rank", "[ch9]") {
  const std::string tiny = "--layers 1 --heads 2 --width 16 --context 16 --global-batch 4 --steps 1 --device emulated ";
  for (const std::string extra :
       {"--gemm blas", "--world-size 2 --mp-size 2", "--stage 3 --checkpoint-activations --partition-activations on",
        "--stage 1 --offload-optimizer host"}) {
    const auto out = run_program("zero-train", tiny + extra);
    INFO(extra << ": " << out.err);
    CHECK(out.status == 2);
    CHECK(line_count(out.err) == 1);
    CHECK(out.err.find("--device emulated: ") != std::string::npos);
    CHECK(out.err.find("does not run on a device yet") != std::string::npos);
  }
}
