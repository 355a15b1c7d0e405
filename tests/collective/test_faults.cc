// Failure behaviour: a rank that throws, never joins, skips or stalls makes every other rank fail
// with a clear zt::Error within the timeout; bad sizes, world size 0 and a rank out of range are
// errors at the call. Ranks are ordered by latches, never by sleeping; a stall is detected no
// earlier than the timeout, and the only upper bounds on wall time (kHang) catch a hang.
#include <catch2/catch.hpp>

#include <chrono>
#include <latch>
#include <optional>
#include <thread>

#include "collective/thread_ranks.h"
#include "fault_timing.h"

using namespace zt;
using zt_test::Clock;
using zt_test::contains;
using zt_test::kHang;
using zt_test::kShort;
using zt_test::seconds_since;

TEST_CASE("a rank that throws before a collective fails the others quickly", "[ch5][collective][fault]") {
  const int n = 3;
  auto group = thread_group(n, ReduceMode::deterministic, kShort);
  const auto t0 = Clock::now();
  // every rank finishes rendezvous first (a latch, not a collective): otherwise rank 2 could
  // close its connections while a peer is still completing its side of the mesh, and that peer
  // would fail in its constructor rather than in the all-reduce this test is about
  std::latch connected(n);
  auto out = run_thread_ranks(n, [&](int r) {
    std::optional<GlooCollective> coll;
    try {
      coll.emplace(group.for_rank(r));
    } catch (...) {
      connected.count_down();  // never leave the others waiting on the latch
      throw;
    }
    connected.arrive_and_wait();
    if (r == 2) throw std::runtime_error("rank 2 gives up");  // its Collective closes on unwind
    std::vector<float> x(100, 1.0f);
    coll->all_reduce(std::span<float>(x));
  });
  const double took = seconds_since(t0);
  CHECK(out[2].error == "rank 2 gives up");
  for (int r : {0, 1}) {
    INFO(out[r].error);
    CHECK_FALSE(out[r].ok());
    CHECK(contains(out[r].error, "all_reduce #0 on rank " + std::to_string(r) + " of 3"));
  }
  CHECK(took < kHang);  // only guards against a hang
}

TEST_CASE("a rank that never joins makes rendezvous fail within the timeout", "[ch5][collective][fault]") {
  const int n = 3;
  auto group = thread_group(n, ReduceMode::deterministic, kShort);
  const auto t0 = Clock::now();
  auto out = run_thread_ranks(n, [&](int r) {
    if (r == 1) return;  // never constructs its Collective
    GlooCollective coll(group.for_rank(r));
    coll.barrier();
  });
  const double took = seconds_since(t0);
  CHECK(out[1].ok());
  for (int r : {0, 2}) {
    INFO(out[r].error);
    CHECK_FALSE(out[r].ok());
    CHECK(contains(out[r].error, "rendezvous failed for rank " + std::to_string(r) + " of 3"));
  }
  CHECK(took < kHang);  // only guards against a hang
}

TEST_CASE("a rank that skips a collective is detected by the call check", "[ch5][collective][fault]") {
  const int n = 3;
  auto group = thread_group(n, ReduceMode::deterministic, kShort);
  auto out = run_thread_ranks(n, [&](int r) {
    GlooCollective coll(group.for_rank(r));
    std::vector<float> x(10, 1.0f);
    if (r != 1) coll.all_reduce(std::span<float>(x));  // rank 1 skips it ...
    coll.barrier();                                    // ... and goes on to the barrier
  });
  for (int r = 0; r < n; ++r) {
    INFO(out[r].error);
    CHECK(contains(out[r].error, "ranks disagree"));
    CHECK(contains(out[r].error, "rank 1: call #0 barrier"));
    CHECK(contains(out[r].error, "rank 0: call #0 all_reduce(fp32, 10 elements"));
  }
}

TEST_CASE("a stalled rank is named by the others after the timeout", "[ch5][collective][fault]") {
  const int n = 4;
  auto group = thread_group(n, ReduceMode::fast, kShort);
  // rank 3 stalls, alive, until every other rank has given up on it: its connections stay open,
  // so the others can only fail by their timeout (never by a closed connection)
  std::latch others_done(n - 1);
  const auto t0 = Clock::now();
  auto out = run_thread_ranks(n, [&](int r) {
    std::optional<GlooCollective> coll;
    try {
      coll.emplace(group.for_rank(r));
    } catch (...) {
      if (r != 3) others_done.count_down();  // never leave rank 3 waiting
      throw;
    }
    if (r == 3) {
      others_done.wait();  // stalls, alive
      return;
    }
    try {
      std::vector<float> x(10, 1.0f);
      coll->all_reduce(std::span<float>(x));
    } catch (...) {
      others_done.count_down();
      throw;
    }
    others_done.count_down();
  });
  const double took = seconds_since(t0);
  for (int r = 0; r < 3; ++r) {
    INFO(out[r].error);
    CHECK(contains(out[r].error, "all_reduce #0"));
    CHECK(contains(out[r].error, "peer rank(s) 3 did not reach this call (timeout 1500 ms"));
  }
  CHECK(took >= 1.5);   // no earlier than the timeout
  CHECK(took < kHang);  // only guards against a hang
}

TEST_CASE("a rank that dies mid-run fails the others with a closed connection", "[ch5][collective][fault]") {
  const int n = 2;
  auto group = thread_group(n, ReduceMode::deterministic, kShort);
  std::latch rank1_gone(1);  // counted down once rank 1's Collective is destroyed
  const auto t0 = Clock::now();
  auto out = run_thread_ranks(n, [&](int r) {
    std::optional<GlooCollective> coll;
    try {
      coll.emplace(group.for_rank(r));
      std::vector<float> x(1000, 1.0f);
      coll->all_reduce(std::span<float>(x));
      if (r == 1) {
        coll.reset();  // leaves: its Collective is destroyed, its connections closed
        rank1_gone.count_down();
        return;
      }
      rank1_gone.wait();  // rank 0 calls again only once rank 1 has left
      coll->all_reduce(std::span<float>(x));
    } catch (...) {
      if (r == 1) rank1_gone.count_down();  // never leave rank 0 waiting
      throw;
    }
  });
  CHECK(out[1].ok());
  INFO(out[0].error);
  CHECK(contains(out[0].error, "all_reduce #1 on rank 0 of 2"));
  CHECK(seconds_since(t0) < kHang);  // only guards against a hang
}

TEST_CASE("bad sizes, world sizes and ranks are clear errors", "[ch5][collective][fault]") {
  GlooOptions o;
  o.size = 0;
  CHECK_THROWS_WITH(GlooCollective(o), Catch::Contains("world size must be >= 1, got 0"));
  o.size = 4;
  o.rank = 4;
  CHECK_THROWS_WITH(GlooCollective(o), Catch::Contains("rank 4 out of range for world size 4"));
  o.rank = -1;
  CHECK_THROWS_WITH(GlooCollective(o), Catch::Contains("rank -1 out of range"));
  o.rank = 1;
  CHECK_THROWS_WITH(GlooCollective(o), Catch::Contains("no rendezvous store"));

  GlooOptions one;  // a world of one needs no store
  GlooCollective solo(one);
  std::vector<float> in(10), out3(3);
  CHECK_THROWS_WITH(solo.reduce_scatter(std::span<const float>(in), std::span<float>(out3)),
                    Catch::Contains("input has 10 elements, expected 1 x 3"));
  CHECK_THROWS_WITH(solo.broadcast(std::span<float>(in), 1), Catch::Contains("root 1 out of range for 1 ranks"));
  CHECK_THROWS_WITH(solo.reduce_scatter_v(std::span<const float>(in), std::span<float>(out3), {3, 7}),
                    Catch::Contains("2 per-rank counts given for 1 ranks"));
  CHECK_THROWS_WITH(solo.all_gather_v(std::span<const float>(out3), std::span<float>(in), {9}),
                    Catch::Contains("output has 10 elements, counts sum to 9"));
  CHECK_THROWS_WITH(shard_count(10, 4, "bucket"),
                    Catch::Contains("bucket: 10 elements do not split evenly over 4 ranks (pad to padded_count = 12"));
}
