// device/cuda/item_launch.cuh — launching an item op (device/item_grid.h) on a CUDA device: one
// kernel template for every op, its grid from item_grid(), so the device runs exactly the threads
// the host tests run. Included by ops/cuda/launch.cuh and optim/cuda; CUDA only.
// Not here: memory management or synchronisation (callers own their streams and buffers).
#pragma once

#include <cuda_runtime.h>

#include "core/check.h"
#include "device/item_grid.h"

namespace zt::device::cuda {

/// This thread's position, as device/host_launch.h describes it. @return the index.
__device__ inline ThreadIndex this_thread() {
  return {{blockIdx.x, blockIdx.y, blockIdx.z},
          {threadIdx.x, threadIdx.y, threadIdx.z},
          {blockDim.x, blockDim.y, blockDim.z}};
}

/// The kernel of every item op: each thread runs run_item_thread. @param op the op (by value).
template <typename Op>
__global__ void item_kernel(Op op) {
  run_item_thread(this_thread(), op);
}

/// Throw a zt::Error naming the CUDA error, if any. @param err the status. @param what the call.
inline void check_cuda(cudaError_t err, const char* what) {
  ZT_CHECK(err == cudaSuccess, "CUDA ", what, ": ", cudaGetErrorString(err));
}

/// Enqueue an item op on a stream (nothing for 0 items); launch errors throw, the op's own work is
/// asynchronous. @param op the op, its pointers into device memory. @param stream the stream.
template <typename Op>
void launch_items(const Op& op, cudaStream_t stream) {
  if (op.items() == 0) return;
  const Launch l = item_grid(op.items());
  item_kernel<<<dim3(l.grid.x, l.grid.y, l.grid.z), dim3(l.block.x, l.block.y, l.block.z), 0, stream>>>(op);
  check_cuda(cudaGetLastError(), "item kernel launch");
}

}  // namespace zt::device::cuda
