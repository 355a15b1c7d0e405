// The block gradient norm: block boundaries, padding ignored, and the property chapter 6 needs — ranks
// holding padded shards compute block sums that, gathered and put in canonical order, give the
// single-device norm bit for bit, for any world size. And clipping's threshold.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

#include "core/check.h"
#include "optim/grad_norm.h"
#include "reduce/canonical_tree.h"

using namespace zt;

namespace {
std::vector<float> gradient(std::size_t n, int salt) {
  std::vector<float> g(n);
  for (std::size_t i = 0; i < n; ++i)  // magnitudes spread over 2^-20 .. 2^4: order matters
    g[i] = std::ldexp(std::sin(0.37f * i + salt), static_cast<int>((i * 7 + salt) % 25) - 20);
  return g;
}
uint32_t bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
}
}  // namespace

TEST_CASE("blocks start at the unit's first element; the last one may be partial", "[ch2][optim]") {
  CHECK(norm_block_count(0, 256) == 0);
  CHECK(norm_block_count(256, 256) == 1);
  CHECK(norm_block_count(257, 256) == 2);
  CHECK_THROWS_AS(norm_block_count(10, 100), Error);
  CHECK(shard_real_elements(1000, 512, 512) == 488);
  CHECK(shard_real_elements(1000, 1024, 512) == 0);
  // 5 elements, b = 4: blocks {x0..x3} as a perfect tree and {x4} alone
  const float x[5] = {1, 2, 3, 4, 5};
  float sums[2];
  CHECK(norm_block_sums(x, 5, 4, sums) == 2);
  CHECK(sums[0] == (1.0f + 4.0f) + (9.0f + 16.0f));
  CHECK(sums[1] == 25.0f);
  CHECK(combine_norm_blocks(sums) == 55.0f);
  CHECK(combine_norm_blocks({}) == 0.0f);
  // the partial block is reduced with the canonical tree, not left to right
  auto g = gradient(7, 3);
  const float expected = canonical_reduce(
      7, [&](std::size_t i) { return g[i] * g[i]; }, [](float a, float b) { return a + b; });
  CHECK(block_sum_of_squares(g.data(), 7) == expected);
}

TEST_CASE("sharded block norm equals the single-device norm bitwise", "[ch2][optim]") {
  const std::vector<std::size_t> unit_sizes = {1000, 37, 4096, 300, 1};
  std::vector<std::vector<float>> units;
  for (std::size_t u = 0; u < unit_sizes.size(); ++u) units.push_back(gradient(unit_sizes[u], static_cast<int>(u)));
  for (std::size_t block : {64u, 256u}) {
    std::vector<std::span<const float>> spans(units.begin(), units.end());
    const float reference = global_grad_norm(spans, block);
    double exact = 0;  // independent check of the value itself
    for (const auto& u : units)
      for (float v : u) exact += static_cast<double>(v) * v;
    CHECK(reference == Approx(std::sqrt(exact)).epsilon(1e-6));

    for (std::size_t world : {1u, 2u, 3u, 4u, 5u, 7u}) {
      // each rank: per unit, a shard of ceil(n / N) rounded up to whole blocks, padded with NaN
      // (padding must never be read), its block sums appended unit by unit
      std::vector<float> gathered;
      std::vector<std::vector<std::size_t>> counts(world);
      for (std::size_t r = 0; r < world; ++r)
        for (std::size_t u = 0; u < units.size(); ++u) {
          const std::size_t n = units[u].size();
          const std::size_t shard = ((n + world - 1) / world + block - 1) / block * block;
          std::vector<float> mine(shard, std::numeric_limits<float>::quiet_NaN());
          const std::size_t real = shard_real_elements(n, r * shard, shard);
          for (std::size_t i = 0; i < real; ++i) mine[i] = units[u][r * shard + i];
          std::vector<float> sums(norm_block_count(real, block));
          CHECK(norm_block_sums(mine.data(), real, block, sums.data()) == sums.size());
          counts[r].push_back(sums.size());
          gathered.insert(gathered.end(), sums.begin(), sums.end());
        }
      const float sharded = std::sqrt(combine_norm_blocks(canonical_block_order(gathered, counts)));
      INFO("block " << block << ", world " << world);
      CHECK(bits(sharded) == bits(reference));
    }
  }
}

TEST_CASE("clipping fires exactly when the norm exceeds the threshold", "[ch2][optim]") {
  const float max_norm = 1.0f;
  CHECK_FALSE(clip_decision(1.0f, max_norm).clipped);
  CHECK(clip_decision(1.0f, max_norm).coefficient == 1.0f);
  const float above = std::nextafter(1.0f, 2.0f);
  CHECK(clip_decision(above, max_norm).clipped);
  CHECK(clip_decision(above, max_norm).coefficient == max_norm / above);
  CHECK_FALSE(clip_decision(5.0f, 0.0f).clipped);  // disabled
  const auto inf = clip_decision(std::numeric_limits<float>::infinity(), max_norm);
  CHECK((!inf.finite && !inf.clipped && inf.coefficient == 1.0f));
  CHECK_FALSE(clip_decision(std::numeric_limits<float>::quiet_NaN(), max_norm).finite);

  // after clipping, the norm is max_norm up to a few roundings
  auto g = gradient(3000, 9);
  const float norm = global_grad_norm({std::span<const float>(g)}, 256);
  const auto d = clip_decision(norm, norm / 4);
  REQUIRE(d.clipped);
  apply_clip(g.data(), g.size(), d);
  CHECK(global_grad_norm({std::span<const float>(g)}, 256) == Approx(norm / 4).epsilon(1e-6));
  auto h = gradient(10, 1);
  apply_clip(h.data(), h.size(), clip_decision(1.0f, 2.0f));  // not clipped: untouched
  CHECK(h == gradient(10, 1));
}
