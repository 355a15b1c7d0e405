// kernels/gelu.h — GELU with the tanh approximation (Hendrycks & Gimpel 2016; GPT-2's choice,
// PyTorch's approximate='tanh'): forward and backward, element-wise, in FP32.
//
//   gelu(x)  = x/2 (1 + tanh(u)),     u = sqrt(2/pi) (x + 0.044715 x^3)
//   gelu'(x) = (1 + tanh u)/2 + x/2 (1 - tanh^2 u) sqrt(2/pi) (1 + 3 * 0.044715 x^2)
// tanh is kernels/math.h's, evaluated a chunk at a time by kernels/math_array.h (same bits).
// The backward recomputes tanh u from the cached input. The element functions are ZT_HD: a GPU
// thread runs gelu_forward_element / gelu_backward_element with the scalar tanh_f, the same bits
// as the CPU's array tanh.
#pragma once

#include <cstdint>

#include "fp/hd.h"
#include "kernels/cast.h"
#include "kernels/math.h"
#include "kernels/math_array.h"

namespace zt::kernels {

/// sqrt(2/pi) rounded to float.
inline constexpr float kGeluScale = 0.7978845608028654f;
/// The cubic coefficient of the tanh approximation.
inline constexpr float kGeluCubic = 0.044715f;

/// The tanh argument u of GELU at one float. @param x the input.
/// @return sqrt(2/pi) (x + 0.044715 x^3), in float.
ZT_HD float gelu_arg_f(float x) { return kGeluScale * (x + kGeluCubic * x * x * x); }

/// GELU from its input and t = tanh_f(gelu_arg_f(x)). @param x the input. @param t tanh u.
/// @return gelu(x).
ZT_HD float gelu_from_tanh_f(float x, float t) { return 0.5f * x * (1.0f + t); }

/// GELU's derivative from its input and t = tanh_f(gelu_arg_f(x)). @param x the input.
/// @param t tanh u. @return gelu'(x).
ZT_HD float gelu_grad_from_tanh_f(float x, float t) {
  const float du = kGeluScale * (1.0f + 3.0f * kGeluCubic * x * x);
  return 0.5f * (1.0f + t) + 0.5f * x * ((1.0f - t * t) * du);
}

/// GELU of one float. @param x the input. @return gelu(x).
ZT_HD float gelu_f(float x) { return gelu_from_tanh_f(x, tanh_f(gelu_arg_f(x))); }

/// Derivative of GELU at one float. @param x the input. @return gelu'(x).
ZT_HD float gelu_grad_f(float x) { return gelu_grad_from_tanh_f(x, tanh_f(gelu_arg_f(x))); }

/// One element of the forward with the scalar tanh (the GPU's body; the CPU loop below computes
/// the same tanh a chunk at a time). @param y the output (written). @param x the input.
template <typename T>
ZT_HD void gelu_forward_element(T& y, T x) {
  y = from_f<T>(gelu_f(to_f(x)));
}

/// One element of the backward with the scalar tanh (the GPU's body).
/// @param dx the input gradient (written). @param dy the output gradient. @param x the forward input.
template <typename T>
ZT_HD void gelu_backward_element(T& dx, T dy, T x) {
  dx = from_f<T>(to_f(dy) * gelu_grad_f(to_f(x)));
}

/// Values per chunk of the array loops below: tanh u of a chunk goes through tanh_f_n (the same
/// bits as tanh_f, vectorised) in a small stack buffer, so no workspace is needed.
inline constexpr int64_t kGeluChunk = 256;

/// y = gelu(x), element-wise; y may be the same array as x.
/// @param y n values (written). @param x n values. @param n count.
template <typename T>
void gelu_forward(T* y, const T* x, int64_t n) {
  // a chunk of x widened at once (F16C for fp16, kernels/cast.h) and the results narrowed at once:
  // the same exact widenings and one rounding per value as the element body, without a branchy
  // scalar conversion per value
  // the rank's threads take whole chunks (core/cpu_pool.h): every value is computed alone
  parallel_for((n + kGeluChunk - 1) / kGeluChunk, kCpuElementGrain / kGeluChunk, [&](int64_t c0, int64_t c1) {
    float t[kGeluChunk], xs[kGeluChunk], ys[kGeluChunk];
    for (int64_t i0 = c0 * kGeluChunk; i0 < n && i0 < c1 * kGeluChunk; i0 += kGeluChunk) {
      const int64_t len = n - i0 < kGeluChunk ? n - i0 : kGeluChunk;
      const auto count = static_cast<std::size_t>(len);
      const float* xf = widen(x + i0, count, xs);
      for (int64_t j = 0; j < len; ++j) t[j] = gelu_arg_f(xf[j]);
      tanh_f_n(t, t, count);
      for (int64_t j = 0; j < len; ++j) ys[j] = gelu_from_tanh_f(xf[j], t[j]);
      narrow(y + i0, ys, count);  // after every read of x: y may be x
    }
  });
}

/// dx = dy * gelu'(x), element-wise; dx may be the same array as dy.
/// @param dx n values (written). @param dy n values. @param x the forward input. @param n count.
template <typename T>
void gelu_backward(T* dx, const T* dy, const T* x, int64_t n) {
  parallel_for((n + kGeluChunk - 1) / kGeluChunk, kCpuElementGrain / kGeluChunk, [&](int64_t c0, int64_t c1) {
    float t[kGeluChunk], xs[kGeluChunk], dys[kGeluChunk], dxs[kGeluChunk];  // widened a chunk at once
    for (int64_t i0 = c0 * kGeluChunk; i0 < n && i0 < c1 * kGeluChunk; i0 += kGeluChunk) {
      const int64_t len = n - i0 < kGeluChunk ? n - i0 : kGeluChunk;
      const auto count = static_cast<std::size_t>(len);
      const float* xf = widen(x + i0, count, xs);
      const float* dyf = widen(dy + i0, count, dys);
      for (int64_t j = 0; j < len; ++j) t[j] = gelu_arg_f(xf[j]);
      tanh_f_n(t, t, count);
      for (int64_t j = 0; j < len; ++j) dxs[j] = dyf[j] * gelu_grad_from_tanh_f(xf[j], t[j]);
      narrow(dx + i0, dxs, count);  // after every read of dy: dx may be dy
    }
  });
}

}  // namespace zt::kernels
