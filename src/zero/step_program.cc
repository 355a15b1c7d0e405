// zero/step_program.cc — a rank's step as operations (see step_program.h). Each class below
// generates the operations of one part of the step; the rules come from schedule/ (which gathers
// an acquire issues, how a unit is cut into buckets, where its reduction lands) and from
// step::accumulator_category (a new accumulator buffer's category). The engine runs what comes
// out (zero/step_interpreter.h); nothing else decides the step.
#include "zero/step_program.h"

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
constexpr uint32_t kNone = kNoBuffer;

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
  /// @return the index of the last operation.
  uint32_t last() const { return static_cast<uint32_t>(prog_.ops.size() - 1); }
  /// @param i an operation's index. @return it.
  Op& at(uint32_t i) { return prog_.ops[i]; }
  /// A buffer allocated by the last operation (none for zero bytes, as the arena allocates none).
  uint32_t alloc(std::size_t bytes, const std::string& category, std::size_t unit, bool fp32) {
    if (bytes == 0) return kNone;
    const auto id = static_cast<uint32_t>(prog_.buffers.size());
    prog_.buffers.push_back({category, bytes, static_cast<int>(unit), fp32});
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
    std::vector<uint32_t> moved(prog_.ops.size());
    std::vector<Op> kept;
    for (std::size_t i = 0; i < prog_.ops.size(); ++i) {
      const Op& o = prog_.ops[i];
      moved[i] = static_cast<uint32_t>(kept.size());
      if (!(o.kind == OpKind::free && o.frees.empty() && o.allocs.empty())) kept.push_back(std::move(prog_.ops[i]));
    }
    for (Op& o : kept)
      for (uint32_t& w : o.waits) w = moved[w];
    prog_.ops = std::move(kept);
    return std::move(prog_);
  }

 private:
  StepProgram prog_;
  std::vector<bool> live_;
};

/// Stage 3's gathers: an acquire issues the gathers schedule::gather_window gives it (each a full
/// unit, --prefetch ahead), then waits for its own; a gathered unit is freed at its release.
class Gathers {
 public:
  Gathers(const ZeroPlan& p, const std::vector<std::size_t>& order, Builder& b)
      : p_(p),
        b_(b),
        in_use_(p.layout.units.size(), kNone),
        window_(schedule::gather_window(order, p.params_layout.sharded, p.prefetch)) {}
  void acquire(std::size_t u) {
    const std::size_t at = position_++;
    const uint32_t event = (b_.op(OpKind::acquire, static_cast<int>(u)), b_.last());
    for (; next_issue_ < window_.issued[at]; ++next_issue_) {
      const std::size_t g = window_.units[next_issue_];
      const std::size_t bytes = p_.layout.units[g].full * model::bytes_of(p_.shape.precision);
      Op& o = b_.op(OpKind::all_gather, static_cast<int>(g));
      o.bytes = bytes;
      o.bucket = static_cast<int>(next_issue_);
      o.dst = b_.alloc(bytes, zero_category::gathered_params, g, false);
      in_flight_.push_back({o.dst, b_.last()});
    }
    if (!window_.gathers[at]) return;
    const auto [buffer, issued_by] = in_flight_.front();
    in_flight_.pop_front();
    b_.at(event).dst = in_use_[u] = buffer;
    b_.op(OpKind::wait, static_cast<int>(u)).waits = {issued_by};
  }
  void release(std::size_t u) {
    b_.op(OpKind::release, static_cast<int>(u));
    b_.free(in_use_[u]);
  }
  void restart() { position_ = next_issue_ = 0; }

 private:
  struct InFlight {
    uint32_t buffer, issued_by;
  };
  const ZeroPlan& p_;
  Builder& b_;
  std::vector<uint32_t> in_use_;
  std::deque<InFlight> in_flight_;
  schedule::GatherWindow window_;
  std::size_t position_ = 0, next_issue_ = 0;
};

/// Each unit's canonical sum over micro-batches (optim/grad_accumulator.h's tree): FP32 leaves of
/// grad_extent(u) elements in step::accumulator_category's categories (the sum is the gradient
/// storage); each merge is an `add` that frees its right operand.
class Sums {
 public:
  Sums(const ZeroPlan& p, Builder& b) : p_(p), b_(b) {
    for (std::size_t u = 0; u < p.layout.units.size(); ++u)
      acc_.emplace_back(Merge([this, u](uint32_t& left, uint32_t&& right) {
        Op& o = b_.op(OpKind::add, static_cast<int>(u));
        o.dst = left, o.src = right, o.count = p_.grad_extent(u);
        b_.free(right);
      }));
  }
  /// A leaf buffer of unit u, allocated by the last operation.
  uint32_t leaf(std::size_t u) {
    return b_.alloc(p_.grad_extent(u) * 4, step::accumulator_category(acc_[u].live_partials(), true), u, true);
  }
  void push(std::size_t u, uint32_t leaf_id) { acc_[u].push(std::move(leaf_id)); }
  /// `count` elements of gradient `src` (16-bit: widened; FP32: copied) as a new leaf of unit u,
  /// and the merges it triggers.
  void accumulate(std::size_t u, uint32_t src, std::size_t count) {
    Op& o = b_.op(OpKind::accumulate, static_cast<int>(u));
    o.src = src, o.count = count;
    const uint32_t id = leaf(u);
    b_.at(b_.last()).dst = id;
    push(u, id);
  }
  uint32_t finish(std::size_t u) { return acc_[u].finish(); }

 private:
  using Merge = std::function<void(uint32_t&, uint32_t&&)>;
  const ZeroPlan& p_;
  Builder& b_;
  std::vector<CanonicalAccumulator<uint32_t, Merge>> acc_;
};

/// The step: the engine's answer to each of the model's calls (stage 3's gathers, stage 2's
/// buckets, the reductions' landing and completion, the gradient's accumulation), then the step's
/// end (the once-per-step sync, the loss, the agreement, the updates and their shares).
class Step {
 public:
  Step(const ZeroPlan& p, bool overlap, Builder& b)
      : p_(p),
        overlap_(overlap),
        b_(b),
        sums_(p, b),
        staging_(units(), kNone),
        sum_(units(), kNone),
        sum16_(units(), kNone) {
    if (p.spec.params) gathers_ = std::make_unique<Gathers>(p, p.acquire_order, b);
  }

  void run() {
    if (p_.pipelined()) {
      pipeline_passes();
    } else {
      for (std::size_t j = 0; j < p_.micro_batches_per_rank; ++j) {
        passes(true, static_cast<int>(j));
        passes(false, static_cast<int>(j));
        complete();
        if (gathers_) gathers_->restart();
      }
    }
    b_.op(OpKind::loss);
    for (std::size_t u : p_.units_here) finish_unit_grads(u);
    update();
  }

 private:
  std::size_t units() const { return p_.layout.units.size(); }
  std::size_t N() const { return p_.layout.world_size; }
  std::size_t t() const { return model::bytes_of(p_.shape.precision); }
  bool fp32() const { return p_.shape.precision == model::Precision::fp32; }
  bool reduces_each_micro_batch() const { return p_.reduce_each_micro_batch && N() > 1; }

  /// A pass of micro-batch m: the model's calls (a last pipeline stage's reads of wte are its
  /// received copy's, events with nothing gathered), then its return.
  void passes(bool forward, int m) {
    Op& o = b_.op(OpKind::pass);
    o.forward = forward, o.micro = m;
    const auto forward_end = p_.calls.begin() + static_cast<std::ptrdiff_t>(p_.forward_calls);
    const bool tied_copy = p_.pipelined() && p_.pp_rank == p_.pp_size - 1;
    for (auto c = forward ? p_.calls.begin() : forward_end; c != (forward ? forward_end : p_.calls.end()); ++c) {
      if (tied_copy && c->unit == 0 && (c->kind == Kind::acquire || c->kind == Kind::release))
        b_.op(c->kind == Kind::acquire ? OpKind::acquire : OpKind::release, 0);
      else
        call(*c);
    }
    b_.op(OpKind::pass_end);
  }

  // ---- a pipeline stage's step (pipeline/stage_runner.h): wte's values from the first stage to
  // the last, then the passes in the schedule's order; the sends that end a pass go in one batch
  // with the receives that start the next, and the batch is waited for before that pass ----
  void pipeline_passes() {
    const int s = p_.pp_rank, P = p_.pp_size;
    const bool first = s == 0, last = s == P - 1;
    const std::size_t x =
        p_.shape.micro_batch * p_.shape.context * static_cast<std::size_t>(p_.shape.model.width) * t();
    const std::size_t wte = static_cast<std::size_t>(p_.shape.model.vocab * p_.shape.model.width) * t();
    const auto transfer = [](OpKind k, int peer, std::size_t bytes, int micro, int unit) {
      Op o;
      o.kind = k, o.peer = peer, o.bytes = bytes, o.micro = micro, o.unit = unit;
      return o;
    };
    if (first)
      call({Kind::acquire, 0}), exchange({transfer(OpKind::send, P - 1, wte, -1, 0)}), call({Kind::release, 0});
    if (last) exchange({transfer(OpKind::recv, 0, wte, -1, 0)});
    std::vector<Op> sends;  // the previous pass's
    for (const auto& op : schedule::stage_order(p_.pp_schedule, P, s, static_cast<int>(p_.micro_batches_per_rank))) {
      const bool forward = op.kind == schedule::PipeOp::Kind::forward;
      std::vector<Op> batch = std::move(sends);
      sends.clear();
      if (forward && !first) batch.push_back(transfer(OpKind::recv, s - 1, x, op.micro, -1));
      if (!forward && !last) batch.push_back(transfer(OpKind::recv, s + 1, x, op.micro, -1));
      if (!forward && first) batch.push_back(transfer(OpKind::recv, P - 1, wte, op.micro, 0));  // the head's part
      exchange(batch);
      passes(forward, op.micro);
      if (forward && !last) sends.push_back(transfer(OpKind::send, s + 1, x, op.micro, -1));
      if (!forward && !first) sends.push_back(transfer(OpKind::send, s - 1, x, op.micro, -1));
      if (!forward && last) sends.push_back(transfer(OpKind::send, 0, wte, op.micro, 0));
      if (!forward) complete();
    }
    exchange(sends);
    if (gathers_) gathers_->restart();
  }
  /// One batch of sends and receives, then the wait for all of them.
  void exchange(const std::vector<Op>& batch) {
    if (batch.empty()) return;
    std::vector<uint32_t> posted;
    for (const Op& o : batch) b_.op(o.kind) = o, posted.push_back(b_.last());
    b_.op(OpKind::wait).waits = posted;
  }

  // ---- the engine's answer to each model call ----
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
        staging_[u] = b_.alloc(p_.layout.units[u].full * t(), step::category::grad_staging, u, false);
        b_.at(b_.last()).dst = staging_[u];
        break;
      case Kind::grad_done:  // S_g = 1: the rest of the unit reduced now; else kept for the step's sync
        b_.op(OpKind::grad_done, c.unit);
        if (reduces_each_micro_batch())
          close(u);
        else
          keep(u, staging_[u], p_.layout.units[u].full);
        b_.op(OpKind::free, c.unit);
        b_.free(staging_[u]);
        break;
      case Kind::param_grad_done: {  // stage 2: buckets go as soon as their parameters are final
        b_.op(OpKind::param_done, c.unit).param = c.param;
        if (!p_.bucket_elements || !reduces_each_micro_batch()) break;
        open(u);
        issue_ready(u, static_cast<std::size_t>(p_.manifest.params[static_cast<std::size_t>(c.param)].offset_in_unit));
        break;
      }
    }
  }

  /// `n` 16-bit gradients `src` of unit u into the step's sum: a leaf of the FP32 tree, or with
  /// 16-bit storage (s_g = 2) the new 16-bit sum, made before the old one is freed.
  void keep(std::size_t u, uint32_t src, std::size_t n) {
    if (!p_.grad_storage_16bit) return sums_.accumulate(u, src, n);
    Op& o = b_.op(OpKind::keep16, static_cast<int>(u));
    o.src = src, o.count = n;
    const uint32_t fresh = b_.alloc(n * t(), step::category::grads, u, false);
    b_.at(b_.last()).dst = fresh;
    b_.free(sum16_[u]);
    sum16_[u] = fresh;
  }

  // ---- a unit's reduction: opened, its buckets issued, completed (schedule::Landing) ----
  struct Bucket {
    uint32_t buffer, issued_by;
  };
  struct Pending {
    std::size_t unit = 0;
    uint32_t leaf = kNone, wire = kNone;  // where it lands: an FP32 leaf or a 16-bit wire
    std::deque<Bucket> buckets;           // reduce-scatters in flight, at most kBucketsInFlight
    std::vector<uint32_t> issued_by;      // every collective issued for it
    std::size_t issued = 0;
  };
  void open(std::size_t u) {
    if (open_unit_ == u) return;
    complete();
    Pending q;
    q.unit = u;
    b_.op(OpKind::open_reduction, static_cast<int>(u));
    if (schedule::wire16(p_.landing))
      q.wire = b_.alloc(p_.reduced_extent(u) * t(), zero_category::reduce_wire, u, false);
    else if (schedule::scatters(p_.landing))
      q.leaf = sums_.leaf(u);  // its next accumulator leaf: the result needs no copy
    else
      q.leaf = b_.alloc(p_.layout.units[u].full * 4, zero_category::grad_leaf, u, true);
    b_.at(b_.last()).dst = q.wire != kNone ? q.wire : q.leaf;
    pending_.push_back(std::move(q));
    open_unit_ = u;
  }
  /// C_B (ZeRO paper, Sec. 6.2): each bucket travels in a buffer of its own size, at most
  /// schedule::kBucketsInFlight of them at once (the oldest is waited for and freed first).
  void issue_ready(std::size_t u, std::size_t from) {
    Pending& q = pending_.back();
    const schedule::UnitBuckets& buckets = p_.buckets[u];
    const bool scatter = schedule::scatters(p_.landing);
    const uint32_t landing = q.wire != kNone ? q.wire : q.leaf;
    for (const std::size_t ready = schedule::buckets_ready(buckets, from); q.issued < ready; ++q.issued) {
      const std::size_t n = buckets.issue_order[q.issued].size();
      if (scatter && q.buckets.size() == schedule::kBucketsInFlight) {
        b_.op(OpKind::wait, static_cast<int>(u)).waits = {q.buckets.front().issued_by};
        b_.free(q.buckets.front().buffer);
        q.buckets.pop_front();
      }
      Op& o = b_.op(scatter ? OpKind::reduce_scatter : OpKind::all_reduce, static_cast<int>(u));
      o.bucket = static_cast<int>(q.issued);
      o.bytes = n * (q.wire != kNone ? t() : 4);
      o.src = staging_[u], o.dst = landing, o.count = n;
      q.issued_by.push_back(b_.last());
      if (scatter)  // a reduce-scatter's bucket is a buffer of its own; an all-reduce works in the landing
        q.buckets.push_back({q.wire != kNone ? b_.alloc(n * t(), zero_category::reduce_wire, u, false)
                                             : b_.alloc(n * 4, zero_category::grad_leaf, u, true),
                             b_.last()});
      if (!overlap_) b_.op(OpKind::wait, static_cast<int>(u)).waits = {q.issued_by.back()};
    }
  }
  void close(std::size_t u) {
    open(u);
    issue_ready(u, 0);
    open_unit_ = kNoUnit;
    if (!overlap_) complete();
  }
  /// Everything in flight is waited for and its result kept: a 16-bit wire widened into a leaf
  /// (or kept as the 16-bit sum), a reduce-scatter's leaf pushed as it is, an all-reduce copied.
  void complete() {
    if (pending_.empty()) return;
    for (auto& q : pending_) {
      b_.op(OpKind::wait, static_cast<int>(q.unit)).waits = q.issued_by;
      for (auto& bucket : q.buckets) b_.free(bucket.buffer);
      q.buckets.clear();
      if (q.wire != kNone) {
        keep(q.unit, q.wire, p_.reduced_extent(q.unit));
      } else if (schedule::scatters(p_.landing)) {
        Op& o = b_.op(OpKind::accumulate, static_cast<int>(q.unit));
        o.src = o.dst = q.leaf;  // the reduce-scatter landed in the unit's next leaf
        sums_.push(q.unit, q.leaf);
        q.leaf = kNone;
      } else {
        sums_.accumulate(q.unit, q.leaf, p_.grad_extent(q.unit));
      }
    }
    b_.op(OpKind::free);
    for (auto& q : pending_) b_.free(q.wire), b_.free(q.leaf);
    pending_.clear();
  }

  // ---- the step's end ----
  /// Unit u's sum is complete (its tree's last merges); with --grad-sync step it is reduced over
  /// ranks now, once: an all-reduce, or a reduce-scatter in place after which this rank's part is
  /// at its shard's offset. With --reduce-dtype compute the FP32 sum travels as a 16-bit copy.
  void finish_unit_grads(std::size_t u) {
    sum_[u] = p_.grad_storage_16bit ? sum16_[u] : sums_.finish(u);
    b_.op(OpKind::step_grad, static_cast<int>(u)).dst = sum_[u];
    if (p_.reduce_each_micro_batch || N() == 1) return;
    Op& o = b_.op(OpKind::step_sync, static_cast<int>(u));
    o.dst = sum_[u];
    o.bytes = p_.layout.units[u].full * (p_.grad_storage_16bit ? t() : 4);
    if (!fp32() && !p_.grad_storage_16bit && p_.reduce_in_compute_type) {
      o.bytes = p_.layout.units[u].full * t();
      uint32_t wire = b_.alloc(p_.layout.units[u].full * t(), zero_category::reduce_wire, u, false);
      b_.free(wire);
    }
  }
  /// The agreement, then per unit the update of its owned part and, with S_o but not S_p, the
  /// all-gather in place that shares the updated shard (while the next unit updates); the sums go.
  void update() {
    b_.op(OpKind::agree);
    std::vector<uint32_t> shares;
    for (std::size_t u : p_.units_here) {
      b_.op(OpKind::update, static_cast<int>(u));
      if (!p_.spec.optimizer || p_.params_sharded(u) || N() == 1) continue;
      b_.op(OpKind::all_gather, static_cast<int>(u)).bytes = N() * p_.layout.units[u].shard * t();
      shares.push_back(b_.last());
    }
    if (!shares.empty()) b_.op(OpKind::wait).waits = shares;
    b_.op(OpKind::free);
    for (auto& s : sum_) b_.free(s);  // in unit order
  }

  static constexpr std::size_t kNoUnit = static_cast<std::size_t>(-1);

  const ZeroPlan& p_;
  bool overlap_;
  Builder& b_;
  Sums sums_;
  std::unique_ptr<Gathers> gathers_;
  std::vector<uint32_t> staging_, sum_, sum16_;
  std::vector<Pending> pending_;
  std::size_t open_unit_ = kNoUnit;
};

}  // namespace

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
  const bool tied_copy = p.pipelined() && p.pp_rank == p.pp_size - 1;  // its reads of wte are its copy's
  if (p.pipelined() && p.pp_rank == 0) {                               // wte for the last stage, by a window of its own
    Gathers share(p, {0}, b);
    share.acquire(0), share.release(0);
  }
  Gathers g(p, order, b);
  // HeldoutEvaluator::evaluate: P = ceil(R / N) passes; a rank without a round left acquires and
  // releases each unit in turn, so that its peers' gathers find it
  for (std::size_t j = 0; j < (rounds + N - 1) / N; ++j) {
    b.op(OpKind::pass).micro = static_cast<int>(j);
    for (std::size_t k = 0; k < p.forward_calls && j * N + q < rounds; ++k) {
      const model::ProviderCall& c = p.calls[k];
      const auto u = static_cast<std::size_t>(c.unit);
      if (tied_copy && c.unit == 0)
        b.op(c.kind == Kind::acquire ? OpKind::acquire : OpKind::release, 0);
      else
        c.kind == Kind::acquire ? g.acquire(u) : g.release(u);
    }
    for (std::size_t k = 0; k < order.size() && j * N + q >= rounds; ++k) g.acquire(order[k]), g.release(order[k]);
    b.op(OpKind::pass_end);
    g.restart();
  }
  return b.take();
}

}  // namespace zt::zero
