// collective/collective.h — the Collective interface: all-reduce, reduce-scatter, all-gather,
// broadcast and barrier over the ranks of one group, on fp32 / fp16 / bf16 buffers.
//
// Semantics (N = size(), r = rank()):
//  - all_reduce(x[n]): every rank ends with op over ranks of x, element-wise.
//  - reduce_scatter(in[N*shard], out[shard]): rank r receives op over ranks of
//    in[r*shard, (r+1)*shard). _v variant: per-rank counts c (any, 0 allowed), rank r receives the
//    reduced range [off_r, off_r + c_r) of an input of sum(c) elements.
//  - all_gather(in[shard], out[N*shard]): out[q*shard, ...) = rank q's in; _v: per-rank counts.
//  - broadcast(x[n], root): every rank ends with root's x.
//  - send(x[n], peer) / recv(y[n], peer): point to point; y on `peer` gets this rank's x. Only the
//    two ranks take part. Messages between one ordered pair are matched in the order they were
//    issued (the k-th send from a to b lands in b's k-th recv from a), whatever other traffic
//    runs meanwhile. p2p_async(ops) issues several sends and receives as one batch that
//    completes when all of them have (torch's batch_isend_irecv, an NCCL group): a rank that
//    sends to a peer which at the same time sends to it must put both directions in one batch,
//    because a send completes only once its receiver has posted the matching recv. Transfers run
//    in issue order with the group's collectives, so a rank that sends and then joins a
//    collective needs its receiver to post the receive before joining that collective too.
// Lengths that must divide by N are checked, never padded behind the caller's back (padding.h).
// Reduction order: in ReduceMode::deterministic every element is reduced over ranks along the
// canonical aligned pairwise tree (reduce/canonical_tree.h), identically on every rank; in
// ReduceMode::fast the backend's own algorithms run and the order is not stable (gloo_collective.h
// documents both, with their cost). Every call is queued on the Collective's communication thread
// and runs in issue order (core/job_thread.h); the *_async forms return a Work to wait on.
// Sub-groups: subgroup(members, name) makes a new, independent Collective over some of the ranks
// (torch.distributed.new_group, ncclCommSplit); grid.h builds the data-parallel x model-parallel
// groups from it.
// This header is backend-free: Gloo (CPU, gloo_collective.h) and NCCL (GPU, nccl/) implement it.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "collective/dtype.h"
#include "collective/padding.h"
#include "collective/stats.h"
#include "core/check.h"
#include "core/job_thread.h"

namespace zt {

/// Element-wise reduction applied over ranks.
enum class ReduceOp : uint8_t {
  sum = 0,  ///< sum (order-sensitive in floating point)
  max = 1,  ///< maximum; a NaN on any rank gives NaN (needed for overflow flags)
};

/// How reductions are ordered.
enum class ReduceMode : uint8_t {
  deterministic = 0,  ///< canonical tree over ranks, bitwise identical on every rank (default)
  fast = 1,           ///< the backend's own algorithms; order depends on rank and world size
};

/// Accumulation of 16-bit (fp16/bf16) sums in deterministic mode.
enum class Accumulation : uint8_t {
  fp32 = 0,     ///< widen to fp32, add along the tree in fp32, round once at the end (default)
  storage = 1,  ///< round to the 16-bit type after every add, as a 16-bit wire format would
};

/// Name of an op. @param op the op. @return "sum" or "max".
constexpr const char* reduce_op_name(ReduceOp op) { return op == ReduceOp::sum ? "sum" : "max"; }
/// Name of a mode. @param m the mode. @return "deterministic" or "fast".
constexpr const char* reduce_mode_name(ReduceMode m) {
  return m == ReduceMode::deterministic ? "deterministic" : "fast";
}

/// One transfer of a point-to-point batch (Collective::p2p_async).
struct P2pOp {
  /// Which way the bytes go.
  enum class Dir : uint8_t {
    send = 0,  ///< this rank's buffer goes to the peer
    recv = 1,  ///< the peer's buffer lands in this rank's
  };
  Dir dir = Dir::send;        ///< send or receive
  int peer = -1;              ///< the other rank, in this group's numbering; never this rank
  void* data = nullptr;       ///< send: the bytes to send (only read); recv: where they land
  std::size_t count = 0;      ///< elements; the two sides must agree (and on the dtype)
  DType dtype = DType::fp32;  ///< element type

  /// A send. @param data count elements. @param count elements. @param dtype type.
  /// @param peer the receiver. @return the op.
  static P2pOp send(const void* data, std::size_t count, DType dtype, int peer) {
    return P2pOp{Dir::send, peer, const_cast<void*>(data), count, dtype};
  }
  /// A receive. @param data room for count elements. @param count elements. @param dtype type.
  /// @param peer the sender. @return the op.
  static P2pOp recv(void* data, std::size_t count, DType dtype, int peer) {
    return P2pOp{Dir::recv, peer, data, count, dtype};
  }
  /// Bytes moved. @return count × element size.
  std::size_t bytes() const { return count * dtype_size(dtype); }
};

/// How a sub-group is named in messages and store keys: its name and its member list.
/// @param name the group's name. @param members its ranks in the parent group.
/// @return e.g. "mp[2,3]".
inline std::string group_label(const std::string& name, const std::vector<int>& members) {
  std::string s = name;
  s += '[';
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(members[i]);
  }
  s += ']';
  return s;
}

/// A group of ranks that run collectives together. One instance per rank; use it from one
/// thread at a time (calls are queued in the order that thread issues them).
class Collective {
 public:
  virtual ~Collective() = default;

  /// This rank's index. @return 0..size()-1.
  virtual int rank() const = 0;
  /// Number of ranks. @return N >= 1.
  virtual int size() const = 0;
  /// Reduction mode of this instance. @return the mode.
  virtual ReduceMode mode() const = 0;
  /// Counters so far (a consistent copy; operations still queued are not in it).
  /// @return per-kind calls and bytes.
  virtual CommStats stats() const = 0;

  // ---- type-erased core (pointer, count, dtype); asynchronous ----

  /// In-place all-reduce. @param data n elements (in and out). @param count n.
  /// @param dtype element type. @param op reduction. @return the completion handle.
  Work all_reduce_async(void* data, std::size_t count, DType dtype, ReduceOp op = ReduceOp::sum) {
    ZT_CHECK(count == 0 || data, "all_reduce: null buffer with ", count, " elements");
    return start_all_reduce(data, count, dtype, op);
  }
  /// Uneven reduce-scatter. @param input sum(counts) elements. @param output counts[rank()]
  /// elements; may be exactly input + offset of this rank's range (in place), else must not
  /// overlap input. @param counts per-rank counts (size() entries, zeros allowed).
  /// @param dtype element type. @param op reduction. @return the completion handle.
  Work reduce_scatter_v_async(const void* input, void* output, const std::vector<std::size_t>& counts, DType dtype,
                              ReduceOp op = ReduceOp::sum) {
    check_counts(counts, "reduce_scatter_v");
    return start_reduce_scatter_v(input, output, counts, dtype, op);
  }
  /// Uneven all-gather. @param input counts[rank()] elements; may be output + this rank's offset
  /// (in place). @param output sum(counts) elements. @param counts per-rank counts.
  /// @param dtype element type. @return the completion handle.
  Work all_gather_v_async(const void* input, void* output, const std::vector<std::size_t>& counts, DType dtype) {
    check_counts(counts, "all_gather_v");
    return start_all_gather_v(input, output, counts, dtype);
  }
  /// Even reduce-scatter. @param input size()*shard elements. @param output shard elements.
  /// @param shard elements per rank. @param dtype element type. @param op reduction.
  /// @return the completion handle.
  Work reduce_scatter_async(const void* input, void* output, std::size_t shard, DType dtype,
                            ReduceOp op = ReduceOp::sum) {
    return reduce_scatter_v_async(input, output, std::vector<std::size_t>(size(), shard), dtype, op);
  }
  /// Even all-gather. @param input shard elements. @param output size()*shard elements.
  /// @param shard elements per rank. @param dtype element type. @return the completion handle.
  Work all_gather_async(const void* input, void* output, std::size_t shard, DType dtype) {
    return all_gather_v_async(input, output, std::vector<std::size_t>(size(), shard), dtype);
  }
  /// In-place broadcast. @param data n elements (root's are sent, others' overwritten).
  /// @param count n. @param dtype element type. @param root source rank. @return the handle.
  Work broadcast_async(void* data, std::size_t count, DType dtype, int root) {
    ZT_CHECK(root >= 0 && root < size(), "broadcast: root ", root, " out of range for ", size(), " ranks");
    ZT_CHECK(count == 0 || data, "broadcast: null buffer with ", count, " elements");
    return start_broadcast(data, count, dtype, root);
  }
  /// Barrier: completes when every rank has reached it. @return the completion handle.
  Work barrier_async() { return start_barrier(); }

  // ---- point to point: only the two ranks of each transfer take part ----

  /// A batch of sends and receives, issued together and complete together (file comment). Runs
  /// in issue order with this group's collectives; the other ranks of the group do not take
  /// part. A peer that does not post its side within the timeout, or dies, fails the batch.
  /// @param ops the transfers; peers in range and not this rank, buffers non-null when count > 0,
  /// the receive buffers disjoint from every other buffer of the batch. @return the handle.
  Work p2p_async(std::vector<P2pOp> ops) {
    check_p2p(ops);
    return start_p2p(std::move(ops));
  }
  /// Send to one peer. @param data count elements. @param count elements. @param dtype type.
  /// @param peer the receiver. @return the handle.
  Work send_async(const void* data, std::size_t count, DType dtype, int peer) {
    return p2p_async({P2pOp::send(data, count, dtype, peer)});
  }
  /// Receive from one peer. @param data room for count elements. @param count elements.
  /// @param dtype type. @param peer the sender. @return the handle.
  Work recv_async(void* data, std::size_t count, DType dtype, int peer) {
    return p2p_async({P2pOp::recv(data, count, dtype, peer)});
  }
  /// Typed send. @param data the buffer. @param peer the receiver. @return the handle.
  template <typename T>
  Work send_async(std::span<const T> data, int peer) {
    return send_async(data.data(), data.size(), dtype_of_v<T>, peer);
  }
  /// Typed receive. @param data the buffer. @param peer the sender. @return the handle.
  template <typename T>
  Work recv_async(std::span<T> data, int peer) {
    return recv_async(data.data(), data.size(), dtype_of_v<T>, peer);
  }
  /// Synchronous typed send. @param data the buffer. @param peer the receiver.
  template <typename T>
  void send(std::span<const T> data, int peer) {
    send_async(data, peer).wait();
  }
  /// Synchronous typed receive. @param data the buffer. @param peer the sender.
  template <typename T>
  void recv(std::span<T> data, int peer) {
    recv_async(data, peer).wait();
  }

  // ---- typed spans; the sizes are checked against each other ----

  /// Typed asynchronous all-reduce. @param data the buffer. @param op reduction. @return handle.
  template <typename T>
  Work all_reduce_async(std::span<T> data, ReduceOp op = ReduceOp::sum) {
    return all_reduce_async(data.data(), data.size(), dtype_of_v<T>, op);
  }
  /// Typed asynchronous reduce-scatter; input.size() must be size() * output.size().
  /// @param input the full buffer. @param output this rank's shard. @param op reduction.
  /// @return handle.
  template <typename T>
  Work reduce_scatter_async(std::span<const T> input, std::span<T> output, ReduceOp op = ReduceOp::sum) {
    ZT_CHECK(input.size() == output.size() * static_cast<std::size_t>(size()), "reduce_scatter: input has ",
             input.size(), " elements, expected ", size(), " x ", output.size(),
             " (output shard) = ", output.size() * size());
    return reduce_scatter_async(input.data(), output.data(), output.size(), dtype_of_v<T>, op);
  }
  /// Typed asynchronous all-gather; output.size() must be size() * input.size().
  /// @param input this rank's shard. @param output the full buffer. @return handle.
  template <typename T>
  Work all_gather_async(std::span<const T> input, std::span<T> output) {
    ZT_CHECK(output.size() == input.size() * static_cast<std::size_t>(size()), "all_gather: output has ", output.size(),
             " elements, expected ", size(), " x ", input.size(), " (input shard) = ", input.size() * size());
    return all_gather_async(input.data(), output.data(), input.size(), dtype_of_v<T>);
  }
  /// Typed asynchronous uneven reduce-scatter. @param input sum(counts) elements.
  /// @param output counts[rank()] elements. @param counts per-rank counts. @param op reduction.
  /// @return handle.
  template <typename T>
  Work reduce_scatter_v_async(std::span<const T> input, std::span<T> output, const std::vector<std::size_t>& counts,
                              ReduceOp op = ReduceOp::sum) {
    check_v_sizes(input.size(), output.size(), counts, "reduce_scatter_v", "input", "output");
    return reduce_scatter_v_async(input.data(), output.data(), counts, dtype_of_v<T>, op);
  }
  /// Typed asynchronous uneven all-gather. @param input counts[rank()] elements.
  /// @param output sum(counts) elements. @param counts per-rank counts. @return handle.
  template <typename T>
  Work all_gather_v_async(std::span<const T> input, std::span<T> output, const std::vector<std::size_t>& counts) {
    check_v_sizes(output.size(), input.size(), counts, "all_gather_v", "output", "input");
    return all_gather_v_async(input.data(), output.data(), counts, dtype_of_v<T>);
  }
  /// Typed asynchronous broadcast. @param data the buffer. @param root source rank. @return handle.
  template <typename T>
  Work broadcast_async(std::span<T> data, int root) {
    return broadcast_async(data.data(), data.size(), dtype_of_v<T>, root);
  }

  // ---- synchronous forms: queue, then wait ----

  /// Synchronous all-reduce. @param data the buffer. @param op reduction.
  template <typename T>
  void all_reduce(std::span<T> data, ReduceOp op = ReduceOp::sum) {
    all_reduce_async(data, op).wait();
  }
  /// Synchronous reduce-scatter. @param input full buffer. @param output shard. @param op reduction.
  template <typename T>
  void reduce_scatter(std::span<const T> input, std::span<T> output, ReduceOp op = ReduceOp::sum) {
    reduce_scatter_async(input, output, op).wait();
  }
  /// Synchronous all-gather. @param input shard. @param output full buffer.
  template <typename T>
  void all_gather(std::span<const T> input, std::span<T> output) {
    all_gather_async(input, output).wait();
  }
  /// Synchronous uneven reduce-scatter. @param input full buffer. @param output this rank's part.
  /// @param counts per-rank counts. @param op reduction.
  template <typename T>
  void reduce_scatter_v(std::span<const T> input, std::span<T> output, const std::vector<std::size_t>& counts,
                        ReduceOp op = ReduceOp::sum) {
    reduce_scatter_v_async(input, output, counts, op).wait();
  }
  /// Synchronous uneven all-gather. @param input this rank's part. @param output full buffer.
  /// @param counts per-rank counts.
  template <typename T>
  void all_gather_v(std::span<const T> input, std::span<T> output, const std::vector<std::size_t>& counts) {
    all_gather_v_async(input, output, counts).wait();
  }
  /// Synchronous broadcast. @param data the buffer. @param root source rank.
  template <typename T>
  void broadcast(std::span<T> data, int root) {
    broadcast_async(data, root).wait();
  }
  /// Synchronous barrier.
  void barrier() { barrier_async().wait(); }

  // ---- sub-groups ----

  /// A new, independent Collective over some ranks of this group, as torch.distributed.new_group
  /// or ncclCommSplit. Its rank i is this group's rank members[i]; it has its own communication
  /// thread, call sequence, call checking and stats(), and this group's mode, accumulation and
  /// timeout. Every rank in `members` calls it with the same list and name; ranks not in it must
  /// not (they create their own groups). Creating a group is itself a rendezvous: the members
  /// block here until all of them have joined, or fail after the timeout (a member that never
  /// joins makes the others fail, never hang). A group of one waits for no one. Groups never share
  /// collective calls with this group or with each other: a call on the group is not a call
  /// here, and this group's call sequence does not move. The same name and list may be used
  /// again (after the earlier group is gone, or while it lives): every creation is a new group.
  /// Call it from the thread that issues this group's calls. Members that create several groups
  /// must create them in one order on every rank (grid.h explains why).
  /// @param members ranks of this group, in the order that defines the new ranks; non-empty,
  /// no duplicates, each in 0..size()-1, and containing rank().
  /// @param name the group's name (letters, digits, '_', '-', '.'), shown in error messages.
  /// @return this rank's instance of the new group; zt::Error for a bad list or name, or when
  /// the rendezvous fails.
  std::unique_ptr<Collective> subgroup(const std::vector<int>& members, const std::string& name) {
    check_members(members, name);
    return make_subgroup(members, name);
  }

 protected:
  /// Backend: queue an all-reduce. @param data buffer. @param count elements. @param dtype type.
  /// @param op reduction. @return handle.
  virtual Work start_all_reduce(void* data, std::size_t count, DType dtype, ReduceOp op) = 0;
  /// Backend: queue a reduce-scatter-v. @param input full buffer. @param output this rank's part.
  /// @param counts per-rank counts (validated). @param dtype type. @param op reduction. @return handle.
  virtual Work start_reduce_scatter_v(const void* input, void* output, const std::vector<std::size_t>& counts,
                                      DType dtype, ReduceOp op) = 0;
  /// Backend: queue an all-gather-v. @param input this rank's part. @param output full buffer.
  /// @param counts per-rank counts (validated). @param dtype type. @return handle.
  virtual Work start_all_gather_v(const void* input, void* output, const std::vector<std::size_t>& counts,
                                  DType dtype) = 0;
  /// Backend: queue a broadcast. @param data buffer. @param count elements. @param dtype type.
  /// @param root source rank (validated). @return handle.
  virtual Work start_broadcast(void* data, std::size_t count, DType dtype, int root) = 0;
  /// Backend: queue a barrier. @return handle.
  virtual Work start_barrier() = 0;
  /// Backend: queue a batch of point-to-point transfers. @param ops validated (p2p_async).
  /// @return handle.
  virtual Work start_p2p(std::vector<P2pOp> ops) = 0;
  /// Backend: build this rank's instance of a sub-group (rendezvous included).
  /// @param members the ranks, validated as subgroup() documents. @param name its valid name.
  /// @return the new group.
  virtual std::unique_ptr<Collective> make_subgroup(const std::vector<int>& members, const std::string& name) = 0;

 private:
  void check_counts(const std::vector<std::size_t>& counts, const char* what) const {
    ZT_CHECK(counts.size() == static_cast<std::size_t>(size()), what, ": ", counts.size(),
             " per-rank counts given for ", size(), " ranks");
  }
  void check_p2p(const std::vector<P2pOp>& ops) const {
    for (const P2pOp& op : ops) {
      const char* what = op.dir == P2pOp::Dir::send ? "send" : "recv";
      ZT_CHECK(op.peer >= 0 && op.peer < size(), what, " on rank ", rank(), ": peer ", op.peer,
               " out of range for a group of ", size(), " ranks");
      ZT_CHECK(op.peer != rank(), what, " on rank ", rank(), ": the peer is this rank (copy the buffer instead)");
      ZT_CHECK(op.count == 0 || op.data, what, " on rank ", rank(), ": null buffer with ", op.count, " elements");
    }
    // A receive that overlaps another buffer of the batch would race with it (the transfers of a
    // batch run concurrently).
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].dir != P2pOp::Dir::recv || !ops[i].count) continue;
      const auto* a = static_cast<const unsigned char*>(ops[i].data);
      for (std::size_t j = 0; j < ops.size(); ++j) {
        if (j == i || !ops[j].count) continue;
        const auto* b = static_cast<const unsigned char*>(ops[j].data);
        ZT_CHECK(a + ops[i].bytes() <= b || b + ops[j].bytes() <= a, "recv on rank ", rank(), " from peer ",
                 ops[i].peer, ": its buffer overlaps another buffer of the same batch");
      }
    }
  }
  void check_members(const std::vector<int>& members, const std::string& name) const {
    bool good_name = !name.empty();
    for (char ch : name)
      good_name = good_name && ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                                ch == '_' || ch == '-' || ch == '.');
    ZT_CHECK(good_name, "subgroup: name '", name, "' must be non-empty letters, digits, '_', '-' or '.'");
    ZT_CHECK(!members.empty(), "subgroup ", name, ": empty member list");
    std::vector<char> seen(size(), 0);
    bool mine = false;
    for (int m : members) {
      ZT_CHECK(m >= 0 && m < size(), "subgroup ", group_label(name, members), ": rank ", m,
               " out of range for a group of ", size(), " ranks");
      ZT_CHECK(!seen[m], "subgroup ", group_label(name, members), ": rank ", m, " listed twice");
      seen[m] = 1;
      mine = mine || m == rank();
    }
    ZT_CHECK(mine, "subgroup ", group_label(name, members), ": calling rank ", rank(),
             " is not a member (only the listed ranks create a group)");
  }
  void check_v_sizes(std::size_t full, std::size_t part, const std::vector<std::size_t>& counts, const char* what,
                     const char* full_name, const char* part_name) const {
    check_counts(counts, what);
    const std::size_t total = total_of(counts);
    ZT_CHECK(full == total, what, ": ", full_name, " has ", full, " elements, counts sum to ", total);
    ZT_CHECK(part == counts[rank()], what, ": ", part_name, " has ", part, " elements, rank ", rank(), "'s count is ",
             counts[rank()]);
  }
};

}  // namespace zt
