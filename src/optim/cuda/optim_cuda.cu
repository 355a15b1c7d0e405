// optim/cuda/optim_cuda.cu — the optimizer's item ops (optim/optim_threads.h) on the device.
#include "optim/cuda/optim_cuda.h"

#include "device/cuda/item_launch.cuh"
#include "optim/optim_threads.h"

namespace zt::optim::cuda {

template <typename Op>
void launch(const Op& op, cudaStream_t stream) {
  device::cuda::launch_items(op, stream);
}

template void launch(const AdamElements&, cudaStream_t);
template void launch(const SgdElements&, cudaStream_t);
template void launch(const UnscaleCheckElements&, cudaStream_t);

}  // namespace zt::optim::cuda
