// step_device/step_launch.h — an item op of this folder (step_threads.h, loop_threads.h, and the
// loop's casts, kernels::CastElements) packed as a KernelLaunch: its host body runs every thread
// through the host launch layer, its CUDA body (in a build with this folder's launcher,
// ZT_WITH_STEP_CUDA) enqueues it on a stream.
//
// Why not kernels::item_kernel: that one's CUDA body calls kernels/cuda/'s launcher, which is
// instantiated for the model's ops (no float-to-float cast); these ops' launcher is
// step_device/cuda/. Private to this folder's .cc files (the macro is set on this module only).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "device/item_grid.h"
#include "device/runtime.h"

#if defined(ZT_WITH_STEP_CUDA)
#include "step_device/cuda/step_cuda.h"
#endif

namespace zt::step {

/// An op as a launch with the spans it reads and writes.
/// @param name the kernel's name. @param op the op (copied). @param reads device ranges it reads.
/// @param writes device ranges it writes. @return the launch.
template <typename Op>
device::KernelLaunch launch_of(std::string name, const Op& op, std::vector<device::DeviceSpan> reads,
                               std::vector<device::DeviceSpan> writes) {
  device::KernelLaunch k;
  k.name = std::move(name);
  k.reads = std::move(reads);
  k.writes = std::move(writes);
  k.host_body = [op] { device::run_items_on_host(op); };
#if defined(ZT_WITH_STEP_CUDA)
  k.cuda_body = [op](void* stream) { cuda::launch(op, static_cast<cudaStream_t>(stream)); };
#endif
  return k;
}

}  // namespace zt::step
