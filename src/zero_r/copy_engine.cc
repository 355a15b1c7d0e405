// zero_r/copy_engine.cc — the copy thread (see copy_engine.h).
#include "zero_r/copy_engine.h"

#include <chrono>
#include <cstring>

namespace zt::zero_r {

struct CopyHandle::State {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
};

TransferStats TransferStats::operator-(const TransferStats& b) const {
  TransferStats d;
  d.to_host_bytes = to_host_bytes - b.to_host_bytes;
  d.to_host_calls = to_host_calls - b.to_host_calls;
  d.to_device_bytes = to_device_bytes - b.to_device_bytes;
  d.to_device_calls = to_device_calls - b.to_device_calls;
  d.copy_seconds = copy_seconds - b.copy_seconds;
  d.wait_seconds = wait_seconds - b.wait_seconds;
  return d;
}

TransferStats TransferStats::operator+(const TransferStats& b) const {
  TransferStats d;
  d.to_host_bytes = to_host_bytes + b.to_host_bytes;
  d.to_host_calls = to_host_calls + b.to_host_calls;
  d.to_device_bytes = to_device_bytes + b.to_device_bytes;
  d.to_device_calls = to_device_calls + b.to_device_calls;
  d.copy_seconds = copy_seconds + b.copy_seconds;
  d.wait_seconds = wait_seconds + b.wait_seconds;
  return d;
}

void CopyHandle::wait() {
  if (!state_) return;
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(state_->mutex);
  state_->done_cv.wait(lock, [&] { return state_->done; });
  lock.unlock();
  if (engine_) engine_->add_wait(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  state_.reset();
}

CopyEngine::CopyEngine() : thread_([this] { run(); }) {}

CopyEngine::~CopyEngine() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

CopyHandle CopyEngine::submit(void* dst, const void* src, std::size_t bytes, CopyDirection direction) {
  CopyHandle h;
  h.state_ = std::make_shared<CopyHandle::State>();
  h.engine_ = this;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back({dst, src, bytes, direction, h.state_});
  }
  wake_.notify_one();
  return h;
}

TransferStats CopyEngine::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void CopyEngine::add_wait(double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.wait_seconds += seconds;
}

void CopyEngine::run() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and every queued copy has run
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    const auto t0 = std::chrono::steady_clock::now();
    std::memcpy(job.dst, job.src, job.bytes);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stats_.copy_seconds += took;
      if (job.direction == CopyDirection::to_host) {
        stats_.to_host_bytes += job.bytes;
        ++stats_.to_host_calls;
      } else {
        stats_.to_device_bytes += job.bytes;
        ++stats_.to_device_calls;
      }
    }
    {
      std::lock_guard<std::mutex> lock(job.state->mutex);
      job.state->done = true;
    }
    job.state->done_cv.notify_all();
  }
}

}  // namespace zt::zero_r
