// kernels/linear.h — y = x W^T + b (PyTorch nn.Linear: W is [out, in], row-major): forward and
// backward, through the FP32 GEMM of kernels/blas.h.
//
// 16-bit compute types follow tensor-core semantics: the GEMM's inputs are the 16-bit values
// (widened to float, exactly), products are accumulated in FP32, the bias is added in FP32 and
// the output rounded to 16 bits once. The backward does the same: dx = dy W and dW = dy^T x are
// FP32 GEMMs over the 16-bit dy, W, x, each rounded once; db = sum over rows of dy (canonical
// tree, FP32) rounded once. For T = float every "rounding" is the identity.
// The bias epilogue and the bias gradient have ZT_HD element bodies, run by the CUDA kernels
// (ops/linear_items.h): one GPU thread per output element, and one per column for db.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "fp/hd.h"
#include "kernels/blas.h"
#include "kernels/cast.h"
#include "kernels/row_sum.h"

namespace zt::kernels {

/// Floats of scratch linear_forward needs.
/// @param N rows. @param in input width. @param out output width.
/// @param narrow_type true for a 16-bit compute type. @return the count.
inline int64_t linear_forward_scratch_floats(int64_t N, int64_t in, int64_t out, bool narrow_type) {
  return N * out + (narrow_type ? N * in + out * in : 0);
}
/// Floats of scratch linear_backward needs.
/// @param N rows. @param in input width. @param out output width.
/// @param narrow_type true for a 16-bit compute type. @return the count.
inline int64_t linear_backward_scratch_floats(int64_t N, int64_t in, int64_t out, bool narrow_type) {
  return N * out + (narrow_type ? 2 * N * in + 2 * out * in : 0);
}

/// One output element of the bias epilogue (the GPU thread's body): the FP32 GEMM result plus the
/// bias, rounded once to T; with no bias the result is rounded as it is (adding +0 would turn a -0
/// into +0). The CPU kernel below does the same a row at a time.
/// @param acc the FP32 GEMM result (x W^T)[i, j]. @param b [out] bias or null. @param j the column.
/// @return y[i, j].
template <typename T>
ZT_HD T linear_bias_element(float acc, const T* b, int64_t j) {
  return from_f<T>(b ? acc + to_f(b[j]) : acc);
}

/// One element of the bias gradient (the GPU thread's body): db[j] = the canonical sum over the N
/// rows of dy[:, j], rounded once, the tree linear_backward forms a row at a time.
/// @param db [out] (element j written). @param dy [N,out]. @param N rows. @param out width.
/// @param j the column.
template <typename T>
ZT_HD void linear_bias_grad_column(T* db, const T* dy, int64_t N, int64_t out, int64_t j) {
  db[j] = from_f<T>(canonical_sum_f(static_cast<std::size_t>(N),
                                    [&](std::size_t i) { return to_f(dy[static_cast<int64_t>(i) * out + j]); }));
}

/// The bias epilogue on the CPU, shared by every Linear (this one and the split ones of
/// kernels/parallel_linear.h): row i of the FP32 GEMM results y_f ([N, G·w]) plus the bias (when
/// there is one), rounded once to T, as linear_bias_element does per element. Group g's w columns
/// go to y + i·ldy + g·group_stride (a split Linear interleaves its groups; G = 1 writes one run per
/// row). Rows are split over the rank's threads: no element depends on another, so no bits change.
/// @param y output (written). @param ldy its row stride. @param group_stride the distance between groups in a row.
/// @param y_f [N, G·w] FP32 results (the bias is added in place). @param b [G·w] bias or null.
/// @param N rows. @param G groups per row. @param w columns per group.
template <typename T>
void bias_narrow_rows(T* y, int64_t ldy, int64_t group_stride, float* y_f, const T* b, int64_t N, int64_t G,
                      int64_t w) {
  const int64_t width = G * w;
  parallel_for(N, row_grain(width), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      float* row = y_f + i * width;
      if (b)
        for (int64_t c = 0; c < width; ++c) row[c] += to_f(b[c]);
      for (int64_t g = 0; g < G; ++g) narrow(y + i * ldy + g * group_stride, row + g * w, static_cast<std::size_t>(w));
    }
  });
}

/// y = x W^T + b.
/// @param y [N,out] (written). @param x [N,in]. @param W [out,in]. @param b [out] or nullptr.
/// @param N rows. @param in input width. @param out output width.
/// @param scratch linear_forward_scratch_floats() floats.
template <typename T>
void linear_forward(T* y, const T* x, const T* W, const T* b, int64_t N, int64_t in, int64_t out, float* scratch) {
  constexpr bool kNarrow = !std::is_same_v<T, float>;
  float* y_f = scratch;
  const float* x_f = widen(x, static_cast<std::size_t>(N * in), scratch + N * out);
  const float* W_f = widen(W, static_cast<std::size_t>(out * in), scratch + N * out + (kNarrow ? N * in : 0));
  gemm_f32(false, true, N, out, in, x_f, in, W_f, in, y_f, out);
  bias_narrow_rows(y, out, 0, y_f, b, N, 1, out);
}

/// Gradients of y = x W^T + b.
/// @param dx [N,in] (written). @param dW [out,in] (written). @param db [out] (written) or nullptr.
/// @param dy [N,out] gradient of y. @param x [N,in] forward input. @param W [out,in].
/// @param N rows. @param in input width. @param out output width.
/// @param scratch linear_backward_scratch_floats() floats.
template <typename T>
void linear_backward(T* dx, T* dW, T* db, const T* dy, const T* x, const T* W, int64_t N, int64_t in, int64_t out,
                     float* scratch) {
  constexpr bool kNarrow = !std::is_same_v<T, float>;
  float* dy_f = scratch;  // a private copy: the bias sum below consumes it
  widen_into(dy_f, dy, N * out);
  float* rest = scratch + N * out;
  const float* W_f = widen(W, static_cast<std::size_t>(out * in), rest);
  const float* x_f = widen(x, static_cast<std::size_t>(N * in), rest + (kNarrow ? out * in : 0));
  float* dx_f = kNarrow ? rest + out * in + N * in : reinterpret_cast<float*>(dx);
  float* dW_f = kNarrow ? rest + out * in + 2 * N * in : reinterpret_cast<float*>(dW);
  gemm_f32(false, false, N, in, out, dy_f, out, W_f, in, dx_f, in);
  gemm_f32(true, false, out, in, N, dy_f, out, x_f, in, dW_f, in);
  narrow(dx, dx_f, static_cast<std::size_t>(N * in));
  narrow(dW, dW_f, static_cast<std::size_t>(out * in));
  if (db) {
    const float* s = canonical_columns_sum_inplace(dy_f, out, N);
    narrow(db, s, static_cast<std::size_t>(out));
  }
}

}  // namespace zt::kernels
