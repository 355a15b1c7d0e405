// tests/fp/hw_convert.h — the CPU's own float -> fp16 / bf16 conversion instructions, used as an
// oracle by the exhaustive sweep. Each is compiled for its instruction set with a target
// attribute, so the build needs no -march flag, and is called only after a run-time CPU check.
// On anything that is not x86-64 the checks say "absent" and the converters are never called.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zt::test {

/// Whether this CPU has F16C (VCVTPS2PH).
bool cpu_has_f16c();
/// Whether this CPU has AVX512-BF16 (VCVTNEPS2BF16).
bool cpu_has_avx512bf16();

/// fp16 by VCVTPS2PH with imm8 = round to nearest even. n must be a multiple of 16.
void f16c_fp16_bits(const float* in, uint16_t* out, std::size_t n);

/// float from fp16 by VCVTPH2PS. n must be a multiple of 8.
void f16c_float_from_fp16(const uint16_t* in, float* out, std::size_t n);

/// bf16 by VCVTNEPS2BF16 (always RNE; float subnormal inputs are read as zero: DAZ, and the
/// result is flushed to zero: FTZ — so it is an oracle for normal inputs only). n multiple of 16.
void avx512_bf16_bits(const float* in, uint16_t* out, std::size_t n);

}  // namespace zt::test
