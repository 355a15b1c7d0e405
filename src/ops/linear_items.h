// ops/linear_items.h — the bias parts of the linear layer as item ops (device/item_grid.h):
// the forward's epilogue (FP32 GEMM result + bias, rounded once), one thread per output element,
// and the bias gradient, one thread per column summing the rows in the canonical order. The
// bodies are kernels/linear.h's; the GEMMs themselves are gemm/'s.
#pragma once

#include <cstdint>
#include <vector>

#include "core/cpu_pool.h"
#include "fp/hd.h"
#include "kernels/linear.h"

namespace zt::ops {

using kernels::linear_bias_element;
using kernels::linear_bias_grad_column;

/// Forward epilogue: item e = i out + j computes y[i, j] (kernels::linear_bias_element).
template <typename T>
struct LinearBiasElements {
  T* y = nullptr;              ///< [N,out] (written)
  const float* acc = nullptr;  ///< [N,out] the FP32 GEMM result x W^T
  const T* b = nullptr;        ///< [out] bias, or null for none
  int64_t N = 0;               ///< rows
  int64_t out = 0;             ///< output width
  /// @return N out, one thread per output element.
  ZT_HD int64_t items() const { return N * out; }
  /// @param e the element's flat index.
  ZT_HD void operator()(int64_t e) const { y[e] = linear_bias_element(acc[e], b, e % out); }
  /// The host form: a row at a time, the bias added in FP32 and the row rounded at once (F16C
  /// for fp16), as kernels::bias_narrow_rows does; the same value per element. Host only.
  void host() const {
    parallel_for(N, kernels::row_grain(out), [&](int64_t lo, int64_t hi) {
      const auto width = static_cast<std::size_t>(b ? out : 0);
      std::vector<float> bias(width), row(width);
      if (b) kernels::widen_into(bias.data(), b, out);  // once per thread's rows (exact)
      for (int64_t i = lo; i < hi; ++i) {
        const float* a = acc + i * out;
        if (b) {
          for (std::size_t j = 0; j < width; ++j) row[j] = a[j] + bias[j];
          a = row.data();
        }
        kernels::narrow(y + i * out, a, static_cast<std::size_t>(out));
      }
    });
  }
};

/// Bias gradient: item j computes db[j] (kernels::linear_bias_grad_column).
template <typename T>
struct LinearBiasGradColumns {
  T* db = nullptr;                ///< [out] (written)
  const T* dy = nullptr;          ///< [N,out]
  int64_t N = 0;                  ///< rows
  int64_t out = 0;                ///< output width
  float* host_scratch = nullptr;  ///< the host form's N out floats (dy widened, then consumed); unused by items
  /// @return out, one thread per column.
  ZT_HD int64_t items() const { return out; }
  /// @param j the column.
  ZT_HD void operator()(int64_t j) const { linear_bias_grad_column(db, dy, N, out, j); }
  /// The host form: dy widened into the scratch, then the column sums a whole row at a time
  /// (kernels::canonical_columns_sum_inplace: each column's tree, vectorised across columns),
  /// as kernels::linear_backward does. Host only.
  void host() const {
    if (N == 0) {  // no rows: every column the empty sum, +0
      for (int64_t j = 0; j < out; ++j) (*this)(j);
      return;
    }
    kernels::widen_into(host_scratch, dy, N * out);
    kernels::narrow(db, kernels::canonical_columns_sum_inplace(host_scratch, out, N), static_cast<std::size_t>(out));
  }
};

}  // namespace zt::ops
