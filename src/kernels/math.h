// kernels/math.h — the project's own exp, log, tanh and cos(2*pi*u): no libm in any result.
//
// Why own them. libm's expf/tanhf/logf differ between C libraries and versions (glibc, musl, the
// CUDA math library are each faithful but not identical), so a model that calls them is bitwise
// reproducible only on one libc. These functions use nothing but IEEE-754 +, -, *, / and sqrt
// (which IEEE requires to be correctly rounded, so every conforming machine gives the same bits),
// evaluated in double with a fixed sequence of operations; with -ffp-contract=off the compiler
// may not fuse or reorder them. Same inputs, same bits, on any x86-64 or CUDA device.
//
// Accuracy. Each float function evaluates the exact formula in double (relative error below
// ~2^-45: range reduction with a two-part ln 2, then a Taylor polynomial whose truncation error
// is below 2^-47) and rounds to float once, so the float result is within 0.5 + 2^-20 ulp of the
// true value: correctly rounded except in rare near-halfway cases. tests/kernels/test_math.cc
// checks that bound over dense sweeps against libm in double. The double functions are used by
// the initialiser (Box-Muller), within a few double ulps.
//
// These scalar functions are the definition: the GPU build (ZT_HD) calls them per element, and
// kernels/math_array.h evaluates exactly the same IEEE operations for whole arrays on the CPU
// (AVX2 lanes, same bits, tested). Any change here must be mirrored there.
//
// Not here: fast-approximate variants; special functions the model does not need.
#pragma once

#include <cstdint>

#include "fp/hd.h"

namespace zt::kernels {

namespace detail {
// ln 2 split so that k * kLn2Hi is exact for |k| < 2^20: the high part has its low bits zero
// (the classic Cody-Waite constants; values, not code, carried over).
inline constexpr double kLn2Hi = 6.93147180369123816490e-01;
inline constexpr double kLn2Lo = 1.90821492927058770002e-10;
inline constexpr double kLog2e = 1.44269504088896338700e+00;
inline constexpr double kTwoPi = 6.28318530717958623200e+00;

// +inf and the default quiet NaN from their bit patterns: std::numeric_limits is host-only in CUDA
// device code (without --expt-relaxed-constexpr); these are its values on x86-64 and CUDA alike.
/// @return +inf as a double.
ZT_HD double inf_d() { return bit_cast_hd<double>(0x7ff0000000000000ull); }
/// @return the default quiet NaN as a double.
ZT_HD double quiet_nan_d() { return bit_cast_hd<double>(0x7ff8000000000000ull); }

/// 2^k as a double for -1074 <= k <= 1023, built from its bit pattern (two factors below 2^-1022).
ZT_HD double pow2i(int k) {
  if (k < -1022) {
    return bit_cast_hd<double>(static_cast<uint64_t>(k + 600 + 1023) << 52) *
           bit_cast_hd<double>(uint64_t{1023 - 600} << 52);
  }
  return bit_cast_hd<double>(static_cast<uint64_t>(k + 1023) << 52);
}
}  // namespace detail

/// e^x in double for any double x (NaN in, NaN out; overflow to +inf, underflow to 0).
/// x = k ln2 + r with |r| <= ln2/2, e^r by its Taylor polynomial of degree 11 (truncation error
/// below 0.347^12/12! < 2^-47 relative), times 2^k.
/// @param x the argument. @return e^x, relative error below 2^-46.
ZT_HD double exp_d(double x) {
  if (x != x) return x;
  if (x > 709.78) return detail::inf_d();
  if (x < -745.2) return 0.0;
  const double kd = x * detail::kLog2e;
  const int k = static_cast<int>(kd >= 0 ? kd + 0.5 : kd - 0.5);
  const double r = (x - k * detail::kLn2Hi) - k * detail::kLn2Lo;
  // Estrin's scheme with the constants 1/n! (folded at compile time): multiplies and adds only,
  // in independent pairs, so the dependency chain is 4 levels deep instead of Horner's 11 (a
  // division per term, or a long chain, made this the model's hottest scalar code).
  const double r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
  const double a01 = 1.0 + r, a23 = 0.5 + r * (1.0 / 6.0);
  const double a45 = 1.0 / 24.0 + r * (1.0 / 120.0), a67 = 1.0 / 720.0 + r * (1.0 / 5040.0);
  const double a89 = 1.0 / 40320.0 + r * (1.0 / 362880.0);
  const double a1011 = 1.0 / 3628800.0 + r * (1.0 / 39916800.0);
  const double b0 = a01 + r2 * a23, b1 = a45 + r2 * a67, b2 = a89 + r2 * a1011;
  const double p = (b0 + r4 * b1) + r8 * b2;
  if (k > 1023) return p * detail::pow2i(1023) * detail::pow2i(k - 1023);
  return p * detail::pow2i(k);
}

/// Natural logarithm in double. x = m 2^e with m in [sqrt(1/2), sqrt 2), then
/// log m = 2 atanh(s) with s = (m-1)/(m+1), |s| < 0.172, summed to s^25.
/// @param x the argument. @return log x (-inf at 0, NaN below 0, +inf at +inf).
ZT_HD double log_d(double x) {
  if (x != x || x < 0) return detail::quiet_nan_d();
  if (x == 0) return -detail::inf_d();
  if (x == detail::inf_d()) return x;
  int e = 0;
  if (x < 0x1p-1022) {  // subnormal: scale into the normal range first
    x *= 0x1p64;
    e -= 64;
  }
  const uint64_t bits = bit_cast_hd<uint64_t>(x);
  e += static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  double m = bit_cast_hd<double>((bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
  if (m > 1.4142135623730951) {
    m *= 0.5;
    e += 1;
  }
  const double s = (m - 1.0) / (m + 1.0);
  const double s2 = s * s;
  double series = 0.0;
  for (int n = 25; n >= 3; n -= 2) series = (series + 1.0 / n) * s2;
  const double log_m = 2.0 * s + 2.0 * s * series;
  return e * detail::kLn2Hi + (log_m + e * detail::kLn2Lo);
}

/// cos(2 pi u) in double for u in [0, 1): the quadrant is taken from 4u exactly (no pi in the
/// reduction), then sin or cos of 2 pi t, |t| <= 1/8, by Taylor series to degree 18.
/// @param u the fraction of a turn, 0 <= u < 1. @return cos(2 pi u).
ZT_HD double cos_2pi_d(double u) {
  const double u4 = u * 4.0;  // exact
  const int q = static_cast<int>(u4 + 0.5);
  const double x = detail::kTwoPi * ((u4 - q) * 0.25);  // u4 - q is exact (Sterbenz)
  const double x2 = x * x;
  double c = 1.0, s = 1.0;
  for (int n = 18; n >= 2; n -= 2) c = 1.0 - c * x2 / (n * (n - 1));
  for (int n = 17; n >= 3; n -= 2) s = 1.0 - s * x2 / (n * (n - 1));
  s *= x;
  switch (q & 3) {
    case 0:
      return c;
    case 1:
      return -s;
    case 2:
      return -c;
    default:
      return s;
  }
}

/// tanh in double, for the float wrapper: odd Taylor series below 1/16 (no cancellation),
/// 1 - 2/(e^{2|x|}+1) above, exactly +-1 beyond 20.
/// @param x the argument. @return tanh x.
ZT_HD double tanh_d(double x) {
  if (x != x) return x;
  const double a = x < 0 ? -x : x;
  double t;
  if (a < 0.0625) {
    // tanh a = a - a^3/3 + 2a^5/15 - 17a^7/315 + 62a^9/2835 - 1382a^11/155925 + 21844a^13/6081075
    const double a2 = a * a;
    double p = 21844.0 / 6081075.0;
    p = p * a2 - 1382.0 / 155925.0;
    p = p * a2 + 62.0 / 2835.0;
    p = p * a2 - 17.0 / 315.0;
    p = p * a2 + 2.0 / 15.0;
    p = p * a2 - 1.0 / 3.0;
    t = a + a * (p * a2);
  } else if (a > 20.0) {
    t = 1.0;
  } else {
    t = 1.0 - 2.0 / (exp_d(2.0 * a) + 1.0);
  }
  return x < 0 ? -t : t;
}

/// e^x for a float, rounded once from the double evaluation.
/// @param x the argument. @return e^x within 0.5 + 2^-20 ulp.
ZT_HD float exp_f(float x) { return static_cast<float>(exp_d(x)); }
/// Natural log of a float, rounded once from the double evaluation.
/// @param x the argument. @return log x within 0.5 + 2^-20 ulp.
ZT_HD float log_f(float x) { return static_cast<float>(log_d(x)); }
/// tanh of a float, rounded once from the double evaluation.
/// @param x the argument. @return tanh x within 0.5 + 2^-20 ulp.
ZT_HD float tanh_f(float x) { return static_cast<float>(tanh_d(x)); }

}  // namespace zt::kernels
