// core/cpu_pool.h — the threads inside one rank: a persistent pool of T threads (the calling
// thread and T-1 workers) that splits a loop over independent outputs into T contiguous parts.
//
// Why the bits cannot depend on T: parallel_for hands out OUTPUTS (rows of C, rows of a
// LayerNorm, columns of a bias gradient, elements of an Adam step, batch rows of attention), never
// terms of one sum. Every output element is still computed by the one sequence of operations the
// serial loop runs (the canonical GEMM's fma chain over k, the canonical tree over rows), by
// whichever thread owns it; splitting changes who computes it and when, never how. A reduction
// whose terms would have to be split (a norm over all elements) is formed as the canonical tree
// does it: per-block sums that the tree combines in one fixed order, whatever the thread count.
//
// One pool per rank (`--threads T`): a rank's thread installs its pool with UseCpuPool, and the
// kernels it calls find it through current_cpu_pool(). Ranks as threads of one process therefore
// each get a pool of their own, and a kernel called where no pool is installed (a collective's
// work thread, a device stream's thread, a test) runs serially. A parallel_for inside another runs
// its loop inline on the thread that reached it: the outer split already uses every thread.
// Not here: work stealing, priorities, or anything that could make a part's range depend on timing.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace zt {

/// T threads that run the parts of one loop at a time (see the file comment).
class CpuPool {
 public:
  /// A loop body: runs the items [lo, hi).
  using Body = std::function<void(int64_t lo, int64_t hi)>;

  /// How loops on this pool are cut.
  enum class Split {
    by_grain,   ///< at least `grain` items per part (the engine: parts worth waking a thread for)
    every_loop  ///< as many parts as threads whatever the size (tests: small, odd shapes then
                ///< cross every boundary a split can make)
  };
  /// @param threads T >= 1 (checked): the calling thread and T-1 workers started here.
  /// @param split how loops are cut (parallel_parts).
  explicit CpuPool(int threads, Split split = Split::by_grain);
  ~CpuPool();
  CpuPool(const CpuPool&) = delete;
  CpuPool& operator=(const CpuPool&) = delete;

  /// @return T.
  int threads() const { return threads_; }
  /// @return how loops are cut.
  Split split() const { return split_; }

  /// Run body over [0, n) split into parts contiguous ranges of near-equal size, part p being
  /// [n·p/parts, n·(p+1)/parts); the caller runs part 0 and waits for the rest. Each range is a
  /// function of (n, parts) alone. If parts throw, the exception of the lowest such part is
  /// rethrown here after every part has finished. One loop at a time per pool (checked).
  /// @param n items. @param parts ranges (1 <= parts <= T). @param body the loop body.
  void run(int64_t n, int parts, const Body& body);

 private:
  void worker(int part);

  int threads_;
  Split split_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable start_, done_;
  uint64_t generation_ = 0;  // bumped per loop; a worker runs each generation once
  bool stop_ = false;
  bool running_ = false;
  const Body* body_ = nullptr;
  int64_t n_ = 0;
  int parts_ = 0;
  int pending_ = 0;  // parts not yet finished
  std::vector<std::exception_ptr> errors_;
};

/// The pool installed on the calling thread (UseCpuPool), or nullptr.
/// @return it.
CpuPool* current_cpu_pool();

/// Whether the calling thread is inside a parallel_for's body (nested loops run inline).
/// @return true if it is.
bool inside_parallel_for();

/// Installs a pool on the calling thread for its lifetime (restoring the previous one after).
class UseCpuPool {
 public:
  /// @param pool the pool (may be nullptr: kernels then run serially).
  explicit UseCpuPool(CpuPool* pool);
  ~UseCpuPool();
  UseCpuPool(const UseCpuPool&) = delete;
  UseCpuPool& operator=(const UseCpuPool&) = delete;

 private:
  CpuPool* previous_;
};

/// The fewest elements an element-wise loop gives a thread of the pool: 2^15 (about 32k elements,
/// tens of microseconds of work). Below that, waking a thread costs more than it saves. Row-wise
/// and block-wise loops derive their grains from it (rows of width C: 2^15 / C rows).
inline constexpr int64_t kCpuElementGrain = int64_t{1} << 15;

/// How many parts a loop of n items gets: at most T, and at least `grain` items per part (1 when
/// there is no pool, or the caller is already inside a loop); min(n, T) on a pool that splits
/// every loop. @param n items.
/// @param grain the fewest items worth a part of their own (>= 1). @return the part count.
int parallel_parts(int64_t n, int64_t grain);

/// Run body(lo, hi) over the parallel_parts(n, grain) contiguous ranges of [0, n) on the current
/// pool, or body(0, n) inline when that is one part. @param n items. @param grain the fewest items
/// worth a part. @param body callable with (int64_t lo, int64_t hi).
template <typename F>
void parallel_for(int64_t n, int64_t grain, F&& body) {
  if (n <= 0) return;
  const int parts = parallel_parts(n, grain);
  if (parts <= 1) {
    body(int64_t{0}, n);
    return;
  }
  current_cpu_pool()->run(n, parts, CpuPool::Body(std::ref(body)));
}

/// A rank's threads: a pool of T threads installed on the constructing thread (the rank's) for the
/// object's lifetime. The program makes one per rank around the rank's whole run, so every kernel
/// the rank calls splits over it. It cuts loops by Split::by_grain, or by Split::every_loop when
/// the environment says ZT_CPU_POOL_SPLIT=every_loop (a test hook, like the fault-injection
/// variables: tiny test models then split every loop, as the engine's real sizes do); any other
/// value is an error.
class RankThreads {
 public:
  /// @param threads T (>= 1, checked).
  explicit RankThreads(int64_t threads);

 private:
  CpuPool pool_;
  UseCpuPool use_;
};

/// The threads a rank gets by default: the CPUs this process may run on (its affinity mask)
/// divided among the ranks that share the machine, at least 1.
/// @param local_ranks ranks of this job on this machine (>= 1). @return that count.
int default_cpu_threads(int local_ranks);

}  // namespace zt
