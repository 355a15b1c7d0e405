// zero/mp_gather.cc — model-parallel gathers into one-device order (see mp_gather.h).
#include "zero/mp_gather.h"

#include <algorithm>
#include <span>
#include <utility>

#include "collective/padding.h"
#include "model/manifest.h"
#include "optim/grad_norm.h"

namespace zt::zero {

std::vector<float> gather_mp_norm_block_sums(Collective& mp, const ZeroPlan& plan, std::size_t block,
                                             const std::vector<float>& ours) {
  const auto N_m = static_cast<std::size_t>(mp.size());
  const auto contributed = mp_norm_contributions(plan, plan.pipe);  // per model-parallel rank, in global order
  std::vector<std::size_t> counts(N_m, 0);
  for (std::size_t q = 0; q < N_m; ++q)
    for (const auto& c : contributed[q]) counts[q] += c.blocks;
  std::vector<float> mine;  // this rank's contribution, out of its units' sums in storage order
  std::size_t at = 0;
  for (std::size_t k = 0; k < plan.manifest.units.size(); ++k) {
    const auto& u = plan.manifest.units[k];  // the layout's count: 0 for a unit another stage holds
    const std::size_t n = norm_block_count(plan.layout.units[k].numel, block);
    if (u.block >= 0 || plan.mp.rank == 0) mine.insert(mine.end(), ours.begin() + at, ours.begin() + at + n);
    at += n;
  }
  std::vector<float> gathered(total_of(counts));
  mp.all_gather_v(std::span<const float>(mine), std::span<float>(gathered), counts);
  // reorder by global unit index: each rank's contributions are already in that order
  std::vector<std::pair<int, std::pair<std::size_t, std::size_t>>> pieces;  // global index -> (offset, count)
  std::size_t offset = 0;
  for (std::size_t q = 0; q < N_m; ++q)
    for (const auto& c : contributed[q]) pieces.push_back({c.global_unit, {offset, c.blocks}}), offset += c.blocks;
  std::sort(pieces.begin(), pieces.end());
  std::vector<float> ordered;
  for (const auto& [g, piece] : pieces)
    ordered.insert(ordered.end(), gathered.begin() + piece.first, gathered.begin() + piece.first + piece.second);
  return ordered;
}

std::vector<float> gather_mp_canonical(Collective* mp, const ZeroPlan& plan, const model::GptConfig& model,
                                       const std::vector<float>& stored) {
  std::vector<float> out(static_cast<std::size_t>(model::param_count(model)));
  if (!mp || mp->size() == 1) {
    model::to_canonical(plan.manifest, stored.data(), out.data());
    return out;
  }
  const auto N_m = static_cast<std::size_t>(mp->size());
  std::vector<model::Manifest> manifests;
  std::vector<std::size_t> counts;
  for (std::size_t q = 0; q < N_m; ++q) {
    manifests.push_back(model::make_storage_manifest(model, {plan.mp.size, static_cast<int64_t>(q)}));
    counts.push_back(static_cast<std::size_t>(manifests.back().param_count));
  }
  std::vector<float> all(total_of(counts));
  mp->all_gather_v(std::span<const float>(stored), std::span<float>(all), counts);
  std::size_t at = 0;
  for (std::size_t q = 0; q < N_m; ++q) {
    model::to_canonical(manifests[q], all.data() + at, out.data());
    at += counts[q];
  }
  return out;
}

}  // namespace zt::zero
