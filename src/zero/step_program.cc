// zero/step_program.cc — a rank's step as operations (see step_program.h). Each class below
// generates the operations of one part of the step; the rules come from schedule/ (which gathers
// an acquire issues, how a unit is cut into buckets, where its reduction lands) and from
// step::accumulator_category (a new accumulator buffer's category), as for the engine.
#include "zero/step_program.h"

#include <cstdio>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "reduce/canonical_tree.h"
#include "schedule/buckets.h"
#include "schedule/gather_window.h"
#include "schedule/pipeline.h"
#include "step/categories.h"

namespace zt::zero {

namespace {

using Kind = model::ProviderCall::Kind;
constexpr uint32_t kNone = ~0u;

/// Builds a program: operations appended in order, buffers numbered as they are allocated.
class Builder {
 public:
  /// Append an operation; the allocations and releases that follow attach to it.
  Op& op(OpKind kind, int unit = -1) {
    prog_.ops.push_back({});
    prog_.ops.back().kind = kind;
    prog_.ops.back().unit = unit;
    return prog_.ops.back();
  }
  /// A buffer allocated by the last operation (none for zero bytes, as the arena allocates none).
  uint32_t alloc(std::size_t bytes, const std::string& category, std::size_t unit) {
    if (bytes == 0) return kNone;
    const auto id = static_cast<uint32_t>(prog_.buffers.size());
    prog_.buffers.push_back({category, bytes, static_cast<int>(unit)});
    live_.push_back(true);
    prog_.ops.back().allocs.push_back(id);
    return id;
  }
  /// A buffer the last operation frees (nothing if it is not live).
  void free(uint32_t& id) {
    if (id == kNone || !live_[id]) return;
    prog_.ops.back().frees.push_back(id);
    live_[id] = false;
    id = kNone;
  }
  /// The program, without the `free` operations that found nothing live to free.
  StepProgram take() {
    std::erase_if(prog_.ops, [](const Op& o) { return o.kind == OpKind::free && o.frees.empty() && o.allocs.empty(); });
    return std::move(prog_);
  }

 private:
  StepProgram prog_;
  std::vector<bool> live_;
};

/// UnitGatherer (unit_gatherer.h): the gathers of schedule::gather_window issued by each acquire
/// (each a full unit), a gathered unit freed at its release.
class Gathers {
 public:
  Gathers(const ZeroPlan& p, const std::vector<std::size_t>& order, Builder& b)
      : p_(p),
        b_(b),
        in_use_(p.layout.units.size(), kNone),
        window_(schedule::gather_window(order, p.params_layout.sharded, p.prefetch)) {}
  /// The gathers an acquire issues, then the acquire itself (it waits for its own).
  void acquire(std::size_t u) {
    const std::size_t at = position_++;
    for (; next_issue_ < window_.issued[at]; ++next_issue_) {
      const std::size_t g = window_.units[next_issue_];
      const std::size_t bytes = p_.layout.units[g].full * model::bytes_of(p_.shape.precision);
      b_.op(OpKind::all_gather, static_cast<int>(g)).bytes = bytes;
      in_flight_.push_back(b_.alloc(bytes, zero_category::gathered_params, g));
    }
    b_.op(OpKind::acquire, static_cast<int>(u));
    if (!window_.gathers[at]) return;
    in_use_[u] = in_flight_.front();
    in_flight_.pop_front();
  }
  void release(std::size_t u) {
    b_.op(OpKind::release, static_cast<int>(u));
    b_.free(in_use_[u]);
  }
  void restart() { position_ = next_issue_ = 0; }

 private:
  const ZeroPlan& p_;
  Builder& b_;
  std::vector<uint32_t> in_use_;
  std::deque<uint32_t> in_flight_;
  schedule::GatherWindow window_;
  std::size_t position_ = 0, next_issue_ = 0;
};

/// The engine's per-unit CanonicalGradAccumulator: FP32 leaves of grad_extent(u) elements in
/// step::accumulator_category's categories (the accumulator is the gradient storage); each merge
/// is an `add` that frees its right operand (optim/grad_accumulator.h).
class Sums {
 public:
  Sums(const ZeroPlan& p, Builder& b) : p_(p), b_(b) {
    for (std::size_t u = 0; u < p.layout.units.size(); ++u)
      acc_.emplace_back(Merge([this, u](uint32_t&, uint32_t&& right) {
        b_.op(OpKind::add, static_cast<int>(u));
        b_.free(right);
      }));
  }
  /// A leaf buffer of unit u, allocated by the last operation.
  uint32_t leaf(std::size_t u) {
    return b_.alloc(p_.grad_extent(u) * 4, step::accumulator_category(acc_[u].live_partials(), true), u);
  }
  void push(std::size_t u, uint32_t leaf_id) { acc_[u].push(std::move(leaf_id)); }
  /// A new leaf of unit u holding a micro-batch's gradient, and the merges it triggers.
  void accumulate(std::size_t u) {
    b_.op(OpKind::accumulate, static_cast<int>(u));
    push(u, leaf(u));
  }
  uint32_t finish(std::size_t u) { return acc_[u].finish(); }

 private:
  using Merge = std::function<void(uint32_t&, uint32_t&&)>;
  const ZeroPlan& p_;
  Builder& b_;
  std::vector<CanonicalAccumulator<uint32_t, Merge>> acc_;
};

/// The engine's step: its provider's answers to the model's calls, GradReducer, keep_grad and
/// finish_unit_grads (train_zero.cc, sharded_provider.h, grad_reducer.h, step_gradients.h).
class Step {
 public:
  Step(const ZeroPlan& p, bool overlap, Builder& b)
      : p_(p),
        overlap_(overlap),
        b_(b),
        sums_(p, b),
        staging_(units(), kNone),
        sum32_(units(), kNone),
        sum16_(units(), kNone) {
    if (p.spec.params) gathers_ = std::make_unique<Gathers>(p, p.acquire_order, b);
  }

  void run() {
    if (p_.pipelined()) {
      pipeline_passes();
    } else {
      const auto forward_end = p_.calls.begin() + static_cast<std::ptrdiff_t>(p_.forward_calls);
      for (std::size_t j = 0; j < p_.micro_batches_per_rank; ++j) {
        pass(true, static_cast<int>(j));
        for (auto c = p_.calls.begin(); c != forward_end; ++c) call(*c);
        pass(false, static_cast<int>(j));
        for (auto c = forward_end; c != p_.calls.end(); ++c) call(*c);
        complete();
        if (gathers_) gathers_->restart();
      }
    }
    for (std::size_t u : p_.units_here) finish_unit_grads(u);
    b_.op(OpKind::free);
    for (auto& g : sum32_) b_.free(g);
    for (auto& g : sum16_) b_.free(g);
  }

 private:
  std::size_t units() const { return p_.layout.units.size(); }
  std::size_t N() const { return p_.layout.world_size; }
  std::size_t t() const { return model::bytes_of(p_.shape.precision); }
  bool fp32() const { return p_.shape.precision == model::Precision::fp32; }
  void pass(bool forward, int micro) {
    Op& o = b_.op(OpKind::pass);
    o.forward = forward;
    o.micro = micro;
  }

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
      pass(forward, op.micro);
      for (auto c = forward ? p_.calls.begin() : forward_end; c != (forward ? forward_end : p_.calls.end()); ++c)
        if (!(tied_copy && c->unit == 0 && (c->kind == Kind::acquire || c->kind == Kind::release))) call(*c);
      if (!forward) complete();
    }
    if (gathers_) gathers_->restart();
  }

  // ---- the ParamProvider of train_zero.cc: each model call, then the engine's answer ----
  void call(const model::ProviderCall& c) {
    const auto u = static_cast<std::size_t>(c.unit);
    switch (c.kind) {
      case Kind::acquire:
        if (gathers_) return gathers_->acquire(u);
        b_.op(OpKind::acquire, c.unit);
        break;
      case Kind::release:
        if (gathers_) return gathers_->release(u);
        b_.op(OpKind::release, c.unit);
        break;
      case Kind::grad:
        b_.op(OpKind::grad, c.unit);
        staging_[u] = b_.alloc(p_.layout.units[u].full * t(), step::category::grad_staging, u);
        break;
      case Kind::grad_done:
        b_.op(OpKind::grad_done, c.unit);
        if (p_.reduce_each_micro_batch && N() > 1)
          close(u);
        else
          keep_grad16(u);
        b_.op(OpKind::free, c.unit);
        b_.free(staging_[u]);
        break;
      case Kind::param_grad_done: {
        Op& o = b_.op(OpKind::param_done, c.unit);
        o.param = c.param;
        if (!p_.bucket_elements || !p_.reduce_each_micro_batch || N() == 1) break;
        open(u);
        issue_ready(u, static_cast<std::size_t>(p_.manifest.params[static_cast<std::size_t>(c.param)].offset_in_unit));
        break;
      }
    }
  }

  // ---- keep_grad: a 16-bit gradient into the step's sum (16-bit storage or an FP32 leaf) ----
  void keep_grad16(std::size_t u) {
    if (!p_.grad_storage_16bit) return sums_.accumulate(u);
    const std::size_t n = p_.reduce_each_micro_batch && N() > 1 ? p_.reduced_extent(u) : p_.layout.units[u].full;
    b_.op(OpKind::keep16, static_cast<int>(u));
    const uint32_t fresh = b_.alloc(n * t(), step::category::grads, u);
    b_.free(sum16_[u]);  // the move-assignment frees the old buffer after the new one exists
    sum16_[u] = fresh;
  }

  // ---- GradReducer: a unit's reduction opened, its buckets issued, completed ----
  struct Pending {
    std::size_t unit = 0;
    uint32_t leaf = kNone, wire = kNone;
    std::deque<uint32_t> buckets;
    std::size_t issued = 0;
  };
  void open(std::size_t u) {
    if (open_unit_ == u) return;
    complete();
    Pending q;
    q.unit = u;
    b_.op(OpKind::open_reduction, static_cast<int>(u));
    if (schedule::wire16(p_.landing))
      q.wire = b_.alloc(p_.reduced_extent(u) * t(), zero_category::reduce_wire, u);
    else if (schedule::scatters(p_.landing))
      q.leaf = sums_.leaf(u);
    else
      q.leaf = b_.alloc(p_.layout.units[u].full * 4, zero_category::grad_leaf, u);
    pending_.push_back(std::move(q));
    open_unit_ = u;
  }
  void issue_ready(std::size_t u, std::size_t from) {
    Pending& q = pending_.back();
    const schedule::UnitBuckets& buckets = p_.buckets[u];
    const bool scatter = schedule::scatters(p_.landing);
    for (const std::size_t ready = schedule::buckets_ready(buckets, from); q.issued < ready; ++q.issued) {
      const std::size_t n = buckets.issue_order[q.issued].size();
      const std::size_t width = q.wire != kNone ? t() : 4;
      if (scatter && q.buckets.size() == schedule::kBucketsInFlight) {  // the oldest bucket makes room
        b_.op(OpKind::wait, static_cast<int>(u));
        b_.free(q.buckets.front());
        q.buckets.pop_front();
      }
      Op& o = b_.op(scatter ? OpKind::reduce_scatter : OpKind::all_reduce, static_cast<int>(u));
      o.bucket = static_cast<int>(q.issued);
      o.bytes = n * width;
      // the all-reduce works on the buffer opened above; a reduce-scatter's bucket is its own
      if (scatter)
        q.buckets.push_back(q.wire != kNone ? b_.alloc(n * t(), zero_category::reduce_wire, u)
                                            : b_.alloc(n * 4, zero_category::grad_leaf, u));
    }
  }
  void close(std::size_t u) {
    open(u);
    issue_ready(u, 0);
    open_unit_ = kNoUnit;
    if (!overlap_) complete();
  }
  void complete() {
    if (pending_.empty()) return;
    for (auto& q : pending_) {
      b_.op(OpKind::wait, static_cast<int>(q.unit));
      for (auto& bucket : q.buckets) b_.free(bucket);
      q.buckets.clear();
      if (q.wire != kNone) {
        keep_grad16(q.unit);
      } else if (schedule::scatters(p_.landing)) {
        b_.op(OpKind::accumulate, static_cast<int>(q.unit));
        sums_.push(q.unit, q.leaf);  // the reduce-scatter landed in the unit's next leaf
        q.leaf = kNone;
      } else {
        sums_.accumulate(q.unit);  // an all-reduce's FP32 result, copied into a leaf
      }
    }
    b_.op(OpKind::free);
    for (auto& q : pending_) b_.free(q.wire), b_.free(q.leaf);
    pending_.clear();
  }

  // ---- the step's end: finish_unit_grads ----
  void finish_unit_grads(std::size_t u) {
    if (!p_.grad_storage_16bit) sum32_[u] = sums_.finish(u);
    if (p_.reduce_each_micro_batch || N() == 1 || p_.grad_storage_16bit) return;
    Op& o = b_.op(OpKind::step_sync, static_cast<int>(u));
    o.bytes = p_.layout.units[u].full * 4;
    if (!fp32() && p_.reduce_in_compute_type) {  // the FP32 sum travels as a 16-bit copy
      o.bytes = p_.layout.units[u].full * t();
      uint32_t wire = b_.alloc(p_.layout.units[u].full * t(), zero_category::reduce_wire, u);
      b_.free(wire);
    }
  }

  static constexpr std::size_t kNoUnit = static_cast<std::size_t>(-1);

  const ZeroPlan& p_;
  bool overlap_;
  Builder& b_;
  Sums sums_;
  std::unique_ptr<Gathers> gathers_;
  std::vector<uint32_t> staging_, sum32_, sum16_;
  std::vector<Pending> pending_;
  std::size_t open_unit_ = kNoUnit;
};

}  // namespace

const char* op_name(OpKind k) {
  switch (k) {
    case OpKind::pass:
      return "pass";
    case OpKind::acquire:
      return "acquire";
    case OpKind::release:
      return "release";
    case OpKind::grad:
      return "grad";
    case OpKind::param_done:
      return "param_done";
    case OpKind::grad_done:
      return "grad_done";
    case OpKind::all_gather:
      return "all_gather";
    case OpKind::open_reduction:
      return "open_reduction";
    case OpKind::reduce_scatter:
      return "reduce_scatter";
    case OpKind::all_reduce:
      return "all_reduce";
    case OpKind::wait:
      return "wait";
    case OpKind::accumulate:
      return "accumulate";
    case OpKind::add:
      return "add";
    case OpKind::keep16:
      return "keep16";
    case OpKind::step_sync:
      return "step_sync";
    case OpKind::free:
      return "free";
  }
  return "?";
}

StepProgram step_program(const ZeroPlan& p, bool overlap) {
  Builder b;
  Step(p, overlap, b).run();
  return b.take();
}

StepProgram eval_program(const ZeroPlan& p, std::size_t rounds) {
  Builder b;
  if (!rounds || !p.spec.params) return b.take();
  const std::size_t N = p.layout.world_size, q = p.layout.rank;
  const std::vector<std::size_t> order = forward_acquire_order(p);
  std::vector<model::ProviderCall> forward;  // the forward's calls (a last stage's tied reads are its copy's)
  const bool tied_copy = p.pipelined() && p.pp_rank == p.pp_size - 1;
  for (std::size_t k = 0; k < p.forward_calls; ++k)
    if (!(tied_copy && p.calls[k].unit == 0)) forward.push_back(p.calls[k]);
  if (p.pipelined() && p.pp_rank == 0) {  // wte for the last stage, by a gatherer of its own
    Gathers share(p, {0}, b);
    share.acquire(0), share.release(0);
  }
  Gathers g(p, order, b);
  // HeldoutEvaluator::evaluate: P = ceil(R / N) passes; a rank without a round left acquires and
  // releases each unit in turn, so that its peers' gathers find it
  for (std::size_t j = 0; j < (rounds + N - 1) / N; ++j) {
    Op& o = b.op(OpKind::pass);
    o.micro = static_cast<int>(j);
    if (j * N + q < rounds) {
      for (const auto& c : forward)
        c.kind == Kind::acquire ? g.acquire(static_cast<std::size_t>(c.unit))
                                : g.release(static_cast<std::size_t>(c.unit));
    } else {
      for (std::size_t u : order) g.acquire(u), g.release(u);
    }
    g.restart();
  }
  return b.take();
}

std::string print_program(const StepProgram& p, std::size_t live_at_start) {
  std::string out;
  std::size_t live = live_at_start;
  char line[320];
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const Op& o = p.ops[i];
    std::string what = op_name(o.kind);
    if (o.kind == OpKind::pass)
      what += std::string(o.forward ? " forward" : " backward") + " m" + std::to_string(o.micro);
    if (o.unit >= 0) what += " u" + std::to_string(o.unit);
    if (o.bucket >= 0) what += " b" + std::to_string(o.bucket);
    if (o.param >= 0) what += " p" + std::to_string(o.param);
    std::string effect;
    if (o.bytes) effect += std::to_string(o.bytes) + " B moved";
    for (uint32_t a : o.allocs) {
      live += p.buffers[a].bytes;
      effect += (effect.empty() ? "+" : ", +") + p.buffers[a].category + " " + std::to_string(p.buffers[a].bytes);
    }
    for (uint32_t f : o.frees) {
      live -= p.buffers[f].bytes;
      effect += (effect.empty() ? "-" : ", -") + p.buffers[f].category + " " + std::to_string(p.buffers[f].bytes);
    }
    std::snprintf(line, sizeof line, "%5zu  %-30s %-52s live %zu\n", i, what.c_str(), effect.c_str(), live);
    out += line;
  }
  return out;
}

}  // namespace zt::zero
