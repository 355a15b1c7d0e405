// ops/cuda/launch.cuh — the definition behind ops/cuda/ops_cuda.h's launch(), and the macros with
// which a .cu file registers its ops (an op's registration is one line). CUDA only; included by
// the registering .cu files alone.
#pragma once

#include "device/cuda/block_launch.cuh"
#include "device/cuda/item_launch.cuh"
#include "fp/bf16.h"
#include "fp/fp16.h"
#include "ops/cuda/ops_cuda.h"

namespace zt::ops::cuda {

template <typename Op>
void launch(const Op& op, cudaStream_t stream) {
  if constexpr (requires { op.blocks(); })
    device::cuda::launch_blocks(op, stream);
  else
    device::cuda::launch_items(op, stream);
}

}  // namespace zt::ops::cuda

/// Register an op that is not a template.
#define ZT_REGISTER_OP(Op) template void zt::ops::cuda::launch(const Op&, cudaStream_t);
/// Register a templated op for every compute type (float, fp16, bf16).
#define ZT_REGISTER_OP_FOR_COMPUTE_TYPES(Op) \
  ZT_REGISTER_OP(Op<float>)                  \
  ZT_REGISTER_OP(Op<zt::fp16>)               \
  ZT_REGISTER_OP(Op<zt::bf16>)
