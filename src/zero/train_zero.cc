// zero/train_zero.cc — the ZeRO engine (see train_zero.h): a rank's set-up, its step and its run.
//
// The step is a program (zero/step_program.h), made once from the plan and run every step by
// step_ (zero/step_interpreter.h), which is also the ParamProvider the model calls. The stage is
// the paper's (S_p, S_g, S_o) in ZeroPlan::spec and shows as which operations the program holds:
//
//  stage  S_p S_g S_o | after backward, per unit             | after the update       | before a unit is used
//  -------------------+--------------------------------------+------------------------+----------------------
//  0      0   0   0   | step_sync: all-reduce, once per step | -                      | -
//  1      0   0   1   | step_sync: reduce-scatter, once      | all_gather in place    | -
//  2      0   1   1   | reduce_scatter of each micro-batch,  | all_gather in place    | -
//                     |   in buckets, as backward goes       |                        |
//  3      1   1   1   | as stage 2                           | - (shards stay shards) | all_gather, wait
//
// `zero-train --print-step` prints it. This file does what the program leaves to the engine:
// the model's passes (the micro-batches' tokens, zero/micro_batch_order.h), the loss over ranks,
// the agreement on the skip and the norm (zero/step_agreement.h), and each unit's update wherever
// its optimizer states live (states_, zero/model_state_stores.h: this arena, the host tier or a
// file, chosen once at set-up). What each rank stores is in the members' extents: the compute
// copy S_p (params_), the step's gradient S_g (the program's buffers), the optimizer states S_o
// (states_). On a pipeline stage (--pp-size) the same program runs on the stage's units only
// (plan_.units_here) and its data-parallel group; its passes come in the schedule's order (pipe_,
// zero/pipeline_stage.h), and the loss comes from the last stage.
// What is not here: the predictions of its memory and traffic (predict/, which walks the same
// program), the checkpoint format (zero/engine_checkpoint.h), the dumps' gathers
// (zero/dense_readback.h). The single-rank reference loop (reference/single_rank.cc) shares none of
// this: it is the oracle the engine is compared with, bit for bit.
#include "zero/train_zero.h"

#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>

#include "collective/staged_groups.h"
#include "core/atomic_file.h"
#include "core/check.h"
#include "kernels/blas.h"
#include "memory/arena.h"
#include "memory/buffer.h"
#include "model/gpt.h"
#include "offload/transfer_thread.h"
#include "optim/loss_scaler.h"
#include "reduce/canonical_tree.h"
#include "step/element_optimizer.h"
#include "step/init_units.h"
#include "step/owned_slice.h"
#include "step_device/placement.h"
#include "train/memory_plan.h"
#include "train/rank_memory.h"
#include "train/run_loop.h"
#include "train/step_decision.h"
#include "train/step_start.h"
#include "zero/config_check.h"
#include "zero/dense_readback.h"
#include "zero/dp_calls.h"
#include "zero/engine_checkpoint.h"
#include "zero/heldout_eval.h"
#include "zero/micro_batch_order.h"
#include "zero/model_state_stores.h"
#include "zero/pipeline_stage.h"
#include "zero/step_agreement.h"
#include "zero/step_interpreter.h"
#include "zero/step_program.h"
#include "zero/zero_plan.h"
#include "zero_r/allocation_replay.h"
#include "zero_r/partitioned_checkpoints.h"

namespace zt::zero {
namespace {

using namespace zt::train;
using namespace zt::step;

/// A rank's index in the whole job: pp_rank · N_d · N_m + dp_rank · N_m + mp_rank (collective/grid.h).
int world_rank(const RankGroups& g) {
  return ((g.pp ? g.pp->rank() : 0) * g.dp.size() + g.dp.rank()) * (g.mp ? g.mp->size() : 1) +
         (g.mp ? g.mp->rank() : 0);
}

template <typename T>
class ZeroLoop {
  static constexpr bool kFp32 = std::is_same_v<T, float>;

 public:
  ZeroLoop(const RunOptions& c, const Dataset& data, RankGroups groups, const std::vector<zero_r::ReplayRegion>& md,
           RunArtifacts* artifacts)
      : c_(c),
        data_(data),
        place_(c.device, groups.gpu),
        staged_(place_.runtime(), place_.compute_stream()),
        // on a device: staged through the host, or NCCL on device buffers beside Gloo on host values
        coll_(groups.shards ? staged_.over(*groups.shards) : staged_.over(groups.dp, groups.device_dp)),
        hsdp_(groups.shards),  // hybrid sharding: the two levels, and all N_d ranks for the loss
        mp_(groups.mp ? &staged_.over(*groups.mp) : nullptr),
        pp_(groups.pp),  // pipeline stages: activations by send/recv (pipeline/stage_runner.h)
        world_rank_(world_rank(groups)),
        artifacts_(artifacts),
        plan_(make_zero_plan(c, data.vocab_size(), groups.dp.rank(), groups.mp ? groups.mp->rank() : 0,
                             groups.pp ? groups.pp->rank() : 0)),
        lay_(plan_.layout),
        shape_(plan_.shape),
        gpt_(shape_.model, c.micro_batch, plan_.model_options(),
             [this](float* x, std::size_t n) {
               mp_->all_reduce(std::span<float>(x, n));  // Megatron's g / f: completes a sum over blocks
             }),
        arena_(place_.slab(static_cast<std::size_t>(c.memory_budget_mb * 1024.0 * 1024.0), "arena"), kBudgetArenaName) {
    ZT_CHECK(data.context() == shape_.context, "dataset context ", data.context(), " differs from --context ",
             c.context);
    kernels::set_blas_threads(static_cast<int>(c.blas_threads));
    kernels::set_gemm_backend(c.gemm);
    gpt_.set_ops(place_.model_ops());
    if (!c.memory_trace.empty()) arena_.enable_trace();
    if (!c.trace.empty() && place_.on_device()) place_.runtime()->enable_trace();
    if (c.allocator == train::Allocator::zero) set_aside_md_regions(md);
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
    out.set_counters(last, training);
    out.dp_rank = static_cast<int>(plan_.dp_rank);
    out.mp_rank = mp_ ? mp_->rank() : 0;
    out.pp_rank = plan_.pp_rank;
    if (place_.on_device()) timeline_.add_device_work(*place_.runtime());  // a track per stream
    out.timeline = timeline_.events();
    out.arena_trace = arena_.trace();
    if (!c_.step_trace.empty() && world_rank_ == 0) write_file_atomic(c_.step_trace, step_trace_);
    if (artifacts_ && (!c_.dump_params.empty() || c_.verify)) artifacts_->final_params = master_values();
    result.memory.push_back(memory_report());
    return out;
  }

 private:
  /// Every counter, now (zero/step_counters.h); file I/O of both file tiers, the optimizer's and
  /// the parameters'; the device's copies.
  StepCounters counters() const {
    return with_hybrid_parts(
        {coll_.stats(), mp_ ? mp_->stats() : CommStats{}, copies_ ? copies_->stats() : offload::TransferStats{},
         states_->file_stats() + params_->stats(), place_.copies()},
        hsdp_, pp_);
  }
  std::size_t rank() const { return lay_.rank; }
  std::size_t units() const { return lay_.units.size(); }
  std::size_t numel(std::size_t u) const { return lay_.units[u].numel; }
  std::size_t shard(std::size_t u) const { return lay_.units[u].shard; }
  /// This rank's shard of unit u starts here (unit coordinates): rank · shard_u.
  std::size_t shard_begin(std::size_t u) const { return rank() * shard(u); }

  // ---- set-up -------------------------------------------------------------------------------
  void allocate() {
    if (plan_.offload_activations || plan_.offload_optimizer) {  // a host tier: P_a+cpu, ZeRO-Offload
      copies_ = place_.on_device()
                    ? std::make_unique<offload::TransferThread>(*place_.runtime(), place_.compute_stream())
                    : std::make_unique<offload::TransferThread>();  // a copy stream, or a copy thread
      const auto bytes = static_cast<std::size_t>(c_.host_memory_budget_mb * 1048576.0) +
                         (place_.on_device() ? pinned_host_side_bytes(plan_) : 0);  // on a device the host side too
      host_arena_ = std::make_unique<Arena>(place_.host_slab(bytes, "host tier"),
                                            "host tier of rank " + std::to_string(world_rank_));
    }
    if (place_.on_device() && !host_arena_)  // what the loop fills and reads itself stays on the host (pinned)
      host_side_ = std::make_unique<Arena>(place_.host_slab(pinned_host_side_bytes(plan_), "host side"),
                                           "host side of rank " + std::to_string(world_rank_));
    Arena& host_side = !place_.on_device() ? arena_ : host_arena_ ? *host_arena_ : *host_side_;
    staged_.reserve(coll_, dp_staging_rooms(plan_));          // on a device: the rooms for the largest
    if (mp_) staged_.reserve(*mp_, mp_staging_rooms(plan_));  // calls (zero/dp_calls.h)
    params_.emplace(plan_, arena_, c_.offload_params_dir(), world_rank_, place_, host_side);  // S_p: here, or a file
    states_ = make_state_store<T>(plan_, c_, arena_, host_arena_.get(), copies_.get(), world_rank_, *params_, ops(),
                                  steps());  // S_o
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
    batch_ = make_buffer<int32_t>(host_side, shape_.micro_batch * (shape_.context + 1), category::batch);
    if (plan_.pipelined())  // its further workspaces, boundary buffers and runner (zero/pipeline_stage.h)
      pipe_ = std::make_unique<PipelineStage<T>>(
          plan_, gpt_, *pp_, arena_, host_side,
          pipeline::PipeSlot{activations_.data(), checkpoints_.data(), batch_.data()}, scratch_.data());
    norm_ = make_buffer<float>(arena_, plan_.norm_floats, category::norm_blocks);
    step_.emplace(plan_, step_program(plan_, c_.overlap), coll_, arena_, *params_, ops(), timeline_);  // the step
    if (pipe_) step_->set_tied_wte(pipe_->tied_wte());  // a last stage's head reads the copy it receives
    if (!c_.step_trace.empty() && world_rank_ == 0) step_->record(&executed_);
    evaluator_ = std::make_unique<HeldoutEvaluator<T>>(c_, data_, plan_, coll_, arena_, *params_, ops(), host_side,
                                                       pipe_ ? &pipe_->runner() : nullptr);
    if (plan_.partition_activations) {  // ZeRO-R P_a (and P_a+cpu): zero_r/partitioned_checkpoints.h
      keeper_ = std::make_unique<zero_r::PartitionedCheckpoints<T>>(
          mp_, shape_.micro_batch * shape_.context * static_cast<std::size_t>(shape_.model.width),
          static_cast<int>(shape_.model.layers), arena_, host_arena_.get(), copies_.get(), c_.overlap, ops());
      gpt_.set_checkpoint_keeper(keeper_.get());
    }
  }

  /// M_D (ZeRO paper, Sec. 6.3): the long-lived tensors get contiguous regions of their own, so
  /// they never sit between short-lived ones: the gradients (the step's storage and the canonical
  /// tree's partial sums, allocated during backward) and the activation checkpoints, sized by the
  /// caller from this plan's replayed allocations (predict::md_regions).
  void set_aside_md_regions(const std::vector<zero_r::ReplayRegion>& md) {
    for (const auto& r : md) arena_.add_region(r.name, r.bytes, r.categories);
  }

  /// What this rank keeps of each unit from the counter-based initialiser (step/init_units.h):
  /// the compute copy's shard or whole unit (S_p), the master's shard or whole unit (S_o), each
  /// filled in host memory (the stores write a device's copy back).
  void initialise() {
    std::vector<float> window(lay_.block);  // the initialiser's b-float temporary, on the host
    for (std::size_t u : plan_.units_here) {
      const bool p_sharded = plan_.params_sharded(u), o_sharded = plan_.spec.optimizer;
      params_->with_params(
          u,
          [&](T* p) {
            init_unit_range(shape_.model, gpt_.manifest(), c_.seed, u, p_sharded ? shard_begin(u) : 0,
                            lay_.extent(u, p_sharded), window.data(), lay_.block,
                            [&](std::size_t k, float v) { p[k] = T(v); });
            return true;
          },
          /*fresh=*/true);
      const auto init_master = [&](float* m) {
        init_unit_range(shape_.model, gpt_.manifest(), c_.seed, u, o_sharded ? shard_begin(u) : 0,
                        lay_.extent(u, o_sharded), window.data(), lay_.block,
                        [&](std::size_t k, float v) { m[k] = v; });
      };
      states_->initialise(u, init_master);  // fp32 in this arena: the compute copy is the master
    }
  }

  // ---- one optimizer step: the plan's program (zero/step_program.h), run by step_ -----------
  // What the program leaves to the engine: the model's passes, the loss, the agreement and each
  // unit's update. The reductions, gathers and the gradient's accumulation are its operations.
  StepRecord train_step(int64_t step) {
    auto [rec, lr, tokens, grad_scale] = start_step(c_, step, scaler_.scale());  // train/step_start.h
    std::vector<float> loss_sums(plan_.micro_batches_per_rank);
    StepEnd end;
    double t_update = 0;
    StepHooks h;
    h.run_pass = [&](const Op& pass) {  // micro-batch j's forward (its tokens first) or backward
      const auto j = static_cast<std::size_t>(pass.micro);
      if (pass.forward) sample_micro_batch(step, global_micro_batch(plan_, plan_.dp_rank, j));  // micro_batch_order.h
      const auto in = model::batch_inputs(batch_.data(), c_.micro_batch, c_.context);
      const auto tg = model::batch_targets(batch_.data(), c_.micro_batch, c_.context);
      if (pass.forward)
        loss_sums[j] = gpt_.forward(*step_, in, tg, workspace_);
      else
        gpt_.backward(*step_, in, tg, grad_scale, workspace_);
    };
    h.pipeline_passes = [&] {  // a pipeline stage: the schedule's passes, each beginning and ending a pass of step_
      loss_sums = pipe_->passes(
          *step_, grad_scale,
          [&](int m, int32_t* to) {
            sample_micro_batch(step, global_micro_batch(plan_, plan_.dp_rank, static_cast<std::size_t>(m)), to);
          },
          [&](bool forward, int m) { step_->begin_pass(forward, m); }, [&] { step_->end_pass(); },
          [&](const std::vector<P2pOp>& batch) { step_->exchange(batch); }, tl());
    };
    h.loss = [&] {  // canonical tree over every rank's micro-batch sums (a pipeline's: the last stage's), divided once
      const float sum = !pipe_ || pipe_->last() ? global_loss(plan_, hsdp_ ? hsdp_->whole() : coll_, loss_sums) : 0;
      rec.loss = (pipe_ ? pipe_->loss_from_last(sum) : sum) / tokens;
    };
    h.agree = [&] { return t_update = timeline_.now_us(), agree(step, lr, rec, end); };
    h.update = [&](std::size_t u) {  // the owned shard, wherever its optimizer states live (S_o)
      states_->update(u, owned(u, params_->for_update(u)), end.inv_scale, end.decision.clip, end.opt);
      params_->end_update(u);  // --offload-params: written back
    };
    step_->run(h);
    timeline_.add("norm, update, parameter gather", "optimizer", t_update);
    if (!executed_.empty()) record_executed(step);
    return rec;
  }

  /// Global micro-batch j of the step into batch_ (or `to`): sequences [jB, (j+1)B) of the global batch.
  void sample_micro_batch(int64_t step, std::size_t j, int32_t* to = nullptr) {
    fill_batch(data_, static_cast<uint64_t>(c_.seed), static_cast<uint64_t>(step), j * shape_.micro_batch,
               shape_.micro_batch, to ? to : batch_.data());
  }

  /// What the agreement decides for the updates that follow.
  struct StepEnd {
    float inv_scale = 1;  // 1/S (S a power of two: exact)
    StepDecision decision;
    ElementOptimizer opt;
  };
  /// Protocol steps 4-5 on this rank's reduced gradient, agreed over ranks: overflow, the norm and
  /// the clip. @return whether the step is applied (then the updates follow).
  bool agree(int64_t step, double lr, StepRecord& rec, StepEnd& end) {
    bool nonfinite = false;
    for (std::size_t u : plan_.units_here) nonfinite |= steps().any_nonfinite(summed_grad(u), reduced_real(u));
    nonfinite = agree_nonfinite(plan_, coll_, mp_, nonfinite, pp_);  // zero/step_agreement.h
    end.inv_scale = 1.0f / rec.loss_scale;
    std::vector<float> norm_sums;  // of fixed blocks that start at each unit's first element
    for (std::size_t u : plan_.units_here)
      steps().append_norm_block_sums(summed_grad(u), reduced_real(u), lay_.block, end.inv_scale, norm_sums);
    norm_sums = gather_norm_block_sums(plan_, coll_, mp_, norm_sums, pp_);
    end.decision = decide_step(c_, scaler_, nonfinite, norm_sums, rec);  // train/step_decision.h
    if (artifacts_ && step == 1 && !c_.dump_grads.empty()) artifacts_->step1_grad = unscaled_grads(end.inv_scale);
    if (!end.decision.apply) return false;
    end.opt = element_optimizer(optimizer_settings(c_), lr, ++optimizer_step_, nullptr, 0);
    params_->begin_update();  // --offload-params: each shard read, updated, written back
    return true;
  }

  /// --step-trace: the operations this rank executed in step `step`, one line each.
  void record_executed(int64_t step) {
    for (uint32_t pc : executed_)
      step_trace_ +=
          "step " + std::to_string(step) + " " + std::to_string(pc) + " " + op_text(step_->program().ops[pc]) + "\n";
    executed_.clear();
  }

  // ---- where each unit's state lives --------------------------------------------------------
  GradSpan<T> summed_grad(std::size_t u) const { return step_->summed(u); }
  std::size_t reduced_real(std::size_t u) const { return step_->reduced_real(u); }
  /// The elements of unit u this rank's optimizer updates: its shard (S_o), or the whole unit.
  /// @param stored where unit u's compute copy is during the update (zero/model_state_stores.h).
  OwnedSlice<T> owned(std::size_t u, T* stored) {
    const bool o_sharded = plan_.spec.optimizer;
    const std::size_t begin = o_sharded ? shard_begin(u) : 0;  // unit coordinates of the owned elements
    const std::size_t at = lay_.offset(u, o_sharded);          // in the S_o-extent master and state
    T* p = stored + (plan_.params_sharded(u) ? 0 : begin);
    const GradSpan<T> g = summed_grad(u).after(plan_.reduce_scatters_grad ? 0 : begin);
    return {p, nullptr, at, g, o_sharded ? lay_.shard_real(u, rank()) : numel(u)};  // the store adds its master
  }
  LoopOps<T>& ops() { return place_.loop_ops(); }    // the loop's own tensor work, where they live
  StepOps<T>& steps() { return place_.step_ops(); }  // protocol steps 4-6, where they live

  // dumps are in canonical order, gathered from the ranks' parts (zero/dense_readback.h) in
  // host memory
  std::vector<float> unscaled_grads(float inv_scale) {
    std::vector<std::vector<float>> held(units());  // this rank's part of each unit's step gradient
    for (std::size_t u : plan_.units_here) {
      const GradSpan<T> g = summed_grad(u);
      held[u].resize(plan_.reduce_scatters_grad ? shard(u) : lay_.units[u].full);
      std::vector<T> g16(g.fp32 ? 0 : held[u].size());
      if (g.fp32)
        ops().download(held[u].data(), g.fp32, held[u].size() * sizeof(float));
      else
        ops().download(g16.data(), g.compute, g16.size() * sizeof(T));
      for (std::size_t k = 0; k < g16.size(); ++k) held[u][k] = static_cast<float>(g16[k]);
    }
    return gather_pipeline_canonical(
        pp_, plan_,
        gather_canonical(plan_, coll_, mp_, shape_.model, std::vector<bool>(units(), plan_.reduce_scatters_grad),
                         [&](std::size_t u, std::size_t k) { return unscale_element(held[u][k], inv_scale); }));
  }
  std::vector<float> master_values() {
    std::vector<std::vector<float>> held(units());  // what this rank holds of each unit's master, wherever it is
    for (std::size_t u : plan_.units_here)
      if constexpr (kFp32)  // the compute copy is the master: S_p's extent
        params_->with_params(
            u, [&](const float* p) { return held[u].assign(p, p + lay_.extent(u, plan_.params_sharded(u))), false; });
      else
        states_->with_owned_state(
            u, [&](const offload::StateView& s) { return held[u].assign(s.master, s.master + s.extent), false; });
    const std::vector<bool> sharded =
        kFp32 ? plan_.params_layout.sharded : std::vector<bool>(units(), plan_.spec.optimizer);
    return gather_pipeline_canonical(pp_, plan_,
                                     gather_canonical(plan_, coll_, mp_, shape_.model, sharded,
                                                      [&](std::size_t u, std::size_t k) { return held[u][k]; }));
  }

  // ---- checkpoints (chapter 14): this rank's states in canonical pieces (zero/engine_checkpoint.h) --
  void save_if_due(int64_t step) {
    if (c_.save_dir.empty() || !((c_.save_every > 0 && step % c_.save_every == 0) || step == c_.steps)) return;
    save_rank_checkpoint(coll_, mp_, pp_, world_rank_, c_, plan_, data_.describe(),
                         {step, optimizer_step_, scaler_.scale(), scaler_.good_steps()},
                         [this](std::size_t u, auto fn) { states_->with_owned_state(u, fn); });
  }
  void load_checkpoint() {  // --resume: every state this rank keeps, resharded by the reader
    const RunScalars s = load_rank_checkpoint<T>(
        coll_, mp_, pp_, c_, plan_, data_.describe(), [this](std::size_t u, auto fn) { params_->with_params(u, fn); },
        [this](std::size_t u, auto fn) { states_->with_owned_state(u, fn); });
    scaler_.restore(s.loss_scale, s.good_steps);
    optimizer_step_ = s.optimizer_step;
    first_step_ = s.step + 1;
  }

  // ---- held-out evaluation: the reference's rounds split over ranks (zero/heldout_eval.h) ---
  std::optional<EvalRecord> evaluate(int64_t step) {
    return evaluator_->evaluate(step, gpt_, workspace_, batch_.data());
  }

  // ---- memory -------------------------------------------------------------------------------
  RankMemory memory_report() const {  // measured only: predict/ adds the predictions beside it
    RankMemory m = rank_memory(arena_, world_rank_, host_arena_ ? host_arena_.get() : host_side_.get(),
                               staged_.pinned_by_category());
    m.dp_rank = static_cast<int>(rank());
    m.mp_rank = static_cast<int>(plan_.mp.rank);
    return m;
  }

  const RunOptions& c_;
  const Dataset& data_;
  Placement<T> place_;   // host or device: the arena's slab and the ops (step_device/placement.h)
  StagedGroups staged_;  // on a device: the groups staged through pinned memory (collective/staged_groups.h)
  Collective& coll_;     // the data-parallel group ZeRO shards over (hybrid sharding: its shard group view)
  HybridGroup* hsdp_;    // hybrid sharding: coll_'s two levels and the whole group (null: coll_ is it)
  Collective* mp_;       // the model-parallel group (null: N_m = 1)
  Collective* pp_;       // the pipeline group (null: N_p = 1)
  int world_rank_;       // dp_rank · N_m + mp_rank
  RunArtifacts* artifacts_;
  ZeroPlan plan_;
  const Layout& lay_;
  const SingleRankShape& shape_;
  model::Gpt<T> gpt_;
  Arena arena_;
  std::unique_ptr<offload::TransferThread> copies_;  // transfers between the tiers (P_a+cpu, ZeRO-Offload)
  std::unique_ptr<Arena> host_arena_;                // the host tier (on a device, the host side's too)

  std::unique_ptr<Arena> host_side_;     // on a device: the pinned host side (batch, predictions)
  std::optional<ParamStore<T>> params_;  // compute copy θ16 (fp32: the master), extent S_p
  ArenaAllocation activations_, checkpoints_, scratch_;
  model::Workspace workspace_;
  TypedBuffer<int32_t> batch_;
  TypedBuffer<float> norm_;
  std::optional<StepInterpreter<T>> step_;          // the step's program, run: the model's provider, S_g's buffers
  std::vector<uint32_t> executed_;                  // --step-trace: this step's operations, as run
  std::string step_trace_;                          // --step-trace: every step's
  std::unique_ptr<HeldoutEvaluator<T>> evaluator_;  // held-out rounds split over ranks
  std::unique_ptr<PipelineStage<T>> pipe_;          // a pipeline stage's memory and passes (N_p > 1)
  // ZeRO-R P_a / P_a+cpu, ZeRO-Offload (declared last: the keeper and the state store go first,
  // while the arenas and the transfer thread they use exist)
  std::unique_ptr<zero_r::PartitionedCheckpoints<T>> keeper_;
  std::unique_ptr<offload::StateStore<T>> states_;  // S_o: master, moments and their update
  Timeline timeline_{!c_.trace.empty()};            // --trace: compute and blocked spans
  Timeline* tl() { return timeline_.enabled() ? &timeline_ : nullptr; }
  LossScaler scaler_ = LossScaler::none();
  int64_t optimizer_step_ = 0;
  int64_t first_step_ = 1;  // after --resume: the checkpoint's step + 1
};

}  // namespace

ZeroRunResult train_zero(const train::RunOptions& config, const Dataset& data, RankGroups groups,
                         const std::vector<zero_r::ReplayRegion>& md_regions, const train::StepCallback& on_step,
                         train::RunArtifacts* artifacts) {
  train::validate(config);
  check_job_config(config, groups.dp, groups.mp, groups.pp);  // zero/config_check.h
  if (config.precision == model::Precision::fp16)
    return ZeroLoop<fp16>(config, data, groups, md_regions, artifacts).run(on_step);
  if (config.precision == model::Precision::bf16)
    return ZeroLoop<bf16>(config, data, groups, md_regions, artifacts).run(on_step);
  return ZeroLoop<float>(config, data, groups, md_regions, artifacts).run(on_step);
}

}  // namespace zt::zero
