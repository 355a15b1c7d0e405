// zero_r/copy_engine.h — copies between the accelerator tier and the host tier, on a thread of
// their own, in the order they are submitted, each one counted.
//
// On a GPU this is a copy stream with pinned host buffers (cudaMemcpyAsync, events); on the CPU
// path both tiers are RAM and a copy is a memcpy, but it runs on a separate thread all the same, so
// that compute and transfers overlap exactly where they would on a device, and so that the bytes,
// calls and time of every transfer are real measurements. The thread and its FIFO are
// core/job_thread.h's; this file adds what a job is (a memcpy between the tiers) and what is
// counted. It moves bytes; it knows nothing of checkpoints or models.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>

#include "core/job_thread.h"

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
  Work work_;
  class CopyEngine* engine_ = nullptr;
};

/// One copy thread and its counters.
class CopyEngine {
 public:
  CopyEngine() = default;
  /// Finishes every queued copy, then stops the thread (jobs_, the last member, goes first).
  ~CopyEngine() = default;
  CopyEngine(const CopyEngine&) = delete;
  CopyEngine& operator=(const CopyEngine&) = delete;

  /// Queue a copy of `bytes` bytes from src to dst (they must stay valid until it has run).
  /// @param dst destination. @param src source. @param bytes how many.
  /// @param direction which tier each side is in (for the counters). @return its handle.
  CopyHandle submit(void* dst, const void* src, std::size_t bytes, CopyDirection direction);
  /// Counters so far (copies still queued are not in them). @return a copy of them.
  TransferStats stats() const;

 private:
  friend class CopyHandle;
  void add_wait(double seconds);
  mutable std::mutex mutex_;  // guards stats_ (the thread counts copies, the caller its waits)
  TransferStats stats_;
  JobThread jobs_;  // last: destroyed first, so every queued copy runs while the rest still exists
};

}  // namespace zt::zero_r
