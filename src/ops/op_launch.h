// ops/op_launch.h — a block op (device/block_launch.h) packed as a KernelLaunch for any Runtime:
// its host body runs every block's phases on the host (run_blocks_on_host), its CUDA body enqueues
// the same op on a stream (ops/cuda/ops_cuda.h), a block of kBlockThreads threads per op block.
//
// As for item ops (kernels/kernel_launch.h), the caller names the device ranges the op reads and
// writes, which the emulated device's race checker needs and a type-erased launch cannot see.
// The CUDA body exists only where ZT_WITH_CUDA_KERNELS is defined (a target that links
// zt_ops_cuda, whose launcher is instantiated for every op registered in ops/cuda/ops_cuda.cu).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "device/block_launch.h"
#include "device/runtime.h"

#if defined(ZT_WITH_CUDA_KERNELS)
#include "ops/cuda/ops_cuda.h"
#endif

namespace zt::ops {

/// Pack a block op as a kernel launch.
/// @param name the kernel's name, for messages. @param op the op (copied; its pointers into
/// device memory). @param reads the device ranges the op reads. @param writes the device ranges
/// it writes. @return the launch.
template <typename Op>
device::KernelLaunch block_kernel(std::string name, const Op& op, std::vector<device::DeviceSpan> reads,
                                  std::vector<device::DeviceSpan> writes) {
  device::KernelLaunch k;
  k.name = std::move(name);
  k.reads = std::move(reads);
  k.writes = std::move(writes);
  if constexpr (requires { op.flops(); }) k.flops = op.flops();
  k.host_body = [op] { device::run_blocks_on_host(op); };
#if defined(ZT_WITH_CUDA_KERNELS)
  k.cuda_body = [op](void* stream) { zt::ops::cuda::launch(op, static_cast<cudaStream_t>(stream)); };
#endif
  return k;
}

}  // namespace zt::ops
