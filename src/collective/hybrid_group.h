// collective/hybrid_group.h — hybrid sharding's data-parallel group as one Collective: the
// states are sharded over a shard group of G ranks and replicated across the N_d / G replica
// groups (FSDP's HYBRID_SHARD, DeepSpeed's MiCS; grid.h builds the two groups). To ZeRO it looks
// like a group of G ranks — rank() is the rank in the shard group, size() is G — whose
// reductions still cover all N_d ranks:
//   reduce_scatter_v(in, out)  reduce-scatter in the shard group, then all-reduce of this rank's
//                              part over the replica group: (G-1)/G·S inside, 2(R-1)/R·S/G across
//                              (R = N_d / G), where a flat reduce-scatter over N_d would send
//                              (N_d-1)/N_d·S, most of it across the slow links;
//   all_reduce(x)              that reduce-scatter over balanced parts, then an all-gather in the
//                              shard group;
//   all_gather_v, broadcast    in the shard group only (every replica group holds the same shards,
//                              so each gathers its own copy);
//   barrier                    the shard group, then the replica group: every rank of N_d.
// Bits: in deterministic mode the shard group sums its G members along the canonical tree and
// the replica group sums the N_d / G partial sums along it again. When G is a power of two the
// G members are aligned blocks of the N_d leaves, and the canonical tree composes over aligned
// blocks (reduce/canonical_tree.h), so the result is the DP group's flat canonical sum, bit for bit.
// For G not a power of two the bracketing differs and so may the bits (tests/collective/
// test_grid3d.cc shows both). 16-bit sums compose only when every add rounds
// (Accumulation::storage, the engine's choice for 16-bit wires); with fp32 accumulation the
// partial sums would be rounded once more in between.
// Every call runs on this object's own thread, in issue order, and issues its inner calls there
// one after the other, so every rank issues them to the two groups in one order.
// whole() hands out the data-parallel group itself, for the few values that every one of the
// N_d ranks contributes (the loss sums of their micro-batches).
// Not here: building the groups (grid.h), point to point and sub-groups (refused: use the groups).
#pragma once

#include <memory>

#include "collective/collective.h"

namespace zt {

/// A data-parallel group with hybrid sharding (see the file comment).
class HybridGroup final : public Collective {
 public:
  /// @param shard the shard group (G ranks). @param replica the replica group (N_d / G ranks).
  /// @param whole the whole data-parallel group (N_d ranks), for what must combine every rank
  /// (whole()). All three are kept by reference and must outlive this object.
  HybridGroup(Collective& shard, Collective& replica, Collective& whole);
  ~HybridGroup() override;

  /// @return the rank in the shard group.
  int rank() const override { return shard_.rank(); }
  /// @return G.
  int size() const override { return shard_.size(); }
  /// @return the shard group's mode.
  ReduceMode mode() const override { return shard_.mode(); }
  /// @return the traffic of both groups together (intra() and inter() apart).
  CommStats stats() const override { return shard_.stats() + replica_.stats(); }
  /// @return the traffic inside the shard group (within a node when the group is one).
  CommStats intra() const { return shard_.stats(); }
  /// @return the traffic across shard groups (the replica group).
  CommStats inter() const { return replica_.stats(); }
  /// @return the whole data-parallel group, unchanged: for values every one of the N_d ranks
  /// contributes (the loss sums); its calls are not this object's.
  Collective& whole() const { return whole_; }

 protected:
  Work start_all_reduce(void* data, std::size_t count, DType dtype, ReduceOp op) override;
  Work start_reduce_scatter_v(const void* input, void* output, const std::vector<std::size_t>& counts, DType dtype,
                              ReduceOp op) override;
  Work start_all_gather_v(const void* input, void* output, const std::vector<std::size_t>& counts,
                          DType dtype) override;
  Work start_broadcast(void* data, std::size_t count, DType dtype, int root) override;
  Work start_barrier() override;
  Work start_p2p(std::vector<P2pOp> ops) override;
  std::unique_ptr<Collective> make_subgroup(const std::vector<int>& members, const std::string& name) override;

 private:
  // The two levels of a reduce-scatter, on this object's thread.
  void two_level_reduce_scatter(const void* input, void* output, const std::vector<std::size_t>& counts, DType dtype,
                                ReduceOp op);

  Collective& shard_;
  Collective& replica_;
  Collective& whole_;
  std::unique_ptr<JobThread> thread_;  // last member: joined first on destruction
};

}  // namespace zt
