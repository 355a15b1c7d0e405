// Stochastic rounding (fp/stochastic_round.h), checked exactly: for each input all 2^16 values
// of the random bits are enumerated, the rounded-up outcomes counted, and the count compared with
// the dropped fraction computed independently in double (frexp/ldexp/floor). No statistics.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "fp/format.h"
#include "fp/random_bits.h"
#include "fp/stochastic_round.h"
#include "reference_rounding.h"

using zt::Format;

namespace {

/// For finite x below the format's overflow: the magnitudes just below/above |x| (down <= |x| <
/// up) and the expected number of the 2^16 random values that round up, floor(2^16 * (|x| -
/// down) / spacing). The 16-bit window of the rule is exact except for fp16 subnormal results
/// of |x| < 2^-17, where the floor is what the rule specifies.
struct Expected {
  double down, up;
  uint64_t ups;
};

Expected expected_rounding(float x, int E, int M) {
  const double ax = std::fabs(double(x));
  const int emin = 2 - (1 << (E - 1));
  int k = 0;
  std::frexp(ax, &k);
  const int e = ax == 0.0 ? emin : std::max(k - 1, emin);
  const double q = std::floor(std::ldexp(ax, M - e));
  const double down = std::ldexp(q, e - M), up = std::ldexp(q + 1, e - M);
  return {down, up, uint64_t(std::floor(std::ldexp(ax - down, 16 - (e - M))))};
}

uint16_t round_sr(Format f, float x, uint16_t r) {
  return f == Format::fp16 ? zt::fp16_bits_stochastic(x, r) : zt::bf16_bits_stochastic(x, r);
}

/// Enumerate all r for x; count outcomes equal to the pattern of +-down and of +-up.
void check_exact(Format f, float x) {
  const int E = zt::layout(f).exponent_bits, M = zt::layout(f).fraction_bits;
  const Expected want = expected_rounding(x, E, M);
  const float s = std::signbit(x) ? -1.0f : 1.0f;
  // up may be 2^(emax+1), which is no value of the format: its pattern is inf
  const uint32_t down_bits = zt::test::reference_round_bits(s * float(want.down), E, M);
  const uint32_t up_bits = zt::test::reference_round_bits(s * float(want.up), E, M);
  uint64_t ups = 0, others = 0;
  for (uint32_t r = 0; r < 65536; ++r) {
    const uint16_t got = round_sr(f, x, uint16_t(r));
    ups += got == up_bits;
    others += got != up_bits && got != down_bits;
  }
  INFO(zt::format_name(f) << " x = " << x << " (bits 0x" << std::hex << zt::test::float_bits(x) << std::dec
                          << "), expected ups " << want.ups);
  REQUIRE(others == 0);
  REQUIRE(ups == want.ups);
}

/// Inputs: structured neighbourhoods (1.0, powers of two, the format's extremes, ties) and
/// pseudo-random patterns across all exponents; both signs.
std::vector<float> inputs(Format f) {
  std::vector<uint32_t> bits = {0x3f800000u, 0x3f800001u, 0x3f801000u, 0x3f802000u, 0x3f803fffu, 0x3f808000u,
                                0x3f80ffffu, 0x3f7fffffu, 0x40490fdbu, 0x00000001u, 0x00012345u, 0x007fffffu,
                                0x00800000u, 0x7f7fffffu, 0x7f7f8000u, 0x7f7f0001u};
  const float fp16_specials[] = {65504.0f,        65505.0f,        65519.0f, 65520.0f,   65535.99f, 6.1e-5f,
                                 0x1p-14f,        0x1.fffp-15f,    0x1p-24f, 0x1.8p-25f, 3e-8f,     0x1p-17f,
                                 0x1.234568p-17f, 0x1.234568p-20f, 1e-6f,    1e-30f};
  for (float v : fp16_specials) bits.push_back(zt::test::float_bits(v));
  for (uint64_t i = 0; i < 400; ++i) bits.push_back(uint32_t(zt::splitmix64_mix(i)));
  std::vector<float> out;
  for (uint32_t b : bits) {
    for (uint32_t sign : {0u, 0x80000000u}) {
      const float x = zt::bit_cast_hd<float>(b ^ sign);
      if (std::isnan(x) || std::isinf(x)) continue;
      if (f == Format::fp16 && std::fabs(x) >= 65536.0f) continue;  // always inf, tested below
      out.push_back(x);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("stochastic bf16: P(up) is exactly the dropped fraction, over all 2^16 r", "[ch1][fp]") {
  for (float x : inputs(Format::bf16)) check_exact(Format::bf16, x);
}

TEST_CASE("stochastic fp16: P(up) is exactly the dropped fraction, over all 2^16 r", "[ch1][fp]") {
  for (float x : inputs(Format::fp16)) check_exact(Format::fp16, x);
}

TEST_CASE("stochastic rounding is unbiased where the window is exact", "[ch1][fp]") {
  // sum over all r of the result == 2^16 * x exactly (E[round(x)] = x)
  for (float x : {1.0f + 0x1p-9f, -3.14159274f, 0x1.fffffep-1f, 1e-3f, 0x1.234568p-16f}) {
    for (Format f : {Format::fp16, Format::bf16}) {
      double sum = 0;
      for (uint32_t r = 0; r < 65536; ++r) sum += zt::float_from_format_bits(round_sr(f, x, uint16_t(r)), f);
      CHECK(sum == 65536.0 * double(x));
    }
  }
}

TEST_CASE("stochastic rounding: exact values never move, specials and overflow", "[ch1][fp]") {
  const float inf = INFINITY;
  // every value of each 16-bit format is left alone by every r (checked on a stride of r)
  for (uint32_t b = 0; b < 65536; ++b) {
    const bool h_nan = (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu);
    const bool b_nan = (b & 0x7f80u) == 0x7f80u && (b & 0x7fu);
    for (uint32_t r = 0; r < 65536; r += 4097) {
      if (!h_nan) REQUIRE(zt::fp16_bits_stochastic(zt::float_from_fp16_bits(uint16_t(b)), uint16_t(r)) == b);
      if (!b_nan) REQUIRE(zt::bf16_bits_stochastic(zt::float_from_bf16_bits(uint16_t(b)), uint16_t(r)) == b);
    }
  }
  for (uint32_t r : {0u, 1u, 0x8000u, 0xffffu}) {
    const uint16_t rr = uint16_t(r);
    CHECK(zt::fp16_bits_stochastic(inf, rr) == 0x7c00);
    CHECK(zt::fp16_bits_stochastic(-inf, rr) == 0xfc00);
    CHECK(zt::bf16_bits_stochastic(inf, rr) == 0x7f80);
    CHECK(zt::bf16_bits_stochastic(-inf, rr) == 0xff80);
    CHECK(zt::fp16_bits_stochastic(-0.0f, rr) == 0x8000);
    CHECK(zt::bf16_bits_stochastic(-0.0f, rr) == 0x8000);
    CHECK(zt::fp16_bits_stochastic(65536.0f, rr) == 0x7c00);  // past the largest binade
    CHECK(zt::fp16_bits_stochastic(-1e30f, rr) == 0xfc00);
    // NaN: the round-to-nearest NaN (quiet, sign and payload kept)
    for (uint32_t nan : {0x7fc00000u, 0xffa00001u, 0x7f812345u}) {
      const float x = zt::bit_cast_hd<float>(nan);
      CHECK(zt::fp16_bits_stochastic(x, rr) == zt::fp16_bits_from_float(x));
      CHECK(zt::bf16_bits_stochastic(x, rr) == zt::bf16_bits_from_float(x));
    }
  }
  // overflow by chance: 65519 is 15/32 of the way from 65504 to 65536 (inf)
  int to_inf = 0;
  for (uint32_t r = 0; r < 65536; ++r) to_inf += zt::fp16_bits_stochastic(65519.0f, uint16_t(r)) == 0x7c00;
  CHECK(to_inf == 15 * 2048);
  // float's largest value has all 16 dropped bf16 bits set: all but one r overflow
  int bf_inf = 0;
  for (uint32_t r = 0; r < 65536; ++r)
    bf_inf += zt::bf16_bits_stochastic(zt::largest_normal(Format::fp32), uint16_t(r)) == 0x7f80;
  CHECK(bf_inf == 0xffff);
}

TEST_CASE("random16 is a pure function of (seed, counter)", "[ch1][fp]") {
  CHECK(zt::random16(7, 12345) == zt::random16(7, 12345));
  int same = 0;
  for (uint64_t i = 0; i < 1000; ++i) same += zt::random16(1, i) == zt::random16(2, i);
  CHECK(same < 1000);
}
