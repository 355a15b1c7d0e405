// pipeline/stage_runner.h — one pipeline stage's part of a step: its model (a run of blocks,
// model/pipe_stage.h) runs the forward and backward passes of the step's M micro-batches in the
// order schedule/pipeline.h gives the stage, and the tensors that cross stage boundaries travel by
// send/recv on the pipeline group (stage s = rank s).
//
// What crosses, per micro-batch: the activation x at each boundary, forward, and its gradient,
// backward (schedule/pipeline.h's 2 (P-1) M b s h t bytes per step); and, because the head is tied
// to wte, the head's part of wte's gradient [V, C] from the last stage to the first, which adds
// the embedding's part to it exactly as one device does (kernels/embedding.h). Per step, wte's
// values go from the first stage to the last before its first forward. Both are stated as
// tied_embedding_p2p_bytes() below.
//
// The transfer pattern (Megatron's p2p_communication): the send that ends a pass is posted with
// the receives that start the stage's next pass, as one batch, and the batch is waited before the
// pass runs; the sends' sources (the stage's output in its micro-batch's workspace, the input
// gradient and the head's wte gradient in the shared scratch) are untouched until then. Each batch
// is shown to StageHooks::before_p2p first: the ZeRO engine checks it against its step program.
// The input gradient a stage sends is first copied out of the scratch into its own buffer
// (grad_send), because in the cool-down a stage sends one input gradient in the batch that
// receives the next output gradient into that same scratch region.
// Activations: one workspace per micro-batch in flight — GPipe holds M, 1F1B min(P - s, M) at
// stage s (schedule::peak_in_flight) — all sharing one scratch; micro-batch m uses slot m mod K,
// since the micro-batches in flight are always K consecutive ones.
// Why the bits equal one device's: every stage runs exactly the single-device calls of its blocks
// on the same values, backwards in micro-batch order (schedule/pipeline.h), so what a caller sums
// over micro-batches in after_backward follows the same tree. Nothing here reduces over data
// parallel ranks or updates anything: that is the caller's (the ZeRO engine's) job.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "collective/collective.h"
#include "model/gpt.h"
#include "schedule/pipeline.h"

namespace zt::pipeline {

/// Bytes of the tied embedding's transfers per step: M head gradients of wte [V, C] from the last
/// stage to the first, and wte's values once from the first to the last; 0 when P = 1.
/// @param stages P. @param micro_batches M. @param wte_bytes V · C · t. @return (M + 1) · wte_bytes.
inline uint64_t tied_embedding_p2p_bytes(int stages, int micro_batches, uint64_t wte_bytes) {
  return stages > 1 ? static_cast<uint64_t>(micro_batches + 1) * wte_bytes : 0;
}

/// The memory one micro-batch in flight uses: its activations (a workspace's activation buffer,
/// and its checkpoints with activation checkpointing) and its token ids.
struct PipeSlot {
  void* activations = nullptr;  ///< model::activation_bytes() of the stage
  void* checkpoints = nullptr;  ///< model::checkpoint_bytes() of the stage (checkpointing only)
  int32_t* tokens = nullptr;    ///< B (T + 1) ids
};

/// The memory a stage runs in besides its parameters and gradients, all the caller's (an arena's,
/// so the ledger sees it).
template <typename T>
struct StageBuffers {
  std::vector<PipeSlot> slots;  ///< StageRunner::slots_needed() of them
  void* scratch = nullptr;      ///< model::scratch_bytes() of the stage, shared by the slots
  /// A stage after the first: B·T·C values, the input gradient being sent.
  T* grad_send = nullptr;
  /// A last stage without the embedding: V·C values, where wte's values arrive each step (the
  /// head reads them through acquire(0)).
  T* tied_wte = nullptr;
};

/// What the caller does at the step's points.
template <typename T>
struct StageHooks {
  /// Write micro-batch m's B (T + 1) token ids into `tokens` (called before its forward).
  std::function<void(int m, int32_t* tokens)> fill_tokens;
  /// Micro-batch m's backward is done on this stage (its gradients are in the provider's slots):
  /// sum or reduce them. May be empty.
  std::function<void(int m)> after_backward;
  /// The pass about to run, for a timeline (may be empty). @param op the pass.
  std::function<void(const schedule::PipeOp& op)> before_pass;
  /// The pass just ran (may be empty). @param op the pass.
  std::function<void(const schedule::PipeOp& op)> after_pass;
  /// A batch of sends and receives about to be posted, the tied wte's included (may be empty).
  /// @param batch the transfers, in posting order.
  std::function<void(const std::vector<P2pOp>& batch)> before_p2p;
};

/// Runs one stage's passes of each step.
template <typename T>
class StageRunner {
 public:
  /// @param model the stage's model (its options' stage is this stage's run of blocks).
  /// @param pp the pipeline group: P ranks, rank s runs stage s (kept by reference).
  /// @param schedule GPipe or 1F1B. @param micro_batches M (>= P: schedule::check_micro_batches).
  /// @param buffers the stage's memory (checked against what the stage needs).
  StageRunner(model::Gpt<T>& model, Collective& pp, schedule::PipeSchedule schedule, int micro_batches,
              StageBuffers<T> buffers);

  /// Workspaces this stage needs at once. @param schedule the schedule. @param stages P.
  /// @param stage s. @param micro_batches M. @return schedule::peak_in_flight of its order.
  static int slots_needed(schedule::PipeSchedule schedule, int stages, int stage, int micro_batches);

  /// Run the step's passes. @param params the stage's provider (on a last stage without the
  /// embedding, acquire(0) must return tied_wte; on a first stage without the head, acquire(0) is
  /// also read once to send wte's values). @param grad_scale the backward's seed (loss scale /
  /// tokens). @param hooks the caller's points.
  /// @return on the last stage the M micro-batches' loss sums, in micro-batch order; else empty.
  std::vector<float> run_step(model::ParamProvider<T>& params, float grad_scale, const StageHooks<T>& hooks);

  /// wte's values from the first stage to the last, as every step starts (run_step calls it; call
  /// it before a forward-only pass such as an evaluation). Other stages return at once.
  /// @param params the stage's provider: the first stage reads unit 0 from it.
  /// @param before_p2p told of the transfer before it is posted (may be empty).
  void share_tied_wte(model::ParamProvider<T>& params,
                      const std::function<void(const std::vector<P2pOp>&)>& before_p2p = {});

  /// The pipeline group. @return it.
  Collective& group() const { return pp_; }
  /// The last stage's copy of wte (null on other stages). @return it.
  T* tied_wte() const { return stage_ == stages_ - 1 && stage_ > 0 ? buf_.tied_wte : nullptr; }

 private:
  model::Workspace workspace(int m) const;
  const PipeSlot& slot(int m) const { return buf_.slots[static_cast<std::size_t>(m) % buf_.slots.size()]; }

  model::Gpt<T>& model_;
  Collective& pp_;
  int stage_, stages_, micro_;
  std::vector<schedule::PipeOp> order_;
  StageBuffers<T> buf_;
  std::size_t act_bytes_, ckpt_bytes_, scratch_bytes_;
};

extern template class StageRunner<float>;
extern template class StageRunner<fp16>;
extern template class StageRunner<bf16>;

}  // namespace zt::pipeline
