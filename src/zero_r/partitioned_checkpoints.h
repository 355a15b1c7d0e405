// zero_r/partitioned_checkpoints.h — ZeRO-R's partitioned activation checkpoints, P_a and P_a+cpu
// (ZeRO paper, Sec. 6.1), as the model's CheckpointKeeper (model/checkpoint_keeper.h).
//
// With tensor parallelism every rank of a model-parallel group computes the same block input x_l
// (the residual stream is replicated), so plain checkpointing stores N_m identical copies of every
// checkpoint. P_a keeps one 1/N_m slice per rank: rank m keeps elements [m·S, (m+1)·S) of x_l,
// S = ceil(N·C / N_m) (the last slice padded with zeros), and before block l is recomputed in
// backward one all-gather over the model-parallel group rebuilds x_l — an all-gather copies bits,
// so the run is bitwise the one without P_a. Memory per rank: L·S values instead of L·N·C.
// P_a+cpu moves the slices to the host tier: forward copies each slice out through a staging
// buffer on the accelerator tier (the copy overlaps the block's compute), backward brings slice
// l-1 back while block l is recomputed and differentiated (prefetch), so the accelerator tier holds
// two slice-sized staging buffers, nothing more. Every transfer goes through the TransferThread and is
// counted. With N_m = 1 the slice is the whole checkpoint: P_a is plain checkpointing, P_a+cpu
// still offloads. The slices' own copies and zero padding are the loop's ops (step_device/loop_ops.h),
// so on a device the accelerator tier is device memory, the host tier pinned memory, the
// TransferThread a copy stream and the all-gather a staged group: the same code.
// It owns its slices and staging buffers; it neither computes nor decides when to checkpoint.
#pragma once

#include <algorithm>
#include <span>
#include <vector>

#include "collective/collective.h"
#include "core/check.h"
#include "memory/arena.h"
#include "memory/buffer.h"
#include "model/checkpoint_keeper.h"
#include "offload/transfer_thread.h"
#include "step_device/loop_ops.h"

namespace zt::zero_r {

/// Ledger categories of P_a and P_a+cpu.
namespace category {
inline constexpr const char* checkpoints = "activation_checkpoints";  ///< the slices (their tier's arena)
inline constexpr const char* staging = "checkpoint_staging";          ///< P_a+cpu: two slices on the accelerator tier
}  // namespace category

/// Values per slice: ceil(count / mp_size). @param count N·C. @param mp_size N_m. @return S.
inline std::size_t checkpoint_slice(std::size_t count, std::size_t mp_size) { return (count + mp_size - 1) / mp_size; }

/// The keeper of P_a (slices in `device`) or P_a+cpu (slices in `host`).
template <typename T>
class PartitionedCheckpoints final : public model::CheckpointKeeper<T> {
 public:
  /// @param mp the model-parallel group (null: N_m = 1). @param count values per checkpoint (N·C).
  /// @param layers L. @param device the accelerator tier's arena. @param host the host tier's arena
  /// (null: P_a, the slices stay in `device`). @param copies the transfer thread (P_a+cpu only).
  /// @param overlap false: every copy is waited for at once (no overlap, no prefetch; to measure
  /// what the overlap saves). @param ops the loop's ops on the accelerator tier's memory.
  PartitionedCheckpoints(Collective* mp, std::size_t count, int layers, Arena& device, Arena* host,
                         offload::TransferThread* copies, bool overlap, step::LoopOps<T>& ops)
      : mp_(mp),
        count_(count),
        n_(mp ? static_cast<std::size_t>(mp->size()) : 1),
        rank_(mp ? static_cast<std::size_t>(mp->rank()) : 0),
        slice_(checkpoint_slice(count, n_)),
        copies_(copies),
        overlap_(overlap),
        ops_(ops) {
    ZT_CHECK(!host || copies, "P_a+cpu needs a transfer thread");
    Arena& tier = host ? *host : device;
    slices_ = make_buffer<T>(tier, slice_ * static_cast<std::size_t>(layers), category::checkpoints);
    if (host)
      for (auto& s : staging_) s = make_buffer<T>(device, slice_, category::staging);
  }
  /// Copies still running read or write this object's buffers: finish them first.
  ~PartitionedCheckpoints() override {
    for (auto& c : in_flight_) c.wait();
  }
  PartitionedCheckpoints(const PartitionedCheckpoints&) = delete;
  PartitionedCheckpoints& operator=(const PartitionedCheckpoints&) = delete;

  /// Keep this rank's slice of block `layer`'s input. @param layer the block. @param x N·C values.
  void keep(int layer, const T* x) override {
    T* dst = slice_at(layer);
    if (!offloaded()) return copy_slice(dst, x);
    // P_a+cpu: into a staging buffer now (x changes after this call), out to the host tier on the
    // copy thread while the block computes; a staging buffer is reused only after its copy is done
    const std::size_t b = static_cast<std::size_t>(layer) % 2;
    in_flight_[b].wait();
    copy_slice(staging_[b].data(), x);
    in_flight_[b] = copies_->copy(dst, staging_[b].data(), slice_ * sizeof(T), offload::CopyDirection::to_host);
    if (!overlap_) in_flight_[b].wait();
  }

  /// Rebuild block `layer`'s input from every rank's slice. @param layer the block.
  /// @param x room for N_m·S values (model/workspace.h: external checkpoints).
  void restore(int layer, T* x) override {
    const T* mine = slice_at(layer);
    if (offloaded()) {
      // P_a+cpu: slice `layer` was prefetched while block layer + 1 ran (or is fetched now); then
      // slice layer - 1 starts coming back while this block is recomputed and differentiated
      const std::size_t b = static_cast<std::size_t>(layer) % 2;
      if (prefetched_ != layer) {
        in_flight_[b].wait();
        in_flight_[b] = copies_->copy(staging_[b].data(), mine, slice_ * sizeof(T), offload::CopyDirection::to_device);
      }
      in_flight_[b].wait();
      mine = staging_[b].data();
      prefetched_ = -1;
      if (layer > 0 && overlap_) {
        const std::size_t nb = static_cast<std::size_t>(layer - 1) % 2;
        in_flight_[nb].wait();
        in_flight_[nb] = copies_->copy(staging_[nb].data(), slice_at(layer - 1), slice_ * sizeof(T),
                                       offload::CopyDirection::to_device);
        prefetched_ = layer - 1;
      }
    }
    if (n_ == 1) {
      ops_.copy(x, mine, count_ * sizeof(T));
      return;
    }
    // one all-gather over the model-parallel group: rank q's slice lands at q·S
    mp_->all_gather(std::span<const T>(mine, slice_), std::span<T>(x, slice_ * n_));
  }

 private:
  bool offloaded() const { return staging_[0].size() > 0; }
  T* slice_at(int layer) { return slices_.data() + static_cast<std::size_t>(layer) * slice_; }
  // this rank's slice of x; the padding past N·C (last rank) is zero
  void copy_slice(T* dst, const T* x) {
    const std::size_t first = rank_ * slice_;
    const std::size_t real = first < count_ ? std::min(slice_, count_ - first) : 0;
    if (real) ops_.copy(dst, x + first, real * sizeof(T));
    if (slice_ > real) ops_.zero(dst + real, (slice_ - real) * sizeof(T));
  }

  Collective* mp_;
  std::size_t count_, n_, rank_, slice_;
  offload::TransferThread* copies_;
  bool overlap_;
  step::LoopOps<T>& ops_;                 // copies and zeros on the accelerator tier
  TypedBuffer<T> slices_;                 // L slices, in the accelerator or the host tier
  TypedBuffer<T> staging_[2];             // P_a+cpu: two slices on the accelerator tier
  offload::TransferHandle in_flight_[2];  // the copy through each staging buffer
  int prefetched_ = -1;                   // the layer whose slice is coming back into its staging buffer
};

}  // namespace zt::zero_r
