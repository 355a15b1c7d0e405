// kernels/cuda/attention_cuda.cu — the attention softmax's item ops (kernels/threads/attention.h)
// on the device.
#include "kernels/cuda/launch_impl.cuh"
#include "kernels/threads/attention.h"

ZT_LAUNCH_FOR_COMPUTE_TYPES(zt::kernels::AttentionSoftmaxRows)
ZT_LAUNCH_FOR_COMPUTE_TYPES(zt::kernels::AttentionDscoresRows)
