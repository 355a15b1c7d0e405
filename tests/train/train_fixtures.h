// Shared settings for the training-loop tests: tiny models that run in milliseconds per step.
#pragma once

#include <memory>
#include <string>

#include "core/words.h"
#include "data/addition.h"
#include "reference/single_rank.h"
#include "train/train_config.h"

namespace zt::test {

/// A GPT small enough to train a few steps per test case in well under a second.
inline train::TrainConfig tiny_config() {
  train::TrainConfig c;
  c.layers = 1;
  c.heads = 2;
  c.width = 16;
  c.context = 16;
  c.steps = 3;
  c.global_batch = 4;
  c.micro_batch = 4;
  c.eval_every = 0;
  c.warmup_steps = 0;
  c.memory_budget_mb = 64;
  return c;
}

/// A setting's value from the word its flag takes: test tables keep the words they print.
/// @param text e.g. "fp16". @return the enum value (zt::Error for a word the flag refuses).
template <typename E>
E word(const std::string& text) {
  return parse_word<E>(text, "test setting");
}

/// The embedded dataset for a config's context.
inline std::unique_ptr<AdditionDataset> addition_for(const train::TrainConfig& c) {
  AdditionConfig a;
  a.context = static_cast<std::size_t>(c.context);
  return std::make_unique<AdditionDataset>(a);
}

/// Run a config on the embedded dataset.
inline train::RunResult run(const train::TrainConfig& c, train::RunArtifacts* artifacts = nullptr) {
  auto data = addition_for(c);
  return reference::train_single_rank(c, *data, {}, artifacts);
}

}  // namespace zt::test
