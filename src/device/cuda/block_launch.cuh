// device/cuda/block_launch.cuh — launching a block op (device/block_launch.h) on a CUDA device: one
// kernel template for every op, a block of kBlockThreads threads per op block, the op's shared
// memory as the launch's dynamic shared memory. Each phase is the thread's part followed by
// __syncthreads(), the barrier the host's HostBlock stands for. CUDA only.
// Not here: memory management or synchronisation (callers own their streams and buffers).
#pragma once

#include <cuda_runtime.h>

#include "device/block_launch.h"
#include "device/cuda/item_launch.cuh"

namespace zt::device::cuda {

/// A block as a GPU runs it: each thread runs its own part of a phase, then waits for the others.
class CudaBlock {
 public:
  /// @param shared the block's dynamic shared memory.
  __device__ explicit CudaBlock(float* shared) : shared_(shared) {}
  /// Run this thread's part of a phase, then the barrier. @param part callable with the thread index.
  template <typename Part>
  __device__ void each(const Part& part) {
    part(threadIdx.x);
    __syncthreads();
  }
  /// A barrier alone.
  __device__ void sync() { __syncthreads(); }
  /// @return the block's shared memory.
  __device__ float* shared() const { return shared_; }
  /// @return the threads of the block (kBlockThreads).
  __host__ __device__ static constexpr uint32_t threads() { return kBlockThreads; }

 private:
  float* shared_;
};

/// The kernel of every block op: block blockIdx.x runs the op's program. @param op the op (by value).
template <typename Op>
__global__ void block_kernel(Op op) {
  extern __shared__ float shared[];
  CudaBlock blk(shared);
  op(blk, static_cast<int64_t>(blockIdx.x));
}

/// Enqueue a block op on a stream (nothing for 0 blocks); launch errors throw, the op's own work is
/// asynchronous. @param op the op, its pointers into device memory. @param stream the stream.
template <typename Op>
void launch_blocks(const Op& op, cudaStream_t stream) {
  if (op.blocks() == 0) return;
  ZT_CHECK(op.blocks() < (int64_t{1} << 31), "block op: ", op.blocks(), " blocks (at most 2^31 - 1)");
  ZT_CHECK(op.shared_floats() <= kMaxSharedFloats, "block op: ", op.shared_floats(), " floats of shared memory");
  block_kernel<<<dim3(static_cast<unsigned>(op.blocks())), dim3(kBlockThreads), op.shared_floats() * sizeof(float),
                 stream>>>(op);
  check_cuda(cudaGetLastError(), "block kernel launch");
}

}  // namespace zt::device::cuda
