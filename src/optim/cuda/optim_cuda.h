// optim/cuda/optim_cuda.h — the optimizer's element-wise ops on a CUDA device: Adam/AdamW, SGD
// with momentum, and the loss scaler's unscale + overflow check (optim/optim_threads.h).
//
// The same op structs the host tests run through device/item_grid.h, their pointers into device
// memory, enqueued with the same grid; built with --fmad=false, so each element gets the CPU's
// bits. Built only with CUDA (library zt_optim_cuda). Not here: the step's scalars (computed once
// on the host, optim/adam.h), memory management, synchronisation.
#pragma once

#include <cuda_runtime_api.h>

namespace zt::optim::cuda {

/// Enqueue an optimizer item op on a stream: one thread per element, grid
/// device::item_grid(op.items()); no launch for 0 elements. Instantiated for AdamElements,
/// SgdElements and UnscaleCheckElements. Launch errors throw zt::Error.
/// @param op the op, its pointers into device memory. @param stream the stream.
template <typename Op>
void launch(const Op& op, cudaStream_t stream);

}  // namespace zt::optim::cuda
