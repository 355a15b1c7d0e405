// The block reductions (ops/block_reduce.h) run by the host's block launch (device/block_launch.h)
// give the bits of the one-thread loops they replace: the canonical sum (kernels/row_sum.h's
// canonical_sum_f) for every leaf count up to 1100 and W columns at once, and the first maximum
// for rows with ties between +0 and -0, infinities and NaN. A planted change to one phase — the
// classic halving tree, or the levels merged right to left — gives other bits for some n, so the
// comparison the device tests rely on can fail.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "device/block_launch.h"
#include "kernels/row_sum.h"
#include "ops/block_reduce.h"

namespace {

using zt::device::HostBlock;
using zt::device::kBlockThreads;

// Leaves whose sum depends on its order: magnitudes over 2^-20 .. 2^20, both signs.
std::vector<float> leaves(std::size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 1u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    const float mant = 1.0f + static_cast<float>(s >> 9) * 0x1p-23f;
    const int e = static_cast<int>((s >> 3) % 41) - 20;
    x = std::ldexp((s & 1) ? -mant : mant, e);
  }
  return v;
}

bool same(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// A block op summing one row of leaves with block_canonical_sum (or a planted tree).
enum class Tree { canonical, halving, right_to_left };

struct SumOp {
  const float* x = nullptr;
  std::size_t n = 0;
  float* out = nullptr;
  Tree tree = Tree::canonical;
  int64_t blocks() const { return 1; }
  std::size_t shared_floats() const { return zt::ops::canonical_sum_floats(n); }
  template <typename Block>
  void operator()(Block& blk, int64_t) const {
    const auto leaf = [&](std::size_t i) { return x[i]; };
    if (tree == Tree::canonical) {
      *out = zt::ops::block_canonical_sum(blk, blk.shared(), n, leaf);
      return;
    }
    // planted: the same unit phase, then one level phase changed
    float* units = blk.shared();
    const std::size_t u = n / 8, P = blk.threads();
    blk.each([&](uint32_t t) {
      for (std::size_t q = t; q < u; q += P) units[q] = zt::ops::unit_of_eight(8 * q, leaf);
    });
    // the n mod 8 leaves' 4-, 2- and 1-blocks, combined as the canonical finish does
    const float tail = zt::ops::canonical_finish(
        0, n % 8, [](std::size_t) { return 0.0f; }, [&](std::size_t i) { return x[8 * u + i]; });
    const auto with_tail = [&](float units_total) {
      return u == 0 ? tail : (n % 8 ? units_total + tail : units_total);
    };
    if (tree == Tree::halving) {  // units[a] += units[a + half] over a power-of-two span: the GPU classic
      std::size_t span = 1;
      while (span < u) span *= 2;
      for (std::size_t half = span / 2; half >= 1; half /= 2)
        blk.each([&](uint32_t t) {
          for (std::size_t a = t; a < half; a += P)
            if (a + half < u) units[a] = units[a] + units[a + half];
        });
      *out = with_tail(u > 0 ? units[0] : 0.0f);
      return;
    }
    // right_to_left: the canonical levels, but the perfect blocks' sums added from the right
    for (std::size_t w = 1; 2 * w <= u; w *= 2)
      blk.each([&](uint32_t t) {
        for (std::size_t a = 2 * w * t; a + 2 * w <= u; a += 2 * w * P) units[a] = units[a] + units[a + w];
      });
    std::vector<float> sums;
    std::size_t at = 0;
    for (std::size_t bit = std::size_t{1} << 62; bit != 0; bit >>= 1)
      if (u & bit) {
        sums.push_back(units[at]);
        at += bit;
      }
    float total = 0.0f;
    for (auto it = sums.rbegin(); it != sums.rend(); ++it) total = it == sums.rbegin() ? *it : *it + total;
    *out = with_tail(total);
  }
};

// Two phases per block: thread t writes slot t, then reads slot t + 1.
struct NeighbourOp {
  std::vector<int>* out;
  int64_t blocks() const { return 2; }
  std::size_t shared_floats() const { return kBlockThreads; }
  template <typename Block>
  void operator()(Block& blk, int64_t b) const {
    float* s = blk.shared();
    blk.each([&](uint32_t t) { s[t] = static_cast<float>(t + 1000 * b); });
    blk.each([&](uint32_t t) { (*out)[b * kBlockThreads + t] = static_cast<int>(s[(t + 1) % kBlockThreads]); });
  }
};

float block_sum(const std::vector<float>& x, Tree tree) {
  float out = -7.0f;
  zt::device::run_blocks_on_host(SumOp{x.data(), x.size(), &out, tree});
  return out;
}

float serial_sum(const std::vector<float>& x) {
  return zt::kernels::canonical_sum_f(x.size(), [&](std::size_t i) { return x[i]; });
}

}  // namespace

TEST_CASE("block reduce: the block's canonical sum is canonical_sum_f's, bit for bit, for every n to 1100", "[ch13]") {
  for (std::size_t n = 0; n <= 1100; ++n) {
    const auto x = leaves(n, static_cast<uint32_t>(n) + 1);
    const float serial = serial_sum(x), block = block_sum(x, Tree::canonical);
    INFO("n = " << n << ": " << serial << " against " << block);
    REQUIRE(same(serial, block));
  }
}

TEST_CASE("block reduce: a planted change to one level's tree gives other bits (the comparison can fail)", "[ch13]") {
  for (const Tree planted : {Tree::halving, Tree::right_to_left}) {
    int differ = 0;
    for (std::size_t n = 8; n <= 1100; ++n) {
      const auto x = leaves(n, static_cast<uint32_t>(n) + 1);
      differ += same(serial_sum(x), block_sum(x, planted)) ? 0 : 1;
    }
    INFO("planted tree " << static_cast<int>(planted) << ": " << differ << " of 1093 sums differ");
    CHECK(differ > 100);
  }
}

TEST_CASE("block reduce: W column sums at once, each column its own canonical tree", "[ch13]") {
  for (const int64_t W : {int64_t{1}, int64_t{5}, int64_t{32}})
    for (const std::size_t n : {std::size_t{0}, std::size_t{7}, std::size_t{8}, std::size_t{129}, std::size_t{1031}}) {
      const auto x = leaves(n * static_cast<std::size_t>(W), static_cast<uint32_t>(n + 7 * W));
      std::vector<float> shared(zt::ops::canonical_sums_floats(W, n)), got(static_cast<std::size_t>(W), -7.0f);
      HostBlock blk(shared.data());
      zt::ops::block_canonical_sums(
          blk, shared.data(), W, n, [&](int64_t c, std::size_t i) { return x[i * W + c]; },
          [&](int64_t c, float s) { got[c] = s; });
      for (int64_t c = 0; c < W; ++c) {
        const float want = zt::kernels::canonical_sum_f(n, [&](std::size_t i) { return x[i * W + c]; });
        INFO("W = " << W << ", n = " << n << ", column " << c);
        REQUIRE(same(want, got[c]));
      }
    }
}

TEST_CASE("block reduce: the first maximum is the scan's, signed zeros, infinities and NaN included", "[ch13]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  const auto scan = [](const std::vector<float>& v) {
    float m = -std::numeric_limits<float>::infinity();
    for (const float x : v) m = x > m ? x : m;
    return m;
  };
  std::vector<std::vector<float>> rows = {{},           {nan}, {-inf}, {-inf, nan}, {1.0f, nan, 3.0f}, {-0.0f, 0.0f},
                                          {0.0f, -0.0f}};
  for (const std::size_t n : {std::size_t{129}, std::size_t{300}, std::size_t{1000}}) {
    auto v = leaves(n, 3);
    for (auto& x : v) x = -std::fabs(x);
    v[n - 1] = -0.0f;  // the later zero has the other sign: position decides
    v[n / 3] = 0.0f;
    v[n / 2] = nan;
    rows.push_back(v);
  }
  for (const auto& row : rows) {
    std::vector<float> shared(zt::ops::first_max_floats(kBlockThreads));
    HostBlock blk(shared.data());
    const float got = zt::ops::block_first_max(blk, shared.data(), static_cast<int64_t>(row.size()),
                                               [&](int64_t j) { return row[static_cast<std::size_t>(j)]; });
    INFO("row of " << row.size());
    REQUIRE(same(scan(row), got));
  }
}

TEST_CASE("block launch: each phase runs for every thread before the next begins", "[ch13]") {
  // thread t reads its right neighbour's phase-1 value in phase 2: only a barrier between the two
  // phases makes every read see the written value (NeighbourOp)
  std::vector<int> out(2 * kBlockThreads, -1);
  REQUIRE(zt::device::run_blocks_on_host(NeighbourOp{&out}) == 2);
  for (int64_t b = 0; b < 2; ++b)
    for (uint32_t t = 0; t < kBlockThreads; ++t)
      REQUIRE(out[b * kBlockThreads + t] == static_cast<int>((t + 1) % kBlockThreads + 1000 * b));
}
