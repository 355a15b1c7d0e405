// zero_r/copy_engine.cc — the copy thread (see copy_engine.h).
#include "zero_r/copy_engine.h"

#include <chrono>
#include <cstring>
#include <exception>
#include <utility>

namespace zt::zero_r {

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
  if (!engine_) return;
  CopyEngine* engine = std::exchange(engine_, nullptr);
  const Work work = std::move(work_);
  const auto t0 = std::chrono::steady_clock::now();
  if (engine->runtime_)
    engine->runtime_->synchronize(engine->copy_);  // this copy and those queued before it (FIFO)
  else
    work.wait();  // a memcpy does not fail
  engine->add_wait(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

CopyEngine::CopyEngine(device::Runtime& runtime, device::Stream compute)
    : runtime_(&runtime), compute_(compute), copy_(runtime.create_stream("tier copies")) {}

CopyEngine::~CopyEngine() {
  if (!runtime_) return;
  try {
    runtime_->synchronize(copy_);
  } catch (const std::exception&) {
    // a copy that failed was reported at its wait(), or the run is already failing; what matters
    // here is that none is still running when its memory goes
  }
}

CopyHandle CopyEngine::submit(void* dst, const void* src, std::size_t bytes, CopyDirection direction) {
  CopyHandle h;
  h.engine_ = this;
  if (runtime_) {
    if (bytes > 0) {  // (a call of no bytes is counted as on the host, and moves nothing)
      runtime_->wait(copy_, runtime_->record(compute_));  // after the tensor's producers and readers
      const auto kind =
          direction == CopyDirection::to_host ? device::CopyKind::device_to_host : device::CopyKind::host_to_device;
      runtime_->copy_async(dst, src, bytes, kind, copy_);
    }
    count(bytes, direction, 0.0);
    return h;
  }
  h.work_ = jobs_.submit([this, dst, src, bytes, direction] {
    const auto t0 = std::chrono::steady_clock::now();
    std::memcpy(dst, src, bytes);
    count(bytes, direction, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  });
  return h;
}

void CopyEngine::count(std::size_t bytes, CopyDirection direction, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);  // on the host counted once done: stats() leaves out copies still queued
  stats_.copy_seconds += seconds;
  if (direction == CopyDirection::to_host) {
    stats_.to_host_bytes += bytes;
    ++stats_.to_host_calls;
  } else {
    stats_.to_device_bytes += bytes;
    ++stats_.to_device_calls;
  }
}

TransferStats CopyEngine::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void CopyEngine::add_wait(double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.wait_seconds += seconds;
}

}  // namespace zt::zero_r
