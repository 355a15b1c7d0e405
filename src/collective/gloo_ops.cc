// collective/gloo_ops.cc — the data movements of GlooCollective, each with its byte count.
//
// Byte counts are derived from the messages each algorithm posts (not measured on the wire):
// S_q = bytes of rank q's range, S = sum of S_q, r = this rank, N ranks.
#include <climits>
#include <cstring>

#include <gloo/allgatherv.h>
#include <gloo/allreduce.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/reduce_scatter.h>

#include "collective/gloo_collective.h"
#include "collective/local_reduce.h"

namespace zt {
namespace {

std::vector<int64_t> bytes_per_rank(const std::vector<std::size_t>& counts, std::size_t esize) {
  std::vector<int64_t> b(counts.size());
  for (std::size_t q = 0; q < counts.size(); ++q) b[q] = static_cast<int64_t>(counts[q] * esize);
  return b;
}

// Gloo's old-style reduce-scatter wants a ReductionFunction<T> (x = x op y). One per dtype/op,
// built from the same elementwise functions as the fast all-reduce.
template <typename Word, DType D, ReduceOp Op>
void inplace_fn(Word* x, const Word* y, std::size_t n) {
  elementwise_fn(D, Op)(x, x, y, n);
}
template <typename Word, DType D, ReduceOp Op>
const gloo::ReductionFunction<Word>* reduction_function() {
  static const gloo::ReductionFunction<Word> fn(gloo::CUSTOM, &inplace_fn<Word, D, Op>);
  return &fn;
}

template <typename Word, DType D>
std::unique_ptr<gloo::Algorithm> make_halving_doubling(const std::shared_ptr<gloo::Context>& ctx, void* buf, int count,
                                                       const std::vector<int>& recv, ReduceOp op) {
  const auto* fn =
      op == ReduceOp::sum ? reduction_function<Word, D, ReduceOp::sum>() : reduction_function<Word, D, ReduceOp::max>();
  return std::make_unique<gloo::ReduceScatterHalvingDoubling<Word>>(ctx, std::vector<Word*>{static_cast<Word*>(buf)},
                                                                    count, recv, fn);
}

}  // namespace

// Gloo's halving-doubling object allocates two buffer-sized vectors and registers its buffers
// with every peer when built; building one per call cost more than the reduction itself, so the
// last one is kept (with the buffer it works on) and reused while the call shape repeats.
struct GlooCollective::HdCache {
  uint64_t count = 0;
  DType dtype = DType::fp32;
  ReduceOp op = ReduceOp::sum;
  std::vector<unsigned char> buffer;
  std::unique_ptr<gloo::Algorithm> algorithm;
};

// Deterministic reduce-scatter-v: all-to-all, then the canonical tree over the N received rows.
// Sent: every range but ours, S - S_r. Received: our range from N-1 peers, (N-1) S_r.
void GlooCollective::det_reduce_scatter_v(const void* input, void* output, const std::vector<std::size_t>& counts,
                                          DType dtype, ReduceOp op, CollKind kind) {
  const int n = size(), r = rank();
  const std::size_t es = dtype_size(dtype);
  const std::size_t my_bytes = counts[r] * es;
  unsigned char* rows = static_cast<unsigned char*>(scratch(my_bytes * n));
  gloo::AlltoallvOptions opts(context_);
  opts.setInput<unsigned char>(static_cast<unsigned char*>(const_cast<void*>(input)), bytes_per_rank(counts, es));
  opts.setOutput<unsigned char>(rows, std::vector<int64_t>(n, static_cast<int64_t>(my_bytes)));
  opts.setTimeout(options_.timeout);
  gloo::alltoallv(opts);
  std::vector<void*> row_ptrs(n);
  for (int q = 0; q < n; ++q) row_ptrs[q] = rows + my_bytes * q;
  reduce_rows_canonical(row_ptrs.data(), n, output, counts[r], dtype, op, options_.accumulation);
  stats_.add_bytes(kind, total_of(counts) * es - my_bytes, my_bytes * (n - 1));
}

// Ring all-gather (gloo::allgatherv): step i forwards range (r - i) mod N to rank r+1, so a rank
// sends every range except (r+1)'s and receives every range except its own.
void GlooCollective::ring_all_gather_v(const void* input, void* output, const std::vector<std::size_t>& counts,
                                       DType dtype, CollKind kind) {
  const int n = size(), r = rank();
  const std::size_t es = dtype_size(dtype);
  const auto offsets = offsets_of(counts);
  unsigned char* out = static_cast<unsigned char*>(output);
  gloo::AllgathervOptions opts(context_);
  if (input != out + offsets[r] * es)
    opts.setInput<unsigned char>(static_cast<unsigned char*>(const_cast<void*>(input)), counts[r] * es);
  std::vector<std::size_t> bytes(n);
  for (int q = 0; q < n; ++q) bytes[q] = counts[q] * es;
  const uint64_t total = total_of(counts) * es;
  opts.setOutput<unsigned char>(out, bytes);
  opts.setTimeout(options_.timeout);
  gloo::allgatherv(opts);
  stats_.add_bytes(kind, total - bytes[(r + 1) % n], total - bytes[r]);
}

// Fast all-reduce: Gloo's ring (or bcube). Ring model: a reduce-scatter pass and an all-gather
// pass, each sending all but one of N chunks: 2 (S - S/N) each way.
void GlooCollective::fast_all_reduce(void* data, std::size_t count, DType dtype, ReduceOp op, CollKind kind) {
  gloo::AllreduceOptions opts(context_);
  if (dtype == DType::fp32) {
    opts.setOutput<float>(static_cast<float*>(data), count);
  } else {
    opts.setOutput<uint16_t>(static_cast<uint16_t*>(data), count);
  }
  opts.setReduceFunction(elementwise_fn(dtype, op));
  opts.setAlgorithm(options_.fast_all_reduce == FastAllReduce::bcube ? gloo::AllreduceOptions::Algorithm::BCUBE
                                                                     : gloo::AllreduceOptions::Algorithm::RING);
  opts.setTimeout(options_.timeout);
  gloo::allreduce(opts);
  const uint64_t bytes = count * dtype_size(dtype);
  const uint64_t moved = 2 * (bytes - bytes / size());
  stats_.add_bytes(kind, moved, moved);
}

// Fast reduce-scatter-v. Equal non-zero counts: Gloo's halving-doubling on a scratch copy (it
// reduces in place and leaves this rank's part at the start of the buffer); model for N = 2^k:
// S/2 + S/4 + ... = S - S/N each way. Uneven counts (or zeros): Gloo's halving-doubling hangs or
// misplaces data for some of them (seen at N = 8), so we run the fast all-reduce on the scratch
// copy and keep our range: 2 (S - S/N) each way, counted as such.
void GlooCollective::fast_reduce_scatter_v(const void* input, void* output, const std::vector<std::size_t>& counts,
                                           DType dtype, ReduceOp op) {
  const int r = rank();
  const std::size_t es = dtype_size(dtype);
  const auto offsets = offsets_of(counts);
  const uint64_t total = total_of(counts);
  bool even = true;
  for (std::size_t c : counts) even = even && c == counts[0] && c > 0;
  if (!even) {
    void* buf = scratch(total * es);
    // memcpy wants valid pointers even for 0 bytes (C11 7.24.1), and a rank whose range is empty
    // may pass no output buffer at all (nor an input, when every range is): skip empty copies.
    if (total > 0) std::memcpy(buf, input, total * es);
    fast_all_reduce(buf, total, dtype, op, CollKind::reduce_scatter);
    if (counts[r] > 0) std::memcpy(output, static_cast<unsigned char*>(buf) + offsets[r] * es, counts[r] * es);
    return;
  }
  ZT_CHECK(total <= INT_MAX, "fast reduce_scatter: ", total, " elements exceed Gloo's int range");
  if (!hd_cache_ || hd_cache_->count != total || hd_cache_->dtype != dtype || hd_cache_->op != op) {
    hd_cache_.reset();  // release the old one before building the new
    auto cache = std::make_shared<HdCache>();
    cache->count = total;
    cache->dtype = dtype;
    cache->op = op;
    cache->buffer.resize(total * es);
    const std::vector<int> recv(counts.size(), static_cast<int>(counts[0]));
    void* buf = cache->buffer.data();
    switch (dtype) {
      case DType::fp32:
        cache->algorithm = make_halving_doubling<float, DType::fp32>(context_, buf, int(total), recv, op);
        break;
      case DType::fp16:
        cache->algorithm = make_halving_doubling<uint16_t, DType::fp16>(context_, buf, int(total), recv, op);
        break;
      case DType::bf16:
        cache->algorithm = make_halving_doubling<uint16_t, DType::bf16>(context_, buf, int(total), recv, op);
        break;
    }
    hd_cache_ = std::move(cache);
  }
  std::memcpy(hd_cache_->buffer.data(), input, total * es);
  hd_cache_->algorithm->run();
  std::memcpy(output, hd_cache_->buffer.data(), counts[r] * es);
  const uint64_t moved = total * es - total * es / size();
  stats_.add_bytes(CollKind::reduce_scatter, moved, moved);
}

// Broadcast: Gloo's binomial tree over ranks renumbered so that root is 0. Virtual rank v sends
// the whole buffer to v + 2^i for every i with v < 2^i and v + 2^i < N; every v > 0 receives it once.
void GlooCollective::tree_broadcast(void* data, std::size_t count, DType dtype, int root) {
  const int n = size();
  const uint64_t bytes = count * dtype_size(dtype);
  gloo::BroadcastOptions opts(context_);
  opts.setOutput<unsigned char>(static_cast<unsigned char*>(data), bytes);
  opts.setRoot(root);
  opts.setTimeout(options_.timeout);
  gloo::broadcast(opts);
  const int v = (rank() - root + n) % n;
  uint64_t sends = 0;
  for (int step = 1; step < n; step *= 2)
    if (v < step && v + step < n) ++sends;
  stats_.add_bytes(CollKind::broadcast, sends * bytes, v == 0 ? 0 : bytes);
}

void GlooCollective::gloo_barrier() {
  gloo::BarrierOptions opts(context_);
  opts.setTimeout(options_.timeout);
  gloo::barrier(opts);
}

}  // namespace zt
