// Spacing, next value up/down and swamping (fp/spacing.h). The references are built differently:
// for fp16/bf16 the sorted list of every value of the format, for fp32 std::nextafter.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "fp/spacing.h"

using zt::Format;

namespace {

/// Every non-NaN value of a 16-bit format in increasing order, -0 dropped (+0 stands for both).
std::vector<float> sorted_values(Format f) {
  std::vector<float> v;
  for (uint32_t b = 0; b < 65536; ++b) {
    const float x = zt::float_from_format_bits(b, f);
    if (x == x && !(x == 0.0f && std::signbit(x))) v.push_back(x);
  }
  std::sort(v.begin(), v.end());
  return v;
}

float expected_next_up(const std::vector<float>& values, float x) {
  auto it = std::upper_bound(values.begin(), values.end(), x);
  return it == values.end() ? std::numeric_limits<float>::infinity() : *it;
}

float expected_next_down(const std::vector<float>& values, float x) {
  auto it = std::lower_bound(values.begin(), values.end(), x);
  return it == values.begin() ? -std::numeric_limits<float>::infinity() : *(it - 1);
}

}  // namespace

TEST_CASE("spacing at 1.0 is 2^-M", "[ch1][fp]") {
  CHECK(double(zt::spacing(1.0f, Format::fp16)) == std::ldexp(1.0, -10));
  CHECK(double(zt::spacing(1.0f, Format::bf16)) == std::ldexp(1.0, -7));
  CHECK(double(zt::spacing(1.0f, Format::fp32)) == std::ldexp(1.0, -23));
  CHECK(double(zt::spacing(1.5f, Format::fp16)) == std::ldexp(1.0, -10));
  CHECK(double(zt::spacing(0.75f, Format::fp16)) == std::ldexp(1.0, -11));  // one binade down
  CHECK(zt::spacing(-1.0f, Format::fp16) == zt::spacing(1.0f, Format::fp16));
  CHECK(zt::spacing(1000.0f, Format::fp16) == 0.5f);  // 1000 is in [512, 1024): 2^(9-10)
  CHECK(zt::spacing(60000.0f, Format::fp16) == 32.0f);
  CHECK(std::isinf(zt::spacing(65536.0f, Format::fp16)));                   // past the largest binade
  CHECK(double(zt::spacing(1e-6f, Format::fp16)) == std::ldexp(1.0, -24));  // subnormal range
  CHECK(zt::spacing(0.0f, Format::fp16) == zt::smallest_subnormal(Format::fp16));
  CHECK(std::isnan(zt::spacing(NAN, Format::bf16)));
}

TEST_CASE("spacing equals the gap to the next value, for every value of fp16 and bf16", "[ch1][fp]") {
  for (Format f : {Format::fp16, Format::bf16}) {
    const std::vector<float> values = sorted_values(f);
    int bad = 0;
    for (float v : values) {
      if (v < 0.0f || v >= zt::largest_normal(f)) continue;
      bad += zt::spacing(v, f) != expected_next_up(values, v) - v;
    }
    CHECK(bad == 0);
  }
}

TEST_CASE("fp32 spacing and next up/down equal std::nextafter", "[ch1][fp]") {
  const float inf = std::numeric_limits<float>::infinity();
  int bad = 0;
  for (uint64_t b = 0; b < (1ull << 32); b += 4099) {
    const float x = zt::bit_cast_hd<float>(uint32_t(b));
    if (x != x) continue;
    bad += zt::bit_cast_hd<uint32_t>(zt::next_up(x, Format::fp32)) != zt::bit_cast_hd<uint32_t>(std::nextafter(x, inf));
    bad +=
        zt::bit_cast_hd<uint32_t>(zt::next_down(x, Format::fp32)) != zt::bit_cast_hd<uint32_t>(std::nextafter(x, -inf));
    if (x > 0 && x < std::numeric_limits<float>::max())
      bad += zt::spacing(x, Format::fp32) != std::nextafter(x, inf) - x;
  }
  CHECK(bad == 0);
}

TEST_CASE("next up/down: the neighbours in the sorted list of all values", "[ch1][fp]") {
  for (Format f : {Format::fp16, Format::bf16}) {
    const std::vector<float> values = sorted_values(f);
    int bad = 0;
    // every value of the format, and floats in between (need not be representable)
    for (float v : values) {
      bad += zt::next_up(v, f) != expected_next_up(values, v);
      bad += zt::next_down(v, f) != expected_next_down(values, v);
    }
    for (uint64_t b = 0; b < (1ull << 32); b += 65537) {
      const float x = zt::bit_cast_hd<float>(uint32_t(b));
      if (x != x) continue;
      bad += zt::next_up(x, f) != expected_next_up(values, x);
      bad += zt::next_down(x, f) != expected_next_down(values, x);
    }
    CHECK(bad == 0);
    CHECK(std::isnan(zt::next_up(NAN, f)));
  }
}

TEST_CASE("next up is one bit increment for positive fp16 patterns", "[ch1][fp]") {
  for (uint32_t h = 0; h < 0x7c00; ++h)
    REQUIRE(zt::next_up(zt::float_from_fp16_bits(uint16_t(h)), Format::fp16) ==
            zt::float_from_fp16_bits(uint16_t(h + 1)));
  CHECK(std::isinf(zt::next_up(65504.0f, Format::fp16)));
  CHECK(zt::next_down(-65504.0f, Format::fp16) == -std::numeric_limits<float>::infinity());
  CHECK(zt::next_up(-0.0f, Format::fp16) == zt::smallest_subnormal(Format::fp16));
  CHECK(zt::next_down(0.0f, Format::bf16) == -zt::smallest_subnormal(Format::bf16));
}

TEST_CASE("swamping: 1 + 1e-5 is lost in fp16 and bf16, kept in fp32", "[ch1][fp]") {
  CHECK(zt::swamps(1.0f, 1e-5f, Format::fp16));
  CHECK(zt::swamps(1.0f, 1e-5f, Format::bf16));
  CHECK_FALSE(zt::swamps(1.0f, 1e-5f, Format::fp32));
  CHECK(zt::add_in_format(1.0f, 1e-5f, Format::fp32) == 1.0f + 1e-5f);
  CHECK_FALSE(zt::swamps(1.0f, 1e-3f, Format::fp16));  // above half the spacing 2^-10
  CHECK_FALSE(zt::swamps(NAN, 1.0f, Format::fp16));
}

TEST_CASE("swamping threshold at 1.0: half a spacing above, a quarter below", "[ch1][fp]") {
  // Above 1 the gap is 2^-M, so updates up to half of it (the tie goes to 1, whose last bit is
  // even) are lost. Below 1 the gap is 2^-(M+1): a decrease is lost only up to 2^-(M+2).
  for (Format f : {Format::fp16, Format::bf16}) {
    const int M = zt::layout(f).fraction_bits;
    const float half_up = zt::pow2f(-M - 1), half_down = zt::pow2f(-M - 2);
    CHECK(zt::swamps(1.0f, half_up, f));
    CHECK_FALSE(zt::swamps(1.0f, zt::next_up(half_up, f), f));
    CHECK(zt::swamps(1.0f, -half_down, f));
    CHECK_FALSE(zt::swamps(1.0f, -zt::next_up(half_down, f), f));
    // every update of the format between 0 and 1: lost exactly when it is at most half_up
    int bad = 0;
    for (uint32_t b = 1; b < 65536; ++b) {
      const float d = zt::float_from_format_bits(b, f);
      if (!(d > 0.0f && d < 1.0f)) continue;
      bad += zt::swamps(1.0f, d, f) != (d <= half_up);
    }
    CHECK(bad == 0);
  }
}
