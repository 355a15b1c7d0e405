// zero/dense_readback.h — a per-element FP32 state that ranks hold in parts (shards of units, or
// model-parallel slices), read back whole in the model's canonical order: the final master weights
// for --dump-params and --verify, the first step's gradient for --dump-grads.
//
// Each unit is all-gathered over the data-parallel group where it is sharded (padding stripped),
// then every model-parallel rank's units are put back in one-device order (zero/mp_gather.h), so
// the result compares element for element with the single-rank reference's dump. With a
// pipeline each stage has its own units' elements; the stages' states are gathered over the
// pipeline group and each stage's canonical range taken from its own (its blocks are consecutive
// in canonical order). For diagnostics and tests only: nothing in the step reads it.
#pragma once

#include <cstring>
#include <span>
#include <utility>
#include <vector>

#include "collective/collective.h"
#include "model/gpt_config.h"
#include "model/manifest.h"
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
  std::vector<float> dense(static_cast<std::size_t>(plan.manifest.param_count));  // units of other stages: 0
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

/// The canonical range of a pipeline stage's parameters: its blocks', with the embeddings on the
/// first stage and ln_f on the last. @param model the model. @param begin first block.
/// @param end one past the last block. @return [first, last) element of the canonical order.
inline std::pair<std::size_t, std::size_t> canonical_stage_range(const model::GptConfig& model, int64_t begin,
                                                                 int64_t end) {
  const model::Manifest m = model::make_manifest(model);  // units 0, 1..L (blocks), L+1 (ln_f)
  const auto at = [&](int64_t unit) {
    return static_cast<std::size_t>(m.units[static_cast<std::size_t>(unit)].offset);
  };
  return {begin == 0 ? 0 : at(1 + begin), end == model.layers ? static_cast<std::size_t>(m.param_count) : at(1 + end)};
}

/// The whole state from every pipeline stage's part. @param pp the pipeline group (null or one
/// stage: `mine` is returned). @param plan this rank's plan. @param mine this stage's state in
/// canonical order (gather_canonical), its own range filled. @return the whole state.
inline std::vector<float> gather_pipeline_canonical(Collective* pp, const ZeroPlan& plan, std::vector<float> mine) {
  if (!pp || pp->size() == 1) return mine;
  const auto P = static_cast<std::size_t>(pp->size()), n = mine.size();
  std::vector<float> all(P * n);
  pp->all_gather(std::span<const float>(mine), std::span<float>(all));
  for (std::size_t s = 0; s < P; ++s) {
    const auto [first, last] = canonical_stage_range(plan.shape.model, plan.pp_offsets[s], plan.pp_offsets[s + 1]);
    std::memcpy(mine.data() + first, all.data() + s * n + first, (last - first) * sizeof(float));
  }
  return mine;
}

}  // namespace zt::zero
