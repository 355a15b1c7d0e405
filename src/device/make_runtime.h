// device/make_runtime.h — the one place a Runtime is chosen: the CUDA device or the emulated one.
//
// Why a factory of its own: the engine holds a Runtime and never names an implementation, and
// asking for CUDA where this build or this machine cannot give it must fail with one clear line
// (the same probe as `--device`, device/cuda_probe.h), never fall back to another runtime.
// Not here: the `--device` setting itself (device/cuda_probe.h's Device, which the engine maps
// to a RuntimeKind).
#pragma once

#include <array>
#include <memory>

#include "core/words.h"
#include "device/runtime.h"

namespace zt::device {

/// Which Runtime to make.
enum class RuntimeKind { cuda, emulated };
/// @return the words that name the runtimes, in the order a list shows them.
constexpr auto words(RuntimeKind) {
  return std::array{Word{"cuda", RuntimeKind::cuda}, Word{"emulated", RuntimeKind::emulated}};
}

/// Make a runtime. @param kind which one. @param gpu for cuda, the device index (a rank's own GPU;
/// 0 where ranks share the first). @return it; zt::Error (one line) for cuda when this build has
/// no CUDA or this process sees no such device.
std::unique_ptr<Runtime> make_runtime(RuntimeKind kind, int gpu = 0);

}  // namespace zt::device
