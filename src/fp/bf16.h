// fp/bf16.h — bfloat16 ("bf16", brain float) as a 16-bit storage type.
//
// Layout: 1 sign bit, 8 exponent bits (bias 127, the same range as float), 7 fraction bits: a
// float with its low 16 bits cut off. Spacing at 1.0 is 2^-7. Like fp16 it is a storage format
// only: arithmetic happens in float and the result is rounded back once, to nearest even.
//
// NaN rule: a float NaN becomes the bf16 NaN made of its top 16 bits with the quiet bit set, so
// the sign and the top payload bits are kept (the AVX512-BF16 VCVTNEPS2BF16 rule). Subnormals are
// kept (that instruction flushes them to zero; this type does not, see the chapter 1 README).
#pragma once

#include <cstdint>

#include "fp/hd.h"

namespace zt {

/// Round a float to the nearest bf16 bit pattern, ties to even; overflow goes to ±inf.
/// @param f the value to round. @return the bf16 bit pattern.
ZT_HD uint16_t bf16_bits_from_float(float f) {
  const uint32_t x = bit_cast_hd<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  // Adding 0x7fff plus the lowest kept bit carries into bit 16 exactly when the dropped half is
  // above one half, or equal to it with an odd kept part: round to nearest, ties to even. The
  // carry may run into the exponent, which is the correct next binade (or inf past the largest).
  const uint32_t lsb = (x >> 16) & 1u;
  return static_cast<uint16_t>((x + 0x7fffu + lsb) >> 16);
}

/// Widen a bf16 bit pattern to float; exact (the low 16 bits become zero).
/// @param b the bf16 bit pattern. @return the float with the same value.
ZT_HD float float_from_bf16_bits(uint16_t b) { return bit_cast_hd<float>(static_cast<uint32_t>(b) << 16); }

/// bfloat16 storage type. Converts from float by rounding to nearest even, to float exactly.
struct bf16 {
  uint16_t bits = 0;  ///< the raw bit pattern

  bf16() = default;
  /// Round a float to bf16 (RNE). @param f the value.
  ZT_HD explicit bf16(float f) : bits(bf16_bits_from_float(f)) {}
  /// The exact float value. @return the value widened to float.
  ZT_HD explicit operator float() const { return float_from_bf16_bits(bits); }
  /// Build from a raw bit pattern. @param b the bits. @return the bf16 holding them.
  ZT_HD static bf16 from_bits(uint16_t b) {
    bf16 h;
    h.bits = b;
    return h;
  }
};

}  // namespace zt
