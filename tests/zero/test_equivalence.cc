// ZeRO stages 0-3 against the single-rank reference loop: bitwise equal master weights and
// per-step loss, grad_norm, loss_scale and skipped (ranks as threads, deterministic collectives).
// Where a test covers a selection of the axes, the selection is an explicit table (struct Case,
// const Case cases[]), and each row runs in its own Catch2 section named after it, so a failure
// names its row and one row re-runs alone: test_zero "TEST CASE NAME" -c "SECTION NAME".
#include <catch2/catch.hpp>

#include "zero/zero_fixtures.h"

using namespace zt;
using namespace zt::test;

namespace {

const char* on_off(bool b) { return b ? "on" : "off"; }

}  // namespace

TEST_CASE("stages 0 and 1, one micro-batch per rank: bitwise equal to the reference", "[ch6]") {
  struct Case {
    int stage, world;
    const char* precision;
    const char* optimizer;
  };
  const Case cases[] = {{0, 1, "fp32", "adamw"}, {1, 1, "fp32", "sgd"}, {0, 2, "fp32", "adamw"}, {1, 2, "fp32", "sgd"},
                        {0, 3, "fp32", "adamw"}, {1, 3, "fp32", "sgd"}, {0, 4, "fp32", "adamw"}, {1, 4, "fp32", "sgd"},
                        {0, 1, "fp16", "adamw"}, {1, 1, "fp16", "sgd"}, {0, 2, "fp16", "adamw"}, {1, 2, "fp16", "sgd"},
                        {0, 3, "fp16", "adamw"}, {1, 3, "fp16", "sgd"}, {0, 4, "fp16", "adamw"}, {1, 4, "fp16", "sgd"},
                        {0, 1, "bf16", "adamw"}, {1, 1, "bf16", "sgd"}, {0, 2, "bf16", "adamw"}, {1, 2, "bf16", "sgd"},
                        {0, 3, "bf16", "adamw"}, {1, 3, "bf16", "sgd"}, {0, 4, "bf16", "adamw"}, {1, 4, "bf16", "sgd"}};
  for (const Case& cs : cases)
    DYNAMIC_SECTION("stage " << cs.stage << ", N " << cs.world << ", " << cs.precision << ", " << cs.optimizer) {
      auto c = zero_config(cs.stage, cs.world, 1, cs.precision);
      c.optimizer = word<train::Optimizer>(cs.optimizer);
      c.clip_grad_norm = 0.5;
      const auto ref = check_equal(c);
      bool clipped = false;
      for (const auto& s : ref.steps) clipped |= s.clipped;
      CHECK(clipped);  // clipping fired in the reference, so the sharded norm path was exercised
    }
}

TEST_CASE("stages 0-3 under the schedule conditions: several micro-batches per rank", "[ch6]") {
  // M = 12 micro-batches: --grad-sync step needs A a power of two (3x4, 6x2, 12x1 ranks x A);
  // --grad-sync micro-batch needs N a power of two (4x3, 2x6). Kept small: M = 8 or 12.
  struct Case {
    int stage, world, per_rank;
    const char* sync;
    const char* precision;
    const char* optimizer;
  };
  const Case cases[] = {{0, 3, 4, "step", "fp32", "sgd"},        {1, 3, 4, "step", "bf16", "adam"},
                        {2, 3, 4, "step", "fp16", "sgd"},        {3, 3, 4, "step", "fp32", "adam"},
                        {0, 6, 2, "step", "bf16", "sgd"},        {1, 6, 2, "step", "fp16", "adam"},
                        {2, 6, 2, "step", "fp32", "sgd"},        {3, 6, 2, "step", "bf16", "adam"},
                        {0, 4, 3, "micro-batch", "fp16", "sgd"}, {1, 4, 3, "micro-batch", "fp32", "adam"},
                        {2, 4, 3, "micro-batch", "bf16", "sgd"}, {3, 4, 3, "micro-batch", "fp16", "adam"},
                        {0, 2, 6, "micro-batch", "fp32", "sgd"}, {1, 2, 6, "micro-batch", "bf16", "adam"},
                        {2, 2, 6, "micro-batch", "fp16", "sgd"}, {3, 2, 6, "micro-batch", "fp32", "adam"}};
  for (const Case& cs : cases)
    DYNAMIC_SECTION("stage " << cs.stage << ", N " << cs.world << ", A " << cs.per_rank << ", " << cs.sync << " sync, "
                             << cs.precision << ", " << cs.optimizer) {
      auto c = zero_config(cs.stage, cs.world, cs.per_rank, cs.precision);
      c.micro_batch = 1;
      c.global_batch = cs.world * cs.per_rank;
      c.grad_sync = word<train::GradSync>(cs.sync);
      c.optimizer = word<train::Optimizer>(cs.optimizer);
      c.bucket_mb = 0.002;  // stage 2: ~500-float buckets, cutting units
      check_equal(c);
    }
}

TEST_CASE("stage 2: buckets that cut units, overlap on and off, N = 1..5", "[ch7]") {
  struct Case {
    int world;
    const char* precision;
    const char* optimizer;
    double bucket_mb;
    bool overlap;
  };
  const Case cases[] = {
      {1, "fp32", "adamw", 0.0005, false}, {1, "fp16", "sgd", 0.001, true},    {1, "bf16", "adamw", 0.0005, true},
      {2, "fp32", "sgd", 0.001, false},    {2, "fp16", "adamw", 0.0005, true}, {2, "bf16", "sgd", 0.001, true},
      {3, "fp32", "adamw", 0.0005, false}, {3, "fp16", "sgd", 0.001, true},    {3, "bf16", "adamw", 0.0005, true},
      {4, "fp32", "sgd", 0.001, false},    {4, "fp16", "adamw", 0.0005, true}, {4, "bf16", "sgd", 0.001, true},
      {5, "fp32", "adamw", 0.0005, false}, {5, "fp16", "sgd", 0.001, true},    {5, "bf16", "adamw", 0.0005, true}};
  for (const Case& cs : cases)
    DYNAMIC_SECTION("stage 2, N " << cs.world << ", " << cs.precision << ", " << cs.optimizer << ", bucket "
                                  << cs.bucket_mb << " MiB, overlap " << on_off(cs.overlap)) {
      auto c = zero_config(2, cs.world, 1, cs.precision);
      c.bucket_mb = cs.bucket_mb;
      c.overlap = cs.overlap;
      c.optimizer = word<train::Optimizer>(cs.optimizer);
      c.clip_grad_norm = 0.5;
      check_equal(c);
    }
}

TEST_CASE("stage 3: parameters only as shards, N = 1..5 and 7", "[ch8]") {
  struct Case {
    int world;
    const char* precision;
    const char* optimizer;
    bool overlap;
    int prefetch;
  };
  const Case cases[] = {{1, "fp32", "adamw", true, 0}, {1, "fp16", "sgd", false, 1},  {1, "bf16", "adamw", true, 2},
                        {2, "fp32", "sgd", false, 0},  {2, "fp16", "adamw", true, 1}, {2, "bf16", "sgd", false, 2},
                        {3, "fp32", "adamw", true, 0}, {3, "fp16", "sgd", false, 1},  {3, "bf16", "adamw", true, 2},
                        {4, "fp32", "sgd", false, 0},  {4, "fp16", "adamw", true, 1}, {4, "bf16", "sgd", false, 2},
                        {5, "fp32", "adamw", true, 0}, {5, "fp16", "sgd", false, 1},  {5, "bf16", "adamw", true, 2},
                        {7, "fp32", "sgd", false, 0},  {7, "fp16", "adamw", true, 1}, {7, "bf16", "sgd", false, 2}};
  for (const Case& cs : cases)
    DYNAMIC_SECTION("stage 3, N " << cs.world << ", " << cs.precision << ", " << cs.optimizer << ", overlap "
                                  << on_off(cs.overlap) << ", prefetch " << cs.prefetch) {
      auto c = zero_config(3, cs.world, 1, cs.precision);
      c.optimizer = word<train::Optimizer>(cs.optimizer);
      c.overlap = cs.overlap;
      c.prefetch = cs.prefetch;
      c.clip_grad_norm = 0.5;
      check_equal(c);
    }
}

TEST_CASE("fp16 overflow: every stage skips the same step and backs off the scale", "[ch7]") {
  for (int stage : {0, 1, 2, 3})
    for (int world : {2, 3}) {
      auto c = zero_config(stage, world, 1, "fp16");
      c.loss_scale_init = 16777216;  // 2^24 (the cap): scaled gradients overflow fp16, step 1 is skipped
      c.steps = 3;
      const auto ref = check_equal(c);
      REQUIRE(ref.steps.size() == 3);
      CHECK(ref.steps[0].skipped);
      CHECK(ref.steps[1].loss_scale < ref.steps[0].loss_scale);
    }
}

TEST_CASE("outside the schedule conditions: deterministic, and equal across stages", "[ch6]") {
  // A = 3 per rank under step sync (not a power of two): the rank sums are not subtrees of the
  // canonical tree over M = 6, so the reference differs; all stages still agree with each other.
  std::vector<ZeroRun> runs;
  for (int stage : {0, 1, 2, 3}) {
    auto c = zero_config(stage, 2, 3, "fp32");
    c.grad_sync = train::GradSync::step;
    runs.push_back(run_zero(c));
    REQUIRE(runs.back().errors == "");
  }
  for (std::size_t s = 1; s < runs.size(); ++s) {
    CHECK(compare_steps(runs[s].ranks[0].value->run.steps, runs[0].ranks[0].value->run.steps) == "");
    CHECK(compare_params(runs[s].artifacts.final_params, runs[0].artifacts.final_params) == "");
  }
  train::RunArtifacts ref_art;
  run(reference_of(zero_config(0, 2, 3, "fp32")), &ref_art);
  CHECK(compare_params(runs[0].artifacts.final_params, ref_art.final_params) != "");
}

TEST_CASE("reduce-dtype compute: one rank equals the reference, N ranks agree across stages", "[ch7]") {
  for (const char* precision : {"fp16", "bf16"}) {
    auto one = zero_config(2, 1, 1, precision);
    one.reduce_dtype = train::ReduceDtype::compute;
    check_equal(one);
    std::vector<ZeroRun> runs;
    for (int stage : {0, 1, 2, 3}) {
      auto c = zero_config(stage, 3, 1, precision);
      c.reduce_dtype = train::ReduceDtype::compute;
      runs.push_back(run_zero(c));
      REQUIRE(runs.back().errors == "");
    }
    for (std::size_t s = 1; s < runs.size(); ++s)
      CHECK(compare_params(runs[s].artifacts.final_params, runs[0].artifacts.final_params) == "");
  }
}

TEST_CASE("stage 1, all-reduce variant: bitwise equal, with the comm closed form", "[ch6]") {
  struct Case {
    int world;
    const char* sync;
    const char* precision;
  };
  const Case cases[] = {
      {2, "step", "fp32"}, {2, "micro-batch", "bf16"}, {3, "step", "fp32"}, {3, "micro-batch", "bf16"}};
  for (const Case& cs : cases)
    DYNAMIC_SECTION("stage 1, N " << cs.world << ", " << cs.sync << " sync, " << cs.precision) {
      auto c = zero_config(1, cs.world, 2, cs.precision);
      c.stage1_reduce = train::Stage1Reduce::all_reduce;
      c.grad_sync = word<train::GradSync>(cs.sync);
      if (cs.world == 3) c.micro_batch = 4, c.global_batch = 12;  // A = 1: every schedule holds
      check_equal(c);
      const ZeroRun z = run_zero(c);
      REQUIRE(z.errors == "");
      const auto& s = z.ranks[0].value->comm_per_step;
      CHECK(s[CollKind::reduce_scatter].calls == 0);  // the gradient moves by all-reduce only
      CHECK(s[CollKind::all_reduce].calls > 0);
      for (std::size_t kind = 0; kind + 1 < kCollKinds; ++kind) {
        CHECK(s.by_kind[kind].calls == z.ranks[0].value->comm_predicted_per_step.by_kind[kind].calls);
        CHECK(s.by_kind[kind].bytes_sent == z.ranks[0].value->comm_predicted_per_step.by_kind[kind].bytes_sent);
      }
    }
}

TEST_CASE("stage 3 with persistent small units (--persist-below-mb): bitwise equal, N = 1..4", "[ch9]") {
  // Two thresholds: only ln_f whole (just above its compute-dtype bytes), and every unit but the
  // blocks whole. Either way some units are gathered per use and some are not.
  struct Case {
    const char* precision;
    int world;
    int threshold;
    const char* optimizer;
    bool overlap;
    int prefetch;
  };
  const Case cases[] = {
      {"fp16", 1, 0, "adamw", true, 0}, {"fp16", 1, 1, "sgd", false, 1},  {"fp16", 2, 0, "adamw", true, 2},
      {"fp16", 2, 1, "sgd", false, 0},  {"fp16", 3, 0, "adamw", true, 1}, {"fp16", 3, 1, "sgd", false, 2},
      {"fp16", 4, 0, "adamw", true, 0}, {"fp16", 4, 1, "sgd", false, 1},  {"bf16", 1, 0, "adamw", true, 2},
      {"bf16", 1, 1, "sgd", false, 0},  {"bf16", 2, 0, "adamw", true, 1}, {"bf16", 2, 1, "sgd", false, 2},
      {"bf16", 3, 0, "adamw", true, 0}, {"bf16", 3, 1, "sgd", false, 1},  {"bf16", 4, 0, "adamw", true, 2},
      {"bf16", 4, 1, "sgd", false, 0}};
  for (const Case& cs : cases)
    DYNAMIC_SECTION("stage 3, N " << cs.world << ", " << cs.precision << ", "
                                  << (cs.threshold == 0 ? "only ln_f whole" : "all but the largest whole") << ", "
                                  << cs.optimizer << ", overlap " << on_off(cs.overlap) << ", prefetch "
                                  << cs.prefetch) {
      auto c = zero_config(3, cs.world, 1, cs.precision);
      c.layers = 2;
      c.steps = 4;
      c.optimizer = word<train::Optimizer>(cs.optimizer);
      c.overlap = cs.overlap;
      c.prefetch = cs.prefetch;
      c.clip_grad_norm = 0.5;
      const auto plan = plan_of(c);
      const auto& units = plan.layout.units;
      c.persist_below_mb =
          cs.threshold == 0 ? static_cast<double>(units.back().numel * 2 + 1) / 1048576.0 : persist_all_but_largest(c);
      const std::size_t persistent = persistent_units(c);
      INFO("threshold " << c.persist_below_mb << " MiB, " << persistent << " of " << units.size() << " units whole");
      REQUIRE(persistent >= 1);
      REQUIRE(persistent < units.size());
      if (cs.threshold == 0) CHECK(persistent == 1);
      const auto ref = check_equal(c);
      bool clipped = false;
      for (const auto& s : ref.steps) clipped |= s.clipped;
      CHECK(clipped);  // the sharded norm and clipping path ran
    }
}

TEST_CASE("stage 3 with persistent units: fp16 overflow skips the same step, micro-batch sync", "[ch9]") {
  for (int world : {2, 4}) {
    auto c = zero_config(3, world, 2, "fp16");  // A = 2 micro-batches per rank, N a power of two
    c.layers = 2;
    c.loss_scale_init = 16777216;  // 2^24: step 1 overflows and is skipped
    c.steps = 3;
    c.persist_below_mb = persist_all_but_largest(c);
    REQUIRE(persistent_units(c) >= 1);
    const auto ref = check_equal(c);
    REQUIRE(ref.steps.size() == 3);
    CHECK(ref.steps[0].skipped);
    CHECK(ref.steps[1].loss_scale < ref.steps[0].loss_scale);
  }
}

TEST_CASE("persist-below-mb changes nothing in stages 0-2", "[ch9]") {
  for (int stage : {0, 1, 2}) {
    auto c = zero_config(stage, 2, 1, "bf16");
    c.persist_below_mb = 1000;  // every unit is far below 1000 MiB
    CHECK(persistent_units(c) == 0);
    const auto plan = plan_of(c);
    for (std::size_t u = 0; u < plan.layout.units.size(); ++u) CHECK_FALSE(plan.params_sharded(u));
    check_equal(c);
  }
}
