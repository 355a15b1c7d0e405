// step_device/device_loop_ops.h — the loop's own tensor work (step/loop_ops.h) on a device
// runtime (device/runtime.h): uploads and downloads through pinned staging, and the element work
// as item kernels (loop_threads.h), all on the loop's one compute stream.
//
// Crossings to the host wait: upload() copies the caller's bytes into pinned staging, enqueues
// the copy and synchronises the stream before it returns (the staging is then free again); so
// do download() and the two counts (their per-group integers come back through pinned memory).
// They are the loop's start-up, its dumps and chapter 2's diagnostics, never the step's hot path.
// Everything else is enqueued and returns at once. Every launch names the device bytes it reads
// and writes, for the emulated device's race checker.
// Not here: the model's ops (model/device_ops.h), the optimizer step's (device_step_ops.h), the
// loop's allocation (its arena over the runtime's slab).
#pragma once

#include <cstddef>
#include <cstdint>

#include "device/runtime.h"
#include "fp/bf16.h"
#include "fp/fp16.h"
#include "step/loop_ops.h"

namespace zt::step {

/// The loop's element work as kernels on one stream of a device runtime (see the file comment).
template <typename T>
class DeviceLoopOps final : public LoopOps<T> {
 public:
  /// @param runtime the device (outlives this object). @param stream where the work runs.
  DeviceLoopOps(device::Runtime& runtime, device::Stream stream);
  /// Frees the staging (the runtime waits for queued work first).
  ~DeviceLoopOps() override;
  DeviceLoopOps(const DeviceLoopOps&) = delete;
  DeviceLoopOps& operator=(const DeviceLoopOps&) = delete;

  /// @return false: device memory.
  bool host_memory() const override { return false; }
  /// Through pinned staging; synchronises the stream. @param dst device. @param host host.
  /// @param bytes how many.
  void upload(void* dst, const void* host, std::size_t bytes) override;
  /// Through pinned staging; synchronises the stream. @param host host. @param src device.
  /// @param bytes how many.
  void download(void* host, const void* src, std::size_t bytes) override;
  /// A device-to-device copy on the stream. @param dst device. @param src device. @param bytes how many.
  void copy(void* dst, const void* src, std::size_t bytes) override;
  /// One thread per byte. @param dst device bytes. @param bytes how many.
  void zero(void* dst, std::size_t bytes) override;
  /// One thread per element. @param dst device FP32. @param src device T. @param n elements.
  void widen(float* dst, const T* src, std::size_t n) override;
  /// One thread per element. @param dst device T. @param src device FP32. @param n elements.
  void narrow(T* dst, const float* src, std::size_t n) override;
  /// One thread per element. @param left device, updated. @param right device. @param n elements.
  void add(float* left, const float* right, std::size_t n) override;
  /// Per-group counts read back; synchronises the stream. @param g device. @param n elements.
  /// @return the exact zeros.
  int64_t count_zeros(const T* g, std::size_t n) override;
  /// Per-group counts read back; synchronises the stream (16-bit T only; zt::Error for FP32).
  /// @param a device. @param b device. @param n elements. @return equal bit patterns.
  int64_t count_same_bits(const T* a, const T* b, std::size_t n) override;

 private:
  uint32_t* count_room(std::size_t groups);
  int64_t read_counts(const uint32_t* counts, std::size_t groups);

  device::Runtime& rt_;
  device::Stream stream_;
  device::Room staging_{.pinned = true};  // uploads, downloads and counts pass through it
  device::Room counts_;                   // one uint32 per group of a count
};

extern template class DeviceLoopOps<float>;
extern template class DeviceLoopOps<fp16>;
extern template class DeviceLoopOps<bf16>;

}  // namespace zt::step
