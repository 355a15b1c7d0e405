// The engine's buffer schedules (src/schedule) and the chapters' closed forms computed from them:
// the bucket rules and the gather window on small hand-checked cases, then over a grid of plans
// (stages 2 and 3, --prefetch 0-3, buckets smaller and larger than units, fp32/fp16/bf16, both
// reduce dtypes, 1-4 micro-batches per rank, 1-4 ranks, persistent units, split blocks, overlap on
// and off) C_B's bucket buffers and stage 3's gathered window equal the peaks read off the
// predicted trace, and the persistent categories' closed forms equal the trace's too. The trace
// itself is compared with the engine's --memory-trace elsewhere (tests/plan/check_plan.py); these
// cases build plans only, no run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "memory/arena.h"
#include "predict/zero_memory.h"
#include "predict/zero_trace.h"
#include "schedule/buckets.h"
#include "schedule/gather_window.h"
#include "train/heldout.h"
#include "zero/zero_fixtures.h"

using namespace zt;
using namespace zt::test;

namespace {

std::size_t peak_of(const std::map<std::string, std::size_t>& peaks, const std::string& category) {
  const auto it = peaks.find(category);
  return it == peaks.end() ? 0 : it->second;
}

/// Every rank's plan of every configuration of the grid, with its predicted trace's category peaks.
void for_each_plan(int stage, const std::function<void(const train::TrainConfig&, const zero::ZeroPlan&,
                                                       const std::map<std::string, std::size_t>&)>& check) {
  const int64_t vocab = addition_for(zero_config(stage, 1, 1, "fp32"))->vocab_size();
  // stage 3's own axes: prefetch, persistent units, a block split in units acquired together
  const int prefetch_max = stage == 3 ? 3 : 0;
  const std::vector<bool> persists = stage == 3 ? std::vector<bool>{false, true} : std::vector<bool>{false};
  const std::vector<int64_t> blocks_axis = stage == 3 ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{1};
  for (int world = 1; world <= 4; ++world)
    for (int per_rank = 1; per_rank <= 4; ++per_rank)
      for (const char* precision : {"fp32", "fp16", "bf16"})
        for (const char* reduce : {"compute", "fp32"})
          for (double bucket_mb : {0.001, 100.0})  // smaller than a block's unit, larger than every unit
            for (int prefetch = 0; prefetch <= prefetch_max; ++prefetch)
              for (bool persist : persists)
                for (int64_t blocks : blocks_axis)
                  for (bool overlap : {true, false}) {
                    auto c = zero_config(stage, world, per_rank, precision);
                    c.layers = 2;
                    c.reduce_dtype = word<train::ReduceDtype>(reduce);
                    c.bucket_mb = bucket_mb;
                    c.prefetch = prefetch;
                    c.mp_blocks = blocks;
                    c.overlap = overlap;
                    if (persist) c.persist_below_mb = persist_all_but_largest(c);
                    for (int r = 0; r < world; ++r) {
                      const zero::ZeroPlan p = zero::make_zero_plan(c, vocab, r);
                      const auto rounds = static_cast<std::size_t>(train::heldout_rounds(c.micro_batch));
                      INFO("stage " << stage << " N " << world << " A " << per_rank << " " << precision << " reduce "
                                    << reduce << " bucket " << bucket_mb << " MiB, prefetch " << prefetch
                                    << (persist ? ", persistent units" : "") << ", blocks " << blocks << ", overlap "
                                    << overlap << ", rank " << r);
                      check(c, p, ledger_peaks(predict::predicted_trace(p, overlap, rounds)));
                    }
                  }
}

}  // namespace

TEST_CASE("schedule: buckets last first, the ready rule, uneven reduce-scatter counts, the landing", "[ch7]") {
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

TEST_CASE("schedule: the gather window looks past persistent units and ends with the micro-batch", "[ch9]") {
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

TEST_CASE("stage-3 gathered window: the closed form equals the predicted trace's peak over a grid", "[ch9]") {
  for_each_plan(3, [](const train::TrainConfig& c, const zero::ZeroPlan& p, const auto& peaks) {
    CHECK(predict::gathered_window_bytes(p) == peak_of(peaks, zero::zero_category::gathered_params));
    // the chapter's bound where one unit is in use at a time (a whole block): it and --prefetch ahead
    std::size_t largest = 0;
    for (const auto& u : p.layout.units) largest = std::max(largest, u.full);
    if (c.resolved_mp_blocks() == 1)
      CHECK(predict::gathered_window_bytes(p) <= (1 + p.prefetch) * largest * model::bytes_of(p.shape.precision));
  });
}

TEST_CASE("C_B: the bucket buffers' closed form equals the predicted trace's peak over a grid", "[ch12]") {
  for (int stage : {2, 3})
    for_each_plan(stage, [](const train::TrainConfig&, const zero::ZeroPlan& p, const auto& peaks) {
      const predict::ReductionBuffers cb = predict::reduction_buffers_peak(p);
      REQUIRE(cb.category.empty() == (p.layout.world_size == 1));  // stages 2-3 reduce every micro-batch
      if (!cb.category.empty()) CHECK(cb.bytes == peak_of(peaks, cb.category));
      // the chapter's statement: FP32 buckets landing in the accumulator take at most 2 × --bucket-mb
      if (p.landing == schedule::Landing::leaf32_shard && p.bucket_elements)
        CHECK(cb.bytes <= schedule::kBucketsInFlight * p.bucket_elements * 4);
      for (const auto& b : p.buckets) {  // never more than kBucketsInFlight buckets of --bucket-mb
        CHECK(schedule::bucket_window(b) <= schedule::kBucketsInFlight * b.bucket);
        if (p.bucket_elements) CHECK(b.bucket == p.bucket_elements);
      }
    });
}

TEST_CASE("persistent categories: the sharding description's closed forms equal the predicted trace's peaks", "[ch7]") {
  for (int stage : {2, 3})
    for_each_plan(stage, [](const train::TrainConfig& c, const zero::ZeroPlan& p, const auto& peaks) {
      const auto rounds = static_cast<std::size_t>(train::heldout_rounds(c.micro_batch));
      const auto predicted = predict::predict_zero_memory(p, c.overlap, rounds);
      // S_g: the gradient storage's formula is what the step's accumulators hold at its end
      CHECK(predicted.at(train::category::grads) == peak_of(peaks, train::category::grads));
      for (const auto& a : predict::setup_allocations(p)) {
        INFO(a.category);
        CHECK(predicted.at(a.category) == peak_of(peaks, a.category));
      }
      // every transient category is the trace's, none is left out
      for (const auto& [category, bytes] : peaks) CHECK(predicted.at(category) == bytes);
    });
}
