// Sub-groups and the data-parallel x model-parallel grid (collective/grid.h), ranks as threads,
// for grids (N_d, N_m) = (1,2), (2,2), (1,4), (2,4), (3,2), (4,1): each group holds the world
// ranks the layout rank = d*N_m + m says, in group-rank order; every collective on either group
// gives the closed-form results (all_cases.h) in both modes; deterministic sums over a group are
// the canonical tree over its members in group-rank order, bitwise; each group counts only its
// own calls and bytes; a failing member makes the others fail within the timeout; bad member
// lists and a bad N_m are one-line errors. Ranks are ordered by latches, never by sleeping; the
// only wall-time upper bound (kHang) catches a hang. (Groups of processes: test_processes.cc.)
#include <catch2/catch.hpp>

#include <chrono>
#include <latch>
#include <optional>

#include "all_cases.h"
#include "collective/grid.h"
#include "collective/thread_ranks.h"
#include "fault_timing.h"

using namespace zt;
using zt_test::bitwise_mismatches;
using zt_test::Clock;
using zt_test::contains;
using zt_test::kHang;
using zt_test::kShort;
using zt_test::order_sensitive_inputs;
using zt_test::reference_sums;

namespace {

struct Shape {
  int nd, nm;  // N_d x N_m
};
constexpr Shape kGrids[] = {{1, 2}, {2, 2}, {1, 4}, {2, 4}, {3, 2}, {4, 1}};

std::string text(Shape s) { return std::to_string(s.nd) + "x" + std::to_string(s.nm); }

// The layout written out from its definition (world rank = d * N_m + m), not via grid.h.
std::vector<int> want_mp_members(Shape s, int w) {
  std::vector<int> m;
  for (int j = 0; j < s.nm; ++j) m.push_back(w / s.nm * s.nm + j);
  return m;
}
std::vector<int> want_dp_members(Shape s, int w) {
  std::vector<int> m;
  for (int d = 0; d < s.nd; ++d) m.push_back(d * s.nm + w % s.nm);
  return m;
}

// fn(world rank, world, grid) on the N_d * N_m ranks of a fresh thread group.
template <typename Fn>
auto on_grid(Shape s, ReduceMode mode, Fn fn) {
  const int n = s.nd * s.nm;
  auto group = thread_group(n, mode);
  return run_thread_ranks(n, [&](int w) {
    GlooCollective world(group.for_rank(w));
    Grid grid = make_grid(world, GridDims{s.nm});
    return fn(w, world, grid);
  });
}

// The world ranks a group holds, in group-rank order, as its members see them (an all-gather).
std::vector<int> gather_world_ranks(Collective& group, int world_rank) {
  const float mine = static_cast<float>(world_rank);
  std::vector<float> all(group.size());
  group.all_gather(std::span<const float>(&mine, 1), std::span<float>(all));
  return std::vector<int>(all.begin(), all.end());
}

// Elements [index * n, (index + 1) * n) of v: a reduce-scatter shard.
std::vector<float> shard(const std::vector<float>& v, int index, std::size_t n) {
  const auto from = v.begin() + static_cast<std::ptrdiff_t>(index * n);
  return std::vector<float>(from, from + static_cast<std::ptrdiff_t>(n));
}

std::string stats_text(const CommStats& s) {
  std::string t;
  for (std::size_t k = 0; k < kCollKinds; ++k) {
    const auto& c = s.by_kind[k];
    t += concat(coll_kind_name(static_cast<CollKind>(k)), " ", c.calls, "/", c.bytes_sent, "/", c.bytes_received, " ");
  }
  return t;
}

bool same_stats(const CommStats& a, const CommStats& b) { return stats_text(a) == stats_text(b); }

}  // namespace

TEST_CASE("grid groups hold the world ranks rank = dp*N_m + mp, in group-rank order", "[ch11][collective][groups]") {
  struct Seen {
    int dp_rank, mp_rank, dp_size, mp_size, mp_group_rank, dp_group_rank;
    std::vector<int> mp_members, dp_members;
  };
  for (Shape s : kGrids) {
    auto out = on_grid(s, ReduceMode::deterministic, [](int w, Collective&, Grid& g) {
      return Seen{g.dp_rank,
                  g.mp_rank,
                  g.dp_size,
                  g.mp_size,
                  g.mp->rank(),
                  g.dp->rank(),
                  gather_world_ranks(*g.mp, w),
                  gather_world_ranks(*g.dp, w)};
    });
    for (int w = 0; w < s.nd * s.nm; ++w) {
      INFO("grid " << text(s) << " world rank " << w << " " << out[w].error);
      REQUIRE(out[w].ok());
      const Seen& v = *out[w].value;
      CHECK(v.dp_size == s.nd);
      CHECK(v.mp_size == s.nm);
      CHECK(v.dp_rank == w / s.nm);
      CHECK(v.mp_rank == w % s.nm);
      CHECK(v.mp_group_rank == v.mp_rank);
      CHECK(v.dp_group_rank == v.dp_rank);
      CHECK(v.mp_members == want_mp_members(s, w));
      CHECK(v.dp_members == want_dp_members(s, w));
      CHECK(grid_members(GridAxis::mp, s.nd * s.nm, GridDims{s.nm}, w) == want_mp_members(s, w));
      CHECK(grid_members(GridAxis::dp, s.nd * s.nm, GridDims{s.nm}, w) == want_dp_members(s, w));
    }
  }
}

TEST_CASE("every collective on the MP and DP groups matches closed forms, in both modes",
          "[ch11][collective][groups]") {
  for (ReduceMode mode : {ReduceMode::deterministic, ReduceMode::fast}) {
    for (Shape s : kGrids) {
      const auto mp_cases = zt_test::all_cases(s.nm, mode, Accumulation::fp32);
      const auto dp_cases = zt_test::all_cases(s.nd, mode, Accumulation::fp32);
      auto out = on_grid(s, mode, [&](int, Collective&, Grid& g) {
        return std::pair{zt_test::run_cases(*g.mp, g.mp_rank, mp_cases),
                         zt_test::run_cases(*g.dp, g.dp_rank, dp_cases)};
      });
      std::vector<std::string> problems;
      for (int w = 0; w < s.nd * s.nm; ++w) {
        const std::string who = concat(reduce_mode_name(mode), " grid ", text(s), " world rank ", w);
        if (!out[w].ok()) {
          problems.push_back(who + " threw: " + out[w].error);
          continue;
        }
        zt_test::find_mismatches(mp_cases, w % s.nm, out[w].value->first, who + " MP group", problems);
        zt_test::find_mismatches(dp_cases, w / s.nm, out[w].value->second, who + " DP group", problems);
      }
      INFO(reduce_mode_name(mode) << " grid " << text(s));
      for (const auto& p : problems) UNSCOPED_INFO(p);
      CHECK(problems.empty());
    }
  }
}

TEST_CASE("deterministic group sums are the canonical tree over the members in group-rank order",
          "[ch11][collective][groups]") {
  constexpr std::size_t kCount = 96;  // divides by every group size here (reduce-scatter shards)
  struct Sums {
    std::vector<float> mp, dp, mp_shard, dp_shard;
  };
  for (Shape s : kGrids) {
    auto out = on_grid(s, ReduceMode::deterministic, [&](int w, Collective&, Grid& g) {
      Sums r{order_sensitive_inputs(w, kCount), order_sensitive_inputs(w, kCount), std::vector<float>(kCount / s.nm),
             std::vector<float>(kCount / s.nd)};
      const auto in = order_sensitive_inputs(w, kCount);
      // Both groups at once: each has its own communication thread and connections.
      Work a = g.mp->all_reduce_async(std::span<float>(r.mp));
      Work b = g.dp->all_reduce_async(std::span<float>(r.dp));
      Work c = g.mp->reduce_scatter_async(std::span<const float>(in), std::span<float>(r.mp_shard));
      Work d = g.dp->reduce_scatter_async(std::span<const float>(in), std::span<float>(r.dp_shard));
      for (Work* work : {&a, &b, &c, &d}) work->wait();
      return r;
    });
    for (int w = 0; w < s.nd * s.nm; ++w) {
      INFO("grid " << text(s) << " world rank " << w << " " << out[w].error);
      REQUIRE(out[w].ok());
      const Sums& v = *out[w].value;
      const auto mp_tree = reference_sums(want_mp_members(s, w), kCount);
      const auto dp_tree = reference_sums(want_dp_members(s, w), kCount);
      CHECK(bitwise_mismatches(v.mp, mp_tree) == 0);
      CHECK(bitwise_mismatches(v.dp, dp_tree) == 0);
      CHECK(bitwise_mismatches(v.mp_shard, shard(mp_tree, w % s.nm, kCount / s.nm)) == 0);
      CHECK(bitwise_mismatches(v.dp_shard, shard(dp_tree, w / s.nm, kCount / s.nd)) == 0);
    }
  }
}

TEST_CASE("a sub-group's ranks follow its member list, and groups nest", "[ch11][collective][groups]") {
  // World of 4; group "perm" = world ranks 3, 1, 0, 2 (perm rank i = world rank members[i]); inside
  // it, perm ranks {1, 3} (world 1, 2) and {0, 2} (world 3, 0) each form a group "inner".
  const std::vector<int> perm = {3, 1, 0, 2};
  constexpr std::size_t kCount = 64;
  struct Seen {
    int perm_rank;
    std::vector<int> perm_members, inner_members;
    std::vector<float> sum;
  };
  auto group = thread_group(4);
  auto out = run_thread_ranks(4, [&](int w) {
    GlooCollective world(group.for_rank(w));
    auto p = world.subgroup(perm, "perm");
    const int pr = p->rank();
    auto inner = p->subgroup(pr % 2 ? std::vector<int>{1, 3} : std::vector<int>{0, 2}, "inner");
    Seen v{pr, gather_world_ranks(*p, w), gather_world_ranks(*inner, w), order_sensitive_inputs(w, kCount)};
    p->all_reduce(std::span<float>(v.sum));
    return v;
  });
  const auto permuted = reference_sums(perm, kCount);
  for (int w = 0; w < 4; ++w) {
    INFO("world rank " << w << " " << out[w].error);
    REQUIRE(out[w].ok());
    const Seen& v = *out[w].value;
    CHECK(perm[v.perm_rank] == w);
    CHECK(v.perm_members == perm);
    CHECK(v.inner_members == (v.perm_rank % 2 ? std::vector<int>{1, 2} : std::vector<int>{3, 0}));
    CHECK(bitwise_mismatches(v.sum, permuted) == 0);
  }
  // The order is the member list's, not the world's: on these inputs the two trees differ.
  CHECK(bitwise_mismatches(permuted, reference_sums({0, 1, 2, 3}, kCount)) > 0);
}

TEST_CASE("each group counts only its own calls and bytes", "[ch11][collective][groups]") {
  constexpr std::size_t kReduce = 48;  // floats per all-reduce; divides by every group size here
  constexpr std::size_t kShard = 5;    // floats per rank per all-gather
  constexpr uint64_t kHeader = 48;     // bytes of one call-check header
  struct Seen {
    CommStats world_after_grid, world, mp, dp;
  };
  for (ReduceMode mode : {ReduceMode::deterministic, ReduceMode::fast}) {
    for (Shape s : kGrids) {
      auto out = on_grid(s, mode, [&](int w, Collective& world, Grid& g) {
        Seen v;
        v.world_after_grid = world.stats();
        std::vector<float> x(kReduce, 1.0f), shard(kShard, float(w)), all(kShard * s.nd);
        for (int k = 0; k < 3; ++k) g.mp->all_reduce(std::span<float>(x));
        for (int k = 0; k < 2; ++k) g.dp->all_gather(std::span<const float>(shard), std::span<float>(all));
        world.barrier();
        v.world = world.stats();
        v.mp = g.mp->stats();
        v.dp = g.dp->stats();
        return v;
      });
      // Closed forms (stats.h): all-reduce 2(N-1)/N S each way, ring all-gather (N-1) shards each
      // way, N-1 headers each way per checked call; a group of one moves nothing.
      const uint64_t nm = s.nm, nd = s.nd, world_n = nm * nd;
      CommStats mp, dp, world;
      mp[CollKind::all_reduce] = {3, 3 * 2 * (nm - 1) * kReduce * 4 / nm, 3 * 2 * (nm - 1) * kReduce * 4 / nm};
      mp[CollKind::call_check] = {0, 3 * kHeader * (nm - 1), 3 * kHeader * (nm - 1)};
      dp[CollKind::all_gather] = {2, 2 * (nd - 1) * kShard * 4, 2 * (nd - 1) * kShard * 4};
      dp[CollKind::call_check] = {0, 2 * kHeader * (nd - 1), 2 * kHeader * (nd - 1)};
      world[CollKind::barrier] = {1, 0, 0};
      world[CollKind::call_check] = {0, kHeader * (world_n - 1), kHeader * (world_n - 1)};
      for (int w = 0; w < s.nd * s.nm; ++w) {
        INFO(reduce_mode_name(mode) << " grid " << text(s) << " world rank " << w << " " << out[w].error);
        REQUIRE(out[w].ok());
        const Seen& v = *out[w].value;
        INFO("world after make_grid: " << stats_text(v.world_after_grid));
        CHECK(same_stats(v.world_after_grid, CommStats{}));
        INFO("world: " << stats_text(v.world) << "\nexpected " << stats_text(world));
        CHECK(same_stats(v.world, world));
        INFO("MP: " << stats_text(v.mp) << "\nexpected " << stats_text(mp));
        CHECK(same_stats(v.mp, mp));
        INFO("DP: " << stats_text(v.dp) << "\nexpected " << stats_text(dp));
        CHECK(same_stats(v.dp, dp));
      }
    }
  }
}

TEST_CASE("the same group can be created again, and lives beside its twin", "[ch11][collective][groups]") {
  auto group = thread_group(2);
  auto out = run_thread_ranks(2, [&](int w) {
    GlooCollective world(group.for_rank(w));
    std::vector<float> sums;
    for (int round = 0; round < 2; ++round) {  // created, used, destroyed, twice
      auto g = world.subgroup({0, 1}, "again");
      std::vector<float> x{float(w + 1)};
      g->all_reduce(std::span<float>(x));
      sums.push_back(x[0]);
    }
    auto a = world.subgroup({1, 0}, "twin"), b = world.subgroup({1, 0}, "twin");  // both alive
    std::vector<float> x{float(w + 1)}, y{float(10 * (w + 1))};
    Work wa = a->all_reduce_async(std::span<float>(x));
    Work wb = b->all_reduce_async(std::span<float>(y));
    wa.wait();
    wb.wait();
    sums.push_back(x[0]);
    sums.push_back(y[0]);
    return sums;
  });
  for (int w = 0; w < 2; ++w) {
    INFO("rank " << w << " " << out[w].error);
    REQUIRE(out[w].ok());
    CHECK(*out[w].value == std::vector<float>{3, 3, 3, 30});
  }
}

TEST_CASE("a rank that throws before a group call fails that group's other members",
          "[ch11][collective][groups][fault]") {
  // Grid 2x2: MP groups {0,1} {2,3}, DP groups {0,2} {1,3}. World rank 3 gives up before its MP
  // all-reduce: rank 2 fails in MP {2,3}; ranks 0 and 1 finish MP {0,1}, then fail in DP {0,2}
  // (rank 2 left) and DP {1,3} (rank 3 left). Each error names the call and the group.
  const Shape s{2, 2};
  auto group = thread_group(4, ReduceMode::deterministic, kShort);
  // every rank has its groups before rank 3 leaves (a latch, not a collective): otherwise a peer
  // still connecting to rank 3 would fail in make_grid rather than in the call this test is about
  std::latch connected(4);
  const auto t0 = Clock::now();
  auto out = run_thread_ranks(4, [&](int w) {
    std::optional<GlooCollective> world;
    std::optional<Grid> grid;
    try {
      world.emplace(group.for_rank(w));
      grid.emplace(make_grid(*world, GridDims{s.nm}));
    } catch (...) {
      connected.count_down();  // never leave the others waiting on the latch
      throw;
    }
    connected.arrive_and_wait();
    if (w == 3) throw std::runtime_error("rank 3 gives up");  // its groups close on unwind
    std::vector<float> x(100, 1.0f);
    grid->mp->all_reduce(std::span<float>(x));
    grid->dp->all_reduce(std::span<float>(x));
  });
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  CHECK(out[3].error == "rank 3 gives up");
  const char* want[] = {"all_reduce #0 on rank 0 of 2 in group dp[0,2]",
                        "all_reduce #0 on rank 0 of 2 in group dp[1,3]",
                        "all_reduce #0 on rank 0 of 2 in group mp[2,3]"};
  for (int w : {0, 1, 2}) {
    INFO("world rank " << w << ": " << out[w].error);
    CHECK(contains(out[w].error, want[w]));
    CHECK_FALSE(contains(out[w].error, "\n"));
  }
  CHECK(took < kHang);  // only guards against a hang
}

TEST_CASE("a member that never joins makes the group's creation fail within the timeout",
          "[ch11][collective][groups][fault]") {
  auto group = thread_group(3, ReduceMode::deterministic, kShort);
  const auto t0 = Clock::now();
  auto out = run_thread_ranks(3, [&](int w) {
    GlooCollective world(group.for_rank(w));
    if (w == 2) return;  // never creates the group
    world.subgroup({0, 1, 2}, "late");
  });
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  CHECK(out[2].ok());
  for (int w : {0, 1}) {
    INFO(out[w].error);
    CHECK(contains(out[w].error, "rendezvous failed for rank " + std::to_string(w) + " of 3"));
    CHECK(contains(out[w].error, "/late[0,1,2]#0'"));
  }
  CHECK(took >= 1.5);   // no earlier than the timeout
  CHECK(took < kHang);  // only guards against a hang
}

TEST_CASE("bad member lists, names and model-parallel sizes are one-line errors", "[ch11][collective][groups][fault]") {
  GlooCollective solo(GlooOptions{});  // a world of one
  const auto one_line_error = [&](const std::vector<int>& members, const std::string& name) -> std::string {
    try {
      solo.subgroup(members, name);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK(one_line_error({}, "g") == "subgroup g: empty member list");
  CHECK(one_line_error({0, 1}, "g") == "subgroup g[0,1]: rank 1 out of range for a group of 1 ranks");
  CHECK(one_line_error({-1}, "g") == "subgroup g[-1]: rank -1 out of range for a group of 1 ranks");
  CHECK(one_line_error({0, 0}, "g") == "subgroup g[0,0]: rank 0 listed twice");
  CHECK(one_line_error({0}, "") == "subgroup: name '' must be non-empty letters, digits, '_', '-' or '.'");
  CHECK(one_line_error({0}, "a/b") == "subgroup: name 'a/b' must be non-empty letters, digits, '_', '-' or '.'");
  CHECK(one_line_error({0}, "ok") == "no error");  // a group of one joins no one
  CHECK_THROWS_WITH(make_grid(solo, GridDims{0}), "model-parallel group size must be >= 1, got 0");
  CHECK_THROWS_WITH(make_grid(solo, GridDims{2}), "world of 1 ranks does not split into model-parallel groups of 2");
  CHECK_THROWS_WITH(grid_members(GridAxis::dp, 6, GridDims{4}, 0),
                    "world of 6 ranks does not split into model-parallel groups of 4");
  CHECK_THROWS_WITH(grid_members(GridAxis::mp, 6, GridDims{3}, 6), "grid: rank 6 out of range for a world of 6 ranks");

  // In a world of 6: a grid of 4-rank MP groups, and a rank calling for a group it is not in;
  // both fail at once on the calling rank (no rendezvous is attempted).
  auto group = thread_group(6);
  auto out = run_thread_ranks(6, [&](int w) {
    GlooCollective world(group.for_rank(w));
    std::string errors;
    try {
      make_grid(world, GridDims{4});
    } catch (const Error& e) {
      errors += e.what() + std::string("|");
    }
    try {
      world.subgroup({(w + 1) % 6, (w + 2) % 6}, "others");
    } catch (const Error& e) {
      errors += e.what();
    }
    return errors;
  });
  for (int w = 0; w < 6; ++w) {
    INFO("world rank " << w << " " << out[w].error);
    REQUIRE(out[w].ok());
    CHECK(*out[w].value == concat("world of 6 ranks does not split into model-parallel groups of 4|subgroup others[",
                                  (w + 1) % 6, ",", (w + 2) % 6, "]: calling rank ", w,
                                  " is not a member (only the listed ranks create a group)"));
  }
}
