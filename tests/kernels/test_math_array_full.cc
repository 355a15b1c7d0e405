// Exhaustive: the array exp_f_n/tanh_f_n equal exp_f/tanh_f for all 2^32 float patterns (on the
// AVX2 path where the CPU has it). Minutes of CPU time, so registered under the CTest label
// `full` only (`ctest -L full`); `make test` runs the every-97th-pattern sweep of
// test_math_array.cc instead.
#include <catch2/catch.hpp>

#include <cstdint>

#include "kernels/math.h"
#include "kernels/math_array_test_util.h"

using zt::kernels::math_array_test::first_float_mismatch;
using zt::kernels::math_array_test::kNoMismatch;

TEST_CASE("array exp_f/tanh_f equal the scalar functions on all 2^32 float patterns", "[ch2][kernels][math]") {
  INFO("AVX2 in use: " << zt::kernels::math_array_uses_avx2());
  const uint64_t exp_bad =
      first_float_mismatch(0, 0xffffffffull, 1, zt::kernels::exp_f_n, [](float v) { return zt::kernels::exp_f(v); });
  INFO("exp_f_n first mismatching pattern: " << std::hex << exp_bad);
  CHECK(exp_bad == kNoMismatch);
  const uint64_t tanh_bad =
      first_float_mismatch(0, 0xffffffffull, 1, zt::kernels::tanh_f_n, [](float v) { return zt::kernels::tanh_f(v); });
  INFO("tanh_f_n first mismatching pattern: " << std::hex << tanh_bad);
  CHECK(tanh_bad == kNoMismatch);
}
