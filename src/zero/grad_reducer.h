// zero/grad_reducer.h — moving a unit's gradient between ranks: the reduce-scatter (or
// all-reduce) of each flat unit, cut into stage-2 buckets, started as backward finishes the
// parameters a bucket covers and completed while the next unit's backward runs (overlap).
//
// A bucket is a contiguous range [a, z) of the padded unit; its uneven reduce-scatter delivers to
// each rank the part of [a, z) inside that rank's shard, so buckets need not align with shards.
// Reduction order is the Collective's (deterministic: the canonical tree over ranks). With
// --reduce-dtype compute the values travel and are summed as 16-bit numbers (Accumulation::storage
// of the collective). At most one unit's buffers are in flight: opening a unit first completes
// the previous one. What to do with a reduced shard is the caller's (the Sink). It does not
// accumulate micro-batches and does not decide the schedule (train_zero.cc does).
#pragma once

#include <algorithm>
#include <cstring>
#include <exception>
#include <functional>
#include <vector>

#include "collective/collective.h"
#include "memory/arena.h"
#include "memory/buffer.h"
#include "zero/timeline.h"
#include "zero/zero_plan.h"

namespace zt::zero {

/// Reduces unit gradients over the ranks of a Collective, in T (compute type) or FP32.
template <typename T>
class GradReducer {
 public:
  /// Receives a completed reduction: `reduced16` (16-bit wire) or `reduced32` (FP32) is non-null
  /// and holds plan.reduced_extent(unit) elements of this rank.
  using Sink = std::function<void(std::size_t unit, const T* reduced16, const float* reduced32)>;

  /// @param plan the rank's plan (kept by reference). @param coll the group. @param arena where
  /// the in-flight buffers live. @param overlap false: wait for every call at once.
  /// @param sink where completed reductions go.
  /// @param timeline where blocked time is recorded (may be null).
  GradReducer(const ZeroPlan& plan, Collective& coll, Arena& arena, bool overlap, Sink sink,
              Timeline* timeline = nullptr)
      : plan_(plan),
        lay_(plan.layout),
        coll_(coll),
        arena_(arena),
        overlap_(overlap),
        sink_(std::move(sink)),
        timeline_(timeline) {}

  /// Reductions still in flight read and write buffers this object owns: wait for them before
  /// the buffers go, also when an exception unwinds the step.
  ~GradReducer() {
    for (auto& p : pending_)
      for (auto& w : p.works) {
        try {
          w.wait();
        } catch (...) {  // the step is failing already; its first error is the one reported
        }
      }
  }
  GradReducer(const GradReducer&) = delete;
  GradReducer& operator=(const GradReducer&) = delete;

  /// Begin unit u's reduction for this micro-batch (no-op if it is the open unit); completes
  /// the previous unit's first. @param u the unit.
  void open(std::size_t u) {
    if (open_unit_ == u) return;
    complete();
    const std::size_t full = lay_.units[u].full;
    Pending p;
    p.unit = u;
    if (plan_.reduce_in_compute_type) {
      p.wire = make_buffer<T>(arena_, full, zero_category::reduce_wire);
    } else {
      p.leaf = make_buffer<float>(arena_, full, zero_category::grad_leaf);
      if (plan_.reduce_scatters_grad) p.out = make_buffer<float>(arena_, lay_.units[u].shard, zero_category::grad_leaf);
    }
    p.next_bucket = (full + bucket(u) - 1) / bucket(u);
    pending_.push_back(std::move(p));
    open_unit_ = u;
  }

  /// Issue, last bucket first, every not yet issued bucket of the open unit u that starts at or
  /// after element `from` (all its gradients final). @param u the open unit.
  /// @param grad the unit's micro-batch gradient (full extent, padding zero). @param from first
  /// final element.
  void issue_ready(std::size_t u, const T* grad, std::size_t from) {
    Pending& p = pending_.back();
    const std::size_t full = lay_.units[u].full, b = bucket(u);
    while (p.next_bucket > 0 && (p.next_bucket - 1) * b >= from) {
      const std::size_t a = --p.next_bucket * b, z = std::min(full, a + b);
      if (p.wire.size()) {
        std::memcpy(static_cast<void*>(p.wire.data() + a), grad + a, (z - a) * sizeof(T));
        p.works.push_back(issue_range(p.wire.data(), p.wire.data() + shard_begin(u), u, a, z));
      } else {
        for (std::size_t i = a; i < z; ++i) p.leaf[i] = static_cast<float>(grad[i]);
        p.works.push_back(issue_range(p.leaf.data(), p.out.size() ? p.out.data() : p.leaf.data(), u, a, z));
      }
      if (!overlap_) {
        const double t0 = timeline_ ? timeline_->now_us() : 0;
        p.works.back().wait();
        if (timeline_) timeline_->add("wait reduce " + lay_.units[u].name, "wait", t0);
      }
    }
  }

  /// The unit's gradient is complete: issue whatever is left and close it.
  /// @param u the unit. @param grad its micro-batch gradient.
  void close(std::size_t u, const T* grad) {
    open(u);
    issue_ready(u, grad, 0);
    open_unit_ = kNoUnit;
    if (!overlap_) complete();
  }

  /// Wait for everything in flight and hand each result to the sink.
  void complete() {
    for (auto& p : pending_) {
      wait_all(p.works, p.unit);
      if (p.wire.size())
        sink_(p.unit, p.wire.data() + shard_begin(p.unit), nullptr);
      else
        sink_(p.unit, nullptr, p.out.size() ? p.out.data() : p.leaf.data());
    }
    pending_.clear();
  }

  /// Reduce a whole unit now (the once-per-step sync), in place: afterwards this rank's part
  /// starts at in + (its shard's offset, or 0 for an all-reduce).
  /// @param in the unit's full-extent values (FP32 or T). @param u the unit.
  template <typename V>
  void reduce_in_place(V* in, std::size_t u) {
    const std::size_t full = lay_.units[u].full, b = bucket(u);
    std::vector<Work> works;
    for (std::size_t a = 0; a < full; a += b)
      works.push_back(issue_range(in, in + shard_begin(u), u, a, std::min(full, a + b)));
    wait_all(works, u);
  }

 private:
  static constexpr std::size_t kNoUnit = static_cast<std::size_t>(-1);

  struct Pending {
    std::size_t unit = 0;
    TypedBuffer<float> leaf;  // FP32 full-extent input (reduced in place for an all-reduce)
    TypedBuffer<T> wire;      // 16-bit full-extent input with --reduce-dtype compute
    TypedBuffer<float> out;   // FP32 shard output of a reduce-scatter
    std::vector<Work> works;
    std::size_t next_bucket = 0;  // buckets [0, next_bucket) not issued yet
  };

  std::size_t N() const { return lay_.world_size; }
  // every call is waited for even when one fails, so no call outlives the buffers it uses
  void wait_all(std::vector<Work>& works, std::size_t u) {
    const double t0 = timeline_ ? timeline_->now_us() : 0;
    std::exception_ptr first;
    for (auto& w : works) {
      try {
        w.wait();
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (timeline_) timeline_->add("wait reduce " + lay_.units[u].name, "wait", t0);
    if (first) std::rethrow_exception(first);
  }
  std::size_t bucket(std::size_t u) const {
    return plan_.bucket_elements && plan_.reduce_scatters_grad ? plan_.bucket_elements : lay_.units[u].full;
  }
  // where this rank's part of the reduction starts: its shard (reduce-scatter) or 0 (all-reduce)
  std::size_t shard_begin(std::size_t u) const {
    return plan_.reduce_scatters_grad ? lay_.rank * lay_.units[u].shard : 0;
  }

  // [a, z) of unit u: an all-reduce of the whole unit in place (in == out) without gradient
  // sharding, else an uneven reduce-scatter; `out` is this rank's shard (or the unit)
  template <typename V>
  Work issue_range(V* in, V* out, std::size_t u, std::size_t a, std::size_t z) {
    const std::size_t shard = lay_.units[u].shard, r = lay_.rank;
    if (!plan_.reduce_scatters_grad) {
      if (in != out) std::memcpy(static_cast<void*>(out), in, lay_.units[u].full * sizeof(V));
      return coll_.all_reduce_async(out, lay_.units[u].full, dtype_of_v<V>);
    }
    std::vector<std::size_t> counts(N());
    for (std::size_t q = 0; q < N(); ++q) {
      const std::size_t lo = std::max(a, q * shard), hi = std::min(z, (q + 1) * shard);
      counts[q] = hi > lo ? hi - lo : 0;
    }
    V* dst = counts[r] ? out + (std::max(a, r * shard) - r * shard) : out;
    return coll_.reduce_scatter_v_async(in + a, dst, counts, dtype_of_v<V>);
  }

  const ZeroPlan& plan_;
  const Layout& lay_;
  Collective& coll_;
  Arena& arena_;
  bool overlap_;
  Sink sink_;
  Timeline* timeline_;
  std::vector<Pending> pending_;
  std::size_t open_unit_ = kNoUnit;
};

}  // namespace zt::zero
