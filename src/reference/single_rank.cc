// reference/single_rank.cc — the reference loop (see single_rank.h), written once for every compute
// type T and specialised by `if constexpr` only where FP32 compute has no separate master.
//
// It is the oracle every ZeRO configuration is compared with, bit for bit, so it stays independent
// of the engine (zero/train_zero.cc runs the step as a program): it shares only the protocol's
// pieces (step_start.h, step_decision.h, owned_slice.h, run_loop.h) and includes nothing that
// communicates (tests/docs/check_structure.py).
#include "reference/single_rank.h"

#include <memory>
#include <span>
#include <type_traits>

#include "core/check.h"
#include "data/dataset.h"
#include "kernels/blas.h"
#include "memory/arena.h"
#include "memory/buffer.h"
#include "memory/model_states.h"
#include "model/gpt.h"
#include "optim/grad_accumulator.h"
#include "optim/loss_scaler.h"
#include "reduce/canonical_tree.h"
#include "step/element_optimizer.h"
#include "step/init_units.h"
#include "step/owned_slice.h"
#include "step_device/placement.h"
#include "train/copy_plan.h"
#include "train/heldout.h"
#include "train/memory_plan.h"
#include "train/rank_memory.h"
#include "train/run_loop.h"
#include "train/stall_diagnostic.h"
#include "train/step_decision.h"
#include "train/step_start.h"

namespace zt::reference {
namespace {

using namespace zt::train;

using namespace zt::step;

template <typename T>
class SingleRankLoop {
  static constexpr bool kFp32 = std::is_same_v<T, float>;

 public:
  SingleRankLoop(const RunOptions& c, const Dataset& data, RunArtifacts* artifacts)
      : c_(c),
        data_(data),
        place_(c.device),
        artifacts_(artifacts),
        shape_(single_rank_shape(c, c.vocab ? c.vocab : data.vocab_size())),
        gpt_(shape_.model, c.micro_batch, model_options(shape_)),
        arena_(place_.slab(static_cast<std::size_t>(c.memory_budget_mb * 1024.0 * 1024.0), "arena"), kBudgetArenaName) {
    ZT_CHECK(shape_.model.vocab >= data.vocab_size(), "--vocab ", shape_.model.vocab,
             " is smaller than the dataset's alphabet of ", data.vocab_size(), " tokens");
    ZT_CHECK(data.context() == shape_.context, "dataset context ", data.context(), " differs from --context ",
             c.context);
    kernels::set_blas_threads(static_cast<int>(c.blas_threads));
    kernels::set_gemm_backend(c.gemm);
    gpt_.set_ops(place_.model_ops());
    allocate();
    initialise();
  }

  RunResult run(const StepCallback& on_step) {
    RunResult result;
    result.param_count = static_cast<int64_t>(shape_.psi);
    result.dataset = data_.describe();
    scaler_ = loss_scaler_for(c_);
    device::CopyStats last, training;  // host<->device copies: the last step's, every training step's
    auto step = [&](int64_t s) {
      stall_->before_step(s, params_.data());
      const device::CopyStats before = place_.copies();
      StepRecord rec = train_step(s);
      last = place_.copies() - before;
      training = training + last;
      return rec;
    };
    run_steps(c_, {step, [&](int64_t s) { return evaluate(s); }, {}}, on_step, result);  // no checkpoints: the engine's
    result.device_copies_per_step = last, result.device_copies_total = training;
    result.device_copies_predicted_per_step = predict_single_rank_copies_per_step(shape_);  // train/copy_plan.h
    stall_->report(params_.data(), result);
    if (artifacts_ && !c_.dump_params.empty()) artifacts_->final_params = master_values();
    result.memory.push_back(memory_report());
    return result;
  }

 private:
  std::size_t units() const { return gpt_.manifest().units.size(); }
  std::size_t numel(std::size_t u) const { return static_cast<std::size_t>(gpt_.manifest().units[u].numel); }
  std::size_t dense_offset(std::size_t u) const { return static_cast<std::size_t>(gpt_.manifest().units[u].offset); }

  // ---- set-up -------------------------------------------------------------------------------
  void allocate() {
    const std::size_t psi = shape_.psi;
    params_ = make_buffer<T>(arena_, psi, category::params);
    if constexpr (!kFp32)
      if (!c_.no_master_weights) master_ = make_buffer<float>(arena_, psi, category::master);
    const std::size_t state_floats = psi * static_cast<std::size_t>(shape_.optimizer_k - 4) / 4;
    optimizer_state_ = make_buffer<float>(arena_, state_floats, category::optimizer);
    ops().zero(optimizer_state_.data(), state_floats * sizeof(float));
    if (shape_.grad_width == sizeof(T)) {
      grads_model_ = make_buffer<T>(arena_, psi, category::grads);
    } else {  // 16-bit compute, FP32 gradient storage: the model writes 16 bits, we widen
      grads_model_ = make_buffer<T>(arena_, psi, category::grad_staging);
      grads_fp32_ = make_buffer<float>(arena_, psi, category::grads);
    }
    const auto B = c_.micro_batch;
    const model::ModelOptions o = model_options(shape_);
    activations_ =
        arena_.allocate(model::activation_bytes(shape_.model, B, shape_.precision, o), category::activations);
    if (o.checkpoint_activations)
      checkpoints_ = arena_.allocate(model::checkpoint_bytes(shape_.model, B, shape_.precision, o),
                                     category::activation_checkpoints);
    scratch_ = arena_.allocate(model::scratch_bytes(shape_.model, B, shape_.precision, o), category::scratch);
    workspace_ = {activations_.data(), activations_.bytes(), scratch_.data(),
                  scratch_.bytes(),    checkpoints_.data(),  checkpoints_.bytes()};
    if (place_.on_device())  // what the loop fills and reads itself stays on the host (pinned)
      host_side_ =
          std::make_unique<Arena>(place_.host_slab(host_side_bytes(shape_), "rank 0 host side"), "host side of rank 0");
    Arena& host_side = place_.on_device() ? *host_side_ : arena_;
    batch_ = make_buffer<int32_t>(host_side, shape_.micro_batch * (shape_.context + 1), category::batch);
    norm_ = make_buffer<float>(arena_, shape_.norm_blocks + shape_.norm_block, category::norm_blocks);
    predictions_ = make_buffer<int32_t>(host_side, shape_.micro_batch * shape_.context, category::eval);
    stall_.emplace(arena_, ops(), shape_.psi, c_.steps);
  }

  /// Every unit from the counter-based initialiser (step/init_units.h), one unit at a time on the
  /// host, then uploaded, so no full-size host copy exists.
  void initialise() {
    std::vector<float> window(shape_.norm_block), m;
    std::vector<T> p;
    for (std::size_t u = 0; u < units(); ++u) {
      p.resize(numel(u));
      m.resize(master_.size() ? numel(u) : 0);
      init_unit_range(shape_.model, gpt_.manifest(), c_.seed, u, 0, numel(u), window.data(), shape_.norm_block,
                      [&](std::size_t k, float v) {
                        p[k] = T(v);
                        if (!m.empty()) m[k] = v;
                      });
      ops().upload(params_.data() + dense_offset(u), p.data(), numel(u) * sizeof(T));
      if (!m.empty()) ops().upload(master_.data() + dense_offset(u), m.data(), numel(u) * sizeof(float));
    }
  }

  // ---- one optimizer step -------------------------------------------------------------------
  StepRecord train_step(int64_t step) {
    auto [rec, lr, tokens, grad_scale] = start_step(c_, step, scaler_.scale());  // train/step_start.h
    const std::size_t A = shape_.micro_batches;
    model::DenseParamProvider<T> provider(gpt_.manifest(), params_.data(), grads_model_.data());
    CanonicalGradAccumulator<TypedBuffer<float>> accumulator(
        shape_.psi,
        [this, &accumulator](std::size_t n) {
          // the step's gradient storage is grads_fp32_ (or grads_model_): these are partial sums only
          return make_buffer<float>(arena_, n,
                                    accumulator_category(accumulator.live_partials(), /*holds_storage=*/false));
        },
        [this](float* left, const float* right, std::size_t n) { ops().add(left, right, n); });
    std::vector<float> loss_sums(A);
    for (std::size_t j = 0; j < A; ++j) {
      sample_micro_batch(step, j);
      if (artifacts_ && step == 1 && !c_.dump_batch.empty())
        artifacts_->step1_batch.insert(artifacts_->step1_batch.end(), batch_.data(), batch_.data() + batch_.size());
      const auto in = model::batch_inputs(batch_.data(), c_.micro_batch, c_.context);
      const auto tg = model::batch_targets(batch_.data(), c_.micro_batch, c_.context);
      loss_sums[j] = gpt_.forward(provider, in, tg, workspace_);
      gpt_.backward(provider, in, tg, grad_scale, workspace_);
      if constexpr (!kFp32)
        rec.grad16_zeros = (j ? rec.grad16_zeros : 0) + ops().count_zeros(grads_model_.data(), shape_.psi);
      if (grads_fp32_.size())  // cast to the FP32 gradient storage (protocol step 3)
        ops().widen(grads_fp32_.data(), grads_model_.data(), shape_.psi);
      if (A > 1) accumulator.push_with([&](float* leaf) { widen_model_grads(leaf); });
    }
    // the loss: canonical tree over the micro-batch sums, divided once by the token count
    rec.loss = canonical_sum(loss_sums) / tokens;
    TypedBuffer<float> sum;  // the step's gradient: the accumulator's tree, or the one micro-batch's
    if (A > 1) sum = accumulator.finish();
    step_grad_ = A > 1                ? GradSpan<T>{sum.data(), nullptr}
                 : grads_fp32_.size() ? GradSpan<T>{grads_fp32_.data(), nullptr}
                                      : GradSpan<T>{nullptr, grads_model_.data()};  // s_g = sizeof(T)
    finish_step(step, lr, rec);
    return rec;
  }

  /// Global micro-batch j of the step into batch_: sequences [jB, (j+1)B) of the global batch.
  void sample_micro_batch(int64_t step, std::size_t j) {
    fill_batch(data_, static_cast<uint64_t>(c_.seed), static_cast<uint64_t>(step), j * shape_.micro_batch,
               shape_.micro_batch, batch_.data());
  }

  /// The model's gradient of the micro-batch just done, as FP32 (a leaf of the accumulator).
  void widen_model_grads(float* leaf) {
    if (grads_fp32_.size())
      ops().copy(leaf, grads_fp32_.data(), shape_.psi * sizeof(float));
    else
      ops().widen(leaf, grads_model_.data(), shape_.psi);
  }

  /// Protocol steps 4-6 on the step's summed, still scaled gradient.
  void finish_step(int64_t step, double lr, StepRecord& rec) {
    bool nonfinite = false;
    for (std::size_t u = 0; u < units(); ++u) nonfinite |= steps().any_nonfinite(summed_grad(u), numel(u));
    const float inv_scale = 1.0f / rec.loss_scale;  // S is a power of two: exact
    std::vector<float> norm_sums;                   // of fixed blocks that start at each unit's first element
    for (std::size_t u = 0; u < units(); ++u)
      steps().append_norm_block_sums(summed_grad(u), numel(u), shape_.norm_block, inv_scale, norm_sums);
    const StepDecision decision = decide_step(c_, scaler_, nonfinite, norm_sums, rec);  // train/step_decision.h
    if (artifacts_ && step == 1 && !c_.dump_grads.empty()) artifacts_->step1_grad = unscaled_grads(inv_scale);
    if (!decision.apply) return;
    const ElementOptimizer opt =
        element_optimizer(optimizer_settings(c_), lr, ++optimizer_step_, optimizer_state_.data(), shape_.psi);
    std::size_t unchanged = 0;
    for (std::size_t u = 0; u < units(); ++u)
      unchanged += steps().apply_update(owned(u), inv_scale, decision.clip, opt);
    stall_->after_update(step, unchanged);
  }

  // ---- where each unit's state lives --------------------------------------------------------
  /// The step's summed gradient of unit u (still scaled).
  GradSpan<T> summed_grad(std::size_t u) const { return step_grad_.after(dense_offset(u)); }
  /// The elements of unit u the optimizer updates: all of them, on one rank.
  OwnedSlice<T> owned(std::size_t u) {
    const std::size_t at = dense_offset(u);
    return {params_.data() + at, master_.size() ? master_.data() + at : nullptr, at, summed_grad(u), numel(u)};
  }
  LoopOps<T>& ops() { return place_.loop_ops(); }    // the loop's own tensor work, where they live
  StepOps<T>& steps() { return place_.step_ops(); }  // protocol steps 4-6, where they live

  // dumps are in canonical order (model/manifest.h); with mp_blocks > 1 the storage differs
  std::vector<float> unscaled_grads(float inv_scale) {
    std::vector<float> g32(step_grad_.fp32 ? shape_.psi : 0), g(shape_.psi);
    std::vector<T> g16(step_grad_.fp32 ? 0 : shape_.psi);  // read back from where the gradient is
    if (step_grad_.fp32)
      ops().download(g32.data(), step_grad_.fp32, shape_.psi * sizeof(float));
    else
      ops().download(g16.data(), step_grad_.compute, shape_.psi * sizeof(T));
    const GradSpan<T> held = step_grad_.fp32 ? GradSpan<T>{g32.data(), nullptr} : GradSpan<T>{nullptr, g16.data()};
    for (std::size_t i = 0; i < shape_.psi; ++i) g[i] = unscale_element(held[i], inv_scale);
    return canonical(g);
  }
  std::vector<float> master_values() {
    std::vector<float> out(shape_.psi);
    if (master_.size()) {
      ops().download(out.data(), master_.data(), shape_.psi * sizeof(float));
    } else {  // FP32 compute (the compute copy is the master) or --no-master-weights
      std::vector<T> p(shape_.psi);
      ops().download(p.data(), params_.data(), shape_.psi * sizeof(T));
      for (std::size_t i = 0; i < shape_.psi; ++i) out[i] = static_cast<float>(p[i]);
    }
    return canonical(out);
  }
  std::vector<float> canonical(const std::vector<float>& stored) const {
    std::vector<float> out(stored.size());
    model::to_canonical(gpt_.manifest(), stored.data(), out.data());
    return out;
  }

  // ---- held-out evaluation ------------------------------------------------------------------
  std::optional<EvalRecord> evaluate(int64_t step) {
    const HeldoutSet* split = data_.heldout();
    if (!split) return std::nullopt;  // byte-level text files have no held-out split
    model::DenseParamProvider<T> provider(gpt_.manifest(), params_.data(), grads_model_.data());
    const int64_t rounds = heldout_rounds(c_.micro_batch);
    std::vector<float> loss_sums;
    ExactMatch total;
    for (int64_t r = 0; r < rounds; ++r) {  // train/heldout.h: the rounds the ZeRO engine splits
      const HeldoutRound h = heldout_round(*split, c_.seed, r, c_.micro_batch, gpt_, provider, workspace_,
                                           batch_.data(), predictions_.data());
      loss_sums.push_back(h.loss_sum);
      total.correct += h.match.correct;
      total.total += h.match.total;
    }
    return heldout_record(step, loss_sums, total, c_.micro_batch, c_.context);
  }

  // ---- memory -------------------------------------------------------------------------------
  RankMemory memory_report() const {
    // the paper's accounting from the sharding description: stage 0, one rank, dense units
    ShardingDescription desc{shard_spec_for_stage(0, 1), {}};
    for (const auto& u : gpt_.manifest().units)
      desc.units.push_back(unit_elements(u.name, static_cast<std::size_t>(u.numel), 1, 1));
    StateWidths widths = state_widths(kFp32, shape_.grad_width, shape_.optimizer_k);
    if (c_.no_master_weights) widths.master = 0;
    RankMemory m = rank_memory(arena_, 0, host_side_.get());
    add_memory_predictions(m, predict_single_rank(shape_), model_states_bytes(desc, widths, 0),
                           ledger_high_water(predicted_single_rank_trace(shape_)));
    if (host_side_) m.host_by_category_predicted = predict_single_rank_host_side(shape_);
    return m;
  }

  const RunOptions& c_;
  const Dataset& data_;
  Placement<T> place_;  // host or device: the arena's slab and the ops (step_device/placement.h)
  RunArtifacts* artifacts_;
  SingleRankShape shape_;
  model::Gpt<T> gpt_;
  Arena arena_;                         // on a device: device memory
  std::unique_ptr<Arena> host_side_;    // on a device: the pinned host side (batch, predictions)
  TypedBuffer<T> params_;               // compute copy θ16 (fp32: the master)
  TypedBuffer<float> master_;           // FP32 master θ32
  TypedBuffer<float> optimizer_state_;  // m then v (or momentum)
  TypedBuffer<T> grads_model_;          // the model's gradient output g16
  TypedBuffer<float> grads_fp32_;       // its FP32 widening (s_g = 4)
  GradSpan<T> step_grad_;               // the step's summed gradient (one of the above, or the tree's)
  ArenaAllocation activations_, checkpoints_, scratch_;
  model::Workspace workspace_;
  TypedBuffer<int32_t> batch_;
  TypedBuffer<float> norm_;
  TypedBuffer<int32_t> predictions_;
  std::optional<StallDiagnostic<T>> stall_;  // chapter 2's stall metric (16-bit compute only)
  LossScaler scaler_ = LossScaler::none();
  int64_t optimizer_step_ = 0;
};

}  // namespace

RunResult train_single_rank(const RunOptions& config, const Dataset& data, const StepCallback& on_step,
                            RunArtifacts* artifacts) {
  train::validate(config);
  if (config.precision == model::Precision::fp16) return SingleRankLoop<fp16>(config, data, artifacts).run(on_step);
  if (config.precision == model::Precision::bf16) return SingleRankLoop<bf16>(config, data, artifacts).run(on_step);
  return SingleRankLoop<float>(config, data, artifacts).run(on_step);
}

}  // namespace zt::reference
