// collective/work.h — the handle of an asynchronous collective, and the thread that runs them.
//
// Every operation of a Collective (synchronous or not) is queued on that Collective's one
// communication thread and runs there in issue order; a synchronous call is "queue, then wait".
// So two calls of one Collective never interleave, and ranks that issue the same calls in the
// same order meet in the same order (the NCCL/torch.distributed rule). Work::wait() rethrows the
// operation's exception. This is not a thread pool: one thread, one FIFO, no priorities.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace zt {

/// Completion handle of one queued operation. Copyable; a default-constructed Work is complete.
/// Buffers passed to the operation must stay valid and must not be touched until wait() returns.
/// Dropping a Work without waiting is allowed: the operation still runs, and if it fails the
/// Collective is marked broken, so the error surfaces at the next call.
class Work {
 public:
  Work() = default;
  /// Block until the operation has run; rethrow its exception (a zt::Error) if it failed.
  void wait() const;
  /// Whether the operation has finished (successfully or not). @return true when finished.
  bool ready() const;

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable done_cv;
    bool done = false;
    std::exception_ptr error;
  };
  std::shared_ptr<State> state_;
  friend class CommThread;
};

/// One thread executing queued tasks in FIFO order; the destructor runs what is queued, then joins.
class CommThread {
 public:
  CommThread();
  ~CommThread();
  CommThread(const CommThread&) = delete;
  CommThread& operator=(const CommThread&) = delete;

  /// Queue a task. @param task runs on the communication thread; an exception it throws is
  /// stored and rethrown by Work::wait(). @return the task's handle.
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
