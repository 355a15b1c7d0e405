// The engine's buffer schedules (src/schedule) on small hand-checked cases: the bucket rules (last
// bucket first, the ready rule, uneven reduce-scatter counts, the landing) and stage 3's gather
// window (prefetch past persistent units, never past the micro-batch).
#include <catch2/catch.hpp>

#include <vector>

#include "schedule/buckets.h"
#include "schedule/gather_window.h"

using namespace zt;

TEST_CASE("schedule: buckets last first, the ready rule, uneven reduce-scatter counts, the landing", "[ch6]") {
  const schedule::UnitBuckets b = schedule::unit_buckets(10, 4);
  REQUIRE(b.issue_order.size() == 3);
  CHECK(b.bucket == 4);
  CHECK((b.issue_order[0].begin == 8 && b.issue_order[0].end == 10));  // the last, shorter bucket first
  CHECK((b.issue_order[1].begin == 4 && b.issue_order[1].end == 8));
  CHECK((b.issue_order[2].begin == 0 && b.issue_order[2].end == 4));
  // a bucket may go once every element from its start on is final
  CHECK(schedule::buckets_ready(b, 10) == 0);
  CHECK(schedule::buckets_ready(b, 9) == 0);
  CHECK(schedule::buckets_ready(b, 8) == 1);
  CHECK(schedule::buckets_ready(b, 5) == 1);
  CHECK(schedule::buckets_ready(b, 4) == 2);
  CHECK(schedule::buckets_ready(b, 0) == 3);
  // C_B: kBucketsInFlight consecutive buckets at most, never more than that many whole buckets
  CHECK(schedule::kBucketsInFlight == 2);
  CHECK(schedule::bucket_window(b) == 8);
  CHECK(schedule::bucket_window(b) <= schedule::kBucketsInFlight * b.bucket);
  for (std::size_t bucket : {std::size_t{0}, std::size_t{10}, std::size_t{100}}) {  // one bucket: the unit
    const schedule::UnitBuckets one = schedule::unit_buckets(10, bucket);
    REQUIRE(one.issue_order.size() == 1);
    CHECK((one.issue_order[0].begin == 0 && one.issue_order[0].end == 10));
    CHECK(schedule::bucket_window(one) == 10);
  }
  // [3, 9) over shards of 4 on 3 ranks: rank 0 gets [3, 4), rank 1 [4, 8), rank 2 [8, 9)
  const schedule::Range r{3, 9};
  for (std::size_t rank = 0; rank < 3; ++rank) {
    const auto s = schedule::reduce_scatter_counts(r, 4, 3, rank);
    CHECK(s.counts == std::vector<std::size_t>{1, 4, 1});
    CHECK(s.at == (rank == 0 ? 3 : 0));
  }
  const auto none = schedule::reduce_scatter_counts({5, 6}, 4, 3, 0);  // nothing of it in rank 0's shard
  CHECK(none.counts == std::vector<std::size_t>{0, 1, 0});
  CHECK(none.at == 0);
  CHECK(schedule::landing(true, true) == schedule::Landing::wire16_shard);
  CHECK(schedule::landing(true, false) == schedule::Landing::leaf32_shard);
  CHECK(schedule::landing(false, true) == schedule::Landing::all_reduce_unit16);
  CHECK(schedule::landing(false, false) == schedule::Landing::all_reduce_unit32);
}

TEST_CASE("schedule: the gather window looks past persistent units and ends with the micro-batch", "[ch7]") {
  // units 0, 2, 3 sharded, unit 1 persistent; the tied unit 0 comes back at the end
  const std::vector<std::size_t> order{0, 1, 2, 3, 0};
  const std::vector<bool> sharded{true, false, true, true};
  const schedule::GatherWindow w1 = schedule::gather_window(order, sharded, 1);
  CHECK(w1.units == std::vector<std::size_t>{0, 2, 3, 0});
  CHECK(w1.gathers_before == std::vector<std::size_t>{0, 1, 1, 2, 3});
  CHECK(w1.gathers == std::vector<bool>{true, false, true, true, true});
  CHECK(w1.issued == std::vector<std::size_t>{2, 2, 3, 4, 4});  // the persistent use issues nothing new
  CHECK(schedule::gather_window(order, sharded, 0).issued == std::vector<std::size_t>{1, 1, 2, 3, 4});
  CHECK(schedule::gather_window(order, sharded, 9).issued == std::vector<std::size_t>{4, 4, 4, 4, 4});
  // each unit released before the next acquire: the window is the use and the one gathered ahead
  const std::vector<std::size_t> elements{10, 20, 30, 40};
  CHECK(schedule::gathered_window_peak(w1, {0, 1, 2, 3, 4}, elements) == 30 + 40);
  // units 2 and 3 held together (one split block): 2's gather is still live at 3's acquire
  CHECK(schedule::gathered_window_peak(w1, {0, 1, 2, 2, 4}, elements) == 30 + 40 + 10);
}
