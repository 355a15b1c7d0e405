// ZeRO inside pipeline stages (pipeline/stage_runner.h, zero/train_zero.cc): a grid of N_d data-
// parallel x N_p pipeline x N_m model-parallel ranks, every ZeRO stage on each pipeline stage's
// own data-parallel group, GPipe and 1F1B, FP32 and BF16 — every run's step records (loss,
// gradient norm, loss scale, skip), its final master weights and its first step's gradient equal
// one device's on the same global batch, bit for bit. The conditions are chapter 6's (a power-of-
// two number of micro-batches per rank with --grad-sync step, of data-parallel ranks with
// --grad-sync micro-batch); the pipeline adds none: it moves where each block runs, and every
// stage runs its backwards in micro-batch order, so every sum keeps its one-device order.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>

#include "checkpoint/writer.h"

#include "zero/pipeline_fixtures.h"
#include "zero/zero_fixtures.h"

using namespace zt;
using namespace zt::test;

TEST_CASE("ZeRO stages 0-3 inside pipeline stages train bitwise like one device", "[ch15][pipeline]") {
  // Every (grid, stage) once, with the schedule and the precision alternating so that every pair
  // of values of any two axes is in some row; make test-full runs the full product (more grids,
  // fp16, activation checkpointing) with the same checks.
  const GridCase grids[] = {{1, 2, 1}, {2, 2, 1}, {1, 4, 1}, {2, 2, 2}, {1, 3, 1}};
  const schedule::PipeSchedule schedules[] = {schedule::PipeSchedule::gpipe, schedule::PipeSchedule::one_f_one_b};
  const char* precisions[] = {"fp32", "bf16"};
  for (int gi = 0; gi < 5; ++gi)
    for (int stage = 0; stage <= 3; ++stage) {
      const GridCase& g = grids[gi];
      const auto sched = schedules[(gi + stage) % 2];
      const char* precision = precisions[(gi + stage / 2) % 2];
      DYNAMIC_SECTION("N_d " << g.nd << ", N_p " << g.np << ", N_m " << g.nm << ", stage " << stage << ", "
                             << word_of(sched) << ", " << precision) {
        ZeroRun z;
        check_equal(pipeline_config(g, stage, precision, sched), &z);
        check_predictions(z);
      }
    }
}

TEST_CASE("a pipeline with an uneven split, checkpointing and held-out evaluations matches one device",
          "[ch15][pipeline]") {
  for (int stage : {1, 3}) {
    train::TrainConfig c = pipeline_config({2, 2, 1}, stage, "bf16", schedule::PipeSchedule::one_f_one_b);
    c.layers = 3;
    c.pp_split = "1,2";
    c.checkpoint_activations = true;
    c.eval_every = 2;
    const train::RunResult ref = check_equal(c);
    REQUIRE(!ref.evals.empty());
    ZeroRun z = run_zero(c);
    REQUIRE(z.errors == "");
    for (const auto& r : z.ranks) CHECK(compare_evals(r.value->run.evals, ref.evals) == "");
    check_predictions(z);
  }
}

TEST_CASE("pipeline settings that cannot run are refused with one line naming the flag", "[ch15][pipeline]") {
  train::TrainConfig c = pipeline_config({1, 2, 1}, 1, "fp32", schedule::PipeSchedule::gpipe);
  const auto refused = [](train::TrainConfig bad, const std::string& text) {
    INFO(text);
    CHECK_THROWS_WITH(train::validate(bad), Catch::Contains(text));
  };
  train::TrainConfig big = c;
  big.pp_size = 8, big.world_size = 8;
  refused(big, "--pp-size 8 is larger than the model's 4 blocks");
  train::TrainConfig few = c;
  few.global_batch = few.micro_batch;  // one micro-batch per rank, two stages
  refused(few, "--pp-size 2 needs at least 2 micro-batches per step");
  train::TrainConfig split = c;
  split.pp_split = "3,2";
  refused(split, "--pp-split");
  train::TrainConfig world = c;
  world.world_size = 3;
  refused(world, "is not a multiple of --pp-size 2");
  train::TrainConfig md = c;
  md.allocator = train::Allocator::zero;
  refused(md, "--pp-size 2 with --allocator zero");
}

TEST_CASE("a checkpoint saved by a pipeline resumes on any grid, bitwise", "[ch15][pipeline]") {
  // Saved at (N_d, N_p, N_m) = (2, 2, 1) with ZeRO-1; resumed at other stages, data-parallel
  // sizes, pipelines, model-parallel sizes and shard groups: every run's final master weights equal
  // one device's that never stopped. The checkpoint holds canonical pieces, so the reader
  // reshards by interval intersection whatever wrote them (chapter 14).
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("zt-pipe-ckpt-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  train::TrainConfig first = pipeline_config({2, 2, 1}, 1, "fp32", schedule::PipeSchedule::one_f_one_b);
  first.steps = 4;
  first.mp_blocks = 2;  // the numerics of every resumed grid: 2 tensor-parallel blocks, wherever they run
  train::RunArtifacts ref_art;
  run(reference_of(first), &ref_art);
  first.save_dir = dir.string();
  first.save_every = 2;
  REQUIRE(run_zero(first).errors == "");
  struct Resume {
    GridCase g;
    int stage;
    int shard_group;  // 0: N_d
  };
  const Resume resumes[] = {{{2, 2, 1}, 1, 0}, {{1, 4, 1}, 3, 0}, {{2, 2, 2}, 2, 0},
                            {{4, 1, 1}, 3, 2}, {{1, 2, 1}, 0, 0}, {{2, 1, 2}, 2, 0}};
  for (const Resume& r : resumes) {
    INFO("resumed at N_d " << r.g.nd << " N_p " << r.g.np << " N_m " << r.g.nm << " stage " << r.stage << " G "
                           << r.shard_group);
    train::TrainConfig second = pipeline_config(r.g, r.stage, "fp32", schedule::PipeSchedule::gpipe);
    second.global_batch = first.global_batch;
    second.steps = 4;
    second.mp_blocks = 2;
    if (r.shard_group) second.shard_group = r.shard_group;
    second.resume = checkpoint::step_dir(dir.string(), 2);
    const ZeroRun z = run_zero(second);
    REQUIRE(z.errors == "");
    CHECK(compare_params(z.artifacts.final_params, ref_art.final_params) == "");
  }
  fs::remove_all(dir);
}
