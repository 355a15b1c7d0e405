// The array exp/tanh of kernels/math_array.h against the scalar definitions of kernels/math.h,
// bit for bit, on both paths (AVX2 where the CPU has it, and the forced scalar loop).
//
// Claim under test: for every input, exp_f_n/tanh_f_n write exactly the bits exp_f/tanh_f return
// (NaN payloads and signs included; a signalling NaN input is compared quieted, see same_result).
// Inputs: special values and branch boundaries with their neighbours, every length 0..17 at every
// offset (vector body and scalar tail), random values, and a strided sweep over all 2^32 float
// patterns. The exhaustive sweep lives in test_math_array_full.cc (label `full`).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/math.h"
#include "kernels/math_array.h"
#include "kernels/math_array_test_util.h"

namespace {

using zt::kernels::math_array_test::first_float_mismatch;
using zt::kernels::math_array_test::PathGuard;
using zt::kernels::math_array_test::same_result;

// Interesting doubles: zeros, subnormals, infinities, NaNs, the branch boundaries of exp_d and
// tanh_d, the float overflow/underflow thresholds, and points where round(x log2e) changes k,
// each with its neighbours one double ulp away.
std::vector<double> special_doubles() {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> centres = {
      0.0,    0x1p-1074, 0x1p-1022, 1e-300, 1e-8,  0.0625, 20.0,   88.72, 88.7228,
      103.97, 103.972,   104.0,     709.78, 709.0, 708.4,  708.39, 745.2, 745.13,
      744.44, 0.5,       1.0,       10.0,   40.0,  1e10,   1e300,  inf,   std::numeric_limits<double>::max()};
  for (int k = -1076; k <= 1025; ++k) centres.push_back(std::fabs((k + 0.5) * zt::kernels::detail::kLn2Hi));
  for (int k = -4; k <= 4; ++k) centres.push_back(std::fabs((k + 0.5) / 2.0 * zt::kernels::detail::kLn2Hi));
  std::vector<double> out;
  for (double c : centres) {
    for (double v : {c, std::nextafter(c, 0.0), std::nextafter(c, inf)}) {
      out.push_back(v);
      out.push_back(-v);
    }
  }
  out.push_back(std::numeric_limits<double>::quiet_NaN());
  out.push_back(-std::numeric_limits<double>::quiet_NaN());
  for (uint64_t nan_bits : {0x7ff8000000001234ull, 0xfff0000000004321ull, 0x7ff0000000000001ull}) {
    double payload;  // quiet and signalling NaNs with payloads
    std::memcpy(&payload, &nan_bits, 8);
    out.push_back(payload);
  }
  return out;
}

std::vector<float> special_floats() {
  std::vector<float> out;
  for (double d : special_doubles()) out.push_back(static_cast<float>(d));
  const float fmin = std::numeric_limits<float>::denorm_min();
  for (float c : {fmin, std::numeric_limits<float>::min(), std::numeric_limits<float>::max(), 0.0625f, 20.0f, 88.72f,
                  88.7228f, 103.97f, 103.972f, 1.0f / 64}) {
    for (float v : {c, std::nextafter(c, 0.0f), std::nextafter(c, INFINITY)}) {
      out.push_back(v);
      out.push_back(-v);
    }
  }
  return out;
}

// Every entry of y must have the bits of f(x[i]); reports the first mismatch.
template <typename D, typename F>
void require_same(const std::vector<D>& x, const std::vector<D>& y, F f) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    const D want = f(x[i]);
    INFO("x = " << x[i] << " (index " << i << "), scalar " << want << ", array " << y[i]);
    REQUIRE(same_result(y[i], want));
  }
}

template <typename D, typename ArrayF, typename ScalarF>
void check_path(const std::vector<D>& x, ArrayF array_f, ScalarF scalar_f) {
  std::vector<D> y(x.size());
  array_f(x.data(), y.data(), x.size());
  require_same(x, y, scalar_f);
  std::vector<D> in_place = x;  // y may be x
  array_f(in_place.data(), in_place.data(), in_place.size());
  require_same(x, in_place, scalar_f);
}

template <typename D, typename ArrayF, typename ScalarF>
void check_both_paths(const std::vector<D>& x, ArrayF array_f, ScalarF scalar_f) {
  for (bool scalar_only : {false, true}) {
    PathGuard guard(scalar_only);
    INFO("forced scalar path: " << scalar_only << ", AVX2 in use: " << zt::kernels::math_array_uses_avx2());
    check_path(x, array_f, scalar_f);
  }
}

}  // namespace

TEST_CASE("array exp/tanh equal the scalar functions bitwise on special values", "[ch2][kernels][math]") {
#if defined(__x86_64__)
  // The comparisons below test the AVX2 path only if dispatch picks it where the CPU has it.
  CHECK(zt::kernels::math_array_uses_avx2() == static_cast<bool>(__builtin_cpu_supports("avx2")));
  {
    PathGuard scalar(true);
    CHECK_FALSE(zt::kernels::math_array_uses_avx2());
  }
#endif
  const auto xf = special_floats();
  check_both_paths(xf, zt::kernels::exp_f_n, [](float v) { return zt::kernels::exp_f(v); });
  check_both_paths(xf, zt::kernels::tanh_f_n, [](float v) { return zt::kernels::tanh_f(v); });
  // The closed forms the scalar code promises, so the comparison is not between two wrong answers.
  CHECK(zt::kernels::exp_d(0.0) == 1.0);
  CHECK(zt::kernels::tanh_d(-0.0) == 0.0);
  CHECK(zt::kernels::tanh_f(-30.0f) == -1.0f);
  CHECK(zt::kernels::exp_d(-746.0) == 0.0);
}

TEST_CASE("array exp/tanh: every length 0..17 at every offset (vector body and tail)", "[ch2][kernels][math]") {
  std::mt19937_64 rng(20261122);
  std::uniform_real_distribution<float> dist(-30.0f, 30.0f);
  std::vector<float> pool(64);
  for (float& v : pool) v = dist(rng);
  pool[5] = 0.01f;  // a series-branch lane among others
  pool[9] = NAN;
  pool[13] = 95.0f;  // exp overflows in float
  for (bool scalar_only : {false, true}) {
    PathGuard guard(scalar_only);
    for (std::size_t n = 0; n <= 17; ++n) {
      for (std::size_t off = 0; off < 8; ++off) {
        // A sentinel after the end must survive: the array functions write exactly n values.
        std::vector<float> ye(n + 1, 7.0f), yt(n + 1, 7.0f);
        zt::kernels::exp_f_n(pool.data() + off, ye.data(), n);
        zt::kernels::tanh_f_n(pool.data() + off, yt.data(), n);
        for (std::size_t i = 0; i < n; ++i) {
          REQUIRE(same_result(ye[i], zt::kernels::exp_f(pool[off + i])));
          REQUIRE(same_result(yt[i], zt::kernels::tanh_f(pool[off + i])));
        }
        REQUIRE(ye[n] == 7.0f);
        REQUIRE(yt[n] == 7.0f);
      }
    }
  }
}

TEST_CASE("array exp/tanh equal the scalar functions bitwise on random inputs", "[ch2][kernels][math]") {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> wide(-800.0, 800.0), narrow(-25.0, 25.0), tiny(-0.1, 0.1);
  std::vector<double> xd;
  for (int i = 0; i < 200000; ++i) xd.push_back(i % 3 == 0 ? wide(rng) : i % 3 == 1 ? narrow(rng) : tiny(rng));
  std::vector<float> xf;
  for (double v : xd) xf.push_back(static_cast<float>(v));
  check_both_paths(xf, zt::kernels::exp_f_n, [](float v) { return zt::kernels::exp_f(v); });
  check_both_paths(xf, zt::kernels::tanh_f_n, [](float v) { return zt::kernels::tanh_f(v); });
}

TEST_CASE("array exp/tanh equal the scalar functions on every 97th float pattern", "[ch2][kernels][math]") {
  // 97 is odd, so the sweep meets every residue of the low bits; ~44M patterns of each sign,
  // exponent and mantissa range (NaNs and infinities included).
  INFO("AVX2 in use: " << zt::kernels::math_array_uses_avx2());
  const auto exp_mismatch =
      first_float_mismatch(0, 0xffffffffull, 97, zt::kernels::exp_f_n, [](float v) { return zt::kernels::exp_f(v); });
  INFO("exp_f_n first mismatching pattern (or none): " << std::hex << exp_mismatch);
  CHECK(exp_mismatch == zt::kernels::math_array_test::kNoMismatch);
  const auto tanh_mismatch =
      first_float_mismatch(0, 0xffffffffull, 97, zt::kernels::tanh_f_n, [](float v) { return zt::kernels::tanh_f(v); });
  INFO("tanh_f_n first mismatching pattern (or none): " << std::hex << tanh_mismatch);
  CHECK(tanh_mismatch == zt::kernels::math_array_test::kNoMismatch);
}
