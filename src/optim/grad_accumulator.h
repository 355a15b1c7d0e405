// optim/grad_accumulator.h — FP32 gradient accumulation over micro-batches along the canonical tree.
//
// The sum over A micro-batch gradients is formed by zt::CanonicalAccumulator (reduce/
// canonical_tree.h), one FP32 buffer per leaf, merged like a binary counter: after A leaves the
// result is exactly the canonical tree over them, element by element, and at most
// floor(log2 A) + 1 buffers are alive at any moment (the incoming leaf included). Each buffer comes
// from the caller's allocator — in a training run, an arena buffer under its own ledger category —
// so the ledger sees every partial sum. Element-wise: a rank holding a shard of the gradient runs
// the same additions on it as a single device on the whole (chapter 6).
// This does not average: the caller divides once, after the tree (or folds it into the loss).
#pragma once

#include <cstddef>
#include <functional>
#include <utility>

#include "core/check.h"
#include "reduce/canonical_tree.h"

namespace zt {

/// Canonical-tree FP32 accumulator of `count`-element gradients. Buffer is any move-only or
/// movable type with `float* data()` (e.g. TypedBuffer<float>, std::vector<float>).
template <typename Buffer>
class CanonicalGradAccumulator {
 public:
  /// Allocator of one FP32 buffer of n elements (contents may be uninitialised).
  using Allocate = std::function<Buffer(std::size_t n)>;

  /// One merge's addition, left[i] = left[i] + right[i] for i < n: wherever the buffers live (a
  /// device's buffers are added by a kernel, step_device/loop_ops.h). Empty: a host loop.
  using Add = std::function<void(float* left, const float* right, std::size_t n)>;

  /// @param count elements per gradient. @param allocate the caller's allocator.
  /// @param add the merge's addition (default: a host loop).
  CanonicalGradAccumulator(std::size_t count, Allocate allocate, Add add = {})
      : count_(count), allocate_(std::move(allocate)), acc_(Merge{count, std::move(add)}) {}

  /// Add the next micro-batch: fill(float* leaf) writes its `count` FP32 gradient values into a
  /// freshly allocated leaf buffer (e.g. by widening 16-bit gradients).
  /// @param fill the writer of the leaf.
  template <typename Fill>
  void push_with(Fill&& fill) {
    Buffer leaf = allocate_(count_);
    fill(leaf.data());
    acc_.push(std::move(leaf));
  }

  /// Add the next micro-batch's FP32 gradient (copied into a leaf buffer).
  /// @param gradient `count` values.
  void push(const float* gradient) {
    push_with([&](float* leaf) {
      for (std::size_t i = 0; i < count_; ++i) leaf[i] = gradient[i];
    });
  }

  /// The canonical sum of everything pushed since the last finish (zt::Error if nothing was).
  /// @return the buffer holding it (the only one left alive).
  Buffer finish() { return acc_.finish(); }

  /// Partial sums alive now. @return the count.
  std::size_t live_partials() const { return acc_.live_partials(); }

 private:
  struct Merge {
    std::size_t count;
    Add add;
    // left holds the earlier micro-batches: left + right, element by element, then free right.
    void operator()(Buffer& left, Buffer&& right) const {
      float* l = left.data();
      const float* r = right.data();
      if (add)
        add(l, r, count);
      else
        for (std::size_t i = 0; i < count; ++i) l[i] = l[i] + r[i];
      Buffer released = std::move(right);
    }
  };
  std::size_t count_;
  Allocate allocate_;
  CanonicalAccumulator<Buffer, Merge> acc_;
};

}  // namespace zt
