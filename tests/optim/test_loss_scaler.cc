// The dynamic loss scaler's state machine, transition by transition, and the no-op scaler.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "core/check.h"
#include "optim/loss_scaler.h"

using namespace zt;

TEST_CASE("loss scaler: defaults, growth after the interval, backoff and skip", "[ch2][optim]") {
  LossScaler defaults;
  CHECK(defaults.scale() == 65536.0f);
  CHECK(defaults.inverse_scale() == std::ldexp(1.0f, -16));

  LossScalerConfig c;
  c.growth_interval = 3;
  LossScaler s(c);
  CHECK(s.update(false));
  CHECK(s.update(false));
  CHECK(s.good_steps() == 2);
  CHECK(s.scale() == 65536.0f);
  CHECK(s.update(false));  // third finite step: grow, restart the count
  CHECK(s.scale() == 131072.0f);
  CHECK(s.good_steps() == 0);
  CHECK(s.update(false));
  CHECK_FALSE(s.update(true));  // overflow: skip, back off, restart the count
  CHECK(s.scale() == 65536.0f);
  CHECK(s.good_steps() == 0);
  CHECK(s.update(false));
  CHECK(s.update(false));
  CHECK(s.scale() == 65536.0f);  // the count restarted at the overflow
  CHECK(s.update(false));
  CHECK(s.scale() == 131072.0f);
}

TEST_CASE("loss scaler: clamped to [min_scale, max_scale]", "[ch2][optim]") {
  LossScalerConfig c;
  c.initial_scale = 8;
  c.min_scale = 2;
  c.max_scale = 16;
  c.growth_interval = 1;
  LossScaler s(c);
  CHECK_FALSE(s.update(true));
  CHECK(s.scale() == 4.0f);
  CHECK_FALSE(s.update(true));
  CHECK_FALSE(s.update(true));
  CHECK(s.scale() == 2.0f);  // min
  for (int i = 0; i < 5; ++i) CHECK(s.update(false));
  CHECK(s.scale() == 16.0f);  // max
}

TEST_CASE("no-op scaler for bf16/fp32: scale 1, never skips", "[ch2][optim]") {
  LossScaler s = LossScaler::none();
  CHECK_FALSE(s.dynamic());
  CHECK(s.scale() == 1.0f);
  CHECK(s.update(true));
  CHECK(s.update(false));
  CHECK(s.scale() == 1.0f);
}

TEST_CASE("loss scaler: bad settings, non-finite detection, unscale", "[ch2][optim]") {
  LossScalerConfig c;
  c.backoff_factor = 1.0f;
  CHECK_THROWS_AS(LossScaler(c), Error);
  c = {};
  c.growth_interval = 0;
  CHECK_THROWS_AS(LossScaler(c), Error);
  c = {};
  c.min_scale = 1e6f;
  CHECK_THROWS_AS(LossScaler(c), Error);

  float g[4] = {1.0f, -2.0f, 3.0f, 65504.0f};
  CHECK_FALSE(any_nonfinite(g, 4));
  unscale(g, 4, LossScaler().inverse_scale());  // power of two: exact
  CHECK(g[3] == 65504.0f / 65536.0f);
  g[2] = std::numeric_limits<float>::infinity();
  CHECK(any_nonfinite(g, 4));
  g[2] = std::numeric_limits<float>::quiet_NaN();
  CHECK(any_nonfinite(g, 4));
}
