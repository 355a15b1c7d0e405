// zero/pipeline_stage.h — the ZeRO engine on one pipeline stage (--pp-size N_p > 1): the memory
// the stage needs beyond the engine's one workspace, and the step's passes in the schedule's order
// (pipeline/stage_runner.h), for zero/train_zero.cc.
//
// ZeRO runs unchanged inside the stage, on the stage's own data-parallel group (the ZeRO paper's
// "orthogonal to pipeline parallelism"): the plan (zero/zero_plan.h) lays out only the stage's
// units, the provider reduces each micro-batch's gradient as its backward ends, and since every
// stage runs its backwards in micro-batch order the sums follow the one-device tree. What the
// stage adds, and this file holds:
//   memory   a workspace and token ids per further micro-batch in flight (GPipe M, 1F1B
//            min(N_p - s, M); the engine's own workspace is the first), the input gradient it
//            sends (after the first stage), the last stage's copy of wte (the tied head);
//   passes   the runner's step, with the engine's sampling and reductions as its hooks;
//   loss     the step's loss exists on the last stage; the others receive it (one broadcast).
// The stages' agreement on the skip and the norm is zero/step_agreement.h's; the predictions of
// all of it are predict/'s (setup_allocations, predict_pp_comm_per_step).
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "memory/arena.h"
#include "memory/buffer.h"
#include "model/gpt.h"
#include "pipeline/stage_runner.h"
#include "step/categories.h"
#include "zero/timeline.h"
#include "zero/zero_plan.h"

namespace zt::zero {

/// One rank's pipeline stage inside the ZeRO engine.
template <typename T>
class PipelineStage {
 public:
  /// Allocate the stage's memory (in the engine's order: slots, then the boundary buffers) and
  /// make its runner. @param plan the rank's plan (pipelined). @param gpt the stage's model.
  /// @param pp the pipeline group. @param arena the engine's arena. @param host_side where token
  /// ids live. @param first the engine's own workspace memory, the first slot.
  /// @param scratch the engine's scratch, shared by the slots.
  PipelineStage(const ZeroPlan& plan, model::Gpt<T>& gpt, Collective& pp, Arena& arena, Arena& host_side,
                pipeline::PipeSlot first, void* scratch)
      : plan_(plan), pp_(pp) {
    const model::ModelOptions o = plan.model_options();
    const auto& s = plan.shape;
    pipeline::StageBuffers<T> buf;
    buf.slots.push_back(first);
    for (std::size_t k = 1; k < plan.pipe_slots; ++k) {
      Slot& slot = slots_.emplace_back();
      slot.activations =
          arena.allocate(model::activation_bytes(s.model, static_cast<int64_t>(s.micro_batch), s.precision, o),
                         step::category::activations);
      if (o.checkpoint_activations)
        slot.checkpoints =
            arena.allocate(model::checkpoint_bytes(s.model, static_cast<int64_t>(s.micro_batch), s.precision, o),
                           step::category::activation_checkpoints);
      slot.tokens = make_buffer<int32_t>(host_side, s.micro_batch * (s.context + 1), step::category::batch);
      buf.slots.push_back({slot.activations.data(), slot.checkpoints.data(), slot.tokens.data()});
    }
    if (plan.pp_rank > 0) {  // the gradient of its input, sent back
      grad_send_ = make_buffer<T>(arena, s.micro_batch * s.context * static_cast<std::size_t>(s.model.width),
                                  zero_category::pipe_boundary);
      buf.grad_send = grad_send_.data();
    }
    if (last()) {  // the tied head's wte, received from the first stage every step
      tied_wte_ =
          make_buffer<T>(arena, static_cast<std::size_t>(s.model.vocab * s.model.width), zero_category::pipe_boundary);
      buf.tied_wte = tied_wte_.data();
    }
    buf.scratch = scratch;
    runner_ = std::make_unique<pipeline::StageRunner<T>>(gpt, pp, plan.pp_schedule,
                                                         static_cast<int>(plan.micro_batches_per_rank), std::move(buf));
  }

  /// Whether this is the last stage (it computes the loss). @return pp_rank == N_p - 1.
  bool last() const { return plan_.pp_rank == plan_.pp_size - 1; }
  /// The runner (the held-out evaluation passes its forwards through it too). @return it.
  pipeline::StageRunner<T>& runner() { return *runner_; }
  /// The last stage's copy of wte, for the provider's acquire(0) (null elsewhere). @return it.
  const T* tied_wte() const { return runner_->tied_wte(); }

  /// The step's passes. @param params the engine's provider. @param grad_scale the backward's seed.
  /// @param fill fill(m, to): micro-batch m's token ids into `to`. @param begin begin(forward, m):
  /// a pass starts. @param end a pass has ended (the engine's reductions follow). @param exchange
  /// a batch of sends and receives is about to be posted (the program's events). @param timeline
  /// --trace's (null: none): each pass becomes a span "forward m" / "backward m" of category
  /// "pass", so the trace draws the schedule and a stage's busy time is the sum of its spans.
  /// @return the micro-batches' loss sums on the last stage, else empty.
  std::vector<float> passes(model::ParamProvider<T>& params, float grad_scale,
                            std::function<void(int m, int32_t* to)> fill,
                            std::function<void(bool forward, int m)> begin, std::function<void()> end,
                            std::function<void(const std::vector<P2pOp>&)> exchange, Timeline* timeline) {
    pipeline::StageHooks<T> hooks;
    hooks.fill_tokens = std::move(fill);
    hooks.before_p2p = std::move(exchange);
    double start = 0;
    hooks.before_pass = [&](const schedule::PipeOp& op) {
      begin(op.kind == schedule::PipeOp::Kind::forward, op.micro);
      if (timeline) start = timeline->now_us();
    };
    hooks.after_pass = [&](const schedule::PipeOp& op) {
      const bool forward = op.kind == schedule::PipeOp::Kind::forward;
      if (timeline)
        timeline->add(std::string(forward ? "forward " : "backward ") + std::to_string(op.micro), "pass", start);
      end();
    };
    return runner_->run_step(params, grad_scale, hooks);
  }

  /// The step's loss sum, which only the last stage has, on every stage. @param local the last
  /// stage's (ignored elsewhere). @return the last stage's value.
  float loss_from_last(float local) {
    pp_.broadcast(std::span<float>(&local, 1), plan_.pp_size - 1);
    return local;
  }

 private:
  struct Slot {  // a further micro-batch in flight
    ArenaAllocation activations, checkpoints;
    TypedBuffer<int32_t> tokens;
  };
  const ZeroPlan& plan_;
  Collective& pp_;
  std::vector<Slot> slots_;
  TypedBuffer<T> grad_send_, tied_wte_;
  std::unique_ptr<pipeline::StageRunner<T>> runner_;
};

}  // namespace zt::zero
