// kernels/cuda/kernels_cuda.h — the model's non-GEMM ops on a CUDA device: one launcher for every
// item op of kernels/threads/ (LayerNorm, GELU, cross-entropy, argmax, embedding, the attention
// softmax, residual add, bias epilogue and gradient, the split Linears' gathers, scatters and
// block sums, casts), for every compute type.
//
// An op is the struct a host test runs through device/item_grid.h's run_items_on_host; here the
// same struct, its pointers into device memory, is enqueued on a stream with the same grid. The
// kernels are compiled with --fmad=false and use the project's own exp/tanh (kernels/math.h), so
// every thread computes in the CPU kernel's order and gets its bits. Built only with CUDA
// (library zt_kernels_cuda). Not here: memory management, synchronisation, the GEMMs (gemm/cuda).
#pragma once

#include <cuda_runtime_api.h>

namespace zt::kernels::cuda {

/// Enqueue an item op on a stream: one thread per item, grid device::item_grid(op.items()); no
/// launch for 0 items. Instantiated (kernels/cuda/*.cu) for every op of kernels/threads/ with
/// T = float, fp16 and bf16 (casts: float to and from each 16-bit type); any other op does not
/// link. Launch errors throw zt::Error; errors of the kernel itself surface at the next
/// synchronisation. @param op the op, its pointers into device memory. @param stream the stream.
template <typename Op>
void launch(const Op& op, cudaStream_t stream);

}  // namespace zt::kernels::cuda
