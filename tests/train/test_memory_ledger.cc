// Every ledger category's measured peak equals its closed-form prediction, for every precision,
// optimizer, gradient width and micro-batch count; and the paper's 16ψ for fp16 + AdamW with
// gradients stored in the compute dtype.
#include <catch2/catch.hpp>

#include "train/memory_plan.h"
#include "train_fixtures.h"

using namespace zt;

TEST_CASE("ledger: measured peak == predicted, category by category", "[ch3][train][memory]") {
  for (const char* precision : {"fp32", "fp16", "bf16"})
    for (const char* optimizer : {"adamw", "sgd"})
      for (const char* reduce : {"fp32", "compute"})
        for (int64_t micro : {4, 2, 1}) {  // A = 1, 2, 4 micro-batches... and 3 below
          train::TrainConfig c = test::tiny_config();
          c.precision = test::word<model::Precision>(precision);
          c.optimizer = test::word<train::Optimizer>(optimizer);
          c.reduce_dtype = test::word<train::ReduceDtype>(reduce);
          c.micro_batch = micro;
          c.steps = 2;
          INFO(precision << " " << optimizer << " " << reduce << " micro " << micro);
          const auto r = test::run(c);
          const auto& m = r.memory.at(0);
          CHECK(m.by_category == m.by_category_predicted);
          CHECK(m.peak_bytes == m.peak_bytes_predicted);
          CHECK(m.peak_bytes == m.high_water_bytes_predicted);
          CHECK(m.model_states_bytes == m.model_states_bytes_predicted);
          CHECK(m.padding_bytes == 0);
        }
  train::TrainConfig c = test::tiny_config();
  c.global_batch = 6;
  c.micro_batch = 2;  // A = 3: floor(log2 3) + 1 = 2 partial sums
  c.precision = model::Precision::bf16;
  const auto m = test::run(c).memory.at(0);
  CHECK(m.by_category == m.by_category_predicted);
  CHECK(m.by_category.at(train::category::accum_partials) ==
        2 * static_cast<std::size_t>(test::run(c).param_count) * 4);
}

TEST_CASE("fp16 + AdamW + reduce in compute dtype is the paper's 16 psi", "[ch3][train][memory]") {
  train::TrainConfig c = test::tiny_config();
  c.precision = model::Precision::fp16;
  c.optimizer = train::Optimizer::adamw;
  c.reduce_dtype = train::ReduceDtype::compute;
  const auto r = test::run(c);
  const auto psi = static_cast<std::size_t>(r.param_count);
  const auto& m = r.memory.at(0);
  CHECK(m.model_states_bytes == 16 * psi);
  CHECK(m.by_category.at("params") == 2 * psi);
  CHECK(m.by_category.at("grads") == 2 * psi);
  CHECK(m.by_category.at("master") == 4 * psi);
  CHECK(m.by_category.at("optimizer") == 8 * psi);
  // SGD with momentum: K = 8, so 2 + 2 + 4 + 4 = 12 psi; FP32 precision with Adam: 4 + 4 + 8
  c.optimizer = train::Optimizer::sgd;
  CHECK(test::run(c).memory.at(0).model_states_bytes == 12 * psi);
  c.optimizer = train::Optimizer::adam;
  c.precision = model::Precision::fp32;
  CHECK(test::run(c).memory.at(0).model_states_bytes == 16 * psi);
}

TEST_CASE("a budget too small is an out-of-memory error naming the category", "[ch3][train][memory]") {
  train::TrainConfig c = test::tiny_config();
  c.memory_budget_mb = 0.01;  // 10 KiB: the parameters alone need more
  try {
    test::run(c);
    FAIL("expected an out-of-memory error");
  } catch (const Error& e) {
    const std::string_view what = e.what();
    CHECK(what.find("out of memory") != std::string::npos);
    CHECK(what.find("params") != std::string::npos);
  }
}
