// device/cuda_probe.cc — the CUDA runtime asked for its device count, or a build without it.
#include "device/cuda_probe.h"

#include "core/check.h"

#if defined(ZT_WITH_CUDA_RUNTIME)
#include <cuda_runtime_api.h>
#endif

namespace zt::device {

CudaProbe probe_cuda() {
  CudaProbe p;
#if defined(ZT_WITH_CUDA_RUNTIME)
  p.compiled = true;
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    p.error = cudaGetErrorString(e);
    (void)cudaGetLastError();  // the runtime keeps the error sticky otherwise
    return p;
  }
  p.devices = n;
  if (n == 0) p.error = "the runtime reports 0 devices";
#endif
  return p;
}

void require_device(Device device) {
  if (device == Device::cpu || device == Device::emulated) return;
  const CudaProbe p = probe_cuda();
  ZT_CHECK(p.compiled,
           "--device cuda: this build has no CUDA support (nvcc was not found when it was configured); install "
           "the CUDA toolkit and NCCL, rebuild, or use --device cpu");
  ZT_CHECK(p.devices > 0, "--device cuda: no CUDA device is visible to this process (the CUDA runtime says: ", p.error,
           "); use --device cpu");
}

}  // namespace zt::device
