// kernels/kernel_launch.h — an item op (device/item_grid.h) packed as a KernelLaunch for any
// Runtime: its host body runs the op's every thread on the host (run_items_on_host), its CUDA body
// enqueues the same op on a stream (kernels/cuda/kernels_cuda.h), over the same grid.
//
// Why the caller names the spans: a KernelLaunch is type-erased, so the runtime cannot see which
// of an op's pointers it reads and which it writes; the emulated device needs exactly that to find
// missing synchronisation, and the caller, who built the op, knows it.
//
// The CUDA body exists only in a build that defines ZT_WITH_CUDA_KERNELS (a target that links
// zt_kernels_cuda, whose launchers are instantiated for the ops of kernels/threads/, so there an
// op without such a launcher does not link: build its KernelLaunch by hand, host body only);
// elsewhere it is left empty and CudaRuntime::launch refuses the kernel by name. Not here: the
// ops themselves.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "device/item_grid.h"
#include "device/runtime.h"

#if defined(ZT_WITH_CUDA_KERNELS)
#include "kernels/cuda/kernels_cuda.h"
#endif

namespace zt::kernels {

/// Pack an item op as a kernel launch.
/// @param name the kernel's name, for messages. @param op the op (copied; its pointers into
/// device memory). @param reads the device ranges the op reads. @param writes the device ranges
/// it writes. @return the launch.
template <typename Op>
device::KernelLaunch item_kernel(std::string name, const Op& op, std::vector<device::DeviceSpan> reads,
                                 std::vector<device::DeviceSpan> writes) {
  device::KernelLaunch k;
  k.name = std::move(name);
  k.reads = std::move(reads);
  k.writes = std::move(writes);
  if constexpr (requires { op.flops(); }) k.flops = op.flops();
  k.host_body = [op] { device::run_items_on_host(op); };
#if defined(ZT_WITH_CUDA_KERNELS)
  k.cuda_body = [op](void* stream) { zt::kernels::cuda::launch(op, static_cast<cudaStream_t>(stream)); };
#endif
  return k;
}

}  // namespace zt::kernels
