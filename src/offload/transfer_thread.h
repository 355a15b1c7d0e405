// offload/transfer_thread.h — the one mover of bytes between memory tiers: accelerator and host
// (ZeRO-Offload's gradients and parameters, P_a+cpu's checkpoint slices) or host and a file (the
// file tiers' read-ahead and write-behind), in the order transfers are submitted, each counted.
//
// Three ways to run, one class:
//   host copies (both tiers RAM): a memcpy, but on a thread of its own all the same, so compute and
//     transfers overlap where they would on a device and the busy time is a real measurement;
//   a device's copy stream (device/runtime.h: the emulated device, or CUDA), the host tier in
//     pinned memory: each copy first waits, through an event, for everything the compute stream
//     had queued when it was submitted (the tensor it reads or overwrites was made or last read
//     there), then runs as copy_async; wait() synchronises the copy stream. The host does not see
//     a DMA run, so busy_seconds stays 0 (wait_seconds, the host's wait, is measured);
//   a file's positioned reads and writes (pread/pwrite): the compute thread submits a read of the
//     unit it needs next and goes on updating the one it has (read-ahead), and an updated unit is
//     written back while the next is updated (write-behind). On Linux io_uring would do the same
//     without a thread; a thread needs no package and behaves the same everywhere.
// Jobs run strictly in submission order (core/job_thread.h: one thread, one FIFO), so a read queued
// after a write of the same buffer never overtakes it: that is what lets a bounded ring of buffers
// be reused with no other synchronisation. Bytes and calls are counted when a transfer is submitted,
// so per-step counts are exact whatever the thread's timing. It moves bytes; it knows nothing of
// optimizers, units, rings or checkpoints (offload/file_tier.h, zero_r/partitioned_checkpoints.h).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "core/job_thread.h"
#include "device/runtime.h"

namespace zt::offload {

/// Counters of the transfers of one or more TransferThreads.
struct TransferStats {
  uint64_t to_host_bytes = 0;    ///< accelerator -> host
  uint64_t to_host_calls = 0;    ///< copies accelerator -> host
  uint64_t to_device_bytes = 0;  ///< host -> accelerator
  uint64_t to_device_calls = 0;  ///< copies host -> accelerator
  uint64_t read_bytes = 0;       ///< bytes read from a file
  uint64_t read_calls = 0;       ///< reads submitted
  uint64_t write_bytes = 0;      ///< bytes written to a file
  uint64_t write_calls = 0;      ///< writes submitted
  double busy_seconds = 0;       ///< time the transfer thread spent moving bytes
  double wait_seconds = 0;       ///< time the compute thread spent blocked waiting for them
  /// @param b an earlier snapshot. @return the transfers between b and this.
  TransferStats operator-(const TransferStats& b) const;
  /// @param b more transfers. @return both together.
  TransferStats operator+(const TransferStats& b) const;
};

/// Which way a memory copy goes.
enum class CopyDirection { to_host, to_device };

class TransferThread;

/// A submitted transfer: wait() blocks until it has run, and throws zt::Error if it failed.
class TransferHandle {
 public:
  TransferHandle() = default;
  /// Block until the transfer has run (at once for an empty handle); the handle is empty
  /// afterwards. Throws zt::Error naming the file, the job and the system's reason when it failed.
  void wait();
  /// @return whether this handle refers to a transfer not yet waited for.
  bool valid() const { return owner_ != nullptr; }

 private:
  friend class TransferThread;
  Work work_;  // the thread's job (empty for a copy on a device stream)
  TransferThread* owner_ = nullptr;
};

/// One transfer thread (or a device's copy stream) and its counters.
class TransferThread {
 public:
  /// Memory copies on a host thread (both tiers host memory).
  TransferThread() = default;
  /// Memory copies on a new stream of a device runtime, each after the compute stream's queued work.
  /// @param runtime the device (must outlive this). @param compute the compute stream.
  TransferThread(device::Runtime& runtime, device::Stream compute);
  /// Positioned reads and writes of one open file.
  /// @param fd an open file descriptor (not owned; it must outlive this). @param path its name (for errors).
  TransferThread(int fd, std::string path);
  /// Runs every queued job, then stops the thread (jobs_, the last member, goes first); on a
  /// device, waits for the copy stream (the memory its copies touch is freed after this).
  ~TransferThread();
  TransferThread(const TransferThread&) = delete;
  TransferThread& operator=(const TransferThread&) = delete;

  /// Work a file job does on the thread beside its transfer (a copy to or from a device).
  using Hook = std::function<void()>;

  /// Queue a memory copy (both sides valid until it has run). @param dst destination.
  /// @param src source. @param bytes how many. @param direction which tier each side is in (for
  /// the counters). @return its handle.
  TransferHandle copy(void* dst, const void* src, std::size_t bytes, CopyDirection direction);
  /// Queue a file read into dst (valid until it has run). @param dst destination.
  /// @param bytes how many. @param offset where in the file.
  /// @param after run on the thread once the bytes are in dst (may be empty). @return its handle.
  TransferHandle read(void* dst, std::size_t bytes, off_t offset, Hook after = {});
  /// Queue a file write from src (valid and unchanged until it has run). @param src source.
  /// @param bytes how many. @param offset where in the file.
  /// @param before run on the thread first, to fill src (may be empty). @return its handle.
  TransferHandle write(const void* src, std::size_t bytes, off_t offset, Hook before = {});
  /// Counters so far (every transfer submitted is in them). @return a copy of them.
  TransferStats stats() const;

 private:
  friend class TransferHandle;
  TransferHandle file_job(bool is_read, void* buffer, std::size_t bytes, off_t offset, Hook hook);
  void add_seconds(double TransferStats::*field, double seconds);
  device::Runtime* runtime_ = nullptr;  // on a device: the runtime, its compute and copy streams
  device::Stream compute_, copy_;
  int fd_ = -1;  // a file's reads and writes: the descriptor and the name
  std::string path_;
  mutable std::mutex mutex_;  // guards stats_ (the thread adds its busy time, the caller its waits)
  TransferStats stats_;
  JobThread jobs_;  // last: destroyed first, so every queued job runs while the rest still exists
};

}  // namespace zt::offload
