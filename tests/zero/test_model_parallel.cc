// ZeRO on a data-parallel x model-parallel grid (chapter 11): every (N_d, N_m, stage, precision,
// checkpointing) row equals the one-device run with the same --mp-blocks bit for bit (a pairwise
// selection here; the full product is test_full.cc), every ledger category is predicted exactly,
// model states are the paper's formula with the split parameters divided by N_m, and the
// model-parallel traffic is the closed form — per block and sequence with checkpointing,
// 12 (N_m − 1)/N_m · T · C elements, the paper's Sec. 8 figure with its factor kept.
#include <catch2/catch.hpp>

#include <cmath>

#include "model/manifest.h"
#include "predict/zero_comm.h"
#include "zero/mp_fixtures.h"

using namespace zt;
using namespace zt::test;

namespace {

// pairwise over grid x stage x precision x checkpointing: every pair of levels of any two axes
// appears in at least one row (4 grids x 4 stages need 16 rows; precision and checkpointing are
// spread so each of their pairs with a grid or a stage appears too)
const MpCase kPairwise[] = {
    {1, 2, 0, "fp32", false}, {1, 2, 1, "fp16", true},  {1, 2, 2, "bf16", false}, {1, 2, 3, "fp32", true},
    {2, 2, 0, "fp16", false}, {2, 2, 1, "bf16", true},  {2, 2, 2, "fp32", true},  {2, 2, 3, "fp16", false},
    {1, 4, 0, "bf16", true},  {1, 4, 1, "fp32", false}, {1, 4, 2, "fp16", true},  {1, 4, 3, "bf16", false},
    {2, 4, 0, "fp32", true},  {2, 4, 1, "fp16", false}, {2, 4, 2, "bf16", false}, {2, 4, 3, "bf16", true},
};

}  // namespace

TEST_CASE("model parallel x ZeRO: pairwise rows, bitwise equal to one device with the same Q", "[ch11]") {
  for (const MpCase& cs : kPairwise) DYNAMIC_SECTION(cs.name()) {
      const ZeroRun z = check_mp_equal(cs);
      // the ledger: every category measured == predicted, on every rank
      for (const auto& r : z.ranks) {
        const auto& m = r.value->run.memory.front();
        CHECK(m.by_category == m.by_category_predicted);
        CHECK(m.model_states_bytes == m.model_states_bytes_predicted);
        CHECK(m.by_category.count("activation_checkpoints") == (cs.checkpoint ? 1u : 0u));
      }
    }
}

TEST_CASE("model parallel: traffic per step is the closed form, per group", "[ch11]") {
  for (const MpCase& cs :
       {MpCase{2, 2, 2, "fp32", true}, MpCase{1, 4, 3, "bf16", false}, MpCase{2, 4, 1, "fp32", true}})
    DYNAMIC_SECTION(cs.name()) {
      const train::TrainConfig c = cs.config();
      const ZeroRun z = run_zero(c);
      REQUIRE(z.errors == "");
      for (const auto& r : z.ranks) {
        const auto& res = *r.value;
        for (std::size_t k = 0; k < kCollKinds; ++k) {
          if (static_cast<CollKind>(k) == CollKind::call_check) continue;
          INFO("kind " << coll_kind_name(static_cast<CollKind>(k)) << ", dp " << res.dp_rank << ", mp " << res.mp_rank);
          CHECK(res.mp.per_step.by_kind[k].calls == res.mp.predicted_per_step.by_kind[k].calls);
          CHECK(res.mp.per_step.by_kind[k].bytes_sent == res.mp.predicted_per_step.by_kind[k].bytes_sent);
          CHECK(res.dp.per_step.by_kind[k].bytes_sent == res.dp.predicted_per_step.by_kind[k].bytes_sent);
          CHECK(res.comm_per_step.by_kind[k].bytes_sent ==
                res.dp.per_step.by_kind[k].bytes_sent + res.mp.per_step.by_kind[k].bytes_sent);
        }
        // the tensor-parallel all-reduces alone, written out: per micro-batch and block 4 (6 with
        // checkpointing) of [B T, C] floats, each a deterministic all-reduce sending 2 (N_m − 1)/N_m
        // of it; T·C·B·(N_m − 1)/N_m is exact here (B T C divisible by N_m)
        const std::size_t A = 2, blocks = static_cast<std::size_t>(c.layers), n = static_cast<std::size_t>(cs.mp);
        const std::size_t floats = static_cast<std::size_t>(c.micro_batch * c.context * c.width);
        const std::size_t per_block = cs.checkpoint ? 6 : 4;
        const std::size_t tp_bytes = A * blocks * per_block * 2 * floats * (n - 1) / n * 4;
        const auto& ar = res.mp.per_step[CollKind::all_reduce];
        CHECK(ar.calls == A * blocks * per_block + 1);  // + the overflow flag
        // the flag's all-reduce of one float sends at most one float per peer (balanced counts)
        CHECK(ar.bytes_sent >= tp_bytes);
        CHECK(ar.bytes_sent <= tp_bytes + 2 * 4 * (n - 1));
        if (cs.checkpoint)  // the paper's 12 x seq x hidden per block, per sequence, with (N-1)/N
          CHECK(static_cast<double>(tp_bytes) / 4 / static_cast<double>(A * blocks * c.micro_batch) ==
                12.0 * static_cast<double>(n - 1) / static_cast<double>(n) * static_cast<double>(c.context * c.width));
      }
    }
}

TEST_CASE("model parallel: model states are the paper's, the split parameters divided by N_m", "[ch11]") {
  // fp16, AdamW, --reduce-dtype compute, one micro-batch per rank (s_g = 2): per rank the paper's
  // 2 + 2 + K bytes per parameter, with ZeRO's S_p, S_g, S_o over N_d, where the tensor-parallel
  // parameters count 1/N_m of theirs and the replicated ones all of theirs
  for (int stage : {0, 1, 2, 3})
    for (auto [dp, mp] : {std::pair{1, 2}, {2, 2}, {1, 4}})
      DYNAMIC_SECTION("stage " << stage << ", N_d " << dp << ", N_m " << mp) {
        MpCase cs{dp, mp, stage, "fp16", false};
        train::TrainConfig c = cs.config();
        c.reduce_dtype = train::ReduceDtype::compute;
        c.global_batch = dp * c.micro_batch;
        c.loss_scale_init = 65536;
        c.steps = 1;
        const ZeroRun z = run_zero(c);
        REQUIRE(z.errors == "");
        const auto canon = model::make_manifest({13, c.context, c.layers, c.heads, c.width, 4});
        double split = 0, replicated = 0;
        for (const auto& p : canon.params) {
          const bool tp = p.name.find("c_attn") != std::string::npos || p.name.find("c_fc") != std::string::npos ||
                          p.name.find("c_proj.weight") != std::string::npos;
          (tp ? split : replicated) += static_cast<double>(p.numel);
        }
        const ShardSpec spec = shard_spec_for_stage(stage, static_cast<std::size_t>(dp));
        const double psi_rank = split / mp + replicated;  // parameters one rank holds before ZeRO
        const double paper = paper_model_states(psi_rank, 12, spec).total;
        // ranks of one MP group hold the same replicated units: summed over the N_d ranks of one
        // model-parallel rank, real bytes (padding excluded) are N_d x the formula for that rank
        for (int m = 0; m < mp; ++m) {
          double real = 0;
          for (const auto& r : z.ranks)
            if (r.value->mp_rank == m) {
              const auto& mem = r.value->run.memory.front();
              real += static_cast<double>(mem.model_states_bytes - mem.padding_bytes);
            }
          INFO("mp rank " << m);
          CHECK(std::llround(real) == std::llround(dp * paper));
        }
      }
}
