// kernels/cuda/cross_entropy_cuda.cu — cross-entropy's backward item op (kernels/threads/cross_entropy.h)
// and the predictions' argmax (kernels/threads/argmax.h) on the device.
#include "kernels/cuda/launch_impl.cuh"
#include "kernels/threads/argmax.h"
#include "kernels/threads/cross_entropy.h"

ZT_LAUNCH_FOR_COMPUTE_TYPES(zt::kernels::CrossEntropyBackwardElements)
ZT_LAUNCH_FOR_COMPUTE_TYPES(zt::kernels::ArgmaxRows)
