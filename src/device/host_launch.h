// device/host_launch.h — the CUDA launch model, executed on the host: a grid of blocks of threads,
// each thread running a kernel's per-thread body, enumerated one after another.
//
// Why: the development machines have nvcc but no GPU. A kernel whose per-thread body is a ZT_HD
// function (fp/hd.h) is compiled twice — by nvcc for the device, by g++ for the host — and this
// header runs the host copy over the same grid the device would, so CPU tests check every
// thread's arithmetic bit for bit without a device. Bodies that cooperate across threads through
// shared memory and barriers are written as phases instead (device/block_launch.h), which the host
// runs phase by phase; the GEMM's tiled CUDA kernel is not, and is tested only on a device.
// It is not a simulator: no warps, no memory model, no concurrency. Threads run in index order.
#pragma once

#include <cstdint>

#include "fp/hd.h"

namespace zt::device {

/// A grid or block extent, or an index into one (CUDA's dim3 / uint3).
struct Dim3 {
  uint32_t x = 1;  ///< fastest-varying extent or index
  uint32_t y = 1;  ///< second extent or index
  uint32_t z = 1;  ///< slowest extent or index
};

/// Where a thread is: its block's index, its index in the block, and the block's extent.
struct ThreadIndex {
  Dim3 block;      ///< blockIdx
  Dim3 thread;     ///< threadIdx
  Dim3 block_dim;  ///< blockDim
  /// The global x index, blockIdx.x * blockDim.x + threadIdx.x.
  /// @return that index.
  ZT_HD uint32_t global_x() const { return block.x * block_dim.x + thread.x; }
  /// The global y index, blockIdx.y * blockDim.y + threadIdx.y.
  /// @return that index.
  ZT_HD uint32_t global_y() const { return block.y * block_dim.y + thread.y; }
};

/// Run body(ThreadIndex) for every thread of a grid × block launch, blocks and threads in index
/// order (z, y, x slowest to fastest), as the device would run them in some order.
/// @param grid blocks per dimension. @param block threads per block and dimension.
/// @param body the per-thread body: callable with a ThreadIndex.
template <typename Body>
void launch_on_host(Dim3 grid, Dim3 block, Body&& body) {
  ThreadIndex t;
  t.block_dim = block;
  for (t.block.z = 0; t.block.z < grid.z; ++t.block.z)
    for (t.block.y = 0; t.block.y < grid.y; ++t.block.y)
      for (t.block.x = 0; t.block.x < grid.x; ++t.block.x)
        for (t.thread.z = 0; t.thread.z < block.z; ++t.thread.z)
          for (t.thread.y = 0; t.thread.y < block.y; ++t.thread.y)
            for (t.thread.x = 0; t.thread.x < block.x; ++t.thread.x) body(t);
}

/// Blocks needed to cover n items with `per_block` per block: ceil(n / per_block).
/// @param n items. @param per_block items per block. @return the block count.
ZT_HD uint32_t blocks_for(uint64_t n, uint32_t per_block) {
  return static_cast<uint32_t>((n + per_block - 1) / per_block);
}

}  // namespace zt::device
