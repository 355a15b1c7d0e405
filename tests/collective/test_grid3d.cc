// The pipeline and hybrid-sharding dimensions of the grid (collective/grid.h), ranks as threads:
// for (N_p, N_d, N_m, G) over a set of shapes, each of a rank's five groups holds the world ranks
// that the layout rank = p·N_d·N_m + d·N_m + m says (written out here from the coordinates, not
// via grid.cc), in group-rank order; and hybrid sharding's two-level sum (collective/
// hybrid_group.h) — the canonical tree inside each shard group of G, then over the replica
// group — is, bit for bit, the DP group's canonical all-reduce whenever G is a power of two (the
// tree composes over aligned blocks: reduce/canonical_tree.h), while G = 3 of N_d = 6 gives other
// bits (the condition is needed); its traffic inside and across shard groups is the closed form.
#include <catch2/catch.hpp>

#include "collective/grid.h"
#include "collective/hybrid_group.h"
#include "collective/thread_ranks.h"
#include "reference.h"

using namespace zt;
using zt_test::bitwise_mismatches;

namespace {

struct Shape {
  int np, nd, nm, g;  // g = 0: no hybrid sharding
};

std::string text(Shape s) { return concat(s.np, "x", s.nd, "x", s.nm, " G ", s.g); }

// The world ranks sharing every coordinate but the ones `vary` allows, in increasing order of
// the varying coordinate: the definition of each group.
std::vector<int> want(Shape s, int w, GridAxis axis) {
  const int m = w % s.nm, d = w / s.nm % s.nd, p = w / (s.nd * s.nm), g = s.g ? s.g : s.nd;
  std::vector<int> out;
  for (int pp = 0; pp < s.np; ++pp)
    for (int dd = 0; dd < s.nd; ++dd)
      for (int mm = 0; mm < s.nm; ++mm) {
        const bool same_p = pp == p, same_d = dd == d, same_m = mm == m;
        bool in = false;
        switch (axis) {
          case GridAxis::mp:
            in = same_p && same_d;
            break;
          case GridAxis::dp:
            in = same_p && same_m;
            break;
          case GridAxis::pp:
            in = same_d && same_m;
            break;
          case GridAxis::shard:
            in = same_p && same_m && dd / g == d / g;
            break;
          case GridAxis::replica:
            in = same_p && same_m && dd % g == d % g;
            break;
        }
        if (in) out.push_back(pp * s.nd * s.nm + dd * s.nm + mm);
      }
  return out;
}

// Rank q's input for the two-level sums: large and small values placed so that any two ways of
// bracketing the sum over ranks round differently for some element (the 1s vanish next to 1e8
// in some brackets and not in others).
float mixed_value(int q, std::size_t i) {
  constexpr float kPattern[8] = {1e8f, 1.0f, -1e8f, 1.0f, 1.0f, 1.0f, 0.5f, 3.0f};
  return kPattern[(static_cast<std::size_t>(q) + i) % 8];
}

std::vector<float> mixed_inputs(int q, std::size_t count) {
  std::vector<float> x(count);
  for (std::size_t i = 0; i < count; ++i) x[i] = mixed_value(q, i);
  return x;
}

std::vector<int> gather_world_ranks(Collective& group, int world_rank) {
  const float mine = static_cast<float>(world_rank);
  std::vector<float> all(group.size());
  group.all_gather(std::span<const float>(&mine, 1), std::span<float>(all));
  return std::vector<int>(all.begin(), all.end());
}

}  // namespace

TEST_CASE("the grid's pipeline, shard and replica groups hold the ranks the layout says",
          "[ch11][collective][groups]") {
  const Shape shapes[] = {{2, 1, 1, 0}, {2, 2, 1, 0}, {4, 1, 1, 0}, {2, 2, 2, 0}, {3, 1, 1, 0},
                          {1, 4, 1, 2}, {2, 4, 1, 2}, {1, 4, 2, 2}, {1, 6, 1, 3}};
  for (Shape s : shapes) {
    const int n = s.np * s.nd * s.nm;
    auto group = thread_group(n);
    struct Seen {
      int pp_rank, dp_rank, mp_rank, shard_size;
      std::vector<std::vector<int>> members;  // mp, dp, pp, shard, replica (empty: no such group)
      std::vector<int> group_ranks;
    };
    auto out = run_thread_ranks(n, [&](int w) {
      GlooCollective world(group.for_rank(w));
      Grid g = make_grid(world, GridDims{s.nm, s.np, s.g});
      Seen v{g.pp_rank, g.dp_rank, g.mp_rank, g.shard_size, {}, {}};
      for (Collective* c : {g.mp.get(), g.dp.get(), g.pp.get(), g.shard.get(), g.replica.get()}) {
        v.members.push_back(c ? gather_world_ranks(*c, w) : std::vector<int>{});
        v.group_ranks.push_back(c ? c->rank() : -1);
      }
      return v;
    });
    for (int w = 0; w < n; ++w) {
      INFO("grid " << text(s) << " world rank " << w << " " << out[w].error);
      REQUIRE(out[w].ok());
      const Seen& v = *out[w].value;
      CHECK(v.pp_rank == w / (s.nd * s.nm));
      CHECK(v.dp_rank == w / s.nm % s.nd);
      CHECK(v.mp_rank == w % s.nm);
      CHECK(v.shard_size == (s.g ? s.g : s.nd));
      const bool hybrid = s.g && s.g < s.nd;
      const GridAxis axes[] = {GridAxis::mp, GridAxis::dp, GridAxis::pp, GridAxis::shard, GridAxis::replica};
      for (int a = 0; a < 5; ++a) {
        INFO("axis " << a);
        const bool exists = a < 2 || (a == 2 && s.np > 1) || (a >= 3 && hybrid);
        CHECK(v.members[a] == (exists ? want(s, w, axes[a]) : std::vector<int>{}));
        if (exists) CHECK(grid_members(axes[a], n, GridDims{s.nm, s.np, s.g}, w) == want(s, w, axes[a]));
      }
      CHECK(v.group_ranks[2] == (s.np > 1 ? v.pp_rank : -1));
      if (hybrid) {
        CHECK(v.group_ranks[3] == v.dp_rank % s.g);
        CHECK(v.group_ranks[4] == v.dp_rank / s.g);
      }
    }
  }
}

TEST_CASE("hybrid sharding's two-level sum is the DP group's canonical sum when G is a power of two",
          "[ch11][collective][groups]") {
  // HybridGroup (collective/hybrid_group.h) over the shard and replica groups: its all-reduce and
  // reduce-scatter against the DP group's flat ones and the independent reference tree; its
  // all-gather; and its traffic, inside the shard group and across, against closed forms.
  constexpr std::size_t kCount = 48;  // divides by every shard group size here
  for (auto [nd, g] : {std::pair{4, 2}, std::pair{8, 4}, std::pair{8, 2}, std::pair{6, 2}, std::pair{6, 3}}) {
    INFO("N_d = " << nd << ", G = " << g);
    auto group = thread_group(nd);
    struct Out {
      std::vector<float> flat, hybrid, shard, gathered;
      CommStats intra, inter;
    };
    auto out = run_thread_ranks(nd, [&](int w) {
      GlooCollective world(group.for_rank(w));
      Grid grid = make_grid(world, GridDims{1, 1, g});
      HybridGroup hybrid(*grid.shard, *grid.replica, *grid.dp);
      Out o{mixed_inputs(w, kCount),
            mixed_inputs(w, kCount),
            std::vector<float>(kCount / g),
            std::vector<float>(kCount),
            {},
            {}};
      grid.dp->all_reduce(std::span<float>(o.flat));
      const CommStats intra0 = hybrid.intra(), inter0 = hybrid.inter();
      hybrid.all_reduce(std::span<float>(o.hybrid));
      o.intra = hybrid.intra() - intra0;
      o.inter = hybrid.inter() - inter0;
      const auto in = mixed_inputs(w, kCount);
      hybrid.reduce_scatter(std::span<const float>(in), std::span<float>(o.shard));
      hybrid.all_gather(std::span<const float>(o.shard), std::span<float>(o.gathered));
      return o;
    });
    std::vector<float> tree(kCount);  // the independent reference tree over the N_d ranks in order
    for (std::size_t i = 0; i < kCount; ++i) {
      std::vector<float> leaves;
      for (int q = 0; q < nd; ++q) leaves.push_back(mixed_value(q, i));
      tree[i] = zt_test::reference_tree(leaves, [](float a, float b) { return a + b; });
    }
    const std::size_t part = kCount / g, replicas = nd / g;
    for (int w = 0; w < nd; ++w) {
      INFO("rank " << w << " " << out[w].error);
      REQUIRE(out[w].ok());
      const Out& o = *out[w].value;
      CHECK(bitwise_mismatches(o.flat, tree) == 0);
      if ((g & (g - 1)) == 0) {
        CHECK(bitwise_mismatches(o.hybrid, tree) == 0);
        const std::size_t at = static_cast<std::size_t>(w % g) * part;
        CHECK(bitwise_mismatches(o.shard, std::vector<float>(tree.begin() + at, tree.begin() + at + part)) == 0);
        CHECK(bitwise_mismatches(o.gathered, tree) == 0);
      } else {  // ((x0+x1)+x2) + ((x3+x4)+x5) is not ((x0+x1)+(x2+x3)) + (x4+x5)
        CHECK(bitwise_mismatches(o.hybrid, tree) > 0);
      }
      // S = 4·48 bytes. Inside: a reduce-scatter and an all-gather of S over G ranks, (G-1)/G·S
      // each. Across: an all-reduce of this rank's S/G over N_d/G ranks, 2(R-1)/R·S/G.
      const uint64_t S = kCount * 4;
      CHECK(o.intra[CollKind::reduce_scatter].bytes_sent == (g - 1) * S / g);
      CHECK(o.intra[CollKind::all_gather].bytes_sent == (g - 1) * S / g);
      CHECK(o.inter[CollKind::all_reduce].calls == 1);
      CHECK(o.inter[CollKind::all_reduce].bytes_sent == 2 * (replicas - 1) * (part * 4) / replicas);
    }
  }
}

TEST_CASE("bad grid dimensions are one-line errors", "[ch11][collective][groups]") {
  CHECK_THROWS_WITH(grid_members(GridAxis::pp, 6, GridDims{1, 4, 0}, 0),
                    "world of 6 ranks does not split into 4 pipeline stages of model-parallel groups of 1");
  CHECK_THROWS_WITH(grid_members(GridAxis::dp, 8, GridDims{1, 2, 3}, 0),
                    "shard group of 3 ranks does not divide the 4 data-parallel ranks");
  CHECK_THROWS_WITH(grid_members(GridAxis::dp, 8, GridDims{1, 0, 0}, 0), "pipeline size must be >= 1, got 0");
}
