// The project's own exp/log/tanh/cos against libm in double, over dense sweeps.
//
// Claim under test (kernels/math.h): each float function is within 0.5 + 2^-20 ulp of the true
// value. The reference is glibc's double function (error < 1 double ulp = 2^-29 float ulp), so a
// measured error above 0.5 + 2^-20 + 2^-28 float ulp would break the claim. Double functions
// (used by the initialiser) are checked against long-double libm to a few double ulps.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/math.h"

namespace {

// Error of f against the reference r, in units of the float spacing at r.
double ulp_error(float f, double r) {
  if (std::isinf(r) || std::isinf(f)) return (static_cast<double>(f) == r) ? 0.0 : 1e9;
  const double ar = std::fabs(r);
  int e = 0;
  std::frexp(ar, &e);  // ar = m 2^e, m in [0.5,1)
  const double spacing = std::ldexp(1.0, std::max(e - 24, -149));
  return std::fabs(static_cast<double>(f) - r) / spacing;
}

float float_from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

constexpr double kBound = 0.5 + 0x1p-20 + 0x1p-28;

}  // namespace

TEST_CASE("exp_f within 0.5+2^-20 ulp over [-103.9, 88.7]", "[ch2][kernels][math]") {
  double worst = 0;
  const int n = 1 << 21;
  for (int i = 0; i <= n; ++i) {
    const float x = static_cast<float>(-103.9 + (88.7 + 103.9) * i / n);
    worst = std::max(worst, ulp_error(zt::kernels::exp_f(x), std::exp(static_cast<double>(x))));
  }
  INFO("max ulp error " << worst);
  CHECK(worst <= kBound);
  CHECK(zt::kernels::exp_f(0.0f) == 1.0f);
  CHECK(zt::kernels::exp_f(-200.0f) == 0.0f);
  CHECK(std::isinf(zt::kernels::exp_f(100.0f)));
  CHECK(std::isnan(zt::kernels::exp_f(NAN)));
}

TEST_CASE("log_f within 0.5+2^-20 ulp over every binade", "[ch2][kernels][math]") {
  double worst = 0;
  for (uint32_t b = 1; b < 0x7f800000u; b += 251) {  // every 251st positive float, subnormals too
    const float x = float_from_bits(b);
    worst = std::max(worst, ulp_error(zt::kernels::log_f(x), std::log(static_cast<double>(x))));
  }
  INFO("max ulp error " << worst);
  CHECK(worst <= kBound);
  CHECK(zt::kernels::log_f(1.0f) == 0.0f);
  CHECK(std::isinf(zt::kernels::log_f(0.0f)));
  CHECK(std::isnan(zt::kernels::log_f(-1.0f)));
}

TEST_CASE("tanh_f within 0.5+2^-20 ulp, near zero and in the tails", "[ch2][kernels][math]") {
  double worst = 0;
  const int n = 1 << 21;
  for (int i = -n; i <= n; ++i) {
    const float x = static_cast<float>(12.0 * i / n);
    worst = std::max(worst, ulp_error(zt::kernels::tanh_f(x), std::tanh(static_cast<double>(x))));
  }
  for (uint32_t b = 0x2f800000u; b < 0x3f800000u; b += 97) {  // 2^-32 .. 1, dense in small values
    const float x = float_from_bits(b);
    worst = std::max(worst, ulp_error(zt::kernels::tanh_f(x), std::tanh(static_cast<double>(x))));
    worst = std::max(worst, ulp_error(zt::kernels::tanh_f(-x), std::tanh(-static_cast<double>(x))));
  }
  INFO("max ulp error " << worst);
  CHECK(worst <= kBound);
  CHECK(zt::kernels::tanh_f(30.0f) == 1.0f);
  CHECK(zt::kernels::tanh_f(-30.0f) == -1.0f);
}

TEST_CASE("double log and cos(2 pi u) for Box-Muller within 4 double ulps", "[ch2][kernels][math]") {
  // log: relative error in double ulps; cos: absolute error (what Box-Muller's z inherits).
  double worst_log = 0, worst_cos = 0;
  const long double two_pi = 6.283185307179586476925286766559L;
  const int n = 1 << 20;
  for (int i = 0; i < n; ++i) {
    const double u = (i + 0.5) / n;
    const long double rl = std::log(static_cast<long double>(u));
    int e = 0;
    std::frexp(static_cast<double>(std::fabs(rl)), &e);
    const double spacing = std::ldexp(1.0, e - 53);
    worst_log = std::max(worst_log, static_cast<double>(std::fabs(zt::kernels::log_d(u) - rl)) / spacing);
    const long double rc = std::cos(two_pi * static_cast<long double>(u));
    worst_cos = std::max(worst_cos, static_cast<double>(std::fabs(zt::kernels::cos_2pi_d(u) - rc)) / 0x1p-53);
  }
  INFO("log: " << worst_log << " ulps; cos: " << worst_cos << " x 2^-53 absolute");
  CHECK(worst_log <= 4.0);
  CHECK(worst_cos <= 4.0);
  CHECK(zt::kernels::cos_2pi_d(0.0) == 1.0);
  CHECK(zt::kernels::cos_2pi_d(0.5) == -1.0);
}
