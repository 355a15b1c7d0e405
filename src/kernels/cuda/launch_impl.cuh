// kernels/cuda/launch_impl.cuh — the definition behind kernels/cuda/kernels_cuda.h's launch(), and
// the macro each kernels/cuda/*.cu uses to instantiate it for its ops. Private to those files.
#pragma once

#include "device/cuda/item_launch.cuh"
#include "fp/bf16.h"
#include "fp/fp16.h"
#include "kernels/cuda/kernels_cuda.h"

namespace zt::kernels::cuda {

template <typename Op>
void launch(const Op& op, cudaStream_t stream) {
  device::cuda::launch_items(op, stream);
}

}  // namespace zt::kernels::cuda

/// Instantiate kernels::cuda::launch for a templated op with every compute type.
#define ZT_LAUNCH_FOR_COMPUTE_TYPES(Op)                                       \
  template void zt::kernels::cuda::launch(const Op<float>&, cudaStream_t);    \
  template void zt::kernels::cuda::launch(const Op<zt::fp16>&, cudaStream_t); \
  template void zt::kernels::cuda::launch(const Op<zt::bf16>&, cudaStream_t);
