// kernels/cuda/elementwise_cuda.cu — the residual add (also the backward join) and the casts
// (kernels/threads/elementwise.h) on the device.
#include "kernels/cuda/launch_impl.cuh"
#include "kernels/threads/elementwise.h"

ZT_LAUNCH_FOR_COMPUTE_TYPES(zt::kernels::ResidualForwardElements)
template void zt::kernels::cuda::launch(const zt::kernels::CastElements<zt::fp16, float>&, cudaStream_t);
template void zt::kernels::cuda::launch(const zt::kernels::CastElements<zt::bf16, float>&, cudaStream_t);
template void zt::kernels::cuda::launch(const zt::kernels::CastElements<float, zt::fp16>&, cudaStream_t);
template void zt::kernels::cuda::launch(const zt::kernels::CastElements<float, zt::bf16>&, cudaStream_t);
