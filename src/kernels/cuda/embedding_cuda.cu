// kernels/cuda/embedding_cuda.cu — the embedding's item ops (kernels/threads/embedding.h) on the
// device.
#include "kernels/cuda/launch_impl.cuh"
#include "kernels/threads/embedding.h"

ZT_LAUNCH_FOR_COMPUTE_TYPES(zt::kernels::EmbeddingForwardElements)
ZT_LAUNCH_FOR_COMPUTE_TYPES(zt::kernels::EmbeddingDwpeElements)
ZT_LAUNCH_FOR_COMPUTE_TYPES(zt::kernels::EmbeddingDwteElements)
template void zt::kernels::cuda::launch(const zt::kernels::EmbeddingGroupPositions&, cudaStream_t);
