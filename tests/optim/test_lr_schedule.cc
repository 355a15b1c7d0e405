// Warmup + cosine: the values at the key steps of the documented formula.
#include <catch2/catch.hpp>

#include "core/check.h"
#include "optim/lr_schedule.h"

using namespace zt;

TEST_CASE("warmup then cosine decay to the floor", "[ch2][optim]") {
  const LrSchedule s{1e-3, 1e-4, 10, 110};
  CHECK(lr_at(s, 1) == 1e-3 * 1 / 10);
  CHECK(lr_at(s, 5) == 1e-3 * 5 / 10);
  CHECK(lr_at(s, 10) == 1e-3);                                        // peak at the end of warmup
  CHECK(lr_at(s, 60) == Approx(0.5 * (1e-3 + 1e-4)).epsilon(1e-12));  // halfway: the mean
  CHECK(lr_at(s, 35) == Approx(1e-4 + 0.45e-3 * (1 + std::sqrt(0.5))).epsilon(1e-12));
  CHECK(lr_at(s, 110) == 1e-4);  // floor at the last step
  CHECK(lr_at(s, 500) == 1e-4);
  for (int64_t t = 11; t < 110; ++t) CHECK(lr_at(s, t + 1) < lr_at(s, t));  // decreasing
}

TEST_CASE("schedule corner cases and bad settings", "[ch2][optim]") {
  CHECK(lr_at(LrSchedule{2e-3, 0, 0, 0}, 1) == 2e-3);  // constant
  CHECK(lr_at(LrSchedule{2e-3, 0, 0, 0}, 10000) == 2e-3);
  CHECK(lr_at(LrSchedule{2e-3, 0, 0, 100}, 1) == Approx(2e-3).epsilon(1e-3));  // no warmup
  CHECK_THROWS_AS(lr_at(LrSchedule{1e-3, 0, 0, 0}, 0), Error);
  CHECK_THROWS_AS(validate(LrSchedule{1e-3, 2e-3, 0, 0}), Error);
}

TEST_CASE("a warmup longer than the run stays linear and never reaches the peak", "[ch2][optim]") {
  const LrSchedule s{1e-3, 1e-4, 20, 10};
  CHECK_NOTHROW(validate(s));
  for (int64_t t = 1; t <= 10; ++t) CHECK(lr_at(s, t) == 1e-3 * static_cast<double>(t) / 20);
  CHECK_FALSE(reaches_peak(s));
  CHECK(reaches_peak(LrSchedule{1e-3, 1e-4, 10, 10}));  // the peak at the last step
  CHECK(reaches_peak(LrSchedule{1e-3, 1e-4, 50, 0}));   // no end: the peak comes
}
