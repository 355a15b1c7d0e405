// ops/cuda/ops_cuda.cu — the registration of the model's ops on a CUDA device: the launcher of
// ops/cuda/ops_cuda.h instantiated for each op (and compute type). A new op is its header and one
// line here; an op launched but registered nowhere does not link.
#include "ops/argmax_items.h"
#include "ops/attention_blocks.h"
#include "ops/cross_entropy_blocks.h"
#include "ops/cross_entropy_items.h"
#include "ops/cuda/launch.cuh"
#include "ops/elementwise_items.h"
#include "ops/embedding_items.h"
#include "ops/gelu_items.h"
#include "ops/layernorm_blocks.h"
#include "ops/linear_items.h"
#include "ops/parallel_linear_items.h"

// block ops: a block per row, per tile of columns, per (batch, head, position)
ZT_REGISTER_OP_FOR_COMPUTE_TYPES(zt::ops::LayerNormForwardBlocks)
ZT_REGISTER_OP_FOR_COMPUTE_TYPES(zt::ops::LayerNormBackwardBlocks)
ZT_REGISTER_OP_FOR_COMPUTE_TYPES(zt::ops::LayerNormParamGradTiles)
ZT_REGISTER_OP_FOR_COMPUTE_TYPES(zt::ops::CrossEntropyForwardBlocks)
ZT_REGISTER_OP_FOR_COMPUTE_TYPES(zt::ops::AttentionForwardBlocks)
ZT_REGISTER_OP_FOR_COMPUTE_TYPES(zt::ops::AttentionBackwardRowBlocks)
ZT_REGISTER_OP_FOR_COMPUTE_TYPES(zt::ops::AttentionBackwardKeyBlocks)

// item ops: one thread per element, row or column
ZT_REGISTER_OP_FOR_COMPUTE_TYPES(zt::ops::CrossEntropyBackwardElements)
ZT_REGISTER_OP_FOR_COMPUTE_TYPES(zt::ops::ArgmaxRows)
ZT_REGISTER_OP_FOR_COMPUTE_TYPES(zt::ops::ResidualForwardElements)
ZT_REGISTER_OP_FOR_COMPUTE_TYPES(zt::ops::EmbeddingForwardElements)
ZT_REGISTER_OP_FOR_COMPUTE_TYPES(zt::ops::EmbeddingDwpeElements)
ZT_REGISTER_OP_FOR_COMPUTE_TYPES(zt::ops::EmbeddingDwteElements)
ZT_REGISTER_OP(zt::ops::EmbeddingGroupPositions)
ZT_REGISTER_OP_FOR_COMPUTE_TYPES(zt::ops::GeluForwardElements)
ZT_REGISTER_OP_FOR_COMPUTE_TYPES(zt::ops::GeluBackwardElements)
ZT_REGISTER_OP_FOR_COMPUTE_TYPES(zt::ops::LinearBiasElements)
ZT_REGISTER_OP_FOR_COMPUTE_TYPES(zt::ops::LinearBiasGradColumns)
ZT_REGISTER_OP_FOR_COMPUTE_TYPES(zt::ops::BlockColumnsWiden)
ZT_REGISTER_OP_FOR_COMPUTE_TYPES(zt::ops::BlockColumnsNarrow)
ZT_REGISTER_OP_FOR_COMPUTE_TYPES(zt::ops::BiasGradColumnsF)
ZT_REGISTER_OP(zt::ops::BlockSumElements)
// casts: float to and from each 16-bit type, and float to float (the optimizer step's loop widens
// and narrows whatever the compute type; its other ops are registered in step_device/cuda/)
template void zt::ops::cuda::launch(const zt::ops::CastElements<float, float>&, cudaStream_t);
template void zt::ops::cuda::launch(const zt::ops::CastElements<zt::fp16, float>&, cudaStream_t);
template void zt::ops::cuda::launch(const zt::ops::CastElements<zt::bf16, float>&, cudaStream_t);
template void zt::ops::cuda::launch(const zt::ops::CastElements<float, zt::fp16>&, cudaStream_t);
template void zt::ops::cuda::launch(const zt::ops::CastElements<float, zt::bf16>&, cudaStream_t);
