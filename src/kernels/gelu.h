// kernels/gelu.h — GELU with the tanh approximation (Hendrycks & Gimpel 2016; GPT-2's choice,
// PyTorch's approximate='tanh'): forward and backward, element-wise, in FP32.
//
//   gelu(x)  = x/2 (1 + tanh(u)),     u = sqrt(2/pi) (x + 0.044715 x^3)
//   gelu'(x) = (1 + tanh u)/2 + x/2 (1 - tanh^2 u) sqrt(2/pi) (1 + 3 * 0.044715 x^2)
// tanh is kernels/math.h's. The backward recomputes tanh u from the cached input.
#pragma once

#include <cstdint>

#include "kernels/cast.h"
#include "kernels/math.h"

namespace zt::kernels {

/// sqrt(2/pi) rounded to float.
inline constexpr float kGeluScale = 0.7978845608028654f;
/// The cubic coefficient of the tanh approximation.
inline constexpr float kGeluCubic = 0.044715f;

/// GELU of one float. @param x the input. @return gelu(x).
inline float gelu_f(float x) {
  const float u = kGeluScale * (x + kGeluCubic * x * x * x);
  return 0.5f * x * (1.0f + tanh_f(u));
}

/// Derivative of GELU at one float. @param x the input. @return gelu'(x).
inline float gelu_grad_f(float x) {
  const float u = kGeluScale * (x + kGeluCubic * x * x * x);
  const float t = tanh_f(u);
  const float du = kGeluScale * (1.0f + 3.0f * kGeluCubic * x * x);
  return 0.5f * (1.0f + t) + 0.5f * x * ((1.0f - t * t) * du);
}

/// y = gelu(x), element-wise. @param y n values (written). @param x n values. @param n count.
template <typename T>
void gelu_forward(T* y, const T* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = from_f<T>(gelu_f(to_f(x[i])));
}

/// dx = dy * gelu'(x), element-wise; dx may be the same array as dy.
/// @param dx n values (written). @param dy n values. @param x the forward input. @param n count.
template <typename T>
void gelu_backward(T* dx, const T* dy, const T* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dx[i] = from_f<T>(to_f(dy[i]) * gelu_grad_f(to_f(x[i])));
}

}  // namespace zt::kernels
