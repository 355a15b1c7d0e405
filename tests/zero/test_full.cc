// The full product of the equivalence axes (label `full`, not part of `make test`); and the full
// products of the model-parallel axes of chapter 11 (mp_fixtures.h), of ZeRO-R's (chapter 12), of
// chapter 14's offload tiers (offload_rows.h; make test runs their pairwise tables) and of the
// pipeline's of chapter 15. Data parallelism: stages 0-3 x
// N = 1..5, 7 x fp32/fp16/bf16 x Adam/SGD x overlap on/off x prefetch 0/2 x two bucket sizes,
// one micro-batch per rank, with clipping; each run bitwise equal to the single-rank reference.
// The rows are listed by full_product() (every combination but the two that are the same run:
// prefetch only in stage 3, bucket sizes only in stage 2), and each runs in its own Catch2
// section named after the row, so a failure names it and one row re-runs alone with -c "NAME".
#include <catch2/catch.hpp>

#include <vector>

#include "zero/mp_fixtures.h"
#include "zero/offload_rows.h"
#include "zero/pipeline_fixtures.h"
#include "zero/zero_fixtures.h"

using namespace zt;
using namespace zt::test;

namespace {

struct Case {
  int stage, world;
  const char* precision;
  const char* optimizer;
  bool overlap;
  int prefetch;
  double bucket_mb;
};

std::vector<Case> full_product() {
  std::vector<Case> cases;
  for (int stage : {0, 1, 2, 3})
    for (int world : {1, 2, 3, 4, 5, 7})
      for (const char* precision : {"fp32", "fp16", "bf16"})
        for (const char* optimizer : {"adamw", "sgd"})
          for (bool overlap : {true, false})
            for (int prefetch : {0, 2})
              for (double bucket : {0.0005, 1.0}) {
                if (stage != 3 && prefetch != 0) continue;  // prefetch is a stage-3 setting
                if (stage != 2 && bucket != 1.0) continue;  // buckets cut reductions in stage 2
                cases.push_back({stage, world, precision, optimizer, overlap, prefetch, bucket});
              }
  return cases;
}

}  // namespace

TEST_CASE("full product: every stage, N, precision, optimizer, overlap, prefetch, bucket", "[ch8]") {
  static const std::vector<Case> cases = full_product();
  // 6 N x 3 precisions x 2 optimizers x 2 overlaps = 72 rows for stage 0, 72 for stage 1, and
  // twice that for stage 2 (two bucket sizes) and for stage 3 (two prefetch depths)
  REQUIRE(cases.size() == 72 * (1 + 1 + 2 + 2));
  for (const Case& cs : cases)
    DYNAMIC_SECTION("stage " << cs.stage << ", N " << cs.world << ", " << cs.precision << ", " << cs.optimizer
                             << ", overlap " << (cs.overlap ? "on" : "off") << ", prefetch " << cs.prefetch
                             << ", bucket " << cs.bucket_mb << " MiB") {
      auto c = zero_config(cs.stage, cs.world, 1, cs.precision);
      c.optimizer = word<train::Optimizer>(cs.optimizer);
      c.overlap = cs.overlap;
      c.prefetch = cs.prefetch;
      c.bucket_mb = cs.bucket_mb;
      c.clip_grad_norm = 0.5;
      check_equal(c);
    }
}

TEST_CASE("full product, model parallel: (N_d, N_m) x stage x precision x checkpointing", "[ch11]") {
  std::vector<MpCase> cases;
  for (auto [dp, mp] : {std::pair{1, 2}, {2, 2}, {1, 4}, {2, 4}})
    for (int stage : {0, 1, 2, 3})
      for (const char* precision : {"fp32", "fp16", "bf16"})
        for (bool checkpoint : {false, true}) cases.push_back({dp, mp, stage, precision, checkpoint});
  REQUIRE(cases.size() == 4 * 4 * 3 * 2);
  for (const MpCase& cs : cases) DYNAMIC_SECTION(cs.name()) {
      check_mp_equal(cs);
    }
}

TEST_CASE("full product, ZeRO-R: P_a and P_a+cpu x (N_d, N_m) x stage x precision", "[ch12]") {
  std::vector<std::pair<MpCase, const char*>> cases;
  for (auto [dp, mp] : {std::pair{1, 2}, {2, 2}, {1, 4}})
    for (int stage : {0, 1, 2, 3})
      for (const char* precision : {"fp32", "fp16", "bf16"})
        for (const char* partition : {"on", "cpu"}) cases.push_back({{dp, mp, stage, precision, true}, partition});
  REQUIRE(cases.size() == 3 * 4 * 3 * 2);
  for (const auto& [cs, partition] : cases) DYNAMIC_SECTION(cs.name() << ", P_a " << partition) {
      check_mp_equal(cs, partition);
    }
}

TEST_CASE("full product, pipeline: (N_d, N_p, N_m) x stage x schedule x precision x checkpointing", "[ch15]") {
  // A larger grid than make test's: more shapes (N_p up to 4 with N_d up to 4, an uneven split),
  // fp16 beside fp32 and bf16, and activation checkpointing; each run bitwise one device's.
  struct Grid {
    int nd, np, nm;
    const char* split;  // "" = balanced
  };
  const Grid grids[] = {{1, 2, 1, ""}, {2, 2, 1, ""}, {1, 4, 1, ""}, {2, 2, 2, ""},      {1, 3, 1, ""},   {4, 2, 1, ""},
                        {2, 4, 1, ""}, {1, 2, 2, ""}, {2, 3, 1, ""}, {1, 3, 1, "2,1,1"}, {2, 2, 1, "3,1"}};
  for (const Grid& g : grids)
    for (int stage : {0, 1, 2, 3})
      for (const char* schedule : {"gpipe", "1f1b"})
        for (const char* precision : {"fp32", "fp16", "bf16"})
          for (bool checkpoint : {false, true})
            DYNAMIC_SECTION("N_d " << g.nd << ", N_p " << g.np << ", N_m " << g.nm << ", split '" << g.split
                                   << "', stage " << stage << ", " << schedule << ", " << precision
                                   << (checkpoint ? ", checkpointing" : "")) {
              const int M = 4;  // micro-batches per data-parallel rank: >= N_p, a power of two
              auto c = zero_config(stage, g.nd * g.np * g.nm, M, precision);
              c.global_batch = static_cast<int64_t>(g.nd) * M * c.micro_batch;
              c.layers = 4;
              c.mp_size = g.nm;
              c.pp_size = g.np;
              c.pp_split = g.split;
              c.pp_schedule = word<schedule::PipeSchedule>(schedule);
              c.checkpoint_activations = checkpoint;
              c.clip_grad_norm = 0.5;
              ZeroRun z;
              check_equal(c, &z);
              check_predictions(z);  // as make test's pairwise rows do (pipeline_fixtures.h)
            }
}

TEST_CASE("full product, ZeRO-Offload's optimizer tier: stage x N x precision, host and file", "[ch14]") {
  const auto rows = optimizer_tier_full();
  REQUIRE(rows.size() == 4 * 3 * 3);
  for (const OptimizerTierRow& row : rows) DYNAMIC_SECTION(row.name()) {
      check_optimizer_tier_row(row);
    }
}

TEST_CASE("full product, the parameter tier: N x precision x prefetch, alone and beside the optimizer's file",
          "[ch14]") {
  const auto rows = param_tier_full();
  REQUIRE(rows.size() == 3 * 3 * 3);
  for (const ParamTierRow& row : rows) DYNAMIC_SECTION(row.name()) {
      check_param_tier_row(row);
    }
}
