// kernels/cuda/layernorm_cuda.cu — LayerNorm's item ops (kernels/threads/layernorm.h) on the device.
#include "kernels/cuda/launch_impl.cuh"
#include "kernels/threads/layernorm.h"

ZT_LAUNCH_FOR_COMPUTE_TYPES(zt::kernels::LayerNormForwardRows)
ZT_LAUNCH_FOR_COMPUTE_TYPES(zt::kernels::LayerNormBackwardRows)
ZT_LAUNCH_FOR_COMPUTE_TYPES(zt::kernels::LayerNormParamGradColumns)
