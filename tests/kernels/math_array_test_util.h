// Helpers shared by the array-math tests: bit patterns, forcing a dispatch path, and a strided
// sweep over float bit patterns comparing an array function with its scalar definition.
// Test code only; not part of the library.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/math_array.h"

namespace zt::kernels::math_array_test {

/// The bit pattern of a float. @param v the value. @return its bits.
inline uint32_t bits_of(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}
/// The bit pattern of a double. @param v the value. @return its bits.
inline uint64_t bits_of(double v) {
  uint64_t b;
  std::memcpy(&b, &v, 8);
  return b;
}

/// Whether an array result has the scalar definition's bits. A NaN result is compared with its
/// quiet bit set: a signalling NaN input comes out quieted by the float -> double conversion,
/// except where the compiler, inlining the scalar code, folds exp_f's NaN path
/// (float -> double -> float) into returning the input unchanged (GCC does so without
/// -fsignaling-nans). So the scalar bits of a signalling NaN differ between call sites; the
/// payload and sign do not. Arithmetic never makes a signalling NaN, so the model never sees one.
/// @param got the array result. @param want the scalar result. @return whether they agree.
inline bool same_result(float got, float want) {
  if (got != got && want != want) return (bits_of(got) | 0x00400000u) == (bits_of(want) | 0x00400000u);
  return bits_of(got) == bits_of(want);
}
/// Double form of same_result. @param got the array result. @param want the scalar result.
/// @return whether they agree.
inline bool same_result(double got, double want) {
  if (got != got && want != want)
    return (bits_of(got) | 0x0008000000000000ull) == (bits_of(want) | 0x0008000000000000ull);
  return bits_of(got) == bits_of(want);
}

/// Forces (or allows) the scalar path for its lifetime, then allows AVX2 again.
struct PathGuard {
  /// @param scalar_only whether to force the scalar loop.
  explicit PathGuard(bool scalar_only) { set_math_array_scalar_only(scalar_only); }
  ~PathGuard() { set_math_array_scalar_only(false); }
  PathGuard(const PathGuard&) = delete;
  PathGuard& operator=(const PathGuard&) = delete;
};

/// Returned by first_float_mismatch when every pattern agreed.
inline constexpr uint64_t kNoMismatch = ~uint64_t{0};

/// Compares array_f with scalar_f (same_result) on the float patterns first, first + stride, ... <= last,
/// a buffer at a time. @param first first pattern. @param last last pattern (inclusive).
/// @param stride step between patterns. @param array_f the array function.
/// @param scalar_f the scalar definition. @return the first pattern whose bits differ, or
/// kNoMismatch.
template <typename ArrayF, typename ScalarF>
uint64_t first_float_mismatch(uint64_t first, uint64_t last, uint64_t stride, ArrayF array_f, ScalarF scalar_f) {
  constexpr std::size_t kBuf = 4096;
  std::vector<float> x(kBuf), y(kBuf);
  std::vector<uint64_t> pattern(kBuf);
  uint64_t b = first;
  while (b <= last) {
    std::size_t n = 0;
    for (; n < kBuf && b <= last; ++n, b += stride) {
      pattern[n] = b;
      const uint32_t b32 = static_cast<uint32_t>(b);
      std::memcpy(&x[n], &b32, 4);
    }
    array_f(x.data(), y.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      if (!same_result(y[i], scalar_f(x[i]))) return pattern[i];
    }
  }
  return kNoMismatch;
}

}  // namespace zt::kernels::math_array_test
