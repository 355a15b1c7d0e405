// collective/stats.h — per-kind call and byte counters of one Collective (one rank).
//
// How the bytes are derived: from the message sizes of the algorithm that ran, computed by the
// backend when it issues the call (not measured on the wire, no TCP/framing overhead). For each
// algorithm the formula is written next to its implementation (gloo_ops.cc); with S the buffer
// size in bytes and N ranks, the headline figures per rank are
//   deterministic reduce-scatter (all-to-all)      sent = received = (N-1)/N * S
//   deterministic all-reduce (all-to-all + ring AG) sent = received = 2(N-1)/N * S
//   fast all-reduce (ring)                          sent = received = 2(N-1)/N * S
//   fast reduce-scatter (halving-doubling, N=2^k)   sent = received = (N-1)/N * S
//   all-gather (ring)                               sent = received = (N-1)/N * S (S = output)
//   broadcast (binomial tree)                       root sends S per child, others receive S
//   point to point (send/recv)                      the sender S, the receiver S (one call per batch)
// (exact per-rank numbers follow the uneven partition; see each op). The call-check headers that
// detect mismatched calls are counted under their own kind, so data bytes stay comparable.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace zt {

/// What a counter counts: the collective it belongs to.
enum class CollKind : uint8_t {
  all_reduce = 0,      ///< all_reduce
  reduce_scatter = 1,  ///< reduce_scatter and reduce_scatter_v
  all_gather = 2,      ///< all_gather and all_gather_v
  broadcast = 3,       ///< broadcast
  barrier = 4,         ///< barrier
  point_to_point = 5,  ///< send and recv (p2p_async batches): bytes this rank sent / received
  call_check = 6,      ///< the small header exchanged before each call to detect mismatches (last)
};

/// Number of CollKind values.
inline constexpr std::size_t kCollKinds = 7;

/// Name of a kind, as used in messages and JSON. @param k the kind. @return e.g. "all_reduce".
constexpr const char* coll_kind_name(CollKind k) {
  constexpr const char* names[kCollKinds] = {"all_reduce", "reduce_scatter", "all_gather", "broadcast",
                                             "barrier",    "point_to_point", "call_check"};
  return names[static_cast<std::size_t>(k)];
}

/// Counters of one kind.
struct CollCounters {
  uint64_t calls = 0;           ///< completed calls
  uint64_t bytes_sent = 0;      ///< payload bytes this rank sent (algorithm model)
  uint64_t bytes_received = 0;  ///< payload bytes this rank received (algorithm model)
};

/// Counters of every kind, for one rank.
struct CommStats {
  std::array<CollCounters, kCollKinds> by_kind{};  ///< indexed by CollKind

  /// Counters of one kind. @param k the kind. @return its counters.
  const CollCounters& operator[](CollKind k) const { return by_kind[static_cast<std::size_t>(k)]; }
  /// Mutable counters of one kind. @param k the kind. @return its counters.
  CollCounters& operator[](CollKind k) { return by_kind[static_cast<std::size_t>(k)]; }
};

/// Counters of the calls between two snapshots (later − earlier), kind by kind.
/// @param a the later snapshot. @param b the earlier one. @return the difference.
inline CommStats operator-(const CommStats& a, const CommStats& b) {
  CommStats d;
  for (std::size_t k = 0; k < kCollKinds; ++k) {
    d.by_kind[k].calls = a.by_kind[k].calls - b.by_kind[k].calls;
    d.by_kind[k].bytes_sent = a.by_kind[k].bytes_sent - b.by_kind[k].bytes_sent;
    d.by_kind[k].bytes_received = a.by_kind[k].bytes_received - b.by_kind[k].bytes_received;
  }
  return d;
}

/// Counters of two sets of calls together, kind by kind. @param a one. @param b the other.
/// @return the sum.
inline CommStats operator+(const CommStats& a, const CommStats& b) {
  CommStats s;
  for (std::size_t k = 0; k < kCollKinds; ++k) {
    s.by_kind[k].calls = a.by_kind[k].calls + b.by_kind[k].calls;
    s.by_kind[k].bytes_sent = a.by_kind[k].bytes_sent + b.by_kind[k].bytes_sent;
    s.by_kind[k].bytes_received = a.by_kind[k].bytes_received + b.by_kind[k].bytes_received;
  }
  return s;
}

/// A backend's running counters: written by its communication thread, read by any thread
/// (Collective::stats() returns a consistent copy). One per Collective instance.
class CommStatsCounter {
 public:
  /// A consistent copy of the counters. @return the copy.
  CommStats snapshot() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }
  /// Count the bytes of one message pattern. @param kind the call kind. @param sent bytes sent.
  /// @param received bytes received.
  void add_bytes(CollKind kind, uint64_t sent, uint64_t received) {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_[kind].bytes_sent += sent;
    stats_[kind].bytes_received += received;
  }
  /// Count one completed call. @param kind its kind.
  void add_call(CollKind kind) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_[kind].calls;
  }

 private:
  mutable std::mutex mutex_;
  CommStats stats_;
};

}  // namespace zt
