// fp/fp16.h — IEEE 754 binary16 ("fp16", "half") as a 16-bit storage type.
//
// Layout: 1 sign bit, 5 exponent bits (bias 15), 10 fraction bits. Largest finite 65504,
// smallest normal 2^-14, smallest subnormal 2^-24, spacing at 1.0 is 2^-10.
// This is a storage format, not an arithmetic type: values are widened to float (exactly), the
// arithmetic happens in float, and the result is rounded back once (round-to-nearest-even). That
// is what tensor cores and every mixed-precision kernel do, and it keeps one rounding per store.
//
// NaN rule (the x86 F16C rule, VCVTPS2PH): a float NaN becomes an fp16 NaN with the sign kept, the
// quiet bit set and the top 10 payload bits kept (float fraction bits 22..13). fp16 -> float keeps
// the sign and the payload, and sets the quiet bit, so a quiet fp16 NaN round-trips unchanged.
#pragma once

#include <cstdint>

#include "fp/hd.h"

namespace zt {

/// Round a float to the nearest fp16 bit pattern, ties to even; overflow goes to ±inf.
/// @param f the value to round. @return the fp16 bit pattern.
ZT_HD uint16_t fp16_bits_from_float(float f) {
  const uint32_t x = bit_cast_hd<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t a = x & 0x7fffffffu;  // |f|
  if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  // 65520 = 65504 + half a spacing: from there on RNE rounds to inf (65504's last bit is odd).
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  if (a >= 0x38800000u) {  // normal in fp16: rebias the exponent (127 -> 15) and round 13 bits off
    const uint32_t r = (a - 0x38000000u) >> 13;
    const uint32_t rem = a & 0x1fffu;
    const uint32_t up = (rem > 0x1000u) | ((rem == 0x1000u) & r);
    return static_cast<uint16_t>(sign | (r + up));
  }
  // fp16 subnormal (or zero): the result is round(|f| * 2^24) = m * 2^(e - 126) for the float's
  // 24-bit significand m and biased exponent e (e = 1 with no implicit bit for float subnormals).
  const uint32_t e = a >> 23;
  const uint32_t m = e ? ((a & 0x7fffffu) | 0x800000u) : a;
  const uint32_t shift = 126u - (e ? e : 1u);  // >= 14 here
  if (shift > 24u) return static_cast<uint16_t>(sign);
  const uint32_t r = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  const uint32_t up = (rem > half) | ((rem == half) & r);
  return static_cast<uint16_t>(sign | (r + up));
}

/// Widen an fp16 bit pattern to float; exact for every non-NaN value.
/// @param h the fp16 bit pattern. @return the float with the same value.
ZT_HD float float_from_fp16_bits(uint16_t h) {
  const uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t frac = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1fu) {
    bits = sign | 0x7f800000u | (frac << 13) | (frac ? 0x400000u : 0u);  // inf, or quiet NaN
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (frac << 13);
  } else {
    // subnormal: frac * 2^-24, exact in float (a 10-bit integer times a power of two)
    const float mag = static_cast<float>(frac) * 5.9604644775390625e-8f;
    bits = sign | bit_cast_hd<uint32_t>(mag);
  }
  return bit_cast_hd<float>(bits);
}

/// IEEE binary16 storage type. Converts from float by rounding to nearest even, to float exactly.
struct fp16 {
  uint16_t bits = 0;  ///< the raw bit pattern

  fp16() = default;
  /// Round a float to fp16 (RNE). @param f the value.
  ZT_HD explicit fp16(float f) : bits(fp16_bits_from_float(f)) {}
  /// The exact float value. @return the value widened to float.
  ZT_HD explicit operator float() const { return float_from_fp16_bits(bits); }
  /// Build from a raw bit pattern. @param b the bits. @return the fp16 holding them.
  ZT_HD static fp16 from_bits(uint16_t b) {
    fp16 h;
    h.bits = b;
    return h;
  }
};

}  // namespace zt
