// tests/zero/test_step_interpreter.cc — the step interpreter (zero/step_interpreter.h) against
// the program it runs, without a model: it answers each of the model's calls with the operations
// that follow it in the program (checked through the arena's ledger), and a call that is not the
// program's next event is refused in one line naming the operation it expected, instead of being
// guessed at (every rank must issue the same collectives in the same order).
#include <catch2/catch.hpp>

#include <string>

#include "collective/gloo_collective.h"
#include "collective/thread_ranks.h"
#include "core/check.h"
#include "step_device/placement.h"
#include "zero/model_state_stores.h"
#include "zero/step_interpreter.h"
#include "zero/step_program.h"
#include "zero/zero_plan.h"

namespace zt {
namespace {

/// One rank of stage 3 (every gather a copy) on the default model, with what an interpreter needs.
struct OneRank {
  train::RunOptions options = [] {
    train::RunOptions o;
    o.stage = 3;
    o.global_batch = o.micro_batch = 2;
    return o;
  }();
  zero::ZeroPlan plan = zero::make_zero_plan(options, 13, 0, 0, 0);
  step::Placement<float> place{device::Device::cpu};
  Arena arena{place.slab(64u << 20, "arena"), "the test arena"};
  ThreadGroup group = thread_group(1);
  GlooCollective coll{group.for_rank(0)};
  zero::ParamStore<float> params{plan, arena, "", 0, place, arena};
  zero::Timeline timeline{false};
  zero::StepInterpreter<float> step{plan,    zero::step_program(plan, true), coll, arena, params, place.loop_ops(),
                                    timeline};
  std::size_t gathered() const { return arena.ledger().usage(zero::zero_category::gathered_params).current_bytes; }
};

TEST_CASE("the step interpreter answers the model's calls with the program's operations", "[ch8][zero]") {
  OneRank r;
  r.step.start();
  r.step.begin_pass(true, 0);
  const float* unit0 = r.step.acquire(0);  // stage 3: unit 0 gathered (and unit 1 prefetched), then waited for
  CHECK(unit0 != nullptr);
  CHECK(r.gathered() == (r.plan.layout.units[0].full + r.plan.layout.units[1].full) * sizeof(float));
  r.step.release(0);  // the gathered copy is freed at once
  CHECK(r.gathered() == r.plan.layout.units[1].full * sizeof(float));
  CHECK(r.step.acquire(1) != nullptr);
}

TEST_CASE("the step interpreter refuses a model call that is not the program's next event", "[ch8][zero]") {
  OneRank r;
  r.step.start();
  r.step.begin_pass(true, 0);
  // the forward's first call is acquire(0): a model that asks for unit 1 first is not this plan's
  CHECK_THROWS_WITH(r.step.acquire(1), Catch::Contains("the model's acquire u1 is not op 1 (acquire u0)"));
  OneRank s;
  s.step.start();
  CHECK_THROWS_WITH(s.step.begin_pass(false, 0), Catch::Contains("is not the pass backward of micro-batch 0"));
}

}  // namespace
}  // namespace zt
