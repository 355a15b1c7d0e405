// zero/unit_gatherer.h — stage 3's parameter gathers: each unit's 16-bit shards all-gathered into
// a temporary full unit just before use, released right after, with the next --prefetch gathers
// of the known acquire order issued ahead so they overlap the current unit's compute.
//
// The acquire order of a micro-batch is fixed by the model (model/param_provider.h) and listed in
// ZeroPlan::acquire_order; an acquire that does not follow it is an error (every rank must issue
// the same collectives in the same order). Gathers do not cross micro-batches. It holds no
// parameters of its own: shards stay with the caller.
#pragma once

#include <algorithm>
#include <cstring>
#include <deque>
#include <vector>

#include "collective/collective.h"
#include "core/check.h"
#include "memory/arena.h"
#include "memory/buffer.h"
#include "zero/timeline.h"
#include "zero/zero_plan.h"

namespace zt::zero {

/// All-gathers units of 16-bit (or FP32) parameter shards on demand, with prefetch.
template <typename T>
class UnitGatherer {
 public:
  /// @param plan the rank's plan (kept by reference). @param coll the group. @param arena where
  /// gathered units live. @param shards this rank's shards of every unit (layout shard offsets).
  /// @param timeline where blocked time is recorded (may be null).
  UnitGatherer(const ZeroPlan& plan, Collective& coll, Arena& arena, const T* shards,
               Timeline* timeline = nullptr)
      : plan_(plan), coll_(coll), arena_(arena), shards_(shards), timeline_(timeline),
        in_use_(plan.layout.units.size()) {}

  /// The full unit u, gathered (waits for its all-gather; issues the prefetches).
  /// @param u the unit, which must be the next in the acquire order. @return its parameters.
  const T* acquire(std::size_t u) {
    const auto& order = plan_.acquire_order;
    const std::size_t at = position_++;
    ZT_CHECK(at < order.size() && order[at] == u, "stage 3: unexpected acquire order at position ", at,
             " (unit ", u, ")");
    const std::size_t last = std::min(order.size(), at + 1 + plan_.prefetch);
    while (next_issue_ < last) issue(next_issue_++);
    Gathering g = std::move(in_flight_.front());
    in_flight_.pop_front();
    const double t0 = timeline_ ? timeline_->now_us() : 0;
    g.work.wait();
    if (timeline_) timeline_->add("wait all_gather " + plan_.layout.units[u].name, "wait", t0);
    in_use_[u] = std::move(g.buffer);
    return in_use_[u].data();
  }

  /// Free unit u's gathered copy. @param u the unit.
  void release(std::size_t u) { in_use_[u].reset(); }

  /// A micro-batch is over: the next acquire starts the order again.
  void restart() { position_ = next_issue_ = 0; }

 private:
  struct Gathering {
    TypedBuffer<T> buffer;
    Work work;
  };

  void issue(std::size_t position) {
    const auto& unit = plan_.layout.units[plan_.acquire_order[position]];
    Gathering g;
    g.buffer = make_buffer<T>(arena_, unit.full, zero_category::gathered_params);
    const T* shard = shards_ + unit.shard_offset;
    if (plan_.layout.world_size == 1)
      std::memcpy(static_cast<void*>(g.buffer.data()), shard, unit.shard * sizeof(T));
    else
      g.work = coll_.all_gather_async(shard, g.buffer.data(), unit.shard, dtype_of_v<T>);
    in_flight_.push_back(std::move(g));
  }

  const ZeroPlan& plan_;
  Collective& coll_;
  Arena& arena_;
  const T* shards_;
  Timeline* timeline_;
  std::vector<TypedBuffer<T>> in_use_;
  std::deque<Gathering> in_flight_;
  std::size_t position_ = 0;
  std::size_t next_issue_ = 0;
};

}  // namespace zt::zero
