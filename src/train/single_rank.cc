// train/single_rank.cc — the reference loop (see single_rank.h), written once for every compute
// type T and specialised by `if constexpr` only where FP32 compute has no separate master.
#include "train/single_rank.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <span>
#include <type_traits>

#include "core/check.h"
#include "data/addition.h"
#include "kernels/blas.h"
#include "memory/arena.h"
#include "memory/buffer.h"
#include "memory/model_states.h"
#include "model/gpt.h"
#include "model/init.h"
#include "optim/adam.h"
#include "optim/grad_accumulator.h"
#include "optim/grad_norm.h"
#include "optim/loss_scaler.h"
#include "optim/sgd.h"
#include "reduce/canonical_tree.h"
#include "train/element_optimizer.h"
#include "train/heldout.h"
#include "train/memory_plan.h"
#include "train/step_start.h"

namespace zt::train {
namespace {

template <typename T>
class SingleRankLoop {
  static constexpr bool kFp32 = std::is_same_v<T, float>;

 public:
  SingleRankLoop(const TrainConfig& c, const Dataset& data, RunArtifacts* artifacts)
      : c_(c),
        data_(data),
        artifacts_(artifacts),
        shape_(single_rank_shape(c, c.vocab ? c.vocab : data.vocab_size())),
        gpt_(shape_.model, c.micro_batch),
        arena_(static_cast<std::size_t>(c.memory_budget_mb * 1024.0 * 1024.0), "rank 0") {
    ZT_CHECK(shape_.model.vocab >= data.vocab_size(), "--vocab ", shape_.model.vocab,
             " is smaller than the dataset's alphabet of ", data.vocab_size(), " tokens");
    ZT_CHECK(static_cast<int64_t>(data.context()) == c.context, "dataset context ",
             data.context(), " differs from --context ", c.context);
    kernels::set_blas_threads(static_cast<int>(c.blas_threads));
    allocate();
    initialise();
  }

  RunResult run(const StepCallback& on_step) {
    RunResult result;
    result.param_count = static_cast<int64_t>(shape_.psi);
    result.dataset = data_.describe();
    scaler_ = loss_scaler_for(c_);
    double seconds = 0;
    const int64_t window = std::min(kFrozenWindowSteps, c_.steps);
    for (int64_t step = 1; step <= c_.steps; ++step) {
      if constexpr (!kFp32)
        if (step == c_.steps - window + 1)
          for (std::size_t i = 0; i < shape_.psi; ++i) snapshot_[i] = params_[i].bits;
      const auto t0 = std::chrono::steady_clock::now();
      result.steps.push_back(train_step(step));
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if ((c_.eval_every > 0 && step % c_.eval_every == 0) || step == c_.steps)
        if (auto e = evaluate(step)) result.evals.push_back(*e);
      result.seconds = seconds;
      result.tokens_per_s = seconds > 0 ? static_cast<double>(step * c_.global_batch * c_.context) / seconds : 0;
      if (on_step) on_step(result.steps.back(), result);
    }
    if (c_.steps == 0)
      if (auto e = evaluate(0)) result.evals.push_back(*e);
    if constexpr (!kFp32) {
      if (c_.steps > 0) {
        result.frozen_fraction = frozen_fraction_;
        std::size_t unchanged = 0;
        for (std::size_t i = 0; i < shape_.psi; ++i) unchanged += snapshot_[i] == params_[i].bits;
        result.frozen_window_fraction = static_cast<double>(unchanged) / static_cast<double>(shape_.psi);
        result.frozen_window_steps = window;
      }
    }
    if (artifacts_ && !c_.dump_params.empty()) {
      artifacts_->final_params.resize(shape_.psi);
      for (std::size_t i = 0; i < shape_.psi; ++i) artifacts_->final_params[i] = master_value(i);
    }
    result.memory.push_back(memory_report());
    return result;
  }

 private:
  // ---- set-up -------------------------------------------------------------------------------
  void allocate() {
    const std::size_t psi = shape_.psi;
    params_ = make_buffer<T>(arena_, psi, category::params);
    if constexpr (!kFp32)
      if (!c_.no_master_weights) master_ = make_buffer<float>(arena_, psi, category::master);
    const std::size_t state_floats = psi * static_cast<std::size_t>(shape_.optimizer_k - 4) / 4;
    optimizer_state_ = make_buffer<float>(arena_, state_floats, category::optimizer);
    std::memset(optimizer_state_.data(), 0, state_floats * sizeof(float));
    if (shape_.grad_width == sizeof(T)) {
      grads_model_ = make_buffer<T>(arena_, psi, category::grads);
    } else {  // 16-bit compute, FP32 gradient storage: the model writes 16 bits, we widen
      grads_model_ = make_buffer<T>(arena_, psi, category::grad_staging);
      grads_fp32_ = make_buffer<float>(arena_, psi, category::grads);
    }
    const auto B = c_.micro_batch;
    activations_ = arena_.allocate(model::activation_bytes(shape_.model, B, shape_.precision), category::activations);
    scratch_ = arena_.allocate(model::scratch_bytes(shape_.model, B, shape_.precision), category::scratch);
    workspace_ = {activations_.data(), activations_.bytes(), scratch_.data(), scratch_.bytes()};
    batch_ = make_buffer<int32_t>(arena_, static_cast<std::size_t>(B * (c_.context + 1)), category::batch);
    norm_ = make_buffer<float>(arena_, shape_.norm_blocks + shape_.norm_block, category::norm_blocks);
    predictions_ = make_buffer<int32_t>(arena_, static_cast<std::size_t>(B * c_.context), category::eval);
    if constexpr (!kFp32) snapshot_ = make_buffer<uint16_t>(arena_, shape_.psi, category::diagnostics);
  }

  /// Parameters from the counter-based initialiser, one parameter at a time through a b-float
  /// window (the norm temporary), so no full-size FP32 copy exists when there is no master.
  void initialise() {
    const auto& manifest = gpt_.manifest();
    float* window = norm_.data() + shape_.norm_blocks;
    const int64_t b = static_cast<int64_t>(shape_.norm_block);
    for (std::size_t p = 0; p < manifest.params.size(); ++p) {
      const auto& info = manifest.params[p];
      for (int64_t first = 0; first < info.numel; first += b) {
        const int64_t n = std::min(b, info.numel - first);
        model::init_param_slice(shape_.model, static_cast<uint64_t>(c_.seed), static_cast<int64_t>(p), first, n, window);
        for (int64_t k = 0; k < n; ++k) {
          const std::size_t i = static_cast<std::size_t>(info.offset + first + k);
          if constexpr (kFp32) {
            params_[i] = window[k];
          } else {
            if (master_.size()) master_[i] = window[k];
            params_[i] = T(window[k]);
          }
        }
      }
    }
  }

  // ---- one optimizer step -------------------------------------------------------------------
  StepRecord train_step(int64_t step) {
    auto [rec, lr, tokens, grad_scale] = start_step(c_, step, scaler_.scale());  // train/step_start.h
    const std::size_t A = shape_.micro_batches;
    model::DenseParamProvider<T> provider(gpt_.manifest(), params_.data(), grads_model_.data());
    CanonicalGradAccumulator<TypedBuffer<float>> accumulator(
        shape_.psi, [this](std::size_t n) { return make_buffer<float>(arena_, n, category::accum_partials); });
    std::vector<float> loss_sums(A);
    const int64_t row = c_.context + 1;
    for (std::size_t j = 0; j < A; ++j) {
      for (int64_t i = 0; i < c_.micro_batch; ++i)
        data_.sample(static_cast<uint64_t>(c_.seed), static_cast<uint64_t>(step),
                     static_cast<uint64_t>(static_cast<int64_t>(j) * c_.micro_batch + i), batch_.data() + i * row);
      if (artifacts_ && step == 1 && !c_.dump_batch.empty())
        artifacts_->step1_batch.insert(artifacts_->step1_batch.end(), batch_.data(), batch_.data() + c_.micro_batch * row);
      const auto in = model::batch_inputs(batch_.data(), c_.micro_batch, c_.context);
      const auto tg = model::batch_targets(batch_.data(), c_.micro_batch, c_.context);
      loss_sums[j] = gpt_.forward(provider, in, tg, workspace_);
      gpt_.backward(provider, in, tg, grad_scale, workspace_);
      if (grads_fp32_.size())  // cast to the FP32 gradient storage (protocol step 3)
        for (std::size_t i = 0; i < shape_.psi; ++i) grads_fp32_[i] = static_cast<float>(grads_model_[i]);
      if (A > 1) {
        accumulator.push_with([&](float* leaf) {
          if (grads_fp32_.size())
            std::memcpy(leaf, grads_fp32_.data(), shape_.psi * sizeof(float));
          else
            for (std::size_t i = 0; i < shape_.psi; ++i) leaf[i] = static_cast<float>(grads_model_[i]);
        });
      }
    }
    // the loss: canonical tree over the micro-batch sums, divided once by the token count
    rec.loss = canonical_sum(loss_sums) / tokens;
    if (A > 1) {
      TypedBuffer<float> total = accumulator.finish();
      finish_step(total.data(), step, lr, rec);
    } else if (grads_fp32_.size()) {
      finish_step(grads_fp32_.data(), step, lr, rec);
    } else {
      finish_step(grads_model_.data(), step, lr, rec);
    }
    return rec;
  }

  /// Steps 4-6 on the step's summed, still scaled gradient g (FP32, or T when s_g = sizeof(T)).
  template <typename G>
  void finish_step(const G* g, int64_t step, double lr, StepRecord& rec) {
    const std::size_t psi = shape_.psi;
    bool nonfinite = false;
    for (std::size_t i = 0; i < psi; ++i) nonfinite |= !std::isfinite(static_cast<float>(g[i]));
    const bool apply = scaler_.update(nonfinite);
    ZT_CHECK(apply || scaler_.dynamic(), "step ", step, ": non-finite gradient with --precision ",
             c_.precision, " (no loss scaling to back off); lower --lr");
    const float inv_scale = 1.0f / rec.loss_scale;  // S is a power of two: exact
    auto unscaled = [&](std::size_t i) { return unscale_element(static_cast<float>(g[i]), inv_scale); };
    // global norm from fixed blocks that start at each unit's first element (optim/grad_norm.h)
    float* sums = norm_.data();
    float* window = sums + shape_.norm_blocks;
    std::size_t nblocks = 0;
    for (const auto& unit : gpt_.manifest().units) {
      for (int64_t first = 0; first < unit.numel; first += static_cast<int64_t>(shape_.norm_block)) {
        const std::size_t n = static_cast<std::size_t>(std::min<int64_t>(static_cast<int64_t>(shape_.norm_block), unit.numel - first));
        for (std::size_t k = 0; k < n; ++k) window[k] = unscaled(static_cast<std::size_t>(unit.offset + first) + k);
        sums[nblocks++] = block_sum_of_squares(window, n);
      }
    }
    const float norm = std::sqrt(combine_norm_blocks(std::span<const float>(sums, nblocks)));
    if (std::isfinite(norm)) rec.grad_norm = norm;
    if (artifacts_ && step == 1 && !c_.dump_grads.empty()) {
      artifacts_->step1_grad.resize(psi);
      for (std::size_t i = 0; i < psi; ++i) artifacts_->step1_grad[i] = unscaled(i);
    }
    rec.skipped = !apply;
    if (!apply) return;
    const ClipDecision clip = clip_decision(norm, static_cast<float>(c_.clip_grad_norm));
    rec.clipped = clip.clipped;
    ++optimizer_step_;
    const ElementOptimizer opt = element_optimizer(c_, lr, optimizer_step_, optimizer_state_.data(), shape_.psi);
    const bool last = step == c_.steps;
    std::size_t unchanged = 0;
    for (std::size_t i = 0; i < psi; ++i) {
      float gi = unscaled(i);
      if (clip.clipped) gi = clip_element(gi, clip.coefficient);
      if constexpr (kFp32) {
        opt.update(params_[i], gi, i);
      } else {
        const uint16_t before = params_[i].bits;
        if (master_.size()) {  // protocol steps 5 and 6: FP32 update, then refresh the copy
          opt.update(master_[i], gi, i);
          params_[i] = T(master_[i]);
        } else {  // --no-master-weights: the update is rounded straight back to 16 bits
          float p = static_cast<float>(params_[i]);
          opt.update(p, gi, i);
          params_[i] = T(p);
        }
        unchanged += params_[i].bits == before;
      }
    }
    if (last) frozen_fraction_ = static_cast<double>(unchanged) / static_cast<double>(psi);
  }

  float master_value(std::size_t i) const {
    if constexpr (kFp32) return params_[i];
    else return master_.size() ? master_[i] : static_cast<float>(params_[i]);
  }

  // ---- held-out evaluation ------------------------------------------------------------------
  std::optional<EvalRecord> evaluate(int64_t step) {
    const auto* addition = dynamic_cast<const AdditionDataset*>(&data_);
    if (!addition) return std::nullopt;  // byte-level text files have no held-out split
    model::DenseParamProvider<T> provider(gpt_.manifest(), params_.data(), grads_model_.data());
    const int64_t rounds = heldout_rounds(c_.micro_batch);
    std::vector<float> loss_sums;
    ExactMatch total;
    for (int64_t r = 0; r < rounds; ++r) {  // train/heldout.h: the rounds the ZeRO engine splits
      const HeldoutRound h = heldout_round(*addition, c_.seed, r, c_.micro_batch, gpt_, provider, workspace_,
                                          batch_.data(), predictions_.data());
      loss_sums.push_back(h.loss_sum);
      total.correct += h.match.correct;
      total.total += h.match.total;
    }
    return heldout_record(step, loss_sums, total, c_.micro_batch, c_.context);
  }

  // ---- memory -------------------------------------------------------------------------------
  RankMemory memory_report() const {
    RankMemory m;
    m.rank = 0;
    for (const auto& [name, usage] : arena_.ledger().categories()) m.by_category[name] = usage.peak_bytes;
    m.by_category_predicted = predict_single_rank(shape_);
    for (const char* const* name = model_state_categories(); *name; ++name) {
      if (auto it = m.by_category.find(*name); it != m.by_category.end()) m.model_states_bytes += it->second;
    }
    // the paper's accounting from the sharding description: stage 0, one rank, dense units
    ShardingDescription desc{shard_spec_for_stage(0, 1), {}};
    for (const auto& u : gpt_.manifest().units)
      desc.units.push_back(unit_elements(u.name, static_cast<std::size_t>(u.numel), 1, 1));
    StateWidths widths = state_widths(kFp32, shape_.grad_width, shape_.optimizer_k);
    if (c_.no_master_weights) widths.master = 0;
    const ModelStateBytes predicted = model_states_bytes(desc, widths, 0);
    m.model_states_bytes_predicted = predicted.total;
    m.padding_bytes = predicted.padding;
    m.peak_bytes = arena_.ledger().total().peak_bytes;
    for (const auto& [name, bytes] : m.by_category_predicted) m.peak_bytes_predicted += bytes;
    m.arena_capacity = arena_.capacity();
    return m;
  }

  const TrainConfig& c_;
  const Dataset& data_;
  RunArtifacts* artifacts_;
  SingleRankShape shape_;
  model::Gpt<T> gpt_;
  Arena arena_;
  TypedBuffer<T> params_;
  TypedBuffer<float> master_;
  TypedBuffer<float> optimizer_state_;
  TypedBuffer<T> grads_model_;
  TypedBuffer<float> grads_fp32_;
  ArenaAllocation activations_, scratch_;
  model::Workspace workspace_;
  TypedBuffer<int32_t> batch_;
  TypedBuffer<float> norm_;
  TypedBuffer<int32_t> predictions_;
  TypedBuffer<uint16_t> snapshot_;  // 16-bit copy at the start of the stall window
  LossScaler scaler_ = LossScaler::none();
  int64_t optimizer_step_ = 0;
  double frozen_fraction_ = -1;
};

}  // namespace

LossScaler loss_scaler_for(const TrainConfig& c) {
  if (c.precision != "fp16") return LossScaler::none();
  return LossScaler(LossScalerConfig{.dynamic = true,
                                     .initial_scale = static_cast<float>(c.loss_scale_init),
                                     .growth_factor = static_cast<float>(c.loss_scale_growth_factor),
                                     .backoff_factor = static_cast<float>(c.loss_scale_backoff),
                                     .growth_interval = c.loss_scale_growth_interval});
}

RunResult train_single_rank(const TrainConfig& config, const Dataset& data,
                            const StepCallback& on_step, RunArtifacts* artifacts) {
  validate(config);
  if (config.precision == "fp16") return SingleRankLoop<fp16>(config, data, artifacts).run(on_step);
  if (config.precision == "bf16") return SingleRankLoop<bf16>(config, data, artifacts).run(on_step);
  return SingleRankLoop<float>(config, data, artifacts).run(on_step);
}

}  // namespace zt::train
