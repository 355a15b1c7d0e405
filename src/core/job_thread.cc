// core/job_thread.cc — Work handles and the FIFO job thread (see job_thread.h).
#include "core/job_thread.h"

namespace zt {

void Work::wait() const {
  if (!state_) return;
  std::unique_lock<std::mutex> lock(state_->mutex);
  state_->done_cv.wait(lock, [&] { return state_->done; });
  if (state_->error) std::rethrow_exception(state_->error);
}

JobThread::JobThread() : thread_([this] { loop(); }) {}

JobThread::~JobThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

Work JobThread::submit(std::function<void()> task) {
  Work work;
  work.state_ = std::make_shared<Work::State>();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.emplace_back(std::move(task), work.state_);
  }
  cv_.notify_one();
  return work;
}

void JobThread::loop() {
  for (;;) {
    std::function<void()> task;
    std::shared_ptr<Work::State> state;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything queued has run
      task = std::move(queue_.front().first);
      state = std::move(queue_.front().second);
      queue_.pop_front();
    }
    std::exception_ptr error;
    try {
      task();
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(state->mutex);
      state->done = true;
      state->error = error;
    }
    state->done_cv.notify_all();
  }
}

}  // namespace zt
