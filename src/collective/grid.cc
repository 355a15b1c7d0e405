// collective/grid.cc — member lists of the grid's groups and make_grid (see grid.h).
#include "collective/grid.h"

#include "core/check.h"

namespace zt {
namespace {

// N_d, after checking every dimension; the messages name what does not divide.
int check_grid(int world_size, const GridDims& d, int world_rank) {
  ZT_CHECK(d.mp >= 1, "model-parallel group size must be >= 1, got ", d.mp);
  ZT_CHECK(d.pp >= 1, "pipeline size must be >= 1, got ", d.pp);
  ZT_CHECK(world_size % d.mp == 0, "world of ", world_size, " ranks does not split into model-parallel groups of ",
           d.mp);
  ZT_CHECK(world_size % (d.mp * d.pp) == 0, "world of ", world_size, " ranks does not split into ", d.pp,
           " pipeline stages of model-parallel groups of ", d.mp);
  ZT_CHECK(world_rank >= 0 && world_rank < world_size, "grid: rank ", world_rank, " out of range for a world of ",
           world_size, " ranks");
  const int nd = world_size / (d.mp * d.pp);
  ZT_CHECK(d.shard >= 0 && (d.shard == 0 || nd % d.shard == 0), "shard group of ", d.shard,
           " ranks does not divide the ", nd, " data-parallel ranks");
  return nd;
}

// The ranks first, first + step, ... (count of them).
std::vector<int> strided(int first, int step, int count) {
  std::vector<int> ranks(count);
  for (int i = 0; i < count; ++i) ranks[i] = first + i * step;
  return ranks;
}

}  // namespace

std::vector<int> grid_members(GridAxis axis, int world_size, const GridDims& dims, int world_rank) {
  const int nd = check_grid(world_size, dims, world_rank);
  const int nm = dims.mp, g = dims.shard == 0 ? nd : dims.shard;
  const int m = world_rank % nm, d = world_rank / nm % nd, p = world_rank / (nd * nm);
  const int stage_base = p * nd * nm;  // world rank of (p, d = 0, m = 0)
  switch (axis) {
    case GridAxis::mp:
      return strided(world_rank - m, 1, nm);
    case GridAxis::dp:
      return strided(stage_base + m, nm, nd);
    case GridAxis::pp:
      return strided(d * nm + m, nd * nm, dims.pp);
    case GridAxis::shard:
      return strided(stage_base + (d / g * g) * nm + m, nm, g);
    case GridAxis::replica:
      return strided(stage_base + (d % g) * nm + m, g * nm, nd / g);
  }
  ZT_FAIL("grid_members: unknown axis");
}

// Why the fixed order (MP, DP, PP, then shard and replica, on every rank) cannot deadlock:
// creating a group blocks until all its members have arrived. The MP groups partition the world,
// and every rank's first step is its MP group, so every MP rendezvous has all its members and
// completes (or all of them fail after the timeout). Then every rank's next step is its DP group,
// again a partition, again with all members present; the same for PP, and for the shard and
// replica groups, each a partition of every DP group. A rank can only wait for ranks doing the
// same step. Had some ranks created DP first, rank 0 could wait in MP {0,1} for rank 1 while rank
// 1 waits in DP {1,3} for rank 3, which waits in MP {2,3} for rank 2, which waits in DP {0,2} for
// rank 0: a cycle, broken only by the timeout.
Grid make_grid(Collective& world, const GridDims& dims) {
  const int w = world.rank(), n = world.size();
  const int nd = check_grid(n, dims, w);
  Grid g;
  g.mp_size = dims.mp;
  g.pp_size = dims.pp;
  g.dp_size = nd;
  g.shard_size = dims.shard == 0 ? nd : dims.shard;
  g.mp_rank = w % dims.mp;
  g.dp_rank = w / dims.mp % nd;
  g.pp_rank = w / (nd * dims.mp);
  g.mp = world.subgroup(grid_members(GridAxis::mp, n, dims, w), "mp");
  g.dp = world.subgroup(grid_members(GridAxis::dp, n, dims, w), "dp");
  if (dims.pp > 1) g.pp = world.subgroup(grid_members(GridAxis::pp, n, dims, w), "pp");
  if (g.shard_size < nd) {                       // the two groups of hybrid sharding, as sub-groups of the DP group
    const int gs = g.shard_size, d = g.dp_rank;  // in DP-group ranks
    g.shard = g.dp->subgroup(strided(d / gs * gs, 1, gs), "shard");
    g.replica = g.dp->subgroup(strided(d % gs, gs, nd / gs), "replica");
  }
  return g;
}

}  // namespace zt
