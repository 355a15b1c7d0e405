// core/job_thread.h — one thread that runs queued jobs in the order they were submitted, and the
// handle (Work) that waits for one job and rethrows its exception.
//
// Two owners, one mechanism: a Collective's communication thread (every operation is queued and
// runs in issue order, so two calls never interleave and ranks that issue the same calls meet in
// the same order: the NCCL/torch.distributed rule) and the transfer thread between memory tiers
// (offload/transfer_thread.h: a read queued after a write of the same buffer never overtakes it). What FIFO order
// guarantees is the point of each; what a job does and counts is its owner's. This is not a thread pool: one thread,
// one FIFO, no priorities.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace zt {

/// Completion handle of one queued job. Copyable; a default-constructed Work is complete.
/// Buffers passed to the job must stay valid and must not be touched until wait() returns.
/// Dropping a Work without waiting is allowed: the job still runs (a Collective then marks itself
/// broken when it fails, so the error surfaces at the next call).
class Work {
 public:
  Work() = default;
  /// Block until the job has run; rethrow its exception (a zt::Error) if it failed.
  void wait() const;

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable done_cv;
    bool done = false;
    std::exception_ptr error;
  };
  std::shared_ptr<State> state_;
  friend class JobThread;
};

/// One thread executing queued jobs in FIFO order; the destructor runs what is queued, then joins.
/// An owner whose jobs use its other members declares its JobThread last, so that it is destroyed
/// (and every queued job has run) before them.
class JobThread {
 public:
  JobThread();
  ~JobThread();
  JobThread(const JobThread&) = delete;
  JobThread& operator=(const JobThread&) = delete;

  /// Queue a job. @param task runs on the thread; an exception it throws is stored and rethrown
  /// by Work::wait(). @return the job's handle.
  Work submit(std::function<void()> task);

 private:
  void loop();
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::pair<std::function<void()>, std::shared_ptr<Work::State>>> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace zt
