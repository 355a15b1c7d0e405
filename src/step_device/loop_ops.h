// step_device/loop_ops.h — the few things a training loop itself does to its tensors, outside the
// model (model/model_ops.h) and the optimizer step (step_ops.h): fill them at start-up, zero the
// optimizer state, widen the model's 16-bit gradient to FP32 (and narrow a sum to a 16-bit wire),
// add two partial sums of the micro-batch accumulator, count zero gradients and unchanged
// parameters for chapter 2's diagnostics, and read values back for the dumps. On a runtime
// (device/runtime.h): a device's, or the host's (device/host_runtime.h), where the same item
// kernels (loop_threads.h) run at once over the rank's CPU pool. Each is element-wise or an integer
// count, so the bits cannot depend on where it runs.
//
// Crossings to the host wait: upload() copies the caller's bytes into pinned staging, enqueues
// the copy and synchronises the stream before it returns (the staging is then free again); so
// do download() and the two counts (their per-group integers come back through pinned memory).
// They are the loop's start-up, its dumps and chapter 2's diagnostics, never the step's hot path.
// Everything else is enqueued and returns at once. Every launch names the device bytes it reads
// and writes, for the emulated device's race checker.
// Not here: the model's ops (model/model_ops.h), the optimizer step's (step_ops.h), the loop's
// allocation (its arena over the runtime's slab).
#pragma once

#include <cstddef>
#include <cstdint>

#include <vector>
#include "device/runtime.h"
#include "fp/bf16.h"
#include "fp/fp16.h"

#include "kernels/cast.h"

namespace zt::step {

/// The loop's element work as kernels on one stream of a device runtime (see the file comment).
template <typename T>
class LoopOps final {
 public:
  /// @param runtime the device (outlives this object). @param stream where the work runs.
  LoopOps(device::Runtime& runtime, device::Stream stream);
  /// Frees the staging (the runtime waits for queued work first).
  ~LoopOps();
  LoopOps(const LoopOps&) = delete;
  LoopOps& operator=(const LoopOps&) = delete;

  /// @return whether the loop's memory is host memory (then host code may touch it directly, and
  /// a store may hand it to a visitor without staging a copy): the host runtime's.
  bool host_memory() const { return rt_.host_memory(); }
  /// Through pinned staging; synchronises the stream. @param dst device. @param host host.
  /// @param bytes how many.
  void upload(void* dst, const void* host, std::size_t bytes);
  /// Through pinned staging; synchronises the stream. @param host host. @param src device.
  /// @param bytes how many.
  void download(void* host, const void* src, std::size_t bytes);
  /// A device-to-device copy on the stream. @param dst device. @param src device. @param bytes how many.
  void copy(void* dst, const void* src, std::size_t bytes);
  /// One thread per byte. @param dst device bytes. @param bytes how many.
  void zero(void* dst, std::size_t bytes);
  /// One thread per element. @param dst device FP32. @param src device T. @param n elements.
  void widen(float* dst, const T* src, std::size_t n);
  /// One thread per element. @param dst device T. @param src device FP32. @param n elements.
  void narrow(T* dst, const float* src, std::size_t n);
  /// One thread per element. @param left device, updated. @param right device. @param n elements.
  void add(float* left, const float* right, std::size_t n);
  /// Per-group counts read back; synchronises the stream. @param g device. @param n elements.
  /// @return the exact zeros.
  int64_t count_zeros(const T* g, std::size_t n);
  /// Per-group counts read back; synchronises the stream (16-bit T only; zt::Error for FP32).
  /// @param a device. @param b device. @param n elements. @return equal bit patterns.
  int64_t count_same_bits(const T* a, const T* b, std::size_t n);

 private:
  uint32_t* count_room(std::size_t groups);
  int64_t read_counts(const uint32_t* counts, std::size_t groups);

  device::Runtime& rt_;
  device::Stream stream_;
  device::Room staging_{.pinned = true};  // uploads, downloads and counts pass through it
  device::Room counts_;                   // one uint32 per group of a count
};

extern template class LoopOps<float>;
extern template class LoopOps<fp16>;
extern template class LoopOps<bf16>;

/// Show `count` values of the loop's memory to a host-side visitor (between steps: initialisation,
/// dumps, checkpoints): the memory itself where it is host memory, else a host copy, read back
/// unless `fresh` (the visitor fills it) and written back when the visitor returns true.
/// @param ops the loop's ops. @param data the values (the loop's memory). @param count how many.
/// @param fresh the visitor writes every value and reads none. @param fn bool(V*), true if it changed them.
/// @return what fn returned.
template <typename T, typename V, typename Fn>
bool visit_on_host(LoopOps<T>& ops, V* data, std::size_t count, bool fresh, Fn&& fn) {
  if (ops.host_memory()) return fn(data);
  std::vector<V> host(count);
  if (!fresh) ops.download(host.data(), data, count * sizeof(V));
  const bool changed = fn(host.data());
  if (changed) ops.upload(data, host.data(), count * sizeof(V));
  return changed;
}

}  // namespace zt::step
