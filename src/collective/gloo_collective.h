// collective/gloo_collective.h — the Collective interface on Gloo (CPU, TCP transport).
//
// Two reduction modes (ReduceMode), S = buffer bytes, N = ranks, bytes sent per rank:
//  deterministic (default) — reduce-scatter is an all-to-all (gloo::alltoallv): rank q sends
//    range r of its buffer to rank r, so rank r holds all N copies of its range and sums them
//    locally with the canonical tree over ranks, in rank order. Sent (N-1)/N·S, like one ring
//    pass, but in N-1 simultaneous messages. All-reduce = that reduce-scatter over a balanced
//    partition + a ring all-gather (gloo::allgatherv) of the reduced ranges: 2(N-1)/N·S, the ring
//    all-reduce's cost. Every rank gets the same bits, for every N, and the result equals the
//    canonical tree applied to the N inputs on one machine. Extra memory: one S-sized scratch.
//  fast — Gloo's own algorithms: all-reduce by ring (or bcube), 2(N-1)/N·S; reduce-scatter by
//    halving-doubling (gloo::ReduceScatterHalvingDoubling on a scratch copy, result copied out
//    because Gloo leaves it at the start of the buffer), (N-1)/N·S for N = 2^k; uneven counts
//    (reduce_scatter_v) fall back to a fast all-reduce of the whole buffer, 2(N-1)/N·S. The
//    last halving-doubling object is kept for reuse while the shape repeats (about 3·S of memory). The order of
//    the sum depends on the rank and on N, so results are not bitwise stable across world sizes
//    and in general differ from the canonical tree for N >= 3. fp16/bf16 are reduced with our own
//    elementwise functions (widen to float, add, round: one rounding per add).
//  Both modes: all-gather is Gloo's ring allgatherv, broadcast Gloo's binomial tree, barrier
//  Gloo's barrier.
//
// Call checking: before every call the ranks exchange a 48-byte header (sequence number, kind,
// dtype, op, count, a hash of the per-rank counts, root) with every peer: N-1 tiny messages in
// parallel, one latency. A rank whose call differs (other kind, size, root, or a skipped call)
// makes every rank fail with a message listing each rank's call; a peer that does not arrive
// within the timeout is named.
// Failures: every Gloo error becomes a zt::Error naming the collective, its sequence number and
// the rank; after a failure the instance is broken and every later call fails at once. An error
// whose cause is another rank (a peer that timed out, closed or reset its connection, missed the
// call, or never came to the rendezvous) is a zt::PeerFailed (core/error_report.h), so that a
// launcher can tell the rank that failed from the ranks that only learnt of it. With a PeerProbe
// (check_reachability) the message then says which peers still answer and which do not.
// Point to point (gloo_p2p.cc): a batch runs on the same communication thread, in issue order
// with the collectives; each send is Gloo's unbound-buffer send of the header and of the payload
// to one peer, each receive the matching recv. Messages of one ordered pair are numbered (the
// slot's tag), so they match in issue order. A send completes when its receiver has posted the
// receive (Gloo's transport waits for that notice), hence the rule of collective.h: both
// directions between two ranks in one batch.
// Shutdown: unless it runs while an exception unwinds, the destructor runs one last checked
// barrier (kind "shutdown") before closing the connections. A rank that finished first and closed
// while a peer is still inside the last call would otherwise reset the connection under it (a
// socket closed with unread bytes sends a TCP reset, and Gloo's reused halving-doubling posts
// messages for its next run); a peer still waiting in some other call learns from the header
// mismatch that this rank is leaving. A rank unwinding an exception closes at once.
// SIGPIPE is ignored process-wide (when it has its default action): Gloo writes to sockets with
// plain writev, and a peer that has gone away must be an error, not a killed process.
// Sub-groups (subgroup()): a new GlooCollective with a copy of these options, rank and size taken
// from the member list and the key prefix extended, so every group has its own Gloo context,
// connections, communication thread and keys in the one shared store (see make_subgroup).
// This file does not launch ranks: it expects rank, size and a shared store.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <gloo/rendezvous/store.h>

#include "collective/collective.h"

namespace gloo {
class Context;
namespace transport {
class UnboundBuffer;
}
}  // namespace gloo

namespace zt {

class PeerProbe;

/// Gloo all-reduce algorithm used in fast mode.
enum class FastAllReduce : uint8_t {
  ring = 0,   ///< gloo ring
  bcube = 1,  ///< gloo bcube (halving-doubling like)
};

/// Everything a Gloo rank needs to join its group.
struct GlooOptions {
  int rank = 0;                                         ///< this rank, 0..size-1
  int size = 1;                                         ///< number of ranks, >= 1
  std::shared_ptr<gloo::rendezvous::Store> store;       ///< shared by all ranks (make_store)
  std::string prefix = "zt";                            ///< key prefix: unique per group in one store
  ReduceMode mode = ReduceMode::deterministic;          ///< reduction order
  Accumulation accumulation = Accumulation::fp32;       ///< 16-bit sums in deterministic mode
  FastAllReduce fast_all_reduce = FastAllReduce::ring;  ///< algorithm in fast mode
  std::chrono::milliseconds timeout{30000};             ///< rendezvous and every collective
  std::string hostname = "127.0.0.1";                   ///< address to bind (loopback by default)
  /// Before rendezvous, prove every pair of ranks reaches each other at `hostname`, and keep a
  /// PeerProbe that names the lost peer when a collective fails (collective/peer_probe.h).
  /// Sub-groups do not check again: they share their world group's probe.
  bool check_reachability = false;
  std::string bind_reason;                 ///< how `hostname` was chosen, quoted by the reachability check
  std::shared_ptr<const PeerProbe> probe;  ///< set by the world group for its sub-groups
  std::vector<int> probe_ranks;            ///< each member's rank in the probe's group ("" = the same)
  std::string group;  ///< name in error messages: "" for a group built directly, "mp[2,3]" from subgroup()
};

/// Collective on Gloo. Construction performs the rendezvous (blocks until all ranks joined, or
/// throws after the timeout).
class GlooCollective : public Collective {
 public:
  /// Join the group. @param options rank, size, store, mode, timeout, address.
  explicit GlooCollective(GlooOptions options);
  ~GlooCollective() override;

  int rank() const override { return options_.rank; }
  int size() const override { return options_.size; }
  ReduceMode mode() const override { return options_.mode; }
  CommStats stats() const override;
  /// The Gloo context (null for a world of one), for benchmarks that compare against calling
  /// Gloo directly. Use it only while no call of this Collective is queued (after a wait()).
  /// @return the context.
  std::shared_ptr<gloo::Context> gloo_context() const { return context_; }

 protected:
  Work start_all_reduce(void* data, std::size_t count, DType dtype, ReduceOp op) override;
  Work start_reduce_scatter_v(const void* input, void* output, const std::vector<std::size_t>& counts, DType dtype,
                              ReduceOp op) override;
  Work start_all_gather_v(const void* input, void* output, const std::vector<std::size_t>& counts,
                          DType dtype) override;
  Work start_broadcast(void* data, std::size_t count, DType dtype, int root) override;
  Work start_barrier() override;
  Work start_p2p(std::vector<P2pOp> ops) override;
  std::unique_ptr<Collective> make_subgroup(const std::vector<int>& members, const std::string& name) override;

 private:
  struct Call;     // what one queued call is (header fields + name)
  struct HdCache;  // the last fast reduce-scatter's Gloo algorithm object, reused
  Work submit(Call call, std::function<void()> body);
  void run_checked(const Call& call, const std::function<void()>& body);
  void exchange_headers(const Call& call);
  std::string where(const Call& call) const;
  std::string probe_peers() const;  // " [probing the peers: ...]" after a failure, "" without a probe
  std::string peer_hint(const std::string& gloo_message) const;  // why a Gloo wire error happened
  void* scratch(std::size_t bytes);

  // The data movements themselves (run on the communication thread; gloo_ops.cc).
  void det_reduce_scatter_v(const void* input, void* output, const std::vector<std::size_t>& counts, DType dtype,
                            ReduceOp op, CollKind kind);
  void fast_reduce_scatter_v(const void* input, void* output, const std::vector<std::size_t>& counts, DType dtype,
                             ReduceOp op);
  void fast_all_reduce(void* data, std::size_t count, DType dtype, ReduceOp op, CollKind kind);
  void ring_all_gather_v(const void* input, void* output, const std::vector<std::size_t>& counts, DType dtype,
                         CollKind kind);
  void tree_broadcast(void* data, std::size_t count, DType dtype, int root);
  void gloo_barrier();
  void p2p_batch(const std::string& at, const std::vector<P2pOp>& ops);  // at: where(call)

  GlooOptions options_;
  std::shared_ptr<gloo::Context> context_;
  uint64_t next_seq_ = 0;                // collective calls issued (caller's thread)
  uint64_t next_p2p_seq_ = 0;            // point-to-point batches issued (caller's thread)
  std::vector<uint64_t> sent_to_;        // messages sent to each peer (communication thread)
  std::vector<uint64_t> received_from_;  // messages received from each peer (same)
  // per peer, the receive that never completes, through which its pair's failure reaches a
  // point-to-point wait (gloo_p2p.cc); communication thread only
  std::map<int, std::unique_ptr<gloo::transport::UnboundBuffer>> watch_probes_;
  char watch_byte_ = 0;
  std::vector<unsigned char> scratch_;      // communication thread only
  std::shared_ptr<HdCache> hd_cache_;       // communication thread only
  bool broken_ = false;                     // communication thread only
  bool broken_by_peer_ = false;             // ... and the cause was a peer (zt::PeerFailed)
  std::string broken_reason_;               // communication thread only
  std::map<std::string, int> groups_made_;  // sub-groups created per label (caller's thread)
  CommStatsCounter stats_;
  std::unique_ptr<JobThread> thread_;  // last member: joined first on destruction
};

}  // namespace zt
