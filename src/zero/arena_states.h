// zero/arena_states.h — the optimizer states in the rank's own arena: the StateStore of a run
// without offload (offload/state_store.h), beside the engine that builds it.
//
// The FP32 master (none in fp32, where the compute copy is the master) and the moments, each of
// S_o's extent, laid out unit after unit; update(u) runs step::apply_update on the owned slice
// (step/owned_slice.h), the reference loop's own per-element code, on the host or as the device's
// kernels. Not here: where the other stores keep their states (offload/optimizer_tier.h).
#pragma once

#include <cstddef>
#include <functional>
#include <type_traits>
#include <vector>

#include "memory/arena.h"
#include "memory/buffer.h"
#include "offload/state_store.h"
#include "step/categories.h"
#include "step/owned_slice.h"
#include "step_device/loop_ops.h"
#include "step_device/step_ops.h"

namespace zt::zero {

/// The states in the rank's own arena (no offload): the master (none in fp32, where the compute
/// copy is the master) and the moments, each of S_o's extent.
template <typename T>
class ArenaStates final : public offload::StateStore<T> {
  static constexpr bool kFp32 = std::is_same_v<T, float>;

 public:
  /// Reaches unit u's compute copy as FP32 master (fp32 only): calls fn with its owned elements
  /// and writes them back when fn returns true (the compute copy may be in a parameter file).
  using MasterInParams = std::function<void(std::size_t u, const std::function<bool(float*)>& fn)>;

  /// Allocate the master (below fp32) and the zeroed moments in `arena`, unit after unit in the
  /// order of the engine's S_o-extent state (as the other stores lay it out).
  /// @param shape the owned elements (zero/zero_plan.h's offload_tier_shape). @param arena the
  /// rank's arena. @param in_params fp32: how to reach the master. @param ops the loop's ops on
  /// the arena's memory. @param steps protocol steps 4-6 there.
  ArenaStates(const offload::TierShape& shape, Arena& arena, MasterInParams in_params, step::LoopOps<T>& ops,
              step::StepOps<T>& steps)
      : extents_(shape.extents), moments_(shape.moments), in_params_(std::move(in_params)), ops_(ops), steps_(steps) {
    for (std::size_t e : extents_) offsets_.push_back(total_), total_ += e;
    if constexpr (!kFp32) master_ = make_buffer<float>(arena, total_, step::category::master);
    state_ = make_buffer<float>(arena, total_ * shape.moments, step::category::optimizer);
    ops.zero(state_.data(), state_.size() * sizeof(float));
  }

  /// Unit u's initial master (none in fp32: the compute copy is initialised as the master).
  /// @param u the unit. @param fill called with the e_u FP32 values to fill (host memory).
  void initialise(std::size_t u, const std::function<void(float*)>& fill) override {
    if constexpr (!kFp32)  // fp32: the compute copy is initialised as such
      step::visit_on_host(ops_, master_.data() + offsets_[u], extents_[u], /*fresh=*/true, [&](float* m) {
        fill(m);
        return true;
      });
  }
  /// Protocol steps 4-6 on unit u's owned elements, in this arena. @param u the unit.
  /// @param owned the rank's slice of u (its master pointer is this store's). @param inv_scale 1/S.
  /// @param clip the step's clipping. @param opt the step's optimizer (its state arrays are this store's).
  void update(std::size_t u, const step::OwnedSlice<T>& owned, float inv_scale, const ClipDecision& clip,
              step::ElementOptimizer opt) override {
    step::OwnedSlice<T> s = owned;
    s.master = master_.size() ? master_.data() + offsets_[u] : nullptr;
    opt.state = state_.data();
    opt.n = total_;
    steps_.apply_update(s, inv_scale, clip, opt);
  }
  /// Unit u's owned master and moments in host memory: this arena's, or on a device a host copy
  /// of them (one unit's moments side by side), written back when fn changes them.
  /// @param u the unit. @param fn the visitor.
  void with_owned_state(std::size_t u, const typename offload::StateStore<T>::Visit& fn) override {
    const std::size_t e = extents_[u];
    const auto view = [&](float* master) {
      if (ops_.host_memory()) return fn(offload::StateView{master, state_.data(), offsets_[u], total_, e});
      std::vector<float> moments(moments_ * e);
      for (std::size_t j = 0; j < moments_; ++j)
        ops_.download(moments.data() + j * e, state_.data() + j * total_ + offsets_[u], e * sizeof(float));
      const bool changed = fn(offload::StateView{master, moments.data(), 0, e, e});
      if (changed)
        for (std::size_t j = 0; j < moments_; ++j)
          ops_.upload(state_.data() + j * total_ + offsets_[u], moments.data() + j * e, e * sizeof(float));
      return changed;
    };
    if constexpr (kFp32)
      in_params_(u, view);
    else
      step::visit_on_host(ops_, master_.data() + offsets_[u], e, /*fresh=*/false, view);
  }

 private:
  std::vector<std::size_t> offsets_, extents_;
  std::size_t total_ = 0;
  std::size_t moments_ = 0;  // optimizer-state arrays per element (Adam 2, SGD with momentum 1)
  MasterInParams in_params_;
  step::LoopOps<T>& ops_;
  step::StepOps<T>& steps_;    // the host's step::apply_update, or its device kernels
  TypedBuffer<float> master_;  // FP32 master θ32, extent S_o (none in fp32)
  TypedBuffer<float> state_;   // m then v (or momentum), extent S_o
};

}  // namespace zt::zero
