// device/host_runtime.cc — the host as a device (see host_runtime.h).
#include "device/host_runtime.h"

#include <cstdlib>
#include <cstring>

#include "core/check.h"

namespace zt::device {

HostRuntime::~HostRuntime() {
  for (auto& [ptr, bytes] : live_) std::free(ptr);
}

std::byte* HostRuntime::allocate(std::size_t bytes, const std::string& name) {
  ZT_CHECK(bytes > 0, "host runtime: allocate 0 bytes for '", name, "'");
  const std::size_t rounded = (bytes + 255) / 256 * 256;
  auto* p = static_cast<std::byte*>(std::aligned_alloc(256, rounded));
  ZT_CHECK(p != nullptr, "host runtime: no memory for '", name, "' (", bytes, " bytes)");
  std::lock_guard<std::mutex> lock(mutex_);
  live_.emplace(p, bytes);
  return p;
}

void HostRuntime::release(std::byte* ptr) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ZT_CHECK(live_.erase(ptr) == 1, "host runtime: release of an address allocate() did not return");
  }
  std::free(ptr);
}

Stream HostRuntime::create_stream(const std::string&) { return Stream{streams_++}; }

void HostRuntime::copy_async(void* dst, const void* src, std::size_t bytes, CopyKind kind, Stream) {
  copies_.add(kind, bytes);
  if (bytes > 0) std::memmove(dst, src, bytes);
}

void HostRuntime::launch(Stream, const KernelLaunch& kernel) {
  ++launches_;
  if (kernel.pool_body)
    kernel.pool_body();
  else
    kernel.host_body();
}

}  // namespace zt::device
