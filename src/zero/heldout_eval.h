// zero/heldout_eval.h — held-out evaluation on N data-parallel ranks, bitwise equal to the
// single-rank reference's (train/heldout.h) whenever the weights are.
//
// The reference runs R = ceil(64/B) rounds, round r a forward pass over held-out sequences
// r*B .. r*B+B-1. Here rank q runs rounds q, q+N, q+2N, ...: P = ceil(R/N) passes, the last one
// empty on the ranks q >= R - (P-1)N. Every rank then all-gathers P slots of (loss sum, correct,
// total) — one call — and adds the loss sums along the canonical tree in round order. A round's
// loss sum is the model's forward on the same B sequences and the same compute-type weights as
// the reference's round, so it is the same bits, and so is the tree over them and the one
// division: the loss is bitwise the reference's. The counts are integers (at most B*T per round,
// exact in FP32 below 2^24) added as integers, so accuracy and problems are exact too.
//
// Stage 3 keeps parameters only as shards and gathers every unit from all ranks inside the
// forward, so all ranks must issue the same all-gathers even when one has no round left. A rank
// with an empty pass walks the forward's gathers without computing (acquire, release): the
// collectives stay in lockstep and no dummy forward is run. The gathers follow only the forward
// part of the plan's acquire order (forward_acquire_order: the units one forward gathers; the
// training's order goes on into backward), so nothing is prefetched for a backward that never
// comes and nothing is in flight when a pass ends. These gathers are a program of their own
// (zero/step_program.h, eval_program), run by an interpreter of its own: the training step's is
// never touched. Stages 0-2 hold every parameter: the result gather is the only collective.
//
// With a pipeline every stage runs its part of each round's forward, the activations passed on by
// send/recv (wte's values first go to the last stage, as at a step's start), and the last stage's
// results are broadcast over the pipeline group before the data-parallel gather.
// The model's workspace and batch buffer are scratch between steps, so an evaluation leaves the
// training trajectory (weights, optimizer state, loss scale) unchanged bit for bit.
// It is not the training step and runs no backward.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "collective/collective.h"
#include "core/check.h"
#include "data/dataset.h"
#include "memory/arena.h"
#include "memory/buffer.h"
#include "model/gpt.h"
#include "pipeline/stage_runner.h"
#include "train/heldout.h"
#include "train/memory_plan.h"
#include "train/run_options.h"
#include "zero/model_state_stores.h"
#include "zero/step_interpreter.h"
#include "zero/step_program.h"
#include "zero/timeline.h"
#include "zero/zero_plan.h"

namespace zt::zero {

/// Rank q's rounds of a held-out evaluation split over N ranks: round j*N + q at pass j.
struct HeldoutSplit {
  std::size_t rounds = 0;  ///< R, the reference's rounds
  std::size_t world = 1;   ///< N
  /// Passes every rank makes. @return P = ceil(R/N).
  std::size_t passes() const { return (rounds + world - 1) / world; }
  /// The round rank q runs at pass j. @param q rank. @param j pass. @return j*N + q (>= R: none).
  std::size_t round(std::size_t q, std::size_t j) const { return j * world + q; }
};

/// Evaluates the model on the held-out split with this rank's share of the rounds.
template <typename T>
class HeldoutEvaluator final : public model::ParamProvider<T> {
 public:
  /// @param config the run's batch settings (seed, micro-batch; kept by reference).
  /// @param data the dataset (evaluation only for the addition task; kept by reference).
  /// @param plan the rank's plan (copied; stage 3 gathers follow its forward acquires).
  /// @param coll the group. @param arena where the predictions (category `eval`, B*T ids, as the
  /// reference) and gathered units live. @param params S_p's storage (full units, or this rank's
  /// shards in stage 3, in memory or in the parameter file tier). @param ops the loop's ops on
  /// the arena's memory. @param host_side where the predictions live (host memory: the arena
  /// itself on the host, the pinned host side on a device). @param runner a pipeline stage's
  /// runner (its group, and the last stage's copy of wte; null without a pipeline).
  HeldoutEvaluator(const train::BatchOptions& config, const Dataset& data, const ZeroPlan& plan, Collective& coll,
                   Arena& arena, ParamStore<T>& params, step::LoopOps<T>& ops, Arena& host_side,
                   pipeline::StageRunner<T>* runner = nullptr)
      : c_(config), heldout_(data.heldout()), plan_(plan), coll_(coll), params_(params), runner_(runner) {
    predictions_ = make_buffer<int32_t>(
        host_side, static_cast<std::size_t>(c_.micro_batch * static_cast<int64_t>(plan_.shape.context)),
        train::category::eval);
    // one forward acquires 0, 1..L, L+1, then 0 again for the tied head (model/param_provider.h);
    // a pipeline stage, the parts it runs
    plan_.acquire_order = forward_acquire_order(plan_);
    const std::size_t rounds = data.heldout() ? static_cast<std::size_t>(train::heldout_rounds(c_.micro_batch)) : 0;
    if (plan_.spec.params && rounds) {
      gathers_ =
          std::make_unique<StepInterpreter<T>>(plan_, eval_program(plan_, rounds), coll_, arena, params_, ops, quiet_);
      if (runner_) gathers_->set_tied_wte(runner_->tied_wte());
    }
  }
  HeldoutEvaluator(const HeldoutEvaluator&) = delete;  // its interpreter keeps a reference to plan_
  HeldoutEvaluator& operator=(const HeldoutEvaluator&) = delete;

  /// One evaluation after `step` steps. Every rank must call it at the same steps.
  /// @param step steps trained so far. @param gpt the model. @param ws its workspace (scratch).
  /// @param batch B*(T+1) ids of scratch. @return the record (the same on every rank), or none
  /// when the dataset has no held-out split (byte-level text; no collective is issued then).
  std::optional<train::EvalRecord> evaluate(int64_t step, model::Gpt<T>& gpt, const model::Workspace& ws,
                                            int32_t* batch) {
    if (!heldout_) return std::nullopt;
    const std::size_t N = plan_.layout.world_size, q = plan_.layout.rank;
    const HeldoutSplit split{static_cast<std::size_t>(train::heldout_rounds(c_.micro_batch)), N};
    const std::size_t P = split.passes();
    std::vector<float> mine(3 * P, 0.0f);  // per pass: loss sum, correct, total
    const train::RoundBoundary boundary = pipeline_boundary(gpt, ws);
    if (gathers_) gathers_->start();
    if (runner_) runner_->share_tied_wte(*this);  // the last stage's head reads wte's current values
    for (std::size_t j = 0; j < P; ++j) {
      const std::size_t r = split.round(q, j);
      if (gathers_) gathers_->begin_pass(true, static_cast<int>(j));
      if (r < split.rounds) {
        const train::HeldoutRound h = train::heldout_round(*heldout_, c_.seed, static_cast<int64_t>(r), c_.micro_batch,
                                                           gpt, *this, ws, batch, predictions_.data(), boundary);
        ZT_CHECK(h.match.total < (std::size_t{1} << 24), "held-out round ", r, ": ", h.match.total,
                 " problems do not travel exactly as FP32");
        mine[3 * j] = h.loss_sum;
        mine[3 * j + 1] = static_cast<float>(h.match.correct);
        mine[3 * j + 2] = static_cast<float>(h.match.total);
      } else if (gathers_) {  // no round left: take part in the forward's gathers all the same
        for (std::size_t u : plan_.acquire_order) acquire(static_cast<int>(u)), release(static_cast<int>(u));
      }
      if (gathers_) gathers_->end_pass();
    }
    if (gathers_) gathers_->finish();
    if (runner_)  // the results are the last stage's
      runner_->group().broadcast(std::span<float>(mine), runner_->group().size() - 1);
    std::vector<float> all(3 * P * N);
    if (N > 1)
      coll_.all_gather(std::span<const float>(mine), std::span<float>(all));
    else
      all = mine;
    std::vector<float> loss_sums(split.rounds);
    ExactMatch total;
    for (std::size_t from = 0; from < N; ++from)
      for (std::size_t j = 0; j < P; ++j) {
        const std::size_t r = split.round(from, j);
        if (r >= split.rounds) continue;
        const float* slot = all.data() + 3 * (from * P + j);
        loss_sums[r] = slot[0];
        total.correct += static_cast<std::size_t>(slot[1]);
        total.total += static_cast<std::size_t>(slot[2]);
      }
    return train::heldout_record(step, loss_sums, total, c_.micro_batch, static_cast<int64_t>(plan_.shape.context));
  }

  // ---- ParamProvider: the forward's parameters, gathered (stage 3) or in place ----
  /// @param unit the unit. @return its compute-type parameters.
  const T* acquire(int unit) override {
    if (gathers_) return gathers_->acquire(unit);                                 // the next of eval_program's events
    if (unit == 0 && runner_ && runner_->tied_wte()) return runner_->tied_wte();  // a last stage's copy
    return params_.resident() + plan_.layout.units[static_cast<std::size_t>(unit)].full_offset;
  }
  /// @param unit the unit.
  void release(int unit) override {
    if (gathers_) gathers_->release(unit);
  }
  /// A pipeline stage's transfers around its forward (none without a pipeline).
  /// @param gpt the stage's model. @param ws its workspace. @return the receive before and the
  /// send after the forward, as this stage needs them.
  train::RoundBoundary pipeline_boundary(model::Gpt<T>& gpt, const model::Workspace& ws) {
    train::RoundBoundary b;
    if (!runner_) return b;
    Collective& pp = runner_->group();
    const int s = pp.rank(), last = pp.size() - 1;
    const std::size_t n =
        static_cast<std::size_t>(c_.micro_batch * static_cast<int64_t>(plan_.shape.context) * gpt.config().width);
    if (s > 0) b.receive_input = [&gpt, &pp, ws, n, s] { pp.recv(std::span<T>(gpt.stage_input(ws), n), s - 1); };
    if (s < last)
      b.send_output = [&gpt, &pp, ws, n, s] { pp.send(std::span<const T>(gpt.stage_output(ws), n), s + 1); };
    return b;
  }

  /// Never called: evaluation runs no backward. @param unit the unit. @return nothing.
  T* grad(int unit) override {
    ZT_CHECK(false, "held-out evaluation asked for unit ", unit, "'s gradient (it runs no backward)");
    return nullptr;
  }
  /// Never called: evaluation runs no backward. @param unit the unit.
  void grad_done(int unit) override { (void)unit; }

 private:
  const train::BatchOptions& c_;  // the rounds: micro-batch, seed (the context is the plan's)
  const HeldoutSet* heldout_;     // null: no held-out split
  ZeroPlan plan_;                 // acquire_order cut to one forward
  Collective& coll_;
  ParamStore<T>& params_;
  TypedBuffer<int32_t> predictions_;
  pipeline::StageRunner<T>* runner_;             // a pipeline stage's (null: none)
  Timeline quiet_{false};                        // the evaluation's waits are not on --trace's timeline
  std::unique_ptr<StepInterpreter<T>> gathers_;  // stage 3: eval_program's gathers, run
};

}  // namespace zt::zero
