// Chapter 2's first failure mode on demand: fp16 without loss scaling (--loss-scale none) and the
// grad16_zeros counter, checked against an independent count of the dumped step-1 gradient; and
// the printed loss-scale history of the second (a scale too large), against hand-written records.
#include <catch2/catch.hpp>

#include <algorithm>

#include "train/step_report.h"
#include "train_fixtures.h"

using namespace zt;

namespace {

/// Chapter 2's settings (the default GPT, 1-digit addition, one micro-batch of 16), one step.
train::TrainConfig chapter2_step(const std::string& loss_scale) {
  train::TrainConfig c;
  c.digits = 1;
  c.global_batch = 16;
  c.micro_batch = 16;
  c.steps = 1;
  c.warmup_steps = 1;
  c.eval_every = 0;
  c.precision = model::Precision::fp16;
  c.loss_scale = test::word<train::LossScale>(loss_scale);
  c.dump_grads = "kept-in-memory";  // asks the loop for step 1's gradient; nothing is written
  return c;
}

int64_t zeros_of(const std::vector<float>& g) { return std::count(g.begin(), g.end(), 0.0f); }

}  // namespace

TEST_CASE("loss scale none: S = 1 and grad16_zeros equals the zeros of the dumped step-1 gradient", "[ch2][train]") {
  train::RunArtifacts a;
  const auto r = test::run(chapter2_step("none"), &a);
  REQUIRE(r.steps.size() == 1);
  CHECK(r.steps[0].loss_scale == 1.0f);
  CHECK_FALSE(r.steps[0].skipped);
  // with S = 1 and one micro-batch the dumped gradient is float(g16) exactly: zero where g16 is
  REQUIRE(a.step1_grad.size() == static_cast<std::size_t>(r.param_count));
  CHECK(r.steps[0].grad16_zeros == zeros_of(a.step1_grad));
  CHECK(r.steps[0].grad16_zeros > 0);
}

TEST_CASE("loss scale dynamic: fewer 16-bit zeros than without scaling, and the same forward loss", "[ch2][train]") {
  train::RunArtifacts scaled_a;
  const auto scaled = test::run(chapter2_step("dynamic"), &scaled_a);
  const auto unscaled = test::run(chapter2_step("none"));
  CHECK(scaled.steps[0].loss_scale == 65536.0f);
  // S = 2^16 is exact to undo, so a zero of the unscaled dump is a zero of g16
  CHECK(scaled.steps[0].grad16_zeros == zeros_of(scaled_a.step1_grad));
  CHECK(scaled.steps[0].grad16_zeros < unscaled.steps[0].grad16_zeros);
  CHECK(scaled.steps[0].loss == unscaled.steps[0].loss);  // the forward pass does not see S
}

TEST_CASE("grad16_zeros: counted for fp16 and bf16, not for FP32", "[ch2][train]") {
  train::TrainConfig c = test::tiny_config();
  c.precision = model::Precision::fp32;
  CHECK(test::run(c).steps.front().grad16_zeros == -1);
  c.precision = model::Precision::bf16;
  CHECK(test::run(c).steps.front().grad16_zeros >= 0);
}

TEST_CASE("loss_scale_history: run-length coded scales and skips", "[ch2][train]") {
  std::vector<train::StepRecord> s(5);
  const float scales[] = {1024, 512, 256, 256, 256};
  for (int i = 0; i < 5; ++i) {
    s[i].step = i + 1;
    s[i].loss_scale = scales[i];
    s[i].skipped = i < 2;
  }
  CHECK(train::loss_scale_history(s) == "1: 1024 skipped, 2: 512 skipped, 3-5: 256");
  for (auto& x : s) {
    const int64_t step = x.step;
    x = train::StepRecord{};
    x.step = step;
    x.loss_scale = 65536;
  }
  CHECK(train::loss_scale_history(s).empty());      // one scale, no skip: nothing to show
  CHECK(train::grad16_zeros_line(s, 100).empty());  // not counted
  s[0].grad16_zeros = 3;
  s[4].grad16_zeros = 50;
  CHECK(train::grad16_zeros_line(s, 200) == "step 1: 3 of 200 (1.50%), step 5: 50 (25.00%)");
}
