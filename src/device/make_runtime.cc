// device/make_runtime.cc — the emulated device always; the CUDA device where the probe finds one.
#include "device/make_runtime.h"

#include "core/check.h"
#include "device/cuda_probe.h"
#include "device/emulated_runtime.h"

#if defined(ZT_WITH_CUDA_RUNTIME)
#include "device/cuda_runtime.h"
#endif

namespace zt::device {

std::unique_ptr<Runtime> make_runtime(RuntimeKind kind, int gpu) {
  if (kind == RuntimeKind::emulated) return std::make_unique<EmulatedRuntime>();
  const CudaProbe p = probe_cuda();
  ZT_CHECK(p.compiled,
           "device runtime cuda: this build has no CUDA support (nvcc was not found when it was configured); install "
           "the CUDA toolkit and NCCL, rebuild, or use the emulated device");
  ZT_CHECK(p.devices > 0,
           "device runtime cuda: no CUDA device is visible to this process (the CUDA runtime says: ", p.error,
           "); use the emulated device");
  ZT_CHECK(gpu >= 0 && gpu < p.devices, "device runtime cuda: GPU ", gpu, " asked for, ", p.devices,
           " visible to this process");
#if defined(ZT_WITH_CUDA_RUNTIME)
  return std::make_unique<CudaRuntime>(gpu);
#else
  ZT_FAIL("device runtime cuda: the probe links the CUDA runtime but this library was built without it");
#endif
}

}  // namespace zt::device
