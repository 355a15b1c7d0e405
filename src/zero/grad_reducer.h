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
#include <deque>
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
  /// and holds plan.reduced_extent(unit) elements of this rank; an FP32 reduce-scatter's result is
  /// the buffer LeafSource gave (handed back by move), an all-reduce's a pointer.
  using Sink =
      std::function<void(std::size_t unit, const T* reduced16, const float* reduced32, TypedBuffer<float>* leaf)>;
  /// Gives the buffer an FP32 reduce-scatter of unit u lands in (the unit's next accumulator leaf,
  /// so the result needs no copy and no buffer of its own).
  using LeafSource = std::function<TypedBuffer<float>(std::size_t unit)>;

  /// @param plan the rank's plan (kept by reference). @param coll the group. @param arena where
  /// the in-flight buffers live. @param overlap false: wait for every call at once.
  /// @param sink where completed reductions go. @param leaves where FP32 reduce-scatters land.
  /// @param timeline where blocked time is recorded (may be null).
  GradReducer(const ZeroPlan& plan, Collective& coll, Arena& arena, bool overlap, Sink sink, LeafSource leaves,
              Timeline* timeline = nullptr)
      : plan_(plan),
        lay_(plan.layout),
        coll_(coll),
        arena_(arena),
        overlap_(overlap),
        sink_(std::move(sink)),
        leaves_(std::move(leaves)),
        timeline_(timeline) {}

  /// Reductions still in flight read and write buffers this object owns: wait for them before
  /// the buffers go, also when an exception unwinds the step.
  ~GradReducer() {
    for (auto& p : pending_) {
      for (auto& f : p.buckets) p.works.push_back(std::move(f.work));
      for (auto& w : p.works) {
        try {
          w.wait();
        } catch (...) {  // the step is failing already; its first error is the one reported
        }
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
    const std::size_t full = lay_.units[u].full, shard = lay_.units[u].shard;
    Pending p;
    p.unit = u;
    if (!plan_.reduce_scatters_grad) {  // an all-reduce of the whole unit, in place
      if (plan_.reduce_in_compute_type)
        p.wire = make_buffer<T>(arena_, full, zero_category::reduce_wire);
      else
        p.leaf = make_buffer<float>(arena_, full, zero_category::grad_leaf);
    } else if (plan_.reduce_in_compute_type) {  // reduce-scatters land in this rank's shard
      p.wire = make_buffer<T>(arena_, shard, zero_category::reduce_wire);
    } else {
      p.leaf = leaves_(u);  // the reduce-scatters land in the unit's next accumulator leaf
    }
    p.next_bucket = (full + bucket(u) - 1) / bucket(u);
    pending_.push_back(std::move(p));
    open_unit_ = u;
  }

  /// Issue, last bucket first, every not yet issued bucket of the open unit u that starts at or
  /// after element `from` (all its gradients final). C_B (ZeRO paper, Sec. 6.2): a bucket travels
  /// in a buffer of its own size, and at most kBucketsInFlight of them exist at once, so these
  /// buffers are bounded by --bucket-mb, not by the size of a unit or of the model.
  /// @param u the open unit. @param grad the unit's micro-batch gradient (full extent, padding
  /// zero). @param from first final element.
  void issue_ready(std::size_t u, const T* grad, std::size_t from) {
    Pending& p = pending_.back();
    const std::size_t full = lay_.units[u].full, b = bucket(u);
    while (p.next_bucket > 0 && (p.next_bucket - 1) * b >= from) {
      const std::size_t a = --p.next_bucket * b, z = std::min(full, a + b);
      if (!plan_.reduce_scatters_grad) {  // one bucket: the whole unit, all-reduced in place
        if (p.wire.size()) {
          std::memcpy(static_cast<void*>(p.wire.data()), grad, full * sizeof(T));
          p.works.push_back(coll_.all_reduce_async(p.wire.data(), full, dtype_of_v<T>));
        } else {
          for (std::size_t i = 0; i < full; ++i) p.leaf[i] = static_cast<float>(grad[i]);
          p.works.push_back(coll_.all_reduce_async(p.leaf.data(), full, dtype_of_v<float>));
        }
      } else {
        if (p.buckets.size() == kBucketsInFlight) {  // reuse: the oldest bucket's buffer goes first
          wait_one(p.buckets.front().work, u);
          p.buckets.pop_front();
        }
        InFlight f;
        if (p.wire.size()) {
          f.wire = make_buffer<T>(arena_, z - a, zero_category::reduce_wire);
          std::memcpy(static_cast<void*>(f.wire.data()), grad + a, (z - a) * sizeof(T));
          f.work = reduce_scatter_bucket(f.wire.data(), p.wire.data(), u, a, z);
        } else {
          f.leaf = make_buffer<float>(arena_, z - a, zero_category::grad_leaf);
          for (std::size_t i = a; i < z; ++i) f.leaf[i - a] = static_cast<float>(grad[i]);
          f.work = reduce_scatter_bucket(f.leaf.data(), p.leaf.data(), u, a, z);
        }
        p.buckets.push_back(std::move(f));
      }
      if (!overlap_) {
        Work& w = p.works.empty() ? p.buckets.back().work : p.works.back();
        wait_one(w, u);
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
      for (auto& f : p.buckets) p.works.push_back(std::move(f.work));
      wait_all(p.works, p.unit);
      p.buckets.clear();
      if (p.wire.size())
        sink_(p.unit, p.wire.data(), nullptr, nullptr);
      else if (plan_.reduce_scatters_grad)
        sink_(p.unit, nullptr, p.leaf.data(), &p.leaf);
      else
        sink_(p.unit, nullptr, p.leaf.data(), nullptr);
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

 public:
  /// C_B: reduce-scatter buckets whose buffers exist at once (one travelling while the next fills).
  static constexpr std::size_t kBucketsInFlight = 2;

 private:
  struct InFlight {           // one bucket's reduce-scatter
    TypedBuffer<float> leaf;  // its FP32 values
    TypedBuffer<T> wire;      // or its 16-bit values (--reduce-dtype compute)
    Work work;
  };
  struct Pending {
    std::size_t unit = 0;
    TypedBuffer<float> leaf;       // FP32: the whole unit (all-reduce, in place) or this rank's shard (output)
    TypedBuffer<T> wire;           // the same in 16 bits (--reduce-dtype compute)
    std::vector<Work> works;       // the all-reduce
    std::deque<InFlight> buckets;  // reduce-scatters in flight, at most kBucketsInFlight
    std::size_t next_bucket = 0;   // buckets [0, next_bucket) not issued yet
  };

  std::size_t N() const { return lay_.world_size; }
  void wait_one(Work& w, std::size_t u) {
    const double t0 = timeline_ ? timeline_->now_us() : 0;
    w.wait();
    if (timeline_) timeline_->add("wait reduce " + lay_.units[u].name, "wait", t0);
  }
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

  // bucket [a, z) of unit u, held in its own buffer `in` (z - a values): an uneven reduce-scatter
  // whose part for this rank lands in `shard` (this rank's shard of the unit)
  template <typename V>
  Work reduce_scatter_bucket(const V* in, V* shard_out, std::size_t u, std::size_t a, std::size_t z) {
    const std::size_t shard = lay_.units[u].shard, r = lay_.rank;
    std::vector<std::size_t> counts(N());
    for (std::size_t q = 0; q < N(); ++q) {
      const std::size_t lo = std::max(a, q * shard), hi = std::min(z, (q + 1) * shard);
      counts[q] = hi > lo ? hi - lo : 0;
    }
    V* dst = counts[r] ? shard_out + (std::max(a, r * shard) - r * shard) : shard_out;
    return coll_.reduce_scatter_v_async(in, dst, counts, dtype_of_v<V>);
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
  LeafSource leaves_;
  Timeline* timeline_;
  std::vector<Pending> pending_;
  std::size_t open_unit_ = kNoUnit;
};

}  // namespace zt::zero
