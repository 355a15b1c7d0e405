// offload/io_thread.cc — the reader/writer thread (see io_thread.h).
#include "offload/io_thread.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "core/check.h"

namespace zt::offload {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// The whole transfer, however many calls it takes; "" on success, else the reason.
std::string transfer(bool is_read, int fd, std::byte* p, std::size_t n, off_t offset) {
  while (n > 0) {
    const ssize_t k = is_read ? ::pread(fd, p, n, offset) : ::pwrite(fd, p, n, offset);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return std::strerror(errno);
    if (k == 0) return "unexpected end of file";
    p += k;
    n -= static_cast<std::size_t>(k);
    offset += k;
  }
  return "";
}

}  // namespace

FileIoStats FileIoStats::operator-(const FileIoStats& b) const {
  return {read_bytes - b.read_bytes,   read_calls - b.read_calls, write_bytes - b.write_bytes,
          write_calls - b.write_calls, io_seconds - b.io_seconds, wait_seconds - b.wait_seconds};
}

FileIoStats FileIoStats::operator+(const FileIoStats& b) const {
  return {read_bytes + b.read_bytes,   read_calls + b.read_calls, write_bytes + b.write_bytes,
          write_calls + b.write_calls, io_seconds + b.io_seconds, wait_seconds + b.wait_seconds};
}

void IoHandle::wait() {
  if (!io_) return;
  IoThread* io = std::exchange(io_, nullptr);  // empty afterwards, also when the job failed
  const Work work = std::move(work_);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    work.wait();
  } catch (...) {
    io->add_wait(seconds_since(t0));
    throw;
  }
  io->add_wait(seconds_since(t0));
}

IoThread::IoThread(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

IoHandle IoThread::read(void* dst, std::size_t bytes, off_t offset, Hook after) {
  return submit(true, dst, bytes, offset, std::move(after));
}

IoHandle IoThread::write(const void* src, std::size_t bytes, off_t offset, Hook before) {
  return submit(false, const_cast<void*>(src), bytes, offset, std::move(before));  // only read from: see run()
}

IoHandle IoThread::submit(bool is_read, void* buffer, std::size_t bytes, off_t offset, Hook hook) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    (is_read ? stats_.read_bytes : stats_.write_bytes) += bytes;  // counted here: exact per step
    ++(is_read ? stats_.read_calls : stats_.write_calls);
  }
  IoHandle h;
  h.io_ = this;
  h.work_ = jobs_.submit([this, is_read, buffer, bytes, offset, hook = std::move(hook)] {
    if (hook && !is_read) hook();  // fills the source first
    const auto t0 = std::chrono::steady_clock::now();
    const std::string why = transfer(is_read, fd_, static_cast<std::byte*>(buffer), bytes, offset);
    const double took = seconds_since(t0);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stats_.io_seconds += took;
    }
    if (!why.empty())
      throw Error(concat("offload file ", path_, ": ", is_read ? "read" : "write", " of ", bytes, " bytes at offset ",
                         offset, " failed: ", why));
    if (hook && is_read) hook();  // takes the bytes on
  });
  return h;
}

FileIoStats IoThread::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void IoThread::add_wait(double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.wait_seconds += seconds;
}

}  // namespace zt::offload
