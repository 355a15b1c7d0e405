// kernels/math_array.h — exp and tanh over whole arrays, bit for bit the scalar functions of
// kernels/math.h.
//
// The scalar exp_d/tanh_d (and their float wrappers) stay the definition; the GPU build calls
// them per element. These array versions evaluate, for each element, exactly the same sequence
// of IEEE-754 double operations (same constants, same order, separate multiplies and adds, the
// same round-half-away k and the same 2^k construction, the special cases chosen per lane with
// masks), four doubles at a time with AVX2 where the CPU has it, else the scalar loop. Because
// every step is a correctly rounded IEEE operation, both paths give the same bits;
// tests/kernels/test_math_array.cc checks that over special values, every tail length and a
// strided sweep of all float patterns. Not here: log (not on the model's hot path) or any
// approximation that differs from math.h.
#pragma once

#include <cstddef>

namespace zt::kernels {

/// y[i] = exp_f(x[i]) for i < n. y may be the same array as x.
/// @param x n floats. @param y n floats (written). @param n count.
void exp_f_n(const float* x, float* y, std::size_t n);

/// y[i] = tanh_f(x[i]) for i < n. y may be the same array as x.
/// @param x n floats. @param y n floats (written). @param n count.
void tanh_f_n(const float* x, float* y, std::size_t n);

/// Whether the array functions use AVX2 on this CPU (else the scalar loop).
/// @return true with AVX2 and the scalar path not forced.
bool math_array_uses_avx2();

/// Force the scalar loop (true) or allow AVX2 again (false): for tests that compare the paths
/// and for benchmarks. Not thread-safe against concurrent calls.
/// @param scalar_only whether to force the scalar loop.
void set_math_array_scalar_only(bool scalar_only);

}  // namespace zt::kernels
