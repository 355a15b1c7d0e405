// ops/linear_items.h — the bias parts of the linear layer as item ops (device/item_grid.h):
// the forward's epilogue (FP32 GEMM result + bias, rounded once), one thread per output element,
// and the bias gradient, one thread per column summing the rows in the canonical order. The
// bodies are kernels/linear.h's; the GEMMs themselves are gemm/'s.
#pragma once

#include <cstdint>

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
};

/// Bias gradient: item j computes db[j] (kernels::linear_bias_grad_column).
template <typename T>
struct LinearBiasGradColumns {
  T* db = nullptr;        ///< [out] (written)
  const T* dy = nullptr;  ///< [N,out]
  int64_t N = 0;          ///< rows
  int64_t out = 0;        ///< output width
  /// @return out, one thread per column.
  ZT_HD int64_t items() const { return out; }
  /// @param j the column.
  ZT_HD void operator()(int64_t j) const { linear_bias_grad_column(db, dy, N, out, j); }
};

}  // namespace zt::ops
