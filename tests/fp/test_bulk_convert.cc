// tests/fp/test_bulk_convert.cc — the array conversions (fp/bulk_convert.h) give the scalar
// conversions' bits on both paths (F16C and the scalar loop), at every length (vector body and tail).
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "fp/bulk_convert.h"

namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Floats that exercise every rounding case: fp16 normal/subnormal boundaries, ties (odd and even),
// overflow threshold 65520, NaNs with payloads, ±0, ±inf, plus random patterns of every exponent.
std::vector<float> narrowing_inputs() {
  std::vector<float> v;
  for (uint32_t h = 0; h < 0x7c00u; ++h) {  // every finite fp16 magnitude and the midpoints around it
    const float f = static_cast<float>(zt::fp16::from_bits(static_cast<uint16_t>(h)));
    for (int d = -2; d <= 2; ++d) v.push_back(float_of(bits_of(f) + static_cast<uint32_t>(d)));
  }
  for (uint32_t u : {0x477ff000u, 0x477fefffu, 0x477ff001u, 0x7f800000u, 0x7fc00001u, 0x7f800001u, 0x7fffffffu,
                     0x33000000u, 0x33000001u, 0x32ffffffu, 0x00000001u, 0x007fffffu})
    v.push_back(float_of(u));
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) v.push_back(float_of(static_cast<uint32_t>(rng())));
  const std::size_t n = v.size();
  for (std::size_t i = 0; i < n; ++i) v.push_back(-v[i]);
  return v;
}

void check_both_paths(const std::function<void()>& check) {
  zt::set_bulk_fp16_scalar_only(true);
  check();
  zt::set_bulk_fp16_scalar_only(false);
  if (!zt::bulk_fp16_uses_f16c()) WARN("no F16C on this CPU: only the scalar path was checked");
  check();
}

}  // namespace

TEST_CASE("widen_fp16 equals the scalar widening for all 65536 patterns, both paths", "[ch1]") {
  std::vector<zt::fp16> in(65536 + 5);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = zt::fp16::from_bits(static_cast<uint16_t>(i * 40503u));
  check_both_paths([&] {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{9}, in.size()}) {
      std::vector<float> out(n + 1, -1.0f);
      zt::widen_fp16(in.data(), out.data(), n);
      for (std::size_t i = 0; i < n; ++i) REQUIRE(bits_of(out[i]) == bits_of(static_cast<float>(in[i])));
      REQUIRE(out[n] == -1.0f);  // nothing written past n
    }
  });
}

TEST_CASE("narrow_fp16 equals the scalar rounding on boundaries, ties, NaNs and random floats, both paths", "[ch1]") {
  const std::vector<float> in = narrowing_inputs();
  check_both_paths([&] {
    for (std::size_t n : {std::size_t{3}, std::size_t{8}, std::size_t{13}, in.size()}) {
      std::vector<zt::fp16> out(n + 1, zt::fp16::from_bits(0xabcdu));
      zt::narrow_fp16(in.data(), out.data(), n);
      for (std::size_t i = 0; i < n; ++i) REQUIRE(out[i].bits == zt::fp16(in[i]).bits);
      REQUIRE(out[n].bits == 0xabcdu);
    }
  });
}
