// kernels/layernorm.h — LayerNorm over the last dimension (Ba, Kiros & Hinton 2016), eps 1e-5,
// biased variance, as torch.nn.LayerNorm: forward and backward.
//
//   mu = (1/C) sum_c x_c      var = (1/C) sum_c (x_c - mu)^2      r = 1/sqrt(var + eps)
//   xhat_c = (x_c - mu) r     y_c = xhat_c w_c + b_c
// backward, with g_c = dy_c w_c:
//   dx_c = r (g_c - mean(g) - xhat_c mean(g xhat))    dw = sum_rows dy xhat    db = sum_rows dy
// Every sum (over C within a row, over rows for dw and db) is the canonical tree, in FP32.
// mu and r are cached in FP32 for the backward; xhat is recomputed from them exactly as forward.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/cast.h"
#include "kernels/row_sum.h"

namespace zt::kernels {

/// LayerNorm's epsilon (PyTorch's default, the GPT-2 value).
inline constexpr float kLayerNormEps = 1e-5f;

/// Normalise N rows of C values.
/// @param out [N,C] (written). @param mean [N] FP32 cache (written). @param rstd [N] FP32 cache
/// (written). @param in [N,C]. @param w [C] gain. @param b [C] bias. @param N rows. @param C width.
template <typename T>
void layernorm_forward(T* out, float* mean, float* rstd, const T* in, const T* w, const T* b, int64_t N, int64_t C) {
  const auto n = static_cast<std::size_t>(C);
  for (int64_t i = 0; i < N; ++i) {
    const T* x = in + i * C;
    const float mu = canonical_sum_f(n, [&](std::size_t c) { return to_f(x[c]); }) / C;
    const float var = canonical_sum_f(n,
                                      [&](std::size_t c) {
                                        const float d = to_f(x[c]) - mu;
                                        return d * d;
                                      }) /
                      C;
    const float r = 1.0f / std::sqrt(var + kLayerNormEps);  // IEEE sqrt: correctly rounded
    mean[i] = mu;
    rstd[i] = r;
    T* y = out + i * C;
    for (int64_t c = 0; c < C; ++c) y[c] = from_f<T>((to_f(x[c]) - mu) * r * to_f(w[c]) + to_f(b[c]));
  }
}

/// Floats of scratch layernorm_backward needs. @param N rows. @param C width. @return the count.
inline int64_t layernorm_backward_scratch_floats(int64_t N, int64_t C) { return 2 * N * C; }

/// Gradients of LayerNorm.
/// @param din [N,C] gradient of the input (written). @param dw [C] (written). @param db [C]
/// (written). @param dout [N,C] gradient of the output. @param in [N,C] the forward input.
/// @param mean [N] and @param rstd [N] the forward caches. @param w [C] the gain.
/// @param N rows. @param C width. @param scratch layernorm_backward_scratch_floats() floats.
template <typename T>
void layernorm_backward(T* din, T* dw, T* db, const T* dout, const T* in, const float* mean, const float* rstd,
                        const T* w, int64_t N, int64_t C, float* scratch) {
  float* dy_xhat = scratch;          // [N,C] rows for dw
  float* dy_rows = scratch + N * C;  // [N,C] rows for db
  const auto n = static_cast<std::size_t>(C);
  for (int64_t i = 0; i < N; ++i) {
    const T* x = in + i * C;
    const T* dy = dout + i * C;
    const float mu = mean[i], r = rstd[i];
    const auto xhat = [&](std::size_t c) { return (to_f(x[c]) - mu) * r; };
    const auto g = [&](std::size_t c) { return to_f(dy[c]) * to_f(w[c]); };
    const float mean_g = canonical_sum_f(n, g) / C;
    const float mean_gx = canonical_sum_f(n, [&](std::size_t c) { return g(c) * xhat(c); }) / C;
    T* dx = din + i * C;
    for (std::size_t c = 0; c < n; ++c) {
      dx[c] = from_f<T>(r * (g(c) - mean_g - xhat(c) * mean_gx));
      dy_xhat[i * C + c] = to_f(dy[c]) * xhat(c);
      dy_rows[i * C + c] = to_f(dy[c]);
    }
  }
  const auto row = [](std::size_t i) { return i; };
  narrow(dw, canonical_rows_sum_inplace(dy_xhat, C, C, static_cast<std::size_t>(N), row), n);
  narrow(db, canonical_rows_sum_inplace(dy_rows, C, C, static_cast<std::size_t>(N), row), n);
}

}  // namespace zt::kernels
