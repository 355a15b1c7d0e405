// device/item_grid.h — the one launch geometry of the model's non-GEMM kernels: one thread per
// work item, items numbered 0 .. items-1, in one-dimensional blocks of kItemBlock threads.
//
// What an item is belongs to each kernel (an element, a row, a column of a row-major matrix, a
// (batch, head, query) row of attention); the grid is always the same function of the item count,
// defined here once. The CUDA launcher (device/cuda/item_launch.cuh) and the host tests
// (run_items_on_host, through device/host_launch.h) both take their grid from item_grid(), so a
// host test enumerates exactly the threads the device runs, the edge block's idle threads included.
//
// An op is a small struct of pointers and sizes with two ZT_HD members:
//   int64_t items() const            how many items (threads with work)
//   void operator()(int64_t i) const  item i's work, touching only item i's outputs
// Items never cooperate (no shared memory, no barriers), which is what lets the host layer run
// them one after another and lets each item follow the CPU kernel's order of operations exactly.
// Not here: kernels whose threads cooperate (device/block_launch.h).
#pragma once

#include <cstdint>

#include "core/check.h"
#include "device/host_launch.h"

namespace zt::device {

/// Threads per block of every item kernel: a multiple of the warp size, small enough that the
/// per-thread state of a canonical sum (kernels/row_sum.h) never limits occupancy much.
inline constexpr uint32_t kItemBlock = 128;

/// The most items one launch may have: the global x index is 32-bit (device/host_launch.h).
inline constexpr int64_t kMaxItems = int64_t{1} << 32;

/// A launch's extents.
struct Launch {
  Dim3 grid;   ///< blocks
  Dim3 block;  ///< threads per block
};

/// The grid of an item kernel: ceil(items / kItemBlock) blocks of kItemBlock threads in x.
/// @param items the item count (>= 1, below kMaxItems; checked). @return the launch's extents.
inline Launch item_grid(int64_t items) {
  ZT_CHECK(items >= 1 && items < kMaxItems, "item kernel: ", items, " items (need 1 .. 2^32 - 1)");
  return {{blocks_for(static_cast<uint64_t>(items), kItemBlock), 1, 1}, {kItemBlock, 1, 1}};
}

/// The body of every thread of an item kernel: thread t does item t.global_x() if there is one.
/// @param t the thread's index. @param op the op (see the file comment).
template <typename Op>
ZT_HD void run_item_thread(const ThreadIndex& t, const Op& op) {
  const int64_t i = t.global_x();
  if (i < op.items()) op(i);
}

/// Run an op's every thread on the host, over the grid the device would use (nothing for 0 items).
/// @param op the op, its pointers into host memory.
template <typename Op>
void run_items_on_host(const Op& op) {
  if (op.items() == 0) return;
  const Launch l = item_grid(op.items());
  launch_on_host(l.grid, l.block, [&](const ThreadIndex& t) { run_item_thread(t, op); });
}

}  // namespace zt::device
