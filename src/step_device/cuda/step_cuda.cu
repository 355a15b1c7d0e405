// step_device/cuda/step_cuda.cu — the registration of the optimizer step's item ops
// (step_device/step_threads.h, step_device/loop_threads.h) on a CUDA device: ops/cuda/ops_cuda.h's
// launcher instantiated for each op and compute type (the loop's casts are registered with the
// model's ops, ops/cuda/ops_cuda.cu).
#include "ops/cuda/launch.cuh"
#include "step_device/loop_threads.h"
#include "step_device/step_threads.h"

ZT_REGISTER_OP_FOR_COMPUTE_TYPES(zt::step::NonfiniteFlagItems)
ZT_REGISTER_OP_FOR_COMPUTE_TYPES(zt::step::NormBlockItems)
ZT_REGISTER_OP_FOR_COMPUTE_TYPES(zt::step::UpdateItems)
ZT_REGISTER_OP(zt::step::KeptCountItems)
ZT_REGISTER_OP(zt::step::ZeroItems)
ZT_REGISTER_OP(zt::step::AddItems)
ZT_REGISTER_OP_FOR_COMPUTE_TYPES(zt::step::ZeroCountItems)
ZT_REGISTER_OP(zt::step::SameBitsItems<zt::fp16>)
ZT_REGISTER_OP(zt::step::SameBitsItems<zt::bf16>)
