// Hybrid sharding (--shard-group G): ZeRO shards the model states over groups of G consecutive
// data-parallel ranks and replicates them across the N_d / G groups (collective/hybrid_group.h).
// At N_d = 4, G = 2 every stage trains bit for bit as one device on the same global batch (the
// condition: G a power of two, so the two-level sum is the canonical tree); each rank keeps the
// paper's model states with G in place of N_d, its ledger equals the prediction category by
// category, and its traffic equals the closed form kind by kind (inside the shard group, across
// it, and the loss over all N_d ranks). A checkpoint saved with G = 2 resumes at G = 4 (and the
// other way) bitwise. Bad values are one-line errors naming the flag.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>

#include "checkpoint/writer.h"
#include "zero/zero_fixtures.h"

using namespace zt;
using namespace zt::test;

namespace {

const char* const kPrecisions[] = {"fp32", "bf16", "fp16"};

}  // namespace

TEST_CASE("hybrid sharding: every stage at N_d = 4, G = 2 is one device's training, bit for bit", "[ch9][hybrid]") {
  struct Case {
    int stage, per_rank;
    const char* precision;
  };
  const Case cases[] = {{0, 1, "fp32"}, {1, 1, "bf16"}, {1, 2, "fp32"}, {2, 1, "fp16"},
                        {2, 2, "bf16"}, {3, 1, "fp32"}, {3, 2, "bf16"}, {3, 1, "fp16"}};
  for (const Case& cs : cases) DYNAMIC_SECTION("stage " << cs.stage << ", A " << cs.per_rank << ", " << cs.precision) {
      auto c = zero_config(cs.stage, 4, cs.per_rank, cs.precision);
      c.shard_group = 2;
      c.clip_grad_norm = 0.5;
      c.steps = 3;
      ZeroRun z;
      check_equal(c, &z);
      for (const auto& r : z.ranks) {
        const auto& m = r.value->run.memory.front();
        INFO("rank " << m.rank);
        CHECK(m.by_category == m.by_category_predicted);
        CHECK(m.model_states_bytes == m.model_states_bytes_predicted);
        CHECK(m.peak_bytes == m.high_water_bytes_predicted);
        // the traffic, kind by kind, in all and in each part: inside the shard group, across it,
        // and over all N_d ranks
        const auto& v = *r.value;
        const std::pair<const char*, std::pair<CommStats, CommStats>> parts[] = {
            {"all", {v.comm_per_step, v.comm_predicted_per_step}},
            {"across", {v.dp_replica.per_step, v.dp_replica.predicted_per_step}},
            {"whole", {v.dp_whole.per_step, v.dp_whole.predicted_per_step}}};
        for (const auto& [part, stats] : parts)
          for (std::size_t k = 0; k < kCollKinds; ++k) {
            if (static_cast<CollKind>(k) == CollKind::call_check) continue;
            INFO(part << " kind " << coll_kind_name(static_cast<CollKind>(k)));
            CHECK(stats.first.by_kind[k].calls == stats.second.by_kind[k].calls);
            CHECK(stats.first.by_kind[k].bytes_sent == stats.second.by_kind[k].bytes_sent);
          }
        CHECK(v.dp_replica.per_step[CollKind::all_reduce].calls > 0);  // the two levels did run
        CHECK(v.dp_whole.per_step[CollKind::all_gather].calls == 1);   // the loss sums
      }
    }
}

TEST_CASE("hybrid sharding keeps the model states of a run sharded over G ranks", "[ch9][hybrid]") {
  // The same layout as N_d = G: the states a rank keeps depend on G, not on the replicas.
  for (const char* precision : kPrecisions)
    for (int stage : {1, 2, 3}) {
      INFO(precision << " stage " << stage);
      auto hybrid = zero_config(stage, 4, 1, precision);
      hybrid.shard_group = 2;
      auto flat = zero_config(stage, 2, 2, precision);  // the same global batch on 2 ranks
      for (int r = 0; r < 4; ++r) {
        const auto ph = plan_of(hybrid, r), pf = plan_of(flat, r % 2);
        CHECK(ph.layout.world_size == 2);
        CHECK(ph.layout.rank == static_cast<std::size_t>(r % 2));
        CHECK(ph.dp_size == 4);
        CHECK(ph.replica_rank() == static_cast<std::size_t>(r / 2));
        CHECK(ph.sharding().spec.world_size == pf.sharding().spec.world_size);
        CHECK(ph.layout.units.size() == pf.layout.units.size());
        for (std::size_t u = 0; u < ph.layout.units.size(); ++u)
          CHECK(ph.layout.units[u].shard == pf.layout.units[u].shard);
      }
    }
}

TEST_CASE("a checkpoint saved with hybrid sharding resumes at another shard group, bitwise", "[ch14][hybrid]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("zt-hybrid-ckpt-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto whole = zero_config(3, 4, 1, "bf16");
  whole.steps = 4;
  whole.shard_group = 2;
  train::RunArtifacts ref_art;
  const train::RunResult ref = run(reference_of(whole), &ref_art);
  auto first = whole;
  first.steps = 4;
  first.save_dir = dir.string();
  first.save_every = 2;
  REQUIRE(run_zero(first).errors == "");
  for (int g : {4, 2}) {
    INFO("resumed with --shard-group " << g);
    auto second = whole;
    second.shard_group = g;
    second.resume = checkpoint::step_dir(dir.string(), 2);
    const ZeroRun z = run_zero(second);
    REQUIRE(z.errors == "");
    CHECK(compare_params(z.artifacts.final_params, ref_art.final_params) == "");
  }
  fs::remove_all(dir);
}

TEST_CASE("bad --shard-group values are one-line errors", "[ch9][hybrid]") {
  auto c = zero_config(2, 4, 1, "fp32");
  auto error_of = [](const train::TrainConfig& cfg) {
    try {
      train::validate(cfg);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  c.shard_group = 3;
  CHECK(error_of(c) == "--shard-group 3 does not divide the 4 data-parallel ranks (--world-size / --mp-size)");
  c.shard_group = 1;
  CHECK(error_of(c).rfind("--shard-group 1 keeps every state whole on every rank", 0) == 0);
  c.world_size = 6;
  c.global_batch = 12;
  c.shard_group = 3;
  CHECK(error_of(c).rfind("--shard-group 3 is not a power of two", 0) == 0);
  c.collective_mode = train::CollectiveMode::fast;
  CHECK(error_of(c) == "");
}
