// core/cpu_pool.cc — the per-rank pool: workers wait on a generation counter, run their part of
// the current loop, and the last one to finish wakes the caller.
#include "core/cpu_pool.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/check.h"

namespace zt {
namespace {

thread_local CpuPool* t_pool = nullptr;
thread_local bool t_inside = false;  // running a part of some pool's loop

// Marks the calling thread as inside a loop for the duration of one part.
struct InsideLoop {
  bool previous = t_inside;
  InsideLoop() { t_inside = true; }
  ~InsideLoop() { t_inside = previous; }
};

// Part p of [0, n) in `parts` near-equal ranges: a function of (n, parts, p) only.
int64_t part_begin(int64_t n, int parts, int p) { return static_cast<int64_t>((static_cast<__int128>(n) * p) / parts); }

}  // namespace

CpuPool::CpuPool(int threads, Split split) : threads_(threads), split_(split) {
  ZT_CHECK(threads >= 1, "a rank needs at least one thread, got ", threads);
  workers_.reserve(static_cast<std::size_t>(threads - 1));
  for (int p = 1; p < threads; ++p) workers_.emplace_back([this, p] { worker(p); });
}

CpuPool::~CpuPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_.notify_all();
  for (auto& t : workers_) t.join();
}

void CpuPool::worker(int part) {
  uint64_t seen = 0;
  for (;;) {
    const Body* body = nullptr;
    int64_t lo = 0, hi = 0;
    {
      std::unique_lock<std::mutex> lock(mu_);
      start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (part >= parts_) continue;  // this loop has fewer parts than the pool has threads
      body = body_;
      lo = part_begin(n_, parts_, part);
      hi = part_begin(n_, parts_, part + 1);
    }
    std::exception_ptr error;
    try {
      InsideLoop inside;
      (*body)(lo, hi);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mu_);
    errors_[static_cast<std::size_t>(part)] = error;
    if (--pending_ == 0) done_.notify_one();
  }
}

void CpuPool::run(int64_t n, int parts, const Body& body) {
  ZT_CHECK(parts >= 1 && parts <= threads_, "CpuPool::run: ", parts, " parts on ", threads_, " threads");
  if (parts == 1) {
    InsideLoop inside;
    body(0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ZT_CHECK(!running_, "CpuPool::run: the pool is already running a loop");
    running_ = true;
    body_ = &body;
    n_ = n;
    parts_ = parts;
    pending_ = parts - 1;
    errors_.assign(static_cast<std::size_t>(parts), nullptr);
    ++generation_;
  }
  start_.notify_all();
  std::exception_ptr first;
  try {
    InsideLoop inside;
    body(0, part_begin(n, parts, 1));
  } catch (...) {
    first = std::current_exception();
  }
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return pending_ == 0; });
  running_ = false;
  body_ = nullptr;
  for (std::size_t p = 1; p < errors_.size() && !first; ++p) first = errors_[p];
  lock.unlock();
  if (first) std::rethrow_exception(first);
}

CpuPool* current_cpu_pool() { return t_pool; }

bool inside_parallel_for() { return t_inside; }

UseCpuPool::UseCpuPool(CpuPool* pool) : previous_(t_pool) { t_pool = pool; }

UseCpuPool::~UseCpuPool() { t_pool = previous_; }

int parallel_parts(int64_t n, int64_t grain) {
  const CpuPool* pool = t_pool;
  if (!pool || t_inside || pool->threads() == 1) return 1;
  const int64_t by_grain = pool->split() == CpuPool::Split::every_loop ? n : n / std::max<int64_t>(grain, 1);
  return static_cast<int>(std::clamp<int64_t>(by_grain, 1, pool->threads()));
}

namespace {

// How a rank's pool cuts loops: ZT_CPU_POOL_SPLIT (see RankThreads).
CpuPool::Split cpu_pool_split_from_env() {
  const char* v = std::getenv("ZT_CPU_POOL_SPLIT");
  if (!v || !*v) return CpuPool::Split::by_grain;
  ZT_CHECK(std::string(v) == "every_loop", "ZT_CPU_POOL_SPLIT=", v, " is not every_loop");
  return CpuPool::Split::every_loop;
}

}  // namespace

RankThreads::RankThreads(int64_t threads)
    : pool_(static_cast<int>(std::clamp<int64_t>(threads, 0, 1 << 20)), cpu_pool_split_from_env()), use_(&pool_) {}

int default_cpu_threads(int local_ranks) {
  cpu_set_t set;
  CPU_ZERO(&set);
  int cpus = 1;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cpus = std::max(1, CPU_COUNT(&set));
  return std::max(1, cpus / std::max(1, local_ranks));
}

}  // namespace zt
