// plan/paper_scale.cc — the paper's closed forms at any ψ (see paper_scale.h).
#include "plan/paper_scale.h"

#include <algorithm>
#include <cmath>

namespace zt::plan {

PaperAnswer paper_answer(const PaperQuestion& q) {
  PaperAnswer a;
  a.states = paper_model_states(q.psi, q.k, shard_spec_for_stage(q.stage, q.dp));
  a.elements_factor = q.stage == 3 ? 3.0 : 2.0;
  const double n = static_cast<double>(q.dp);
  a.ring_factor = q.traffic_model == TrafficModel::paper ? 1.0 : (n - 1.0) / n;
  a.bytes_per_step = 2.0 * a.elements_factor * q.psi * a.ring_factor;
  static const double collectives_per_layer[4] = {1, 2, 2, 3};
  a.calls_per_step = static_cast<double>(q.layers) * collectives_per_layer[q.stage];
  return a;
}

long long gpt3_shape_layers(double psi) {
  constexpr double kParamsPerCubedLayer = 12.0 * 128.0 * 128.0;  // 12 C^2 per block, C = 128 L
  return std::max(1LL, std::llround(std::cbrt(psi / kParamsPerCubedLayer)));
}

}  // namespace zt::plan
