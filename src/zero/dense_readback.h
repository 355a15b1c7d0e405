// zero/dense_readback.h — a per-element FP32 state that ranks hold in parts (shards of units, or
// model-parallel slices), read back whole in the model's canonical order: the final master weights
// for --dump-params and --verify, the first step's gradient for --dump-grads.
//
// Each unit is all-gathered over the data-parallel group where it is sharded (padding stripped),
// then every model-parallel rank's units are put back in one-device order (zero/mp_gather.h), so
// the result compares element for element with the single-rank reference's dump. For diagnostics
// and tests only: nothing in the step reads it.
#pragma once

#include <cstring>
#include <span>
#include <vector>

#include "collective/collective.h"
#include "model/gpt_config.h"
#include "zero/mp_gather.h"
#include "zero/zero_plan.h"

namespace zt::zero {

/// @param plan this rank's plan. @param dp the data-parallel group. @param mp the model-parallel
/// group (null: N_m = 1). @param model the model's shape.
/// @param sharded per unit: whether this rank holds its shard (else the whole unit).
/// @param get get(u, k): element k of what this rank holds of unit u (its shard or the unit).
/// @return the whole state, in canonical order.
template <typename Get>
std::vector<float> gather_canonical(const ZeroPlan& plan, Collective& dp, Collective* mp, const model::GptConfig& model,
                                    const std::vector<bool>& sharded, Get get) {
  const Layout& lay = plan.layout;
  std::vector<float> dense(lay.psi);
  for (std::size_t u = 0; u < lay.units.size(); ++u) {
    const auto& ul = lay.units[u];
    std::vector<float> full(ul.full), part(ul.shard);
    if (sharded[u]) {
      for (std::size_t k = 0; k < ul.shard; ++k) part[k] = get(u, k);
      if (dp.size() > 1)
        dp.all_gather(std::span<const float>(part), std::span<float>(full));
      else
        full = part;
    } else {
      for (std::size_t k = 0; k < ul.full; ++k) full[k] = get(u, k);
    }
    std::memcpy(dense.data() + ul.dense_offset, full.data(), ul.numel * sizeof(float));
  }
  return gather_mp_canonical(mp && mp->size() > 1 ? mp : nullptr, plan, model, dense);
}

}  // namespace zt::zero
