// The per-rank model-state count: the paper's closed forms per stage, and the exact byte count from
// a sharding description (equal to the formula when nothing is padded, padding reported otherwise).
#include <catch2/catch.hpp>

#include "core/check.h"
#include "memory/model_states.h"

using namespace zt;

TEST_CASE("stages are switches of one sharding description", "[ch3][memory]") {
  ShardSpec s0 = shard_spec_for_stage(0, 8), s3 = shard_spec_for_stage(3, 8);
  CHECK((!s0.params && !s0.grads && !s0.optimizer));
  CHECK((s3.params && s3.grads && s3.optimizer && s3.world_size == 8));
  ShardSpec s2 = shard_spec_for_stage(2, 4);
  CHECK((!s2.params && s2.grads && s2.optimizer));
  CHECK_THROWS_AS(shard_spec_for_stage(4, 2), Error);
  CHECK(optimizer_k("adamw") == 12);
  CHECK(optimizer_k("sgd") == 8);
  CHECK_THROWS_AS(optimizer_k("lamb"), Error);
}

TEST_CASE("paper formula gives the closed forms of Sec. 5 for every stage", "[ch3][memory]") {
  const double psi = 1024.0 * 1024.0;  // a power of two: every term below is exact in double
  for (double n : {1.0, 2.0, 4.0, 64.0}) {
    const auto w = static_cast<std::size_t>(n);
    for (int k : {12, 8}) {
      CHECK(paper_model_states(psi, k, shard_spec_for_stage(0, w)).total == (4 + k) * psi);
      CHECK(paper_model_states(psi, k, shard_spec_for_stage(1, w)).total == 4 * psi + k * psi / n);
      CHECK(paper_model_states(psi, k, shard_spec_for_stage(2, w)).total == 2 * psi + (2 + k) * psi / n);
      CHECK(paper_model_states(psi, k, shard_spec_for_stage(3, w)).total == (4 + k) * psi / n);
    }
  }
  auto m = paper_model_states(psi, 12, shard_spec_for_stage(0, 1));  // 2ψ + 2ψ + 12ψ
  CHECK(m.params == 2 * psi);
  CHECK(m.grads == 2 * psi);
  CHECK(m.optimizer == 12 * psi);
}

TEST_CASE("exact bytes equal the paper formula when units divide evenly", "[ch3][memory]") {
  // three units whose sizes divide by N·b for every N below: no padding anywhere
  const std::size_t b = 256;
  for (std::size_t n : {1u, 2u, 4u, 8u}) {
    ShardingDescription d;
    std::size_t psi = 0;
    for (std::size_t numel : {8 * 1024u, 8 * 4096u, 8 * 256u}) {
      d.units.push_back(unit_elements("u", numel, n, b));
      psi += numel;
    }
    for (int stage = 0; stage <= 3; ++stage) {
      d.spec = shard_spec_for_stage(stage, n);
      for (int k : {12, 8}) {
        const auto paper = paper_model_states(static_cast<double>(psi), k, d.spec);
        for (std::size_t r = 0; r < n; ++r) {
          const auto exact = model_states_bytes(d, state_widths(false, 2, k), r);
          CHECK(static_cast<double>(exact.total) == paper.total);
          CHECK(static_cast<double>(exact.params) == paper.params);
          CHECK(static_cast<double>(exact.grads) == paper.grads);
          CHECK(static_cast<double>(exact.master + exact.optimizer) == paper.optimizer);
          CHECK(exact.padding == 0);
        }
      }
    }
  }
}

TEST_CASE("widths: fp32 precision has no separate master; s_g = 4 adds 2 bytes", "[ch3][memory]") {
  auto mixed = state_widths(false, 4, 12);
  CHECK((mixed.param == 2 && mixed.grad == 4 && mixed.master == 4 && mixed.optimizer == 8));
  auto fp32 = state_widths(true, 2, 8);
  CHECK((fp32.param == 4 && fp32.grad == 4 && fp32.master == 0 && fp32.optimizer == 4));
  ShardingDescription d{shard_spec_for_stage(0, 1), {unit_elements("u", 512, 1, 256)}};
  CHECK(model_states_bytes(d, state_widths(false, 4, 12), 0).total == 18 * 512);
  CHECK(model_states_bytes(d, state_widths(true, 4, 12), 0).total == 16 * 512);
  CHECK(model_states_bytes(d, state_widths(true, 4, 8), 0).total == 12 * 512);
  CHECK_THROWS_AS(state_widths(false, 3, 12), Error);
}

TEST_CASE("padding sits at shard ends and is reported per rank", "[ch3][memory]") {
  // 1000 elements over 3 ranks, block 256: shards of ceil(334 / 256) · 256 = 512 elements,
  // flat unit 1536. Rank 0 holds [0, 512) all real, rank 1 [512, 1024) with 488 real, rank 2 none.
  auto u = unit_elements("h.0", 1000, 3, 256);
  CHECK(u.shard_numel == 512);
  CHECK(u.full_numel == 1536);
  ShardingDescription d{shard_spec_for_stage(3, 3), {u}};
  const auto w = state_widths(false, 2, 12);  // 16 bytes per element in total
  CHECK(model_states_bytes(d, w, 0).padding == 0);
  CHECK(model_states_bytes(d, w, 1).padding == 16 * 24);
  CHECK(model_states_bytes(d, w, 2).padding == 16 * 512);
  CHECK(model_states_bytes(d, w, 2).total == 16 * 512);
  // stage 1: params and grads replicated over the whole padded flat unit (536 padding elements)
  d.spec = shard_spec_for_stage(1, 3);
  const auto s1 = model_states_bytes(d, w, 1);
  CHECK(s1.params == 2 * 1536);
  CHECK(s1.grads == 2 * 1536);
  CHECK(s1.master == 4 * 512);
  CHECK(s1.optimizer == 8 * 512);
  CHECK(s1.padding == 4 * 536 + 12 * 24);
  CHECK_THROWS_AS(model_states_bytes(d, w, 3), Error);
}

TEST_CASE("a unit may carry its own sharding choice", "[ch3][memory]") {
  // stage 3 for a large unit, stage 2 for a small one, on 4 ranks, no padding
  ShardingDescription d{shard_spec_for_stage(2, 4),
                        {unit_elements("big", 4096, 4, 256), unit_elements("small", 1024, 4, 256)}};
  d.units[0].spec = shard_spec_for_stage(3, 4);
  const auto w = state_widths(false, 2, 12);
  const auto b = model_states_bytes(d, w, 1);
  CHECK(b.params == 2 * 1024 + 2 * 1024);  // big: a quarter; small: replicated
  CHECK(b.grads == 2 * 1024 + 2 * 256);
  CHECK(b.master + b.optimizer == 12 * 1024 + 12 * 256);
  d.units[1].spec = shard_spec_for_stage(3, 2);
  CHECK_THROWS_AS(model_states_bytes(d, w, 0), Error);
}

TEST_CASE("per-unit specs: the formula sums over units, each with its own switches", "[ch3][memory]") {
  // ZeRO-3 for a large unit, ZeRO-2 (parameters whole) for a small one: per rank
  // (2+2+K) psi_big / N + 2 psi_small + (2+K) psi_small / N. Powers of two keep it exact.
  const std::size_t n = 4;
  const double big = 4096, small = 256;
  ShardSpec z2 = shard_spec_for_stage(2, n);
  ShardingDescription d{shard_spec_for_stage(3, n), {}};
  d.units.push_back(unit_elements("block", 4096, n, 1));
  d.units.push_back(unit_elements("ln_f", 256, n, 1));
  d.units.back().spec = z2;
  for (int k : {12, 8}) {
    const PaperModelStates m = paper_model_states(d, k);
    CHECK(m.params == 2 * big / n + 2 * small);
    CHECK(m.grads == 2 * (big + small) / n);
    CHECK(m.optimizer == k * (big + small) / n);
    CHECK(m.total == (4 + k) * big / n + 2 * small + (2 + k) * small / n);
    // no padding here, so the exact count agrees (with 16-bit gradients)
    const ModelStateBytes b = model_states_bytes(d, state_widths(false, 2, k), 1);
    CHECK(static_cast<double>(b.total) == m.total);
    CHECK(b.padding == 0);
  }
  // without per-unit specs it is the one-spec formula over Σ psi_u
  d.units.back().spec.reset();
  CHECK(paper_model_states(d, 12).total == paper_model_states(big + small, 12, d.spec).total);
}
