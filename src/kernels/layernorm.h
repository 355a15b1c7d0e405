// kernels/layernorm.h — LayerNorm over the last dimension (Ba, Kiros & Hinton 2016), eps 1e-5,
// biased variance, as torch.nn.LayerNorm: forward and backward.
//
//   mu = (1/C) sum_c x_c      var = (1/C) sum_c (x_c - mu)^2      r = 1/sqrt(var + eps)
//   xhat_c = (x_c - mu) r     y_c = xhat_c w_c + b_c
// backward, with g_c = dy_c w_c:
//   dx_c = r (g_c - mean(g) - xhat_c mean(g xhat))    dw = sum_rows dy xhat    db = sum_rows dy
// Every sum (over C within a row, over rows for dw and db) is the canonical tree, in FP32.
// mu and r are cached in FP32 for the backward; xhat is recomputed from them exactly as forward.
// The per-row and per-column work is ZT_HD: the block ops (ops/layernorm_blocks.h) make the same sums.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "fp/hd.h"
#include "kernels/cast.h"
#include "kernels/row_sum.h"

namespace zt::kernels {

/// LayerNorm's epsilon (PyTorch's default, the GPT-2 value).
inline constexpr float kLayerNormEps = 1e-5f;

/// One row of the forward: the canonical mean and variance, the FP32 caches, the normalised row.
/// The CPU kernel loops over it; a GPU block makes the same sums for its row (ops/layernorm_blocks.h).
/// @param y [C] output row (written). @param mean the row's mean (written). @param rstd the row's
/// 1/sqrt(var + eps) (written). @param x [C] input row. @param w [C] gain. @param b [C] bias.
/// @param C width.
template <typename T>
ZT_HD void layernorm_forward_row(T* y, float& mean, float& rstd, const T* x, const T* w, const T* b, int64_t C) {
  const auto n = static_cast<std::size_t>(C);
  const float mu = canonical_sum_f(n, [&](std::size_t c) { return to_f(x[c]); }) / C;
  const float var = canonical_sum_f(n,
                                    [&](std::size_t c) {
                                      const float d = to_f(x[c]) - mu;
                                      return d * d;
                                    }) /
                    C;
  const float r = 1.0f / sqrtf(var + kLayerNormEps);  // IEEE sqrt: correctly rounded, host and device
  mean = mu;
  rstd = r;
  for (int64_t c = 0; c < C; ++c) y[c] = from_f<T>((to_f(x[c]) - mu) * r * to_f(w[c]) + to_f(b[c]));
}

/// Normalise N rows of C values.
/// @param out [N,C] (written). @param mean [N] FP32 cache (written). @param rstd [N] FP32 cache
/// (written). @param in [N,C]. @param w [C] gain. @param b [C] bias. @param N rows. @param C width.
template <typename T>
void layernorm_forward(T* out, float* mean, float* rstd, const T* in, const T* w, const T* b, int64_t N, int64_t C) {
  if constexpr (std::is_same_v<T, fp16>) {
    // fp16's scalar widening is a branchy function per value: widen each row (and w, b once) with
    // F16C, run the FP32 row, narrow once. The same exact widenings and the same one rounding of
    // each output, so the same bits as the fp16 row.
    // Rows are independent: the rank's threads take contiguous blocks of them (core/cpu_pool.h).
    const auto n = static_cast<std::size_t>(C);
    parallel_for(N, row_grain(C), [&](int64_t lo, int64_t hi) {
      std::vector<float> f(4 * n);
      float *wf = f.data(), *bf = wf + n, *xf = bf + n, *yf = xf + n;
      widen_fp16(w, wf, n);
      widen_fp16(b, bf, n);
      for (int64_t i = lo; i < hi; ++i) {
        widen_fp16(in + i * C, xf, n);
        layernorm_forward_row(yf, mean[i], rstd[i], static_cast<const float*>(xf), static_cast<const float*>(wf),
                              static_cast<const float*>(bf), C);
        narrow_fp16(yf, out + i * C, n);
      }
    });
  } else {
    parallel_for(N, row_grain(C), [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) layernorm_forward_row(out + i * C, mean[i], rstd[i], in + i * C, w, b, C);
    });
  }
}

/// One row of the backward's input gradient, from the row's cached mean and rstd (the CPU kernel
/// loops over it; a GPU block makes the same sums for its row, ops/layernorm_blocks.h).
/// @param dx [C] input gradient row (written). @param dy [C] output gradient row. @param x [C] the
/// forward input row. @param mu and @param r the row's forward caches. @param w [C] the gain.
/// @param C width.
template <typename T>
ZT_HD void layernorm_backward_row(T* dx, const T* dy, const T* x, float mu, float r, const T* w, int64_t C) {
  const auto n = static_cast<std::size_t>(C);
  const auto xhat = [&](std::size_t c) { return (to_f(x[c]) - mu) * r; };
  const auto g = [&](std::size_t c) { return to_f(dy[c]) * to_f(w[c]); };
  const float mean_g = canonical_sum_f(n, g) / C;
  const float mean_gx = canonical_sum_f(n, [&](std::size_t c) { return g(c) * xhat(c); }) / C;
  for (std::size_t c = 0; c < n; ++c) dx[c] = from_f<T>(r * (g(c) - mean_g - xhat(c) * mean_gx));
}

/// One column of the parameter gradients: dw[c] = sum_rows dy xhat, db[c] = sum_rows dy, each the
/// canonical tree over the rows in order, xhat recomputed as the forward did. Element-wise these
/// are the sums layernorm_backward forms a whole row at a time, so the bits are the same.
/// @param dw [C] (element c written). @param db [C] (element c written). @param dout [N,C].
/// @param in [N,C]. @param mean [N] and @param rstd [N] the forward caches. @param N rows.
/// @param C width. @param c the column.
template <typename T>
ZT_HD void layernorm_param_grad_column(T* dw, T* db, const T* dout, const T* in, const float* mean, const float* rstd,
                                       int64_t N, int64_t C, int64_t c) {
  const auto rows = static_cast<std::size_t>(N);
  dw[c] = from_f<T>(canonical_sum_f(rows, [&](std::size_t i) {
    const int64_t k = static_cast<int64_t>(i) * C + c;
    return to_f(dout[k]) * ((to_f(in[k]) - mean[i]) * rstd[i]);
  }));
  db[c] = from_f<T>(canonical_sum_f(rows, [&](std::size_t i) { return to_f(dout[static_cast<int64_t>(i) * C + c]); }));
}

/// The input gradient of LayerNorm, a row at a time (rows are independent: the rank's threads take
/// contiguous blocks of them). The block op ops::LayerNormBackwardBlocks runs this as its host form.
/// @param din [N,C] (written). @param dout [N,C]. @param in [N,C] the forward input. @param mean
/// [N] and @param rstd [N] the forward caches. @param w [C] the gain. @param N rows. @param C width.
template <typename T>
void layernorm_backward_input(T* din, const T* dout, const T* in, const float* mean, const float* rstd, const T* w,
                              int64_t N, int64_t C) {
  if constexpr (std::is_same_v<T, fp16>) {  // rows widened with F16C, as in the forward: the same bits
    const auto n = static_cast<std::size_t>(C);
    parallel_for(N, row_grain(C), [&](int64_t lo, int64_t hi) {
      std::vector<float> f(4 * n);
      float *wf = f.data(), *xf = wf + n, *dyf = xf + n, *dxf = dyf + n;
      widen_fp16(w, wf, n);
      for (int64_t i = lo; i < hi; ++i) {
        widen_fp16(in + i * C, xf, n);
        widen_fp16(dout + i * C, dyf, n);
        layernorm_backward_row(dxf, static_cast<const float*>(dyf), static_cast<const float*>(xf), mean[i], rstd[i],
                               static_cast<const float*>(wf), C);
        narrow_fp16(dxf, din + i * C, n);
      }
    });
  } else {
    parallel_for(N, row_grain(C), [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i)
        layernorm_backward_row(din + i * C, dout + i * C, in + i * C, mean[i], rstd[i], w, C);
    });
  }
}

/// Floats of scratch layernorm_backward_params needs. @param N rows. @param C width.
/// @return the count.
inline int64_t layernorm_backward_scratch_floats(int64_t N, int64_t C) { return 2 * N * C; }

/// The parameter gradients of LayerNorm: the leaves dy xhat and dy laid out a row at a time
/// (xhat recomputed as the forward did), then the column sums a whole row at a time
/// (vectorisable), the same tree per column as layernorm_param_grad_column; threads split the
/// rows, then the columns, each column's tree untouched (canonical_columns_sum_inplace). The tiled
/// block op ops::LayerNormParamGradTiles runs this as its host form.
/// @param dw [C] (written). @param db [C] (written). @param dout [N,C]. @param in [N,C].
/// @param mean [N] and @param rstd [N] the forward caches. @param N rows. @param C width.
/// @param scratch layernorm_backward_scratch_floats() floats.
template <typename T>
void layernorm_backward_params(T* dw, T* db, const T* dout, const T* in, const float* mean, const float* rstd,
                               int64_t N, int64_t C, float* scratch) {
  float* dy_xhat = scratch;          // [N,C] rows for dw
  float* dy_rows = scratch + N * C;  // [N,C] rows for db
  const auto n = static_cast<std::size_t>(C);
  parallel_for(N, row_grain(C), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      widen_into(dy_rows + i * C, dout + i * C, C);  // exact: F16C for fp16, a copy for float
      widen_into(dy_xhat + i * C, in + i * C, C);
      float* leaf = dy_xhat + i * C;
      const float* dy = dy_rows + i * C;
      for (std::size_t c = 0; c < n; ++c) leaf[c] = dy[c] * ((leaf[c] - mean[i]) * rstd[i]);
    }
  });
  narrow(dw, canonical_columns_sum_inplace(dy_xhat, C, N), n);
  narrow(db, canonical_columns_sum_inplace(dy_rows, C, N), n);
}

/// Gradients of LayerNorm: the input gradient, then the parameter gradients.
/// @param din [N,C] gradient of the input (written). @param dw [C] (written). @param db [C]
/// (written). @param dout [N,C] gradient of the output. @param in [N,C] the forward input.
/// @param mean [N] and @param rstd [N] the forward caches. @param w [C] the gain.
/// @param N rows. @param C width. @param scratch layernorm_backward_scratch_floats() floats.
template <typename T>
void layernorm_backward(T* din, T* dw, T* db, const T* dout, const T* in, const float* mean, const float* rstd,
                        const T* w, int64_t N, int64_t C, float* scratch) {
  layernorm_backward_input(din, dout, in, mean, rstd, w, N, C);
  layernorm_backward_params(dw, db, dout, in, mean, rstd, N, C, scratch);
}

}  // namespace zt::kernels
