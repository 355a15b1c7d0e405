// The device-ready form of the canonical tree (reduce/canonical_tree_hd.h, run here on the host)
// builds the same tree as canonical_reduce, operand for operand: the two trees are spelled out as
// parenthesised strings and compared for every n up to 100.
#include <catch2/catch.hpp>

#include <string>

#include "reduce/canonical_tree.h"
#include "reduce/canonical_tree_hd.h"
#include "tree_strings.h"

namespace {
struct LeafName {
  std::string operator()(std::size_t i) const { return zt_test::leaf_name(i); }
};
struct Paren {
  std::string operator()(const std::string& a, const std::string& b) const { return zt_test::paren(a, b); }
};
}  // namespace

TEST_CASE("the iterative canonical tree has canonical_reduce's shape for n = 1..100", "[ch13][reduce]") {
  int differ = 0;
  for (uint32_t n = 1; n <= 100; ++n) {
    const std::string want = zt::canonical_reduce(n, LeafName{}, Paren{});
    const std::string got = zt::canonical_reduce_hd<std::string>(n, LeafName{}, Paren{});
    if (got != want) {
      ++differ;
      UNSCOPED_INFO("n = " << n << ": " << got << " vs " << want);
    }
  }
  CHECK(differ == 0);
  CHECK(zt::canonical_reduce_hd<std::string>(6, LeafName{}, Paren{}) == "(((x0+x1)+(x2+x3))+(x4+x5))");
}
