// step_device/cuda/step_cuda.cu — the step's item ops (step_device/step_threads.h) on the device.
#include "device/cuda/item_launch.cuh"
#include "fp/bf16.h"
#include "fp/fp16.h"
#include "kernels/threads/elementwise.h"
#include "step_device/cuda/step_cuda.h"
#include "step_device/loop_threads.h"
#include "step_device/step_threads.h"

namespace zt::step::cuda {

template <typename Op>
void launch(const Op& op, cudaStream_t stream) {
  device::cuda::launch_items(op, stream);
}

template void launch(const NonfiniteFlagItems<float>&, cudaStream_t);
template void launch(const NonfiniteFlagItems<fp16>&, cudaStream_t);
template void launch(const NonfiniteFlagItems<bf16>&, cudaStream_t);
template void launch(const NormBlockItems<float>&, cudaStream_t);
template void launch(const NormBlockItems<fp16>&, cudaStream_t);
template void launch(const NormBlockItems<bf16>&, cudaStream_t);
template void launch(const UpdateItems<float>&, cudaStream_t);
template void launch(const UpdateItems<fp16>&, cudaStream_t);
template void launch(const UpdateItems<bf16>&, cudaStream_t);
template void launch(const KeptCountItems&, cudaStream_t);
template void launch(const ZeroItems&, cudaStream_t);
template void launch(const kernels::CastElements<float, float>&, cudaStream_t);  // the loop's narrow and widen
template void launch(const kernels::CastElements<fp16, float>&, cudaStream_t);
template void launch(const kernels::CastElements<bf16, float>&, cudaStream_t);
template void launch(const kernels::CastElements<float, fp16>&, cudaStream_t);
template void launch(const kernels::CastElements<float, bf16>&, cudaStream_t);
template void launch(const AddItems&, cudaStream_t);
template void launch(const ZeroCountItems<float>&, cudaStream_t);
template void launch(const ZeroCountItems<fp16>&, cudaStream_t);
template void launch(const ZeroCountItems<bf16>&, cudaStream_t);
template void launch(const SameBitsItems<fp16>&, cudaStream_t);
template void launch(const SameBitsItems<bf16>&, cudaStream_t);

}  // namespace zt::step::cuda
