// zero/train_zero.cc — the ZeRO step engine (see train_zero.h): one loop for every stage, the
// stage only choosing, per state, full or shard extent (zero/layout.h) and which collective moves
// the gradient. The per-element arithmetic is the reference loop's (train/single_rank.cc).
#include "zero/train_zero.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <span>
#include <type_traits>

#include "core/check.h"
#include "kernels/blas.h"
#include "memory/arena.h"
#include "memory/buffer.h"
#include "model/gpt.h"
#include "model/init.h"
#include "optim/adam.h"
#include "optim/grad_accumulator.h"
#include "optim/grad_norm.h"
#include "optim/loss_scaler.h"
#include "optim/sgd.h"
#include "reduce/canonical_tree.h"
#include "train/element_optimizer.h"
#include "train/memory_plan.h"
#include "train/step_start.h"
#include "zero/grad_reducer.h"
#include "zero/config_check.h"
#include "zero/heldout_eval.h"
#include "zero/layout.h"
#include "zero/unit_gatherer.h"
#include "zero/zero_comm.h"
#include "zero/zero_memory.h"
#include "zero/zero_plan.h"

namespace zt::zero {
namespace {

using train::StepRecord;
using train::TrainConfig;
namespace category = train::category;

CommStats operator-(const CommStats& a, const CommStats& b) {
  CommStats d;
  for (std::size_t k = 0; k < kCollKinds; ++k) {
    d.by_kind[k].calls = a.by_kind[k].calls - b.by_kind[k].calls;
    d.by_kind[k].bytes_sent = a.by_kind[k].bytes_sent - b.by_kind[k].bytes_sent;
    d.by_kind[k].bytes_received = a.by_kind[k].bytes_received - b.by_kind[k].bytes_received;
  }
  return d;
}
CommStats operator+(const CommStats& a, const CommStats& b) {
  CommStats s;
  for (std::size_t k = 0; k < kCollKinds; ++k) {
    s.by_kind[k].calls = a.by_kind[k].calls + b.by_kind[k].calls;
    s.by_kind[k].bytes_sent = a.by_kind[k].bytes_sent + b.by_kind[k].bytes_sent;
    s.by_kind[k].bytes_received = a.by_kind[k].bytes_received + b.by_kind[k].bytes_received;
  }
  return s;
}

template <typename T>
class ZeroLoop final : public model::ParamProvider<T> {
  static constexpr bool kFp32 = std::is_same_v<T, float>;
  using Acc = CanonicalGradAccumulator<TypedBuffer<float>>;

 public:
  ZeroLoop(const TrainConfig& c, const Dataset& data, Collective& coll, train::RunArtifacts* artifacts)
      : c_(c), data_(data), coll_(coll), artifacts_(artifacts),
        plan_(make_zero_plan(c, data.vocab_size(), coll.rank())),
        lay_(plan_.layout), gpt_(plan_.shape.model, c.micro_batch),
        arena_(static_cast<std::size_t>(c.memory_budget_mb * 1024.0 * 1024.0),
               "rank " + std::to_string(coll.rank())) {
    ZT_CHECK(static_cast<int64_t>(data.context()) == c.context, "dataset context ",
             data.context(), " differs from --context ", c.context);
    kernels::set_blas_threads(static_cast<int>(c.blas_threads));
    allocate();
    initialise();
  }

  ZeroRunResult run(const train::StepCallback& on_step) {
    ZeroRunResult out;
    auto& result = out.run;
    result.param_count = static_cast<int64_t>(lay_.psi);
    result.dataset = data_.describe();
    scaler_ = train::loss_scaler_for(c_);
    const CommStats start = coll_.stats();
    double seconds = 0;
    for (int64_t step = 1; step <= c_.steps; ++step) {
      const CommStats before = coll_.stats();
      const auto t0 = std::chrono::steady_clock::now();
      result.steps.push_back(train_step(step));
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      out.comm_per_step = coll_.stats() - before;
      result.seconds = seconds;
      result.tokens_per_s = seconds > 0 ? static_cast<double>(step * c_.global_batch * c_.context) / seconds : 0;
      // the reference's schedule: every --eval-every steps and after the last (before the
      // progress callback, so it can print the evaluation with its step)
      if ((c_.eval_every > 0 && step % c_.eval_every == 0) || step == c_.steps) evaluate(step, result);
      if (on_step) on_step(result.steps.back(), result);
    }
    if (c_.steps == 0) evaluate(0, result);
    out.comm_total = coll_.stats() - start - eval_comm_;  // training steps only
    out.timeline = timeline_.events();
    out.comm_predicted_per_step = predict_comm_per_step(plan_);
    if (artifacts_ && (!c_.dump_params.empty() || c_.verify)) artifacts_->final_params = gather_master();
    result.memory.push_back(memory_report(arena_, plan_));
    return out;
  }

  // ---- ParamProvider: the model reaches parameters and hands back gradients unit by unit ----
  const T* acquire(int unit) override {
    const auto u = static_cast<std::size_t>(unit);
    const T* p = plan_.spec.params ? gatherer_->acquire(u)  // S_p (ZeRO-3, paper Sec. 5.3): gathered just before use
                                   : params_.data() + lay_.units[u].full_offset;
    compute_start_[u] = timeline_.now_us();
    return p;
  }
  void release(int unit) override {
    const auto u = static_cast<std::size_t>(unit);
    timeline_.add(phase_ + lay_.units[u].name, "compute", compute_start_[u]);
    if (plan_.spec.params) gatherer_->release(u);
  }
  T* grad(int unit) override {
    const auto u = static_cast<std::size_t>(unit);
    staging_[u] = make_buffer<T>(arena_, lay_.units[u].full, category::grad_staging);
    std::memset(static_cast<void*>(staging_[u].data()), 0, lay_.units[u].full * sizeof(T));
    return staging_[u].data();
  }
  void grad_done(int unit) override {
    const auto u = static_cast<std::size_t>(unit);
    if (plan_.micro_sync && N() > 1) {
      reducer_->close(u, staging_[u].data());  // everything left (all of it without buckets)
    } else if (plan_.grads_in_compute_type) {
      store_grad16(u, staging_[u].data(), lay_.units[u].full);
    } else {  // accumulate locally; reduce once per step
      const T* g = staging_[u].data();
      accumulators_[u]->push_with([&](float* leaf) {
        for (std::size_t i = 0; i < lay_.units[u].full; ++i) leaf[i] = static_cast<float>(g[i]);
      });
    }
    staging_[u].reset();
  }
  /// Stage 2 buckets start as soon as backward has finished every parameter they cover
  /// (parameters finish from a unit's end towards its start, model/param_provider.h).
  void param_grad_done(int param) override {
    if (!plan_.bucket_elements || !plan_.micro_sync || N() == 1) return;
    const auto& info = gpt_.manifest().params[static_cast<std::size_t>(param)];
    const auto u = static_cast<std::size_t>(info.unit);
    reducer_->open(u);
    reducer_->issue_ready(u, staging_[u].data(), static_cast<std::size_t>(info.offset_in_unit));
  }

 private:
  std::size_t N() const { return lay_.world_size; }
  std::size_t rank() const { return lay_.rank; }

  // ---- set-up -------------------------------------------------------------------------------
  void allocate() {
    const ShardSpec& s = plan_.spec;
    params_ = make_buffer<T>(arena_, plan_.params_layout.total, category::params);  // per unit: shard or whole
    if constexpr (!kFp32) master_ = make_buffer<float>(arena_, lay_.total(s.optimizer), category::master);
    const std::size_t state_floats =
        lay_.total(s.optimizer) * static_cast<std::size_t>(plan_.shape.optimizer_k - 4) / 4;
    optimizer_state_ = make_buffer<float>(arena_, state_floats, category::optimizer);
    std::memset(optimizer_state_.data(), 0, state_floats * sizeof(float));
    const auto B = c_.micro_batch;
    const auto prec = plan_.shape.precision;
    activations_ = arena_.allocate(model::activation_bytes(plan_.shape.model, B, prec), category::activations);
    scratch_ = arena_.allocate(model::scratch_bytes(plan_.shape.model, B, prec), category::scratch);
    workspace_ = {activations_.data(), activations_.bytes(), scratch_.data(), scratch_.bytes()};
    batch_ = make_buffer<int32_t>(arena_, static_cast<std::size_t>(B * (c_.context + 1)), category::batch);
    norm_ = make_buffer<float>(arena_, plan_.norm_floats, category::norm_blocks);
    staging_.resize(lay_.units.size());
    reducer_ = std::make_unique<GradReducer<T>>(plan_, coll_, arena_, c_.overlap,
        [this](std::size_t u, const T* r16, const float* r32) { take_reduced(u, r16, r32); }, tl());
    if (s.params) gatherer_ = std::make_unique<UnitGatherer<T>>(plan_, coll_, arena_, params_.data(), tl());
    evaluator_ = std::make_unique<HeldoutEvaluator<T>>(c_, data_, plan_, coll_, arena_, params_.data());
    compute_start_.resize(lay_.units.size());
    step_grad_.resize(lay_.units.size());
    step_grad16_.resize(lay_.units.size());
    for (std::size_t u = 0; u < lay_.units.size(); ++u)
      accumulators_.push_back(std::make_unique<Acc>(plan_.accumulator_extent(u), [this, u](std::size_t n) {
        // the first buffer of a step survives every merge (it holds the leftmost leaves): it is
        // the unit's gradient storage; the others are the canonical tree's extra partial sums
        const bool first = accumulators_[u]->live_partials() == 0;
        return make_buffer<float>(arena_, n, first ? category::grads : category::accum_partials);
      }));
  }

  /// Initial values of unit u's elements [first, first + count) (unit coordinates, padding 0),
  /// written by put(k, value) — one parameter slice at a time: no full FP32 copy is built.
  template <typename Put>
  void init_unit_range(std::size_t u, std::size_t first, std::size_t count, Put put) {
    const auto& mu = gpt_.manifest().units[u];
    float* window = norm_.data();
    const std::size_t b = lay_.block;  // norm_ holds at least one block
    for (std::size_t k = 0; k < count; ++k) put(k, 0.0f);
    for (int p = mu.first_param; p < mu.first_param + mu.num_params; ++p) {
      const auto& info = gpt_.manifest().params[static_cast<std::size_t>(p)];
      const auto lo = std::max<std::size_t>(first, static_cast<std::size_t>(info.offset_in_unit));
      const auto hi = std::min<std::size_t>(first + count, static_cast<std::size_t>(info.offset_in_unit + info.numel));
      for (std::size_t at = lo; at < hi; at += b) {
        const std::size_t n = std::min(b, hi - at);
        model::init_param_slice(plan_.shape.model, static_cast<uint64_t>(c_.seed), p,
                                static_cast<int64_t>(at) - info.offset_in_unit, static_cast<int64_t>(n), window);
        for (std::size_t k = 0; k < n; ++k) put(at + k - first, window[k]);
      }
    }
  }

  void initialise() {
    const ShardSpec& s = plan_.spec;
    for (std::size_t u = 0; u < lay_.units.size(); ++u) {
      const std::size_t own = rank() * lay_.units[u].shard;
      const bool sp = plan_.params_sharded(u);
      T* p = params_.data() + plan_.params_layout.offsets[u];
      init_unit_range(u, sp ? own : 0, lay_.extent(u, sp), [&](std::size_t k, float v) { p[k] = T(v); });
      if constexpr (!kFp32) {
        float* m = master_.data() + lay_.offset(u, s.optimizer);
        init_unit_range(u, s.optimizer ? own : 0, lay_.extent(u, s.optimizer), [&](std::size_t k, float v) { m[k] = v; });
      }
    }
  }

  /// Held-out evaluation split over the ranks (zero/heldout_eval.h); its collectives are kept
  /// out of the training's communication counters.
  void evaluate(int64_t step, train::RunResult& result) {
    const CommStats before = coll_.stats();
    if (auto e = evaluator_->evaluate(step, gpt_, workspace_, batch_.data())) result.evals.push_back(*e);
    eval_comm_ = eval_comm_ + (coll_.stats() - before);
  }

  // ---- gradient reductions (zero/grad_reducer.h) -------------------------------------------
  /// Reduce the step's locally accumulated FP32 gradient of unit u (full extent) over ranks in
  /// place (--grad-sync step): after it, this rank's reduced part starts at grad_offset(u). With
  /// --reduce-dtype compute it travels and is summed as 16-bit values (a 16-bit wire).
  void reduce_step_grad(std::size_t u) {
    if (N() == 1) return;
    float* g = step_grad_[u].data();
    const std::size_t mine = plan_.grad_shard ? rank() * lay_.units[u].shard : 0;
    if constexpr (!kFp32) {
      if (plan_.reduce_compute) {
        auto wire = make_buffer<T>(arena_, lay_.units[u].full, zero_category::reduce_wire);
        for (std::size_t i = 0; i < wire.size(); ++i) wire[i] = T(g[i]);
        reducer_->reduce_in_place(wire.data(), u);
        for (std::size_t i = 0; i < plan_.reduced_extent(u); ++i) g[mine + i] = static_cast<float>(wire[mine + i]);
        return;
      }
    }
    reducer_->reduce_in_place(g, u);
  }

  /// First element of this rank's reduced gradient of unit u in step_grad_[u].
  std::size_t grad_offset(std::size_t u) const {
    return plan_.micro_sync || !plan_.grad_shard ? 0 : rank() * lay_.units[u].shard;
  }
  /// Element i of this rank's reduced gradient of unit u (reduced extent), as FP32: from the
  /// FP32 accumulator, or from the 16-bit gradient storage (--reduce-dtype compute, A = 1).
  float grad_value(std::size_t u, std::size_t i) const {
    if (plan_.grads_in_compute_type) return static_cast<float>(step_grad16_[u][grad_offset(u) + i]);
    return step_grad_[u][grad_offset(u) + i];
  }

  /// --reduce-dtype compute with one micro-batch per rank: the gradient is stored in 16 bits
  /// (s_g = 2, the paper's accounting) and reduced in place on the 16-bit wire.
  void store_grad16(std::size_t u, const T* g, std::size_t n) {
    step_grad16_[u] = make_buffer<T>(arena_, n, category::grads);
    std::memcpy(static_cast<void*>(step_grad16_[u].data()), g, n * sizeof(T));
  }

  /// Where a completed per-micro-batch reduction of unit u goes: the 16-bit gradient storage,
  /// or the unit's FP32 accumulator (the canonical tree over micro-steps).
  void take_reduced(std::size_t u, const T* reduced16, const float* reduced32) {
    const std::size_t n = plan_.reduced_extent(u);
    if (reduced32) return accumulators_[u]->push(reduced32);
    if (plan_.grads_in_compute_type) return store_grad16(u, reduced16, n);
    accumulators_[u]->push_with([&](float* leaf) {
      for (std::size_t i = 0; i < n; ++i) leaf[i] = static_cast<float>(reduced16[i]);
    });
  }

  // ---- one optimizer step -------------------------------------------------------------------
  StepRecord train_step(int64_t step) {
    auto [rec, lr, tokens, grad_scale] = train::start_step(c_, step, scaler_.scale());  // as the reference
    const std::size_t A = plan_.micro_batches_per_rank;
    std::vector<float> loss_sums(A);
    const int64_t row = c_.context + 1;
    for (std::size_t j = 0; j < A; ++j) {
      const int64_t m = global_micro_batch(rank(), j);
      for (int64_t i = 0; i < c_.micro_batch; ++i)
        data_.sample(static_cast<uint64_t>(c_.seed), static_cast<uint64_t>(step),
                     static_cast<uint64_t>(m * c_.micro_batch + i), batch_.data() + i * row);
      const auto in = model::batch_inputs(batch_.data(), c_.micro_batch, c_.context);
      const auto tg = model::batch_targets(batch_.data(), c_.micro_batch, c_.context);
      phase_ = "forward ";
      loss_sums[j] = gpt_.forward(*this, in, tg, workspace_);
      phase_ = "backward ";
      gpt_.backward(*this, in, tg, grad_scale, workspace_);
      reducer_->complete();
      if (gatherer_) gatherer_->restart();
    }
    rec.loss = global_loss(loss_sums) / tokens;
    for (std::size_t u = 0; u < lay_.units.size(); ++u) {
      if (plan_.grads_in_compute_type) {
        if (!plan_.micro_sync && N() > 1) {  // in place on the 16-bit storage: it is the wire
          reducer_->reduce_in_place(step_grad16_[u].data(), u);
        }
        continue;
      }
      step_grad_[u] = accumulators_[u]->finish();
      if (!plan_.micro_sync) reduce_step_grad(u);
    }
    const double t_update = timeline_.now_us();
    finish_step(step, lr, rec);
    timeline_.add("norm, update, parameter gather", "optimizer", t_update);
    for (auto& g : step_grad_) g.reset();
    for (auto& g : step_grad16_) g.reset();
    return rec;
  }

  /// Global micro-batch index of (rank, micro-step) under the schedule (chapter 5).
  int64_t global_micro_batch(std::size_t r, std::size_t j) const {
    const auto A = plan_.micro_batches_per_rank;
    return static_cast<int64_t>(plan_.micro_sync ? j * N() + r : r * A + j);
  }

  /// The canonical tree over all M micro-batch loss sums in global order.
  float global_loss(const std::vector<float>& mine) {
    if (N() == 1) return canonical_sum(mine);
    const std::size_t A = mine.size();
    std::vector<float> all(A * N());
    coll_.all_gather(std::span<const float>(mine), std::span<float>(all));
    std::vector<float> ordered(all.size());
    for (std::size_t r = 0; r < N(); ++r)
      for (std::size_t j = 0; j < A; ++j) ordered[static_cast<std::size_t>(global_micro_batch(r, j))] = all[r * A + j];
    return canonical_sum(ordered);
  }

  /// Steps 4-6 of the protocol on the reduced gradient (step_grad_, reduced extent per unit).
  void finish_step(int64_t step, double lr, StepRecord& rec) {
    const std::size_t own = rank();
    bool nonfinite = false;
    for (std::size_t u = 0; u < lay_.units.size(); ++u)
      for (std::size_t i = 0; i < plan_.reduced_extent(u); ++i) nonfinite |= !std::isfinite(grad_value(u, i));
    if (plan_.grad_shard && N() > 1) {  // every rank must agree to skip (max of the flags)
      float flag = nonfinite ? 1.0f : 0.0f;
      coll_.all_reduce(std::span<float>(&flag, 1), ReduceOp::max);
      nonfinite = flag != 0.0f;
    }
    const bool apply = scaler_.update(nonfinite);
    ZT_CHECK(apply || scaler_.dynamic(), "step ", step, ": non-finite gradient with --precision ",
             c_.precision, " (no loss scaling to back off); lower --lr");
    const float inv_scale = 1.0f / rec.loss_scale;
    const float norm = std::sqrt(combine_norm_blocks(norm_block_sums_in_order(inv_scale)));
    if (std::isfinite(norm)) rec.grad_norm = norm;
    if (artifacts_ && step == 1 && !c_.dump_grads.empty()) artifacts_->step1_grad = gather_unscaled(inv_scale);
    rec.skipped = !apply;
    if (!apply) return;
    const ClipDecision clip = clip_decision(norm, static_cast<float>(c_.clip_grad_norm));
    rec.clipped = clip.clipped;
    ++optimizer_step_;
    const train::ElementOptimizer opt = train::element_optimizer(c_, lr, optimizer_step_, optimizer_state_.data(),
                                                   lay_.total(plan_.spec.optimizer));
    const ShardSpec& s = plan_.spec;
    std::vector<Work> gathers;
    for (std::size_t u = 0; u < lay_.units.size(); ++u) {
      const std::size_t shard = lay_.units[u].shard;
      const std::size_t first = s.optimizer ? own * shard : 0;  // unit coordinates of the owned range
      const std::size_t count = s.optimizer ? lay_.shard_real(u, own) : lay_.units[u].numel;
      const std::size_t g_at = plan_.grad_shard ? 0 : first;
      const std::size_t state_at = lay_.offset(u, s.optimizer);
      const bool sp = plan_.params_sharded(u);  // per unit: a stage-3 persistent unit is whole
      T* p = params_.data() + plan_.params_layout.offsets[u] + (sp ? 0 : first);
      for (std::size_t k = 0; k < count; ++k) {
        float gi = unscale_element(grad_value(u, g_at + k), inv_scale);
        if (clip.clipped) gi = clip_element(gi, clip.coefficient);
        if constexpr (kFp32) {
          opt.update(p[k], gi, state_at + k);
        } else {
          float& m = master_[state_at + k];
          opt.update(m, gi, state_at + k);
          p[k] = T(m);
        }
      }
      // S_o without S_p (stages 1-2, stage-3 persistent units): every rank needs every updated
      // 16-bit parameter back; the unit's all-gather (in place) runs while the next unit is updated
      if (s.optimizer && !sp && N() > 1) {
        T* unit = params_.data() + plan_.params_layout.offsets[u];
        gathers.push_back(coll_.all_gather_async(unit + own * shard, unit, shard, dtype_of_v<T>));
      }
    }
    for (auto& w : gathers) w.wait();
  }

  /// Block sums of the unscaled gradient (optim/grad_norm.h), in canonical order. A rank holding
  /// shards computes its own blocks and all-gathers the sums; a rank holding everything computes all.
  std::vector<float> norm_block_sums_in_order(float inv_scale) {
    const std::size_t b = lay_.block;
    float* window = norm_.data();
    std::vector<float> mine;
    std::vector<std::vector<std::size_t>> per_rank_unit(N(), std::vector<std::size_t>(lay_.units.size()));
    for (std::size_t u = 0; u < lay_.units.size(); ++u) {
      const std::size_t real = plan_.grad_shard ? lay_.shard_real(u, rank()) : lay_.units[u].numel;
      for (std::size_t first = 0; first < real; first += b) {
        const std::size_t n = std::min(b, real - first);
        for (std::size_t k = 0; k < n; ++k) window[k] = unscale_element(grad_value(u, first + k), inv_scale);
        mine.push_back(block_sum_of_squares(window, n));
      }
      for (std::size_t q = 0; q < N(); ++q) per_rank_unit[q][u] = norm_block_count(lay_.shard_real(u, q), b);
    }
    if (!plan_.grad_shard || N() == 1) return mine;
    std::vector<std::size_t> counts(N(), 0);
    for (std::size_t q = 0; q < N(); ++q)
      for (std::size_t n : per_rank_unit[q]) counts[q] += n;
    std::size_t total = 0;
    for (std::size_t n : counts) total += n;
    std::vector<float> gathered(total);
    coll_.all_gather_v(std::span<const float>(mine), std::span<float>(gathered), counts);
    return canonical_block_order(gathered, per_rank_unit);
  }

  /// Gather a per-unit FP32 state held with the given extent into canonical dense order.
  template <typename Sharded, typename Get>
  std::vector<float> gather_dense(Sharded sharded, Get get) {
    std::vector<float> out(lay_.psi);
    for (std::size_t u = 0; u < lay_.units.size(); ++u) {
      const auto& ul = lay_.units[u];
      std::vector<float> full(ul.full);
      std::vector<float> mine(ul.shard);
      if (sharded(u)) {
        for (std::size_t k = 0; k < ul.shard; ++k) mine[k] = get(u, k);
        if (N() > 1) coll_.all_gather(std::span<const float>(mine), std::span<float>(full));
        else full = mine;
      } else {
        for (std::size_t k = 0; k < ul.full; ++k) full[k] = get(u, k);
      }
      std::memcpy(out.data() + ul.dense_offset, full.data(), ul.numel * sizeof(float));
    }
    return out;
  }

  std::vector<float> gather_master() {
    const ShardSpec& s = plan_.spec;
    if constexpr (kFp32)
      return gather_dense([&](std::size_t u) { return plan_.params_sharded(u); },
                          [&](std::size_t u, std::size_t k) { return params_[plan_.params_layout.offsets[u] + k]; });
    else
      return gather_dense([&](std::size_t) { return s.optimizer; },
                          [&](std::size_t u, std::size_t k) { return master_[lay_.offset(u, s.optimizer) + k]; });
  }

  std::vector<float> gather_unscaled(float inv_scale) {
    return gather_dense([&](std::size_t) { return plan_.grad_shard; }, [&](std::size_t u, std::size_t k) {
      return unscale_element(grad_value(u, k), inv_scale);
    });
  }

  const TrainConfig& c_;
  const Dataset& data_;
  Collective& coll_;
  train::RunArtifacts* artifacts_;
  ZeroPlan plan_;
  const Layout& lay_;
  model::Gpt<T> gpt_;
  Arena arena_;
  TypedBuffer<T> params_;             // compute copy (fp32: the master), extent S_p per unit
  TypedBuffer<float> master_;         // FP32 master, extent S_o
  TypedBuffer<float> optimizer_state_;  // m then v (or momentum), extent S_o
  ArenaAllocation activations_, scratch_;
  model::Workspace workspace_;
  TypedBuffer<int32_t> batch_;
  TypedBuffer<float> norm_;
  std::vector<TypedBuffer<T>> staging_;       // per unit: the model's gradient output
  std::vector<TypedBuffer<float>> step_grad_;  // per unit: the step's reduced FP32 gradient
  std::vector<TypedBuffer<T>> step_grad16_;    // per unit: the same in 16 bits (grads_in_compute_type)
  std::vector<std::unique_ptr<Acc>> accumulators_;
  std::unique_ptr<GradReducer<T>> reducer_;   // gradient reduce-scatters / all-reduces
  std::unique_ptr<UnitGatherer<T>> gatherer_;  // stage 3: parameter all-gathers
  std::unique_ptr<HeldoutEvaluator<T>> evaluator_;  // held-out rounds split over ranks
  CommStats eval_comm_;                        // collectives of the evaluations
  Timeline timeline_{!c_.trace.empty()};        // --trace: compute and blocked spans
  std::vector<double> compute_start_;          // per unit: when its compute began
  std::string phase_;                          // "forward " or "backward "
  Timeline* tl() { return timeline_.enabled() ? &timeline_ : nullptr; }
  LossScaler scaler_ = LossScaler::none();
  int64_t optimizer_step_ = 0;
};

}  // namespace

ZeroRunResult train_zero(const TrainConfig& config, const Dataset& data, Collective& collective,
                         const train::StepCallback& on_step, train::RunArtifacts* artifacts) {
  train::validate(config);
  ZT_CHECK(config.world_size == collective.size(), "--world-size ", config.world_size,
           " differs from the collective's ", collective.size(), " ranks");
  check_same_config(config, collective);
  if (config.precision == "fp16") return ZeroLoop<fp16>(config, data, collective, artifacts).run(on_step);
  if (config.precision == "bf16") return ZeroLoop<bf16>(config, data, collective, artifacts).run(on_step);
  return ZeroLoop<float>(config, data, collective, artifacts).run(on_step);
}

}  // namespace zt::zero
