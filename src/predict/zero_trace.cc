// predict/zero_trace.cc — a ZeRO rank's arena events replayed from its plan (see zero_trace.h).
// Each class below mirrors one engine component's allocations and releases, nothing else; the
// comments name the code they follow. The rules themselves are not restated here: which gathers
// an acquire issues, how a unit is cut into buckets and where its reduction lands come from
// schedule/ (as for the engine), the sizes of the set-up from setup_allocations, and a new
// accumulator buffer's category from step::accumulator_category.
#include "predict/zero_trace.h"

#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "predict/zero_memory.h"
#include "reduce/canonical_tree.h"
#include "schedule/buckets.h"
#include "schedule/gather_window.h"
#include "schedule/pipeline.h"

namespace zt::predict {

using namespace zt::zero;

namespace {

using Kind = model::ProviderCall::Kind;

/// One arena block, as a token: live from its allocation to its release.
struct Token {
  uint64_t id = 0;
  std::size_t bytes = 0;
  std::string category;
  bool live = false;
};

/// The arena's numbering: every non-empty allocation takes the next id (memory/arena.cc).
class Recorder {
 public:
  Token allocate(std::size_t bytes, const std::string& category) {
    if (bytes == 0) return {};  // an empty allocation owns no block and is not traced
    Token t{next_++, bytes, category, true};
    events_.push_back({true, t.id, bytes, category});
    return t;
  }
  void release(Token& t) {
    if (!t.live) return;
    events_.push_back({false, t.id, t.bytes, t.category});
    t.live = false;
  }
  std::vector<ArenaEvent> take() { return std::move(events_); }

 private:
  std::vector<ArenaEvent> events_;
  uint64_t next_ = 0;
};

/// UnitGatherer (unit_gatherer.h): the gathers of schedule::gather_window issued by each acquire
/// (each a full unit), a gathered unit freed at its release.
class GathererReplay {
 public:
  GathererReplay(const ZeroPlan& p, const std::vector<std::size_t>& order, Recorder& rec)
      : p_(p),
        rec_(rec),
        in_use_(p.layout.units.size()),
        window_(schedule::gather_window(order, p.params_layout.sharded, p.prefetch)) {}
  void acquire(std::size_t u) {
    const std::size_t at = position_++;
    for (; next_issue_ < window_.issued[at]; ++next_issue_)
      in_flight_.push_back(
          rec_.allocate(p_.layout.units[window_.units[next_issue_]].full * width(), zero_category::gathered_params));
    if (!window_.gathers[at]) return;
    in_use_[u] = in_flight_.front();
    in_flight_.pop_front();
  }
  void release(std::size_t u) { rec_.release(in_use_[u]); }
  void restart() { position_ = next_issue_ = 0; }

 private:
  std::size_t width() const { return model::bytes_of(p_.shape.precision); }
  const ZeroPlan& p_;
  Recorder& rec_;
  std::vector<Token> in_use_;
  std::deque<Token> in_flight_;
  schedule::GatherWindow window_;
  std::size_t position_ = 0, next_issue_ = 0;
};

/// The engine's per-unit CanonicalGradAccumulator: FP32 leaves of grad_extent(u) elements in
/// step::accumulator_category's categories (the accumulator is the gradient storage); a merge frees
/// its right operand (optim/grad_accumulator.h).
class AccumulatorReplay {
 public:
  AccumulatorReplay(const ZeroPlan& p, Recorder& rec) : p_(p), rec_(rec) {
    const auto merge = [this](Token&, Token&& right) { rec_.release(right); };
    for (std::size_t u = 0; u < p.layout.units.size(); ++u) acc_.emplace_back(Merge(merge));
  }
  Token allocate_leaf(std::size_t u) {
    return rec_.allocate(p_.grad_extent(u) * 4, step::accumulator_category(acc_[u].live_partials(), true));
  }
  void push_leaf(std::size_t u, Token leaf) { acc_[u].push(std::move(leaf)); }
  void push(std::size_t u) { push_leaf(u, allocate_leaf(u)); }
  Token finish(std::size_t u) { return acc_[u].finish(); }

 private:
  using Merge = std::function<void(Token&, Token&&)>;
  const ZeroPlan& p_;
  Recorder& rec_;
  std::vector<CanonicalAccumulator<Token, Merge>> acc_;
};

/// The engine's step: its provider calls, GradReducer, keep_grad and finish_unit_grads.
class StepReplay {
 public:
  StepReplay(const ZeroPlan& p, bool overlap, Recorder& rec)
      : p_(p), overlap_(overlap), rec_(rec), acc_(p, rec), staging_(units()), sum32_(units()), sum16_(units()) {
    if (p.spec.params) gatherer_ = std::make_unique<GathererReplay>(p, p.acquire_order, rec);
  }

  void run() {
    if (p_.pipelined()) {
      pipeline_passes();
    } else {
      for (std::size_t j = 0; j < p_.micro_batches_per_rank; ++j) {
        for (const auto& c : p_.calls) call(c);
        complete();
        if (gatherer_) gatherer_->restart();
      }
    }
    for (std::size_t u : p_.units_here) finish_unit_grads(u);
    for (auto& g : sum32_) rec_.release(g);
    for (auto& g : sum16_) rec_.release(g);
  }

 private:
  std::size_t units() const { return p_.layout.units.size(); }
  std::size_t N() const { return p_.layout.world_size; }
  std::size_t t() const { return model::bytes_of(p_.shape.precision); }
  bool fp32() const { return p_.shape.precision == model::Precision::fp32; }

  // ---- a pipeline stage's step (pipeline/stage_runner.h): wte read once for the last stage,
  // then the passes in the schedule's order, each the forward's or the backward's calls; a last
  // stage's reads of wte are its received copy's, never the gatherer's ----
  void pipeline_passes() {
    const bool tied_copy = p_.pp_rank == p_.pp_size - 1;
    const auto forward_end = p_.calls.begin() + static_cast<std::ptrdiff_t>(p_.forward_calls);
    if (p_.pp_rank == 0) call({Kind::acquire, 0}), call({Kind::release, 0});
    for (const auto& op :
         schedule::stage_order(p_.pp_schedule, p_.pp_size, p_.pp_rank, static_cast<int>(p_.micro_batches_per_rank))) {
      const bool forward = op.kind == schedule::PipeOp::Kind::forward;
      for (auto c = forward ? p_.calls.begin() : forward_end; c != (forward ? forward_end : p_.calls.end()); ++c)
        if (!(tied_copy && c->unit == 0 && (c->kind == Kind::acquire || c->kind == Kind::release))) call(*c);
      if (!forward) complete();
    }
    if (gatherer_) gatherer_->restart();
  }

  // ---- the ParamProvider of train_zero.cc ----
  void call(const model::ProviderCall& c) {
    const auto u = static_cast<std::size_t>(c.unit);
    switch (c.kind) {
      case Kind::acquire:
        if (gatherer_) gatherer_->acquire(u);
        break;
      case Kind::release:
        if (gatherer_) gatherer_->release(u);
        break;
      case Kind::grad:
        staging_[u] = rec_.allocate(p_.layout.units[u].full * t(), train::category::grad_staging);
        break;
      case Kind::grad_done:
        if (p_.reduce_each_micro_batch && N() > 1)
          close(u);
        else
          keep_grad16(u);
        rec_.release(staging_[u]);
        break;
      case Kind::param_grad_done:
        if (!p_.bucket_elements || !p_.reduce_each_micro_batch || N() == 1) break;
        open(u);
        issue_ready(u, static_cast<std::size_t>(p_.manifest.params[static_cast<std::size_t>(c.param)].offset_in_unit));
        break;
    }
  }

  // ---- keep_grad: a 16-bit gradient into the step's sum (16-bit storage or an FP32 leaf) ----
  void keep_grad16(std::size_t u) {
    if (!p_.grad_storage_16bit) return acc_.push(u);
    const std::size_t n = p_.reduce_each_micro_batch && N() > 1 ? p_.reduced_extent(u) : p_.layout.units[u].full;
    Token fresh = rec_.allocate(n * t(), train::category::grads);
    rec_.release(sum16_[u]);  // the move-assignment frees the old buffer after the new one exists
    sum16_[u] = fresh;
  }

  // ---- GradReducer ----
  struct Pending {
    std::size_t unit = 0;
    Token leaf, wire;
    std::deque<Token> buckets;
    std::size_t issued = 0;
  };
  void open(std::size_t u) {
    if (open_unit_ == u) return;
    complete();
    Pending q;
    q.unit = u;
    if (schedule::wire16(p_.landing))
      q.wire = rec_.allocate(p_.reduced_extent(u) * t(), zero_category::reduce_wire);
    else if (schedule::scatters(p_.landing))
      q.leaf = acc_.allocate_leaf(u);
    else
      q.leaf = rec_.allocate(p_.layout.units[u].full * 4, zero_category::grad_leaf);
    pending_.push_back(std::move(q));
    open_unit_ = u;
  }
  void issue_ready(std::size_t u, std::size_t from) {
    Pending& q = pending_.back();
    const schedule::UnitBuckets& buckets = p_.buckets[u];
    for (const std::size_t ready = schedule::buckets_ready(buckets, from); q.issued < ready; ++q.issued) {
      if (!schedule::scatters(p_.landing)) continue;  // the all-reduce works on the buffer opened above
      if (q.buckets.size() == schedule::kBucketsInFlight) {
        rec_.release(q.buckets.front());
        q.buckets.pop_front();
      }
      const std::size_t n = buckets.issue_order[q.issued].size();
      q.buckets.push_back(q.wire.live ? rec_.allocate(n * t(), zero_category::reduce_wire)
                                      : rec_.allocate(n * 4, zero_category::grad_leaf));
    }
  }
  void close(std::size_t u) {
    open(u);
    issue_ready(u, 0);
    open_unit_ = kNoUnit;
    if (!overlap_) complete();
  }
  void complete() {
    for (auto& q : pending_) {
      for (auto& b : q.buckets) rec_.release(b);
      q.buckets.clear();
      if (q.wire.live) {
        keep_grad16(q.unit);
      } else if (schedule::scatters(p_.landing)) {
        acc_.push_leaf(q.unit, q.leaf);  // the reduce-scatter landed in the unit's next leaf
        q.leaf.live = false;
      } else {
        acc_.push(q.unit);  // an all-reduce's FP32 result, copied into a leaf
      }
    }
    for (auto& q : pending_) rec_.release(q.wire), rec_.release(q.leaf);
    pending_.clear();
  }

  // ---- the step's end: finish_unit_grads ----
  void finish_unit_grads(std::size_t u) {
    if (!p_.grad_storage_16bit) sum32_[u] = acc_.finish(u);
    if (p_.reduce_each_micro_batch || N() == 1 || p_.grad_storage_16bit) return;
    if (!fp32() && p_.reduce_in_compute_type) {  // the FP32 sum travels as a 16-bit copy
      Token wire = rec_.allocate(p_.layout.units[u].full * t(), zero_category::reduce_wire);
      rec_.release(wire);
    }
  }

  static constexpr std::size_t kNoUnit = static_cast<std::size_t>(-1);

  const ZeroPlan& p_;
  bool overlap_;
  Recorder& rec_;
  AccumulatorReplay acc_;
  std::unique_ptr<GathererReplay> gatherer_;
  std::vector<Token> staging_, sum32_, sum16_;
  std::vector<Pending> pending_;
  std::size_t open_unit_ = kNoUnit;
};

/// train_zero.cc's allocate(), in its order (setup_allocations: the sharding description's sizes).
void replay_setup(const ZeroPlan& p, Recorder& rec, std::vector<Token>& kept) {
  for (const auto& a : setup_allocations(p)) kept.push_back(rec.allocate(a.bytes, a.category));
}

/// HeldoutEvaluator::evaluate at stage 3: P = ceil(R / N) passes, each the forward's acquires and
/// releases (a rank without a round left acquires and releases each unit in turn).
void replay_evaluation(const ZeroPlan& p, std::size_t rounds, Recorder& rec) {
  if (!rounds || !p.spec.params) return;
  const std::size_t N = p.layout.world_size, q = p.layout.rank;
  const std::vector<std::size_t> order = forward_acquire_order(p);
  std::vector<model::ProviderCall> forward;  // the forward's calls (a last stage's tied reads are its copy's)
  const bool tied_copy = p.pipelined() && p.pp_rank == p.pp_size - 1;
  for (std::size_t k = 0; k < p.forward_calls; ++k)
    if (!(tied_copy && p.calls[k].unit == 0)) forward.push_back(p.calls[k]);
  if (p.pipelined() && p.pp_rank == 0) {  // wte for the last stage, by a gatherer of its own
    GathererReplay share(p, {0}, rec);
    share.acquire(0), share.release(0);
  }
  GathererReplay g(p, order, rec);
  for (std::size_t j = 0; j < (rounds + N - 1) / N; ++j) {
    if (j * N + q < rounds) {
      for (const auto& c : forward)
        c.kind == Kind::acquire ? g.acquire(static_cast<std::size_t>(c.unit))
                                : g.release(static_cast<std::size_t>(c.unit));
    } else {
      for (std::size_t u : order) g.acquire(u), g.release(u);
    }
    g.restart();
  }
}

}  // namespace

std::vector<ArenaEvent> predicted_trace(const ZeroPlan& p, bool overlap, std::size_t heldout_rounds) {
  Recorder rec;
  std::vector<Token> kept;  // alive to the end of the run
  replay_setup(p, rec, kept);
  StepReplay(p, overlap, rec).run();
  replay_evaluation(p, heldout_rounds, rec);
  return rec.take();
}

std::vector<ArenaEvent> gradient_events(const ZeroPlan& p, bool overlap) {
  std::vector<ArenaEvent> events;
  for (auto& e : predicted_trace(p, overlap, 0))
    if (e.category == train::category::grads || e.category == train::category::accum_partials)
      events.push_back(std::move(e));
  return events;
}

std::vector<zero_r::ReplayRegion> md_regions(const ZeroPlan& p, bool overlap) {
  std::vector<zero_r::ReplayRegion> regions;
  // exactly what first-fit needs for this plan's gradient allocations
  regions.push_back({"gradients",
                     {train::category::grads, train::category::accum_partials},
                     zero_r::min_capacity(gradient_events(p, overlap))});
  std::size_t checkpoints = 0;  // allocated once, at set-up
  for (const auto& a : setup_allocations(p))
    if (a.category == train::category::activation_checkpoints) checkpoints += a.bytes;
  if (checkpoints)
    regions.push_back({"checkpoints", {train::category::activation_checkpoints}, Arena::aligned_size(checkpoints)});
  return regions;
}

}  // namespace zt::predict
