// Format properties (fp/format.h) against closed forms, the formats' own bit patterns and
// std::numeric_limits; round_to_format against the 16-bit conversions.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "fp/format.h"

using zt::Format;

TEST_CASE("format layouts and biases", "[ch1][fp]") {
  CHECK(zt::total_bits(Format::fp32) == 32);
  CHECK(zt::total_bits(Format::fp16) == 16);
  CHECK(zt::total_bits(Format::bf16) == 16);
  CHECK(zt::exponent_bias(Format::fp32) == 127);
  CHECK(zt::exponent_bias(Format::fp16) == 15);
  CHECK(zt::exponent_bias(Format::bf16) == 127);
  CHECK(zt::min_exponent(Format::fp16) == -14);
  CHECK(zt::max_exponent(Format::fp16) == 15);
}

TEST_CASE("pow2f is exact over float's whole exponent range", "[ch1][fp]") {
  for (int k = -149; k <= 127; ++k) CHECK(double(zt::pow2f(k)) == std::ldexp(1.0, k));
  CHECK(zt::pow2f(-150) == 0.0f);
  CHECK(std::isinf(zt::pow2f(128)));
}

TEST_CASE("fp32 properties equal std::numeric_limits<float>", "[ch1][fp]") {
  using L = std::numeric_limits<float>;
  CHECK(zt::largest_normal(Format::fp32) == L::max());
  CHECK(zt::smallest_normal(Format::fp32) == L::min());
  CHECK(zt::smallest_subnormal(Format::fp32) == L::denorm_min());
  CHECK(zt::machine_epsilon(Format::fp32) == L::epsilon());
}

TEST_CASE("fp16 properties: closed forms and the format's own patterns", "[ch1][fp]") {
  const Format f = Format::fp16;
  CHECK(zt::largest_normal(f) == 65504.0f);  // (2 - 2^-10) * 2^15
  CHECK(zt::largest_normal(f) == zt::float_from_fp16_bits(0x7bff));
  CHECK(double(zt::smallest_normal(f)) == std::ldexp(1.0, -14));
  CHECK(zt::smallest_normal(f) == zt::float_from_fp16_bits(0x0400));
  CHECK(double(zt::smallest_subnormal(f)) == std::ldexp(1.0, -24));
  CHECK(zt::smallest_subnormal(f) == zt::float_from_fp16_bits(0x0001));
  CHECK(zt::machine_epsilon(f) == zt::float_from_fp16_bits(0x3c01) - 1.0f);
  CHECK(double(zt::machine_epsilon(f)) == std::ldexp(1.0, -10));
}

TEST_CASE("bf16 properties: closed forms and the format's own patterns", "[ch1][fp]") {
  const Format f = Format::bf16;
  CHECK(double(zt::largest_normal(f)) == std::ldexp(2.0 - std::ldexp(1.0, -7), 127));
  CHECK(zt::largest_normal(f) == zt::float_from_bf16_bits(0x7f7f));
  CHECK(zt::smallest_normal(f) == zt::float_from_bf16_bits(0x0080));
  CHECK(double(zt::smallest_subnormal(f)) == std::ldexp(1.0, -133));
  CHECK(zt::smallest_subnormal(f) == zt::float_from_bf16_bits(0x0001));
  CHECK(double(zt::machine_epsilon(f)) == std::ldexp(1.0, -7));
  CHECK(zt::machine_epsilon(f) == zt::float_from_bf16_bits(0x3f81) - 1.0f);
}

TEST_CASE("round_to_format goes through the 16-bit conversions and leaves fp32 alone", "[ch1][fp]") {
  for (uint64_t b = 0; b < (1ull << 32); b += 9973) {
    const float x = zt::bit_cast_hd<float>(uint32_t(b));
    if (x != x) continue;
    REQUIRE(zt::round_to_format(x, Format::fp16) == float(zt::fp16(x)));
    REQUIRE(zt::round_to_format(x, Format::bf16) == float(zt::bf16(x)));
    REQUIRE(zt::bit_cast_hd<uint32_t>(zt::round_to_format(x, Format::fp32)) == uint32_t(b));
  }
  CHECK(zt::round_to_format(65519.0f, Format::fp16) == 65504.0f);
  CHECK(std::isinf(zt::round_to_format(65520.0f, Format::fp16)));
  CHECK(zt::round_to_format(1e-8f, Format::fp16) == 0.0f);  // below half the smallest subnormal
  CHECK(zt::round_to_format(1e-8f, Format::bf16) != 0.0f);  // bf16 has float's range
}
