// offload/io_thread.h — the file tier's reader/writer: one thread that runs positioned reads and
// writes of one file in the order they are submitted, each one counted.
//
// The compute thread submits a read of the unit it will need next and goes on updating the one it
// has; the I/O thread fills the buffer meanwhile (read-ahead), and writes an updated unit back
// while the next one is updated (write-behind). Because jobs run strictly in submission order
// (FIFO, one thread), a read queued after a write of the same buffer never overtakes it: that is
// what lets a bounded ring of buffers be reused without any other synchronisation. Bytes and calls
// are counted when a job is submitted (so per-step counts are exact, whatever the thread's
// timing); the thread's busy time and the compute thread's waits are measured. The thread and its
// FIFO are core/job_thread.h's; this file adds what a job is (a positioned transfer) and what is
// counted. It moves bytes
// between a file and memory; it knows nothing of optimizers, units or rings (offload/file_tier.h).
// On Linux io_uring would do the same without a thread; a thread with pread/pwrite needs no
// package and behaves the same everywhere.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "core/job_thread.h"

namespace zt::offload {

/// Counters of a file tier's I/O.
struct FileIoStats {
  uint64_t read_bytes = 0;   ///< bytes read from the file
  uint64_t read_calls = 0;   ///< reads submitted
  uint64_t write_bytes = 0;  ///< bytes written to the file
  uint64_t write_calls = 0;  ///< writes submitted
  double io_seconds = 0;     ///< time the I/O thread spent in reads and writes
  double wait_seconds = 0;   ///< time the compute thread spent blocked waiting for them
  /// @param b an earlier snapshot. @return the I/O between b and this.
  FileIoStats operator-(const FileIoStats& b) const;
  /// @param b more I/O. @return both together.
  FileIoStats operator+(const FileIoStats& b) const;
};

class IoThread;

/// A submitted read or write: wait() blocks until it has run, and throws zt::Error if it failed.
class IoHandle {
 public:
  IoHandle() = default;
  /// Block until the job has run (at once for an empty handle); the handle is empty afterwards.
  /// Throws zt::Error naming the file, the job and the system's reason when it failed.
  void wait();
  /// @return whether this handle refers to a job not yet waited for.
  bool valid() const { return io_ != nullptr; }

 private:
  friend class IoThread;
  Work work_;
  IoThread* io_ = nullptr;
};

/// One reader/writer thread for one open file.
class IoThread {
 public:
  /// @param fd an open file descriptor (not owned; it must outlive this object).
  /// @param path the file's name (for error messages).
  IoThread(int fd, std::string path);
  /// Runs every queued job, then stops the thread (jobs_, the last member, goes first).
  ~IoThread() = default;
  IoThread(const IoThread&) = delete;
  IoThread& operator=(const IoThread&) = delete;

  /// Work a job does on the I/O thread beside its transfer (a copy to or from a device).
  using Hook = std::function<void()>;

  /// Queue a read of `bytes` bytes at file offset `offset` into dst (valid until it has run).
  /// @param dst destination. @param bytes how many. @param offset where in the file.
  /// @param after run on the I/O thread once the bytes are in dst (may be empty). @return its handle.
  IoHandle read(void* dst, std::size_t bytes, off_t offset, Hook after = {});
  /// Queue a write of `bytes` bytes from src (valid and unchanged until it has run) at `offset`.
  /// @param src source. @param bytes how many. @param offset where in the file.
  /// @param before run on the I/O thread first, to fill src (may be empty). @return its handle.
  IoHandle write(const void* src, std::size_t bytes, off_t offset, Hook before = {});
  /// Counters so far. @return a copy of them.
  FileIoStats stats() const;

 private:
  friend class IoHandle;
  IoHandle submit(bool is_read, void* buffer, std::size_t bytes, off_t offset, Hook hook);
  void add_wait(double seconds);
  int fd_;
  std::string path_;
  mutable std::mutex mutex_;  // guards stats_ (the thread adds its busy time, the caller its waits)
  FileIoStats stats_;
  JobThread jobs_;  // last: destroyed first, so every queued job runs while the rest still exists
};

}  // namespace zt::offload
