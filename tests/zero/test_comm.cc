// Communication of one step: measured collective counters against the closed form of
// predict/zero_comm.h, and against the paper's 2ψ / 3ψ written out independently here. Case tables
// run one Catch2 section per row, named after it.
#include <catch2/catch.hpp>

#include "model/manifest.h"
#include "zero/layout.h"
#include "zero/zero_fixtures.h"

using namespace zt;
using namespace zt::test;

TEST_CASE("bytes and calls per step equal the closed form, every stage", "[ch8]") {
  struct Case {
    int stage, world;
    const char* sync;
    const char* precision;
  };
  const Case cases[] = {
      {0, 2, "step", "fp32"}, {0, 2, "micro-batch", "fp32"}, {0, 3, "step", "fp32"}, {0, 3, "micro-batch", "fp32"},
      {1, 2, "step", "bf16"}, {1, 2, "micro-batch", "bf16"}, {1, 3, "step", "bf16"}, {1, 3, "micro-batch", "bf16"},
      {2, 2, "step", "fp32"}, {2, 2, "micro-batch", "fp32"}, {2, 3, "step", "fp32"}, {2, 3, "micro-batch", "fp32"},
      {3, 2, "step", "bf16"}, {3, 2, "micro-batch", "bf16"}, {3, 3, "step", "bf16"}, {3, 3, "micro-batch", "bf16"}};
  for (const Case& cs : cases)
    DYNAMIC_SECTION("stage " << cs.stage << ", N " << cs.world << ", " << cs.sync << " sync, " << cs.precision) {
      const int stage = cs.stage, world = cs.world;
      const char* sync = cs.sync;
      auto c = zero_config(stage, world, 2, cs.precision);
      c.grad_sync = word<train::GradSync>(sync);
      c.bucket_mb = 0.001;
      const ZeroRun z = run_zero(c);
      REQUIRE(z.errors == "");
      for (const auto& r : z.ranks) {
        INFO("stage " << stage << " N=" << world << " " << sync);
        for (std::size_t k = 0; k < kCollKinds; ++k) {
          if (static_cast<CollKind>(k) == CollKind::call_check) continue;
          INFO("kind " << coll_kind_name(static_cast<CollKind>(k)));
          CHECK(r.value->comm_per_step.by_kind[k].calls == r.value->comm_predicted_per_step.by_kind[k].calls);
          CHECK(r.value->comm_per_step.by_kind[k].bytes_sent == r.value->comm_predicted_per_step.by_kind[k].bytes_sent);
        }
      }
    }
}

TEST_CASE("the paper's volumes: 2(N-1)/N psi for stages 0-2, about 3(N-1)/N psi for stage 3", "[ch8]") {
  // fp16 gradients reduced in fp16 (--reduce-dtype compute), one micro-batch per rank: the
  // paper's setting. Elements sent per rank, counted on the padded units (full_u = N shard_u).
  const int N = 4;
  auto base = zero_config(0, N, 1, "fp16");
  const auto layout = zero::make_layout(
      model::make_manifest({addition_for(base)->vocab_size(), base.context, base.layers, base.heads, base.width}), N, 1,
      static_cast<std::size_t>(base.norm_block));
  const std::size_t psi_n1 = (N - 1) * layout.shard_total;  // (N-1)/N x padded psi
  // stage 3 gathers every unit once per use: twice each (forward, backward), wte once more (the
  // tied head reads it in forward and in backward; the embedding's backward needs no values)
  const std::size_t stage3_uses = 2 * layout.shard_total + layout.units[0].shard;
  // scalar traffic: loss sums, and the norm's block sums (about psi / b of them, fp32 = 2 elements)
  const std::size_t scalars = 2 * layout.full_total / layout.block + 16;
  std::vector<std::size_t> grad_elems(4), param_elems(4);
  for (int stage : {0, 1, 2, 3}) {
    auto c = base;
    c.stage = stage;
    c.reduce_dtype = train::ReduceDtype::compute;
    c.bucket_mb = 1;  // one bucket per unit
    const ZeroRun z = run_zero(c);
    REQUIRE(z.errors == "");
    const auto& s = z.ranks[1].value->comm_per_step;
    grad_elems[stage] = (s[CollKind::all_reduce].bytes_sent + s[CollKind::reduce_scatter].bytes_sent) / 2;
    param_elems[stage] = s[CollKind::all_gather].bytes_sent / 2;
  }
  // gradients: an all-reduce moves 2x, a reduce-scatter 1x (+ the 4-byte overflow flag: <= 2 elements)
  CHECK(grad_elems[0] == 2 * psi_n1);
  for (int stage : {1, 2, 3}) {
    CHECK(grad_elems[stage] >= psi_n1);
    CHECK(grad_elems[stage] <= psi_n1 + 4);
  }
  // parameters: stages 1-2 gather each shard once; stage 3 once per use; the fp32 loss sums and
  // norm block sums add a handful of elements
  CHECK(param_elems[0] <= 16);
  CHECK(param_elems[1] >= psi_n1);
  CHECK(param_elems[1] <= psi_n1 + scalars);
  CHECK(param_elems[3] >= (N - 1) * stage3_uses);
  CHECK(param_elems[3] <= (N - 1) * stage3_uses + scalars);
  // the paper's 3 psi vs 2 psi: at least 1.5x stage 0's volume (more with the tied wte's reuse)
  CHECK(2 * (grad_elems[3] + param_elems[3]) >= 3 * (grad_elems[0] + param_elems[0]));
}

TEST_CASE("stage 3 with persistent units: closed form, and one gather per persistent unit", "[ch9]") {
  for (int world : {2, 3})
    for (const char* sync : {"step", "micro-batch"}) {
      auto c = zero_config(3, world, 2, world == 2 ? "bf16" : "fp16");
      c.layers = 2;
      c.grad_sync = word<train::GradSync>(sync);
      c.steps = 2;
      auto off = c;
      c.persist_below_mb = persist_all_but_largest(c);
      const auto plan = plan_of(c);
      // a persistent unit trades its per-use gathers (every micro-batch) for one after the update
      std::size_t uses = 0, persistent = 0, shard_elems_saved = 0;
      for (std::size_t u : plan.acquire_order) {
        uses += plan.persistent(u);
        if (plan.persistent(u)) shard_elems_saved += (world - 1) * plan.layout.units[u].shard;
      }
      std::size_t shard_elems_added = 0;
      for (std::size_t u = 0; u < plan.layout.units.size(); ++u) {
        persistent += plan.persistent(u);
        if (plan.persistent(u)) shard_elems_added += (world - 1) * plan.layout.units[u].shard;
      }
      REQUIRE(persistent >= 1);
      const ZeroRun z = run_zero(c), z_off = run_zero(off);
      REQUIRE(z.errors == "");
      REQUIRE(z_off.errors == "");
      const std::size_t A = 2;
      for (std::size_t r = 0; r < z.ranks.size(); ++r) {
        const auto& s = z.ranks[r].value->comm_per_step;
        const auto& s_off = z_off.ranks[r].value->comm_per_step;
        INFO("N=" << world << " " << sync << " rank " << r);
        for (std::size_t k = 0; k < kCollKinds; ++k) {
          if (static_cast<CollKind>(k) == CollKind::call_check) continue;
          CHECK(s.by_kind[k].calls == z.ranks[r].value->comm_predicted_per_step.by_kind[k].calls);
          CHECK(s.by_kind[k].bytes_sent == z.ranks[r].value->comm_predicted_per_step.by_kind[k].bytes_sent);
        }
        CHECK(s[CollKind::all_gather].calls + A * uses == s_off[CollKind::all_gather].calls + persistent);
        CHECK(s[CollKind::all_gather].bytes_sent + A * shard_elems_saved * 2 ==
              s_off[CollKind::all_gather].bytes_sent + shard_elems_added * 2);
        CHECK(s[CollKind::reduce_scatter].bytes_sent == s_off[CollKind::reduce_scatter].bytes_sent);
      }
    }
}
