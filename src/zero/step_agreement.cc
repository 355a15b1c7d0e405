// zero/step_agreement.cc — the skip flag and the norm's block sums over the job (see step_agreement.h).
#include "zero/step_agreement.h"

#include <span>

#include "optim/grad_norm.h"
#include "zero/mp_gather.h"

namespace zt::zero {

bool agree_nonfinite(const ZeroPlan& plan, Collective& dp, Collective* mp, bool local, Collective* pp) {
  float flag = local ? 1.0f : 0.0f;
  if (plan.reduce_scatters_grad && dp.size() > 1) dp.all_reduce(std::span<float>(&flag, 1), ReduceOp::max);
  if (mp && mp->size() > 1) mp->all_reduce(std::span<float>(&flag, 1), ReduceOp::max);
  if (pp && pp->size() > 1) pp->all_reduce(std::span<float>(&flag, 1), ReduceOp::max);
  return flag != 0.0f;
}

std::vector<float> gather_norm_block_sums(const ZeroPlan& plan, Collective& dp, Collective* mp,
                                          const std::vector<float>& local, Collective* pp) {
  const Layout& lay = plan.layout;
  const std::size_t N = lay.world_size, units = lay.units.size();
  std::vector<float> ours = local;
  if (plan.reduce_scatters_grad && N > 1) {
    std::vector<std::vector<std::size_t>> blocks(N, std::vector<std::size_t>(units));
    std::vector<std::size_t> counts(N, 0);
    std::size_t total = 0;
    for (std::size_t q = 0; q < N; ++q)
      for (std::size_t u = 0; u < units; ++u)
        counts[q] += blocks[q][u] = norm_block_count(lay.shard_real(u, q), lay.block);
    for (std::size_t n : counts) total += n;
    std::vector<float> gathered(total);
    dp.all_gather_v(std::span<const float>(local), std::span<float>(gathered), counts);
    ours = canonical_block_order(gathered, blocks);
  }
  if (mp && mp->size() > 1) ours = gather_mp_norm_block_sums(*mp, plan, lay.block, ours);
  if (!pp || pp->size() == 1) return ours;
  // the stages' lists, each in order, end to end in stage order (counts exact in FP32: < 2^24)
  const auto P = static_cast<std::size_t>(pp->size());
  const float mine = static_cast<float>(ours.size());
  std::vector<float> sizes(P);
  pp->all_gather(std::span<const float>(&mine, 1), std::span<float>(sizes));
  std::vector<std::size_t> counts(P);
  std::size_t total = 0;
  for (std::size_t s = 0; s < P; ++s) total += counts[s] = static_cast<std::size_t>(sizes[s]);
  std::vector<float> all(total);
  pp->all_gather_v(std::span<const float>(ours), std::span<float>(all), counts);
  return all;
}

}  // namespace zt::zero
