// zero_r/copy_engine.h — copies between the accelerator tier and the host tier, on a thread of
// their own, in the order they are submitted, each one counted.
//
// Two ways to run, one interface:
//   on the host (both tiers are RAM): a copy is a memcpy, but it runs on a thread of its own all
//     the same, so that compute and transfers overlap where they would on a device, and the
//     bytes, calls and time of every transfer are real measurements. The thread and its FIFO are
//     core/job_thread.h's.
//   on a device runtime (device/runtime.h: the emulated device, or CUDA): a copy stream of its own
//     and the host tier in pinned memory. Each copy first waits, through an event, for everything
//     the compute stream had queued when it was submitted (the tensor it reads or overwrites was
//     made or last read there), then runs as copy_async on the copy stream; wait() synchronises
//     the copy stream, after which the compute stream's later work is ordered after the copy.
//     Bytes and calls are counted when a copy is enqueued; copy_seconds stays 0 (the host does
//     not see a DMA run; wait_seconds, the host's wait, is measured).
// It moves bytes; it knows nothing of checkpoints or models.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>

#include "core/job_thread.h"
#include "device/runtime.h"

namespace zt::zero_r {

/// Which way a copy goes.
enum class CopyDirection { to_host, to_device };

/// Counters of the transfers between the tiers.
struct TransferStats {
  uint64_t to_host_bytes = 0;    ///< accelerator -> host
  uint64_t to_host_calls = 0;    ///< copies accelerator -> host
  uint64_t to_device_bytes = 0;  ///< host -> accelerator
  uint64_t to_device_calls = 0;  ///< copies host -> accelerator
  double copy_seconds = 0;       ///< time the copy thread spent copying
  double wait_seconds = 0;       ///< time the compute thread spent waiting for copies
  /// @param b the earlier snapshot. @return the transfers between b and this.
  TransferStats operator-(const TransferStats& b) const;
  /// @param b more transfers. @return both together.
  TransferStats operator+(const TransferStats& b) const;
};

/// A submitted copy: wait() blocks until it has run.
class CopyHandle {
 public:
  CopyHandle() = default;
  /// Block until the copy has finished (returns at once for an empty handle).
  void wait();
  /// @return whether this handle refers to a copy.
  bool valid() const { return engine_ != nullptr; }

 private:
  friend class CopyEngine;
  Work work_;  // on the host: the copy thread's job
  class CopyEngine* engine_ = nullptr;
};

/// One copy thread, or one copy stream of a device, and the counters.
class CopyEngine {
 public:
  /// Copies on a host thread (both tiers host memory).
  CopyEngine() = default;
  /// Copies on a new stream of a device runtime, each after the compute stream's queued work.
  /// @param runtime the device (must outlive this engine). @param compute the compute stream.
  CopyEngine(device::Runtime& runtime, device::Stream compute);
  /// Finishes every queued copy, then stops the thread (jobs_, the last member, goes first); on
  /// a device, waits for the copy stream (the memory its copies touch is freed after this).
  ~CopyEngine();
  CopyEngine(const CopyEngine&) = delete;
  CopyEngine& operator=(const CopyEngine&) = delete;

  /// Queue a copy of `bytes` bytes from src to dst (they must stay valid until it has run).
  /// @param dst destination. @param src source. @param bytes how many.
  /// @param direction which tier each side is in (for the counters). @return its handle.
  CopyHandle submit(void* dst, const void* src, std::size_t bytes, CopyDirection direction);
  /// Counters so far (on the host, copies still queued are not in them; on a device, every copy
  /// enqueued is). @return a copy of them.
  TransferStats stats() const;

 private:
  friend class CopyHandle;
  void add_wait(double seconds);
  void count(std::size_t bytes, CopyDirection direction, double seconds);
  device::Runtime* runtime_ = nullptr;  // on a device: the runtime, its compute and copy streams
  device::Stream compute_, copy_;
  mutable std::mutex mutex_;  // guards stats_ (the thread counts copies, the caller its waits)
  TransferStats stats_;
  JobThread jobs_;  // last: destroyed first, so every queued copy runs while the rest still exists
};

}  // namespace zt::zero_r
