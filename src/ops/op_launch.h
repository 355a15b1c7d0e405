// ops/op_launch.h — any op of the project packed as a KernelLaunch for any Runtime: an item op
// (device/item_grid.h: one thread per item) or a block op (device/block_launch.h: a block's phases
// between barriers). Its host body runs the op's every thread or block on the host; its CUDA body
// enqueues the same op on a stream (ops/cuda/ops_cuda.h), over the same grid.
//
// On the host runtime (device/host_runtime.h) the launch's pool_body runs instead: the items or
// blocks themselves, split over the calling rank's CPU pool (independent by contract, so the split
// changes no bit); an op with a host() member runs that instead: the CPU kernel that computes the
// whole launch with the same bits (a row at a time with vectorised inner loops, F16C conversions,
// where a block op's phases would run its threads one by one), splitting itself over the pool
// (tests/kernels/test_host_launch.cc holds every op, as the host runtime runs it, to the CPU
// kernel's bits).
//
// Why the caller names the spans: a KernelLaunch is type-erased, so the runtime cannot see which
// of an op's pointers it reads and which it writes; the emulated device needs exactly that to find
// missing synchronisation, and the caller, who built the op, knows it. An op that declares flops()
// hands them on (the roofline's compute side, plan/roofline.h).
//
// The CUDA body exists only where ZT_WITH_CUDA_KERNELS is defined (a target linked with the CUDA
// libraries whose .cu files register each op: ops/cuda/ops_cuda.cu for the model's ops,
// step_device/cuda/step_cuda.cu for the optimizer step's); an op registered nowhere does not link
// there. Elsewhere it is left empty and the CUDA runtime refuses the kernel by name.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/cpu_pool.h"
#include "device/block_launch.h"
#include "device/item_grid.h"
#include "device/runtime.h"

#if defined(ZT_WITH_CUDA_KERNELS)
#include "ops/cuda/ops_cuda.h"
#endif

namespace zt::ops {

/// The fewest items of an item op a thread of the host runtime's pool takes: items range from an
/// element (a few flops) to a row of thousands, so a small grain that still amortises a wake-up.
inline constexpr int64_t kPoolItemGrain = 1024;

/// Whether an op is a block op (it has blocks()) rather than an item op (items()).
template <typename Op>
constexpr bool kBlockOp = requires(const Op& op) {
  op.blocks();
};

/// Pack an op as a kernel launch.
/// @param name the kernel's name, for messages. @param op the op (copied; its pointers into
/// device memory). @param reads the device ranges the op reads. @param writes the device ranges
/// it writes. @return the launch.
template <typename Op>
device::KernelLaunch op_kernel(std::string name, const Op& op, std::vector<device::DeviceSpan> reads,
                               std::vector<device::DeviceSpan> writes) {
  device::KernelLaunch k;
  k.name = std::move(name);
  k.reads = std::move(reads);
  k.writes = std::move(writes);
  if constexpr (requires { op.flops(); }) k.flops = op.flops();
  if constexpr (kBlockOp<Op>) {
    k.host_body = [op] { device::run_blocks_on_host(op); };
    k.pool_body = [op] {
      parallel_for(op.blocks(), 1, [&](int64_t lo, int64_t hi) { device::run_blocks_on_host(op, lo, hi); });
    };
  } else {
    k.host_body = [op] { device::run_items_on_host(op); };
    k.pool_body = [op] {  // no grid on the host runtime: the items themselves, split over the pool
      parallel_for(op.items(), kPoolItemGrain, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) op(i);
      });
    };
  }
  if constexpr (requires { op.host(); }) k.pool_body = [op] { op.host(); };  // the op's CPU form
#if defined(ZT_WITH_CUDA_KERNELS)
  k.cuda_body = [op](void* stream) { zt::ops::cuda::launch(op, static_cast<cudaStream_t>(stream)); };
#endif
  return k;
}

/// Whether an op has no work (0 items or 0 blocks): such an op is not launched. @param op the op.
/// @return true when empty.
template <typename Op>
bool empty_op(const Op& op) {
  if constexpr (kBlockOp<Op>)
    return op.blocks() == 0;
  else
    return op.items() == 0;
}

}  // namespace zt::ops
