// fp/format.h — the three floating-point formats of the project (fp32, fp16, bf16) described by
// their bit layouts, and the properties that follow from a layout: bias, largest and smallest
// values, machine epsilon. Also the one switch that rounds a float to any of the three formats.
//
// Every number here is derived from (exponent bits, fraction bits) by building the float's bit
// pattern, never typed in as a decimal constant, so the table in chapter 1 is a consequence of
// the layout rather than a copy of it. It is not an arithmetic type: see fp16.h and bf16.h.
//
// Conventions (IEEE 754): for E exponent bits and M fraction bits, bias = 2^(E-1) - 1, the
// largest exponent of a finite value is emax = bias, the smallest normal exponent is
// emin = 1 - bias; subnormals share emin and lose the implicit leading 1.
#pragma once

#include <cstdint>

#include "fp/bf16.h"
#include "fp/fp16.h"
#include "fp/hd.h"

namespace zt {

/// The storage formats the project uses. fp32 is IEEE binary32, fp16 is IEEE binary16, bf16 is
/// bfloat16 (binary32 with its low 16 fraction bits removed).
enum class Format : uint8_t {
  fp32,  ///< 1 sign, 8 exponent, 23 fraction bits
  fp16,  ///< 1 sign, 5 exponent, 10 fraction bits
  bf16,  ///< 1 sign, 8 exponent, 7 fraction bits
};

/// The bit layout of a format: everything else in this file is computed from these two numbers.
struct FormatLayout {
  int exponent_bits;  ///< E, width of the biased exponent field
  int fraction_bits;  ///< M, stored fraction bits (the significand has M + 1 bits)
};

/// The bit layout of a format. @param f the format. @return its exponent and fraction widths.
ZT_HD FormatLayout layout(Format f) {
  switch (f) {
    case Format::fp16:
      return {5, 10};
    case Format::bf16:
      return {8, 7};
    case Format::fp32:
      break;
  }
  return {8, 23};
}

/// Short lower-case name, as used in tables and CSV headers. @param f the format.
/// @return "fp32", "fp16" or "bf16".
ZT_HD const char* format_name(Format f) {
  switch (f) {
    case Format::fp16:
      return "fp16";
    case Format::bf16:
      return "bf16";
    case Format::fp32:
      break;
  }
  return "fp32";
}

/// Total width in bits: 1 sign + E + M. @param f the format. @return 32 or 16.
ZT_HD int total_bits(Format f) {
  const FormatLayout l = layout(f);
  return 1 + l.exponent_bits + l.fraction_bits;
}

/// Exponent bias 2^(E-1) - 1. @param f the format. @return 127 for fp32 and bf16, 15 for fp16.
ZT_HD int exponent_bias(Format f) { return (1 << (layout(f).exponent_bits - 1)) - 1; }

/// Largest exponent of a finite value, emax = bias. @param f the format. @return emax.
ZT_HD int max_exponent(Format f) { return exponent_bias(f); }

/// Smallest exponent of a normal value, emin = 1 - bias. @param f the format. @return emin.
ZT_HD int min_exponent(Format f) { return 1 - exponent_bias(f); }

/// 2^k as a float, built from its bit pattern; exact for every k in [-149, 127] (float's
/// subnormals included). Outside that range it returns 0 or +inf.
/// @param k the exponent. @return 2^k.
ZT_HD float pow2f(int k) {
  if (k > 127) return bit_cast_hd<float>(0x7f800000u);
  if (k >= -126) return bit_cast_hd<float>(static_cast<uint32_t>(k + 127) << 23);
  if (k >= -149) return bit_cast_hd<float>(1u << (k + 149));
  return 0.0f;
}

/// Largest finite value (2 - 2^-M) * 2^emax: the biased exponent field all ones but one, every
/// fraction bit set. Built as a float bit pattern (the three formats all embed in float).
/// @param f the format. @return 3.40282347e+38, 65504 or 3.38953139e+38.
ZT_HD float largest_normal(Format f) {
  const FormatLayout l = layout(f);
  const uint32_t exponent_field = static_cast<uint32_t>(max_exponent(f) + 127) << 23;
  const uint32_t fraction_ones = ((1u << l.fraction_bits) - 1u) << (23 - l.fraction_bits);
  return bit_cast_hd<float>(exponent_field | fraction_ones);
}

/// Smallest positive normal value 2^emin. @param f the format. @return 2^-126 or 2^-14.
ZT_HD float smallest_normal(Format f) { return pow2f(min_exponent(f)); }

/// Smallest positive subnormal value 2^(emin - M): one unit in the last place below 2^emin.
/// @param f the format. @return 2^-149, 2^-24 or 2^-133.
ZT_HD float smallest_subnormal(Format f) { return pow2f(min_exponent(f) - layout(f).fraction_bits); }

/// Machine epsilon in the "spacing at 1" sense: 2^-M, the gap between 1 and the next value up.
/// (The unit roundoff, the largest relative rounding error, is half of it.)
/// @param f the format. @return 2^-23, 2^-10 or 2^-7.
ZT_HD float machine_epsilon(Format f) { return pow2f(-layout(f).fraction_bits); }

/// The bit pattern of a float rounded to the nearest value of format f (ties to even, overflow to
/// inf, NaN by the rules of fp16.h / bf16.h), in the low total_bits(f) bits of the result.
/// @param x the value. @param f the format. @return the pattern (the float's own bits for fp32).
ZT_HD uint32_t format_bits_from_float(float x, Format f) {
  switch (f) {
    case Format::fp16:
      return fp16_bits_from_float(x);
    case Format::bf16:
      return bf16_bits_from_float(x);
    case Format::fp32:
      break;
  }
  return bit_cast_hd<uint32_t>(x);
}

/// The float value of a bit pattern of format f (exact: both 16-bit formats embed in float).
/// @param bits the pattern in the low total_bits(f) bits. @param f the format. @return the value.
ZT_HD float float_from_format_bits(uint32_t bits, Format f) {
  switch (f) {
    case Format::fp16:
      return float_from_fp16_bits(static_cast<uint16_t>(bits));
    case Format::bf16:
      return float_from_bf16_bits(static_cast<uint16_t>(bits));
    case Format::fp32:
      break;
  }
  return bit_cast_hd<float>(bits);
}

/// Round a float to the nearest value representable in f and return it as a float (what a store
/// to f followed by a load gives). The identity for fp32.
/// @param x the value. @param f the format. @return the rounded value.
ZT_HD float round_to_format(float x, Format f) { return float_from_format_bits(format_bits_from_float(x, f), f); }

}  // namespace zt
