// zero-collbench/bench_rank.h — what one benchmark rank (a forked process) measures.
//
// Each rank joins two groups through one FileStore directory (deterministic and fast mode),
// then for every buffer size times each collective: one warm-up call, a barrier, `iters` calls;
// the time of a call is the slowest rank's mean (an all-reduce max over ranks). Rank 0 appends
// one line per measurement to a results file that the parent process reads. Not a library.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace zt::collbench {

/// One measurement: op name, mode, world size, bytes of the full buffer, seconds per call.
struct Row {
  std::string op;         ///< all_reduce, reduce_scatter, all_gather, broadcast
  std::string mode;       ///< deterministic, fast, gloo-direct (Gloo called without the wrapper)
  int world = 0;          ///< ranks
  std::size_t bytes = 0;  ///< full-buffer bytes (nccl-tests convention)
  double seconds = 0;     ///< mean time per call, slowest rank
};

/// What every rank runs.
struct RankPlan {
  int world = 2;                   ///< number of ranks
  std::vector<std::size_t> sizes;  ///< full-buffer sizes in bytes
  int iters = 5;                   ///< timed calls per measurement
  std::string store_dir;           ///< fresh FileStore directory for this world size
  std::string results_file;        ///< rank 0 appends Row lines here
  int timeout_ms = 60000;          ///< collective timeout
};

/// Run rank `rank` of the plan (throws zt::Error on failure). @param plan the plan.
/// @param rank this process's rank.
void run_bench_rank(const RankPlan& plan, int rank);

/// Parse the lines rank 0 wrote. @param path the results file. @return the rows.
std::vector<Row> read_rows(const std::string& path);

}  // namespace zt::collbench
