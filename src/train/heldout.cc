// train/heldout.cc — the evaluation record from its rounds (see heldout.h).
#include "train/heldout.h"

#include "reduce/canonical_tree.h"

namespace zt::train {

EvalRecord heldout_record(int64_t step, const std::vector<float>& loss_sums, ExactMatch match, int64_t micro_batch,
                          int64_t context) {
  EvalRecord e;
  e.step = step;
  const auto rounds = static_cast<int64_t>(loss_sums.size());
  // the canonical tree over round sums in round order, one division (as a step's loss)
  e.loss = canonical_sum(loss_sums) / static_cast<float>(rounds * micro_batch * context);
  e.problems = match.total;
  e.accuracy = match.total ? static_cast<double>(match.correct) / static_cast<double>(match.total) : 0.0;
  return e;
}

}  // namespace zt::train
