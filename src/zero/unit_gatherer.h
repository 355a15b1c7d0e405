// zero/unit_gatherer.h — stage 3's parameter gathers: each unit's 16-bit shards all-gathered into
// a temporary full unit just before use, released right after, with the next --prefetch gathers
// of the known acquire order issued ahead so they overlap the current unit's compute.
//
// The acquire order of a micro-batch is fixed by the model (model/param_provider.h) and listed in
// ZeroPlan::acquire_order; an acquire that does not follow it is an error (every rank must issue
// the same collectives in the same order). Which gathers each acquire issues — prefetch, persistent
// units never gathered, no gather across micro-batches — is schedule/gather_window.h's rule (the
// memory prediction replays the same window); this file issues and waits along it. It holds no
// parameters of its own: shards stay with the caller.
//
// A persistent unit (--persist-below-mb: its parameters are whole on every rank) is acquired in
// the same order, checked the same way, and handed out as the caller's whole copy with no
// collective.
//
// With --offload-params file:DIR the shards are not in memory: each micro-batch is a pass of the
// parameter tier (offload/param_file_tier.h) over this order's gathers; a shard is read into the
// tier's ring before its all-gather is issued, and its buffer is freed when the gather is done.
#pragma once

#include <algorithm>
#include <cstring>
#include <deque>
#include <vector>

#include "collective/collective.h"
#include "core/check.h"
#include "memory/arena.h"
#include "memory/buffer.h"
#include "offload/param_file_tier.h"
#include "schedule/gather_window.h"
#include "step/loop_ops.h"
#include "zero/timeline.h"
#include "zero/zero_plan.h"

namespace zt::zero {

/// All-gathers units of 16-bit (or FP32) parameter shards on demand, with prefetch.
template <typename T>
class UnitGatherer {
 public:
  /// @param plan the rank's plan (kept by reference). @param coll the group. @param arena where
  /// gathered units live. @param params this rank's parameter storage (plan.params_layout: the
  /// shard of a sharded unit, the whole of a persistent one).
  /// @param ops the loop's ops on the arena's memory. @param timeline where blocked time is
  /// recorded (may be null). @param file the parameter tier holding the sharded units' shards
  /// (null: they are in `params`).
  UnitGatherer(const ZeroPlan& plan, Collective& coll, Arena& arena, const T* params, step::LoopOps<T>& ops,
               Timeline* timeline = nullptr, offload::ParamFileTier* file = nullptr)
      : plan_(plan),
        coll_(coll),
        arena_(arena),
        ops_(ops),
        params_(params),
        timeline_(timeline),
        file_(file),
        in_use_(plan.layout.units.size()),
        window_(schedule::gather_window(plan.acquire_order, plan.params_layout.sharded, plan.prefetch)) {}

  /// An all-gather still in flight writes into a buffer this object owns: an exception unwinding
  /// the step (an out-of-memory error, a peer's failure) must not free it under the comm thread.
  ~UnitGatherer() {
    for (auto& g : in_flight_) {
      try {
        g.work.wait();
      } catch (...) {  // the step is failing already; its first error is the one reported
      }
    }
  }
  UnitGatherer(const UnitGatherer&) = delete;
  UnitGatherer& operator=(const UnitGatherer&) = delete;

  /// The full unit u, gathered (waits for its all-gather; issues the prefetches), or the whole
  /// copy of a persistent unit.
  /// @param u the unit, which must be the next in the acquire order. @return its parameters.
  const T* acquire(std::size_t u) {
    const auto& order = plan_.acquire_order;
    const std::size_t at = position_++;
    ZT_CHECK(at < order.size() && order[at] == u, "stage 3: unexpected acquire order at position ", at, " (unit ", u,
             ")");
    // in flight after this call: the window's (this use's gather, if sharded, and --prefetch more)
    for (; next_issue_ < window_.issued[at]; ++next_issue_) issue(next_issue_);
    if (!window_.gathers[at]) return params_ + plan_.params_layout.offsets[u];
    Gathering g = std::move(in_flight_.front());
    in_flight_.pop_front();
    const double t0 = timeline_ ? timeline_->now_us() : 0;
    g.work.wait();
    if (file_) file_->put(window_.gathers_before[at], /*write=*/false);  // its shard's buffer is free
    if (timeline_) timeline_->add("wait all_gather " + plan_.layout.units[u].name, "wait", t0);
    in_use_[u] = std::move(g.buffer);
    return in_use_[u].data();
  }

  /// Free unit u's gathered copy (nothing for a persistent unit). @param u the unit.
  void release(std::size_t u) { in_use_[u].reset(); }

  /// A micro-batch is over: the next acquire starts the order again.
  void restart() { position_ = next_issue_ = 0; }

 private:
  struct Gathering {
    TypedBuffer<T> buffer;
    Work work;
  };

  void issue(std::size_t k) {  // the k-th gather of the micro-batch
    const std::size_t u = window_.units[k];
    const auto& unit = plan_.layout.units[u];
    Gathering g;
    g.buffer = make_buffer<T>(arena_, unit.full, zero_category::gathered_params);
    if (file_ && k == 0) file_->start_pass(window_.units);  // the micro-batch's reads of shards
    const T* shard = file_ ? reinterpret_cast<const T*>(file_->get(k)) : params_ + plan_.params_layout.offsets[u];
    if (plan_.layout.world_size == 1)
      ops_.copy(g.buffer.data(), shard, unit.shard * sizeof(T));
    else
      g.work = coll_.all_gather_async(shard, g.buffer.data(), unit.shard, dtype_of_v<T>);
    in_flight_.push_back(std::move(g));
  }

  const ZeroPlan& plan_;
  Collective& coll_;
  Arena& arena_;
  step::LoopOps<T>& ops_;
  const T* params_;
  Timeline* timeline_;
  offload::ParamFileTier* file_;  // --offload-params file:DIR (null: shards in params_)
  std::vector<TypedBuffer<T>> in_use_;
  std::deque<Gathering> in_flight_;
  schedule::GatherWindow window_;  // the gathers of a micro-batch and how far ahead each acquire issues them
  std::size_t position_ = 0;       // next position of the acquire order
  std::size_t next_issue_ = 0;     // next gather (index into window_.units) to issue
};

}  // namespace zt::zero
