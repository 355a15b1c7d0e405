// Point to point on the Gloo backend: send / recv / p2p_async batches move every dtype exactly
// between any two ranks at N = 2, 3, 4, match the messages of one pair in issue order, count
// their bytes exactly (kind point_to_point), leave the group's collectives in step, work inside
// sub-groups, and fail clearly: a size or type mismatch names both sides, a peer that never sends
// is named after the timeout, a peer that dies during a transfer ends the wait at once, and two
// ranks that send to each other outside one batch are told why they waited. Ranks are threads
// ordered by latches, never by sleeping; the only bound on wall time (kHang) catches a hang.
// (A process that dies during a transfer: test_processes.cc.)
#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <latch>
#include <optional>

#include "collective/thread_ranks.h"
#include "fault_timing.h"

using namespace zt;
using zt_test::Clock;
using zt_test::contains;
using zt_test::kHang;
using zt_test::kShort;
using zt_test::seconds_since;

namespace {

// A bit pattern no other (sender, receiver, message, element) shares, as raw bytes of the dtype:
// what arrives is compared byte for byte, so every bit of every element is checked.
std::vector<unsigned char> pattern(int from, int to, int message, std::size_t count, DType dtype) {
  std::vector<unsigned char> b(count * dtype_size(dtype));
  for (std::size_t i = 0; i < b.size(); ++i)
    b[i] = static_cast<unsigned char>((from * 131 + to * 37 + message * 11 + i * 7 + (i >> 8) * 3) & 0xff);
  return b;
}

// Elements rank `from` sends to rank `to` in the all-pairs test: odd sizes, one empty message.
std::size_t pair_count(int from, int to) { return (from == 1 && to == 0) ? 0 : 97 + 13 * from + 5 * to; }

}  // namespace

TEST_CASE("a batch of sends and receives moves every dtype exactly between all pairs", "[ch5][collective][p2p]") {
  for (int n : {2, 3, 4})
    for (DType dtype : {DType::fp32, DType::fp16, DType::bf16}) {
      INFO("N = " << n << ", " << dtype_name(dtype));
      auto group = thread_group(n, ReduceMode::deterministic, std::chrono::milliseconds(30000));
      struct Out {
        std::vector<std::vector<unsigned char>> got;
        CommStats stats;
      };
      auto out = run_thread_ranks(n, [&](int r) {
        GlooCollective coll(group.for_rank(r));
        std::vector<std::vector<unsigned char>> mine(n), got(n);
        std::vector<P2pOp> ops;
        // receives first on odd ranks, sends first on even ones: order inside a batch is free
        for (int pass = 0; pass < 2; ++pass)
          for (int q = 0; q < n; ++q) {
            if (q == r) continue;
            const bool sends_now = (pass == 0) == (r % 2 == 0);
            if (sends_now) {
              mine[q] = pattern(r, q, 0, pair_count(r, q), dtype);
              ops.push_back(P2pOp::send(mine[q].data(), pair_count(r, q), dtype, q));
            } else {
              got[q].assign(pair_count(q, r) * dtype_size(dtype), 0xEE);
              ops.push_back(P2pOp::recv(got[q].data(), pair_count(q, r), dtype, q));
            }
          }
        coll.p2p_async(ops).wait();
        return Out{got, coll.stats()};
      });
      for (int r = 0; r < n; ++r) {
        INFO("rank " << r << ": " << out[r].error);
        REQUIRE(out[r].ok());
        uint64_t sent = 0, received = 0;
        for (int q = 0; q < n; ++q) {
          if (q == r) continue;
          CHECK(out[r].value->got[q] == pattern(q, r, 0, pair_count(q, r), dtype));
          sent += pair_count(r, q) * dtype_size(dtype);
          received += pair_count(q, r) * dtype_size(dtype);
        }
        const CommStats& s = out[r].value->stats;
        CHECK(s[CollKind::point_to_point].calls == 1);
        CHECK(s[CollKind::point_to_point].bytes_sent == sent);
        CHECK(s[CollKind::point_to_point].bytes_received == received);
        // one 48-byte header per message each way, counted apart from the payload
        CHECK(s[CollKind::call_check].bytes_sent == 48u * (n - 1));
        CHECK(s[CollKind::call_check].bytes_received == 48u * (n - 1));
      }
    }
}

TEST_CASE("the messages of one pair land in issue order, between collectives of the whole group",
          "[ch5][collective][p2p]") {
  // Rank 0 sends three messages to rank 1 in separate calls; rank 1 takes them in one batch of
  // three receives. Then every rank all-reduces, ranks 2 and 3 exchange among themselves, and
  // every rank all-reduces again: the group's call sequence stays in step although only some
  // ranks took part in each transfer. (A transfer occupies the communication thread until it
  // completes, so each receive is posted before its receiver joins the next collective.)
  const int n = 4;
  auto group = thread_group(n);
  auto out = run_thread_ranks(n, [&](int r) {
    GlooCollective coll(group.for_rank(r));
    std::vector<float> x(10, static_cast<float>(r + 1));
    std::vector<std::vector<unsigned char>> got(3);
    if (r == 0) {
      for (int m = 0; m < 3; ++m) {
        const auto msg = pattern(0, 1, m, 50 + m, DType::fp32);
        coll.send_async(msg.data(), 50 + m, DType::fp32, 1).wait();
      }
    }
    if (r == 1) {
      std::vector<P2pOp> ops;
      for (int m = 0; m < 3; ++m) {
        got[m].resize((50 + m) * 4);
        ops.push_back(P2pOp::recv(got[m].data(), 50 + m, DType::fp32, 0));
      }
      coll.p2p_async(ops).wait();
    }
    coll.all_reduce(std::span<float>(x));
    if (r >= 2) {
      std::vector<float> mine(7, static_cast<float>(r)), theirs(7, 0.0f);
      const int peer = 5 - r;
      coll.p2p_async({P2pOp::send(mine.data(), 7, DType::fp32, peer), P2pOp::recv(theirs.data(), 7, DType::fp32, peer)})
          .wait();
      for (float v : theirs)
        if (v != static_cast<float>(peer)) throw Error(concat("rank ", r, " received ", v, " from rank ", peer));
    }
    coll.all_reduce(std::span<float>(x));
    return std::make_pair(got, x);
  });
  for (int r = 0; r < n; ++r) {
    INFO("rank " << r << ": " << out[r].error);
    REQUIRE(out[r].ok());
    // 1+2+3+4 = 10, then 4 × 10 = 40: both all-reduces ran on every rank, in step
    for (float v : out[r].value->second) CHECK(v == 40.0f);
  }
  for (int m = 0; m < 3; ++m) CHECK(out[1].value->first[m] == pattern(0, 1, m, 50 + m, DType::fp32));
}

TEST_CASE("two ranks that send to each other outside one batch are told why they waited",
          "[ch5][collective][p2p][fault]") {
  // A send completes only once its receiver has posted the receive (Gloo's transport, and NCCL's
  // too): two ranks that each send first and receive after both wait, until the timeout names
  // the cause. The same exchange as one batch completes (the all-pairs case above).
  auto group = thread_group(2, ReduceMode::deterministic, kShort);
  auto out = run_thread_ranks(2, [&](int r) {
    GlooCollective coll(group.for_rank(r));
    std::vector<float> mine(16, 1.0f), theirs(16);
    coll.send(std::span<const float>(mine), 1 - r);
    coll.recv(std::span<float>(theirs), 1 - r);
  });
  for (int r = 0; r < 2; ++r) {
    INFO(out[r].error);
    CHECK(out[r].peer_failed);
    CHECK(contains(out[r].error, "send of message #0 to rank " + std::to_string(1 - r)));
  }
  // At least the rank that timed out first says why; the other may learn of it as a closed
  // connection instead.
  CHECK((contains(out[0].error, "is itself sending to this rank outside one batch") ||
         contains(out[1].error, "is itself sending to this rank outside one batch")));
}

TEST_CASE("a pipeline's chain forward and back, on a sub-group", "[ch5][ch11][collective][p2p][groups]") {
  // The shape of a pipeline: stage s receives from s-1, adds its own term, sends to s+1; then the
  // gradient flows back. The stages are a sub-group {1, 3, 0} of a world of 4 (group ranks
  // 0, 1, 2), so peers are numbered in the group, not in the world.
  const int n = 4;
  const std::vector<int> members = {1, 3, 0};
  auto group = thread_group(n);
  auto out = run_thread_ranks(n, [&](int r) {
    GlooCollective world(group.for_rank(r));
    float result = -1.0f;
    if (r == 2) return result;
    auto pp = world.subgroup(members, "pp");
    const int s = pp->rank(), p = pp->size();
    std::vector<float> act(33, 0.0f), grad(33, 0.0f);
    if (s > 0) pp->recv(std::span<float>(act), s - 1);
    for (float& v : act) v += static_cast<float>(s + 1);
    if (s < p - 1) {
      pp->send(std::span<const float>(act), s + 1);
      pp->recv(std::span<float>(grad), s + 1);
    } else {
      for (std::size_t i = 0; i < act.size(); ++i) grad[i] = act[i] * 10.0f;
    }
    if (s > 0) pp->send(std::span<const float>(grad), s - 1);
    result = grad[0];
    return result;
  });
  for (int r = 0; r < n; ++r) {
    INFO("rank " << r << ": " << out[r].error);
    REQUIRE(out[r].ok());
  }
  for (int r : {1, 3, 0}) CHECK(*out[r].value == 60.0f);  // (1 + 2 + 3) × 10 back to every stage
}

TEST_CASE("a receive that expects another size or type names both sides", "[ch5][collective][p2p][fault]") {
  auto group = thread_group(2, ReduceMode::deterministic, kShort);
  auto out = run_thread_ranks(2, [&](int r) {
    GlooCollective coll(group.for_rank(r));
    std::vector<float> x(100, 1.0f);
    if (r == 0) coll.send(std::span<const float>(x), 1);
    if (r == 1) coll.recv(std::span<float>(x.data(), 64), 0);
  });
  INFO(out[1].error);
  CHECK(contains(out[1].error,
                 "p2p #0 on rank 1 of 2: recv of message #0 from rank 0 expects 64 fp32, but rank 0's "
                 "send #0 carries 100 fp32"));
  CHECK_FALSE(out[0].ok());  // its receiver gave up: the send is never taken
}

TEST_CASE("a peer that never sends is named after the timeout", "[ch5][collective][p2p][fault]") {
  auto group = thread_group(3, ReduceMode::deterministic, kShort);
  std::latch failed(1);
  const auto t0 = Clock::now();
  auto out = run_thread_ranks(3, [&](int r) {
    GlooCollective coll(group.for_rank(r));
    std::vector<float> x(10);
    if (r == 0) {
      try {
        coll.recv(std::span<float>(x), 2);
      } catch (...) {
        failed.count_down();
        throw;
      }
    }
    if (r == 2) failed.wait();  // stalls until rank 0 has given up, then leaves normally
  });
  INFO(out[0].error);
  CHECK(out[0].peer_failed);
  CHECK(contains(out[0].error, "recv of message #0 from rank 2 (10 fp32)"));
  CHECK(contains(out[0].error, "rank 2 did not send it within 1500 ms"));
  CHECK(seconds_since(t0) < kHang);
}

TEST_CASE("a peer that dies while its receiver waits ends the wait at once", "[ch5][collective][p2p][fault]") {
  // Rank 1 sends one message, then fails (its connections close as it unwinds) while rank 0 waits
  // for the second: rank 0 learns from the closed connection, long before the 30 s timeout.
  auto group = thread_group(2, ReduceMode::deterministic, std::chrono::milliseconds(30000));
  const auto t0 = Clock::now();
  auto out = run_thread_ranks(2, [&](int r) {
    GlooCollective coll(group.for_rank(r));
    std::vector<float> x(1000, 2.0f);
    if (r == 1) {
      coll.send(std::span<const float>(x), 0);
      throw std::runtime_error("rank 1 gives up");
    }
    coll.recv(std::span<float>(x), 1);
    coll.recv(std::span<float>(x), 1);
  });
  const double took = seconds_since(t0);
  INFO(out[0].error);
  CHECK(out[1].error == "rank 1 gives up");
  CHECK(out[0].peer_failed);
  CHECK(contains(out[0].error, "p2p #1 on rank 0 of 2: recv of message #1 from rank 1"));
  CHECK(contains(out[0].error, "closed its connection"));
  CHECK(took < 30.0);  // the closed connection ended it, not the timeout
}

TEST_CASE("bad point-to-point arguments are clear errors at the call", "[ch5][collective][p2p][fault]") {
  auto group = thread_group(2);
  auto out = run_thread_ranks(2, [&](int r) {
    GlooCollective coll(group.for_rank(r));
    std::vector<float> x(8);
    std::vector<std::string> errors;
    auto error_of = [&](auto&& call) {
      try {
        call();
        errors.push_back("");
      } catch (const Error& e) {
        errors.push_back(e.what());
      }
    };
    error_of([&] { coll.send_async(x.data(), 8, DType::fp32, 2); });
    error_of([&] { coll.send_async(x.data(), 8, DType::fp32, r); });
    error_of([&] { coll.recv_async(nullptr, 8, DType::fp32, 1 - r); });
    error_of([&] {
      coll.p2p_async({P2pOp::recv(x.data(), 8, DType::fp32, 1 - r), P2pOp::send(x.data() + 4, 4, DType::fp32, 1 - r)});
    });
    return errors;
  });
  for (int r = 0; r < 2; ++r) {
    REQUIRE(out[r].ok());
    const auto& e = *out[r].value;
    CHECK(contains(e[0], "send on rank " + std::to_string(r) + ": peer 2 out of range for a group of 2 ranks"));
    CHECK(contains(e[1], "the peer is this rank"));
    CHECK(contains(e[2], "null buffer with 8 elements"));
    CHECK(contains(e[3], "its buffer overlaps another buffer of the same batch"));
  }
}
