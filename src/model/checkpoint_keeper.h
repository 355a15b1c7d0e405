// model/checkpoint_keeper.h — where a model with activation checkpointing keeps its checkpoints:
// the input x_l of every transformer block l (an [N, C] tensor of the residual stream).
//
// Forward calls keep(l, x) with block l's input before computing the block; backward calls
// restore(l, x) before recomputing block l (blocks in reverse order, l = L-1 .. 0), and expects
// the same bits back. Who holds them, and where, is the keeper's: the default keeps full copies in
// the workspace's checkpoint buffer (FullCheckpoints); ZeRO-R's P_a keeps a 1/N_m slice per
// model-parallel rank and all-gathers it back (zero_r/partitioned_checkpoints.h), P_a+cpu keeps the
// slices in host memory. The model knows none of that: like ParamProvider this is its window to
// the outside, and it never communicates itself.
// The x a keeper is given lives where the model's ops compute (model/model_ops.h): on a device it
// is device memory, so a keeper moves it with copies, never by reading it on the host;
// FullCheckpoints copies through the model's own ops.
#pragma once

#include <cstddef>

#include "model/model_ops.h"

namespace zt::model {

/// The keeper of a model's activation checkpoints.
template <typename T>
class CheckpointKeeper {
 public:
  virtual ~CheckpointKeeper() = default;
  /// Block `layer`'s input is in x (valid only during the call): keep it.
  /// @param layer the block. @param x its input, elements() values.
  virtual void keep(int layer, const T* x) = 0;
  /// Backward is about to recompute block `layer`: write its input into x.
  /// @param layer the block. @param x room for capacity() values (elements() are the input).
  virtual void restore(int layer, T* x) = 0;
};

/// The default keeper: full copies in one caller buffer, block l's at l · count, made by the
/// model's ops (the buffer is the Workspace's, in the same memory as the activations).
template <typename T>
class FullCheckpoints final : public CheckpointKeeper<T> {
 public:
  /// @param ops the model's ops, which make the copies (kept by reference).
  /// @param buffer room for layers · stride values. @param count values per checkpoint (N · C).
  /// @param stride values between consecutive checkpoints (count rounded up to the alignment).
  FullCheckpoints(ModelOps<T>& ops, T* buffer, std::size_t count, std::size_t stride)
      : ops_(ops), buffer_(buffer), count_(count), stride_(stride) {}
  void keep(int layer, const T* x) override {
    ops_.copy(buffer_ + static_cast<std::size_t>(layer) * stride_, x, count_ * sizeof(T));
  }
  void restore(int layer, T* x) override {
    ops_.copy(x, buffer_ + static_cast<std::size_t>(layer) * stride_, count_ * sizeof(T));
  }

 private:
  ModelOps<T>& ops_;
  T* buffer_;
  std::size_t count_, stride_;
};

}  // namespace zt::model
