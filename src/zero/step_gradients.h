// zero/step_gradients.h — S_g's storage: a ZeRO rank's gradient of each unit over one step, from
// the micro-batches' outputs to the reduced part its optimizer reads.
//
// Per unit, the step's sum is the FP32 canonical accumulator over micro-batches
// (optim/grad_accumulator.h: the one-device tree over the global micro-batches, whatever the
// schedule), of extent S_g: the shard when each micro-batch is reduced as it is produced (stages
// 2-3: only the reduce-scatter's result is kept), else the whole unit. With --reduce-dtype compute
// and one micro-batch per rank (s_g = 2) it is the model's 16-bit output itself. After the step's
// reduction this rank's reduced part is summed(u): its shard, or the whole unit after an
// all-reduce. Allocation only, under the ledger's categories (step/categories.h's accumulator
// rule); it does not communicate (zero/grad_reducer.h reduces; zero/train_zero.cc decides when).
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <vector>

#include "memory/arena.h"
#include "memory/buffer.h"
#include "optim/grad_accumulator.h"
#include "step/categories.h"
#include "step/loop_ops.h"
#include "step/owned_slice.h"
#include "zero/zero_plan.h"

namespace zt::zero {

/// One rank's per-unit gradients of a step; T is the compute type.
template <typename T>
class StepGradients {
  using Accumulator = CanonicalGradAccumulator<TypedBuffer<float>>;

 public:
  /// @param plan the rank's plan. @param arena its arena (the buffers come and go during a step).
  /// @param ops the loop's ops on the arena's memory (host or device).
  StepGradients(const ZeroPlan& plan, Arena& arena, step::LoopOps<T>& ops)
      : plan_(plan), arena_(arena), ops_(ops), sum32_(units()), sum16_(units()) {
    for (std::size_t u = 0; u < units(); ++u)  // S_g: each buffer is the shard, else the whole unit
      acc_.push_back(std::make_unique<Accumulator>(
          plan.grad_extent(u),
          [this, u](std::size_t n) {
            // the accumulator is the unit's gradient storage: its first buffer `grads`, the rest partials
            return make_buffer<float>(arena_, n, step::accumulator_category(acc_[u]->live_partials(), true));
          },
          [this](float* left, const float* right, std::size_t n) { ops_.add(left, right, n); }));
  }

  /// Add a gradient of unit u to the step's sum: the model's micro-batch output (g16: the whole
  /// unit, compute type), or a reduction's result for this rank (g16 or g32, reduced extent, or
  /// the reduce-scatter's own buffer `leaf`). s_g = 2: the one micro-batch's output is the sum.
  /// @param u the unit. @param g16 a compute-type gradient, or null. @param g32 an FP32 one, or
  /// null. @param leaf a buffer of u's tree holding the reduction's result, or null.
  void keep(std::size_t u, const T* g16, const float* g32, TypedBuffer<float>* leaf) {
    if (leaf) return acc_[u]->push_leaf(std::move(*leaf));
    if (g32) return acc_[u]->push_with([&](float* leaf) { ops_.copy(leaf, g32, acc_[u]->count() * sizeof(float)); });
    const std::size_t n =
        plan_.reduce_each_micro_batch && N() > 1 ? plan_.reduced_extent(u) : plan_.layout.units[u].full;
    if (plan_.grad_storage_16bit) {
      sum16_[u] = make_buffer<T>(arena_, n, step::category::grads);
      ops_.copy(sum16_[u].data(), g16, n * sizeof(T));
      return;
    }
    acc_[u]->push_with([&](float* leaf) { ops_.widen(leaf, g16, n); });
  }
  /// @param u the unit. @return a buffer for a reduce-scatter to land in (a leaf of u's tree).
  TypedBuffer<float> allocate_leaf(std::size_t u) { return acc_[u]->allocate_leaf(); }
  /// Unit u's micro-batches are all in: its tree is summed. @param u the unit.
  void finish(std::size_t u) {
    if (!plan_.grad_storage_16bit) sum32_[u] = acc_[u]->finish();
  }
  /// @param u the unit. @return the step's FP32 sum (not with s_g = 2).
  float* sum32(std::size_t u) { return sum32_[u].data(); }
  /// @param u the unit. @return the step's 16-bit gradient (s_g = 2 only).
  T* sum16(std::size_t u) { return sum16_[u].data(); }
  /// The step is over: every sum is released.
  void release() {
    for (auto& g : sum32_) g.reset();
    for (auto& g : sum16_) g.reset();
  }

  /// Where this rank's reduced part of unit u starts in the step's sum: at its shard's offset
  /// after an in-place reduce-scatter of the whole sum, else at 0 (the sum is the shard, or the
  /// reduction was an all-reduce). @param u the unit. @return the offset.
  std::size_t reduced_offset(std::size_t u) const {
    return plan_.reduce_scatters_grad && !plan_.spec.grads ? plan_.layout.rank * plan_.layout.units[u].shard : 0;
  }
  /// @param u the unit. @return this rank's reduced gradient of u (still scaled): its shard, or the unit.
  step::GradSpan<T> summed(std::size_t u) const {
    const std::size_t at = reduced_offset(u);
    return plan_.grad_storage_16bit ? step::GradSpan<T>{nullptr, sum16_[u].data() + at}
                                    : step::GradSpan<T>{sum32_[u].data() + at, nullptr};
  }
  /// @param u the unit. @return the real (non-padding) elements of summed(u).
  std::size_t reduced_real(std::size_t u) const {
    return plan_.reduce_scatters_grad ? plan_.layout.shard_real(u, plan_.layout.rank) : plan_.layout.units[u].numel;
  }

 private:
  std::size_t units() const { return plan_.layout.units.size(); }
  std::size_t N() const { return plan_.layout.world_size; }

  const ZeroPlan& plan_;
  Arena& arena_;
  step::LoopOps<T>& ops_;
  std::vector<std::unique_ptr<Accumulator>> acc_;  // per unit: FP32 sum over micro-batches, extent S_g
  std::vector<TypedBuffer<float>> sum32_;          // per unit: the step's FP32 sum (the accumulator's tree)
  std::vector<TypedBuffer<T>> sum16_;              // per unit: the step's 16-bit gradient (s_g = 2)
};

}  // namespace zt::zero
