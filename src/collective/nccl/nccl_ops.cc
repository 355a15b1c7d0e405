// collective/nccl/nccl_ops.cc — the calls of NcclCollective and the data movements behind them,
// each with its byte count (stats.h: S_q = bytes of rank q's range, S = their sum, r = this rank,
// N ranks; derived from the messages posted or, for NCCL's own collectives, from the ring model).
// Everything here runs on the communication thread and only enqueues work on the communication
// stream; run_call (nccl_collective.cc) waits for it with the timeout.
#include <cstring>

#include "collective/nccl/local_reduce_cuda.h"
#include "collective/nccl/nccl_collective.h"
#include "collective/nccl/nccl_util.h"

namespace zt {

using nccl::check_cuda;
using nccl::nccl_type;

namespace {

bool even_counts(const std::vector<std::size_t>& counts) {
  for (std::size_t c : counts)
    if (c != counts[0]) return false;
  return true;
}

unsigned char* at_byte(const void* p, std::size_t offset) {
  return static_cast<unsigned char*>(const_cast<void*>(p)) + offset;
}

}  // namespace

void NcclCollective::copy_on_stream(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0 || dst == src) return;
  check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_), current_at_ + ": cudaMemcpyAsync");
}

// Deterministic reduce-scatter-v: NCCL only moves bytes (grouped send/recv, an all-to-all), and
// our kernel reduces the N received rows along the canonical tree over rank index. Rank q's
// copy of our range lands in row q, our own copy is a device memcpy.
// Sent: every range but ours, S - S_r. Received: our range from N-1 peers, (N-1) S_r.
void NcclCollective::det_reduce_scatter_v(const void* input, void* output, const std::vector<std::size_t>& counts,
                                          DType dtype, ReduceOp op, CollKind kind) {
  const int n = size(), r = rank();
  const std::size_t es = dtype_size(dtype);
  const std::size_t mine = counts[r] * es;
  const auto offsets = offsets_of(counts);
  unsigned char* rows = static_cast<unsigned char*>(scratch(mine * n));
  copy_on_stream(rows + r * mine, at_byte(input, offsets[r] * es), mine);
  settle(ncclGroupStart(), "ncclGroupStart");
  for (int q = 0; q < n; ++q) {
    if (q == r) continue;
    if (counts[q])
      settle(ncclSend(at_byte(input, offsets[q] * es), counts[q] * es, ncclUint8, q, comm_, stream_), "ncclSend");
    if (mine) settle(ncclRecv(rows + q * mine, mine, ncclUint8, q, comm_, stream_), "ncclRecv");
  }
  settle(ncclGroupEnd(), "ncclGroupEnd");
  if (counts[r])
    nccl::reduce_rows_canonical_cuda(rows, counts[r], n, output, counts[r], dtype, op, options_.accumulation, stream_);
  stats_.add_bytes(kind, total_of(counts) * es - mine, mine * (n - 1));
}

// Fast all-reduce: NCCL's, summation order NCCL's (header comment). Ring model: 2 (S - S/N) each way.
void NcclCollective::fast_all_reduce(void* data, std::size_t count, DType dtype, CollKind kind) {
  settle(ncclAllReduce(data, data, count, nccl_type(dtype), ncclSum, comm_, stream_), "ncclAllReduce");
  const uint64_t bytes = count * dtype_size(dtype);
  const uint64_t moved = 2 * (bytes - bytes / size());
  stats_.add_bytes(kind, moved, moved);
}

// Fast reduce-scatter-v. Equal counts: ncclReduceScatter (in place when output = input + r·shard,
// which NCCL accepts as in-place); ring model S - S/N each way. Uneven counts: NCCL has no
// reduce-scatter-v, so ncclAllReduce of a scratch copy and keep our range, 2 (S - S/N) each way,
// counted as such (the Gloo backend's rule; no hidden padding).
void NcclCollective::fast_reduce_scatter_v(const void* input, void* output, const std::vector<std::size_t>& counts,
                                           DType dtype) {
  const int r = rank();
  const std::size_t es = dtype_size(dtype);
  const uint64_t total = total_of(counts);
  if (even_counts(counts)) {
    settle(ncclReduceScatter(input, output, counts[0], nccl_type(dtype), ncclSum, comm_, stream_), "ncclReduceScatter");
    const uint64_t moved = total * es - total * es / size();
    stats_.add_bytes(CollKind::reduce_scatter, moved, moved);
    return;
  }
  void* buf = scratch(total * es);
  copy_on_stream(buf, input, total * es);
  fast_all_reduce(buf, total, dtype, CollKind::reduce_scatter);
  copy_on_stream(output, at_byte(buf, offsets_of(counts)[r] * es), counts[r] * es);
}

// All-gather-v (both modes: no arithmetic). Equal counts: ncclAllGather, ring model S - S/N each
// way. Uneven: every rank sends its range to each peer (grouped send/recv, no padding): sent
// (N-1) S_r, received S - S_r.
void NcclCollective::all_gather_v(const void* input, void* output, const std::vector<std::size_t>& counts, DType dtype,
                                  CollKind kind) {
  const int n = size(), r = rank();
  const std::size_t es = dtype_size(dtype);
  const uint64_t total = total_of(counts) * es;
  if (even_counts(counts)) {
    settle(ncclAllGather(input, output, counts[0] * es, ncclUint8, comm_, stream_), "ncclAllGather");
    stats_.add_bytes(kind, total - total / n, total - total / n);
    return;
  }
  const auto offsets = offsets_of(counts);
  unsigned char* mine = at_byte(output, offsets[r] * es);
  copy_on_stream(mine, input, counts[r] * es);
  settle(ncclGroupStart(), "ncclGroupStart");
  for (int q = 0; q < n; ++q) {
    if (q == r) continue;
    if (counts[r]) settle(ncclSend(mine, counts[r] * es, ncclUint8, q, comm_, stream_), "ncclSend");
    if (counts[q])
      settle(ncclRecv(at_byte(output, offsets[q] * es), counts[q] * es, ncclUint8, q, comm_, stream_), "ncclRecv");
  }
  settle(ncclGroupEnd(), "ncclGroupEnd");
  stats_.add_bytes(kind, (n - 1) * counts[r] * es, total - counts[r] * es);
}

// Broadcast: ncclBroadcast, modelled as a chain from the root in rank order (v = (r - root) mod N):
// every rank but the chain's last sends S, every rank but the root receives S. NCCL's ring follows
// the topology, so which rank is last may differ; the totals over ranks are the ring's.
void NcclCollective::broadcast_ring(void* data, std::size_t count, DType dtype, int root) {
  const int n = size();
  const uint64_t bytes = count * dtype_size(dtype);
  settle(ncclBroadcast(data, data, bytes, ncclUint8, root, comm_, stream_), "ncclBroadcast");
  const int v = (rank() - root + n) % n;
  stats_.add_bytes(CollKind::broadcast, v < n - 1 ? bytes : 0, v > 0 ? bytes : 0);
}

// Barrier: NCCL has none; an all-reduce of one float completes on a rank only after every rank
// has contributed. Counted as a call without bytes, like the Gloo barrier.
void NcclCollective::barrier_all_reduce() {
  settle(ncclAllReduce(barrier_word_, barrier_word_, 1, ncclFloat32, ncclSum, comm_, stream_), "ncclAllReduce");
}

Work NcclCollective::start_all_reduce(void* data, std::size_t count, DType dtype, ReduceOp op) {
  check_device_pointer(data, count * dtype_size(dtype), "all_reduce");
  return submit(Call{CollKind::all_reduce, "all_reduce", 0}, [=, this] {
    if (count == 0 || size() == 1) return;
    if (options_.mode == ReduceMode::fast && op == ReduceOp::sum)
      return fast_all_reduce(data, count, dtype, CollKind::all_reduce);
    // deterministic, and max in either mode (NaN-safe: see the header)
    const auto counts = balanced_counts(count, size());
    unsigned char* mine = at_byte(data, offsets_of(counts)[rank()] * dtype_size(dtype));
    det_reduce_scatter_v(data, mine, counts, dtype, op, CollKind::all_reduce);
    all_gather_v(mine, data, counts, dtype, CollKind::all_reduce);
  });
}

Work NcclCollective::start_reduce_scatter_v(const void* input, void* output, const std::vector<std::size_t>& counts,
                                            DType dtype, ReduceOp op) {
  const uint64_t total = total_of(counts);
  const std::size_t es = dtype_size(dtype);
  check_device_pointer(input, total * es, "reduce_scatter input");
  check_device_pointer(output, counts[rank()] * es, "reduce_scatter output");
  return submit(Call{CollKind::reduce_scatter, "reduce_scatter", 0}, [=, this] {
    if (total == 0) return;
    if (size() == 1) return copy_on_stream(output, input, total * es);
    if (options_.mode == ReduceMode::fast && op == ReduceOp::sum)
      return fast_reduce_scatter_v(input, output, counts, dtype);
    det_reduce_scatter_v(input, output, counts, dtype, op, CollKind::reduce_scatter);
  });
}

Work NcclCollective::start_all_gather_v(const void* input, void* output, const std::vector<std::size_t>& counts,
                                        DType dtype) {
  const uint64_t total = total_of(counts);
  const std::size_t es = dtype_size(dtype);
  check_device_pointer(output, total * es, "all_gather output");
  check_device_pointer(input, counts[rank()] * es, "all_gather input");
  return submit(Call{CollKind::all_gather, "all_gather", 0}, [=, this] {
    if (total == 0) return;
    if (size() == 1) return copy_on_stream(output, input, total * es);
    all_gather_v(input, output, counts, dtype, CollKind::all_gather);
  });
}

Work NcclCollective::start_broadcast(void* data, std::size_t count, DType dtype, int root) {
  check_device_pointer(data, count * dtype_size(dtype), "broadcast");
  return submit(Call{CollKind::broadcast, "broadcast", 0}, [=, this] {
    if (count == 0 || size() == 1) return;
    broadcast_ring(data, count, dtype, root);
  });
}

Work NcclCollective::start_barrier() {
  return submit(Call{CollKind::barrier, "barrier", 0}, [this] {
    if (size() > 1) barrier_all_reduce();
  });
}

// Point to point: one NCCL group of ncclSend/ncclRecv, so the batch's transfers progress together
// (two ranks sending to each other in one batch cannot block each other). NCCL matches the sends
// and receives of one pair in issue order, as the interface promises. Sent: S per send; received:
// S per receive. No header check on this backend (a mismatch is NCCL's error or the timeout).
void NcclCollective::p2p_group(const std::vector<P2pOp>& ops) {
  uint64_t sent = 0, received = 0;
  settle(ncclGroupStart(), "ncclGroupStart");
  for (const P2pOp& op : ops) {
    if (!op.count) continue;
    if (op.dir == P2pOp::Dir::send) {
      settle(ncclSend(op.data, op.bytes(), ncclUint8, op.peer, comm_, stream_), "ncclSend");
      sent += op.bytes();
    } else {
      settle(ncclRecv(op.data, op.bytes(), ncclUint8, op.peer, comm_, stream_), "ncclRecv");
      received += op.bytes();
    }
  }
  settle(ncclGroupEnd(), "ncclGroupEnd");
  stats_.add_bytes(CollKind::point_to_point, sent, received);
}

Work NcclCollective::start_p2p(std::vector<P2pOp> ops) {
  for (const P2pOp& op : ops) check_device_pointer(op.data, op.bytes(), op.dir == P2pOp::Dir::send ? "send" : "recv");
  return submit(Call{CollKind::point_to_point, "p2p", 0}, [this, ops = std::move(ops)] { p2p_group(ops); });
}

}  // namespace zt
