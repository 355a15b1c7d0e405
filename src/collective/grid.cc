// collective/grid.cc — member lists of the grid's groups and make_grid (see grid.h).
#include "collective/grid.h"

#include "core/check.h"

namespace zt {
namespace {

void check_grid(int world_size, int mp_size, int world_rank) {
  ZT_CHECK(mp_size >= 1, "model-parallel group size must be >= 1, got ", mp_size);
  ZT_CHECK(world_size % mp_size == 0, "world of ", world_size, " ranks does not split into model-parallel groups of ",
           mp_size);
  ZT_CHECK(world_rank >= 0 && world_rank < world_size, "grid: rank ", world_rank, " out of range for a world of ",
           world_size, " ranks");
}

// The ranks first, first + step, ... (count of them).
std::vector<int> strided(int first, int step, int count) {
  std::vector<int> ranks(count);
  for (int i = 0; i < count; ++i) ranks[i] = first + i * step;
  return ranks;
}

}  // namespace

std::vector<int> grid_mp_members(int world_size, int mp_size, int world_rank) {
  check_grid(world_size, mp_size, world_rank);
  return strided(world_rank / mp_size * mp_size, 1, mp_size);
}

std::vector<int> grid_dp_members(int world_size, int mp_size, int world_rank) {
  check_grid(world_size, mp_size, world_rank);
  return strided(world_rank % mp_size, mp_size, world_size / mp_size);
}

// Why the fixed order (MP first, then DP, on every rank) cannot deadlock: creating a group blocks
// until all its members have arrived. The MP groups partition the world, and every rank's first
// step is its MP group, so every MP rendezvous has all its members and completes (or all of them
// fail after the timeout). Then every rank's next step is its DP group, again a partition, again
// with all members present. A rank can only wait for ranks doing the same step. Had some ranks
// created DP first, rank 0 could wait in MP {0,1} for rank 1 while rank 1 waits in DP {1,3} for
// rank 3, which waits in MP {2,3} for rank 2, which waits in DP {0,2} for rank 0: a cycle, broken
// only by the timeout.
Grid make_grid(Collective& world, int mp_size) {
  const int w = world.rank(), n = world.size();
  check_grid(n, mp_size, w);
  Grid g;
  g.mp_size = mp_size;
  g.dp_size = n / mp_size;
  g.dp_rank = w / mp_size;
  g.mp_rank = w % mp_size;
  g.mp = world.subgroup(grid_mp_members(n, mp_size, w), "mp");
  g.dp = world.subgroup(grid_dp_members(n, mp_size, w), "dp");
  return g;
}

}  // namespace zt
