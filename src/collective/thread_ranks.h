// collective/thread_ranks.h — run N ranks as threads of this process (tests, demos).
//
// run_thread_ranks(N, fn) calls fn(rank) on N threads and returns each rank's value or the text
// of the exception it threw; it never throws itself, so a test can assert on every rank's fate
// from its own thread (Catch2 assertions are not thread-safe). thread_group(N, ...) gives each
// rank GlooOptions over one shared in-memory HashStore with a fresh key prefix.
// This is not a process launcher (src/launch is).
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <gloo/rendezvous/hash_store.h>

#include "collective/gloo_collective.h"
#include "core/error_report.h"

namespace zt {

/// What one rank thread produced: its value, or the message of the exception it threw.
template <typename R>
struct RankOutcome {
  std::optional<R> value;  ///< set when the rank returned normally
  std::string error;       ///< what() of the exception when it threw
  /// The exception was a zt::PeerFailed: this rank stopped because another one failed.
  bool peer_failed = false;
  /// Whether the rank returned normally. @return true if it did.
  bool ok() const { return value.has_value(); }
};

/// Placeholder value for ranks whose function returns void.
struct NoValue {};

/// Run fn(rank) for rank = 0..n-1, each on its own thread; join all.
/// @param n number of ranks. @param fn callable taking the rank (int).
/// @return one outcome per rank, in rank order (value type NoValue for void functions).
template <typename Fn>
auto run_thread_ranks(int n, Fn fn) {
  using Raw = std::invoke_result_t<Fn&, int>;
  using R = std::conditional_t<std::is_void_v<Raw>, NoValue, Raw>;
  std::vector<RankOutcome<R>> out(n > 0 ? n : 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      try {
        if constexpr (std::is_void_v<Raw>) {
          fn(r);
          out[r].value = NoValue{};
        } else {
          out[r].value = fn(r);
        }
      } catch (const PeerFailed& e) {
        out[r].error = e.what();
        out[r].peer_failed = true;
      } catch (const std::exception& e) {
        out[r].error = e.what();
      } catch (...) {
        out[r].error = "unknown exception";
      }
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

/// Options for rank r of a thread group sharing one HashStore under a prefix unique in this
/// process. Build all ranks' options from one call's result (they share the store).
struct ThreadGroup {
  GlooOptions base;  ///< store, prefix, mode, timeout shared by every rank
  /// Options of one rank. @param rank the rank. @return base with rank set.
  GlooOptions for_rank(int rank) const {
    GlooOptions o = base;
    o.rank = rank;
    return o;
  }
};

/// A fresh thread group. @param n ranks. @param mode reduction mode.
/// @param timeout rendezvous and collective timeout. @return the group's shared options.
inline ThreadGroup thread_group(int n, ReduceMode mode = ReduceMode::deterministic,
                                std::chrono::milliseconds timeout = std::chrono::milliseconds(30000)) {
  static std::atomic<int> groups{0};
  ThreadGroup g;
  g.base.size = n;
  g.base.mode = mode;
  g.base.timeout = timeout;
  g.base.store = std::make_shared<gloo::rendezvous::HashStore>();
  g.base.prefix = "threads" + std::to_string(groups++);
  return g;
}

}  // namespace zt
