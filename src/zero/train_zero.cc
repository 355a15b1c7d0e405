// zero/train_zero.cc — the ZeRO step engine (see train_zero.h): one loop for every stage.
//
// This file is train/single_rank.cc plus data parallelism: the same members in the same order and
// the same shared pieces, so `diff src/train/single_rank.cc src/zero/train_zero.cc` is the ZeRO
// delta. The stage is the paper's (S_p, S_g, S_o) in ZeroPlan::spec (zero/zero_plan.h) and
// changes the step in three places only; every other line runs the same for all stages:
//
//  stage  S_p S_g S_o | after backward, per unit          | after the update          | before a unit is used
//  -------------------+-----------------------------------+---------------------------+----------------------
//  0      0   0   0   | all-reduce, once per step          | -                         | -
//                     |   (finish_unit_grads → GradReducer)|                           |
//  1      0   0   1   | reduce-scatter, once per step      | all-gather the updated    | -
//                     |   (finish_unit_grads)              |   shard (share_updated)   |
//  2      0   1   1   | reduce-scatter after every micro-  | all-gather (as stage 1)   | -
//                     |   batch, in buckets (grad_done,    |                           |
//                     |   param_grad_done → GradReducer)   |                           |
//  3      1   1   1   | as stage 2                         | - (parameters stay shards)| all-gather the unit
//                     |                                    |                           |   (acquire → UnitGatherer)
//
// Stage 2 over stage 1, in one function: grad_done reduces each micro-batch's gradient as soon as
// backward has produced it, so a rank keeps only its shard of the gradient (S_g = 1); stage 1
// keeps the whole gradient until the step's one reduction. Stage 3 over stage 2: acquire gathers a
// unit's parameters just before use, and nothing is gathered after the update (S_p = 1).
// With S_o every rank updates only its shard (owned) and agrees with the others on the skip
// (agree_nonfinite) and the norm (gather_norm_block_sums).
#include "zero/train_zero.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <span>
#include <type_traits>

#include "checkpoint/reader.h"
#include "checkpoint/writer.h"
#include "core/check.h"
#include "kernels/blas.h"
#include "memory/arena.h"
#include "memory/buffer.h"
#include "model/gpt.h"
#include "offload/optimizer_tier.h"
#include "offload/param_file_tier.h"
#include "optim/grad_accumulator.h"
#include "optim/loss_scaler.h"
#include "reduce/canonical_tree.h"
#include "train/element_optimizer.h"
#include "train/init_units.h"
#include "train/memory_plan.h"
#include "train/owned_slice.h"
#include "train/rank_memory.h"
#include "train/run_loop.h"
#include "train/step_decision.h"
#include "train/step_start.h"
#include "zero/checkpoint_io.h"
#include "zero/config_check.h"
#include "zero/engine_checkpoint.h"
#include "zero/grad_reducer.h"
#include "zero/heldout_eval.h"
#include "zero/layout.h"
#include "zero/mp_gather.h"
#include "zero/step_counters.h"
#include "zero/unit_gatherer.h"
#include "zero/zero_comm.h"
#include "zero/zero_memory.h"
#include "zero/zero_plan.h"
#include "zero/zero_trace.h"
#include "zero_r/allocation_replay.h"
#include "zero_r/copy_engine.h"
#include "zero_r/partitioned_checkpoints.h"

namespace zt::zero {
namespace {

using namespace zt::train;

/// A rank's index in the whole job: dp_rank · N_m + mp_rank (model-parallel ranks contiguous).
int world_rank(const RankGroups& g) { return g.dp.rank() * (g.mp ? g.mp->size() : 1) + (g.mp ? g.mp->rank() : 0); }

template <typename T>
class ZeroLoop final : public model::ParamProvider<T> {
  static constexpr bool kFp32 = std::is_same_v<T, float>;
  using Accumulator = CanonicalGradAccumulator<TypedBuffer<float>>;

 public:
  ZeroLoop(const TrainConfig& c, const Dataset& data, RankGroups groups, RunArtifacts* artifacts)
      : c_(c),
        data_(data),
        coll_(groups.dp),
        mp_(groups.mp),
        world_rank_(world_rank(groups)),
        artifacts_(artifacts),
        plan_(make_zero_plan(c, data.vocab_size(), groups.dp.rank(), groups.mp ? groups.mp->rank() : 0)),
        lay_(plan_.layout),
        shape_(plan_.shape),
        gpt_(shape_.model, c.micro_batch, plan_.model_options(),
             [this](float* x, std::size_t n) {
               mp_->all_reduce(std::span<float>(x, n));  // Megatron's g / f: completes a sum over blocks
             }),
        arena_(static_cast<std::size_t>(c.memory_budget_mb * 1024.0 * 1024.0),
               "rank " + std::to_string(world_rank(groups))) {
    ZT_CHECK(data.context() == shape_.context, "dataset context ", data.context(), " differs from --context ",
             c.context);
    kernels::set_blas_threads(static_cast<int>(c.blas_threads));
    kernels::set_gemm_backend(c.gemm);
    if (!c.memory_trace.empty()) arena_.enable_trace();
    if (c.allocator == train::Allocator::zero) set_aside_md_regions();
    allocate();
    initialise();
  }

  ZeroRunResult run(const StepCallback& on_step) {
    ZeroRunResult out;
    RunResult& result = out.run;
    result.param_count = model::param_count(shape_.model);  // the whole model (a model-parallel rank holds part)
    result.dataset = data_.describe();
    scaler_ = loss_scaler_for(c_);
    if (!c_.resume.empty()) load_checkpoint();
    StepCounters last, training;  // the last step's, and every training step's (not evaluations or saves)
    auto step = [&](int64_t s) {
      const StepCounters before = counters();
      StepRecord rec = train_step(s);
      last = counters() - before;
      training = training + last;
      return rec;
    };
    run_steps(c_, {step, [&](int64_t s) { return evaluate(s); }, [&](int64_t s) { save_if_due(s); }}, on_step, result,
              first_step_);
    out.dp.per_step = last.dp;
    out.mp.per_step = last.mp;
    out.dp.total = training.dp;
    out.mp.total = training.mp;
    out.dp.predicted_per_step = predict_comm_per_step(plan_);
    out.mp.predicted_per_step = predict_mp_comm_per_step(plan_);
    out.comm_total = out.dp.total + out.mp.total;
    out.transfers_per_step = last.transfers;
    out.transfers_total = training.transfers;
    out.transfers_predicted_per_step = predict_transfers_per_step(plan_);
    out.file_io_per_step = last.file_io;
    out.file_io_total = training.file_io;
    out.file_io_predicted_per_step = predict_file_io_per_step(plan_);
    out.comm_per_step = out.dp.per_step + out.mp.per_step;
    out.comm_predicted_per_step = out.dp.predicted_per_step + out.mp.predicted_per_step;
    out.dp_rank = coll_.rank();
    out.mp_rank = mp_ ? mp_->rank() : 0;
    out.timeline = timeline_.events();
    out.arena_trace = arena_.trace();
    if (artifacts_ && (!c_.dump_params.empty() || c_.verify)) artifacts_->final_params = master_values();
    result.memory.push_back(memory_report());
    return out;
  }

  // ---- ParamProvider: the model reaches parameters and hands back gradients unit by unit ----
  const T* acquire(int unit) override {
    const auto u = static_cast<std::size_t>(unit);
    // S_p (stage 3, paper Sec. 5.3): gathered just before use (a persistent unit: its whole copy)
    const T* p = gatherer_ ? gatherer_->acquire(u) : params_.data() + plan_.params_layout.offsets[u];
    compute_start_[u] = timeline_.now_us();
    return p;
  }
  void release(int unit) override {
    const auto u = static_cast<std::size_t>(unit);
    timeline_.add(phase_ + lay_.units[u].name, "compute", compute_start_[u]);
    if (gatherer_) gatherer_->release(u);
  }
  T* grad(int unit) override {
    const auto u = static_cast<std::size_t>(unit);
    staging_[u] = make_buffer<T>(arena_, lay_.units[u].full, category::grad_staging);
    std::memset(static_cast<void*>(staging_[u].data()), 0, lay_.units[u].full * sizeof(T));
    return staging_[u].data();
  }
  /// Unit u's micro-batch gradient is final. Reduced now when every micro-batch is (S_g: only the
  /// shard is kept), else added to the rank's local sum for the step's one reduction.
  void grad_done(int unit) override {
    const auto u = static_cast<std::size_t>(unit);
    if (plan_.reduce_each_micro_batch && N() > 1)
      reducer_->close(u, staging_[u].data());  // whatever buckets are left (all, without buckets)
    else
      keep_grad(u, staging_[u].data(), nullptr, nullptr);
    staging_[u].reset();
  }
  /// Stage 2 buckets start as soon as backward has finished every parameter they cover
  /// (parameters finish from a unit's end towards its start, model/param_provider.h).
  void param_grad_done(int param) override {
    if (!plan_.bucket_elements || !plan_.reduce_each_micro_batch || N() == 1) return;
    const auto& info = gpt_.manifest().params[static_cast<std::size_t>(param)];
    const auto u = static_cast<std::size_t>(info.unit);
    reducer_->open(u);
    reducer_->issue_ready(u, staging_[u].data(), static_cast<std::size_t>(info.offset_in_unit));
  }

 private:
  std::size_t N() const { return lay_.world_size; }  // the data-parallel ranks ZeRO shards over
  std::size_t N_m() const { return mp_ ? static_cast<std::size_t>(mp_->size()) : 1; }
  /// Every counter, now (zero/step_counters.h); file I/O of both file tiers, the optimizer's and
  /// the parameters'.
  StepCounters counters() const {
    return {
        coll_.stats(), mp_ ? mp_->stats() : CommStats{}, copies_ ? copies_->stats() : zero_r::TransferStats{},
        (tier_ ? tier_->file_stats() : offload::FileIoStats{}) + (ptier_ ? ptier_->stats() : offload::FileIoStats{})};
  }
  std::size_t rank() const { return lay_.rank; }
  std::size_t units() const { return lay_.units.size(); }
  std::size_t numel(std::size_t u) const { return lay_.units[u].numel; }
  std::size_t shard(std::size_t u) const { return lay_.units[u].shard; }
  /// This rank's shard of unit u starts here (unit coordinates): rank · shard_u.
  std::size_t shard_begin(std::size_t u) const { return rank() * shard(u); }

  // ---- set-up -------------------------------------------------------------------------------
  void allocate() {
    const std::size_t state_elements = lay_.total(plan_.spec.optimizer);  // S_o: shards, or every unit
    if (plan_.params_layout.total)  // per unit: S_p (--offload-params: the persistent units only)
      params_ = make_buffer<T>(arena_, plan_.params_layout.total, category::params);
    if (plan_.offload_params) {  // ZeRO-Infinity: the sharded units' shards in a file (offload/param_file_tier.h)
      std::vector<std::size_t> records(units(), 0);
      for (std::size_t u = 0; u < units(); ++u)
        if (plan_.params_in_file(u)) records[u] = shard(u) * sizeof(T);
      ptier_ = std::make_unique<offload::ParamFileTier>(c_.offload_params_dir(), world_rank_, records,
                                                        plan_.param_buffers, arena_);
    }
    if (plan_.offload_activations || plan_.offload_optimizer) {  // a host tier: P_a+cpu, ZeRO-Offload
      copies_ = std::make_unique<zero_r::CopyEngine>();
      host_arena_ = std::make_unique<Arena>(static_cast<std::size_t>(c_.host_memory_budget_mb * 1048576.0),
                                            "host tier of rank " + std::to_string(world_rank_));
    }
    if (plan_.offload_optimizer) {  // ZeRO-Offload: master and optimizer state in the host tier (or a file)
      const offload::TierSettings where{plan_.offload_to_file ? offload::TierKind::file : offload::TierKind::host,
                                        c_.offload_optimizer_dir(), static_cast<std::size_t>(c_.offload_buffers),
                                        c_.offload_read_ahead, world_rank_};
      tier_ = std::make_unique<offload::OptimizerTier<T>>(where, offload_tier_shape(plan_), *host_arena_, *copies_);
    } else {
      if constexpr (!kFp32) master_ = make_buffer<float>(arena_, state_elements, category::master);
      const std::size_t state_floats = state_elements * static_cast<std::size_t>(shape_.optimizer_k - 4) / 4;
      optimizer_state_ = make_buffer<float>(arena_, state_floats, category::optimizer);  // S_o
      std::memset(optimizer_state_.data(), 0, state_floats * sizeof(float));
    }
    const auto B = c_.micro_batch;
    const model::ModelOptions o = plan_.model_options();
    activations_ =
        arena_.allocate(model::activation_bytes(shape_.model, B, shape_.precision, o), category::activations);
    if (o.checkpoint_activations && !plan_.partition_activations)
      checkpoints_ = arena_.allocate(model::checkpoint_bytes(shape_.model, B, shape_.precision, o),
                                     category::activation_checkpoints);
    scratch_ = arena_.allocate(model::scratch_bytes(shape_.model, B, shape_.precision, o), category::scratch);
    workspace_ = {activations_.data(), activations_.bytes(), scratch_.data(),
                  scratch_.bytes(),    checkpoints_.data(),  checkpoints_.bytes()};
    batch_ = make_buffer<int32_t>(arena_, shape_.micro_batch * (shape_.context + 1), category::batch);
    norm_ = make_buffer<float>(arena_, plan_.norm_floats, category::norm_blocks);
    staging_.resize(units());
    step_sum32_.resize(units());
    step_sum16_.resize(units());
    for (std::size_t u = 0; u < units(); ++u)  // S_g: each buffer is the shard, else the whole unit
      accumulators_.push_back(std::make_unique<Accumulator>(plan_.grad_extent(u), [this, u](std::size_t n) {
        // the accumulator is the unit's gradient storage: its first buffer `grads`, the rest partials
        return make_buffer<float>(arena_, n, accumulator_category(accumulators_[u]->live_partials(), true));
      }));
    reducer_ = std::make_unique<GradReducer<T>>(
        plan_, coll_, arena_, c_.overlap,
        [this](std::size_t u, const T* r16, const float* r32, TypedBuffer<float>* leaf) {
          keep_grad(u, r16, r32, leaf);
        },
        [this](std::size_t u) { return accumulators_[u]->allocate_leaf(); }, tl());
    if (plan_.spec.params)
      gatherer_ = std::make_unique<UnitGatherer<T>>(plan_, coll_, arena_, params_.data(), tl(), ptier_.get());
    evaluator_ = std::make_unique<HeldoutEvaluator<T>>(c_, data_, plan_, coll_, arena_, params_.data(), ptier_.get());
    compute_start_.resize(units());
    if (plan_.partition_activations) {  // ZeRO-R P_a (and P_a+cpu): zero_r/partitioned_checkpoints.h
      keeper_ = std::make_unique<zero_r::PartitionedCheckpoints<T>>(
          mp_, shape_.micro_batch * shape_.context * static_cast<std::size_t>(shape_.model.width),
          static_cast<int>(shape_.model.layers), arena_, host_arena_.get(), copies_.get(), c_.overlap);
      gpt_.set_checkpoint_keeper(keeper_.get());
    }
  }

  /// M_D (ZeRO paper, Sec. 6.3): the long-lived tensors get contiguous regions of their own, so
  /// they never sit between short-lived ones: the gradients (the step's storage and the canonical
  /// tree's partial sums, allocated during backward), sized by replaying this plan's gradient
  /// allocations (gradient_events), and the activation checkpoints.
  void set_aside_md_regions() {
    for (const auto& r : md_regions(plan_, c_.overlap)) arena_.add_region(r.name, r.bytes, r.categories);
  }

  /// What this rank keeps of each unit from the counter-based initialiser (train/init_units.h):
  /// the compute copy's shard or whole unit (S_p), the master's shard or whole unit (S_o).
  void initialise() {
    for (std::size_t u = 0; u < units(); ++u) {
      const bool p_sharded = plan_.params_sharded(u), o_sharded = plan_.spec.optimizer;
      with_params(
          u,
          [&](T* p) {
            init_unit_range(shape_.model, gpt_.manifest(), c_.seed, u, p_sharded ? shard_begin(u) : 0,
                            lay_.extent(u, p_sharded), norm_.data(), lay_.block,
                            [&](std::size_t k, float v) { p[k] = T(v); });
            return true;
          },
          /*fresh=*/true);
      const auto init_master = [&](float* m) {
        init_unit_range(shape_.model, gpt_.manifest(), c_.seed, u, o_sharded ? shard_begin(u) : 0,
                        lay_.extent(u, o_sharded), norm_.data(), lay_.block, [&](std::size_t k, float v) { m[k] = v; });
      };
      if (tier_)  // ZeRO-Offload: the master in the host tier, in every precision (fp32: the host's copy)
        tier_->initialise(u, init_master);
      else if constexpr (!kFp32)
        init_master(master_.data() + lay_.offset(u, o_sharded));
    }
  }

  // ---- one optimizer step -------------------------------------------------------------------
  StepRecord train_step(int64_t step) {
    auto [rec, lr, tokens, grad_scale] = start_step(c_, step, scaler_.scale());  // train/step_start.h
    const std::size_t A = plan_.micro_batches_per_rank;
    std::vector<float> loss_sums(A);
    for (std::size_t j = 0; j < A; ++j) {
      sample_micro_batch(step, global_micro_batch(rank(), j));
      const auto in = model::batch_inputs(batch_.data(), c_.micro_batch, c_.context);
      const auto tg = model::batch_targets(batch_.data(), c_.micro_batch, c_.context);
      phase_ = "forward ";
      loss_sums[j] = gpt_.forward(*this, in, tg, workspace_);
      phase_ = "backward ";
      gpt_.backward(*this, in, tg, grad_scale, workspace_);
      reducer_->complete();
      if (gatherer_) gatherer_->restart();
    }
    // the loss: canonical tree over every rank's micro-batch sums, divided once by the token count
    rec.loss = global_loss(loss_sums) / tokens;
    for (std::size_t u = 0; u < units(); ++u) finish_unit_grads(u);
    const double t_update = timeline_.now_us();
    finish_step(step, lr, rec);
    timeline_.add("norm, update, parameter gather", "optimizer", t_update);
    for (auto& g : step_sum32_) g.reset();
    for (auto& g : step_sum16_) g.reset();
    return rec;
  }

  /// Global micro-batch m of the step into batch_: sequences [mB, (m+1)B) of the global batch.
  void sample_micro_batch(int64_t step, std::size_t m) {
    fill_batch(data_, static_cast<uint64_t>(c_.seed), static_cast<uint64_t>(step), m * shape_.micro_batch,
               shape_.micro_batch, batch_.data());
  }

  /// Global micro-batch index of (rank, micro-step) under the schedule (chapter 5): strided when
  /// every micro-batch is reduced (each reduction is then a level of the canonical tree),
  /// contiguous when each rank sums its own first (its local sum is then a subtree).
  std::size_t global_micro_batch(std::size_t r, std::size_t j) const {
    return plan_.reduce_each_micro_batch ? j * N() + r : r * plan_.micro_batches_per_rank + j;
  }

  /// The canonical tree over all M micro-batch loss sums in global order.
  float global_loss(const std::vector<float>& local_sums) {
    if (N() == 1) return canonical_sum(local_sums);
    const std::size_t A = local_sums.size();
    std::vector<float> all(A * N());
    coll_.all_gather(std::span<const float>(local_sums), std::span<float>(all));
    std::vector<float> ordered(all.size());
    for (std::size_t r = 0; r < N(); ++r)
      for (std::size_t j = 0; j < A; ++j) ordered[global_micro_batch(r, j)] = all[r * A + j];
    return canonical_sum(ordered);
  }

  // ---- where each unit's gradient goes: the step's sum, then this rank's reduced part -------
  /// Add a gradient of unit u to the step's sum: the model's micro-batch output (g16: full unit,
  /// compute type), or a reduction's result for this rank (g16 or g32, reduced extent). The sum
  /// is 16-bit storage when s_g = 2 (one micro-batch: nothing to add), else the FP32 canonical
  /// accumulator over micro-batches.
  void keep_grad(std::size_t u, const T* g16, const float* g32, TypedBuffer<float>* leaf = nullptr) {
    if (leaf) return accumulators_[u]->push_leaf(std::move(*leaf));  // the reduce-scatter's own buffer
    if (g32) return accumulators_[u]->push(g32);
    const std::size_t n = plan_.reduce_each_micro_batch && N() > 1 ? plan_.reduced_extent(u) : lay_.units[u].full;
    if (plan_.grad_storage_16bit) {
      step_sum16_[u] = make_buffer<T>(arena_, n, category::grads);
      std::memcpy(static_cast<void*>(step_sum16_[u].data()), g16, n * sizeof(T));
      return;
    }
    accumulators_[u]->push_with([&](float* leaf) {
      for (std::size_t i = 0; i < n; ++i) leaf[i] = static_cast<float>(g16[i]);
    });
  }

  /// The step's sum of unit u is complete; reduce it over ranks now if it was not reduced after
  /// every micro-batch (stages 0-1): an all-reduce, or a reduce-scatter in place (S_o) after which
  /// this rank's part sits at its shard's offset. With --reduce-dtype compute the FP32 sum travels
  /// and is added as 16-bit values (a 16-bit wire).
  void finish_unit_grads(std::size_t u) {
    if (!plan_.grad_storage_16bit) step_sum32_[u] = accumulators_[u]->finish();
    if (plan_.reduce_each_micro_batch || N() == 1) return;
    if (plan_.grad_storage_16bit) return reducer_->reduce_in_place(step_sum16_[u].data(), u);  // it is the wire
    float* g = step_sum32_[u].data();
    if constexpr (!kFp32) {
      if (plan_.reduce_in_compute_type) {
        auto wire = make_buffer<T>(arena_, lay_.units[u].full, zero_category::reduce_wire);
        for (std::size_t i = 0; i < wire.size(); ++i) wire[i] = T(g[i]);
        reducer_->reduce_in_place(wire.data(), u);
        const std::size_t at = reduced_offset(u);
        for (std::size_t i = 0; i < plan_.reduced_extent(u); ++i) g[at + i] = static_cast<float>(wire[at + i]);
        return;
      }
    }
    reducer_->reduce_in_place(g, u);
  }

  /// Where this rank's reduced part of unit u starts in the step's sum: at its shard's offset
  /// after an in-place reduce-scatter of the whole sum, else at 0 (the sum is the shard, or the
  /// reduction was an all-reduce).
  std::size_t reduced_offset(std::size_t u) const {
    return plan_.reduce_scatters_grad && !plan_.spec.grads ? shard_begin(u) : 0;
  }

  /// Protocol steps 4-6 on this rank's reduced gradient.
  void finish_step(int64_t step, double lr, StepRecord& rec) {
    bool nonfinite = false;
    for (std::size_t u = 0; u < units(); ++u) nonfinite |= any_nonfinite(summed_grad(u), reduced_real(u));
    nonfinite = agree_nonfinite(nonfinite);
    const float inv_scale = 1.0f / rec.loss_scale;  // S is a power of two: exact
    std::vector<float> norm_sums;                   // of fixed blocks that start at each unit's first element
    for (std::size_t u = 0; u < units(); ++u)
      append_norm_block_sums(summed_grad(u), reduced_real(u), lay_.block, inv_scale, norm_window(), norm_sums);
    norm_sums = gather_norm_block_sums(norm_sums);
    const StepDecision decision = decide_step(c_, scaler_, nonfinite, norm_sums, rec);  // train/step_decision.h
    if (artifacts_ && step == 1 && !c_.dump_grads.empty()) artifacts_->step1_grad = unscaled_grads(inv_scale);
    if (!decision.apply) return;
    const ElementOptimizer opt =
        element_optimizer(c_, lr, ++optimizer_step_, optimizer_state_.data(), lay_.total(plan_.spec.optimizer));
    std::vector<Work> gathers;
    if (ptier_) ptier_->start_pass(units_in_file());  // --offload-params: each shard read, updated, written back
    for (std::size_t u = 0, k = 0; u < units(); ++u) {
      T* in_file = plan_.params_in_file(u) ? reinterpret_cast<T*>(ptier_->get(k)) : nullptr;
      if (tier_)  // ZeRO-Offload: gradient down, the same update on the host tier, parameters up
        tier_->update(u, owned(u, in_file), inv_scale, decision.clip, opt);
      else
        apply_update(owned(u, in_file), inv_scale, decision.clip, opt);
      if (in_file) ptier_->put(k++, /*write=*/true);
      share_updated(u, gathers);
    }
    for (auto& w : gathers) w.wait();
  }

  // ---- where each unit's state lives --------------------------------------------------------
  /// This rank's reduced gradient of unit u (still scaled): its shard, or the whole unit.
  GradSpan<T> summed_grad(std::size_t u) const {
    const std::size_t at = reduced_offset(u);
    return plan_.grad_storage_16bit ? GradSpan<T>{nullptr, step_sum16_[u].data() + at}
                                    : GradSpan<T>{step_sum32_[u].data() + at, nullptr};
  }
  /// Real (non-padding) elements of summed_grad(u).
  std::size_t reduced_real(std::size_t u) const {
    return plan_.reduce_scatters_grad ? lay_.shard_real(u, rank()) : numel(u);
  }
  /// The elements of unit u this rank's optimizer updates: its shard (S_o), or the whole unit.
  /// @param in_file --offload-params: the unit's shard, read from the parameter tier.
  OwnedSlice<T> owned(std::size_t u, T* in_file = nullptr) {
    const bool o_sharded = plan_.spec.optimizer;
    const std::size_t begin = o_sharded ? shard_begin(u) : 0;  // unit coordinates of the owned elements
    const std::size_t at = lay_.offset(u, o_sharded);          // in the S_o-extent master and state
    T* p =
        (in_file ? in_file : params_.data() + plan_.params_layout.offsets[u]) + (plan_.params_sharded(u) ? 0 : begin);
    const GradSpan<T> g = summed_grad(u).after(plan_.reduce_scatters_grad ? 0 : begin);
    return {p, master_.size() ? master_.data() + at : nullptr, at, g,
            o_sharded ? lay_.shard_real(u, rank()) : numel(u)};
  }
  float* norm_window() { return norm_.data(); }
  /// Between steps: unit u's owned FP32 master and optimizer state, wherever they live — this
  /// tier's arrays, the host tier's, or a file tier's record brought into a buffer (written back
  /// when fn returns true, meaning it changed them). fn(const offload::StateView&) -> bool.
  /// For readers and writers of the whole state (dumps, --verify, checkpoints).
  template <typename Fn>
  void with_owned_state(std::size_t u, Fn fn) {
    if (tier_) return tier_->with_owned_state(u, fn);
    const bool o_sharded = plan_.spec.optimizer;
    const std::size_t at = lay_.offset(u, o_sharded), begin = o_sharded ? shard_begin(u) : 0;
    const auto view = [&](float* master) {
      return fn(
          offload::StateView{master, optimizer_state_.data(), at, lay_.total(o_sharded), lay_.extent(u, o_sharded)});
    };
    if constexpr (kFp32)  // fp32: the compute copy is the master (its owned part), maybe in the parameter tier
      with_params(u, [&](float* p) { return view(p + (plan_.params_sharded(u) ? 0 : begin)); });
    else
      view(master_.data() + at);
  }
  /// Unit u's stored compute copy (S_p extent), between steps: in params_, or (--offload-params)
  /// its record of the parameter tier, written back when fn(T*) returns true. @param fresh the
  /// record is filled, not read.
  template <typename Fn>
  void with_params(std::size_t u, Fn fn, bool fresh = false) {
    if (!plan_.params_in_file(u)) {
      fn(params_.data() + plan_.params_layout.offsets[u]);
      return;
    }
    ptier_->with_record(u, fresh, [&](std::byte* r) { return fn(reinterpret_cast<T*>(r)); });
  }
  /// The parameter tier's update pass: the units whose shards are in its file, in order.
  std::vector<std::size_t> units_in_file() const {
    std::vector<std::size_t> out;
    for (std::size_t u = 0; u < units(); ++u)
      if (plan_.params_in_file(u)) out.push_back(u);
    return out;
  }

  // ---- what ranks exchange besides gradients and parameters ---------------------------------
  /// With S_o every rank holds another part of the gradient, and with model parallelism every
  /// model-parallel rank other blocks: all must skip together (max of the flags; reduced as 0/1
  /// values, so no NaN ever meets the max).
  bool agree_nonfinite(bool local) {
    float flag = local ? 1.0f : 0.0f;
    if (plan_.reduce_scatters_grad && N() > 1) coll_.all_reduce(std::span<float>(&flag, 1), ReduceOp::max);
    if (N_m() > 1) mp_->all_reduce(std::span<float>(&flag, 1), ReduceOp::max);
    return flag != 0.0f;
  }

  /// The norm's block sums in canonical order (optim/grad_norm.h): a rank holding shards has the
  /// sums of its own blocks and all-gathers everyone's; a rank holding whole units has them all.
  std::vector<float> gather_norm_block_sums(const std::vector<float>& local_sums) {
    return gather_mp_norm_block_sums(gather_dp_norm_block_sums(local_sums));
  }
  std::vector<float> gather_dp_norm_block_sums(const std::vector<float>& local_sums) {
    if (!plan_.reduce_scatters_grad || N() == 1) return local_sums;
    std::vector<std::vector<std::size_t>> blocks(N(), std::vector<std::size_t>(units()));
    std::vector<std::size_t> counts(N(), 0);
    for (std::size_t q = 0; q < N(); ++q)
      for (std::size_t u = 0; u < units(); ++u)
        counts[q] += blocks[q][u] = norm_block_count(lay_.shard_real(u, q), lay_.block);
    std::size_t total = 0;
    for (std::size_t n : counts) total += n;
    std::vector<float> gathered(total);
    coll_.all_gather_v(std::span<const float>(local_sums), std::span<float>(gathered), counts);
    return canonical_block_order(gathered, blocks);
  }

  /// With model parallelism the norm is over the whole model (zero/mp_gather.h).
  std::vector<float> gather_mp_norm_block_sums(const std::vector<float>& ours) {
    return N_m() == 1 ? ours : zero::gather_mp_norm_block_sums(*mp_, plan_, lay_.block, ours);
  }

  /// S_o without S_p (stages 1-2, stage-3 persistent units): every rank needs every updated
  /// parameter, so unit u's updated shard is all-gathered in place, while the next unit updates.
  void share_updated(std::size_t u, std::vector<Work>& gathers) {
    if (!plan_.spec.optimizer || plan_.params_sharded(u) || N() == 1) return;
    T* unit = params_.data() + plan_.params_layout.offsets[u];
    gathers.push_back(coll_.all_gather_async(unit + shard_begin(u), unit, shard(u), dtype_of_v<T>));
  }

  /// Gather a per-unit FP32 state into canonical dense order (padding stripped), from ranks that
  /// hold it as shards or from this rank's whole copy.
  template <typename Get>
  std::vector<float> gather_dense(bool sharded_state, const std::vector<bool>& per_unit, Get get) {
    std::vector<float> out(lay_.psi);
    for (std::size_t u = 0; u < units(); ++u) {
      const auto& ul = lay_.units[u];
      const bool sharded = per_unit.empty() ? sharded_state : per_unit[u];
      std::vector<float> full(ul.full), part(ul.shard);
      if (sharded) {
        for (std::size_t k = 0; k < ul.shard; ++k) part[k] = get(u, k);
        if (N() > 1)
          coll_.all_gather(std::span<const float>(part), std::span<float>(full));
        else
          full = part;
      } else {
        for (std::size_t k = 0; k < ul.full; ++k) full[k] = get(u, k);
      }
      std::memcpy(out.data() + ul.dense_offset, full.data(), ul.numel * sizeof(float));
    }
    return out;
  }
  std::vector<float> unscaled_grads(float inv_scale) {
    return canonical(gather_dense(plan_.reduce_scatters_grad, {}, [&](std::size_t u, std::size_t k) {
      return unscale_element(summed_grad(u)[k], inv_scale);
    }));
  }
  std::vector<float> master_values() {
    if constexpr (kFp32) {
      std::vector<std::vector<float>> stored(units());  // each unit's compute copy, wherever it is
      for (std::size_t u = 0; u < units(); ++u)
        with_params(u, [&](const float* p) {
          stored[u].assign(p, p + lay_.extent(u, plan_.params_sharded(u)));
          return false;
        });
      return canonical(
          gather_dense(false, plan_.params_layout.sharded, [&](std::size_t u, std::size_t k) { return stored[u][k]; }));
    } else {
      std::vector<float> master(lay_.total(plan_.spec.optimizer));  // this rank's owned master, wherever it lives
      for (std::size_t u = 0; u < units(); ++u)
        with_owned_state(u, [&](const offload::StateView& s) {
          std::copy_n(s.master, s.extent, master.data() + lay_.offset(u, plan_.spec.optimizer));
          return false;
        });
      return canonical(gather_dense(plan_.spec.optimizer, {}, [&](std::size_t u, std::size_t k) {
        return master[lay_.offset(u, plan_.spec.optimizer) + k];
      }));
    }
  }
  /// A state gathered over the data-parallel group (this model-parallel rank's units, dense) in
  /// the model's canonical order (zero/mp_gather.h).
  std::vector<float> canonical(const std::vector<float>& stored) {
    return gather_mp_canonical(N_m() > 1 ? mp_ : nullptr, plan_, shape_.model, stored);
  }

  // ---- checkpoints (chapter 10): this rank's states in canonical pieces (zero/engine_checkpoint.h) --
  void save_if_due(int64_t step) {
    if (c_.save_dir.empty() || !((c_.save_every > 0 && step % c_.save_every == 0) || step == c_.steps)) return;
    save_checkpoint(step);
  }
  /// The protocol of checkpoint/writer.h: rank 0 opens the temporary directory, every rank writes
  /// its pieces, rank 0 publishes; barriers over the whole job between the phases.
  void save_checkpoint(int64_t step) {
    const std::string where = checkpoint::step_dir(c_.save_dir, step);
    together(coll_, mp_, where, [&] {
      if (world_rank_ == 0) checkpoint::begin_save(c_.save_dir, step);
    });
    together(coll_, mp_, where, [&] {
      checkpoint::RankFileWriter writer(where + ".tmp", world_rank_);
      write_rank_pieces(writer, plan_, checkpoint_states(c_),
                        [this](std::size_t u, auto fn) { with_owned_state(u, fn); });
      writer.finish();
    });
    together(coll_, mp_, where, [&] {  // nobody goes on (or is killed) before the checkpoint is visible
      if (world_rank_ == 0)
        checkpoint::publish(c_.save_dir, step,
                            checkpoint_header(c_, plan_, data_.describe(),
                                              {step, optimizer_step_, scaler_.scale(), scaler_.good_steps()}),
                            static_cast<int>(N() * N_m()));
    });
  }

  /// Continue from --resume: every state this rank keeps, read by canonical pieces from whatever
  /// ranks saved them (resharding is the reader's interval intersection), and the run's scalars.
  void load_checkpoint() {
    together(coll_, mp_, c_.resume, [&] {
      checkpoint::Reader reader(checkpoint::resolve_checkpoint(c_.resume));
      const RunScalars s = check_resumable(reader.manifest(), reader.dir(), c_, plan_, data_.describe());
      read_rank_states<T>(
          reader, plan_, checkpoint_states(c_), [this](std::size_t u, auto fn) { with_params(u, fn); },
          [this](std::size_t u, auto fn) { with_owned_state(u, fn); });
      scaler_.restore(s.loss_scale, s.good_steps);
      optimizer_step_ = s.optimizer_step;
      first_step_ = s.step + 1;
    });
  }

  // ---- held-out evaluation: the reference's rounds split over ranks (zero/heldout_eval.h) ---
  std::optional<EvalRecord> evaluate(int64_t step) {
    return evaluator_->evaluate(step, gpt_, workspace_, batch_.data());
  }

  // ---- memory -------------------------------------------------------------------------------
  RankMemory memory_report() const {
    const int mp_rank = static_cast<int>(plan_.mp.rank), dp_rank = static_cast<int>(rank());
    // the held-out evaluation's gathers are part of the predicted trace (none without the split)
    const bool heldout = data_.heldout() != nullptr;
    const auto rounds = heldout ? static_cast<std::size_t>(train::heldout_rounds(c_.micro_batch)) : 0;
    RankMemory m =
        rank_memory(arena_, dp_rank * static_cast<int>(N_m()) + mp_rank, predict_zero_memory(plan_, c_.overlap, rounds),
                    predicted_model_states(plan_), ledger_high_water(predicted_trace(plan_, c_.overlap, rounds)));
    m.dp_rank = dp_rank;
    m.mp_rank = mp_rank;
    if (host_arena_) {
      for (const auto& [name, usage] : host_arena_->ledger().categories()) m.host_by_category[name] = usage.peak_bytes;
      m.host_by_category_predicted = predict_host_memory(plan_);
      m.host_capacity = host_arena_->capacity();
    }
    return m;
  }

  const TrainConfig& c_;
  const Dataset& data_;
  Collective& coll_;  // the data-parallel group
  Collective* mp_;    // the model-parallel group (null: N_m = 1)
  int world_rank_;    // dp_rank · N_m + mp_rank
  RunArtifacts* artifacts_;
  ZeroPlan plan_;
  const Layout& lay_;
  const SingleRankShape& shape_;
  model::Gpt<T> gpt_;
  Arena arena_;
  TypedBuffer<T> params_;                                   // compute copy θ16 (fp32: the master), extent S_p per unit
  TypedBuffer<float> master_;                               // FP32 master θ32, extent S_o
  TypedBuffer<float> optimizer_state_;                      // m then v (or momentum), extent S_o
  std::vector<TypedBuffer<T>> staging_;                     // per unit: the model's gradient output g16
  std::vector<std::unique_ptr<Accumulator>> accumulators_;  // per unit: FP32 sum over micro-batches, extent S_g
  std::vector<TypedBuffer<float>> step_sum32_;              // per unit: the step's FP32 sum (the accumulator's tree)
  std::vector<TypedBuffer<T>> step_sum16_;                  // per unit: the step's 16-bit gradient (s_g = 2)
  ArenaAllocation activations_, checkpoints_, scratch_;
  model::Workspace workspace_;
  TypedBuffer<int32_t> batch_;
  TypedBuffer<float> norm_;
  std::unique_ptr<GradReducer<T>> reducer_;         // gradient reduce-scatters / all-reduces
  std::unique_ptr<offload::ParamFileTier> ptier_;   // --offload-params: the shards' file (outlives the gathers)
  std::unique_ptr<UnitGatherer<T>> gatherer_;       // stage 3: parameter all-gathers
  std::unique_ptr<HeldoutEvaluator<T>> evaluator_;  // held-out rounds split over ranks
  // ZeRO-R P_a / P_a+cpu, ZeRO-Offload (declared last: the keeper and the optimizer tier go first,
  // while the arenas and the copy engine they use exist)
  std::unique_ptr<zero_r::CopyEngine> copies_;  // transfers between the tiers
  std::unique_ptr<Arena> host_arena_;           // the host tier
  std::unique_ptr<zero_r::PartitionedCheckpoints<T>> keeper_;
  // ZeRO-Offload: the master, the optimizer state and the update (offload/optimizer_tier.h)
  std::unique_ptr<offload::OptimizerTier<T>> tier_;
  Timeline timeline_{!c_.trace.empty()};  // --trace: compute and blocked spans
  std::vector<double> compute_start_;     // per unit: when its compute began
  std::string phase_;                     // "forward " or "backward "
  Timeline* tl() { return timeline_.enabled() ? &timeline_ : nullptr; }
  LossScaler scaler_ = LossScaler::none();
  int64_t optimizer_step_ = 0;
  int64_t first_step_ = 1;  // after --resume: the checkpoint's step + 1
};

}  // namespace

ZeroRunResult train_zero(const train::TrainConfig& config, const Dataset& data, RankGroups groups,
                         const train::StepCallback& on_step, train::RunArtifacts* artifacts) {
  train::validate(config);
  ZT_CHECK(config.dp_size() == groups.dp.size(), "--world-size ", config.world_size, " / --mp-size ", config.mp_size,
           " = ", config.dp_size(), " data-parallel ranks, but the group has ", groups.dp.size());
  ZT_CHECK(config.mp_size == (groups.mp ? groups.mp->size() : 1), "--mp-size ", config.mp_size,
           " differs from the model-parallel group's ", groups.mp ? groups.mp->size() : 1, " ranks");
  check_same_config(config, groups.dp);
  if (groups.mp) check_same_config(config, *groups.mp);
  if (config.precision == model::Precision::fp16) return ZeroLoop<fp16>(config, data, groups, artifacts).run(on_step);
  if (config.precision == model::Precision::bf16) return ZeroLoop<bf16>(config, data, groups, artifacts).run(on_step);
  return ZeroLoop<float>(config, data, groups, artifacts).run(on_step);
}

}  // namespace zt::zero
