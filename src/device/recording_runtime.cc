// device/recording_runtime.cc — the recording device (see recording_runtime.h).
#include "device/recording_runtime.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "core/check.h"

namespace zt::device {

RecordingRuntime::~RecordingRuntime() {
  for (const auto& [base, length] : reserved_) munmap(const_cast<std::byte*>(base), length);
}

std::byte* RecordingRuntime::allocate(std::size_t bytes, const std::string& name) {
  ZT_CHECK(bytes > 0, "recording device: allocate of 0 bytes for ", name);
  void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ZT_CHECK(p != MAP_FAILED, "recording device: reserving ", bytes, " bytes of address space for ", name, ": ",
           std::strerror(errno));
  auto* b = static_cast<std::byte*>(p);
  reserved_.emplace(b, bytes);
  return b;
}

void RecordingRuntime::release(std::byte* ptr) {
  const auto it = reserved_.find(ptr);
  ZT_CHECK(it != reserved_.end(), "recording device: release of an address allocate() did not return");
  munmap(ptr, it->second);
  reserved_.erase(it);
}

std::byte* RecordingRuntime::allocate_pinned(std::size_t bytes, const std::string& name) {
  ZT_CHECK(bytes > 0, "recording device: allocate_pinned of 0 bytes for ", name);
  auto buffer = std::make_unique<std::byte[]>(bytes + 256);
  const auto at = (reinterpret_cast<std::uintptr_t>(buffer.get()) + 255) & ~std::uintptr_t{255};
  auto* p = reinterpret_cast<std::byte*>(at);
  pinned_.emplace(p, std::move(buffer));
  return p;
}

void RecordingRuntime::release_pinned(std::byte* ptr) {
  ZT_CHECK(pinned_.erase(ptr) == 1, "recording device: release_pinned of an address allocate_pinned() did not return");
}

Stream RecordingRuntime::create_stream(const std::string&) { return Stream{streams_++}; }

void RecordingRuntime::copy_async(void*, const void*, std::size_t bytes, CopyKind kind, Stream) {
  const auto k = static_cast<std::size_t>(kind);
  ++stats_.copies[k];
  stats_.bytes[k] += static_cast<int64_t>(bytes);
}

Event RecordingRuntime::record(Stream) { return Event{events_++}; }
void RecordingRuntime::wait(Stream, Event) {}
void RecordingRuntime::synchronize(Stream) {}
void RecordingRuntime::synchronize() {}

void RecordingRuntime::launch(Stream, const KernelLaunch& kernel) {
  double bytes = 0;
  for (const DeviceSpan& s : kernel.reads) bytes += static_cast<double>(s.bytes);
  for (const DeviceSpan& s : kernel.writes) bytes += static_cast<double>(s.bytes);
  records_.push_back({kernel.name, bytes, kernel.flops, kernel.tensor_cores});
}

bool RecordingRuntime::is_device(const void* ptr) const {
  const auto* p = static_cast<const std::byte*>(ptr);
  auto it = reserved_.upper_bound(p);
  if (it == reserved_.begin()) return false;
  --it;
  return p < it->first + it->second;
}

void RecordingRuntime::clear() {
  records_.clear();
  stats_ = CopyStats{};
}

}  // namespace zt::device
