// zero/step_interpreter.h — the engine's step: one loop over a rank's step program
// (zero/step_program.h), doing what each operation says on the rank's buffers and Collective.
//
// The interpreter is the ParamProvider the model calls (model/param_provider.h). Each call is an
// event of the program: it must be the next operation (every rank issues the same collectives in
// the same order, so a call out of order is an error, not a guess), and the operations after it,
// up to the next event, are the engine's answer: stage 3's gathers and the wait for its own,
// stage 2's buckets, a unit's reduction closed, a gradient kept. The model passes, the loss, the
// agreement and the update are the engine's (StepHooks); where they happen is the program's.
// Which operations exist is decided once, by the plan, in step_program: nothing here asks which
// stage it is. Not here: what the operations are (step_program.cc), the optimizer's arithmetic
// (offload/state_store.h and step/), the buffers that live across steps (zero/train_zero.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "collective/collective.h"
#include "core/check.h"
#include "memory/arena.h"
#include "model/param_provider.h"
#include "schedule/buckets.h"
#include "schedule/gather_window.h"
#include "step/owned_slice.h"
#include "step_device/loop_ops.h"
#include "zero/model_state_stores.h"
#include "zero/step_program.h"
#include "zero/timeline.h"
#include "zero/zero_plan.h"

namespace zt::zero {

/// What the engine does at the program's own operations.
struct StepHooks {
  std::function<void(const Op& pass)> run_pass;  ///< the model's pass (forward or backward) of pass.micro
  std::function<void()> pipeline_passes;         ///< a pipeline stage: the runner drives every pass
  std::function<void()> loss;                    ///< the step's loss over ranks
  std::function<bool()> agree;                   ///< the agreement: whether the step is applied
  std::function<void(std::size_t u)> update;     ///< unit u's owned part updated
};

/// Runs a step program; T is the compute type.
template <typename T>
class StepInterpreter final : public model::ParamProvider<T> {
 public:
  /// All references are kept. @param plan the rank's plan. @param program its step (step_program).
  /// @param coll the data-parallel group. @param arena where the step's buffers live. @param params
  /// S_p's storage. @param ops the loop's ops on the arena's memory. @param timeline --trace's.
  StepInterpreter(const ZeroPlan& plan, StepProgram program, Collective& coll, Arena& arena, ParamStore<T>& params,
                  step::LoopOps<T>& ops, Timeline& timeline)
      : plan_(plan),
        prog_(std::move(program)),
        coll_(coll),
        arena_(arena),
        params_(params),
        ops_(ops),
        timeline_(timeline),
        bufs_(prog_.buffers.size()),
        sum_(plan.layout.units.size(), kNoBuffer),
        compute_start_(plan.layout.units.size()) {
    if (params.file())  // --offload-params file:DIR: a micro-batch's shards are read in its gathers' order
      gathered_units_ = schedule::gather_window(plan.acquire_order, plan.params_layout.sharded, plan.prefetch).units;
  }
  /// Collectives in flight write into buffers this object owns: an exception unwinding the step
  /// (an out-of-memory error, a peer's failure) must not free them under the comm thread.
  ~StepInterpreter() {
    for (auto& [pc, w] : works_) {
      try {
        w.wait();
      } catch (...) {  // the step is failing already; its first error is the one reported
      }
    }
  }
  StepInterpreter(const StepInterpreter&) = delete;
  StepInterpreter& operator=(const StepInterpreter&) = delete;

  /// The program it runs. @return it.
  const StepProgram& program() const { return prog_; }
  /// The last pipeline stage's copy of wte, which acquire(0) returns. @param wte V·C values.
  void set_tied_wte(const T* wte) { tied_wte_ = wte; }
  /// Record the index of every operation executed (--step-trace). @param to where (null: none).
  void record(std::vector<uint32_t>* to) { executed_ = to; }

  /// One step: every operation in order. @param hooks the engine's part.
  void run(const StepHooks& hooks) {
    start(&hooks);
    if (plan_.pipelined()) {  // the runner's passes consume the events and passes up to the loss
      hooks.pipeline_passes();
      ZT_CHECK(pc_ < size() && op().kind == OpKind::loss, "step program: the pipeline's passes ended at op ", pc_);
    }
    while (pc_ < size()) {
      const Op& o = op();
      ZT_CHECK(!is_event(o.kind) && o.kind != OpKind::pass_end, "step program: op ", pc_, " (", op_text(o),
               ") is the model's, outside its pass");
      execute(pc_++);
      if (o.kind != OpKind::pass) continue;
      hooks.run_pass(o);
      end_pass();
    }
  }
  /// The program starts again (a caller that drives the passes itself: begin_pass, the model's
  /// calls, end_pass, then finish). @param hooks the engine's part (null: the program has none).
  void start(const StepHooks* hooks = nullptr) {
    hooks_ = hooks;
    pc_ = 0;
    applied_ = false;
    answer();
  }
  /// The operations after the last pass; the program must be over.
  void finish() {
    answer();
    ZT_CHECK(pc_ == size(), "step program: op ", pc_, " (", pc_ < size() ? op_text(op()) : "", ") was never reached");
  }
  /// A pipeline stage's pass starts (StageHooks::before_pass). @param forward which. @param micro its micro-batch.
  void begin_pass(bool forward, int micro) {
    ZT_CHECK(pc_ < size() && op().kind == OpKind::pass && op().forward == forward && op().micro == micro,
             "step program: op ", pc_, " is not the pass ", forward ? "forward" : "backward", " of micro-batch ",
             micro);
    execute(pc_++);
  }
  /// The model has returned from its pass: its end, then what follows up to the next pass.
  void end_pass() {
    ZT_CHECK(pc_ < size() && op().kind == OpKind::pass_end, "step program: op ", pc_, " is not the end of a pass");
    execute(pc_++);
    answer();
  }

  // ---- the model's calls: each the next event of the program, then the engine's answer ----
  const T* acquire(int unit) override {
    const Op& e = event(OpKind::acquire, unit);
    answer();  // stage 3: its gather and --prefetch more issued, its own waited for
    compute_start_[static_cast<std::size_t>(unit)] = timeline_.now_us();
    if (e.dst != kNoBuffer) return reinterpret_cast<const T*>(bufs_[e.dst].data());
    return unit == 0 && tied_wte_ ? tied_wte_ : params_.resident(static_cast<std::size_t>(unit));
  }
  void release(int unit) override {
    event(OpKind::release, unit);
    answer();
  }
  T* grad(int unit) override {
    const Op& e = event(OpKind::grad, unit);
    answer();
    return ptr<T>(e.dst);
  }
  void param_grad_done(int param) override {
    const int unit = plan_.manifest.params[static_cast<std::size_t>(param)].unit;
    ZT_CHECK(pc_ < size() && op().param == param, "step program: op ", pc_, " (", pc_ < size() ? op_text(op()) : "end",
             ") is not param_done p", param);
    event(OpKind::param_done, unit);
    answer();
  }
  void grad_done(int unit) override {
    event(OpKind::grad_done, unit);
    answer();
  }
  /// A pipeline stage's batch of sends and receives, about to be posted (pipeline/stage_runner.h):
  /// each the next event of the program, then the wait that completes the batch.
  /// @param batch the transfers, in the order the runner posts them.
  void exchange(const std::vector<P2pOp>& batch) {
    for (const P2pOp& t : batch) {
      const OpKind k = t.dir == P2pOp::Dir::send ? OpKind::send : OpKind::recv;
      ZT_CHECK(pc_ < size() && op().kind == k && op().peer == t.peer && op().bytes == t.bytes(), "step program: the ",
               op_name(k), " of ", t.bytes(), " B with stage ", t.peer, " is not op ", pc_, " (",
               pc_ < size() ? op_text(op()) : "the end", ")");
      execute(pc_++);
    }
    answer();
  }

  // ---- the step's gradient, for the engine's agreement, update and dumps ----
  /// Where this rank's reduced part of unit u starts in its step gradient: at its shard's offset
  /// after an in-place reduce-scatter of the whole sum, else at 0. @param u the unit. @return it.
  std::size_t reduced_offset(std::size_t u) const {
    return plan_.reduce_scatters_grad && !plan_.spec.grads ? plan_.layout.rank * plan_.layout.units[u].shard : 0;
  }
  /// @param u the unit. @return this rank's reduced gradient of u (still scaled).
  step::GradSpan<T> summed(std::size_t u) const {
    const uint32_t b = sum_[u];
    const std::byte* at = bufs_[b].data();
    if (prog_.buffers[b].fp32) return {reinterpret_cast<const float*>(at) + reduced_offset(u), nullptr};
    return {nullptr, reinterpret_cast<const T*>(at) + reduced_offset(u)};
  }
  /// @param u the unit. @return the real (non-padding) elements of summed(u).
  std::size_t reduced_real(std::size_t u) const {
    return plan_.reduce_scatters_grad ? plan_.layout.shard_real(u, plan_.layout.rank) : plan_.layout.units[u].numel;
  }

 private:
  std::size_t size() const { return prog_.ops.size(); }
  const Op& op() const { return prog_.ops[pc_]; }
  template <typename V>
  V* ptr(uint32_t b) {
    return reinterpret_cast<V*>(bufs_[b].data());
  }
  std::size_t N() const { return plan_.layout.world_size; }
  const std::string& name(int u) const { return plan_.layout.units[static_cast<std::size_t>(u)].name; }

  /// The model's call: it must be the next operation.
  const Op& event(OpKind k, int unit) {
    ZT_CHECK(pc_ < size() && op().kind == k && op().unit == unit, "step program: the model's ", op_name(k), " u", unit,
             " is not op ", pc_, " (", pc_ < size() ? op_text(op()) : "the end", ")");
    const uint32_t at = pc_++;
    execute(at);
    return prog_.ops[at];
  }
  /// The operations that answer an event, up to the next event or pass (or the step's loss,
  /// which follows a pipeline stage's passes).
  void answer() {
    while (pc_ < size() && !is_event(op().kind) && op().kind != OpKind::pass && op().kind != OpKind::pass_end &&
           op().kind != OpKind::loss)
      execute(pc_++);
  }

  /// One operation: its allocations, what it does, its releases.
  void execute(uint32_t pc) {
    const Op& o = prog_.ops[pc];
    if (executed_) executed_->push_back(pc);
    for (uint32_t a : o.allocs) bufs_[a] = arena_.allocate(prog_.buffers[a].bytes, prog_.buffers[a].category);
    const auto u = static_cast<std::size_t>(o.unit);
    switch (o.kind) {
      case OpKind::pass:
        phase_ = o.forward ? "forward " : "backward ";
        break;
      case OpKind::release:
        if (timeline_.enabled()) timeline_.add(phase_ + name(o.unit), "compute", compute_start_[u]);
        break;
      case OpKind::grad:
        ops_.zero(bufs_[o.dst].data(), prog_.buffers[o.dst].bytes);
        break;
      case OpKind::all_gather:
        if (o.dst != kNoBuffer)
          gather(pc, o);
        else if (applied_)  // S_o without S_p: the updated shard shared in place
          works_[pc] = coll_.all_gather_async(params_.resident(u) + plan_.layout.rank * plan_.layout.units[u].shard,
                                              params_.resident(u), plan_.layout.units[u].shard, dtype_of_v<T>);
        break;
      case OpKind::reduce_scatter:
        reduce_bucket(pc, o);
        break;
      case OpKind::all_reduce:
        all_reduce(pc, o);
        break;
      case OpKind::wait:
        wait(o);
        break;
      case OpKind::accumulate:  // a fresh leaf: widened from 16 bits, or copied from FP32
        if (o.dst == o.src) break;
        if (prog_.buffers[o.src].fp32)
          ops_.copy(bufs_[o.dst].data(), bufs_[o.src].data(), o.count * sizeof(float));
        else
          ops_.widen(ptr<float>(o.dst), ptr<T>(o.src), o.count);
        break;
      case OpKind::add:  // one merge of the canonical tree (reduce/canonical_tree.h)
        ops_.add(ptr<float>(o.dst), ptr<float>(o.src), o.count);
        break;
      case OpKind::keep16:
        ops_.copy(bufs_[o.dst].data(), bufs_[o.src].data(), o.count * sizeof(T));
        break;
      case OpKind::step_grad:
        sum_[u] = o.dst;
        break;
      case OpKind::step_sync:
        step_sync(o);
        break;
      case OpKind::loss:
        hooks_->loss();
        break;
      case OpKind::agree:
        applied_ = hooks_->agree();
        break;
      case OpKind::update:
        if (applied_) hooks_->update(u);
        break;
      case OpKind::acquire:  // its compute span starts once it returns (acquire())
      case OpKind::send:     // the runner posts the batch (exchange())
      case OpKind::recv:
      case OpKind::param_done:
      case OpKind::grad_done:
      case OpKind::pass_end:
      case OpKind::open_reduction:
      case OpKind::free:
        break;
    }
    free(o);
  }
  void free(const Op& o) {
    for (uint32_t f : o.frees) bufs_[f].reset();
  }

  /// Stage 3: unit u's shards all-gathered into the op's buffer (a copy on one rank; with
  /// --offload-params, the shard read from the file tier first).
  void gather(uint32_t pc, const Op& o) {
    const auto u = static_cast<std::size_t>(o.unit);
    const std::size_t shard = plan_.layout.units[u].shard;
    offload::ParamFileTier* file = params_.file();
    if (file && o.bucket == 0) file->start_pass(gathered_units_);
    const T* from =
        file ? reinterpret_cast<const T*>(file->get(static_cast<std::size_t>(o.bucket))) : params_.resident(u);
    if (N() == 1)
      ops_.copy(bufs_[o.dst].data(), from, shard * sizeof(T));
    else
      works_[pc] = coll_.all_gather_async(from, ptr<T>(o.dst), shard, dtype_of_v<T>);
  }
  /// A bucket of the unit's gradient output copied (16-bit wire) or widened (FP32) into its own
  /// buffer, and reduce-scattered: this rank's part lands in the landing buffer at the schedule's
  /// offset (uneven counts, schedule::reduce_scatter_counts).
  void reduce_bucket(uint32_t pc, const Op& o) {
    const auto u = static_cast<std::size_t>(o.unit);
    const schedule::Range r = plan_.buckets[u].issue_order[static_cast<std::size_t>(o.bucket)];
    const uint32_t bucket = o.allocs.front();
    if (prog_.buffers[bucket].fp32)
      ops_.widen(ptr<float>(bucket), ptr<T>(o.src) + r.begin, r.size());
    else
      ops_.copy(bufs_[bucket].data(), ptr<T>(o.src) + r.begin, r.size() * sizeof(T));
    works_[pc] = prog_.buffers[bucket].fp32 ? scatter(ptr<float>(bucket), ptr<float>(o.dst), u, r)
                                            : scatter(ptr<T>(bucket), ptr<T>(o.dst), u, r);
  }
  /// The whole unit's gradient output into the landing buffer (copied or widened) and all-reduced there.
  void all_reduce(uint32_t pc, const Op& o) {
    if (prog_.buffers[o.dst].fp32) {
      ops_.widen(ptr<float>(o.dst), ptr<T>(o.src), o.count);
      works_[pc] = coll_.all_reduce_async(ptr<float>(o.dst), o.count, dtype_of_v<float>);
    } else {
      ops_.copy(bufs_[o.dst].data(), bufs_[o.src].data(), o.count * sizeof(T));
      works_[pc] = coll_.all_reduce_async(ptr<T>(o.dst), o.count, dtype_of_v<T>);
    }
  }
  /// --grad-sync step: the unit's whole sum reduced in place, at once (with a 16-bit wire when
  /// the op allocates one: the FP32 sum narrowed, reduced, and this rank's part widened back).
  void step_sync(const Op& o) {
    const auto u = static_cast<std::size_t>(o.unit);
    if (!prog_.buffers[o.dst].fp32) return reduce_in_place(ptr<T>(o.dst), u);
    float* g = ptr<float>(o.dst);
    if (o.allocs.empty()) return reduce_in_place(g, u);
    T* wire = ptr<T>(o.allocs.front());
    ops_.narrow(wire, g, plan_.layout.units[u].full);
    reduce_in_place(wire, u);
    const std::size_t at = reduced_offset(u);
    ops_.widen(g + at, wire + at, plan_.reduced_extent(u));
  }
  template <typename V>
  void reduce_in_place(V* in, std::size_t u) {
    std::vector<Work> works;
    if (!schedule::scatters(plan_.landing)) {
      works.push_back(coll_.all_reduce_async(in, plan_.layout.units[u].full, dtype_of_v<V>));
    } else {  // every bucket is final: issued in element order, each landing in this rank's shard
      for (const schedule::Range& r : schedule::sync_order(plan_.buckets[u]))
        works.push_back(scatter(in + r.begin, in + plan_.layout.rank * plan_.layout.units[u].shard, u, r));
    }
    wait_all(works, "reduce " + plan_.layout.units[u].name);
  }
  template <typename V>
  Work scatter(const V* values, V* shard_out, std::size_t u, schedule::Range r) {
    const schedule::RangeScatter s =
        schedule::reduce_scatter_counts(r, plan_.layout.units[u].shard, N(), plan_.layout.rank);
    return coll_.reduce_scatter_v_async(values, shard_out + s.at, s.counts, dtype_of_v<V>);
  }

  /// The collectives of operations `o.waits` complete (each waited once; a stage-3 gather's file
  /// buffer is handed back to the tier).
  void wait(const Op& o) {
    std::vector<Work> works;
    bool gathers = false;
    for (uint32_t w : o.waits) {
      gathers |= prog_.ops[w].kind == OpKind::all_gather && prog_.ops[w].dst != kNoBuffer;
      auto it = works_.find(w);
      if (it == works_.end()) continue;
      works.push_back(std::move(it->second));
      works_.erase(it);
    }
    wait_all(works, o.unit < 0 ? "" : std::string(gathers ? "all_gather " : "reduce ") + name(o.unit));
    if (gathers && params_.file())
      for (uint32_t w : o.waits) params_.file()->put(static_cast<std::size_t>(prog_.ops[w].bucket), /*write=*/false);
  }
  // every call is waited for even when one fails, so no call outlives the buffers it uses
  void wait_all(std::vector<Work>& works, const std::string& what) {
    const double t0 = timeline_.now_us();
    std::exception_ptr first;
    for (auto& w : works) {
      try {
        w.wait();
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (timeline_.enabled() && !what.empty()) timeline_.add("wait " + what, "wait", t0);
    if (first) std::rethrow_exception(first);
  }

  const ZeroPlan& plan_;
  const StepProgram prog_;
  Collective& coll_;
  Arena& arena_;
  ParamStore<T>& params_;
  step::LoopOps<T>& ops_;
  Timeline& timeline_;
  std::vector<ArenaAllocation> bufs_;         // by buffer id: the step's buffers, live between alloc and free
  std::unordered_map<uint32_t, Work> works_;  // by operation: collectives not yet waited for
  std::vector<uint32_t> sum_;                 // per unit: the buffer holding its step gradient
  std::vector<double> compute_start_;         // per unit: when its compute began (--trace)
  std::vector<std::size_t> gathered_units_;   // --offload-params: a micro-batch's gathers, in order
  std::string phase_;                         // "forward " or "backward "
  const T* tied_wte_ = nullptr;               // a last pipeline stage's received wte
  const StepHooks* hooks_ = nullptr;
  std::vector<uint32_t>* executed_ = nullptr;  // --step-trace
  std::size_t pc_ = 0;
  bool applied_ = false;
};

}  // namespace zt::zero
