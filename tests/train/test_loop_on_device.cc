// The single-rank reference loop on the emulated device (device/emulated_runtime.h) trains bit for
// bit as on the host: every step record, every held-out evaluation, step 1's gradient and the
// final master weights, for fp32, fp16 and bf16, with one micro-batch per step and with several
// (the canonical accumulator's merges then run as device kernels), with loss-scale overflows and
// skipped steps, clipping, activation checkpointing and --no-master-weights. On the device the
// arena is device memory that host code cannot touch (a host dereference kills the process, so a
// pass also proves the loop reaches its tensors only through its ops), and its ledger still
// equals the closed-form prediction category by category; the token ids and predictions live in
// a pinned host-side arena whose ledger equals its own prediction.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "report/compare_runs.h"
#include "train/memory_plan.h"
#include "train/train_fixtures.h"

using zt::test::tiny_config;
using zt::test::word;
using zt::train::TrainConfig;

namespace {

struct Outcome {
  zt::train::RunResult run;
  zt::train::RunArtifacts artifacts;
};

Outcome train_on(TrainConfig c, zt::device::Device device) {
  c.device = device;
  c.dump_params = "kept";  // the loop keeps the final master weights and step 1's gradient
  c.dump_grads = "kept";
  Outcome o;
  o.run = zt::test::run(c, &o.artifacts);
  return o;
}

void check_bitwise_equal(const TrainConfig& c) {
  const Outcome host = train_on(c, zt::device::Device::cpu);
  const Outcome dev = train_on(c, zt::device::Device::emulated);
  const zt::report::RunComparison v =
      zt::report::compare_runs(host.run, host.artifacts.final_params, dev.run, dev.artifacts.final_params);
  INFO(v.describe());
  CHECK(v.equal());
  CHECK(zt::report::compare_params(host.artifacts.step1_grad, dev.artifacts.step1_grad).empty());
  REQUIRE(host.run.steps.size() == dev.run.steps.size());
  for (std::size_t s = 0; s < host.run.steps.size(); ++s)
    CHECK(host.run.steps[s].grad16_zeros == dev.run.steps[s].grad16_zeros);  // chapter 2's counter
  CHECK(host.run.frozen_fraction == dev.run.frozen_fraction);                // and the stall's
  CHECK(host.run.frozen_window_fraction == dev.run.frozen_window_fraction);
  CHECK(!host.run.evals.empty());

  // the device arena's ledger equals the prediction with the token ids and predictions moved
  // out; they are the host side's, and its ledger equals its prediction too
  REQUIRE(dev.run.memory.size() == 1);
  const zt::train::RankMemory& m = dev.run.memory[0];
  CHECK(m.by_category == m.by_category_predicted);
  CHECK(m.peak_bytes == m.high_water_bytes_predicted);
  CHECK(m.model_states_bytes == m.model_states_bytes_predicted);
  CHECK(m.by_category.count("batch") == 0);
  CHECK(m.by_category.count("eval") == 0);
  CHECK(m.host_by_category == m.host_by_category_predicted);
  CHECK(m.host_by_category.count("batch") == 1);
  CHECK(m.host_by_category.count("eval") == 1);
  // and the device's categories are the host run's, less those two
  auto on_host = host.run.memory[0].by_category;
  on_host.erase("batch");
  on_host.erase("eval");
  CHECK(m.by_category == on_host);

  // the last applied step's copies between host and device memory equal their closed form
  // (train/copy_plan.h), by kind; the host run copies nothing
  if (!dev.run.steps.back().skipped)
    for (const auto kind : {zt::device::CopyKind::host_to_device, zt::device::CopyKind::device_to_host}) {
      INFO(zt::word_of(kind));
      CHECK(dev.run.device_copies_per_step.copies_of(kind) == dev.run.device_copies_predicted_per_step.copies_of(kind));
      CHECK(dev.run.device_copies_per_step.bytes_of(kind) == dev.run.device_copies_predicted_per_step.bytes_of(kind));
      CHECK(dev.run.device_copies_per_step.bytes_of(kind) > 0);
    }
  CHECK(host.run.device_copies_total == zt::device::CopyStats{});
}

}  // namespace

TEST_CASE("the reference loop on the emulated device: bitwise the host's, fp32 / fp16 / bf16, A = 1 and 3", "[ch13]") {
  for (const char* precision : {"fp32", "fp16", "bf16"})
    for (const int64_t A : {1, 3}) {
      TrainConfig c = tiny_config();
      c.precision = word<zt::model::Precision>(precision);
      c.micro_batch = 2;
      c.global_batch = 2 * A;
      c.eval_every = 2;
      INFO(precision << ", A = " << A);
      check_bitwise_equal(c);
    }
}

TEST_CASE("the reference loop on the emulated device: overflow skips, clipping, checkpointing, no master", "[ch13]") {
  SECTION("fp16 with a loss scale that overflows: the skipped steps and the backed-off scale agree") {
    TrainConfig c = tiny_config();
    c.precision = word<zt::model::Precision>("fp16");
    c.loss_scale_init = 16777216.0;  // 2^24, the largest allowed: the first steps overflow and back off
    c.steps = 4;
    const Outcome dev = train_on(c, zt::device::Device::emulated);
    int skipped = 0;
    for (const auto& s : dev.run.steps) skipped += s.skipped ? 1 : 0;
    CHECK(skipped > 0);
    check_bitwise_equal(c);
  }
  SECTION("bf16 with every step clipped") {
    TrainConfig c = tiny_config();
    c.precision = word<zt::model::Precision>("bf16");
    c.clip_grad_norm = 1.0e-3;
    const Outcome dev = train_on(c, zt::device::Device::emulated);
    for (const auto& s : dev.run.steps) CHECK(s.clipped);
    check_bitwise_equal(c);
  }
  SECTION("fp32 with activation checkpointing") {
    TrainConfig c = tiny_config();
    c.checkpoint_activations = true;
    check_bitwise_equal(c);
  }
  SECTION("fp16 and bf16 with the split Linears in B = 4 tensor-parallel blocks, checkpointing in bf16") {
    for (const char* precision : {"fp16", "bf16"}) {
      TrainConfig c = tiny_config();
      c.heads = 4;
      c.mp_blocks = 4;
      c.precision = word<zt::model::Precision>(precision);
      c.checkpoint_activations = std::string(precision) == "bf16";
      check_bitwise_equal(c);
    }
  }
  SECTION("bf16 without master weights (the stall counter compares on the device)") {
    TrainConfig c = tiny_config();
    c.precision = word<zt::model::Precision>("bf16");
    c.no_master_weights = true;
    check_bitwise_equal(c);
  }
}
