// step_device/cuda/step_cuda.h — the step's item ops (step_device/step_threads.h) on a CUDA
// device: the non-finite flag, the norm block sums, the update and the kept-flag count.
//
// The same op structs the emulated device runs on the host, their pointers into device memory,
// enqueued with the same grid (device::item_grid) and built with --fmad=false, so each thread
// does the host's arithmetic. Built only with CUDA (library zt_step_device_cuda). Not here:
// scratch, copies, synchronisation (step_device/device_step_ops.cc).
#pragma once

#include <cuda_runtime_api.h>

namespace zt::step::cuda {

/// Enqueue one of the step's item ops on a stream (nothing for 0 items). Instantiated for
/// NonfiniteFlagItems, NormBlockItems and UpdateItems of float, fp16 and bf16, for
/// KeptCountItems, for the loop's ops (loop_threads.h) and for kernels::CastElements between
/// float and each compute type. Launch errors throw zt::Error.
/// @param op the op, its pointers into device memory. @param stream the stream.
template <typename Op>
void launch(const Op& op, cudaStream_t stream);

}  // namespace zt::step::cuda
