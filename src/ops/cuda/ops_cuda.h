// ops/cuda/ops_cuda.h — the block ops of ops/ on a CUDA device: one launcher, instantiated in
// ops/cuda/ops_cuda.cu for every registered op and compute type. Built only with CUDA (library
// zt_ops_cuda, compiled with --fmad=false like every kernel of the project).
// Not here: memory management, synchronisation.
#pragma once

#include <cuda_runtime_api.h>

namespace zt::ops::cuda {

/// Enqueue a block op on a stream: op.blocks() blocks of device::kBlockThreads threads and
/// op.shared_floats() floats of shared memory; nothing for 0 blocks. Launch errors throw
/// zt::Error; the kernel's own errors surface at the next synchronisation.
/// @param op the op, its pointers into device memory. @param stream the stream.
template <typename Op>
void launch(const Op& op, cudaStream_t stream);

}  // namespace zt::ops::cuda
