// tests/fp/reference_rounding.h — an independent reference for rounding floats to fp16 and bf16,
// for tests only. It is deliberately written another way than src/fp: in double arithmetic, with
// the binade found by frexp and the rounding done by nearbyint under FE_TONEAREST (ties to even),
// instead of integer bit tricks. It is slow and that is fine.
#pragma once

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace zt::test {

/// Round x to a format with E exponent bits and M fraction bits; bit pattern in the low 1+E+M
/// bits. NaN is not handled here (see reference_fp16_bits / reference_bf16_bits).
inline uint32_t reference_round_bits(float x, int E, int M) {
  const uint32_t sign = std::signbit(x) ? (1u << (E + M)) : 0u;
  const uint32_t inf = ((1u << E) - 1u) << M;
  const double ax = std::fabs(static_cast<double>(x));
  if (std::isinf(ax)) return sign | inf;
  if (ax == 0.0) return sign;
  const int emin = 2 - (1 << (E - 1));  // 1 - bias
  int k = 0;
  std::frexp(ax, &k);                                      // ax = f * 2^k, f in [0.5, 1): the binade is 2^(k-1)
  const int e = std::max(k - 1, emin);                     // subnormals share the spacing of the lowest binade
  const double q = std::nearbyint(std::ldexp(ax, M - e));  // |x| / spacing, exact in double
  // The pattern counts spacings from zero: (binades above emin) * 2^M + q; q = 2^(M+1) (a carry
  // into the next binade) or q = 2^M from a subnormal both land on the right pattern.
  const uint64_t bits = (static_cast<uint64_t>(e - emin) << M) + static_cast<uint64_t>(q);
  return sign | static_cast<uint32_t>(std::min<uint64_t>(bits, inf));
}

inline uint32_t float_bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
}

/// fp16 reference; NaN by the rule of fp16.h: sign kept, quiet bit set, top 10 payload bits kept.
inline uint16_t reference_fp16_bits(float x) {
  if (std::isnan(x)) {
    const uint32_t b = float_bits(x);
    return static_cast<uint16_t>(((b >> 31) << 15) | 0x7c00u | 0x200u | ((b >> 13) & 0x3ffu));
  }
  return static_cast<uint16_t>(reference_round_bits(x, 5, 10));
}

/// bf16 reference; NaN by the rule of bf16.h: the top 16 bits with the quiet bit set.
inline uint16_t reference_bf16_bits(float x) {
  if (std::isnan(x)) return static_cast<uint16_t>((float_bits(x) >> 16) | 0x40u);
  return static_cast<uint16_t>(reference_round_bits(x, 8, 7));
}

/// Decode an fp16 pattern with ldexp: (-1)^s * 1.f * 2^(exp-15), or 0.f * 2^-14.
inline double reference_fp16_value(uint16_t h) {
  const int exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
  const double s = (h & 0x8000) ? -1.0 : 1.0;
  if (exp == 0x1f) return frac ? NAN : s * INFINITY;
  if (exp == 0) return s * std::ldexp(frac, -24);
  return s * std::ldexp(1024 + frac, exp - 25);
}

/// Decode a bf16 pattern with ldexp: (-1)^s * 1.f * 2^(exp-127), or 0.f * 2^-126.
inline double reference_bf16_value(uint16_t b) {
  const int exp = (b >> 7) & 0xff, frac = b & 0x7f;
  const double s = (b & 0x8000) ? -1.0 : 1.0;
  if (exp == 0xff) return frac ? NAN : s * INFINITY;
  if (exp == 0) return s * std::ldexp(frac, -133);
  return s * std::ldexp(128 + frac, exp - 134);
}

}  // namespace zt::test
