// kernels/cast.h — moving values between a compute type (float, fp16, bf16) and float.
//
// Every kernel is written once, templated on the compute type T. It reads T values widened to
// float (exact), computes in float, and writes T values rounded once (round to nearest even):
// for T = float both steps are the identity. This file is those two steps (ZT_HD: the GPU kernels
// widen and round with the very same functions) and the bulk versions
// that stage a whole array in float scratch for a GEMM. It is not a tensor or dtype library.
#pragma once

#include <cstddef>
#include <cstring>
#include <type_traits>

#include "fp/bf16.h"
#include "fp/bulk_convert.h"
#include "fp/fp16.h"
#include "fp/hd.h"

namespace zt::kernels {

/// True for the three compute types the model supports.
template <typename T>
inline constexpr bool is_compute_type_v =
    std::is_same_v<T, float> || std::is_same_v<T, fp16> || std::is_same_v<T, bf16>;

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

/// Widen n values into float scratch, or, for T = float, hand back the input itself.
/// @param src n values of T. @param n count. @param scratch room for n floats (unused for float).
/// @return a pointer to n floats holding the widened values.
template <typename T>
inline const float* widen(const T* src, std::size_t n, float* scratch) {
  if constexpr (std::is_same_v<T, float>) {
    (void)n;
    (void)scratch;
    return src;
  } else if constexpr (std::is_same_v<T, fp16>) {
    widen_fp16(src, scratch, n);  // F16C when present: the same bits (fp/bulk_convert.h)
    return scratch;
  } else {
    for (std::size_t i = 0; i < n; ++i) scratch[i] = to_f(src[i]);
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
    narrow_fp16(src, dst, n);
  } else {
    for (std::size_t i = 0; i < n; ++i) dst[i] = from_f<T>(src[i]);
  }
}

}  // namespace zt::kernels
