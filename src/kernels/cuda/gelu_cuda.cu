// kernels/cuda/gelu_cuda.cu — GELU's item ops (kernels/threads/gelu.h) on the device.
#include "kernels/cuda/launch_impl.cuh"
#include "kernels/threads/gelu.h"

ZT_LAUNCH_FOR_COMPUTE_TYPES(zt::kernels::GeluForwardElements)
ZT_LAUNCH_FOR_COMPUTE_TYPES(zt::kernels::GeluBackwardElements)
