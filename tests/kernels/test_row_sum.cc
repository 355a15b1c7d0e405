// The row-sum adapters of kernels/row_sum.h give exactly reduce/canonical_tree.h's sums.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <vector>

#include "kernels/row_sum.h"

TEST_CASE("canonical_sum_f equals canonical_reduce bitwise for every n", "[ch2][kernels][sum]") {
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(1100);
  for (auto& v : x) v = dist(gen) * (1 << (gen() % 20));  // mixed magnitudes: order matters
  for (std::size_t n = 1; n <= x.size(); ++n) {
    const float fast = zt::kernels::canonical_sum_f(n, [&](std::size_t i) { return x[i]; });
    const float ref = zt::canonical_reduce(
        n, [&](std::size_t i) { return x[i]; }, [](float a, float b) { return a + b; });
    REQUIRE(std::memcmp(&fast, &ref, sizeof(float)) == 0);
  }
}

TEST_CASE("canonical_rows_sum_inplace sums rows along the canonical tree", "[ch2][kernels][sum]") {
  std::mt19937 gen(2);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const int rows = 13, cols = 5;
  std::vector<float> x(rows * cols);
  for (auto& v : x) v = dist(gen) * (1 << (gen() % 20));
  const std::vector<float> keep = x;
  const float* s = zt::kernels::canonical_rows_sum_inplace(x.data(), cols, cols, rows, [](std::size_t i) { return i; });
  for (int c = 0; c < cols; ++c) {
    const float ref = zt::canonical_reduce(
        rows, [&](std::size_t i) { return keep[i * cols + c]; }, [](float a, float b) { return a + b; });
    CHECK(std::memcmp(&s[c], &ref, sizeof(float)) == 0);
  }
}
