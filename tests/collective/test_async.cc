// Asynchronous calls run in issue order on the communication thread; wait() returns results and
// rethrows errors; counters follow the documented byte formulas.
#include <catch2/catch.hpp>

#include "collective/thread_ranks.h"

using namespace zt;

TEST_CASE("async calls complete in issue order with correct results", "[ch4][collective]") {
  const int n = 3;
  auto group = thread_group(n);
  auto out = run_thread_ranks(n, [&](int r) {
    GlooCollective coll(group.for_rank(r));
    std::vector<std::vector<float>> bufs(6, std::vector<float>(1000));
    std::vector<Work> works;
    for (std::size_t k = 0; k < bufs.size(); ++k) {
      for (auto& v : bufs[k]) v = static_cast<float>(r + 1) * static_cast<float>(k + 1);
      works.push_back(coll.all_reduce_async(std::span<float>(bufs[k])));
    }
    for (auto it = works.rbegin(); it != works.rend(); ++it) it->wait();  // any order of waiting
    return bufs;
  });
  for (int r = 0; r < n; ++r) {
    REQUIRE(out[r].ok());
    for (std::size_t k = 0; k < 6; ++k)
      for (float v : (*out[r].value)[k]) CHECK(v == 6.0f * static_cast<float>(k + 1));  // (1+2+3)(k+1)
  }
}

TEST_CASE("an async error is rethrown by wait() and breaks the instance", "[ch4][collective]") {
  const int n = 2;
  auto group = thread_group(n);
  auto out = run_thread_ranks(n, [&](int r) {
    GlooCollective coll(group.for_rank(r));
    std::vector<float> x(r == 0 ? 10 : 11, 1.0f);  // mismatched sizes
    Work w = coll.all_reduce_async(std::span<float>(x));
    std::string first, second;
    try {
      w.wait();
    } catch (const zt::Error& e) {
      first = e.what();
    }
    try {
      coll.barrier();
    } catch (const zt::Error& e) {
      second = e.what();
    }
    return std::make_pair(first, second);
  });
  for (int r = 0; r < n; ++r) {
    REQUIRE(out[r].ok());
    const auto& [first, second] = *out[r].value;
    INFO(first);
    CHECK(first.find("all_reduce #0") != std::string::npos);
    CHECK(first.find("disagree") != std::string::npos);
    CHECK(first.find("10 elements") != std::string::npos);
    CHECK(first.find("11 elements") != std::string::npos);
    CHECK(second.find("failed earlier") != std::string::npos);
  }
}

TEST_CASE("byte counters follow the algorithms' message sizes", "[ch4][collective]") {
  const int n = 4;
  const std::size_t shard = 1000, S = n * shard * sizeof(float);
  for (ReduceMode mode : {ReduceMode::deterministic, ReduceMode::fast}) {
    auto group = thread_group(n, mode);
    auto out = run_thread_ranks(n, [&](int r) {
      GlooCollective coll(group.for_rank(r));
      std::vector<float> full(n * shard, 1.0f), part(shard, 1.0f);
      coll.all_reduce(std::span<float>(full));
      coll.reduce_scatter(std::span<const float>(full), std::span<float>(part));
      coll.all_gather(std::span<const float>(part), std::span<float>(full));
      coll.broadcast(std::span<float>(full), 0);
      return coll.stats();
    });
    for (int r = 0; r < n; ++r) {
      REQUIRE(out[r].ok());
      const CommStats& s = *out[r].value;
      INFO("mode " << reduce_mode_name(mode) << " rank " << r);
      // all-reduce: 2(N-1)/N S both ways (all-to-all + ring all-gather, or Gloo's ring).
      CHECK(s[CollKind::all_reduce].calls == 1);
      CHECK(s[CollKind::all_reduce].bytes_sent == 2 * (S - S / n));
      CHECK(s[CollKind::all_reduce].bytes_received == 2 * (S - S / n));
      // reduce-scatter and all-gather: (N-1)/N S.
      CHECK(s[CollKind::reduce_scatter].bytes_sent == S - S / n);
      CHECK(s[CollKind::reduce_scatter].bytes_received == S - S / n);
      CHECK(s[CollKind::all_gather].bytes_sent == S - S / n);
      CHECK(s[CollKind::all_gather].bytes_received == S - S / n);
      // broadcast from 0 over 4 ranks (binomial tree): rank 0 sends to 1 and 2, rank 1 to 3.
      const uint64_t sends[] = {2, 1, 0, 0};
      CHECK(s[CollKind::broadcast].bytes_sent == sends[r] * S);
      CHECK(s[CollKind::broadcast].bytes_received == (r == 0 ? 0 : S));
      // every call exchanged one 48-byte header with each of the N-1 peers
      CHECK(s[CollKind::call_check].bytes_sent == 4 * 48 * (n - 1));
    }
  }
}

TEST_CASE("repeated fast reduce-scatter of one shape reuses Gloo's object correctly", "[ch4][collective]") {
  const int n = 4;
  const std::size_t shard = 257;
  auto group = thread_group(n, ReduceMode::fast);
  auto out = run_thread_ranks(n, [&](int r) {
    GlooCollective coll(group.for_rank(r));
    std::vector<std::vector<float>> results;
    for (int round = 0; round < 3; ++round) {
      std::vector<float> in(n * shard), part(shard);
      for (std::size_t i = 0; i < in.size(); ++i)
        in[i] = static_cast<float>((r + 1) * (round + 1) + static_cast<int>(i % 5));
      coll.reduce_scatter(std::span<const float>(in), std::span<float>(part));
      results.push_back(part);
    }
    return results;
  });
  for (int r = 0; r < n; ++r) {
    INFO("rank " << r << ": " << out[r].error);
    REQUIRE(out[r].ok());
    for (int round = 0; round < 3; ++round) {
      int wrong = 0;
      for (std::size_t i = 0; i < shard; ++i) {
        const float want = static_cast<float>(10 * (round + 1) + n * static_cast<int>((r * shard + i) % 5));
        wrong += (*out[r].value)[round][i] != want;
      }
      INFO("rank " << r << " round " << round);
      CHECK(wrong == 0);
    }
  }
}
