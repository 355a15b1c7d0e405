// support/order_sensitive.h — test inputs whose sums depend on the order of summation: random
// signs, 24-bit mantissas and exponents over 2^-20 .. 2^20 (no denormals, no overflow in products
// of two). A kernel that reorders a sum over such values changes its bits, so bitwise tests on them
// can fail. Deterministic in the seed (xorshift64).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace zt::test {

/// n order-sensitive floats from a seed.
/// @param n how many. @param seed the stream. @return the values.
inline std::vector<float> order_sensitive(std::size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& x : v) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    const float mant = 1.0f + static_cast<float>(s & 0xFFFFFF) / 16777216.0f;
    const int e = static_cast<int>((s >> 24) % 41) - 20;
    x = std::ldexp((s >> 40) & 1 ? -mant : mant, e);
  }
  return v;
}

}  // namespace zt::test
