// collective/grid.h — the data-parallel x model-parallel grid of ranks: from the world group and
// the model-parallel size N_m, this rank's model-parallel (MP) and data-parallel (DP) groups.
//
// Layout (as Megatron-LM's): world = N_d x N_m ranks, MP ranks contiguous,
//   world rank = dp_rank * N_m + mp_rank,
// so an MP group is ranks d*N_m .. d*N_m + N_m - 1 (on one node when N_m divides the ranks per
// node: MP traffic is the heavier and more frequent) and a DP group is ranks m, m + N_m, ...,
// m + (N_d - 1) * N_m. Group ranks follow world order: MP group rank = mp_rank, DP group rank =
// dp_rank. Both groups come from Collective::subgroup, with their own stats and call sequences.
// This file only builds groups: it does not split a model or shard data between them.
#pragma once

#include <memory>
#include <vector>

#include "collective/collective.h"

namespace zt {

/// This rank's place in the grid and its two groups.
struct Grid {
  int dp_size = 1;                 ///< N_d, ranks per MP-group column (world size / N_m)
  int mp_size = 1;                 ///< N_m, ranks per model-parallel group
  int dp_rank = 0;                 ///< d = world rank / N_m, this rank's index in its DP group
  int mp_rank = 0;                 ///< m = world rank % N_m, this rank's index in its MP group
  std::unique_ptr<Collective> mp;  ///< world ranks d*N_m .. d*N_m + N_m - 1; created first
  std::unique_ptr<Collective> dp;  ///< world ranks m, m + N_m, ...; created second
};

/// World ranks of the MP group holding a rank. @param world_size N_d * N_m.
/// @param mp_size N_m. @param world_rank the rank. @return its MP group's ranks, in group order.
std::vector<int> grid_mp_members(int world_size, int mp_size, int world_rank);

/// World ranks of the DP group holding a rank. @param world_size N_d * N_m.
/// @param mp_size N_m. @param world_rank the rank. @return its DP group's ranks, in group order.
std::vector<int> grid_dp_members(int world_size, int mp_size, int world_rank);

/// Build this rank's MP and DP groups. Every rank of `world` calls it with the same mp_size; it
/// is a rendezvous of each group in turn (MP, then DP), so it blocks until the peers of both
/// groups have called it, or fails after the world's timeout. Destroying the Grid closes the DP
/// group, then the MP group: keep that order the same on every rank (it is, if every rank simply
/// lets its Grid go). The world stays usable and independent of both groups.
/// @param world the group to split (its ranks are the "world ranks" above).
/// @param mp_size N_m >= 1, dividing world.size().
/// @return the grid; zt::Error for a bad mp_size, or when a group's rendezvous fails.
Grid make_grid(Collective& world, int mp_size);

}  // namespace zt
