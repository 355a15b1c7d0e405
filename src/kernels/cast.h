// kernels/cast.h — moving values between a compute type (float, fp16, bf16) and float.
//
// Every kernel is written once, templated on the compute type T. It reads T values widened to
// float (exact), computes in float, and writes T values rounded once (round to nearest even):
// for T = float both steps are the identity. This file is those two steps (ZT_HD: the GPU kernels
// widen and round with the very same functions) and the bulk versions
// that stage a whole array in float scratch for a GEMM. It is not a tensor or dtype library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/cpu_pool.h"
#include "fp/bf16.h"
#include "fp/bulk_convert.h"
#include "fp/fp16.h"
#include "fp/hd.h"

namespace zt::kernels {

/// The fewest rows of width C a row-wise loop gives a thread: about kCpuElementGrain elements
/// (core/cpu_pool.h). Loops split by elements or rows change no bits: each is computed alone.
/// @param C the row width. @return that many rows, at least 1.
inline int64_t row_grain(int64_t C) { return C >= kCpuElementGrain ? 1 : kCpuElementGrain / (C > 0 ? C : 1); }

/// Widen a compute-type value to float (exact).
/// @param v the value. @return v as float.
template <typename T>
ZT_HD float to_f(T v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else {
    return static_cast<float>(v);
  }
}

/// Round a float to the compute type (nearest even; identity for float).
/// @param f the value. @return f in T.
template <typename T>
ZT_HD T from_f(float f) {
  if constexpr (std::is_same_v<T, float>) {
    return f;
  } else {
    return T(f);
  }
}

/// Widen n values of the compute type into float storage of the caller's (a copy even for float),
/// the rank's threads splitting the elements. @param dst n floats (written). @param src n values.
/// @param n count.
template <typename T>
inline void widen_into(float* dst, const T* src, int64_t n) {
  parallel_for(n, kCpuElementGrain, [&](int64_t lo, int64_t hi) {
    if constexpr (std::is_same_v<T, fp16>) {
      widen_fp16(src + lo, dst + lo, static_cast<std::size_t>(hi - lo));  // F16C when present: the same bits
    } else {
      for (int64_t i = lo; i < hi; ++i) dst[i] = to_f(src[i]);
    }
  });
}

/// Widen n values into float scratch, or, for T = float, hand back the input itself.
/// @param src n values of T. @param n count. @param scratch room for n floats (unused for float).
/// @return a pointer to n floats holding the widened values.
template <typename T>
inline const float* widen(const T* src, std::size_t n, float* scratch) {
  if constexpr (std::is_same_v<T, float>) {
    (void)n;
    (void)scratch;
    return src;
  } else {
    widen_into(scratch, src, static_cast<int64_t>(n));
    return scratch;
  }
}

/// Round n floats into the compute type.
/// @param dst n values of T (written). @param src n floats. @param n count.
template <typename T>
inline void narrow(T* dst, const float* src, std::size_t n) {
  if constexpr (std::is_same_v<T, float>) {
    if (dst != src) std::memcpy(dst, src, n * sizeof(float));
  } else if constexpr (std::is_same_v<T, fp16>) {
    parallel_for(static_cast<int64_t>(n), kCpuElementGrain,
                 [&](int64_t lo, int64_t hi) { narrow_fp16(src + lo, dst + lo, static_cast<std::size_t>(hi - lo)); });
  } else {
    parallel_for(static_cast<int64_t>(n), kCpuElementGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) dst[i] = from_f<T>(src[i]);
    });
  }
}

}  // namespace zt::kernels
