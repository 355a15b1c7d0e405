// fp/stochastic_round.h — stochastic rounding of float to bf16 and fp16 with an explicit source of
// random bits, written once for the host and CUDA devices (ZT_HD, no library calls).
//
// Round-to-nearest always drops a small update to a large weight (see spacing.h). Stochastic
// rounding instead rounds |x| up (away from zero) with probability equal to the dropped fraction
// of a last place and down otherwise, so E[round(x)] = x and small updates survive on average.
// This file defines the exact rule; it does not generate randomness: the caller passes 16 random
// bits per value (random_bits.h has a counter-based source), which keeps runs reproducible.
//
// The rule, for both formats. Let W be the 16 bits of |x| just below the last place that the
// result keeps, read as an integer in [0, 2^16) (bits that the float does not have are 0; bits
// of |x| further below are ignored), and let r be the 16 random bits. The magnitude is truncated
// to the format and then increased by one last place iff W + r >= 2^16. Over all 2^16 values of
// r exactly W of them round up: P(up) = W / 2^16, exactly.
//  - bf16: the last kept place is always bit 16 of the float pattern, so W is the float's low 16
//    bits and nothing is ignored: P(up) equals the dropped fraction exactly, for every float
//    (float subnormals included: bf16 has the same exponent range).
//  - fp16, result normal (|x| >= 2^-14): 13 float bits are dropped; W is those 13 bits followed
//    by three zeros, so again P(up) = dropped fraction exactly.
//  - fp16, result subnormal (|x| < 2^-14): the last place is 2^-24 and W holds the 16 bits from
//    2^-25 down to 2^-40. Exact for |x| >= 2^-17; for smaller |x| bits below 2^-40 are ignored,
//    which biases P(up) towards zero by less than 2^-16 (relative to the 2^-24 last place).
// Special values, decided before the rule: NaN gives the same NaN as round-to-nearest
// (fp16.h / bf16.h rules); ±inf stays ±inf. Overflow: a carry out of the largest finite value
// gives ±inf, as the next value after it (fp16: |x| in (65504, 65536) becomes inf with
// probability (|x| - 65504) / 32); fp16 inputs with |x| >= 65536 = 2^16 become ±inf always.
// Signs are symmetric: the rule acts on the magnitude, the sign is kept (and -0 stays -0).
#pragma once

#include <cstdint>

#include "fp/bf16.h"
#include "fp/fp16.h"
#include "fp/hd.h"

namespace zt {

/// Stochastically round a float to bf16 with 16 random bits (rule in the file comment).
/// @param f the value. @param random16 16 uniformly random bits.
/// @return the bf16 bit pattern; rounded away from zero with probability (low 16 bits) / 2^16.
ZT_HD uint16_t bf16_bits_stochastic(float f, uint16_t random16) {
  const uint32_t x = bit_cast_hd<uint32_t>(f);
  const uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return bf16_bits_from_float(f);  // NaN: the round-to-nearest NaN rule
  if (a == 0x7f800000u) return static_cast<uint16_t>(x >> 16);
  // Sign-magnitude: adding r to the low half carries into bit 16 iff low + r >= 2^16, which grows
  // the magnitude by one bf16 last place (into the exponent, or to inf past the largest value).
  return static_cast<uint16_t>((x + random16) >> 16);
}

/// Stochastically round a float to fp16 with 16 random bits (rule in the file comment).
/// @param f the value. @param random16 16 uniformly random bits.
/// @return the fp16 bit pattern.
ZT_HD uint16_t fp16_bits_stochastic(float f, uint16_t random16) {
  const uint32_t x = bit_cast_hd<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return fp16_bits_from_float(f);                 // NaN: the round-to-nearest NaN rule
  if (a >= 0x47800000u) return static_cast<uint16_t>(sign | 0x7c00u);  // |x| >= 2^16, or inf
  uint32_t w16;  // |x| in units of 2^-16 fp16 last places (16 bits below the last kept place)
  if (a >= 0x38800000u) {
    // Normal result: rebias the exponent (127 -> 15); the low 13 bits are the dropped ones.
    w16 = (a - 0x38000000u) << 3;
  } else {
    // Subnormal result: |x| / 2^-40 = m * 2^(e - 110) for the 24-bit significand m and biased
    // exponent e (e = 1 without the implicit bit for float subnormals); truncate to an integer.
    // Here e <= 112, so the product is below 2^26.
    const uint32_t e = a >> 23;
    const uint32_t m = e ? ((a & 0x7fffffu) | 0x800000u) : a;
    const uint32_t e1 = e ? e : 1u;
    if (e1 >= 110u) {
      w16 = m << (e1 - 110u);
    } else {
      w16 = (110u - e1) < 32u ? m >> (110u - e1) : 0u;
    }
  }
  // The carry into bit 16 adds one last place; from 0x7bff it reaches 0x7c00, which is inf.
  return static_cast<uint16_t>(sign | ((w16 + random16) >> 16));
}

}  // namespace zt
