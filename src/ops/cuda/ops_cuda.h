// ops/cuda/ops_cuda.h — every op of the project on a CUDA device: one launcher for item ops
// (one thread per item, device/item_grid.h's grid) and block ops (a block of kBlockThreads threads
// per op block, its shared memory dynamic), instantiated in the .cu file that registers each op
// (ops/cuda/ops_cuda.cu, step_device/cuda/step_cuda.cu) through ops/cuda/launch.cuh. Compiled with
// --fmad=false like every kernel of the project. Not here: memory, synchronisation.
#pragma once

#include <cuda_runtime_api.h>

namespace zt::ops::cuda {

/// Enqueue an op on a stream; nothing for an op without work. Launch errors throw zt::Error; the
/// kernel's own errors surface at the next synchronisation. An op registered in no .cu file does
/// not link. @param op the op, its pointers into device memory. @param stream the stream.
template <typename Op>
void launch(const Op& op, cudaStream_t stream);

}  // namespace zt::ops::cuda
