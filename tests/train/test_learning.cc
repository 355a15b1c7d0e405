// The loop learns, the 16-bit runs track FP32, and without master weights training stalls.
// These are the chapter 2 claims; their settings are the chapter's documented ones.
#include <catch2/catch.hpp>

#include "train_fixtures.h"

using namespace zt;

namespace {
// chapter 2, "the loss curves": a small GPT on 1-digit addition
train::TrainConfig learning_config(const char* precision) {
  train::TrainConfig c;
  c.digits = 1;
  c.layers = 2;
  c.heads = 4;
  c.width = 64;
  c.context = 32;
  c.global_batch = 16;
  c.micro_batch = 16;
  c.steps = 150;
  c.warmup_steps = 10;
  c.eval_every = 0;
  c.precision = test::word<model::Precision>(precision);
  return c;
}

train::RunResult run_digits(const train::TrainConfig& c) {
  AdditionConfig a;
  a.context = static_cast<std::size_t>(c.context);
  a.digits = static_cast<int>(c.digits);
  AdditionDataset data(a);
  return reference::train_single_rank(c, data, {}, nullptr);
}
}  // namespace

TEST_CASE("fp32 learns; fp16 and bf16 end within 5% of its loss", "[ch2][train][slow]") {
  const auto fp32 = run_digits(learning_config("fp32"));
  const float first = fp32.steps.front().loss, last = fp32.steps.back().loss;
  INFO("fp32 loss " << first << " -> " << last);
  CHECK(last <= 0.7f * first);
  REQUIRE(!fp32.evals.empty());  // the held-out accuracy is measured and reported
  CHECK(fp32.evals.back().problems > 0);
  for (const char* p : {"fp16", "bf16"}) {
    const auto r = run_digits(learning_config(p));
    INFO(p << " final loss " << r.steps.back().loss << " vs fp32 " << last);
    CHECK(std::abs(r.steps.back().loss - last) <= 0.05f * last);
  }
}

// Per element, an update d below half a spacing s never moves the 16-bit copy without a master,
// while with a master it moves it on about d/s of the steps: so at ONE step the frozen fractions
// differ by less than 2x (each such element is frozen with probability 1 - d/s > 1/2 with a
// master). Over a window of steps the master run moves almost every element and the run without
// it stays stuck: that is the stall, and the ratio asserted here. See chapter 2.
TEST_CASE("without master weights the 16-bit copy freezes and the loss is worse", "[ch2][train][slow]") {
  // the learning rate sits below half a spacing of most weights: 2^-8 spacing near 1 for bf16,
  // 2^-11 for fp16, so fp16 needs a rate about 8x smaller to stall
  for (auto [p, lr] : {std::pair{"bf16", 1e-4}, std::pair{"fp16", 1e-5}}) {
    train::TrainConfig c = learning_config(p);
    c.lr = lr;
    c.min_lr = lr;
    const auto with_master = run_digits(c);
    c.no_master_weights = true;
    const auto without = run_digits(c);
    INFO(p << ": frozen over the window " << with_master.frozen_window_fraction << " vs "
           << without.frozen_window_fraction << ", at the last step " << with_master.frozen_fraction << " vs "
           << without.frozen_fraction << ", loss " << with_master.steps.back().loss << " vs "
           << without.steps.back().loss);
    CHECK(without.frozen_window_fraction >= 2 * with_master.frozen_window_fraction);
    CHECK(without.steps.back().loss > with_master.steps.back().loss);
  }
}
