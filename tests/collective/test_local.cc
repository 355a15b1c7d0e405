// Local pieces without a network: the blocked in-place canonical reduction against the reference
// tree for 1..17 rows, and the padding helpers' arithmetic.
#include <catch2/catch.hpp>

#include "collective/local_reduce.h"
#include "reference.h"

using namespace zt;

TEST_CASE("reduce_rows_canonical equals the reference tree for 1..17 rows", "[ch4][collective]") {
  const std::size_t n = 2500;  // more than two blocks, not a multiple of the block
  for (std::size_t rows = 1; rows <= 17; ++rows) {
    std::vector<std::vector<float>> data(rows, std::vector<float>(n));
    std::vector<void*> ptrs(rows);
    for (std::size_t q = 0; q < rows; ++q) {
      for (std::size_t i = 0; i < n; ++i) data[q][i] = zt_test::order_sensitive_value<float>(static_cast<int>(q), i);
      ptrs[q] = data[q].data();
    }
    std::vector<float> out(n);
    reduce_rows_canonical(ptrs.data(), rows, out.data(), n, DType::fp32, ReduceOp::sum, Accumulation::fp32);
    int wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<float> leaves(rows);
      for (std::size_t q = 0; q < rows; ++q) leaves[q] = zt_test::order_sensitive_value<float>(static_cast<int>(q), i);
      wrong += !zt_test::same_bits(out[i], zt_test::reference_tree(leaves, [](float a, float b) { return a + b; }));
    }
    INFO(rows << " rows");
    CHECK(wrong == 0);
  }
}

TEST_CASE("max propagates NaN from any rank", "[ch4][collective]") {
  std::vector<float> a{1.0f, NAN, 3.0f}, b{NAN, 2.0f, -1.0f}, c{0.0f, 0.0f, 5.0f};
  void* rows[] = {a.data(), b.data(), c.data()};
  std::vector<float> out(3);
  reduce_rows_canonical(rows, 3, out.data(), 3, DType::fp32, ReduceOp::max, Accumulation::fp32);
  CHECK(std::isnan(out[0]));
  CHECK(std::isnan(out[1]));
  CHECK(out[2] == 5.0f);
}

TEST_CASE("padding helpers are explicit", "[ch4][collective]") {
  CHECK(padded_count(10, 4) == 12);
  CHECK(padding_of(10, 4) == 2);
  CHECK(padded_count(0, 3) == 0);
  CHECK(padded_count(12, 4) == 12);
  CHECK(shard_count(12, 4) == 3);
  CHECK(shard_count_padded(10, 12, 4) == 3);
  CHECK_THROWS_WITH(shard_count_padded(13, 12, 4),
                    Catch::Contains("padded length 12 is smaller than the real length 13"));
  CHECK_THROWS_WITH(shard_count_padded(10, 14, 4), Catch::Contains("14 elements do not split evenly over 4 ranks"));
  CHECK_THROWS_WITH(padded_count(5, 0), Catch::Contains("world size must be >= 1"));
  CHECK(balanced_counts(10, 4) == std::vector<std::size_t>{3, 3, 2, 2});
  CHECK(balanced_counts(2, 4) == std::vector<std::size_t>{1, 1, 0, 0});
  CHECK(offsets_of({3, 0, 2}) == std::vector<std::size_t>{0, 3, 3});
}
