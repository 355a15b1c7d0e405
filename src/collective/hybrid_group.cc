// collective/hybrid_group.cc — the two levels of hybrid sharding's collectives (see hybrid_group.h).
#include "collective/hybrid_group.h"

#include "core/check.h"

namespace zt {

HybridGroup::HybridGroup(Collective& shard, Collective& replica, Collective& whole)
    : shard_(shard), replica_(replica), whole_(whole), thread_(std::make_unique<JobThread>()) {}

HybridGroup::~HybridGroup() { thread_.reset(); }

void HybridGroup::two_level_reduce_scatter(const void* input, void* output, const std::vector<std::size_t>& counts,
                                           DType dtype, ReduceOp op) {
  shard_.reduce_scatter_v_async(input, output, counts, dtype, op).wait();
  replica_.all_reduce_async(output, counts[static_cast<std::size_t>(rank())], dtype, op).wait();
}

Work HybridGroup::start_all_reduce(void* data, std::size_t count, DType dtype, ReduceOp op) {
  return thread_->submit([=, this] {
    const auto counts = balanced_counts(count, size());
    auto* mine =
        static_cast<unsigned char*>(data) + offsets_of(counts)[static_cast<std::size_t>(rank())] * dtype_size(dtype);
    two_level_reduce_scatter(data, mine, counts, dtype, op);  // in place: this rank's part at its offset
    shard_.all_gather_v_async(mine, data, counts, dtype).wait();
  });
}

Work HybridGroup::start_reduce_scatter_v(const void* input, void* output, const std::vector<std::size_t>& counts,
                                         DType dtype, ReduceOp op) {
  return thread_->submit([=, this] { two_level_reduce_scatter(input, output, counts, dtype, op); });
}

Work HybridGroup::start_all_gather_v(const void* input, void* output, const std::vector<std::size_t>& counts,
                                     DType dtype) {
  return thread_->submit([=, this] { shard_.all_gather_v_async(input, output, counts, dtype).wait(); });
}

Work HybridGroup::start_broadcast(void* data, std::size_t count, DType dtype, int root) {
  return thread_->submit([=, this] { shard_.broadcast_async(data, count, dtype, root).wait(); });
}

Work HybridGroup::start_barrier() {
  return thread_->submit([this] {
    shard_.barrier();
    replica_.barrier();
  });
}

Work HybridGroup::start_p2p(std::vector<P2pOp>) {
  ZT_FAIL("point to point on a hybrid-sharding group: send on its shard or replica group instead");
}

std::unique_ptr<Collective> HybridGroup::make_subgroup(const std::vector<int>&, const std::string& name) {
  ZT_FAIL("subgroup ", name, " of a hybrid-sharding group: split its shard or replica group instead");
}

}  // namespace zt
