// collective/nccl/nccl_collective.h — the Collective interface on NCCL, for buffers in GPU memory.
//
// One rank = one CUDA device. Construction selects the device (cudaSetDevice(local rank) on the
// calling thread, which stays on it), checks through the rendezvous store that no two ranks of
// the communicator resolved to the same GPU (NCCL does not support one device twice in one
// communicator: it fails or hangs; ranks sharing a GPU must use the Gloo backend with host
// staging), exchanges rank 0's ncclUniqueId through the store (collective/store.h) and creates
// the communicator non-blocking (ncclCommInitRankConfig, blocking = 0) so that a rank that never
// arrives makes the others fail after the timeout instead of waiting forever.
//
// Two reduction modes (ReduceMode), S = buffer bytes, N = ranks, bytes sent per rank:
//  deterministic (default) — NCCL never adds. Reduce-scatter is an all-to-all of chunks with
//    grouped ncclSend/ncclRecv (rank q's range r goes to rank r), into a receive buffer of N rows
//    in rank order; then our kernel (local_reduce_cuda.h) combines the rows along the canonical
//    tree over rank index, fp16/bf16 accumulated in fp32 and rounded once, or rounded per add
//    for Accumulation::storage: the bits of the Gloo backend and of the CPU's
//    reduce_rows_canonical, on every rank, for every N. Sent (N-1)/N·S. All-reduce = that
//    reduce-scatter over balanced_counts + an all-gather: 2(N-1)/N·S. Extra device memory: one
//    S-sized scratch (the N rows), kept and grown as needed.
//  fast — NCCL's own ncclAllReduce / ncclReduceScatter for sums. Their order of summation is
//    NCCL's: it depends on the algorithm (ring, tree, CollNet, NVLS — with NVLink SHARP the
//    switch itself adds), the protocol (LL, LL128, Simple), the channel count and the topology
//    NCCL detected, so the bits may change with N, the machine, the message size and the NCCL
//    version. Uneven reduce_scatter_v runs ncclAllReduce on a scratch copy of the whole input and
//    keeps this rank's range (2(N-1)/N·S, as Gloo's fast mode), never padding behind the caller.
//  ReduceOp::max in BOTH modes runs the deterministic path (all-to-all + our kernel with
//    max_nan): NCCL's ncclMax on floating types is built on fmax-style max, which returns the
//    other operand when one is NaN, and the interface promises that a NaN on any rank (an
//    overflow flag) survives a max. Max is exact, so this changes no value other than NaN's.
//  Both modes: all-gather is ncclAllGather for even counts and grouped ncclSend/ncclRecv for
//  uneven ones (each rank sends its range to every peer); broadcast is ncclBroadcast; barrier is
//  an ncclAllReduce of one float (NCCL has no barrier). These move data without arithmetic.
//
// Asynchrony: every call is queued on the instance's communication thread (core/job_thread.h), in issue
// order. At issue time an event is recorded on the caller's stream (NcclOptions::user_stream),
// so the communication stream (a non-blocking cudaStream_t of this instance) starts only after
// the work that produced the inputs. The communication thread enqueues the NCCL calls and kernels
// on that stream, records an event after them, and the Work completes when that event has
// completed: after wait(), the results are in device memory and any stream may read them.
// Timeouts: the communication thread polls the event (cudaEventQuery) and the communicator's
// asynchronous error (ncclCommGetAsyncError); a call not complete within NcclOptions::timeout
// (a peer stalled, skipped the call or died: NCCL's kernels would spin forever) or an NCCL error
// aborts the communicator (ncclCommAbort, which also stops its kernels) and fails with a zt::Error
// naming the call, its sequence number, the group and the timeout. The instance is then broken:
// every later call fails at once.
// Not here: the per-call header check of the Gloo backend (a mismatched call shows here as a
// timeout or an NCCL error, not as a list of each rank's call); host buffers (every pointer must
// be device memory of this rank's GPU: checked at issue).
// Stats (stats.h): the same kinds and the same rule as Gloo's (calls counted when complete,
// bytes from the algorithm's model, not measured). NCCL's collectives are modelled as rings
// (all-reduce 2(N-1)/N·S, reduce-scatter and all-gather (N-1)/N·S, broadcast a chain from the
// root: each rank but the last sends S, each but the root receives S); the wire traffic of
// NCCL's tree or NVLS algorithms differs, and its ring order follows the topology, not the rank
// order. Grouped send/recv are counted exactly; the barrier counts calls only, like Gloo's.
// Point to point (p2p_async): one ncclGroupStart/End around the batch's ncclSend/ncclRecv, on
// the communication stream like every call; counted exactly (kind point_to_point).
// Sub-groups (subgroup()): ncclCommSplit, which is collective over the PARENT communicator, so
// on this backend every parent rank must create a group at the same step (its k-th subgroup()
// call), each with its own member list, the lists partitioning the parent's ranks — exactly what
// make_grid (grid.h) does. A parent rank that does not take part makes the others fail after the
// timeout with a message saying so (a stricter rule than the Gloo backend's, whose groups are
// independent rendezvous). The store checks that the members agree before the split.
// This file launches no ranks and allocates no user buffers; buffers are the caller's.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <cuda_runtime_api.h>
#include <gloo/rendezvous/store.h>
#include <nccl.h>

#include "collective/collective.h"

namespace zt {

/// Everything an NCCL rank needs to join its group.
struct NcclOptions {
  int rank = 0;                                    ///< this rank, 0..size-1
  int size = 1;                                    ///< number of ranks, >= 1
  std::shared_ptr<gloo::rendezvous::Store> store;  ///< shared by all ranks (make_store); unused when size is 1
  std::string prefix = "zt";                       ///< key prefix: unique per group in one store
  ReduceMode mode = ReduceMode::deterministic;     ///< reduction order
  Accumulation accumulation = Accumulation::fp32;  ///< 16-bit sums in deterministic mode
  std::chrono::milliseconds timeout{30000};        ///< rendezvous, communicator creation and every call
  int local_rank = -1;                             ///< this rank's GPU (cudaSetDevice); -1: use rank
  cudaStream_t user_stream = nullptr;              ///< the stream producing inputs (nullptr: the default stream)
  std::string group;  ///< name in error messages: "" for a group built directly, "mp[2,3]" from subgroup()
};

/// Collective on NCCL over device buffers. Construction performs the rendezvous and creates the
/// communicator (blocks until all ranks joined, or throws after the timeout).
class NcclCollective : public Collective {
 public:
  /// Join the group; sets this thread's CUDA device to the rank's GPU.
  /// @param options rank, size, store, mode, timeout, device.
  explicit NcclCollective(NcclOptions options);
  ~NcclCollective() override;
  NcclCollective(const NcclCollective&) = delete;
  NcclCollective& operator=(const NcclCollective&) = delete;

  int rank() const override { return options_.rank; }
  int size() const override { return options_.size; }
  ReduceMode mode() const override { return options_.mode; }
  CommStats stats() const override;

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
  struct Call {  // what one queued call is, for stats and messages
    CollKind kind = CollKind::barrier;
    const char* name = "barrier";
    uint64_t seq = 0;
  };
  NcclCollective(NcclOptions options, int device, ncclComm_t comm);  // a split's child
  void start_streams();
  Work submit(Call call, std::function<void()> body);
  void run_call(const Call& call, cudaEvent_t inputs_ready, const std::function<void()>& body);
  [[noreturn]] void abort_and_fail(const std::string& why);
  void settle(ncclResult_t result, const char* nccl_call);
  void wait_stream();
  void check_device_pointer(const void* p, std::size_t bytes, const char* what) const;
  void* scratch(std::size_t bytes);
  void copy_on_stream(void* dst, const void* src, std::size_t bytes);  // device to device, skips no-ops
  std::string where(const Call& call) const;
  void close_communicator(bool abort);

  // The data movements (communication thread; nccl_ops.cc).
  void det_reduce_scatter_v(const void* input, void* output, const std::vector<std::size_t>& counts, DType dtype,
                            ReduceOp op, CollKind kind);
  void fast_reduce_scatter_v(const void* input, void* output, const std::vector<std::size_t>& counts, DType dtype);
  void fast_all_reduce(void* data, std::size_t count, DType dtype, CollKind kind);
  void all_gather_v(const void* input, void* output, const std::vector<std::size_t>& counts, DType dtype,
                    CollKind kind);
  void broadcast_ring(void* data, std::size_t count, DType dtype, int root);
  void barrier_all_reduce();
  void p2p_group(const std::vector<P2pOp>& ops);

  NcclOptions options_;
  int device_ = 0;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;  // the communication stream
  cudaEvent_t done_ = nullptr;     // recorded after each call's work (communication thread only)
  void* scratch_ = nullptr;        // device scratch (communication thread only)
  std::size_t scratch_bytes_ = 0;
  float* barrier_word_ = nullptr;                   // one device float for the barrier's all-reduce
  std::chrono::steady_clock::time_point deadline_;  // of the call running now (communication thread)
  std::string current_at_;                          // where(call) of the call running now (same)
  uint64_t next_seq_ = 0;                           // calls issued (caller's thread)
  int splits_made_ = 0;                             // subgroup() calls on this instance (caller's thread)
  std::map<std::string, int> groups_made_;          // sub-groups created per label (caller's thread)
  bool broken_ = false;                             // communication thread only
  std::string broken_reason_;                       // communication thread only
  CommStatsCounter stats_;
  std::unique_ptr<JobThread> thread_;  // last member: joined first on destruction
};

}  // namespace zt
