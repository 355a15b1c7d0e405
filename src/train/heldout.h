// train/heldout.h — one held-out evaluation (the addition task's split), cut into rounds: the single-rank
// loop runs every round itself; the ZeRO engine spreads the rounds over ranks (zero/heldout_eval.h).
//
// An evaluation is R = ceil(64 / B) rounds. Round r is one forward pass over the held-out
// sequences r*B .. r*B+B-1; it yields the round's loss sum (the model's canonical tree over its
// B*T positions) and its exact-match counts. The evaluation's loss is the canonical tree over the
// R round sums in round order, divided once by R*B*T, so whoever computes the rounds, the loss is
// the same bits as long as each round is. Forward only: no backward, no weight is touched.
// It reads a dataset's HeldoutSet (data/dataset.h), nothing else of it, and holds no buffers.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "data/dataset.h"
#include "model/gpt.h"
#include "train/run_result.h"

namespace zt::train {

/// Held-out sequences per evaluation (rounded up to whole micro-batches).
inline constexpr int64_t kEvalSequences = 64;

/// Rounds of one evaluation. @param micro_batch B, sequences per round. @return ceil(64 / B).
inline int64_t heldout_rounds(int64_t micro_batch) { return (kEvalSequences + micro_batch - 1) / micro_batch; }

/// What one round contributes.
struct HeldoutRound {
  float loss_sum = 0;  ///< sum of the round's B*T per-position losses (the model's canonical tree)
  ExactMatch match;    ///< exact-match counts of the round's problems
};

/// Where a pipeline stage's forward meets its neighbours (pipeline/stage_runner.h): a stage after
/// the first receives its input before the forward, a stage before the last sends its output
/// after it. Empty on one stage.
struct RoundBoundary {
  std::function<void()> receive_input;  ///< fill the model's stage_input() (a stage after the first)
  std::function<void()> send_output;    ///< pass its stage_output() on (a stage before the last)
};

/// Run round `round` of an evaluation: sample its B held-out sequences, forward, argmax, score.
/// @param data the held-out split (the addition task's). @param seed the run's seed. @param round r, in [0, R).
/// @param micro_batch B (the model's micro-batch). @param gpt the model. @param params its
/// parameters (only acquire/release are called). @param ws the model's workspace.
/// @param batch B*(T+1) token ids (overwritten). @param predictions B*T ids (overwritten).
/// @param boundary a pipeline stage's transfers (default: none).
/// @return the round's loss sum and exact-match counts; zero on a stage before the last.
template <typename T>
HeldoutRound heldout_round(const HeldoutSet& data, int64_t seed, int64_t round, int64_t micro_batch, model::Gpt<T>& gpt,
                           model::ParamProvider<T>& params, const model::Workspace& ws, int32_t* batch,
                           int32_t* predictions, const RoundBoundary& boundary = {}) {
  const int64_t B = micro_batch, ctx = gpt.config().context, row = ctx + 1;
  for (int64_t i = 0; i < B; ++i)
    data.heldout_sample(static_cast<uint64_t>(seed), static_cast<uint64_t>(round * B + i), batch + i * row);
  HeldoutRound out;
  if (boundary.receive_input) boundary.receive_input();
  out.loss_sum = gpt.forward(params, model::batch_inputs(batch, B, ctx), model::batch_targets(batch, B, ctx), ws);
  if (boundary.send_output) {  // a stage before the last: no logits here
    boundary.send_output();
    return out;
  }
  gpt.predictions(ws, predictions);
  for (int64_t i = 0; i < B; ++i) {
    const ExactMatch m = data.exact_match(batch + i * row, predictions + i * ctx);
    out.match.correct += m.correct;
    out.match.total += m.total;
  }
  return out;
}

/// The evaluation's record from every round's results.
/// @param step steps trained so far. @param loss_sums the R round loss sums in round order.
/// @param match exact-match counts summed over all rounds. @param micro_batch B.
/// @param context T. @return step, mean loss per token (canonical tree / (R*B*T)), accuracy, problems.
EvalRecord heldout_record(int64_t step, const std::vector<float>& loss_sums, ExactMatch match, int64_t micro_batch,
                          int64_t context);

}  // namespace zt::train
