// kernels/cuda/linear_cuda.cu — the linear layer's bias epilogue and bias gradient
// (kernels/threads/linear.h), and the split Linears' gathers, scatters and block sums
// (kernels/threads/parallel_linear.h), on the device.
#include "kernels/cuda/launch_impl.cuh"
#include "kernels/threads/linear.h"
#include "kernels/threads/parallel_linear.h"

ZT_LAUNCH_FOR_COMPUTE_TYPES(zt::kernels::LinearBiasElements)
ZT_LAUNCH_FOR_COMPUTE_TYPES(zt::kernels::LinearBiasGradColumns)
ZT_LAUNCH_FOR_COMPUTE_TYPES(zt::kernels::BlockColumnsWiden)
ZT_LAUNCH_FOR_COMPUTE_TYPES(zt::kernels::BlockColumnsNarrow)
ZT_LAUNCH_FOR_COMPUTE_TYPES(zt::kernels::BiasGradColumnsF)
template void zt::kernels::cuda::launch(const zt::kernels::BlockSumElements&, cudaStream_t);
