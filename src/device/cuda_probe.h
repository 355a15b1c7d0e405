// device/cuda_probe.h — what the `--device` choice can use on this machine: whether this build
// has the CUDA runtime compiled in, and how many devices it sees.
//
// Why a probe of its own: `--device cuda` must fail with one clear line, on every rank, when the
// build has no CUDA (configured on a machine without nvcc) or the machine has no device — before
// any memory is planned or any rank waits on another. This file only asks; it allocates nothing
// and selects no device. Not here: device memory (memory/), kernels (ops/cuda/), NCCL
// (collective/nccl/).
#pragma once

#include <array>
#include <string>

#include "core/words.h"

namespace zt::device {

/// Where the engine runs (`--device`): the host's CPU kernels, a CUDA device, or the emulated
/// device (device/emulated_runtime.h), which runs the device path on the host and is strict where
/// a GPU is strict.
enum class Device { cpu, cuda, emulated };
/// @return the words of --device, in the order --help lists them.
constexpr auto words(Device) {
  return std::array{Word{"cpu", Device::cpu}, Word{"cuda", Device::cuda}, Word{"emulated", Device::emulated}};
}

/// The answer of probe_cuda().
struct CudaProbe {
  bool compiled = false;  ///< this build links the CUDA runtime (nvcc was found at configure time)
  int devices = 0;        ///< devices visible to this process (CUDA_VISIBLE_DEVICES applies)
  std::string error;      ///< why none is visible, in the runtime's words (empty when devices > 0)
};

/// Ask the CUDA runtime (if compiled in) how many devices this process can use.
/// @return the probe's answer; never throws.
CudaProbe probe_cuda();

/// Fail with one line (zt::Error) unless `device` can run here: cpu always can; cuda needs a
/// build with CUDA and at least one visible device (train/collective_choice.h gives each rank its
/// GPU); emulated always
/// can (it needs no hardware).
/// @param device the value of --device.
void require_device(Device device);

}  // namespace zt::device
