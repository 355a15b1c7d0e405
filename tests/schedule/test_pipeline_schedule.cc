// The pipeline schedules as data (schedule/pipeline.h) against their closed forms: the balanced
// split and --pp-split's errors; every stage runs each micro-batch's forward before its backward,
// once each, backwards in micro-batch order (what keeps the gradient sum one device's); the peak
// of activations in flight is M for GPipe and min(P - s, M) for 1F1B; the timeline of both
// schedules ends at (M + P - 1)(t_f + t_b), so the bubble is (P - 1)/(M + P - 1) — checked
// exactly, in integers: the pass times are small integers and every sum of them is exact in a
// double, so idle time x (M + P - 1) == (P - 1) x P x makespan holds with no tolerance.
#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <string>

#include "core/check.h"
#include "schedule/pipeline.h"

using namespace zt;
using namespace zt::schedule;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// A time on the timeline as an integer; CHECKs that it is one (every sum of integer pass times
/// is exact in a double).
int64_t as_integer(double x) {
  const auto i = static_cast<int64_t>(x);
  CHECK(static_cast<double>(i) == x);
  return i;
}

}  // namespace

TEST_CASE("the balanced split and --pp-split", "[ch15][pipeline]") {
  CHECK(balanced_split(6, 2) == std::vector<int>{3, 3});
  CHECK(balanced_split(7, 3) == std::vector<int>{3, 2, 2});
  CHECK(balanced_split(5, 4) == std::vector<int>{2, 1, 1, 1});
  CHECK(balanced_split(4, 1) == std::vector<int>{4});
  CHECK(split_offsets({3, 2, 2}) == std::vector<int>{0, 3, 5, 7});
  CHECK(parse_pipe_split("1,4,2", 7, 3) == std::vector<int>{1, 4, 2});
  CHECK(contains(error_of([] { balanced_split(4, 5); }), "--pp-size 5 is larger than the model's 4 blocks"));
  CHECK(contains(error_of([] { balanced_split(4, 0); }), "--pp-size must be >= 1"));
  CHECK(
      contains(error_of([] { parse_pipe_split("3,3", 7, 2); }), "--pp-split: '3,3' sums to 6 blocks, the model has 7"));
  CHECK(contains(error_of([] { parse_pipe_split("3,3,1", 7, 2); }), "gives 3 stages, --pp-size is 2"));
  CHECK(contains(error_of([] { parse_pipe_split("7,0", 7, 2); }), "stage 1 gets 0 blocks"));
  CHECK(contains(error_of([] { parse_pipe_split("3,x", 7, 2); }), "'x' in '3,x' is not a block count"));
  CHECK(contains(error_of([] { check_micro_batches(3, 4); }), "--pp-size 4 needs at least 4 micro-batches per step"));
  CHECK(error_of([] { check_micro_batches(4, 4); }).empty());
  CHECK(parse_word<PipeSchedule>("1f1b", "--pp-schedule") == PipeSchedule::one_f_one_b);
  CHECK(contains(error_of([] { parse_word<PipeSchedule>("zb", "--pp-schedule"); }),
                 "--pp-schedule: 'zb' is not one of gpipe|1f1b"));
}

TEST_CASE("1F1B's order on a small pipeline, by hand", "[ch15][pipeline]") {
  using K = PipeOp::Kind;
  // P = 3, M = 4: stage 0 warms up with 2 forwards, stage 2 (the last) alternates from the start.
  CHECK(stage_order(PipeSchedule::one_f_one_b, 3, 0, 4) == std::vector<PipeOp>{{K::forward, 0},
                                                                               {K::forward, 1},
                                                                               {K::forward, 2},
                                                                               {K::backward, 0},
                                                                               {K::forward, 3},
                                                                               {K::backward, 1},
                                                                               {K::backward, 2},
                                                                               {K::backward, 3}});
  CHECK(stage_order(PipeSchedule::one_f_one_b, 3, 2, 4) == std::vector<PipeOp>{{K::forward, 0},
                                                                               {K::backward, 0},
                                                                               {K::forward, 1},
                                                                               {K::backward, 1},
                                                                               {K::forward, 2},
                                                                               {K::backward, 2},
                                                                               {K::forward, 3},
                                                                               {K::backward, 3}});
  CHECK(stage_order(PipeSchedule::gpipe, 3, 1, 2) ==
        std::vector<PipeOp>{{K::forward, 0}, {K::forward, 1}, {K::backward, 0}, {K::backward, 1}});
}

TEST_CASE("every schedule's orders, in-flight peaks and bubble match the closed forms", "[ch15][pipeline]") {
  using K = PipeOp::Kind;
  for (PipeSchedule sched : {PipeSchedule::gpipe, PipeSchedule::one_f_one_b})
    for (int p : {1, 2, 3, 4, 8})
      for (int m : {1, 2, 3, 4, 8, 16}) {
        INFO(word_of(sched) << " P = " << p << " M = " << m);
        for (int s = 0; s < p; ++s) {
          const auto order = stage_order(sched, p, s, m);
          REQUIRE(order.size() == static_cast<std::size_t>(2 * m));
          std::vector<int> forward_at(m, -1), backward_at(m, -1);
          int next_backward = 0;
          for (std::size_t i = 0; i < order.size(); ++i) {
            auto& at = order[i].kind == K::forward ? forward_at : backward_at;
            CHECK(at[order[i].micro] == -1);  // once each
            at[order[i].micro] = static_cast<int>(i);
            if (order[i].kind == K::backward) CHECK(order[i].micro == next_backward++);  // in micro-batch order
          }
          for (int i = 0; i < m; ++i) CHECK(forward_at[i] < backward_at[i]);
          CHECK(peak_in_flight(order) == (sched == PipeSchedule::gpipe ? m : std::min(p - s, m)));
        }
        for (auto [tf, tb] : {std::pair{1, 2}, std::pair{1, 1}, std::pair{3, 5}}) {
          const PipeTimeline t = simulate(sched, p, m, tf, tb);
          const int64_t makespan = as_integer(t.makespan);
          CHECK(makespan == int64_t{m + p - 1} * (tf + tb));
          // idle = P·makespan - busy, busy summed from the spans: the closed form's bubble
          // (P-1)/(M+P-1) as the integer identity idle·(M+P-1) == (P-1)·P·makespan
          int64_t busy = 0;
          for (int s = 0; s < p; ++s) {
            CHECK(t.stages[s].size() == static_cast<std::size_t>(2 * m));
            for (const PipeSpan& span : t.stages[s]) busy += as_integer(span.end) - as_integer(span.start);
          }
          CHECK(busy == int64_t{p} * m * (tf + tb));
          const int64_t idle = int64_t{p} * makespan - busy;
          CHECK(idle * (m + p - 1) == int64_t{p - 1} * p * makespan);
          // the reported fraction, 1 - busy/(P·makespan), is bitwise the double 1 - M/(M+P-1):
          // both quotients are exact integers' ratios equal as rationals, so they round alike
          CHECK(t.bubble_fraction == 1.0 - static_cast<double>(m) / static_cast<double>(m + p - 1));
        }
      }
}

TEST_CASE("the bytes crossing stage boundaries", "[ch15][pipeline]") {
  // b = 4 rows of s = 64 tokens, h = 384, bf16 (t = 2): one boundary activation is 196 608 B
  const uint64_t boundary = 4ull * 64 * 384 * 2;
  CHECK(pipeline_p2p_bytes(4, 8, boundary) == 2ull * 3 * 8 * boundary);
  CHECK(pipeline_p2p_bytes(1, 8, boundary) == 0);
}
