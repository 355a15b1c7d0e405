// offload/transfer_thread.cc — the transfer thread (see transfer_thread.h).
#include "offload/transfer_thread.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <utility>

#include "core/check.h"

namespace zt::offload {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// The whole file transfer, however many calls it takes; "" on success, else the reason.
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

TransferStats TransferStats::operator-(const TransferStats& b) const {
  return {to_host_bytes - b.to_host_bytes,     to_host_calls - b.to_host_calls, to_device_bytes - b.to_device_bytes,
          to_device_calls - b.to_device_calls, read_bytes - b.read_bytes,       read_calls - b.read_calls,
          write_bytes - b.write_bytes,         write_calls - b.write_calls,     busy_seconds - b.busy_seconds,
          wait_seconds - b.wait_seconds};
}

TransferStats TransferStats::operator+(const TransferStats& b) const {
  return {to_host_bytes + b.to_host_bytes,     to_host_calls + b.to_host_calls, to_device_bytes + b.to_device_bytes,
          to_device_calls + b.to_device_calls, read_bytes + b.read_bytes,       read_calls + b.read_calls,
          write_bytes + b.write_bytes,         write_calls + b.write_calls,     busy_seconds + b.busy_seconds,
          wait_seconds + b.wait_seconds};
}

void TransferHandle::wait() {
  if (!owner_) return;
  TransferThread* owner = std::exchange(owner_, nullptr);  // empty afterwards, also when the job failed
  const Work work = std::move(work_);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    if (owner->runtime_)
      owner->runtime_->synchronize(owner->copy_);  // this copy and those queued before it (FIFO)
    else
      work.wait();
  } catch (...) {
    owner->add_seconds(&TransferStats::wait_seconds, seconds_since(t0));
    throw;
  }
  owner->add_seconds(&TransferStats::wait_seconds, seconds_since(t0));
}

TransferThread::TransferThread(device::Runtime& runtime, device::Stream compute)
    : runtime_(&runtime), compute_(compute), copy_(runtime.create_stream("tier copies")) {}

TransferThread::TransferThread(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

TransferThread::~TransferThread() {
  if (!runtime_) return;
  try {
    runtime_->synchronize(copy_);
  } catch (const std::exception&) {
    // a copy that failed was reported at its wait(), or the run is already failing; what matters
    // here is that none is still running when its memory goes
  }
}

TransferHandle TransferThread::copy(void* dst, const void* src, std::size_t bytes, CopyDirection direction) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const bool down = direction == CopyDirection::to_host;
    (down ? stats_.to_host_bytes : stats_.to_device_bytes) += bytes;
    ++(down ? stats_.to_host_calls : stats_.to_device_calls);
  }
  TransferHandle h;
  h.owner_ = this;
  if (runtime_) {
    if (bytes > 0) {  // (a call of no bytes is counted as on the host, and moves nothing)
      runtime_->wait(copy_, runtime_->record(compute_));  // after the tensor's producers and readers
      const auto kind =
          direction == CopyDirection::to_host ? device::CopyKind::device_to_host : device::CopyKind::host_to_device;
      runtime_->copy_async(dst, src, bytes, kind, copy_);
    }
    return h;
  }
  h.work_ = jobs_.submit([this, dst, src, bytes] {
    const auto t0 = std::chrono::steady_clock::now();
    std::memcpy(dst, src, bytes);
    add_seconds(&TransferStats::busy_seconds, seconds_since(t0));
  });
  return h;
}

TransferHandle TransferThread::read(void* dst, std::size_t bytes, off_t offset, Hook after) {
  return file_job(true, dst, bytes, offset, std::move(after));
}

TransferHandle TransferThread::write(const void* src, std::size_t bytes, off_t offset, Hook before) {
  return file_job(false, const_cast<void*>(src), bytes, offset, std::move(before));  // only read from
}

TransferHandle TransferThread::file_job(bool is_read, void* buffer, std::size_t bytes, off_t offset, Hook hook) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    (is_read ? stats_.read_bytes : stats_.write_bytes) += bytes;
    ++(is_read ? stats_.read_calls : stats_.write_calls);
  }
  TransferHandle h;
  h.owner_ = this;
  h.work_ = jobs_.submit([this, is_read, buffer, bytes, offset, hook = std::move(hook)] {
    if (hook && !is_read) hook();  // fills the source first
    const auto t0 = std::chrono::steady_clock::now();
    const std::string why = transfer(is_read, fd_, static_cast<std::byte*>(buffer), bytes, offset);
    add_seconds(&TransferStats::busy_seconds, seconds_since(t0));
    if (!why.empty())
      throw Error(concat("offload file ", path_, ": ", is_read ? "read" : "write", " of ", bytes, " bytes at offset ",
                         offset, " failed: ", why));
    if (hook && is_read) hook();  // takes the bytes on
  });
  return h;
}

TransferStats TransferThread::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void TransferThread::add_seconds(double TransferStats::*field, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.*field += seconds;
}

}  // namespace zt::offload
