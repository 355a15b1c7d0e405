// optim/grad_norm.cc — block norms and clipping (see grad_norm.h for the order they fix).
#include "optim/grad_norm.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "core/cpu_pool.h"
#include "reduce/canonical_tree.h"

namespace zt {

std::size_t norm_block_count(std::size_t real_elements, std::size_t block) {
  ZT_CHECK(block >= 1 && (block & (block - 1)) == 0, "norm block size ", block, " must be a power of two");
  return (real_elements + block - 1) / block;
}

std::size_t shard_real_elements(std::size_t unit_numel, std::size_t shard_first, std::size_t shard_numel) {
  if (unit_numel <= shard_first) return 0;
  const std::size_t rest = unit_numel - shard_first;
  return rest < shard_numel ? rest : shard_numel;
}

float block_sum_of_squares(const float* x, std::size_t count) {
  return canonical_reduce(
      count, [x](std::size_t i) { return x[i] * x[i]; }, [](float a, float b) { return a + b; });
}

std::size_t norm_block_sums(const float* x, std::size_t real_elements, std::size_t block, float* out) {
  const std::size_t count = norm_block_count(real_elements, block);
  // Each block's sum is its own tree: the rank's threads take blocks of blocks (core/cpu_pool.h),
  // and combine_norm_blocks adds the sums in one order whatever the thread count.
  const auto grain = static_cast<int64_t>(std::max<std::size_t>(1, static_cast<std::size_t>(kCpuElementGrain) / block));
  parallel_for(static_cast<int64_t>(count), grain, [&](int64_t k0, int64_t k1) {
    for (auto k = static_cast<std::size_t>(k0); k < static_cast<std::size_t>(k1); ++k) {
      const std::size_t first = k * block;
      const std::size_t size = real_elements - first < block ? real_elements - first : block;
      out[k] = block_sum_of_squares(x + first, size);
    }
  });
  return count;
}

float combine_norm_blocks(std::span<const float> block_sums) {
  if (block_sums.empty()) return 0.0f;
  return canonical_reduce(
      block_sums.size(), [&](std::size_t i) { return block_sums[i]; }, [](float a, float b) { return a + b; });
}

std::vector<float> canonical_block_order(std::span<const float> gathered,
                                         const std::vector<std::vector<std::size_t>>& counts) {
  const std::size_t ranks = counts.size();
  const std::size_t units = ranks ? counts[0].size() : 0;
  std::vector<std::vector<std::size_t>> start(ranks, std::vector<std::size_t>(units));
  std::size_t at = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    ZT_CHECK(counts[r].size() == units, "canonical_block_order: rank ", r, " lists ", counts[r].size(),
             " units, rank 0 lists ", units);
    for (std::size_t u = 0; u < units; ++u) {
      start[r][u] = at;
      at += counts[r][u];
    }
  }
  ZT_CHECK(at == gathered.size(), "canonical_block_order: counts add up to ", at, " sums, got ", gathered.size());
  std::vector<float> ordered;
  ordered.reserve(at);
  for (std::size_t u = 0; u < units; ++u)
    for (std::size_t r = 0; r < ranks; ++r)
      for (std::size_t k = 0; k < counts[r][u]; ++k) ordered.push_back(gathered[start[r][u] + k]);
  return ordered;
}

float global_grad_norm(const std::vector<std::span<const float>>& units, std::size_t block) {
  std::vector<float> sums;
  for (const auto& u : units) {
    const std::size_t at = sums.size();
    sums.resize(at + norm_block_count(u.size(), block));
    norm_block_sums(u.data(), u.size(), block, sums.data() + at);
  }
  return std::sqrt(combine_norm_blocks(sums));
}

ClipDecision clip_decision(float norm, float max_norm) {
  ClipDecision d;
  d.norm = norm;
  d.finite = std::isfinite(norm);
  d.clipped = d.finite && max_norm > 0 && norm > max_norm;
  d.coefficient = d.clipped ? max_norm / norm : 1.0f;
  return d;
}

void apply_clip(float* g, std::size_t n, const ClipDecision& d) {
  if (!d.clipped) return;
  parallel_for(static_cast<int64_t>(n), kCpuElementGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) g[i] = clip_element(g[i], d.coefficient);
  });
}

}  // namespace zt
