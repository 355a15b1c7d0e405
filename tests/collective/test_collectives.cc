// Every collective at world sizes 1, 2, 3, 4, 5, 8 (ranks as threads), counts 0, 1, N-1 and a
// large odd count, fp32/fp16/bf16, both modes. Expected values: closed forms on inputs whose sums
// are exact in every order, and (deterministic mode) the independent reference tree, bitwise, on
// inputs where the order of summation matters.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "all_cases.h"

using namespace zt;
using zt_test::Bytes;
using zt_test::Case;
using zt_test::kLargeOdd;

namespace {

std::vector<std::string> check_all(int n, ReduceMode mode, Accumulation acc) {
  const std::vector<Case> cases = zt_test::all_cases(n, mode, acc);
  auto group = thread_group(n, mode);
  group.base.accumulation = acc;
  return zt_test::check_cases(group, cases);
}

}  // namespace

TEST_CASE("deterministic collectives match closed forms and the reference tree bitwise", "[ch4][collective]") {
  for (int n : {1, 2, 3, 4, 5, 8}) {
    const auto problems = check_all(n, ReduceMode::deterministic, Accumulation::fp32);
    INFO("world size " << n);
    for (const auto& p : problems) UNSCOPED_INFO(p);
    CHECK(problems.empty());
  }
}

TEST_CASE("deterministic 16-bit sums rounded after every add match the reference", "[ch4][collective]") {
  for (int n : {3, 5, 8}) {
    const auto problems = check_all(n, ReduceMode::deterministic, Accumulation::storage);
    INFO("world size " << n);
    for (const auto& p : problems) UNSCOPED_INFO(p);
    CHECK(problems.empty());
  }
}

TEST_CASE("fast collectives match closed forms on exactly summable inputs", "[ch4][collective]") {
  for (int n : {1, 2, 3, 4, 5, 8}) {
    const auto problems = check_all(n, ReduceMode::fast, Accumulation::fp32);
    INFO("world size " << n);
    for (const auto& p : problems) UNSCOPED_INFO(p);
    CHECK(problems.empty());
  }
}

TEST_CASE("fast all-reduce with Gloo's bcube matches closed forms", "[ch4][collective]") {
  for (int n : {2, 3, 4, 5}) {
    auto group = thread_group(n, ReduceMode::fast);
    group.base.fast_all_reduce = FastAllReduce::bcube;
    auto out = run_thread_ranks(n, [&](int r) {
      GlooCollective coll(group.for_rank(r));
      std::vector<float> x(kLargeOdd);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = zt_test::exact_value(r, i);
      coll.all_reduce(std::span<float>(x));
      return x;
    });
    for (int r = 0; r < n; ++r) {
      INFO("N=" << n << " rank " << r << " " << out[r].error);
      REQUIRE(out[r].ok());
      int wrong = 0;
      for (std::size_t i = 0; i < kLargeOdd; ++i) {
        float want = 0;
        for (int q = 0; q < n; ++q) want += zt_test::exact_value(q, i);
        wrong += (*out[r].value)[i] != want;
      }
      CHECK(wrong == 0);
    }
  }
}
