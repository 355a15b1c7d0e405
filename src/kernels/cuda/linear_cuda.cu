// kernels/cuda/linear_cuda.cu — the linear layer's bias epilogue and bias gradient
// (kernels/threads/linear.h) on the device.
#include "kernels/cuda/launch_impl.cuh"
#include "kernels/threads/linear.h"

ZT_LAUNCH_FOR_COMPUTE_TYPES(zt::kernels::LinearBiasElements)
ZT_LAUNCH_FOR_COMPUTE_TYPES(zt::kernels::LinearBiasGradColumns)
