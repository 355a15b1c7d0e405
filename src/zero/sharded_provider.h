// zero/sharded_provider.h — how the model reaches a ZeRO rank's parameters and hands back its
// gradients, unit by unit (the model/param_provider.h protocol): the ZeRO counterpart of the
// reference loop's DenseParamProvider.
//
// Where the reference loop points the model at two dense buffers, this provider is where the
// stage shows in the protocol's calls (ZeRO paper, Sec. 5):
//   acquire(u)          S_p = 1 (stage 3): the unit is all-gathered just before use
//                       (zero/unit_gatherer.h, with its prefetch window); else the resident copy.
//   grad(u)             a fresh gradient staging buffer of the unit's whole extent (the model
//                       overwrites it with this micro-batch's gradient).
//   param_grad_done(p)  stage 2's buckets start as soon as backward has finished every parameter
//                       they cover (zero/grad_reducer.h).
//   grad_done(u)        S_g = 1 (stages 2-3): the rest of the unit is reduce-scattered now and only
//                       the shard is kept; else the micro-batch is added to the rank's local sum
//                       for the step's one reduction (zero/step_gradients.h).
// On a last pipeline stage without the embedding, the tied head's reads of wte come from the copy
// the stage receives each step (set_tied_wte), never from a store or a gather.
// It also times each unit's compute for --trace. It owns only the staging buffers; the stores,
// the gatherer and the reducer belong to the engine (zero/train_zero.cc), which decides when a
// step's reduction happens. Not here: the reduction of stages 0-1 (the engine's
// finish_unit_grads), the optimizer, anything about predictions.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "memory/arena.h"
#include "memory/buffer.h"
#include "model/manifest.h"
#include "model/param_provider.h"
#include "step/categories.h"
#include "zero/grad_reducer.h"
#include "zero/model_state_stores.h"
#include "zero/step_gradients.h"
#include "zero/timeline.h"
#include "zero/unit_gatherer.h"
#include "zero/zero_plan.h"

namespace zt::zero {

/// A ZeRO rank's ParamProvider; T is the compute type.
template <typename T>
class ShardedParamProvider final : public model::ParamProvider<T> {
 public:
  /// All references are kept; every object must outlive the provider.
  /// @param plan the rank's plan. @param manifest the model's manifest. @param arena the rank's
  /// arena (the staging buffers). @param params S_p's storage. @param gatherer stage 3's gatherer
  /// (null: parameters are resident). @param reducer the gradient reducer. @param grads S_g's
  /// storage. @param timeline where compute spans go (--trace). @param ops the loop's ops on
  /// the arena's memory.
  ShardedParamProvider(const ZeroPlan& plan, const model::Manifest& manifest, Arena& arena, ParamStore<T>& params,
                       UnitGatherer<T>* gatherer, GradReducer<T>& reducer, StepGradients<T>& grads, Timeline& timeline,
                       step::LoopOps<T>& ops)
      : plan_(plan),
        manifest_(manifest),
        arena_(arena),
        ops_(ops),
        params_(params),
        gatherer_(gatherer),
        reducer_(reducer),
        grads_(grads),
        timeline_(timeline),
        staging_(plan.layout.units.size()),
        compute_start_(plan.layout.units.size()) {}

  /// The provider as seen by one pass of the model, whose compute spans are named after it.
  /// @param phase "forward" or "backward". @return this provider.
  ShardedParamProvider& in(const char* phase) {
    phase_ = std::string(phase) + " ";
    return *this;
  }

  /// The last pipeline stage's copy of wte, which acquire(0) returns (null: unit 0 is this
  /// rank's own). @param wte V·C values, kept by pointer.
  void set_tied_wte(const T* wte) { tied_wte_ = wte; }

  const T* acquire(int unit) override {
    const auto u = static_cast<std::size_t>(unit);
    if (unit == 0 && tied_wte_) {
      compute_start_[u] = timeline_.now_us();
      return tied_wte_;
    }
    // S_p (stage 3, paper Sec. 5.3): gathered just before use (a persistent unit: its whole copy)
    const T* p = gatherer_ ? gatherer_->acquire(u) : params_.resident(u);
    compute_start_[u] = timeline_.now_us();
    return p;
  }
  void release(int unit) override {
    const auto u = static_cast<std::size_t>(unit);
    timeline_.add(phase_ + plan_.layout.units[u].name, "compute", compute_start_[u]);
    if (gatherer_ && !(unit == 0 && tied_wte_)) gatherer_->release(u);
  }
  T* grad(int unit) override {
    const auto u = static_cast<std::size_t>(unit);
    const std::size_t full = plan_.layout.units[u].full;
    staging_[u] = make_buffer<T>(arena_, full, step::category::grad_staging);
    ops_.zero(staging_[u].data(), full * sizeof(T));
    return staging_[u].data();
  }
  /// Unit u's micro-batch gradient is final. Reduced now when every micro-batch is (S_g: only the
  /// shard is kept), else added to the rank's local sum for the step's one reduction.
  /// @param unit the unit index.
  void grad_done(int unit) override {
    const auto u = static_cast<std::size_t>(unit);
    if (plan_.reduce_each_micro_batch && plan_.layout.world_size > 1)
      reducer_.close(u, staging_[u].data());  // whatever buckets are left (all, without buckets)
    else
      grads_.keep(u, staging_[u].data(), nullptr, nullptr);
    staging_[u].reset();
  }
  /// Stage 2 buckets start as soon as backward has finished every parameter they cover
  /// (parameters finish from a unit's end towards its start, model/param_provider.h).
  /// @param param the parameter's index in the manifest.
  void param_grad_done(int param) override {
    if (!plan_.bucket_elements || !plan_.reduce_each_micro_batch || plan_.layout.world_size == 1) return;
    const auto& info = manifest_.params[static_cast<std::size_t>(param)];
    const auto u = static_cast<std::size_t>(info.unit);
    reducer_.open(u);
    reducer_.issue_ready(u, staging_[u].data(), static_cast<std::size_t>(info.offset_in_unit));
  }

 private:
  const ZeroPlan& plan_;
  const model::Manifest& manifest_;
  Arena& arena_;
  step::LoopOps<T>& ops_;
  ParamStore<T>& params_;
  UnitGatherer<T>* gatherer_;
  GradReducer<T>& reducer_;
  StepGradients<T>& grads_;
  Timeline& timeline_;
  std::vector<TypedBuffer<T>> staging_;  // per unit: the model's gradient output g16, during backward
  std::vector<double> compute_start_;    // per unit: when its compute began
  std::string phase_;                    // "forward " or "backward "
  const T* tied_wte_ = nullptr;          // a last pipeline stage's received wte
};

}  // namespace zt::zero
