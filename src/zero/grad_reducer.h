// zero/grad_reducer.h — moving a unit's gradient between ranks: the reduce-scatter (or
// all-reduce) of each flat unit, cut into stage-2 buckets, started as backward finishes the
// parameters a bucket covers and completed while the next unit's backward runs (overlap).
//
// The buckets, their order, the ready rule, the uneven reduce-scatter counts, where a reduction
// lands and C_B's kBucketsInFlight are schedule/buckets.h's (the memory prediction replays the same
// schedule); this file moves the values along it. Reduction order is the Collective's
// (deterministic: the canonical tree over ranks). With --reduce-dtype compute the values travel and
// are summed as 16-bit numbers (Accumulation::storage of the collective). At most one unit's
// buffers are in flight: opening a unit first completes the previous one. What to do with a reduced
// shard is the caller's (the Sink). It does not accumulate micro-batches and does not decide the
// schedule (train_zero.cc does).
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
#include "schedule/buckets.h"
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
  /// @param ops the loop's ops on the arena's memory. @param timeline where blocked time is
  /// recorded (may be null).
  GradReducer(const ZeroPlan& plan, Collective& coll, Arena& arena, bool overlap, Sink sink, LeafSource leaves,
              step::LoopOps<T>& ops, Timeline* timeline = nullptr)
      : plan_(plan),
        lay_(plan.layout),
        coll_(coll),
        arena_(arena),
        ops_(ops),
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
    Pending p;
    p.unit = u;
    // where the reduction lands (schedule::Landing): a 16-bit wire (the shard, or the whole unit
    // all-reduced in place), the unit's next accumulator leaf, or an FP32 copy of the whole unit
    if (schedule::wire16(plan_.landing))
      p.wire = make_buffer<T>(arena_, plan_.reduced_extent(u), zero_category::reduce_wire);
    else if (schedule::scatters(plan_.landing))
      p.leaf = leaves_(u);
    else
      p.leaf = make_buffer<float>(arena_, lay_.units[u].full, zero_category::grad_leaf);
    pending_.push_back(std::move(p));
    open_unit_ = u;
  }

  /// Issue, in the schedule's order (last bucket first), every not yet issued bucket of the open
  /// unit u that the ready rule lets go (schedule::buckets_ready). C_B (ZeRO paper, Sec. 6.2): a
  /// bucket travels in a buffer of its own size, and at most schedule::kBucketsInFlight of them
  /// exist at once, so these buffers are bounded by --bucket-mb, not by a unit's or the model's size.
  /// @param u the open unit. @param grad the unit's micro-batch gradient (full extent, padding
  /// zero). @param from first final element.
  void issue_ready(std::size_t u, const T* grad, std::size_t from) {
    Pending& p = pending_.back();
    const schedule::UnitBuckets& buckets = plan_.buckets[u];
    const std::size_t full = lay_.units[u].full;
    for (const std::size_t ready = schedule::buckets_ready(buckets, from); p.issued < ready; ++p.issued) {
      const schedule::Range r = buckets.issue_order[p.issued];
      if (!schedule::scatters(plan_.landing)) {  // one bucket: the whole unit, all-reduced in place
        if (p.wire.size()) {
          ops_.copy(p.wire.data(), grad, full * sizeof(T));
          p.works.push_back(coll_.all_reduce_async(p.wire.data(), full, dtype_of_v<T>));
        } else {
          ops_.widen(p.leaf.data(), grad, full);
          p.works.push_back(coll_.all_reduce_async(p.leaf.data(), full, dtype_of_v<float>));
        }
      } else {
        if (p.buckets.size() == schedule::kBucketsInFlight) {  // reuse: the oldest bucket's buffer goes first
          wait_one(p.buckets.front().work, u);
          p.buckets.pop_front();
        }
        InFlight f;
        if (p.wire.size()) {
          f.wire = make_buffer<T>(arena_, r.size(), zero_category::reduce_wire);
          ops_.copy(f.wire.data(), grad + r.begin, r.size() * sizeof(T));
          f.work = reduce_scatter(f.wire.data(), p.wire.data(), u, r);
        } else {
          f.leaf = make_buffer<float>(arena_, r.size(), zero_category::grad_leaf);
          ops_.widen(f.leaf.data(), grad + r.begin, r.size());
          f.work = reduce_scatter(f.leaf.data(), p.leaf.data(), u, r);
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
      else if (schedule::scatters(plan_.landing))  // it landed in the accumulator's leaf
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
    std::vector<Work> works;
    if (!schedule::scatters(plan_.landing)) {
      works.push_back(coll_.all_reduce_async(in, lay_.units[u].full, dtype_of_v<V>));
    } else {  // every bucket is final: issued in the unit's order, each landing in this rank's shard
      const auto& order = plan_.buckets[u].issue_order;
      for (auto r = order.rbegin(); r != order.rend(); ++r)
        works.push_back(reduce_scatter(in + r->begin, in + lay_.rank * lay_.units[u].shard, u, *r));
    }
    wait_all(works, u);
  }

 private:
  static constexpr std::size_t kNoUnit = static_cast<std::size_t>(-1);

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
    std::deque<InFlight> buckets;  // reduce-scatters in flight, at most schedule::kBucketsInFlight
    std::size_t issued = 0;        // buckets of the issue order issued so far
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
  // range r of unit u, its values at `values` (r.size() of them): an uneven reduce-scatter whose
  // part for this rank lands in `shard_out` (this rank's shard of the unit), at the schedule's offset
  template <typename V>
  Work reduce_scatter(const V* values, V* shard_out, std::size_t u, schedule::Range r) {
    const schedule::RangeScatter s = schedule::reduce_scatter_counts(r, lay_.units[u].shard, N(), lay_.rank);
    return coll_.reduce_scatter_v_async(values, shard_out + s.at, s.counts, dtype_of_v<V>);
  }

  const ZeroPlan& plan_;
  const Layout& lay_;
  Collective& coll_;
  Arena& arena_;
  step::LoopOps<T>& ops_;
  bool overlap_;
  Sink sink_;
  LeafSource leaves_;
  Timeline* timeline_;
  std::vector<Pending> pending_;
  std::size_t open_unit_ = kNoUnit;
};

}  // namespace zt::zero
