// offload/io_thread.cc — the reader/writer thread (see io_thread.h).
#include "offload/io_thread.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/check.h"

namespace zt::offload {

struct IoHandle::State {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  std::string error;  // empty: the job succeeded
};

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
  if (!state_) return;
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(state_->mutex);
  state_->done_cv.wait(lock, [&] { return state_->done; });
  const std::string error = state_->error;
  lock.unlock();
  if (io_) io_->add_wait(seconds_since(t0));
  state_.reset();
  if (!error.empty()) throw Error(error);
}

IoThread::IoThread(int fd, std::string path) : fd_(fd), path_(std::move(path)), thread_([this] { run(); }) {}

IoThread::~IoThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

IoHandle IoThread::read(void* dst, std::size_t bytes, off_t offset) { return submit(true, dst, bytes, offset); }

IoHandle IoThread::write(const void* src, std::size_t bytes, off_t offset) {
  return submit(false, const_cast<void*>(src), bytes, offset);  // only read from: see run()
}

IoHandle IoThread::submit(bool is_read, void* buffer, std::size_t bytes, off_t offset) {
  IoHandle h;
  h.state_ = std::make_shared<IoHandle::State>();
  h.io_ = this;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    (is_read ? stats_.read_bytes : stats_.write_bytes) += bytes;  // counted here: exact per step
    ++(is_read ? stats_.read_calls : stats_.write_calls);
    queue_.push_back({is_read, buffer, bytes, offset, h.state_});
  }
  wake_.notify_one();
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

void IoThread::run() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and every queued job has run
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    const auto t0 = std::chrono::steady_clock::now();
    const std::string why = transfer(job.is_read, fd_, static_cast<std::byte*>(job.buffer), job.bytes, job.offset);
    const double took = seconds_since(t0);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stats_.io_seconds += took;
    }
    {
      std::lock_guard<std::mutex> lock(job.state->mutex);
      if (!why.empty())
        job.state->error = concat("offload file ", path_, ": ", job.is_read ? "read" : "write", " of ", job.bytes,
                                  " bytes at offset ", job.offset, " failed: ", why);
      job.state->done = true;
    }
    job.state->done_cv.notify_all();
  }
}

}  // namespace zt::offload
