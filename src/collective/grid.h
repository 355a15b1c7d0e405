// collective/grid.h — the grid of ranks: from the world group, the model-parallel size N_m, the
// pipeline size N_p and (for hybrid sharding) the shard-group size G, this rank's groups.
//
// Layout (Megatron-LM's default order: model-parallel fastest, then data-parallel, then pipeline):
//   world = N_p x N_d x N_m ranks,  world rank = pp_rank · (N_d · N_m) + dp_rank · N_m + mp_rank.
//  - MP group: the N_m contiguous ranks of one (pp, dp): on one node when N_m divides the ranks per
//    node, since tensor-parallel traffic is the heaviest and most frequent.
//  - DP group: the N_d ranks of one (pp, mp), stride N_m.
//  - PP group: the N_p ranks of one (dp, mp), stride N_d · N_m: a pipeline's stages are whole
//    blocks of the world, so the lightest traffic (one activation per micro-batch and boundary)
//    is the one that crosses nodes.
//  - Hybrid sharding inside the DP group (FSDP's HYBRID_SHARD, DeepSpeed's MiCS / ZeRO++ hpZ):
//    the shard group is G consecutive DP ranks (DP ranks g·G .. g·G + G - 1: one node when the
//    DP group is laid out node by node), the replica group the N_d / G ranks with the same
//    position in their shard group (DP ranks j, j + G, ...). With G = N_d (the default) the
//    shard group is the DP group and the replica group is this rank alone.
// Group ranks follow world order (MP group rank = mp_rank, DP = dp_rank, PP = pp_rank, shard
// group rank = dp_rank mod G, replica group rank = dp_rank / G). Every group comes from
// Collective::subgroup, with its own stats and call sequence, created in one order on every rank
// (MP, DP, PP, then shard and replica from the DP group): see grid.cc for why that cannot deadlock.
// With N_p = 1 and G = N_d this is the DP x MP grid of chapter 11, rank for rank.
// This file only builds groups: it does not split a model or shard data between them.
#pragma once

#include <memory>
#include <vector>

#include "collective/collective.h"

namespace zt {

/// The sizes of the grid's dimensions (N_d is what the world leaves: size / (N_p · N_m)).
struct GridDims {
  int mp = 1;     ///< N_m, ranks per model-parallel group
  int pp = 1;     ///< N_p, pipeline stages
  int shard = 0;  ///< G, ranks per shard group inside the DP group; 0: N_d (no hybrid sharding)
};

/// Which group of the grid.
enum class GridAxis : uint8_t {
  mp = 0,       ///< model-parallel
  dp = 1,       ///< data-parallel
  pp = 2,       ///< pipeline
  shard = 3,    ///< hybrid sharding: the states' shard group (within the DP group)
  replica = 4,  ///< hybrid sharding: the ranks holding the same shard (within the DP group)
};

/// This rank's place in the grid and its groups.
struct Grid {
  int dp_size = 1;                      ///< N_d = world size / (N_p · N_m)
  int mp_size = 1;                      ///< N_m, ranks per model-parallel group
  int pp_size = 1;                      ///< N_p, pipeline stages
  int shard_size = 1;                   ///< G, ranks per shard group (N_d without hybrid sharding)
  int dp_rank = 0;                      ///< d = world rank / N_m mod N_d, this rank's index in its DP group
  int mp_rank = 0;                      ///< m = world rank mod N_m, this rank's index in its MP group
  int pp_rank = 0;                      ///< p = world rank / (N_d · N_m), this rank's stage
  std::unique_ptr<Collective> mp;       ///< created first
  std::unique_ptr<Collective> dp;       ///< created second
  std::unique_ptr<Collective> pp;       ///< created third; null when N_p = 1
  std::unique_ptr<Collective> shard;    ///< sub-group of dp; null without hybrid sharding (G = N_d)
  std::unique_ptr<Collective> replica;  ///< sub-group of dp; null without hybrid sharding
};

/// The ranks of one of a rank's groups. @param axis which group. @param world_size
/// N_p · N_d · N_m. @param dims N_m, N_p, G. @param world_rank the rank. @return the group's world
/// ranks in group order (shard and replica: also world ranks); zt::Error naming the dimension
/// that does not divide.
std::vector<int> grid_members(GridAxis axis, int world_size, const GridDims& dims, int world_rank);

/// Build this rank's groups. Every rank of `world` calls it with the same dims; it is a
/// rendezvous of each group in turn, so it blocks until the peers of every group have called
/// it, or fails after the world's timeout. Destroying the Grid closes the groups in reverse
/// order of creation: keep that the same on every rank (it is, if every rank simply lets its Grid
/// go). The world stays usable and independent of every group.
/// @param world the group to split (its ranks are the "world ranks" above).
/// @param dims N_m >= 1 and N_p >= 1 whose product divides world.size(); G >= 1 dividing N_d, or 0.
/// @return the grid; zt::Error for bad dims, or when a group's rendezvous fails.
Grid make_grid(Collective& world, const GridDims& dims);

}  // namespace zt
