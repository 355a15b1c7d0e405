// Known values of the two 16-bit formats, checked against their bit layouts by hand.
#include <catch2/catch.hpp>

#include "fp/bf16.h"
#include "fp/fp16.h"

using zt::bf16;
using zt::fp16;

TEST_CASE("fp16 known bit patterns", "[ch1][fp]") {
  CHECK(fp16(1.0f).bits == 0x3c00);
  CHECK(fp16(-2.0f).bits == 0xc000);
  CHECK(fp16(65504.0f).bits == 0x7bff);
  CHECK(fp16(65519.0f).bits == 0x7bff);  // below the halfway point 65520
  CHECK(fp16(65520.0f).bits == 0x7c00);  // halfway, 65504 is odd: ties to even = inf
  CHECK(fp16(0x1p-24f).bits == 0x0001);  // smallest subnormal
  CHECK(fp16(0x1p-25f).bits == 0x0000);  // exactly half of it: ties to even = 0
  CHECK(fp16(0x1.8p-25f).bits == 0x0001);
  CHECK(fp16(1.0f + 0x1p-11f).bits == 0x3c00);  // tie between 1 and 1+2^-10: even is 1
  CHECK(float(fp16::from_bits(0x3555)) == 0x1.554p-2f);
}

TEST_CASE("bf16 known bit patterns", "[ch1][fp]") {
  CHECK(bf16(1.0f).bits == 0x3f80);
  CHECK(bf16(1.0f + 0x1p-8f).bits == 0x3f80);            // tie, even stays
  CHECK(bf16(1.0f + 0x1p-7f + 0x1p-8f).bits == 0x3f82);  // tie, odd rounds up
  CHECK(bf16(3.4e38f).bits == 0x7f80);                   // past the largest: inf
  CHECK(float(bf16::from_bits(0x4049)) == 3.140625f);
}
