// plan/max_model.cc — the largest model that fits (see max_model.h).
#include "plan/max_model.h"

#include <algorithm>
#include <cmath>

#include "plan/rank_prediction.h"

namespace zt::plan {

double max_paper_psi(const PaperQuestion& q, double budget_bytes) {
  const auto total = [&](double psi) {
    PaperQuestion p = q;
    p.psi = psi;
    return paper_answer(p).states.total;
  };
  double psi = std::floor(budget_bytes / total(1.0));  // the states are linear in ψ
  while (psi > 0 && total(psi) > budget_bytes) psi -= 1;
  while (total(psi + 1) <= budget_bytes) psi += 1;
  return psi;
}

MaxLayers max_layers(const train::RunOptions& c, int64_t vocab) {
  constexpr int64_t kMaxLayers = 1024;  // --layers' upper limit
  MaxLayers m;
  train::RunOptions t = c;
  m.capacity = predict_run(c, vocab).arena_capacity;
  for (int64_t l = 1; l <= kMaxLayers; ++l) {
    t.layers = l;
    const RunPrediction run = predict_run(t, vocab);
    std::size_t high_water = 0;
    const RankPrediction* failed = nullptr;
    for (const auto& r : run.ranks) {
      high_water = std::max(high_water, r.high_water_bytes);
      if (!r.fit.ok && !failed) failed = &r;
    }
    if (failed) {
      m.next_peak_bytes = high_water;
      m.next_rank = failed->rank;
      m.next_fit = failed->fit;
      break;
    }
    m.layers = l;
    m.peak_bytes = high_water;
  }
  return m;
}

}  // namespace zt::plan
