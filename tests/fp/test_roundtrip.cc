// Every one of the 65,536 fp16 and bf16 bit patterns: widening to float is exact (checked against
// an ldexp decoder and, where the CPU has it, against VCVTPH2PS) and rounding back gives the same
// pattern. NaNs stay NaN under the quiet-NaN rule of fp16.h / bf16.h: the way back sets the quiet
// bit and keeps sign and payload, so a quiet NaN returns unchanged and a signalling one quietened.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "fp/bf16.h"
#include "fp/fp16.h"
#include "hw_convert.h"
#include "reference_rounding.h"

TEST_CASE("fp16: all 65536 patterns round-trip 16 -> float -> 16", "[ch1][fp]") {
  int nans = 0, bad_value = 0, bad_trip = 0, bad_nan = 0;
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = zt::float_from_fp16_bits(uint16_t(h));
    const uint16_t back = zt::fp16_bits_from_float(f);
    const bool is_nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
    if (!is_nan) {
      bad_value += double(f) != zt::test::reference_fp16_value(uint16_t(h));
      bad_trip += back != h;
      continue;
    }
    ++nans;
    const uint32_t fb = zt::test::float_bits(f);
    // float NaN: sign kept, quiet bit set, payload in the top 10 fraction bits
    bad_nan += !std::isnan(f) || fb != (((h & 0x8000u) << 16) | 0x7fc00000u | ((h & 0x3ffu) << 13));
    bad_nan += back != (h | 0x200u);       // quiet bit set on the way back
    if (h & 0x200u) bad_nan += back != h;  // a quiet NaN returns unchanged
  }
  CHECK(nans == 2 * 1023);
  CHECK(bad_value == 0);
  CHECK(bad_trip == 0);
  CHECK(bad_nan == 0);
}

TEST_CASE("bf16: all 65536 patterns round-trip 16 -> float -> 16", "[ch1][fp]") {
  int nans = 0, bad_value = 0, bad_trip = 0, bad_nan = 0;
  for (uint32_t b = 0; b < 65536; ++b) {
    const float f = zt::float_from_bf16_bits(uint16_t(b));
    const uint16_t back = zt::bf16_bits_from_float(f);
    const bool is_nan = (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0;
    if (!is_nan) {
      bad_value += double(f) != zt::test::reference_bf16_value(uint16_t(b));
      bad_trip += back != b;
      continue;
    }
    ++nans;
    bad_nan += !std::isnan(f) || zt::test::float_bits(f) != (b << 16);  // widening keeps the bits
    bad_nan += back != (b | 0x40u);
    if (b & 0x40u) bad_nan += back != b;
  }
  CHECK(nans == 2 * 127);
  CHECK(bad_value == 0);
  CHECK(bad_trip == 0);
  CHECK(bad_nan == 0);
}

TEST_CASE("fp16 -> float equals VCVTPH2PS for all 65536 patterns (when the CPU has F16C)", "[ch1][fp]") {
  if (!zt::test::cpu_has_f16c()) {
    WARN("no F16C on this CPU: the ldexp decoder above is the only oracle");
    return;
  }
  std::vector<uint16_t> in(65536);
  for (uint32_t h = 0; h < 65536; ++h) in[h] = uint16_t(h);
  std::vector<float> hw(65536);
  zt::test::f16c_float_from_fp16(in.data(), hw.data(), in.size());
  int bad = 0;
  for (uint32_t h = 0; h < 65536; ++h)
    bad += zt::test::float_bits(hw[h]) != zt::test::float_bits(zt::float_from_fp16_bits(in[h]));
  CHECK(bad == 0);
}
