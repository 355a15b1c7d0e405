// The canonical aligned pairwise tree: its shape for small n written out by hand, and its
// composition property (blocks of 2^k leaves summed first give the same bits).
#include <catch2/catch.hpp>

#include <string>

#include "reduce/canonical_tree.h"
#include "tree_strings.h"

using zt_test::leaf_name;
using zt_test::paren;

namespace {
std::string shape(std::size_t n) {
  return zt::canonical_reduce(n, leaf_name, [](const std::string& a, const std::string& b) { return paren(a, b); });
}
}  // namespace

TEST_CASE("canonical tree shapes", "[ch4][reduce]") {
  CHECK(shape(1) == "x0");
  CHECK(shape(3) == "((x0+x1)+x2)");
  CHECK(shape(4) == "((x0+x1)+(x2+x3))");
  CHECK(shape(6) == "(((x0+x1)+(x2+x3))+(x4+x5))");
  CHECK(shape(7) == "((((x0+x1)+(x2+x3))+(x4+x5))+x6)");
}

TEST_CASE("streaming accumulator equals the tree", "[ch4][reduce]") {
  for (std::size_t n = 1; n <= 37; ++n) {
    auto merge = [](std::string& l, std::string&& r) { l = paren(l, r); };
    zt::CanonicalAccumulator<std::string, decltype(merge)> acc(merge);
    std::size_t most_live = 0;
    for (std::size_t i = 0; i < n; ++i) {
      acc.push(leaf_name(i));
      most_live = std::max(most_live, acc.live_partials());
    }
    CHECK(most_live <= zt::canonical_max_live_partials(n));
    CHECK(acc.finish() == shape(n));
  }
}

TEST_CASE("tree over N*A leaves = tree over N block sums of A = 2^k", "[ch4][reduce]") {
  // values chosen so that every order of summation gives different bits
  std::vector<float> x;
  for (int i = 0; i < 96; ++i) x.push_back((i % 3 == 0 ? 1e8f : 1.0f) * (i % 2 ? -1.0f : 1.0f) + 0.1f * i);
  for (std::size_t a : {1, 2, 4, 8, 16, 32}) {
    const std::size_t n = x.size() / a;
    std::vector<float> blocks(n);
    for (std::size_t r = 0; r < n; ++r)
      blocks[r] = zt::perfect_tree_reduce(
          r * a, a, [&](std::size_t i) { return x[i]; }, [](float p, float q) { return p + q; });
    CHECK(zt::canonical_sum(blocks) == zt::canonical_sum(x));
  }
}
