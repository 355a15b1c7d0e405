// fp/bulk_convert.h — converting whole arrays between float and fp16, as the kernels do around
// every GEMM (kernels/cast.h).
//
// The scalar conversions of fp16.h are the definition. On x86 CPUs with F16C the array versions
// use the VCVTPH2PS / VCVTPS2PH instructions instead, eight values at a time; that is not a second
// definition: tests/fp/test_exhaustive_sweep.cc shows fp16_bits_from_float equals VCVTPS2PH for all
// 2^32 float patterns (round to nearest even, the same NaN rule), and test_roundtrip.cc that
// float_from_fp16_bits equals VCVTPH2PS for all 65 536 fp16 patterns, so either path gives the
// same bits. The scalar loop is branchy (about 2.5 ns a value), the instruction about 0.1 ns. Not
// here: bf16, whose conversions are shifts and adds the compiler vectorises by itself.
#pragma once

#include <cstddef>

#include "fp/fp16.h"

namespace zt {

/// dst[i] = float(src[i]) for i < n (exact). @param src n fp16 values. @param dst n floats.
/// @param n count.
void widen_fp16(const fp16* src, float* dst, std::size_t n);

/// dst[i] = fp16(src[i]) for i < n (round to nearest even). @param src n floats.
/// @param dst n fp16 values. @param n count.
void narrow_fp16(const float* src, fp16* dst, std::size_t n);

/// Whether the array conversions use the F16C instructions on this CPU (else the scalar loop).
/// @return true with F16C.
bool bulk_fp16_uses_f16c();

/// Force the scalar loop (true) or allow F16C again (false): for tests that compare the paths
/// and for benchmarks. Not thread-safe against concurrent conversions.
/// @param scalar_only whether to force the scalar loop.
void set_bulk_fp16_scalar_only(bool scalar_only);

}  // namespace zt
