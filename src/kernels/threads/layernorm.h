// kernels/threads/layernorm.h — LayerNorm as item ops (device/item_grid.h): one thread per row
// forward and for the input gradient, one thread per column for the gain and bias gradients.
//
// Each op only names its items and calls the ZT_HD functions of kernels/layernorm.h, the ones the
// CPU kernel loops over, so a row or column on the GPU is computed in the CPU's order. The
// backward is two launches (rows, then columns, independent of each other) where the CPU makes
// one pass: a thread cannot sum a column that other threads are still writing.
#pragma once

#include <cstdint>

#include "fp/hd.h"
#include "kernels/layernorm.h"

namespace zt::kernels {

/// Forward: item i normalises row i (kernels::layernorm_forward_row).
template <typename T>
struct LayerNormForwardRows {
  T* out = nullptr;       ///< [N,C] (written)
  float* mean = nullptr;  ///< [N] FP32 cache (written)
  float* rstd = nullptr;  ///< [N] FP32 cache (written)
  const T* in = nullptr;  ///< [N,C]
  const T* w = nullptr;   ///< [C] gain
  const T* b = nullptr;   ///< [C] bias
  int64_t N = 0;          ///< rows
  int64_t C = 0;          ///< width
  /// @return N, one thread per row.
  ZT_HD int64_t items() const { return N; }
  /// @param i the row.
  ZT_HD void operator()(int64_t i) const { layernorm_forward_row(out + i * C, mean[i], rstd[i], in + i * C, w, b, C); }
};

/// Backward, input gradient: item i computes row i of din (kernels::layernorm_backward_row).
template <typename T>
struct LayerNormBackwardRows {
  T* din = nullptr;             ///< [N,C] (written)
  const T* dout = nullptr;      ///< [N,C]
  const T* in = nullptr;        ///< [N,C] the forward input
  const float* mean = nullptr;  ///< [N] forward cache
  const float* rstd = nullptr;  ///< [N] forward cache
  const T* w = nullptr;         ///< [C] gain
  int64_t N = 0;                ///< rows
  int64_t C = 0;                ///< width
  /// @return N, one thread per row.
  ZT_HD int64_t items() const { return N; }
  /// @param i the row.
  ZT_HD void operator()(int64_t i) const {
    layernorm_backward_row(din + i * C, dout + i * C, in + i * C, mean[i], rstd[i], w, C, nullptr, nullptr);
  }
};

/// Backward, parameter gradients: item c sums column c for dw and db
/// (kernels::layernorm_param_grad_column).
template <typename T>
struct LayerNormParamGradColumns {
  T* dw = nullptr;              ///< [C] (written)
  T* db = nullptr;              ///< [C] (written)
  const T* dout = nullptr;      ///< [N,C]
  const T* in = nullptr;        ///< [N,C] the forward input
  const float* mean = nullptr;  ///< [N] forward cache
  const float* rstd = nullptr;  ///< [N] forward cache
  int64_t N = 0;                ///< rows
  int64_t C = 0;                ///< width
  /// @return C, one thread per column.
  ZT_HD int64_t items() const { return C; }
  /// @param c the column.
  ZT_HD void operator()(int64_t c) const { layernorm_param_grad_column(dw, db, dout, in, mean, rstd, N, C, c); }
};

}  // namespace zt::kernels
