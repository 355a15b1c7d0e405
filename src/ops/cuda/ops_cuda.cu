// ops/cuda/ops_cuda.cu — the registration of ops/'s block ops on a CUDA device: the launcher of
// ops/cuda/ops_cuda.h instantiated for each op and compute type. A new block op is its header and
// one line here.
#include "device/cuda/block_launch.cuh"
#include "fp/bf16.h"
#include "fp/fp16.h"
#include "ops/attention_blocks.h"
#include "ops/cross_entropy_blocks.h"
#include "ops/cuda/ops_cuda.h"
#include "ops/layernorm_blocks.h"

namespace zt::ops::cuda {

template <typename Op>
void launch(const Op& op, cudaStream_t stream) {
  device::cuda::launch_blocks(op, stream);
}

}  // namespace zt::ops::cuda

#define ZT_REGISTER_BLOCK_OP(Op)                                                   \
  template void zt::ops::cuda::launch(const zt::ops::Op<float>&, cudaStream_t);    \
  template void zt::ops::cuda::launch(const zt::ops::Op<zt::fp16>&, cudaStream_t); \
  template void zt::ops::cuda::launch(const zt::ops::Op<zt::bf16>&, cudaStream_t);

ZT_REGISTER_BLOCK_OP(LayerNormForwardBlocks)
ZT_REGISTER_BLOCK_OP(LayerNormBackwardBlocks)
ZT_REGISTER_BLOCK_OP(LayerNormParamGradTiles)
ZT_REGISTER_BLOCK_OP(CrossEntropyForwardBlocks)
ZT_REGISTER_BLOCK_OP(AttentionForwardBlocks)
ZT_REGISTER_BLOCK_OP(AttentionBackwardRowBlocks)
ZT_REGISTER_BLOCK_OP(AttentionBackwardKeyBlocks)
