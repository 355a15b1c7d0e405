// Two runs with the same settings give the same bits; the dumps hold what they claim to.
#include <catch2/catch.hpp>

#include <cstring>

#include "model/gpt_config.h"
#include "model/init.h"
#include "model/manifest.h"
#include "train_fixtures.h"

using namespace zt;

TEST_CASE("same seed, same bits: final weights and every step's numbers", "[ch2][train]") {
  for (const char* precision : {"fp32", "fp16", "bf16"}) {
    train::TrainConfig c = test::tiny_config();
    c.precision = test::word<model::Precision>(precision);
    c.micro_batch = 1;  // A = 4: the canonical accumulator is on the path
    train::RunArtifacts a, b;
    c.dump_params = "x";
    const auto ra = test::run(c, &a);
    const auto rb = test::run(c, &b);
    INFO(precision);
    REQUIRE(a.final_params.size() == static_cast<std::size_t>(ra.param_count));
    CHECK(std::memcmp(a.final_params.data(), b.final_params.data(), a.final_params.size() * 4) == 0);
    for (std::size_t s = 0; s < ra.steps.size(); ++s) {
      CHECK(std::memcmp(&ra.steps[s].loss, &rb.steps[s].loss, 4) == 0);
      CHECK(ra.steps[s].grad_norm == rb.steps[s].grad_norm);
    }
    c.seed += 1;  // and a different seed changes them
    train::RunArtifacts d;
    test::run(c, &d);
    CHECK(std::memcmp(a.final_params.data(), d.final_params.data(), a.final_params.size() * 4) != 0);
  }
}

TEST_CASE("zero steps dump the initial weights, the batch dump is the dataset's samples", "[ch2][train]") {
  train::TrainConfig c = test::tiny_config();
  c.steps = 0;
  c.dump_params = "x";
  train::RunArtifacts a;
  const auto r = test::run(c, &a);
  model::GptConfig g{13, c.context, c.layers, c.heads, c.width};
  std::vector<float> init(static_cast<std::size_t>(model::param_count(g)));
  model::init_params(g, static_cast<uint64_t>(c.seed), init.data());
  CHECK(a.final_params == init);
  CHECK(r.steps.empty());

  c.steps = 1;
  c.dump_batch = "x";
  c.dump_grads = "x";
  c.micro_batch = 2;
  train::RunArtifacts b;
  test::run(c, &b);
  auto data = test::addition_for(c);
  std::vector<int32_t> expect(static_cast<std::size_t>(c.global_batch * (c.context + 1)));
  for (int64_t i = 0; i < c.global_batch; ++i)
    data->sample(static_cast<uint64_t>(c.seed), 1, static_cast<uint64_t>(i), expect.data() + i * (c.context + 1));
  CHECK(b.step1_batch == expect);
  CHECK(b.step1_grad.size() == init.size());
}

TEST_CASE("step records: fp16 starts at the configured scale, bf16/fp32 at 1", "[ch2][train]") {
  train::TrainConfig c = test::tiny_config();
  c.precision = model::Precision::fp16;
  c.loss_scale_init = 1024;
  CHECK(test::run(c).steps.front().loss_scale == 1024.0f);
  c.precision = model::Precision::bf16;
  CHECK(test::run(c).steps.front().loss_scale == 1.0f);
}
