// Order matters: on inputs 1e8, 1, -1e8, 1, ... the deterministic all-reduce gives the reference
// tree's bits on every rank, and Gloo's ring (fast mode) gives different bits at N >= 3 at the
// element positions the test names.
#include <catch2/catch.hpp>

#include <sstream>

#include "collective/thread_ranks.h"
#include "reference.h"

using namespace zt;

namespace {

std::vector<float> rank_input(int q, std::size_t count) {
  std::vector<float> x(count);
  for (std::size_t i = 0; i < count; ++i) x[i] = zt_test::order_sensitive_value<float>(q, i);
  return x;
}

std::vector<std::vector<float>> all_reduce_on_threads(int n, ReduceMode mode, std::size_t count) {
  auto group = thread_group(n, mode);
  auto out = run_thread_ranks(n, [&](int r) {
    GlooCollective coll(group.for_rank(r));
    auto x = rank_input(r, count);
    coll.all_reduce(std::span<float>(x));
    return x;
  });
  std::vector<std::vector<float>> results;
  for (auto& o : out) {
    if (!o.ok()) FAIL("rank threw: " << o.error);
    results.push_back(*o.value);
  }
  return results;
}

}  // namespace

TEST_CASE("deterministic all-reduce differs from Gloo's ring where order matters", "[ch4][collective]") {
  const std::size_t count = 64;
  for (int n : {3, 4, 5, 8}) {
    const auto det = all_reduce_on_threads(n, ReduceMode::deterministic, count);
    const auto fast = all_reduce_on_threads(n, ReduceMode::fast, count);
    std::ostringstream where;
    int differ = 0;
    for (std::size_t i = 0; i < count; ++i) {
      std::vector<float> leaves(n);
      for (int q = 0; q < n; ++q) leaves[q] = zt_test::order_sensitive_value<float>(q, i);
      const float ref = zt_test::reference_tree(leaves, [](float a, float b) { return a + b; });
      for (int r = 0; r < n; ++r) REQUIRE(zt_test::same_bits(det[r][i], ref));
      if (!zt_test::same_bits(fast[0][i], ref)) {
        if (differ < 8) where << " [" << i << "] det " << ref << " fast " << fast[0][i];
        ++differ;
      }
    }
    // The positions are printed so a reader can see the rounding at work.
    WARN("N=" << n << ": fast (ring) differs from the canonical tree at " << differ << " of " << count
              << " elements, e.g." << where.str());
    CHECK(differ > 0);
  }
}

TEST_CASE("16-bit accumulation choice changes results where rounding matters", "[ch4][collective]") {
  const int n = 3;
  const std::size_t count = 32;
  std::vector<std::vector<fp16>> per_acc;
  for (Accumulation acc : {Accumulation::fp32, Accumulation::storage}) {
    auto group = thread_group(n);
    group.base.accumulation = acc;
    auto out = run_thread_ranks(n, [&](int r) {
      GlooCollective coll(group.for_rank(r));
      std::vector<fp16> x(count);
      for (std::size_t i = 0; i < count; ++i) x[i] = fp16(zt_test::order_sensitive_value<fp16>(r, i));
      coll.all_reduce(std::span<fp16>(x));
      return x;
    });
    REQUIRE(out[0].ok());
    per_acc.push_back(*out[0].value);
  }
  int differ = 0;
  for (std::size_t i = 0; i < count; ++i) differ += per_acc[0][i].bits != per_acc[1][i].bits;
  CHECK(differ > 0);
}
