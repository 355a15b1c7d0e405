// device/host_runtime.h — the host as a device: the Runtime whose memory is the host's and whose
// kernels run at once on the calling thread's CPU pool (core/cpu_pool.h), split over its threads.
//
// Why: an op written once (src/ops: its arithmetic and its canonical order) should not need a
// second, host-only copy to run on the CPU. On this runtime the ops a loop would enqueue on a
// device run where they are enqueued: an item op's items or a block op's blocks are split over
// the rank's threads (they are independent by contract, so the split changes no bit), a GEMM is the
// CPU's fast canonical or OpenBLAS GEMM (KernelLaunch::pool_body). Copies are memcpy, done on
// return; streams and events have nothing to order, so they are counters.
//
// Host memory is not device memory: is_device() is false for everything, so a group never stages
// these buffers (collective/staged_collective.h), and host_memory() is true, so a loop may show its
// tensors to a host visitor without a copy. Not here: choosing it (step_device/placement.h).
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>

#include "device/runtime.h"

namespace zt::device {

/// The host as a device (see the file comment). Its methods may be called from several threads.
class HostRuntime final : public Runtime {
 public:
  HostRuntime() = default;
  /// Frees what is still allocated.
  ~HostRuntime() override;
  HostRuntime(const HostRuntime&) = delete;
  HostRuntime& operator=(const HostRuntime&) = delete;

  /// @return "host".
  std::string name() const override { return "host"; }
  /// @param bytes its size (> 0). @param name what it holds. @return host memory, 256-byte aligned.
  std::byte* allocate(std::size_t bytes, const std::string& name) override;
  /// @param ptr what allocate() returned.
  void release(std::byte* ptr) override;
  /// @param bytes its size (> 0). @param name what it holds. @return host memory, 256-byte aligned.
  std::byte* allocate_pinned(std::size_t bytes, const std::string& name) override { return allocate(bytes, name); }
  /// @param ptr what allocate_pinned() returned.
  void release_pinned(std::byte* ptr) override { release(ptr); }
  /// @param name unused. @return a new stream's handle (work on it runs at once).
  Stream create_stream(const std::string& name) override;
  /// memcpy, done on return. @param dst where to. @param src where from. @param bytes how many.
  /// @param kind counted. @param stream unused.
  void copy_async(void* dst, const void* src, std::size_t bytes, CopyKind kind, Stream stream) override;
  /// @param stream unused. @return an event, reached already.
  Event record(Stream stream) override { return Event{stream.id}; }
  /// Nothing to wait for: the work before the event has run.
  void wait(Stream, Event) override {}
  /// Nothing to wait for: the stream's work has run.
  void synchronize(Stream) override {}
  /// Nothing to wait for.
  void synchronize() override {}
  /// Run the kernel now: its pool_body (split over the calling thread's CPU pool), else its
  /// host_body. @param stream unused. @param kernel the launch.
  void launch(Stream stream, const KernelLaunch& kernel) override;
  /// @return the copies made so far, by kind.
  CopyStats stats() const override { return copies_.stats(); }
  /// @return the kernels run so far.
  int64_t launches() const override { return launches_.load(); }
  /// @param ptr any address. @return false: host memory is never device memory.
  bool is_device(const void* ptr) const override {
    (void)ptr;
    return false;
  }
  /// @return true: the memory is the host's.
  bool host_memory() const override { return true; }

 private:
  mutable std::mutex mutex_;
  std::map<std::byte*, std::size_t> live_;  // allocations, for release and the destructor
  CopyCounter copies_;
  std::atomic<int64_t> launches_{0};
  std::atomic<int> streams_{1};
};

}  // namespace zt::device
