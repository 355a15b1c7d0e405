// fp/spacing.h — how far apart neighbouring values of a format are, and what that does to sums.
//
// spacing (the "ulp"), the next value up or down, and addition carried out in a 16-bit format:
// the tools chapter 1 uses to show why a small update to a large weight can vanish (swamping).
// It is not an interval or error-analysis library; every function here is exact.
#pragma once

#include <cstdint>

#include "fp/format.h"
#include "fp/hd.h"

namespace zt {

/// Spacing (unit in the last place) of format f in the binade holding |x|: 2^(max(e, emin) - M)
/// where 2^e <= |x| < 2^(e+1). At a power of two this is the gap to the next value UP (the gap
/// below is half as wide); below 2^emin it is the constant subnormal spacing 2^(emin - M).
/// @param x any float (it need not be representable in f). @param f the format.
/// @return the spacing; +inf when |x| >= 2^(emax+1) (past the largest binade), NaN for NaN.
ZT_HD float spacing(float x, Format f) {
  const uint32_t a = bit_cast_hd<uint32_t>(x) & 0x7fffffffu;
  if (a > 0x7f800000u) return bit_cast_hd<float>(0x7fc00000u);
  int e = static_cast<int>(a >> 23) - 127;  // -127 for float zero and subnormals
  if (e < min_exponent(f)) e = min_exponent(f);
  if (e > max_exponent(f)) return bit_cast_hd<float>(0x7f800000u);
  return pow2f(e - layout(f).fraction_bits);
}

/// The value of format f whose bit pattern follows the pattern of v in the order of values
/// (+0 and -0 both step to the smallest subnormal; +inf stays). v must be representable in f.
/// @param v a non-NaN value of format f. @param f the format. @return the next value up.
ZT_HD float successor_in_format(float v, Format f) {
  const uint32_t sign = 1u << (total_bits(f) - 1);
  const uint32_t b = format_bits_from_float(v, f);
  const uint32_t plus_inf = ((1u << layout(f).exponent_bits) - 1u) << layout(f).fraction_bits;
  if (b == plus_inf) return v;
  if (b == sign) return smallest_subnormal(f);  // -0
  // Sign-magnitude: a larger magnitude is a larger pattern, so up means +1 for positive values
  // and -1 (towards zero) for negative ones; the carry out of the fraction is the next binade.
  return float_from_format_bits((b & sign) ? b - 1u : b + 1u, f);
}

/// The smallest value of format f strictly greater than x (x need not be representable).
/// @param x the value. @param f the format. @return the next value up; +inf stays +inf, the
/// largest finite value goes to +inf, NaN stays NaN.
ZT_HD float next_up(float x, Format f) {
  if (x != x) return x;
  // The nearest value h: if it lies above x, nothing of f lies between x and h (it would be
  // nearer); otherwise (h <= x) the successor of h is the first value above x by the same reason.
  const float h = round_to_format(x, f);
  return h > x ? h : successor_in_format(h, f);
}

/// The largest value of format f strictly less than x (x need not be representable).
/// @param x the value. @param f the format. @return the next value down (mirror of next_up).
ZT_HD float next_down(float x, Format f) { return -next_up(-x, f); }

/// a + b carried out in format f: both operands rounded to f, the sum rounded to f. The sum is
/// formed in float and rounded once more; for fp16 and bf16 that double rounding equals a single
/// correct rounding because float keeps at least 2p + 2 bits for p-bit operands (Figueroa 1995).
/// @param a first operand. @param b second operand. @param f the format.
/// @return the rounded sum, as a float.
ZT_HD float add_in_format(float a, float b, Format f) {
  return round_to_format(round_to_format(a, f) + round_to_format(b, f), f);
}

/// Swamping: does x + d, computed in format f (add_in_format), give x back (x rounded to f)?
/// True exactly when |d| is too small against the spacing at x, e.g. 1 + 1e-5 in fp16.
/// @param x the large operand (a weight). @param d the small one (an update). @param f the format.
/// @return true when the update is lost; false when it has an effect or when x or d is NaN.
ZT_HD bool swamps(float x, float d, Format f) { return add_in_format(x, d, f) == round_to_format(x, f); }

}  // namespace zt
