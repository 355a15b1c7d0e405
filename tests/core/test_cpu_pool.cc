// The rank's thread pool (core/cpu_pool.h): every item of a loop runs exactly once, in the part
// the partition formula names; the lowest failing part's exception reaches the caller after every
// part has finished; a loop inside a loop runs inline; no pool, or one thread, means the caller
// runs the whole loop. None of these tests waits on a clock.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/cpu_pool.h"

namespace {

// Part p of [0, n) in `parts` ranges, as the header documents it.
int64_t begin_of(int64_t n, int parts, int p) { return n * p / parts; }

}  // namespace

TEST_CASE("cpu pool: every item once, in the range the partition formula names", "[ch1]") {
  for (const int threads : {1, 2, 3, 4, 7}) {
    zt::CpuPool pool(threads, zt::CpuPool::Split::every_loop);
    zt::UseCpuPool use(&pool);
    for (const int64_t n : {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{7}, int64_t{64}, int64_t{1001}}) {
      std::vector<std::atomic<int>> seen(static_cast<std::size_t>(n));
      std::vector<std::pair<int64_t, int64_t>> ranges;
      std::mutex mu;
      zt::parallel_for(n, 1, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) seen[static_cast<std::size_t>(i)]++;
        std::lock_guard<std::mutex> lock(mu);
        ranges.emplace_back(lo, hi);
      });
      for (const auto& s : seen) CHECK(s.load() == 1);
      const int parts = static_cast<int>(std::min<int64_t>(n, threads));
      REQUIRE(static_cast<int>(ranges.size()) == parts);
      std::sort(ranges.begin(), ranges.end());
      for (int p = 0; p < parts; ++p) {
        CHECK(ranges[static_cast<std::size_t>(p)].first == begin_of(n, parts, p));
        CHECK(ranges[static_cast<std::size_t>(p)].second == begin_of(n, parts, p + 1));
      }
    }
  }
}

TEST_CASE("cpu pool: the grain bounds the parts; no pool runs the loop on the caller", "[ch1]") {
  std::vector<std::thread::id> ids;
  const auto record = [&](int64_t, int64_t) { ids.push_back(std::this_thread::get_id()); };
  zt::parallel_for(1000, 1, record);  // no pool installed
  REQUIRE(ids.size() == 1);
  CHECK(ids[0] == std::this_thread::get_id());
  zt::CpuPool pool(4);
  zt::UseCpuPool use(&pool);
  CHECK(zt::parallel_parts(1000, 1) == 4);
  CHECK(zt::parallel_parts(1000, 400) == 2);  // two parts of >= 400 items
  CHECK(zt::parallel_parts(1000, 1000) == 1);
  CHECK(zt::parallel_parts(3, 1) == 3);
  {
    zt::UseCpuPool none(nullptr);
    CHECK(zt::parallel_parts(1000, 1) == 1);
  }
  CHECK(zt::current_cpu_pool() == &pool);  // restored
}

TEST_CASE("cpu pool: a loop inside a loop runs inline on the thread that reached it", "[ch1]") {
  zt::CpuPool pool(3, zt::CpuPool::Split::every_loop);
  zt::UseCpuPool use(&pool);
  std::atomic<int> inner_items{0}, inner_parts{0};
  zt::parallel_for(6, 1, [&](int64_t lo, int64_t hi) {
    CHECK(zt::inside_parallel_for());
    for (int64_t i = lo; i < hi; ++i)
      zt::parallel_for(10, 1, [&](int64_t a, int64_t b) {
        inner_parts++;
        inner_items += static_cast<int>(b - a);
      });
  });
  CHECK(!zt::inside_parallel_for());
  CHECK(inner_items.load() == 60);
  CHECK(inner_parts.load() == 6);  // one part per inner loop
}

TEST_CASE("cpu pool: the lowest failing part's exception, after every part has finished", "[ch1]") {
  zt::CpuPool pool(4, zt::CpuPool::Split::every_loop);
  zt::UseCpuPool use(&pool);
  std::atomic<int> finished{0};
  try {
    zt::parallel_for(4, 1, [&](int64_t lo, int64_t) {
      finished++;
      if (lo >= 2) throw std::runtime_error("part starting at " + std::to_string(lo));
    });
    FAIL("no exception");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "part starting at 2");
  }
  CHECK(finished.load() == 4);
  // the pool is usable after a failed loop
  std::atomic<int64_t> sum{0};
  zt::parallel_for(100, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) sum += i;
  });
  CHECK(sum.load() == 4950);
}

TEST_CASE("cpu pool: many short loops in a row lose no wake-up", "[ch1]") {
  zt::CpuPool pool(3, zt::CpuPool::Split::every_loop);
  zt::UseCpuPool use(&pool);
  std::vector<int64_t> out(3);
  for (int round = 0; round < 2000; ++round) {
    zt::parallel_for(3, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) out[static_cast<std::size_t>(i)] = round + i;
    });
    REQUIRE(out[0] == round);
    REQUIRE(out[2] == round + 2);
  }
}

TEST_CASE("cpu pool: ranks as threads each install a pool of their own", "[ch1]") {
  std::vector<std::thread> ranks;
  std::atomic<int> good{0};
  for (int r = 0; r < 3; ++r)
    ranks.emplace_back([&, r] {
      zt::CpuPool pool(2 + r, zt::CpuPool::Split::every_loop);
      zt::UseCpuPool use(&pool);
      std::atomic<int64_t> items{0};
      for (int k = 0; k < 200; ++k) zt::parallel_for(50, 1, [&](int64_t lo, int64_t hi) { items += hi - lo; });
      if (items.load() == 200 * 50 && zt::current_cpu_pool() == &pool) good++;
    });
  for (auto& t : ranks) t.join();
  CHECK(good.load() == 3);
  CHECK(zt::current_cpu_pool() == nullptr);
}

TEST_CASE("cpu pool: a rank gets at least one thread by default", "[ch1]") {
  CHECK(zt::default_cpu_threads(1) >= 1);
  CHECK(zt::default_cpu_threads(1 << 20) == 1);
  CHECK(zt::default_cpu_threads(2) == std::max(1, zt::default_cpu_threads(1) / 2));
  CHECK_THROWS(zt::CpuPool(0));
}
